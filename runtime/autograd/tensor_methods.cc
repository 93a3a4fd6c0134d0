// tensor_methods.cc: Tensor's autograd methods (declared in runtime/core/tensor.h).
#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/copy_slices.h"
#include "runtime/autograd/engine.h"
#include "runtime/ops/ops.h"

namespace opspec {

using autograd::AutogradMeta;
using autograd::meta_of;

const Tensor& Tensor::requires_grad_(bool requires_grad) const {
  OPSPEC_CHECK(defined(), "requires_grad_: the tensor is undefined");
  AutogradMeta* m = meta_of(*this);
  if (m != nullptr && m->grad_fn != nullptr) {
    OPSPEC_CHECK(requires_grad,
                 "you can only change requires_grad flags of leaf variables. If you want to use a computed variable "
                 "in a subgraph that doesn't require differentiation use var_no_grad = var.detach().");
    return *this;
  }
  if (requires_grad) {
    OPSPEC_CHECK(is_floating_point(), "Only Tensors of floating point and complex dtype can require gradients");
    autograd::materialize_meta(*this).requires_grad = true;
  } else if (m != nullptr) {
    m->requires_grad = false;
  }
  impl()->set_autograd_key(requires_grad);
  return *this;
}

// A view whose base changed since its grad_fn was made reads as it will be
// once regenerated (See Note [In-place changes to views]); only grad_fn() and
// ops regenerate it, so these stay reads (under the lock a regeneration takes:
// See Note [View history lock]).
bool Tensor::requires_grad() const {
  autograd::ViewHistoryLock lock(*this);
  return autograd::requires_grad(*this) || (defined() && impl()->view_base() != nullptr && autograd::stale_view(*this));
}

bool Tensor::is_leaf() const {
  autograd::ViewHistoryLock lock(*this);
  const AutogradMeta* m = meta_of(*this);
  if (m != nullptr && m->grad_fn != nullptr) return false;
  return !(defined() && impl()->view_base() != nullptr && autograd::stale_view(*this));
}

Tensor Tensor::grad() const {
  const AutogradMeta* m = meta_of(*this);
  if (m == nullptr) return {};
  if (m->grad_fn != nullptr) return m->retained_grad ? *m->retained_grad : Tensor();
  return m->grad;
}

void Tensor::set_grad(const Tensor& grad) const {
  if (grad.defined()) {
    OPSPEC_CHECK(std::equal(grad.sizes().begin(), grad.sizes().end(), sizes().begin(), sizes().end()),
                 "assigned grad has data of a different size");
    OPSPEC_CHECK(grad.dtype() == dtype(), "assigned grad has data of a different type");
  }
  autograd::materialize_meta(*this).grad = grad;
}

std::shared_ptr<autograd::Node> Tensor::grad_fn() const {
  autograd::ViewHistoryLock lock(*this);  // See Note [View history lock]
  autograd::refresh_view(*this);         // See Note [In-place changes to views]
  const AutogradMeta* m = meta_of(*this);
  return m == nullptr ? nullptr : m->grad_fn;
}

void Tensor::retain_grad() const {
  OPSPEC_CHECK(requires_grad(), "can't retain_grad on Tensor that has requires_grad=False");
  // grad_fn(), as PyTorch's: a view changed since regenerates first, so the slot goes on its current node.
  const std::shared_ptr<autograd::Node> fn = grad_fn();
  AutogradMeta* m = meta_of(*this);
  if (fn == nullptr || m->retains_grad) return;  // leaves keep their grad anyway
  m->retains_grad = true;
  m->retained_grad = std::make_shared<Tensor>();
  fn->retain_grad_slots().push_back({m->output_nr, m->retained_grad});
}

bool Tensor::retains_grad() const {
  const AutogradMeta* m = meta_of(*this);
  return m != nullptr && m->retains_grad;
}

Tensor Tensor::detach(const std::source_location& loc) const { return ops::detach(*this, loc); }

void Tensor::backward(const Tensor& gradient, std::optional<bool> retain_graph, bool create_graph) const {
  autograd::backward({*this}, {gradient}, retain_graph, create_graph);
}

}  // namespace opspec
