// formulas_ternary.cc: derivatives of addcmul, addcdiv and lerp (and their
// in-place forms, which take the same rows), as PyTorch 2.x's
// derivatives.yaml: inputs in the sorted order of the row's keys, calls
// inside one expression in the order GCC evaluates PyTorch's C++ (right
// operand first). Checked against torch 1.13's backward op sequences.
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// addcmul (self, tensor1, tensor2, value): self: grad; tensor1: grad *
// (tensor2 * value); tensor2: grad * (tensor1 * value).
VariableList addcmul(const FormulaCall& c) {
  const Scalar value = c.arg(3).to_scalar();
  VariableList g(3);
  if (c.needs(0)) g[0] = c.grad();
  if (c.needs(1)) g[1] = ops::mul(c.grad(), mul_scalar(c.input(2), value));
  if (c.needs(2)) g[2] = ops::mul(c.grad(), mul_scalar(c.input(1), value));
  return g;
}

// addcdiv (self, tensor1, tensor2, value): self: grad; tensor1: grad *
// (value / tensor2); tensor2: -grad * (value * tensor1 / (tensor2 * tensor2)).
VariableList addcdiv(const FormulaCall& c) {
  const Scalar value = c.arg(3).to_scalar();
  VariableList g(3);
  if (c.needs(0)) g[0] = c.grad();
  if (c.needs(1)) g[1] = ops::mul(c.grad(), scalar_div(value, c.input(2)));
  if (c.needs(2)) {
    const Tensor t2 = c.input(2);
    const Tensor sq = ops::mul(t2, t2);
    const Tensor q = ops::div(mul_scalar(c.input(1), value), sq);
    g[2] = ops::mul(ops::neg(c.grad()), q);
  }
  return g;
}

// lerp.Scalar (self, end, weight): end: grad * weight; self: grad * (1 - weight).
VariableList lerp_scalar(const FormulaCall& c) {
  const double w = c.arg(2).to_scalar().to_double();
  VariableList g(2);
  if (c.needs(1)) g[1] = mul_scalar(c.grad(), c.arg(2).to_scalar());
  if (c.needs(0)) g[0] = mul_scalar(c.grad(), 1.0 - w);
  return g;
}

// lerp.Tensor (self, end, weight): end: grad * weight; self: grad * (1 -
// weight); weight: grad * (end - self).
VariableList lerp_tensor(const FormulaCall& c) {
  VariableList g(3);
  if (c.needs(1)) g[1] = ops::mul(c.grad(), c.input(2));
  if (c.needs(0)) g[0] = ops::mul(c.grad(), scalar_sub(1, c.input(2)));
  if (c.needs(2)) g[2] = ops::mul(c.grad(), ops::sub(c.input(1), c.input(0)));
  return g;
}

}  // namespace

void add_ternary_formulas(std::vector<Formula>& out) {
  // Each input is saved only for the gradients that read it (saved_when), as PyTorch's generated code does.
  constexpr uint32_t k0 = 1u, k1 = 2u, k2 = 4u;
  for (const char* op : {"aten::addcmul", "aten::addcmul_"}) {
    out.push_back({op, "AddcmulBackward0", k1 | k2, 0, &addcmul, {0, k2, k1}});
  }
  for (const char* op : {"aten::addcdiv", "aten::addcdiv_"}) {
    out.push_back({op, "AddcdivBackward0", k1 | k2, 0, &addcdiv, {0, k2, k1 | k2}});
  }
  for (const char* op : {"aten::lerp.Scalar", "aten::lerp_.Scalar"}) {
    out.push_back({op, "LerpBackward0", 0, 0, &lerp_scalar});
  }
  for (const char* op : {"aten::lerp.Tensor", "aten::lerp_.Tensor"}) {
    out.push_back({op, "LerpBackward1", k0 | k1 | k2, 0, &lerp_tensor, {k2, k2, k0 | k1}});
  }
}

}  // namespace opspec::autograd::internal
