// formulas_shape.cc: derivatives of the view and shape ops.
// See Note [Derivative formulas] in formulas.h.
#include <algorithm>
#include <limits>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {

namespace {

VariableList reshape_back(const FormulaCall& c) { return {ops::reshape(c.grad(), c.sizes(0))}; }
VariableList t(const FormulaCall& c) { return {ops::t(c.grad())}; }
VariableList transpose(const FormulaCall& c) {
  return {ops::transpose(c.grad(), c.arg(1).to_int(), c.arg(2).to_int())};
}
VariableList permute(const FormulaCall& c) {
  const std::vector<int64_t>& dims = c.arg(1).to_int_list();
  const int64_t nd = static_cast<int64_t>(dims.size());
  std::vector<int64_t> inverse(dims.size());
  for (int64_t i = 0; i < nd; ++i) inverse[static_cast<size_t>(wrap_dim(dims[i], nd, "permute"))] = i;
  return {ops::permute(c.grad(), inverse)};
}
VariableList expand(const FormulaCall& c) { return {sum_to_size(c.grad(), c.sizes(0))}; }
VariableList unsqueeze(const FormulaCall& c) { return {ops::squeeze(c.grad(), c.arg(1).to_int())}; }
// squeeze.dim: unsqueeze_to: back only when that dim had size 1.
VariableList squeeze_dim(const FormulaCall& c) {
  const IntArrayRef sizes = c.sizes(0);
  const int64_t nd = static_cast<int64_t>(sizes.size());
  const int64_t d = wrap_dim(c.arg(1).to_int(), nd, "squeeze");
  if (nd > 0 && sizes[static_cast<size_t>(d)] == 1) return {ops::unsqueeze(c.grad(), d)};
  return {c.grad()};
}
// squeeze: unsqueeze at every size-1 dim, ascending.
VariableList squeeze_all(const FormulaCall& c) {
  Tensor g = c.grad();
  const IntArrayRef sizes = c.sizes(0);
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 1) g = ops::unsqueeze(g, static_cast<int64_t>(d));
  }
  return {g};
}
// slice.Tensor (self, dim, start?, end?, step): slice_backward_wrapper: the
// forward's bounds as given (None: 0 and INT64_MAX), clamped by the op.
VariableList slice(const FormulaCall& c) {
  const int64_t start = c.arg(2).is_none() ? 0 : c.arg(2).to_int();
  const int64_t end = c.arg(3).is_none() ? std::numeric_limits<int64_t>::max() : c.arg(3).to_int();
  return {ops::slice_backward(c.grad(), c.sizes(0), c.arg(1).to_int(), start, end, c.arg(4).to_int())};
}
VariableList select(const FormulaCall& c) {
  return {ops::select_backward(c.grad(), c.sizes(0), c.arg(1).to_int(), c.arg(2).to_int())};
}
// as_strided and as_strided_ (self, size, stride, storage_offset?):
// as_strided_backward with self's geometry recorded before the call.
VariableList as_strided(const FormulaCall& c) {
  const int64_t inp_offset = c.storage_offset(0);
  const int64_t out_offset = c.arg(3).is_none() ? inp_offset : c.arg(3).to_int();
  return {as_strided_backward(c.grad(), c.sizes(0), c.strides(0), inp_offset, c.arg(1).to_int_list(),
                              c.arg(2).to_int_list(), out_offset)};
}

// slice_backward / select_backward (grad_output, input_sizes, dim, ...): the
// gradient sliced (selected) as the forward was: their double backward.
VariableList slice_backward_backward(const FormulaCall& c) {
  return {ops::slice(c.grad(), c.arg(2).to_int(), c.arg(3).to_int(), c.arg(4).to_int(), c.arg(5).to_int())};
}
VariableList select_backward_backward(const FormulaCall& c) {
  return {ops::select(c.grad(), c.arg(2).to_int(), c.arg(3).to_int())};
}

// cat(tensors, dim): a slice of the gradient per input, in order.
VariableList cat(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int64_t dim0 = c.arg(1).to_int();
  int64_t offset = 0;
  for (size_t i = 0; i < c.num_inputs(); ++i) {
    const IntArrayRef sizes = c.sizes(i);
    if (sizes.size() == 1 && sizes[0] == 0) {  // a legacy empty input
      g[i] = ops::zeros({0}, {.dtype = c.grad().dtype(), .device = c.grad().device()});
      continue;
    }
    const int64_t dim = wrap_dim(dim0, static_cast<int64_t>(sizes.size()), "cat");
    const int64_t size = sizes[static_cast<size_t>(dim)];
    g[i] = ops::slice(c.grad(), dim, offset, offset + size);
    offset += size;
  }
  return g;
}
// stack(tensors, dim): select each input's slice.
VariableList stack(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int64_t dim = wrap_dim(c.arg(1).to_int(), c.grad().dim(), "stack");
  for (size_t i = 0; i < c.num_inputs(); ++i) g[i] = ops::select(c.grad(), dim, static_cast<int64_t>(i));
  return g;
}

}  // namespace

void add_shape_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::view", "ViewBackward0", 0, 0, &reshape_back});
  out.push_back({"aten::_unsafe_view", "UnsafeViewBackward0", 0, 0, &reshape_back});
  out.push_back({"aten::t", "TBackward0", 0, 0, &t});
  out.push_back({"aten::transpose.int", "TransposeBackward0", 0, 0, &transpose});
  out.push_back({"aten::permute", "PermuteBackward0", 0, 0, &permute});
  out.push_back({"aten::expand", "ExpandBackward0", 0, 0, &expand});
  out.push_back({"aten::unsqueeze", "UnsqueezeBackward0", 0, 0, &unsqueeze});
  out.push_back({"aten::squeeze.dim", "SqueezeBackward1", 0, 0, &squeeze_dim});
  out.push_back({"aten::squeeze", "SqueezeBackward0", 0, 0, &squeeze_all});
  out.push_back({"aten::squeeze_.dim", "SqueezeBackward4", 0, 0, &squeeze_dim});
  // The in-place view ops' own derivatives.yaml rows: the functional's formula, another node name.
  out.push_back({"aten::t_", "TBackward1", 0, 0, &t});
  out.push_back({"aten::transpose_", "TransposeBackward1", 0, 0, &transpose});
  out.push_back({"aten::unsqueeze_", "UnsqueezeBackward1", 0, 0, &unsqueeze});
  out.push_back({"aten::slice.Tensor", "SliceBackward0", 0, 0, &slice});
  out.push_back({"aten::select.int", "SelectBackward0", 0, 0, &select});
  out.push_back({"aten::as_strided", "AsStridedBackward0", 0, 0, &as_strided, {}, /*reads_strides=*/true});
  out.push_back({"aten::as_strided_", "AsStridedBackward1", 0, 0, &as_strided, {}, /*reads_strides=*/true});
  out.push_back({"aten::slice_backward", "SliceBackwardBackward0", 0, 0, &slice_backward_backward});
  out.push_back({"aten::select_backward", "SelectBackwardBackward0", 0, 0, &select_backward_backward});
  out.push_back({"aten::cat", "CatBackward0", 0, 0, &cat});
  out.push_back({"aten::stack", "StackBackward0", 0, 0, &stack});
}

}  // namespace opspec::autograd::internal
