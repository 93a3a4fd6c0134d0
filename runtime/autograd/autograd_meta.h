// autograd_meta.h: what a tensor carries for autograd (AutogradMeta) and the
// helpers that read and attach it. See Note [Autograd meta].
#pragma once

#include <memory>

#include "runtime/autograd/node.h"
#include "runtime/core/tensor.h"

namespace opspec::autograd {

// Note [Autograd meta]
// A tensor that requires grad, has a grad_fn, or has ever held a .grad
// carries an AutogradMeta (made on first need, owned by its TensorImpl) and,
// while it requires grad, the Autograd dispatch key: calls with such a tensor
// reach the Autograd kernel, which records a Node; calls without one skip the
// key entirely, so plain tensors pay nothing for autograd. A leaf's
// AccumulateGrad is made on first use and kept by its AutogradMeta for the
// leaf's life (See Note [Graphs keep their leaves]). PyTorch caches it
// weakly instead and makes a new one whenever the last graph using it is
// gone: that cost a quarter of recording a 1-element op (See Note [Autograd
// recording cost]). A leaf whose shape changed since (in place, under
// no_grad) gets a new one, and graphs recorded with the old shape no longer
// accumulate into it.

// Note [Graphs keep their leaves]
// A graph keeps its leaves alive, as PyTorch's AccumulateGrad::variable does:
// backward still fills the .grad of a leaf only the graph reaches. The leaf
// owns its AccumulateGrad (above), so the accumulator cannot own the leaf
// back while the leaf has handles (a cycle); an edge holding the leaf as
// well cost a locked increment and decrement per recorded input. Instead,
// when a leaf's last handle goes while something else holds its accumulator
// (an edge, a caller of grad_accumulator), the accumulator adopts the dying
// TensorImpl (TensorImpl::release_last asks AutogradMetaBase::adopt_dying)
// and the leaf lets go of it: the leaf now lives as long as its accumulator,
// PyTorch's ownership. A handle made again from the adopted leaf
// (AccumulateGrad::variable) finds the same accumulator, which gives the
// leaf back to its handles.

// CreationMeta (runtime/core/tensor.h): how a recorded view was made; a view
// that a kernel made and autograd adopts later keeps its kernel's mark
// (TensorImpl::view_creation).

// AutogradMeta: requires_grad (a leaf's flag), grad, grad_fn and its output number.
class AccumulateGrad;

struct AutogradMeta : ::opspec::internal::AutogradMetaBase, ::opspec::internal::Pooled {  // See Note [Object pool]
  AutogradMeta() = default;
  ~AutogradMeta() override;  // tells its accumulator the leaf is gone
  // adopt_dying: hands impl (this leaf) to its accumulator when others hold it (See Note [Graphs keep their leaves]).
  bool adopt_dying(TensorImpl* impl) noexcept override;

  bool requires_grad = false;
  bool retains_grad = false;
  CreationMeta creation_meta = CreationMeta::kDefault;  // a recorded view's
  // view_base: a recorded view's root base; view_version: its storage's
  // version when its grad_fn was made (See Note [In-place changes to views]).
  Tensor view_base;
  uint64_t view_version = 0;
  Tensor grad;
  std::shared_ptr<Node> grad_fn;
  uint32_t output_nr = 0;
  std::shared_ptr<AccumulateGrad> grad_accumulator;  // See Note [Autograd meta]; may_adopt while set
  // adopted_by: the accumulator that owns this leaf since its handles went (See Note [Graphs keep their leaves]).
  std::weak_ptr<AccumulateGrad> adopted_by;
  // retained_grad: a non-leaf's grad after retain_grad(); its grad_fn holds it weakly.
  std::shared_ptr<Tensor> retained_grad;
};

// meta_of: t's AutogradMeta, or null.
inline AutogradMeta* meta_of(const Tensor& t) {
  return t.defined() ? static_cast<AutogradMeta*>(t.impl()->autograd_meta()) : nullptr;
}
// materialize_meta: t's AutogradMeta, made if absent.
AutogradMeta& materialize_meta(const Tensor& t);

// requires_grad: t requires grad (a leaf marked so, made by a recorded op, or
// a recorded view of a base that requires grad, as PyTorch's
// DifferentiableViewMeta: a view taken under no_grad has no grad_fn but requires grad).
inline bool requires_grad(const Tensor& t) {
  const AutogradMeta* m = meta_of(t);
  if (m == nullptr) return false;
  if (m->requires_grad || m->grad_fn != nullptr) return true;
  const AutogradMeta* b = m->view_base.defined() ? meta_of(m->view_base) : nullptr;  // a root base: no view itself
  return b != nullptr && (b->requires_grad || b->grad_fn != nullptr);
}

// grad_accumulator: the AccumulateGrad of leaf t (made on first use).
std::shared_ptr<Node> grad_accumulator(const Tensor& t);
// gradient_edge: where t's gradient goes: its grad_fn's input, or its
// accumulator; nowhere for a view without history (PyTorch has no accumulator
// for a tensor not marked requires_grad).
Edge gradient_edge(const Tensor& t);
// set_history: t becomes output fn->num_inputs() of fn (recording its metadata);
// a retained gradient moves to fn (See Note [Retained gradients follow the tensor]).
void set_history(const Tensor& t, const std::shared_ptr<Node>& fn);
// set_history: the same, taking the caller's reference to fn (no count change:
// the recording of an op's last output hands its node over).
void set_history(const Tensor& t, std::shared_ptr<Node>&& fn);

// Note [Retained gradients follow the tensor]
// retain_grad() keeps the gradient of the tensor as it is when backward
// reaches it. An in-place op gives the tensor a new grad_fn (an op on a view:
// its base a CopySlices, the view a regenerated one), and the retained slot
// moves from the old node to the new, as PyTorch 2.x's
// update_tensor_hooks_on_new_gradfn moves the retains_grad hook: y.grad is the
// gradient of y after `y.mul_(3)`, not of the value it had before.

// move_retained_grad: m's retained-gradient slot (if it retains grad) moves
// from old_fn to output m.output_nr of new_fn; call after updating m.
void move_retained_grad(const AutogradMeta& m, Node* old_fn, Node& new_fn);

// share_history: to becomes the same output of the same grad_fn as from (a
// compiled graph's result copied into the tensor the program holds); nothing
// when from has no grad_fn.
void share_history(const Tensor& from, const Tensor& to);

}  // namespace opspec::autograd
