// formulas_reduction.cc: derivatives of the reductions.
// See Note [Derivative formulas] in formulas.h.
#include <cmath>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// sum_backward: grad brought back to sizes: the reduced dims unsqueezed
// (one: at the dim as given; several: each, ascending), then expanded.
Tensor sum_backward(const Tensor& grad, IntArrayRef sizes, const std::vector<int64_t>& dims, bool keepdim) {
  const int64_t nd = static_cast<int64_t>(sizes.size());
  Tensor g = grad;
  if (!keepdim && nd > 0 && !dims.empty()) {
    if (dims.size() == 1) {
      g = ops::unsqueeze(g, dims[0]);
    } else {
      std::vector<bool> reduced(static_cast<size_t>(nd), false);
      for (int64_t d : dims) reduced[static_cast<size_t>(wrap_dim(d, nd, "sum"))] = true;
      for (int64_t d = 0; d < nd; ++d) {
        if (reduced[static_cast<size_t>(d)]) g = ops::unsqueeze(g, d);
      }
    }
  }
  return ops::expand(g, sizes);
}

// dims_of: the dim argument (an int[]? that may be None or empty: every dim).

VariableList sum(const FormulaCall& c) { return {ops::expand(c.grad(), c.sizes(0))}; }
VariableList sum_dim(const FormulaCall& c) {
  return {sum_backward(c.grad(), c.sizes(0), dims_of(c.arg(1)), c.arg(2).to_bool())};
}
VariableList mean(const FormulaCall& c) {
  return {div_scalar(ops::expand(c.grad(), c.sizes(0)), compute_numel(c.sizes(0)))};
}
VariableList mean_dim(const FormulaCall& c) {
  const std::vector<int64_t> dims = dims_of(c.arg(1));
  const IntArrayRef sizes = c.sizes(0);
  int64_t n = 1;
  if (dims.empty() || sizes.empty()) {  // every dim, or a 0-dim self's dim [0]: its one element
    n = compute_numel(sizes);
  } else {
    for (int64_t d : dims) n *= sizes[static_cast<size_t>(wrap_dim(d, static_cast<int64_t>(sizes.size()), "mean"))];
  }
  return {div_scalar(sum_backward(c.grad(), sizes, dims, c.arg(2).to_bool()), n)};
}

// restore_reduced_dims: output with its reduced dims back as size 1 (a
// reshape), unless keepdim kept them (FunctionsManual.cpp).
Tensor restore_reduced_dims(const Tensor& output, const std::vector<int64_t>& dims, bool keepdim) {
  if (keepdim) return output;
  const int64_t total = output.dim() + static_cast<int64_t>(dims.size());
  std::vector<bool> reduced(static_cast<size_t>(total), false);
  for (int64_t d : dims) reduced[static_cast<size_t>(wrap_dim(d, total, "amax"))] = true;
  std::vector<int64_t> shape;
  int64_t next = 0;
  for (int64_t d = 0; d < total; ++d) shape.push_back(reduced[static_cast<size_t>(d)] ? 1 : output.size(next++));
  return ops::reshape(output, shape);
}

// amax / amin (self, dim, keepdim): the gradient shared evenly by the
// elements equal to the result: (grad / mask.sum(dim, true)) * mask, the mask
// computed first (GCC evaluates the right argument first, as PyTorch's builds do).
VariableList amax_amin(const FormulaCall& c) {
  const std::vector<int64_t> dims = dims_of(c.arg(1));
  const bool keepdim = c.arg(2).to_bool();
  const Tensor mask = ops::eq(restore_reduced_dims(c.output(0), dims, keepdim), c.input(0));
  const Tensor g = restore_reduced_dims(c.grad(), dims, keepdim);
  return {ops::mul(ops::div(g, ops::sum(mask, dims, /*keepdim=*/true)), mask)};
}

// linalg_vector_norm (self, ord, dim?, keepdim, dtype): PyTorch's
// norm_backward, grad and norm first unsqueezed back (unsqueeze_multiple)
// unless keepdim: ord 0 has no gradient (the count of non-zeros is locally
// constant); 1: self.sgn() * grad; 2: grad * (self / norm).masked_fill_(norm
// == 0, 0); +-inf: the gradient shared by the elements whose |self| is the
// norm (or NaN); p < 1: sgn * |self|^(p-1) (0 at 0) * grad * norm^(1-p);
// 1 < p < 2: sgn * |self|^(p-1) * grad / norm^(p-1) (0 where norm is 0);
// p > 2: self * |self|^(p-2) * grad / norm^(p-1) (the same). PyTorch's
// in-place pow_ is pow here (opspec has no pow_).
VariableList linalg_vector_norm(const FormulaCall& c) {
  const double p = c.arg(1).to_scalar().to_double();
  const std::vector<int64_t> dims = dims_of(c.arg(2));
  const bool keepdim = c.arg(3).to_bool();
  const Tensor self = c.input(0);
  Tensor grad = c.grad(), norm = c.output(0);
  const int64_t nd = self.dim();
  if (!keepdim && nd != 0 && !dims.empty()) {
    auto unsqueeze_multiple = [&](Tensor t) {
      if (dims.size() == 1) return ops::unsqueeze(t, dims[0]);
      std::vector<bool> mask(static_cast<size_t>(nd), false);
      for (int64_t d : dims) mask[static_cast<size_t>(wrap_dim(d, nd, "linalg_vector_norm"))] = true;
      for (int64_t d = 0; d < nd; ++d) {
        if (mask[static_cast<size_t>(d)]) t = ops::unsqueeze(t, d);
      }
      return t;
    };
    grad = unsqueeze_multiple(grad);
    norm = unsqueeze_multiple(norm);
  }
  const Scalar zero(int64_t{0});
  if (p == 0.0) return {Tensor()};
  if (p == 1.0) return {ops::mul(ops::sgn(self), grad)};
  if (p == 2.0) {
    Tensor q = ops::div(self, norm);
    ops::masked_fill_(q, ops::eq(norm, zero), zero);
    return {ops::mul(grad, q)};
  }
  if (std::isinf(p)) {
    const Tensor self_abs = ops::abs(self);
    const Tensor mask = ops::logical_or(ops::eq(self_abs, norm), ops::isnan(self_abs));
    return {ops::mul(ops::sgn(self), ops::mul(ops::div(grad, ops::sum(mask, dims, /*keepdim=*/true)), mask))};
  }
  if (p < 1.0) {
    Tensor scaled = ops::pow(ops::abs(self), p - 1);
    ops::masked_fill_(scaled, ops::eq(self, zero), zero);
    return {ops::mul(ops::mul(ops::mul(ops::sgn(self), scaled), grad), ops::pow(norm, 1 - p))};
  }
  const Tensor self_scaled = p < 2.0 ? ops::mul(ops::sgn(self), ops::pow(ops::abs(self), p - 1))
                                     : ops::mul(self, ops::pow(ops::abs(self), p - 2));
  Tensor scale_v = ops::div(grad, ops::pow(norm, p - 1));
  ops::masked_fill_(scale_v, ops::eq(norm, zero), zero);
  return {ops::mul(self_scaled, scale_v)};
}

}  // namespace

void add_reduction_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::amax", "AmaxBackward0", 1, 1, &amax_amin});
  out.push_back({"aten::amin", "AminBackward0", 1, 1, &amax_amin});
  out.push_back({"aten::sum", "SumBackward0", 0, 0, &sum});
  out.push_back({"aten::sum.dim_IntList", "SumBackward1", 0, 0, &sum_dim});
  out.push_back({"aten::mean", "MeanBackward0", 0, 0, &mean});
  out.push_back({"aten::mean.dim", "MeanBackward1", 0, 0, &mean_dim});
  out.push_back({"aten::linalg_vector_norm", "LinalgVectorNormBackward0", 1, 1, &linalg_vector_norm});
}

}  // namespace opspec::autograd::internal
