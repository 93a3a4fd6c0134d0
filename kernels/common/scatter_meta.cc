// scatter_meta.cc: See scatter_meta.h.
#include "kernels/common/scatter_meta.h"

#include <algorithm>

#include "kernels/common/backward_meta.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

namespace {

// nonempty: PyTorch's ensure_nonempty_dim/size: a 0-dim tensor counts as one element along one dim.
int64_t nonempty_dim(const Tensor& t) { return std::max<int64_t>(t.dim(), 1); }
int64_t nonempty_size(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.size(d); }
int64_t nonempty_stride(const Tensor& t, int64_t d) { return t.dim() == 0 ? 1 : t.stride(d); }

// line_starts: the element offset, by t's strides, of each index position
// whose coordinate along dim is 0, in row-major order of index's other dims.
std::vector<int64_t> line_starts(const Tensor& index, int64_t dim, const Tensor& t) {
  const int64_t nd = nonempty_dim(index);
  std::vector<int64_t> out{0};
  for (int64_t d = 0; d < nd; ++d) {
    if (d == dim) continue;
    const int64_t n = nonempty_size(index, d), s = nonempty_stride(t, d);
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(n));
    for (const int64_t base : out) {
      for (int64_t i = 0; i < n; ++i) next.push_back(base + i * s);
    }
    out = std::move(next);
  }
  return out;
}

}  // namespace

std::vector<int64_t> element_offsets(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<int64_t> out{0};
  for (size_t d = 0; d < sizes.size(); ++d) {
    std::vector<int64_t> next;
    next.reserve(out.size() * static_cast<size_t>(sizes[d]));
    for (const int64_t base : out) {
      for (int64_t i = 0; i < sizes[d]; ++i) next.push_back(base + i * strides[d]);
    }
    out = std::move(next);
  }
  return out;
}

namespace {

bool is_mask_dtype(DType d) { return d == DType::kBool; }

}  // namespace

ScatterReduce parse_scatter_reduce(std::string_view reduce, std::string_view op) {
  if (reduce == "sum") return ScatterReduce::kSum;
  if (reduce == "prod") return ScatterReduce::kProd;
  if (reduce == "mean") return ScatterReduce::kMean;
  if (reduce == "amax") return ScatterReduce::kMax;
  if (reduce == "amin") return ScatterReduce::kMin;
  OPSPEC_FAIL(op, ": reduce argument must be either sum, prod, mean, amax or amin, got ", reduce);
}

ScatterPlan make_scatter_plan(const Tensor& index, int64_t dim, const Tensor& indexed, const Tensor& aligned) {
  ScatterPlan p;
  p.dim = dim;
  p.len = nonempty_size(index, dim);
  p.bound = nonempty_size(indexed, dim);
  p.index_off = line_starts(index, dim, index);
  p.indexed_off = line_starts(index, dim, indexed);
  if (aligned.defined()) p.aligned_off = line_starts(index, dim, aligned);
  p.lines = index.numel() == 0 ? 0 : static_cast<int64_t>(p.index_off.size());
  p.index_step = nonempty_stride(index, dim);
  p.indexed_step = nonempty_stride(indexed, dim);
  p.aligned_step = aligned.defined() ? nonempty_stride(aligned, dim) : 0;
  return p;
}

int64_t check_gather(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr std::string_view kOp = "aten::gather";
  const int64_t d = wrap_dim(dim, self.dim(), kOp);
  OPSPEC_CHECK(index.numel() == 0 || index.dtype() == DType::kInt64 || index.dtype() == DType::kInt32, kOp,
               ": gather(): Expected dtype int32/int64 for index");
  const Tensor both[] = {self, index};
  check_same_device(both, kOp);
  // PyTorch's gather meta skips the shape checks for an empty index (as
  // scatter's do): scatter's backward gathers with its possibly empty index.
  if (index.numel() == 0) return d;
  const int64_t nd = nonempty_dim(self);
  OPSPEC_CHECK(nd == nonempty_dim(index), kOp,
               ": Index tensor must have the same number of dimensions as input tensor");
  for (int64_t i = 0; i < nd; ++i) {
    if (i == d) continue;
    OPSPEC_CHECK(nonempty_size(index, i) <= nonempty_size(self, i), kOp, ": Size does not match at dimension ", i,
                 " expected index ", format_sizes(index.sizes()), " to be no larger than self ",
                 format_sizes(self.sizes()), " apart from dimension ", d);
  }
  return d;
}

int64_t check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, std::string_view name) {
  const std::string op = str_cat("aten::", name);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  // PyTorch 2.x's scatter_gather_dtype_check takes int32 too (1.13 wanted int64).
  OPSPEC_CHECK(index.numel() == 0 || index.dtype() == DType::kInt64 || index.dtype() == DType::kInt32, op, ": ",
               name, "(): Expected dtype int32/int64 for index");
  if (src != nullptr) {
    OPSPEC_CHECK(self.dtype() == src->dtype(), op, ": ", name, "(): Expected self.dtype to be equal to src.dtype");
  }
  const Tensor all[] = {self, index, src != nullptr ? *src : Tensor()};
  check_same_device(all, op);
  if (index.numel() == 0) return d;
  const int64_t nd = nonempty_dim(self);
  OPSPEC_CHECK(nd == nonempty_dim(index), op, ": Index tensor must have the same number of dimensions as self tensor");
  bool wrong = false;
  for (int64_t i = 0; i < nd; ++i) {
    if (i != d && nonempty_size(index, i) > nonempty_size(self, i)) wrong = true;
  }
  if (src != nullptr) {
    OPSPEC_CHECK(nonempty_dim(*src) == nonempty_dim(index), op,
                 ": Index tensor must have the same number of dimensions as src tensor");
    for (int64_t i = 0; i < nd; ++i) {
      if (nonempty_size(index, i) > nonempty_size(*src, i)) wrong = true;
    }
    OPSPEC_CHECK(!wrong, op, ": Expected index ", format_sizes(index.sizes()), " to be no larger than self ",
                 format_sizes(self.sizes()), " apart from dimension ", d, " and to be no larger size than src ",
                 format_sizes(src->sizes()));
  }
  OPSPEC_CHECK(!wrong, op, ": Expected index ", format_sizes(index.sizes()), " to be no larger than self ",
               format_sizes(self.sizes()), " apart from dimension ", d);
  return d;
}

void check_scatter_overlap(const Tensor& self, const Tensor& index, const Tensor* src, std::string_view op) {
  check_no_internal_overlap(self, op);
  check_no_overlap(self, index, op);
  if (src != nullptr) check_no_overlap(self, *src, op);
}

void index_out_of_bounds(std::string_view op, int64_t index, int64_t dim, int64_t size) {
  OPSPEC_FAIL(op, ": index ", index, " is out of bounds for dimension ", dim, " with size ", size);
}

void check_masked_fill_value(const Tensor& self, const Tensor& value, std::string_view op) {
  OPSPEC_CHECK(value.dim() == 0, op, ": masked_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
               value.dim(), " dimension(s).");
  OPSPEC_CHECK(value.device() == self.device() || value.device().is_cpu(), op,
               ": Expected value to be on same device as self, or value is a CPU scalar, but value is on ",
               value.device().str(), " and self is on ", self.device().str());
}

SizeVec masked_select_shape(const Tensor& self, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::masked_select";
  OPSPEC_CHECK(mask.dtype() == DType::kBool, kOp, ": masked_select: expected BoolTensor for mask");
  const Tensor both[] = {self, mask};
  check_same_device(both, kOp);
  return broadcast_shapes(self.sizes(), mask.sizes(), kOp);
}

// check_scatter_src: src's sizes equal the slice's (PyTorch's select/slice_scatter message).
void check_scatter_src(const Tensor& slice, const Tensor& src, std::string_view op) {
  OPSPEC_CHECK(slice.sizes() == src.sizes(), op,
               ": expected src to have a size equal to the slice of self. src size = ", format_sizes(src.sizes()),
               ", slice size = ", format_sizes(slice.sizes()));
}

Tensor select_scatter_target(const Tensor& out, const Tensor& src, int64_t dim, int64_t index) {
  constexpr std::string_view kOp = "aten::select_scatter";
  OPSPEC_CHECK(out.dim() > 0, kOp, ": select() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, out.dim(), kOp);
  const int64_t size = out.size(d);
  OPSPEC_CHECK(index >= -size && index < size, kOp, ": select(): index ", index, " out of range for tensor of size ",
               format_sizes(out.sizes()), " at dimension ", d);
  SizeVec sizes(out.sizes().begin(), out.sizes().end()), strides(out.strides().begin(), out.strides().end());
  const int64_t offset = out.storage_offset() + (index < 0 ? index + size : index) * strides[static_cast<size_t>(d)];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  Tensor slice = make_view(out, sizes, strides, offset);
  check_scatter_src(slice, src, kOp);
  return slice;
}

Tensor slice_scatter_target(const Tensor& out, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                            std::optional<int64_t> end, int64_t step) {
  constexpr std::string_view kOp = "aten::slice_scatter";
  OPSPEC_CHECK(out.dim() > 0, kOp, ": slice() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, out.dim(), kOp);
  OPSPEC_CHECK(step > 0, kOp, ": slice step must be positive");
  const int64_t size = out.size(d);
  int64_t s = start.value_or(0), e = end.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  SizeVec sizes(out.sizes().begin(), out.sizes().end()), strides(out.strides().begin(), out.strides().end());
  sizes[static_cast<size_t>(d)] = e == s ? 0 : 1 + (e - s - 1) / step;
  const int64_t offset = out.storage_offset() + s * strides[static_cast<size_t>(d)];
  strides[static_cast<size_t>(d)] *= step;
  Tensor slice = make_view(out, sizes, strides, offset);
  check_scatter_src(slice, src, kOp);
  return slice;
}

Tensor diagonal_kernel(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2) {
  constexpr std::string_view kOp = "aten::diagonal";
  const int64_t nd = self.dim();
  const int64_t d1 = wrap_dim(dim1, nd, kOp), d2 = wrap_dim(dim2, nd, kOp);
  OPSPEC_CHECK(d1 != d2, kOp, ": diagonal dimensions cannot be identical ", dim1, ", ", dim2);
  int64_t len = 0, start = self.storage_offset();
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(self.size(d1), self.size(d2) - offset), 0);
    if (len > 0) start += offset * self.stride(d2);
  } else {
    len = std::max<int64_t>(std::min(self.size(d1) + offset, self.size(d2)), 0);
    if (len > 0) start -= offset * self.stride(d1);
  }
  SizeVec sizes, strides;
  for (int64_t d = 0; d < nd; ++d) {
    if (d == d1 || d == d2) continue;
    sizes.push_back(self.size(d));
    strides.push_back(self.stride(d));
  }
  sizes.push_back(len);
  strides.push_back(self.stride(d1) + self.stride(d2));
  return make_alias_view(self, sizes, strides, start);
}

Tensor diagonal_backward_target(const Tensor& out, const Tensor& grad, int64_t offset, int64_t dim1, int64_t dim2) {
  Tensor diag = diagonal_kernel(out, offset, dim1, dim2);
  OPSPEC_CHECK(diag.sizes() == grad.sizes(), "aten::diagonal_backward: expected grad_output of size ",
               format_sizes(diag.sizes()), " but got ", format_sizes(grad.sizes()));
  return diag;
}

// Note [Advanced indexing plans]
// index.Tensor and index_put_ take one optional index per leading dim of self
// (None is `:`). Bool masks first become the long indices of their nonzero
// entries, one per mask dim. The long indices broadcast together to a shape B.
// When they sit next to each other (no None between them) B replaces their
// dims in place, else B goes first (PyTorch's transpose to the front). The
// non-indexed dims before B are "pre", those after it "post", so every result
// element is (p, b, q) and reads self at pre_off[p] + adv_off(b) + post_off[q].
// pre_off and post_off are host arrays; adv_off is computed from the index
// data by each backend, which also checks the bounds.

std::vector<Tensor> expand_index_masks(const Tensor& self, OptionalTensorList indices, std::string_view op,
                                       Tensor (*nonzero)(const Tensor&)) {
  int64_t consumed = 0;
  for (const Tensor& t : indices.tensors) {
    if (t.defined()) {
      OPSPEC_CHECK(t.dtype() == DType::kInt64 || t.dtype() == DType::kInt32 || t.dtype() == DType::kBool, op,
                   ": tensors used as indices must be long, int, byte or bool tensors");
    }
    consumed += t.defined() && is_mask_dtype(t.dtype()) ? t.dim() : 1;
  }
  OPSPEC_CHECK(consumed <= self.dim(), op, ": too many indices for tensor of dimension ", self.dim(), " (got ",
               consumed, ")");
  std::vector<Tensor> out;
  for (const Tensor& t : indices.tensors) {
    if (!t.defined() || !is_mask_dtype(t.dtype())) {
      out.push_back(t);
      continue;
    }
    OPSPEC_CHECK(t.dim() > 0, op, ": indexing with a 0-dim bool tensor is not supported");
    const int64_t at = static_cast<int64_t>(out.size());
    for (int64_t j = 0; j < t.dim(); ++j) {
      OPSPEC_CHECK(t.size(j) == self.size(at + j), op, ": The shape of the mask ", format_sizes(t.sizes()),
                   " at index ", j, " does not match the shape of the indexed tensor ", format_sizes(self.sizes()),
                   " at index ", at + j);
    }
    const Tensor nz = nonzero(t);  // [n, t.dim()], contiguous
    for (int64_t j = 0; j < t.dim(); ++j) {
      const int64_t col_sizes[] = {nz.size(0)};
      const int64_t col_strides[] = {nz.stride(0)};
      out.push_back(make_view(nz, col_sizes, col_strides, nz.storage_offset() + j * nz.stride(1)));
    }
  }
  return out;
}

IndexPlan make_index_plan(const Tensor& self, const std::vector<Tensor>& indices, std::string_view op,
                          Tensor (*contiguous_long)(const Tensor&)) {
  IndexPlan p;
  std::vector<Tensor> idx(indices);
  idx.resize(static_cast<size_t>(self.dim()));
  // Broadcast shape of the defined indices.
  bool first = true;
  std::string shapes;
  for (const Tensor& t : idx) {
    if (!t.defined()) continue;
    str_append(&shapes, shapes.empty() ? "" : ", ", format_sizes(t.sizes()));
  }
  for (const Tensor& t : idx) {
    if (!t.defined()) continue;
    if (first) {
      p.broadcast.assign(t.sizes().begin(), t.sizes().end());
      first = false;
      continue;
    }
    try {
      p.broadcast = broadcast_shapes(p.broadcast, t.sizes(), op);
    } catch (const Error&) {
      OPSPEC_FAIL(op, ": shape mismatch: indexing tensors could not be broadcast together with shapes ", shapes);
    }
  }
  OPSPEC_CHECK(!first, op, ": index needs at least one index tensor");
  p.adv = compute_numel(p.broadcast);
  // Adjacent: the defined indices form one run.
  int64_t lo = -1, hi = -1;
  bool adjacent = true;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (!idx[static_cast<size_t>(d)].defined()) continue;
    if (lo < 0) lo = d;
    else if (hi != d - 1) adjacent = false;
    hi = d;
  }
  SizeVec pre_sizes, pre_strides, post_sizes, post_strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const Tensor& t = idx[static_cast<size_t>(d)];
    if (t.defined()) {
      p.adv_dim.push_back(d);
      p.adv_size.push_back(self.size(d));
      p.adv_stride.push_back(self.stride(d));
      p.indices.push_back(contiguous_long(broadcast_view(t, p.broadcast)));
      continue;
    }
    const bool before = adjacent && d < lo;
    (before ? pre_sizes : post_sizes).push_back(self.size(d));
    (before ? pre_strides : post_strides).push_back(self.stride(d));
  }
  p.result_sizes = pre_sizes;
  p.result_sizes.insert(p.result_sizes.end(), p.broadcast.begin(), p.broadcast.end());
  p.result_sizes.insert(p.result_sizes.end(), post_sizes.begin(), post_sizes.end());
  p.pre_off = element_offsets(pre_sizes, pre_strides);
  p.post_off = element_offsets(post_sizes, post_strides);
  return p;
}

std::vector<int64_t> index_plan_offsets(const IndexPlan& p, std::string_view op) {
  std::vector<int64_t> off(static_cast<size_t>(p.adv), 0);
  for (size_t k = 0; k < p.indices.size(); ++k) {
    const auto* ix = static_cast<const int64_t*>(p.indices[k].raw_data());
    const int64_t size = p.adv_size[k];
    for (int64_t b = 0; b < p.adv; ++b) {
      int64_t v = ix[b];
      if (v < -size || v >= size) index_out_of_bounds(op, v, p.adv_dim[k], size);
      if (v < 0) v += size;
      off[static_cast<size_t>(b)] += v * p.adv_stride[k];
    }
  }
  return off;
}

Tensor broadcast_view(const Tensor& t, IntArrayRef sizes) {
  SizeVec st(sizes.size(), 0);
  const size_t lead = sizes.size() - static_cast<size_t>(t.dim());
  for (int64_t k = 0; k < t.dim(); ++k) {
    if (t.size(k) != 1) st[lead + static_cast<size_t>(k)] = t.stride(k);
  }
  return make_view(t, sizes, st, t.storage_offset());
}

void check_index_put(const Tensor& self, const Tensor& values, IntArrayRef result_sizes, std::string_view op) {
  OPSPEC_CHECK(self.dtype() == values.dtype(), op,
               ": Index put requires the source and destination dtypes match, got ", scalar_type_name(self.dtype()),
               " for the destination and ", scalar_type_name(values.dtype()), " for the source.");
  bool ok = values.dim() <= static_cast<int64_t>(result_sizes.size());
  for (int64_t k = 0; ok && k < values.dim(); ++k) {
    const int64_t v = values.size(values.dim() - 1 - k);
    const int64_t r = result_sizes[result_sizes.size() - 1 - static_cast<size_t>(k)];
    ok = v == 1 || v == r;
  }
  OPSPEC_CHECK(ok, op, ": shape mismatch: value tensor of shape ", format_sizes(values.sizes()),
               " cannot be broadcast to indexing result of shape ", format_sizes(result_sizes));
}

void check_index_put_overlap(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                             std::string_view op) {
  // canDispatchToMaskedFill: the only defined index is a bool mask on self's device.
  Tensor mask;
  bool masked_fill = !accumulate && values.numel() == 1 && values.device().is_cpu();
  for (const Tensor& t : indices.tensors) {
    if (!masked_fill || !t.defined()) continue;
    masked_fill = t.dtype() == DType::kBool && t.device() == self.device() && !mask.defined();
    mask = t;
  }
  if (masked_fill && mask.defined()) return check_no_partial_overlap(self, mask, op);
  check_no_overlap(self, values, op);
  for (const Tensor& t : indices.tensors) {
    if (t.defined()) check_no_overlap(self, t, op);
  }
}

SizeVec index_meta_sizes(const Tensor& self, OptionalTensorList indices, std::string_view op) {
  for (const Tensor& t : indices.tensors) {
    if (t.defined() && t.dtype() == DType::kBool) {
      // Checks first, so a bad mask still says what is wrong.
      expand_index_masks(self, indices, op, [](const Tensor& m) -> Tensor {
        throw DataDependentOutputError(str_cat("aten::nonzero: indexing with the bool mask ", m.meta_str(),
                                               " has a data-dependent output shape"));
      });
    }
  }
  const std::vector<Tensor> expanded = expand_index_masks(self, indices, op, nullptr);
  return make_index_plan(self, expanded, op, [](const Tensor& t) { return t; }).result_sizes;
}

Tensor gather_meta(const Tensor& self, int64_t dim, const Tensor& index, bool) {
  check_gather(self, dim, index);
  return make_tensor(index.sizes(), self.dtype(), kMeta);
}
Tensor scatter_src_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_scatter(self, dim, index, &src, "scatter");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}
Tensor scatter_value_meta(const Tensor& self, int64_t dim, const Tensor& index, const Scalar&) {
  check_scatter(self, dim, index, nullptr, "scatter");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}
Tensor scatter_add_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_scatter(self, dim, index, &src, "scatter_add");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}
Tensor scatter_reduce_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool) {
  parse_scatter_reduce(reduce, "aten::scatter_reduce");
  check_scatter(self, dim, index, &src, "scatter_reduce");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}
Tensor scatter__src_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_scatter(self, dim, index, &src, "scatter");
  check_scatter_overlap(self, index, &src, "aten::scatter_");
  return self;
}
Tensor scatter__value_meta(const Tensor& self, int64_t dim, const Tensor& index, const Scalar&) {
  check_scatter(self, dim, index, nullptr, "scatter");
  check_scatter_overlap(self, index, nullptr, "aten::scatter_");
  return self;
}
Tensor scatter_add__meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  check_scatter(self, dim, index, &src, "scatter_add");
  check_scatter_overlap(self, index, &src, "aten::scatter_add_");
  return self;
}
Tensor scatter_reduce__meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            std::string_view reduce, bool) {
  parse_scatter_reduce(reduce, "aten::scatter_reduce_");
  check_scatter(self, dim, index, &src, "scatter_reduce");
  check_scatter_overlap(self, index, &src, "aten::scatter_reduce_");
  return self;
}
Tensor masked_fill_tensor_meta(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill_value(self, value, "aten::masked_fill");
  return make_tensor(masked_fill_sizes(self, mask), self.dtype(), kMeta);
}
Tensor masked_fill__tensor_meta(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_masked_fill_value(self, value, "aten::masked_fill_");
  check_masked_fill(self, mask);
  return self;
}
Tensor masked_select_meta(const Tensor& self, const Tensor& mask) {
  masked_select_shape(self, mask);
  throw DataDependentOutputError(str_cat("aten::masked_select: the output of masked_select(", self.meta_str(), ", ",
                                         mask.meta_str(), ") has a data-dependent shape"));
}
Tensor select_scatter_meta(const Tensor& self, const Tensor& src, int64_t dim, int64_t index) {
  Tensor out = make_tensor(self.sizes(), self.dtype(), kMeta);
  select_scatter_target(out, src, dim, index);
  return out;
}
Tensor slice_scatter_meta(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                          std::optional<int64_t> end, int64_t step) {
  Tensor out = make_tensor(self.sizes(), self.dtype(), kMeta);
  slice_scatter_target(out, src, dim, start, end, step);
  return out;
}
Tensor diagonal_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                              int64_t dim2) {
  Tensor out = make_tensor(input_sizes, grad.dtype(), kMeta);
  diagonal_backward_target(out, grad, offset, dim1, dim2);
  return out;
}
Tensor index_meta(const Tensor& self, OptionalTensorList indices) {
  return make_tensor(index_meta_sizes(self, indices, "aten::index.Tensor"), self.dtype(), kMeta);
}
Tensor index_put__meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate) {
  constexpr std::string_view kOp = "aten::index_put_";
  check_index_put_overlap(self, indices, values, accumulate, kOp);
  check_index_put(self, values, index_meta_sizes(self, indices, kOp), kOp);
  return self;
}
Tensor index_put_meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool) {
  constexpr std::string_view kOp = "aten::index_put";
  check_index_put(self, values, index_meta_sizes(self, indices, kOp), kOp);
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}
Tensor index_put_impl__meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                            bool) {
  constexpr std::string_view kOp = "aten::_index_put_impl_";
  check_index_put_overlap(self, indices, values, accumulate, kOp);
  check_index_put(self, values, index_meta_sizes(self, indices, kOp), kOp);
  return self;
}
Tensor nonzero_meta(const Tensor& self) {
  throw DataDependentOutputError(str_cat("aten::nonzero: the output of nonzero(", self.meta_str(),
                                         ") has a data-dependent shape (a dynamic output shape op)"));
}

void register_scatter_meta_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kMeta;
  lib.impl("gather", kKey, &gather_meta)
      .impl("scatter.src", kKey, &scatter_src_meta)
      .impl("scatter.value", kKey, &scatter_value_meta)
      .impl("scatter_add", kKey, &scatter_add_meta)
      .impl("scatter_reduce.two", kKey, &scatter_reduce_meta)
      .impl("scatter_.src", kKey, &scatter__src_meta)
      .impl("scatter_.value", kKey, &scatter__value_meta)
      .impl("scatter_add_", kKey, &scatter_add__meta)
      .impl("scatter_reduce_.two", kKey, &scatter_reduce__meta)
      .impl("masked_fill.Tensor", kKey, &masked_fill_tensor_meta)
      .impl("masked_fill_.Tensor", kKey, &masked_fill__tensor_meta)
      .impl("masked_select", kKey, &masked_select_meta)
      .impl("select_scatter", kKey, &select_scatter_meta)
      .impl("slice_scatter", kKey, &slice_scatter_meta)
      .impl("diagonal", kKey, &diagonal_kernel)
      .impl("diagonal_backward", kKey, &diagonal_backward_meta)
      .impl("index.Tensor", kKey, &index_meta)
      .impl("index_put_", kKey, &index_put__meta)
      .impl("index_put", kKey, &index_put_meta)
      .impl("_index_put_impl_", kKey, &index_put_impl__meta)
      .impl("nonzero", kKey, &nonzero_meta);
}

}  // namespace opspec::internal
