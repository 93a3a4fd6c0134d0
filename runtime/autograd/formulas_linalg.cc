// formulas_linalg.cc: derivatives of the matrix products.
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// column_major: strides of a [rows, cols] matrix stored column by column
// (PyTorch's test in mm_mat1_backward, on the strides saved in forward).
bool column_major(IntArrayRef sizes, IntArrayRef strides) {
  return strides[0] == 1 && strides[1] == sizes[0];
}

// mm_mat1_backward: the gradient of mat1 in mat1 @ mat2 (FunctionsManual.cpp).
Tensor mm_mat1_backward(const Tensor& grad, const Tensor& mat2, IntArrayRef sizes, IntArrayRef strides,
                        const Scalar& alpha) {
  if (column_major(sizes, strides)) return maybe_multiply(ops::t(ops::mm(mat2, ops::t(grad))), alpha);
  return maybe_multiply(ops::mm(grad, ops::t(mat2)), alpha);
}
// mm_mat2_backward: the gradient of mat2 in mat1 @ mat2.
Tensor mm_mat2_backward(const Tensor& grad, const Tensor& mat1, IntArrayRef sizes, IntArrayRef strides,
                        const Scalar& alpha) {
  if (column_major(sizes, strides)) return maybe_multiply(ops::t(ops::mm(ops::t(grad), mat1)), alpha);
  return maybe_multiply(ops::mm(ops::t(mat1), grad), alpha);
}

// mm(self, mat2): mat2 first (yaml keys in sorted order).
VariableList mm(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) g[1] = mm_mat2_backward(c.grad(), c.input(0), c.sizes(1), c.strides(1), 1);
  if (c.needs(0)) g[0] = mm_mat1_backward(c.grad(), c.input(1), c.sizes(0), c.strides(0), 1);
  return g;
}
// addmm(self, mat1, mat2, beta, alpha): mat1, mat2, then self.
VariableList addmm(const FormulaCall& c) {
  VariableList g(3);
  const Scalar beta = c.arg(3).to_scalar(), alpha = c.arg(4).to_scalar();
  if (c.needs(1)) g[1] = mm_mat1_backward(c.grad(), c.input(2), c.sizes(1), c.strides(1), alpha);
  if (c.needs(2)) g[2] = mm_mat2_backward(c.grad(), c.input(1), c.sizes(2), c.strides(2), alpha);
  if (c.needs(0)) g[0] = maybe_multiply(c.grad(), beta);
  return g;
}
// bmm(self, mat2): mat2 first.
VariableList bmm(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(1)) g[1] = ops::bmm(ops::transpose(c.input(0), 1, 2), c.grad());
  if (c.needs(0)) g[0] = ops::bmm(c.grad(), ops::transpose(c.input(1), 1, 2));
  return g;
}
// dot(self, tensor): self first.
VariableList dot(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::mul(c.grad(), c.input(1));
  if (c.needs(1)) g[1] = ops::mul(c.grad(), c.input(0));
  return g;
}
// mv(self, vec): self (grad.ger(vec): reshape to a column, times vec), then vec.
VariableList mv(const FormulaCall& c) {
  VariableList g(2);
  if (c.needs(0)) g[0] = ops::mul(ops::reshape(c.grad(), {c.grad().size(0), 1}), c.input(1));
  if (c.needs(1)) g[1] = ops::mv(ops::t(c.input(0)), c.grad());
  return g;
}

constexpr uint32_t k0 = 1u, k1 = 2u, k2 = 4u;

}  // namespace

void add_linalg_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::mm", "MmBackward0", k0 | k1, 0, &mm, {k1, k0}, /*reads_strides=*/true});
  out.push_back({"aten::addmm", "AddmmBackward0", k1 | k2, 0, &addmm, {0, k2, k1}, /*reads_strides=*/true});
  out.push_back({"aten::bmm", "BmmBackward0", k0 | k1, 0, &bmm, {k1, k0}});
  out.push_back({"aten::dot", "DotBackward0", k0 | k1, 0, &dot, {k1, k0}});
  out.push_back({"aten::mv", "MvBackward0", k0 | k1, 0, &mv, {k1, k0}});
}

}  // namespace opspec::autograd::internal
