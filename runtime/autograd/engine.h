// engine.h: running the graph backwards: backward() and grad(), as
// torch.autograd.backward and torch.autograd.grad. See Note [Engine order].
#pragma once

#include <optional>
#include <vector>

#include "runtime/core/tensor.h"

namespace opspec::autograd {

// Note [Engine order]
// PyTorch's engine (torch/csrc/autograd/engine.cpp) on one thread:
// - the seed of a one-element root is ones_like(root) (aten::ones_like);
// - dependencies are counted per edge from the roots; a node is ready when
//   every edge into it has delivered, and of the ready nodes the one with the
//   highest sequence number (made last in the forward) runs first,
//   AccumulateGrad (the largest number) as soon as it is ready; the queue is a
//   std::priority_queue, so ties order as PyTorch's do;
// - a node's outputs are checked against what its next edges expect: a
//   gradient with extra or broadcast dims is summed down (sum.dim_IntList
//   with keepdim, then view when leading dims go), one of another dtype is
//   cast (aten::_to_copy), then each is handed on in argument order;
// - two gradients for one input are added: in place (add_) when the first
//   has no other owner, else add, and always add when the graph is recorded
//   (create_graph);
// - without retain_graph each node frees its saved tensors after it runs;
// - grad() returns what reaches its inputs without storing it, and runs only
//   the nodes on a path to them.
// So a mode active during backward sees PyTorch's backward op sequence.

// backward: accumulates the gradients of tensors (seeded with grad_tensors,
// or ones for one-element tensors) into the leaves' grad().
// retain_graph defaults to create_graph.
void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors = {},
              std::optional<bool> retain_graph = std::nullopt, bool create_graph = false);

// grad: the gradients of outputs with respect to inputs (undefined for an
// unused input when allow_unused).
std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs = {}, std::optional<bool> retain_graph = std::nullopt,
                         bool create_graph = false, bool allow_unused = false);

}  // namespace opspec::autograd

namespace opspec::internal {
// BackwardHook: called on this thread as backward() and grad() start
// (entering = true) and end (false). compile() installs one while it
// captures: the graph captured so far ends and runs, and backward runs
// outside capture, as Dynamo's graph break on Tensor.backward() (See Note
// [AOT autograd] in runtime/compile/aot_autograd.h).
using BackwardHook = void (*)(bool entering);
BackwardHook& tls_backward_hook();
}  // namespace opspec::internal
