// formula_helpers.h: ATen's C++ operators and helpers as derivatives.yaml's
// formulas call them, so backward dispatches the overloads PyTorch's does.
#pragma once

#include "runtime/core/tensor.h"

namespace opspec::autograd::internal {

// mul_scalar / div_scalar: C++'s `t * s` and `t / s`: aten::mul.Scalar and
// aten::div.Scalar (ops::mul and ops::div with a Scalar dispatch the .Tensor
// overload with a wrapped number, as Python's `t * 2` does).
Tensor mul_scalar(const Tensor& t, const Scalar& s);
Tensor div_scalar(const Tensor& t, const Scalar& s);

// maybe_multiply: t * s, or t itself when s is 1 (FunctionsManual.cpp's helper).
Tensor maybe_multiply(const Tensor& t, const Scalar& s);

}  // namespace opspec::autograd::internal
