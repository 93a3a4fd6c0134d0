// aot_autograd.h: AOTAutograd for compile(): a captured graph whose inputs
// require grad is traced joint (forward and backward in one graph, by make_fx
// through the Autograd key), partitioned into a forward graph that also
// returns what backward needs and a backward graph, each compiled by a
// backend; the compiled call's results get a CompiledFunctionBackward node
// that runs the backward graph. See Note [AOT autograd].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/compile/backend.h"

namespace opspec::internal {

// Note [AOT autograd]
// PyTorch's aot_autograd, in four steps, all on the first call whose inputs
// need a gradient (per pattern of which inputs require grad and are leaves,
// and per input sizes, so dynamic dims are served too: the tangents take
// each call's result sizes, not the captured graph's):
//  1. joint trace: make_fx of "run the graph on primals (fake tensors, those
//     that require grad marked so), then autograd::grad of its floating
//     results with tangents as their gradients" records the forward ops and,
//     because the Autograd key sits above the tracer, the backward ops the
//     engine dispatches, in PyTorch's order, into one graph whose
//     placeholders are the primals then the tangents;
//  2. partition (PyTorch's default_partition): the forward graph is what the
//     results need; the backward graph is what the gradients need beyond it;
//     every forward value (or primal) a backward node reads is saved: an
//     extra result of the forward graph and a placeholder of the backward one;
//  3. each half is compiled by its backend (CompileOptions::backward_backend,
//     else the graph's own);
//  4. a call runs the forward graph with the Autograd key excluded, then makes
//     a CompiledFunctionBackward node (next edges: the inputs' gradient
//     edges; saved values version-checked like any saved tensor) the grad_fn
//     of each floating result that required grad in the joint trace. Its
//     backward fills undefined gradients with zeros and runs the backward graph.
// The joint trace runs the graph in the mode the call entered it in, so its
// _set_grad_enabled nodes (See Note [Grad mode nodes]) decide what it
// differentiates: a no_grad block's results get no grad_fn and pass no
// gradient, as eagerly. A call with no input requiring grad, or with grad
// mode off and no node turning it on, runs the inference graph compiled as
// before, and so does one whose grad mode nodes turn it off for every op and
// leave it as entered (run under no_grad: torch.optim's step, See Note
// [Compiled optimizer steps]); so does one through which no gradient reaches an input (a graph
// with grad mode nodes interpreted then, since a backend may have re-traced
// them away). Each graph of a function with graph breaks is
// its own node, so eager code between graphs chains them as in PyTorch.

// AotGraphs: a partitioned joint graph.
struct AotGraphs {
  std::shared_ptr<const Graph> joint, forward, backward;
  size_t num_outputs = 0;  // the forward graph's results before the saved values
  size_t num_saved = 0;
  // grad_inputs: for each result of the backward graph, the graph input it is the gradient of.
  std::vector<size_t> grad_inputs;
  // tangent_outputs: for each tangent placeholder of the backward graph, the result it is the gradient of.
  std::vector<size_t> tangent_outputs;
  // differentiable: per result, whether it required grad in the joint trace (gets the grad_fn).
  std::vector<bool> differentiable;
};

// trace_joint_and_partition: steps 1 and 2 for graph on fake inputs like
// examples, needs_grad[i] saying which require grad and non_leaf[i] (when
// given) which of those are not leaves: the graph may write those in place,
// as eager code may (See Note [Primals of non-leaf inputs]). grad_enabled:
// the mode the graph is entered in.
AotGraphs trace_joint_and_partition(const Graph& graph, const std::vector<Tensor>& examples,
                                    const std::vector<bool>& needs_grad, const std::vector<bool>& non_leaf = {},
                                    bool grad_enabled = true);

// with_aot_autograd: a CompiledGraph that runs inference (the graph compiled
// as usual) when no gradient is needed and the AOT path otherwise, compiling
// each half with forward_backend / backward_backend on first need. on_compile
// is told the two graphs' code (for logs and stats).
CompiledGraph with_aot_autograd(CompiledGraph inference, std::shared_ptr<const Graph> graph, Backend forward_backend,
                                Backend backward_backend,
                                std::function<void(const AotGraphs&)> on_compile);

}  // namespace opspec::internal
