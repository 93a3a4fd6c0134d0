// accumulate_grad.cc: See Note [Accumulating gradients] in accumulate_grad.h.
#include "runtime/autograd/accumulate_grad.h"

#include "runtime/autograd/autograd_meta.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd {

AccumulateGrad::AccumulateGrad(const Tensor& variable)
    : Node(UINT64_MAX), variable_(variable.impl()) {  // runs as soon as it is ready
  add_input_metadata(variable);
}

bool AccumulateGrad::matches(const Tensor& t) const {
  const InputMetadata& m = input_metadata()[0];
  if (m.dtype != t.dtype() || !(m.device == t.device())) return false;
  // Element by element: every recorded op on a leaf asks, and its sizes are a few dims (memcmp's call cost more).
  const IntArrayRef sizes = t.sizes();
  if (m.sizes.size() != sizes.size()) return false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (m.sizes[i] != sizes[i]) return false;
  }
  return true;
}

bool obeys_layout_contract(const Tensor& grad, const Tensor& variable) {
  if (grad.dim() != variable.dim()) return false;
  if (!is_non_overlapping_and_dense(variable)) return grad.is_contiguous();
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (grad.size(i) != 1) {
      if (grad.stride(i) != variable.stride(i)) return false;
    } else if (grad.stride(i) == 0) {
      return false;
    }
  }
  return true;
}

VariableList AccumulateGrad::apply(VariableList&& grads) {
  const Tensor leaf = variable();
  if (grads.empty() || !grads[0].defined() || !leaf.defined()) return {};
  Tensor new_grad = std::move(grads[0]);
  AutogradMeta* meta = meta_of(leaf);
  OPSPEC_CHECK(meta == nullptr || meta->grad_fn == nullptr, "leaf variable has been moved into the graph interior");
  if (!requires_grad(leaf)) return {};
  if (!meta->grad.defined()) {
    // Stealable: only this call holds new_grad (and its storage).
    const bool stealable = new_grad.impl()->use_count() == 1 && new_grad.impl()->storage_unshared();
    if (!is_grad_enabled() && stealable && obeys_layout_contract(new_grad, leaf)) {
      meta->grad = new_grad.detach();
    } else if (is_non_overlapping_and_dense(leaf)) {
      Tensor g = ops::new_empty_strided(new_grad, leaf.sizes(), leaf.strides());
      ops::copy_(g, new_grad);
      meta->grad = g;
    } else {
      // PyTorch's clone_obey_contract: a row-major copy (clone now keeps layouts).
      meta->grad = ops::clone(new_grad, MemoryFormat::kContiguous);
    }
  } else if (!is_grad_enabled()) {
    ops::add_(meta->grad, new_grad);
  } else {
    meta->grad = ops::add(meta->grad, new_grad);
  }
  return {};
}

}  // namespace opspec::autograd
