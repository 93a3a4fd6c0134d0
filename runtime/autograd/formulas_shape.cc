// formulas_shape.cc: derivatives of the view and shape ops.
// See Note [Derivative formulas] in formulas.h.
#include <algorithm>
#include <limits>

#include "runtime/autograd/formulas.h"
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
// min_storage_size: the elements a geometry reaches from offset 0.
int64_t min_storage_size(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  int64_t n = offset + 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    n += (sizes[d] - 1) * strides[d];
  }
  return n;
}

// maybe_overlapping: two elements of the geometry may share an address
// (PyTorch's _maybe_overlapping_memory: sorted by stride, each stride must
// pass the extent of the dims below it).
bool maybe_overlapping(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<size_t> order;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1) order.push_back(d);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t extent = 0;
  for (size_t d : order) {
    if (strides[d] <= extent) return true;
    extent += (sizes[d] - 1) * strides[d];
  }
  return false;
}

// as_strided (self, size, stride, storage_offset?): as_strided_backward for
// geometries that do not overlap: the gradient written into zeros the size of
// the storage both geometries reach (new_zeros, as_strided, copy_), read back
// with the input's geometry. Size-1 and stride-0 dims of the output go first
// (squeeze, sum), as PyTorch's.
VariableList as_strided(const FormulaCall& c) {
  Tensor grad = c.grad();
  std::vector<int64_t> out_sizes = c.arg(1).to_int_list(), out_strides = c.arg(2).to_int_list();
  const int64_t inp_offset = c.storage_offset(0);
  const int64_t out_offset = c.arg(3).is_none() ? inp_offset : c.arg(3).to_int();
  for (int64_t d = static_cast<int64_t>(out_sizes.size()) - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    if (out_sizes[i] == 0) return {ops::zeros(c.sizes(0), {.dtype = grad.dtype(), .device = grad.device()})};
    if (out_sizes[i] == 1 || out_strides[i] == 0) {
      grad = out_sizes[i] == 1 ? ops::squeeze(grad, d) : ops::sum(grad, {d}, false);
      out_sizes.erase(out_sizes.begin() + d);
      out_strides.erase(out_strides.begin() + d);
    }
  }
  const IntArrayRef inp_sizes = c.sizes(0), inp_strides = c.strides(0);
  if (maybe_overlapping(out_sizes, out_strides) || maybe_overlapping(inp_sizes, inp_strides)) {
    throw Error("the derivative for 'aten::as_strided' of a geometry whose elements may overlap is not "
                "implemented (PyTorch's index_add_ path).");
  }
  const int64_t shared = std::min(inp_offset, out_offset);
  const int64_t base = std::max(min_storage_size(inp_sizes, inp_strides, inp_offset - shared),
                                min_storage_size(out_sizes, out_strides, out_offset - shared));
  const Tensor storage = ops::new_zeros(grad, {base});
  Tensor region = ops::as_strided(storage, out_sizes, out_strides, out_offset - shared);
  ops::copy_(region, grad);
  return {ops::as_strided(storage, inp_sizes, inp_strides, inp_offset - shared)};
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
  out.push_back({"aten::slice.Tensor", "SliceBackward0", 0, 0, &slice});
  out.push_back({"aten::select.int", "SelectBackward0", 0, 0, &select});
  out.push_back({"aten::as_strided", "AsStridedBackward0", 0, 0, &as_strided, {}, /*reads_strides=*/true});
  out.push_back({"aten::slice_backward", "SliceBackwardBackward0", 0, 0, &slice_backward_backward});
  out.push_back({"aten::select_backward", "SelectBackwardBackward0", 0, 0, &select_backward_backward});
  out.push_back({"aten::cat", "CatBackward0", 0, 0, &cat});
  out.push_back({"aten::stack", "StackBackward0", 0, 0, &stack});
}

}  // namespace opspec::autograd::internal
