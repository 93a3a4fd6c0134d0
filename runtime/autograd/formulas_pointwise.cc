// formulas_pointwise.cc: derivatives of the elementwise ops with scalar
// parameters or rounding modes (clamp, clamp_min, clamp_max, hardtanh,
// leaky_relu, elu, softplus, nan_to_num, pow.Scalar, remainder, fmod, div with
// a rounding mode, atan2)
// and the double backward of the activations' backward ops, as PyTorch 2.x's
// derivatives.yaml and FunctionsManual.cpp. Calls inside one expression are
// made in the order GCC evaluates PyTorch's C++ (right operand first).
// See Note [Derivative formulas] in formulas.h.
#include <cmath>
#include <limits>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

Tensor zero_like_grad(const FormulaCall& c) { return ops::scalar_tensor(0.0, {.dtype = c.grad().dtype(), .device = c.grad().device()}); }

// clamp (Scalar bounds): clamp_backward: where((self >= min).logical_and_(self <= max), grad, 0).
VariableList clamp(const FormulaCall& c) {
  const Value& lo = c.arg(1);
  const Value& hi = c.arg(2);
  if (lo.is_none() && hi.is_none()) return {c.grad()};
  const Tensor zero = zero_like_grad(c);
  const Tensor self = c.input(0);
  Tensor pred;
  if (!lo.is_none() && !hi.is_none()) {
    pred = ops::ge(self, lo.to_scalar());
    ops::logical_and_(pred, ops::le(self, hi.to_scalar()));
  } else if (!lo.is_none()) {
    pred = ops::ge(self, lo.to_scalar());
  } else {
    pred = ops::le(self, hi.to_scalar());
  }
  return {ops::where(pred, c.grad(), zero)};
}

// clamp_backward_min_max: min gets grad where self < min < max, max where
// self > max or max < min (a min above max loses to it).
void clamp_bound_grads(const FormulaCall& c, const std::optional<Tensor>& lo, const std::optional<Tensor>& hi,
                       int lo_k, int hi_k, VariableList& g) {
  const bool want_lo = lo_k >= 0 && c.needs(static_cast<size_t>(lo_k));
  const bool want_hi = hi_k >= 0 && c.needs(static_cast<size_t>(hi_k));
  if (!want_lo && !want_hi) return;
  const Tensor self = c.input(0), grad = c.grad();
  const Tensor zero = zero_like_grad(c);
  // PyTorch combines the masks in place unless a tensor is subclass-like.
  const bool in_place = !subclass_like(self) && !(lo && subclass_like(*lo)) && !(hi && subclass_like(*hi));
  if (lo && hi) {
    if (want_lo) {
      Tensor pred = ops::lt(self, *lo);
      const Tensor min_lt_max = ops::lt(*lo, *hi);
      pred = in_place ? ops::logical_and_(pred, min_lt_max) : ops::logical_and(pred, min_lt_max);
      g[static_cast<size_t>(lo_k)] = ops::where(pred, grad, zero);
    }
    if (want_hi) {
      Tensor pred = ops::gt(self, *hi);
      const Tensor max_lt_min = ops::lt(*hi, *lo);
      pred = in_place ? ops::logical_or_(pred, max_lt_min) : ops::logical_or(pred, max_lt_min);
      g[static_cast<size_t>(hi_k)] = ops::where(pred, grad, zero);
    }
  } else if (lo && want_lo) {
    g[static_cast<size_t>(lo_k)] = ops::where(ops::lt(self, *lo), grad, zero);
  } else if (hi && want_hi) {
    g[static_cast<size_t>(hi_k)] = ops::where(ops::gt(self, *hi), grad, zero);
  }
}

// clamp.Tensor: clamp_backward_min_max for the bounds, then clamp_backward
// for self (generated backward code runs formulas in reverse listing order).
VariableList clamp_tensor(const FormulaCall& c) {
  const std::optional<Tensor> lo = optional_input(c, 1), hi = optional_input(c, 2);
  VariableList g(c.num_inputs());
  clamp_bound_grads(c, lo, hi, c.tensor_input_of_arg(1), c.tensor_input_of_arg(2), g);
  if (!c.needs(0)) return g;
  const Tensor self = c.input(0), grad = c.grad();
  if (!lo && !hi) {
    g[0] = grad;
    return g;
  }
  const Tensor zero = zero_like_grad(c);
  if (lo && hi) {
    Tensor pred = ops::ge(self, *lo);
    const Tensor le = ops::le(self, *hi);
    const bool in_place = !subclass_like(self) && !subclass_like(*lo) && !subclass_like(*hi);
    pred = in_place ? ops::logical_and_(pred, le) : ops::logical_and(pred, le);
    g[0] = ops::where(pred, grad, zero);
  } else if (lo) {
    g[0] = ops::where(ops::ge(self, *lo), grad, zero);
  } else {
    g[0] = ops::where(ops::le(self, *hi), grad, zero);
  }
  return g;
}

// clamp_min / clamp_max (Scalar bound): where(self >= min, grad, 0) (<= max).
template <bool kLower>
VariableList clamp_bound(const FormulaCall& c) {
  const Tensor zero = zero_like_grad(c);
  const Tensor& self = c.input(0);
  const Scalar bound = c.arg(1).to_scalar();
  return {ops::where(kLower ? ops::ge(self, bound) : ops::le(self, bound), c.grad(), zero)};
}
// clamp_min.Tensor / clamp_max.Tensor: the bound's gradient where it won
// (self < min, self > max), then self's (reverse listing order, as above).
template <bool kLower>
VariableList clamp_bound_tensor(const FormulaCall& c) {
  VariableList g(2);
  const Tensor &self = c.input(0), &bound = c.input(1);
  if (c.needs(1)) {
    const Tensor zero = zero_like_grad(c);
    g[1] = ops::where(kLower ? ops::lt(self, bound) : ops::gt(self, bound), c.grad(), zero);
  }
  if (c.needs(0)) {
    const Tensor zero = zero_like_grad(c);
    g[0] = ops::where(kLower ? ops::ge(self, bound) : ops::le(self, bound), c.grad(), zero);
  }
  return g;
}

VariableList hardtanh(const FormulaCall& c) {
  return {ops::hardtanh_backward(c.grad(), c.input(0), c.arg(1).to_scalar(), c.arg(2).to_scalar())};
}
VariableList leaky_relu(const FormulaCall& c) {
  return {ops::leaky_relu_backward(c.grad(), c.input(0), c.arg(1).to_scalar(), false)};
}
VariableList elu(const FormulaCall& c) {
  return {ops::elu_backward(c.grad(), c.arg(1).to_scalar(), c.arg(2).to_scalar(), c.arg(3).to_scalar(), false,
                            c.input(0))};
}
// leaky_relu_ / elu_: their own rows read the result (self_is_result / is_result true).
VariableList leaky_relu_inplace(const FormulaCall& c) {
  return {ops::leaky_relu_backward(c.grad(), c.output(0), c.arg(1).to_scalar(), true)};
}
VariableList elu_inplace(const FormulaCall& c) {
  return {ops::elu_backward(c.grad(), c.arg(1).to_scalar(), c.arg(2).to_scalar(), c.arg(3).to_scalar(), true,
                            c.output(0))};
}
VariableList softplus(const FormulaCall& c) {
  return {ops::softplus_backward(c.grad(), c.input(0), c.arg(1).to_scalar(), c.arg(2).to_scalar())};
}

// nan_to_num: grad * isfinite(self), isfinite being CompositeImplicit:
// (self == self) * (self.abs() != inf) for floats (ones for integers).
VariableList nan_to_num(const FormulaCall& c) {
  const Tensor self = c.input(0);
  Tensor finite;
  if (!is_floating(self.dtype())) {
    finite = ops::ones_like(self, {.dtype = DType::kBool});
  } else {
    const Tensor not_inf = ops::ne(ops::abs(self), std::numeric_limits<double>::infinity());
    finite = ops::mul(ops::eq(self, self), not_inf);
  }
  return {ops::mul(c.grad(), finite)};
}

// pow.Scalar (base, exponent): pow_backward_exponent: grad * (result * log(base)),
// with 0 where exponent >= 0 when base is 0.
VariableList pow_scalar(const FormulaCall& c) {
  const Scalar base = c.arg(0).to_scalar();
  const Tensor grad = c.grad(), result = c.output(0);
  const Scalar log_base(std::log(base.to_double()));
  if (base.to_double() == 0.0) {
    const Tensor lam = mul_scalar(result, log_base);
    const Tensor zeros = ops::zeros({}, {.dtype = grad.dtype(), .device = grad.device()});
    const Tensor cond = ops::ge(c.input(0), 0);
    return {ops::mul(grad, ops::where(cond, zeros, lam))};
  }
  return {ops::mul(grad, mul_scalar(result, log_base))};
}

// remainder / fmod (.Tensor): self's is grad, other's is -grad * self.div(other, mode).
template <bool kFloor>
VariableList remainder_like(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) {
    const Tensor q = ops::div(c.input(0), c.input(1), kFloor ? "floor" : "trunc");
    g[1] = ops::mul(ops::neg(c.grad()), q);
  }
  if (c.needs(0)) g[0] = c.grad();
  return g;
}

// div.Tensor_mode / div.Scalar_mode: zeros of the input's dtype with a
// rounding mode, else true division's derivative.
VariableList div_mode(const FormulaCall& c) {
  const bool rounding = !c.arg(2).is_none();
  const bool tensor_other = c.num_inputs() == 2;
  VariableList g(c.num_inputs());
  if (tensor_other && c.needs(1)) {
    if (rounding) {
      g[1] = ops::zeros_like(c.grad(), {.dtype = c.dtype(1)});
    } else {
      const Tensor other = c.input(1);
      const Tensor q = ops::div(ops::div(c.input(0), other), other);
      g[1] = ops::mul(ops::neg(c.grad()), q);
    }
  }
  if (c.needs(0)) {
    if (rounding) {
      g[0] = ops::zeros_like(c.grad(), {.dtype = c.dtype(0)});
    } else {
      g[0] = tensor_other ? ops::div(c.grad(), c.input(1)) : div_scalar(c.grad(), c.arg(1).to_scalar());
    }
  }
  return g;
}

// atan2: atan2_backward: recip = 1 / (self * self + other * other);
// grad * other * recip and grad * -self * recip.
VariableList atan2(const FormulaCall& c) {
  const Tensor self = c.input(0), other = c.input(1), grad = c.grad();
  const Tensor oo = ops::mul(other, other);
  const Tensor recip = ops::reciprocal(ops::add(ops::mul(self, self), oo));
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::mul(ops::mul(grad, other), recip);
  if (c.needs(1)) {
    const Tensor minus_self = ops::neg(self);
    g[1] = ops::mul(ops::mul(grad, minus_self), recip);
  }
  return g;
}

// ---- Double backward of the activations' backward ops ----
// hardtanh_backward / leaky_relu_backward (grad_output, self, ...): linear in
// grad_output (the same backward op of the incoming gradient); zeros for self.
VariableList hardtanh_backward(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::hardtanh_backward(c.grad(), c.input(1), c.arg(2).to_scalar(), c.arg(3).to_scalar());
  if (c.needs(1)) g[1] = ops::zeros_like(c.grad());
  return g;
}
VariableList leaky_relu_backward(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::leaky_relu_backward(c.grad(), c.input(1), c.arg(2).to_scalar(), false);
  if (c.needs(1)) g[1] = ops::zeros_like(c.grad());
  return g;
}
// elu_backward (grad_output, alpha, scale, input_scale, is_result, self_or_result):
// elu_double_backward for self_or_result.
VariableList elu_backward(const FormulaCall& c) {
  const Scalar alpha = c.arg(1).to_scalar(), scale = c.arg(2).to_scalar(), input_scale = c.arg(3).to_scalar();
  const bool is_result = c.arg(4).to_bool();
  const Tensor grad_output = c.input(0), x = c.input(1), grad = c.grad();
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::elu_backward(grad, alpha, scale, input_scale, is_result, x);
  if (c.needs(1)) {
    const Tensor negative = to_dtype(ops::lt(x, 0), grad.dtype());
    if (is_result) {
      g[1] = ops::mul(mul_scalar(ops::mul(grad, grad_output), input_scale), negative);
    } else {
      const Tensor scaled = mul_scalar(ops::mul(grad, grad_output), input_scale);
      g[1] = ops::mul(ops::elu_backward(scaled, alpha, scale, input_scale, is_result, x), negative);
    }
  }
  return g;
}
// softplus_backward (grad_output, self, beta, threshold): softplus_double_backward
// for self: sigmoid_backward(grad * grad_output, sigmoid(x)) * (x < threshold) * beta, x = self * beta.
VariableList softplus_backward(const FormulaCall& c) {
  const Scalar beta = c.arg(2).to_scalar(), threshold = c.arg(3).to_scalar();
  const Tensor grad_output = c.input(0), self = c.input(1), grad = c.grad();
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::softplus_backward(grad, self, beta, threshold);
  if (c.needs(1)) {
    const Tensor gg = ops::mul(grad, grad_output);
    const Tensor x = mul_scalar(self, beta);
    const Tensor below = to_dtype(ops::lt(x, threshold), grad.dtype());
    const Tensor sb = ops::sigmoid_backward(gg, ops::sigmoid(x));
    g[1] = mul_scalar(ops::mul(sb, below), beta);
  }
  return g;
}

}  // namespace

void add_pointwise_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::clamp.Tensor", "ClampBackward0", 0b111, 0, &clamp_tensor});
  out.push_back({"aten::clamp", "ClampBackward1", kSelf, 0, &clamp});
  out.push_back({"aten::clamp_min", "ClampMinBackward0", kSelf, 0, &clamp_bound<true>});
  out.push_back({"aten::clamp_min.Tensor", "ClampMinBackward1", kSelf | kOther, 0, &clamp_bound_tensor<true>});
  out.push_back({"aten::clamp_max", "ClampMaxBackward0", kSelf, 0, &clamp_bound<false>});
  out.push_back({"aten::clamp_max.Tensor", "ClampMaxBackward1", kSelf | kOther, 0, &clamp_bound_tensor<false>});
  out.push_back({"aten::hardtanh", "HardtanhBackward0", kSelf, 0, &hardtanh});
  out.push_back({"aten::leaky_relu", "LeakyReluBackward0", kSelf, 0, &leaky_relu});
  out.push_back({"aten::elu", "EluBackward0", kSelf, 0, &elu});
  // In-place forms (See Note [In-place pointwise ops]): clamp_, clamp_min_,
  // clamp_max_ and hardtanh_ take the functional rows (self cloned first);
  // leaky_relu_ and elu_ have their own.
  out.push_back({"aten::clamp_.Tensor", "ClampBackward0", 0b111, 0, &clamp_tensor});
  out.push_back({"aten::clamp_", "ClampBackward1", kSelf, 0, &clamp});
  out.push_back({"aten::clamp_min_", "ClampMinBackward0", kSelf, 0, &clamp_bound<true>});
  out.push_back({"aten::clamp_min_.Tensor", "ClampMinBackward1", kSelf | kOther, 0, &clamp_bound_tensor<true>});
  out.push_back({"aten::clamp_max_", "ClampMaxBackward0", kSelf, 0, &clamp_bound<false>});
  out.push_back({"aten::clamp_max_.Tensor", "ClampMaxBackward1", kSelf | kOther, 0, &clamp_bound_tensor<false>});
  out.push_back({"aten::hardtanh_", "HardtanhBackward0", kSelf, 0, &hardtanh});
  out.push_back({"aten::leaky_relu_", "LeakyReluBackward1", 0, 1, &leaky_relu_inplace});
  out.push_back({"aten::elu_", "EluBackward1", 0, 1, &elu_inplace});
  out.push_back({"aten::softplus", "SoftplusBackward0", kSelf, 0, &softplus});
  out.push_back({"aten::nan_to_num", "NanToNumBackward0", kSelf, 0, &nan_to_num});
  out.push_back({"aten::pow.Scalar", "PowBackward2", kSelf, 1, &pow_scalar});
  out.push_back({"aten::remainder.Scalar", "RemainderBackward0", 0, 0, &identity});
  out.push_back({"aten::remainder.Tensor", "RemainderBackward1", kSelf | kOther, 0, &remainder_like<true>,
                 {kOther, kOther}});
  out.push_back({"aten::fmod.Scalar", "FmodBackward0", 0, 0, &identity});
  out.push_back({"aten::fmod.Tensor", "FmodBackward1", kSelf | kOther, 0, &remainder_like<false>, {kOther, kOther}});
  out.push_back({"aten::div.Tensor_mode", "DivBackward2", kSelf | kOther, 0, &div_mode});
  out.push_back({"aten::div.Scalar_mode", "DivBackward3", 0, 0, &div_mode});
  out.push_back({"aten::atan2", "Atan2Backward0", kSelf | kOther, 0, &atan2});
  out.push_back({"aten::hardtanh_backward", "HardtanhBackwardBackward0", kOther, 0, &hardtanh_backward});
  out.push_back({"aten::leaky_relu_backward", "LeakyReluBackwardBackward0", kOther, 0, &leaky_relu_backward});
  out.push_back({"aten::elu_backward", "EluBackwardBackward0", kSelf | kOther, 0, &elu_backward});
  out.push_back({"aten::softplus_backward", "SoftplusBackwardBackward0", kSelf | kOther, 0, &softplus_backward});
}

}  // namespace opspec::autograd::internal
