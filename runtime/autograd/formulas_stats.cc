// formulas_stats.cc: derivatives of var, std and var_mean (.correction),
// logsumexp and mse_loss, op for op as FunctionsManual.cpp's var_backward,
// std_backward, var_mean_backward and logsumexp_backward (C++ operands right
// to left, as GCC builds evaluate them). See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// unsqueeze_multiple: t with the reduced dims of an nd-dim input back (one
// unsqueeze per dim, ascending).
Tensor unsqueeze_multiple(Tensor t, const std::vector<int64_t>& dims, int64_t nd) {
  std::vector<bool> mask(static_cast<size_t>(nd), false);
  for (int64_t d : dims) mask[static_cast<size_t>(wrap_dim(d, nd, "unsqueeze_multiple"))] = true;
  for (int64_t d = 0; d < nd; ++d) {
    if (mask[static_cast<size_t>(d)]) t = ops::unsqueeze(t, d);
  }
  return t;
}

double correction_of(const Value& v) { return v.is_none() ? 1.0 : v.to_scalar().to_double(); }

// var_backward: (2 / (n - correction)) * grad * (self - self.mean(dim, true)).
Tensor var_backward(Tensor grad, const Tensor& self, const std::vector<int64_t>& dims, double correction,
                    bool keepdim) {
  if (self.dim() == 0 || dims.empty()) {
    const double dof = static_cast<double>(self.numel()) - correction;
    const Tensor centered = ops::sub(self, ops::mean(self));
    return ops::mul(mul_scalar(grad, 2.0 / dof), centered);
  }
  if (!keepdim && self.dim() > 1) grad = unsqueeze_multiple(grad, dims, self.dim());
  double n = 1;
  for (int64_t d : dims) n *= static_cast<double>(self.size(wrap_dim(d, self.dim(), "var")));
  const Tensor centered = ops::sub(self, ops::mean(self, dims, /*keepdim=*/true));
  return ops::mul(mul_scalar(grad, 2.0 / (n - correction)), centered);
}

// var.correction / std.correction / var_mean.correction (self, dim?, correction?, keepdim).
VariableList var(const FormulaCall& c) {
  return {var_backward(c.grad(), c.input(0), dims_of(c.arg(1)), correction_of(c.arg(2)), c.arg(3).to_bool())};
}

VariableList std_dev(const FormulaCall& c) {
  const Tensor result = c.output(0);
  Tensor grad_var = ops::div(c.grad(), mul_scalar(result, 2));
  ops::masked_fill_(grad_var, ops::eq(result, 0), 0);
  return {var_backward(grad_var, c.input(0), dims_of(c.arg(1)), correction_of(c.arg(2)), c.arg(3).to_bool())};
}

VariableList var_mean(const FormulaCall& c) {
  const Tensor self = c.input(0);
  const std::vector<int64_t> dims = dims_of(c.arg(1));
  const bool keepdim = c.arg(3).to_bool();
  Tensor g;
  if (c.grad(0).defined()) g = var_backward(c.grad(0), self, dims, correction_of(c.arg(2)), keepdim);
  if (c.grad(1).defined()) {
    // mean_backward: sum_backward (unsqueeze, expand) divided by the reduced count.
    Tensor expanded = c.grad(1);
    double n = static_cast<double>(self.numel());
    if (!dims.empty() && self.dim() > 0) {  // a 0-dim self's dim [0] is the whole (one) element
      n = 1;
      for (int64_t d : dims) n *= static_cast<double>(self.size(wrap_dim(d, self.dim(), "var_mean")));
      if (!keepdim && self.dim() > 0) expanded = unsqueeze_multiple(expanded, dims, self.dim());
    }
    const Tensor aux = div_scalar(ops::expand(expanded, self.sizes()), n);
    g = g.defined() ? ops::add(g, aux) : aux;
  }
  return {g};
}

// logsumexp (self, dim, keepdim): grad * exp(self - result), both unsqueezed back.
VariableList logsumexp(const FormulaCall& c) {
  const Tensor self = c.input(0);
  Tensor grad = c.grad(), result = c.output(0);
  if (!c.arg(2).to_bool() && self.dim() != 0) {
    const std::vector<int64_t> dims = c.arg(1).to_int_list();
    grad = unsqueeze_multiple(grad, dims, self.dim());
    result = unsqueeze_multiple(result, dims, self.dim());
  }
  return {ops::mul(grad, ops::exp(ops::sub(self, result)))};
}

// mse_loss (self, target, reduction): mse_loss_backward for self, and with
// self and target swapped for target.
VariableList mse_loss(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const auto r = static_cast<ops::Reduction>(c.arg(2).to_int());
  if (c.needs(0)) g[0] = ops::mse_loss_backward(c.grad(), c.input(0), c.input(1), r);
  if (c.needs(1)) g[1] = ops::mse_loss_backward(c.grad(), c.input(1), c.input(0), r);
  return g;
}

}  // namespace

void add_stats_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::var.correction", "VarBackward0", 1, 0, &var});
  out.push_back({"aten::std.correction", "StdBackward0", 1, 1, &std_dev});
  out.push_back({"aten::var_mean.correction", "VarMeanBackward0", 1, 0, &var_mean});
  out.push_back({"aten::logsumexp", "LogsumexpBackward0", 1, 1, &logsumexp});
  out.push_back({"aten::mse_loss", "MseLossBackward0", 0b11, 0, &mse_loss});
}

}  // namespace opspec::autograd::internal
