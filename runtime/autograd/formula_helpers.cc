// formula_helpers.cc: See internal/formula_helpers.h.
#include "runtime/autograd/internal/formula_helpers.h"

#include "runtime/dispatch/dispatcher.h"

namespace opspec::autograd::internal {

Tensor mul_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::mul.Scalar");
  return op(t, s);
}

Tensor div_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::div.Scalar");
  return op(t, s);
}

Tensor maybe_multiply(const Tensor& t, const Scalar& s) {
  const bool one = s.is_floating_point() ? s.to_double() == 1.0 : s.to_int() == 1;
  return one ? t : mul_scalar(t, s);
}

}  // namespace opspec::autograd::internal
