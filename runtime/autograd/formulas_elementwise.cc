// formulas_elementwise.cc: derivatives of the elementwise ops.
// See Note [Derivative formulas] in formulas.h.
#include <cmath>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// Argument positions in the schemas below: self 0, other 1, alpha 2.
VariableList add_tensor(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) g[1] = maybe_multiply(c.grad(), c.arg(2).to_scalar());
  if (c.needs(0)) g[0] = c.grad();
  return g;
}
VariableList sub_tensor(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) g[1] = maybe_multiply(ops::neg(c.grad()), c.arg(2).to_scalar());
  if (c.needs(0)) g[0] = c.grad();
  return g;
}
VariableList rsub_scalar(const FormulaCall& c) { return {maybe_multiply(ops::neg(c.grad()), c.arg(2).to_scalar())}; }
VariableList mul_tensor(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) g[1] = ops::mul(c.grad(), c.input(0));
  if (c.needs(0)) g[0] = ops::mul(c.grad(), c.input(1));
  return g;
}
VariableList mul_scalar_formula(const FormulaCall& c) { return {mul_scalar(c.grad(), c.arg(1).to_scalar())}; }
VariableList div_tensor(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) {
    // -grad * ((self / other) / other): GCC evaluates the right operand first, as PyTorch's builds do.
    const Tensor other = c.input(1);
    const Tensor q = ops::div(ops::div(c.input(0), other), other);
    g[1] = ops::mul(ops::neg(c.grad()), q);
  }
  if (c.needs(0)) g[0] = ops::div(c.grad(), c.input(1));
  return g;
}
VariableList div_scalar_formula(const FormulaCall& c) { return {div_scalar(c.grad(), c.arg(1).to_scalar())}; }
VariableList neg(const FormulaCall& c) { return {ops::neg(c.grad())}; }
VariableList exp(const FormulaCall& c) { return {ops::mul(c.grad(), c.output(0))}; }
VariableList log(const FormulaCall& c) { return {ops::div(c.grad(), c.input(0))}; }
VariableList sin(const FormulaCall& c) { return {ops::mul(c.grad(), ops::cos(c.input(0)))}; }
VariableList cos(const FormulaCall& c) {
  const Tensor minus_sin = ops::neg(ops::sin(c.input(0)));
  return {ops::mul(c.grad(), minus_sin)};
}
VariableList tanh(const FormulaCall& c) { return {ops::tanh_backward(c.grad(), c.output(0))}; }
VariableList sigmoid(const FormulaCall& c) { return {ops::sigmoid_backward(c.grad(), c.output(0))}; }
VariableList relu(const FormulaCall& c) { return {ops::threshold_backward(c.grad(), c.output(0), 0)}; }
VariableList gelu(const FormulaCall& c) { return {ops::gelu_backward(c.grad(), c.input(0), c.arg(1).to_string())}; }
// silu: with grad mode on (a create_graph backward) PyTorch's
// infinitely_differentiable_silu_backward, grad * sigmoid * (1.0 + self *
// (1.0 - sigmoid)), right operands first; silu_backward itself has no
// formula in PyTorch, so its second derivative comes through these ops.
VariableList silu(const FormulaCall& c) {
  if (!is_grad_enabled()) return {ops::silu_backward(c.grad(), c.input(0))};
  const Tensor self = c.input(0);
  const Tensor s = ops::sigmoid(self);
  const Tensor right = add_scalar(ops::mul(self, scalar_sub(1.0, s)), 1.0);
  return {ops::mul(ops::mul(c.grad(), s), right)};
}
// log2: grad / (self * ln 2), the product first.
VariableList log2(const FormulaCall& c) { return {ops::div(c.grad(), mul_scalar(c.input(0), 0.6931471805599453))}; }
VariableList cosh(const FormulaCall& c) { return {ops::mul(c.grad(), ops::sinh(c.input(0)))}; }
VariableList sinh(const FormulaCall& c) { return {ops::mul(c.grad(), ops::cosh(c.input(0)))}; }
VariableList sqrt(const FormulaCall& c) { return {ops::div(c.grad(), mul_scalar(c.output(0), 2))}; }
VariableList rsqrt(const FormulaCall& c) {
  // -0.5 * grad * result.pow(3): the right operand (the pow) first under GCC.
  const Tensor cube = ops::pow(c.output(0), 3);
  return {ops::mul(mul_scalar(c.grad(), -0.5), cube)};
}
VariableList reciprocal(const FormulaCall& c) {
  const Tensor r = c.output(0);
  const Tensor sq = ops::mul(r, r);
  return {ops::mul(ops::neg(c.grad()), sq)};
}
// pow.Tensor_Scalar: pow_backward: grad * (e * self.pow(e - 1)) with e as a
// double (so pow and mul.Scalar get 1.0-style scalars); zeros_like(self) for e == 0.
VariableList pow_tensor_scalar(const FormulaCall& c) {
  const double e = c.arg(1).to_scalar().to_double();
  if (e == 0.0) return {ops::zeros_like(c.input(0))};
  const Tensor p = ops::pow(c.input(0), Scalar(e - 1.0));
  return {ops::mul(c.grad(), mul_scalar(p, Scalar(e)))};
}
// pow.Tensor_Tensor (self, exponent): exponent's formula first (sorted yaml
// keys), each argument list evaluated right to left (GCC), as PyTorch's build.
VariableList pow_tensor_tensor(const FormulaCall& c) {
  VariableList g(2);
  const Tensor self = c.input(0), exponent = c.input(1);
  if (c.needs(1)) {  // pow_backward_exponent: grad * where(self == 0 & exponent >= 0, 0, result * log(self))
    const Tensor ge = ops::ge(exponent, Scalar(int64_t{0}));
    const Tensor eq = ops::eq(self, Scalar(int64_t{0}));
    const Tensor cond = ops::logical_and(eq, ge);
    const Tensor rl = ops::mul(c.output(0), ops::log(self));
    g[1] = ops::mul(c.grad(), where_scalar_self(cond, 0.0, rl));
  }
  if (c.needs(0)) {  // pow_backward_self: where(exponent == 0, 0, grad * (exponent * self.pow(exponent - 1)))
    const Tensor p = ops::pow(self, sub_scalar(exponent, int64_t{1}));
    const Tensor d = ops::mul(c.grad(), ops::mul(exponent, p));
    const Tensor zero = ops::scalar_tensor(0.0, {.dtype = c.grad().dtype(), .device = c.grad().device()});
    g[0] = ops::where(ops::eq(exponent, Scalar(0.0)), zero, d);
  }
  return g;
}
VariableList abs(const FormulaCall& c) { return {ops::mul(c.grad(), ops::sgn(c.input(0)))}; }
VariableList expm1(const FormulaCall& c) { return {ops::mul(c.grad(), add_scalar(c.output(0), int64_t{1}))}; }
VariableList log1p(const FormulaCall& c) { return {ops::div(c.grad(), add_scalar(c.input(0), int64_t{1}))}; }
// erf: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad.
VariableList erf(const FormulaCall& c) {
  const Tensor e = ops::exp(ops::neg(ops::pow(c.input(0), Scalar(int64_t{2}))));
  return {ops::mul(mul_scalar(e, 2.0 / std::sqrt(M_PI)), c.grad())};
}
// maximum / minimum: where(self == other, grad / 2, grad).masked_fill_(mask, 0)
// per input, other's first; the mask drops the input that lost (is_max: maximum).
template <bool kMax>
VariableList min_max(const FormulaCall& c) {
  VariableList g(2);
  const Tensor self = c.input(0), other = c.input(1);
  auto part = [&](bool self_loses_when_less) {
    const Tensor half = div_scalar(c.grad(), int64_t{2});
    Tensor w = ops::where(ops::eq(self, other), half, c.grad());
    const Tensor lost = self_loses_when_less ? ops::lt(self, other) : ops::gt(self, other);
    ops::masked_fill_(w, lost, int64_t{0});
    return w;
  };
  if (c.needs(1)) g[1] = part(/*self_loses_when_less=*/!kMax);  // other loses where self wins
  if (c.needs(0)) g[0] = part(/*self_loses_when_less=*/kMax);
  return g;
}
// where.self (condition, self, other): other's gradient first; condition has none.
VariableList where_self(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const Tensor cond = c.input(0);
  if (c.needs(2)) g[2] = where_scalar_self(cond, int64_t{0}, c.grad());
  if (c.needs(1)) g[1] = where_scalar_other(cond, c.grad(), int64_t{0});
  return g;
}
// sgn: sgn_backward of a real input: a ZeroTensor (_efficientzerotensor).
VariableList sgn(const FormulaCall& c) {
  return {ops::_efficientzerotensor(c.sizes(0), {.dtype = c.dtype(0), .device = c.device(0)})};
}
// fill_.Tensor (self, value): zeros_like(grad) for self, grad.sum() for value.
VariableList fill_tensor(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::zeros_like(c.grad());
  if (c.needs(1)) g[1] = ops::sum(c.grad());
  return g;
}
// masked_fill / masked_fill_ (self, mask, value): grad.masked_fill(mask, 0); mask has none.
VariableList masked_fill(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) g[0] = ops::masked_fill(c.grad(), c.input(1), int64_t{0});
  return g;
}
// Double backward (create_graph): the backward ops' own formulas, arguments
// (grad_output, output or self).
VariableList threshold_backward_backward(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::threshold_backward(c.grad(), c.input(1), c.arg(2).to_scalar());
  if (c.needs(1)) g[1] = ops::zeros_like(c.grad());
  return g;
}
VariableList tanh_backward_backward(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::tanh_backward(c.grad(), c.input(1));
  if (c.needs(1)) {  // grad * (-2 * output * grad_output)
    const Tensor t = ops::mul(mul_scalar(c.input(1), int64_t{-2}), c.input(0));
    g[1] = ops::mul(c.grad(), t);
  }
  return g;
}
// gelu_double_backward(ggI, gO, input, approximate): FunctionsManual.cpp's,
// op for op (GCC evaluates each binary operator's right operand first;
// `3 * kKappa` and `6 * kKappa` fold to doubles, `2` stays an integer).
Tensor gelu_double_backward(const Tensor& ggI, const Tensor& gO, const Tensor& input, std::string_view approximate) {
  if (approximate == "tanh") {
    constexpr double kBeta = M_SQRT2 * M_2_SQRTPI * 0.5;
    constexpr double kKappa = 0.044715;
    const Tensor inner = mul_scalar(ops::add(input, mul_scalar(ops::pow(input, 3), kKappa)), kBeta);
    const Tensor tanh_inner = ops::tanh(inner);
    const Tensor sech_inner = scalar_div(1, ops::cosh(inner));
    const Tensor f = mul_scalar(input, 0.5);
    const Tensor g = scalar_sub(1, ops::mul(tanh_inner, tanh_inner));
    const Tensor h = mul_scalar(add_scalar(ops::mul(mul_scalar(input, 3 * kKappa), input), 1), kBeta);
    const Tensor f_prime_gh = ops::mul(mul_scalar(g, 0.5), h);
    const Tensor minus_sech_tanh = ops::mul(ops::neg(sech_inner), tanh_inner);
    const Tensor g_prime = ops::mul(ops::mul(mul_scalar(sech_inner, 2), minus_sech_tanh), h);
    const Tensor g_prime_fh = ops::mul(ops::mul(f, h), g_prime);
    const Tensor h_prime = mul_scalar(mul_scalar(input, 6 * kKappa), kBeta);
    const Tensor h_prime_fg = ops::mul(ops::mul(f, g), h_prime);
    const Tensor sum = ops::add(ops::add(mul_scalar(f_prime_gh, 2), g_prime_fh), h_prime_fg);
    return ops::mul(ops::mul(ggI, gO), sum);
  }
  constexpr double kBeta = M_2_SQRTPI * M_SQRT1_2 * 0.5;
  const Tensor input_sq = ops::mul(input, input);
  const Tensor pdf = mul_scalar(ops::exp(mul_scalar(input_sq, -0.5)), kBeta);
  const Tensor right = ops::mul(input_sq, pdf);
  const Tensor dgrad_dinput = ops::sub(mul_scalar(pdf, 2), right);
  return ops::mul(ops::mul(ggI, gO), dgrad_dinput);
}
// gelu_backward (grad_output, self, approximate): grad_output's formula first.
VariableList gelu_backward_backward(const FormulaCall& c) {
  VariableList g(2);
  const std::string approximate = c.arg(2).to_string();
  if (c.needs(0)) g[0] = ops::gelu_backward(c.grad(), c.input(1), approximate);
  if (c.needs(1)) g[1] = gelu_double_backward(c.grad(), c.input(0), c.input(1), approximate);
  return g;
}
VariableList sigmoid_backward_backward(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::sigmoid_backward(c.grad(), c.input(1));
  if (c.needs(1)) {  // grad * grad_output * (-2 * output + 1), the right factor first
    const Tensor r = add_scalar(mul_scalar(c.input(1), int64_t{-2}), int64_t{1});
    g[1] = ops::mul(ops::mul(c.grad(), c.input(0)), r);
  }
  return g;
}
VariableList to_copy(const FormulaCall& c) {
  const Tensor& g = c.grad();
  if (g.dtype() == c.dtype(0) && g.device() == c.device(0)) return {g};
  return {ops::_to_copy(g, TensorOptions{.dtype = c.dtype(0), .device = c.device(0)})};
}
VariableList copy_(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::zeros_like(c.grad());
  if (c.needs(1)) g[1] = c.grad();  // the engine casts it to src's dtype
  return g;
}

}  // namespace

void add_elementwise_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::add.Tensor", "AddBackward0", 0, 0, &add_tensor});
  out.push_back({"aten::add_.Tensor", "AddBackward0", 0, 0, &add_tensor});
  out.push_back({"aten::add.Scalar", "AddBackward1", 0, 0, &identity});
  out.push_back({"aten::add_.Scalar", "AddBackward1", 0, 0, &identity});
  out.push_back({"aten::sub.Tensor", "SubBackward0", 0, 0, &sub_tensor});
  out.push_back({"aten::sub_.Tensor", "SubBackward0", 0, 0, &sub_tensor});
  out.push_back({"aten::sub.Scalar", "SubBackward1", 0, 0, &identity});
  out.push_back({"aten::rsub.Scalar", "RsubBackward1", 0, 0, &rsub_scalar});
  out.push_back({"aten::mul.Tensor", "MulBackward0", kSelf | kOther, 0, &mul_tensor, {kOther, kSelf}});
  out.push_back({"aten::mul.Scalar", "MulBackward1", 0, 0, &mul_scalar_formula});
  out.push_back({"aten::mul_.Scalar", "MulBackward1", 0, 0, &mul_scalar_formula});
  out.push_back({"aten::div.Tensor", "DivBackward0", kSelf | kOther, 0, &div_tensor, {kOther, kSelf | kOther}});
  out.push_back({"aten::div.Scalar", "DivBackward1", 0, 0, &div_scalar_formula});
  out.push_back({"aten::neg", "NegBackward0", 0, 0, &neg});
  out.push_back({"aten::exp", "ExpBackward0", 0, 1, &exp});
  out.push_back({"aten::log", "LogBackward0", kSelf, 0, &log});
  out.push_back({"aten::sin", "SinBackward0", kSelf, 0, &sin});
  out.push_back({"aten::cosh", "CoshBackward0", kSelf, 0, &cosh});
  out.push_back({"aten::log2", "Log2Backward0", kSelf, 0, &log2});
  // Piecewise constant: zeros_like(grad).
  out.push_back({"aten::floor", "FloorBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::ceil", "CeilBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::round", "RoundBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::round.decimals", "RoundBackward1", 0, 0, &zeros_like_grad});
  out.push_back({"aten::round_.decimals", "RoundBackward1", 0, 0, &zeros_like_grad});
  out.push_back({"aten::trunc", "TruncBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::sign", "SignBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::sinh", "SinhBackward0", kSelf, 0, &sinh});
  out.push_back({"aten::cos", "CosBackward0", kSelf, 0, &cos});
  out.push_back({"aten::tanh", "TanhBackward0", 0, 1, &tanh});
  out.push_back({"aten::sigmoid", "SigmoidBackward0", 0, 1, &sigmoid});
  out.push_back({"aten::relu", "ReluBackward0", 0, 1, &relu});
  out.push_back({"aten::gelu", "GeluBackward0", kSelf, 0, &gelu});
  out.push_back({"aten::silu", "SiluBackward0", kSelf, 0, &silu});
  out.push_back({"aten::sqrt", "SqrtBackward0", 0, 1, &sqrt});
  out.push_back({"aten::rsqrt", "RsqrtBackward0", 0, 1, &rsqrt});
  out.push_back({"aten::reciprocal", "ReciprocalBackward0", 0, 1, &reciprocal});
  out.push_back({"aten::pow.Tensor_Scalar", "PowBackward0", kSelf, 0, &pow_tensor_scalar});
  out.push_back({"aten::pow.Tensor_Tensor", "PowBackward1", kSelf | kOther, 1, &pow_tensor_tensor});
  out.push_back({"aten::pow_.Scalar", "PowBackward0", kSelf, 0, &pow_tensor_scalar});
  out.push_back({"aten::pow_.Tensor", "PowBackward1", kSelf | kOther, 1, &pow_tensor_tensor});
  out.push_back({"aten::abs", "AbsBackward0", kSelf, 0, &abs});
  out.push_back({"aten::expm1", "Expm1Backward0", 0, 1, &expm1});
  out.push_back({"aten::log1p", "Log1PBackward0", kSelf, 0, &log1p});
  out.push_back({"aten::erf", "ErfBackward0", kSelf, 0, &erf});
  out.push_back({"aten::maximum", "MaximumBackward0", kSelf | kOther, 0, &min_max<true>});
  out.push_back({"aten::minimum", "MinimumBackward0", kSelf | kOther, 0, &min_max<false>});
  out.push_back({"aten::where.self", "WhereBackward0", 1, 0, &where_self});
  // In-place forms: self as it was before the op is saved as a clone (See
  // Note [Saving self of an in-place op] in autograd_kernel.cc).
  out.push_back({"aten::mul_.Tensor", "MulBackward0", kSelf | kOther, 0, &mul_tensor, {kOther, kSelf}});
  out.push_back({"aten::div_.Tensor", "DivBackward0", kSelf | kOther, 0, &div_tensor, {kOther, kSelf | kOther}});
  out.push_back({"aten::div_.Scalar", "DivBackward1", 0, 0, &div_scalar_formula});
  // Node names count every derivatives.yaml entry of a base name (fill.Scalar is FillBackward0).
  out.push_back({"aten::fill_.Scalar", "FillBackward2", 0, 0, &zeros_like_grad});
  out.push_back({"aten::zero_", "ZeroBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::fill_.Tensor", "FillBackward3", 0, 0, &fill_tensor});
  out.push_back({"aten::sgn", "SgnBackward0", 0, 0, &sgn});
  out.push_back({"aten::threshold_backward", "ThresholdBackwardBackward0", kOther, 0, &threshold_backward_backward});
  out.push_back({"aten::tanh_backward", "TanhBackwardBackward0", kSelf | kOther, 0, &tanh_backward_backward});
  out.push_back({"aten::sigmoid_backward", "SigmoidBackwardBackward0", kSelf | kOther, 0, &sigmoid_backward_backward});
  out.push_back({"aten::gelu_backward", "GeluBackwardBackward0", kSelf | kOther, 0, &gelu_backward_backward,
                 {kOther, 0}});
  out.push_back({"aten::masked_fill.Scalar", "MaskedFillBackward0", kOther, 0, &masked_fill});
  out.push_back({"aten::masked_fill_.Scalar", "MaskedFillBackward0", kOther, 0, &masked_fill});
  out.push_back({"aten::bernoulli_.float", "BernoulliBackward2", 0, 0, &zeros_like_grad});
  out.push_back({"aten::clone", "CloneBackward0", 0, 0, &identity});
  out.push_back({"aten::alias", "AliasBackward0", 0, 0, &identity});
  // lift_fresh: `self: grad`; lift_fresh_copy, a view_copy op, takes its view's formula.
  out.push_back({"aten::lift_fresh", "LiftFreshBackward0", 0, 0, &identity});
  out.push_back({"aten::lift_fresh_copy", "LiftFreshCopyBackward0", 0, 0, &identity});
  out.push_back({"aten::_to_copy", "ToCopyBackward0", 0, 0, &to_copy});
  out.push_back({"aten::copy_", "CopyBackwards", 0, 0, &copy_});
  // The unary rows' in-place forms take their functional op's entry, node
  // name and saved tensors included, as PyTorch derives them from the same
  // derivatives.yaml row (See Note [In-place unary ops]): exp_ reads its
  // result, sin_ gets `original_self`, the clone the Autograd kernel makes.
  const size_t functional_rows = out.size();
  auto in_place_form = [&](std::string_view functional, std::string_view in_place) {
    for (size_t i = 0; i < functional_rows; ++i) {
      if (out[i].op != functional) continue;
      Formula f = out[i];
      f.op = in_place;
      out.push_back(f);
      return;
    }
    // A row whose functional formula is registered elsewhere would leave its in-place op without one.
    OPSPEC_FAIL("autograd formulas: ", in_place, " takes ", functional, "'s formula, which is not in the elementwise table");
  };
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) in_place_form("aten::" #name, "aten::" #name "_");
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
}

}  // namespace opspec::autograd::internal
