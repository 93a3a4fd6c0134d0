#include "kernels/common/views.h"

#include <limits>

#include "kernels/common/factory_meta.h"
#include "runtime/core/shape_utils.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {

namespace {

// view_strides: the strides of self viewed as the (already inferred) shape.
SizeVec view_strides(const Tensor& self, IntArrayRef inferred, std::string_view op) {
  std::optional<SizeVec> strides = compute_view_strides(self.sizes(), self.strides(), inferred);
  OPSPEC_CHECK(strides.has_value(), op,
               ": view size is not compatible with input tensor's size and stride (at least one dimension spans "
               "across two contiguous subspaces). Use .reshape(...) instead. (input ",
               format_sizes(self.sizes()), " with strides ", format_sizes(self.strides()), ", requested ",
               format_sizes(inferred), ")");
  return *std::move(strides);
}

// view_impl: aten::view's geometry; an alias view (it remembers its base)
// unless for _unsafe_view, whose schema declares no alias.
Tensor view_impl(const Tensor& self, IntArrayRef size, std::string_view op, bool alias = true) {
  const SizeVec inferred = infer_size(size, self.numel(), op);
  const SizeVec strides = view_strides(self, inferred, op);
  return alias ? make_alias_view(self, inferred, strides, self.storage_offset())
               : make_view(self, inferred, strides, self.storage_offset());
}

// squeeze_geometry: sizes and strides without dim (or every size-1 dim when dim is nullopt).
std::pair<SizeVec, SizeVec> squeeze_geometry(const Tensor& self, std::optional<int64_t> dim) {
  SizeVec sizes, strides;
  for (int64_t d = 0; d < self.dim(); ++d) {
    const bool drop = dim ? (d == *dim && self.sizes()[d] == 1) : self.sizes()[d] == 1;
    if (drop) continue;
    sizes.push_back(self.sizes()[d]);
    strides.push_back(self.strides()[d]);
  }
  return {std::move(sizes), std::move(strides)};
}

}  // namespace

Tensor view_kernel(const Tensor& self, IntArrayRef size) { return view_impl(self, size, "aten::view"); }

Tensor unsafe_view_kernel(const Tensor& self, IntArrayRef size) {
  return view_impl(self, size, "aten::_unsafe_view", /*alias=*/false);
}

namespace {

// check_as_strided_geometry: the checks as_strided and as_strided_ share (as
// PyTorch's setStrided): equal lengths, no negative size, stride or offset,
// and every element inside the storage. Returns the offset to use.
int64_t check_as_strided_geometry(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                  std::optional<int64_t> storage_offset, std::string_view op) {
  OPSPEC_CHECK(size.size() == stride.size(), op, ": mismatch in length of strides and shape (size ",
               format_sizes(size), ", stride ", format_sizes(stride), ")");
  const int64_t offset = storage_offset.value_or(self.storage_offset());
  OPSPEC_CHECK(offset >= 0, op, ": Tensor: invalid storage offset ", offset);
  bool empty = false;
  for (size_t d = 0; d < size.size(); ++d) {
    OPSPEC_CHECK(size[d] >= 0, op, ": Trying to create tensor with negative dimension ", size[d], ": ",
                 format_sizes(size));
    OPSPEC_CHECK(stride[d] >= 0, op, ": Negative strides are not supported at the moment, got strides: ",
                 format_sizes(stride));
    empty |= size[d] == 0;
  }
  // The view must stay inside the storage, or reading it would go out of
  // bounds; 128-bit arithmetic so huge sizes or strides cannot overflow.
  if (!empty) {
    const int64_t item = self.element_size();
    __int128 last = offset;
    for (size_t d = 0; d < size.size(); ++d) last += static_cast<__int128>(size[d] - 1) * stride[d];
    const __int128 needed = (last + 1) * item;
    const size_t have = self.impl()->storage()->nbytes();
    OPSPEC_CHECK(needed <= static_cast<__int128>(have), op, ": setStorage: sizes ", format_sizes(size),
                 ", strides ", format_sizes(stride), ", storage offset ", offset, ", and itemsize ", item,
                 " requiring a storage size of ", static_cast<int64_t>(needed),
                 " are out of bounds for storage of size ", have);
  }
  return offset;
}

}  // namespace

Tensor as_strided_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                         std::optional<int64_t> storage_offset) {
  const int64_t offset = check_as_strided_geometry(self, size, stride, storage_offset, "aten::as_strided");
  return make_alias_view(self, size, stride, offset);
}

Tensor as_strided_inplace_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                 std::optional<int64_t> storage_offset) {
  const int64_t offset = check_as_strided_geometry(self, size, stride, storage_offset, "aten::as_strided_");
  // Metadata only, as squeeze_: the data is untouched, so the version counter stays.
  self.impl()->set_sizes_and_strides(size, stride, offset);
  return self;
}

Tensor permute_kernel(const Tensor& self, IntArrayRef dims) {
  constexpr std::string_view op = "aten::permute";
  const int64_t ndim = self.dim();
  OPSPEC_CHECK(static_cast<int64_t>(dims.size()) == ndim, op,
               ": number of dimensions in the tensor input does not match the length of the desired ordering of "
               "dimensions i.e. input.dim() = ",
               ndim, " is not equal to len(dims) = ", dims.size());
  SizeVec sizes(static_cast<size_t>(ndim)), strides(static_cast<size_t>(ndim));
  absl::InlinedVector<bool, 6> seen(static_cast<size_t>(ndim), false);
  for (int64_t i = 0; i < ndim; ++i) {
    const int64_t d = wrap_dim(dims[i], ndim, op);
    OPSPEC_CHECK(!seen[d], op, ": duplicate dims are not allowed. (dims ", format_sizes(dims), ")");
    seen[d] = true;
    sizes[i] = self.sizes()[d];
    strides[i] = self.strides()[d];
  }
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor t_kernel(const Tensor& self) {
  OPSPEC_CHECK(self.dim() <= 2, "aten::t: t() expects a tensor with <= 2 dimensions, but self is ", self.dim(),
               "D");
  if (self.dim() < 2) return make_alias_view(self, self.sizes(), self.strides(), self.storage_offset());
  const int64_t sizes[] = {self.sizes()[1], self.sizes()[0]};
  const int64_t strides[] = {self.strides()[1], self.strides()[0]};
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor transpose_kernel(const Tensor& self, int64_t dim0, int64_t dim1) {
  constexpr std::string_view op = "aten::transpose.int";
  const int64_t d0 = wrap_dim(dim0, self.dim(), op);
  const int64_t d1 = wrap_dim(dim1, self.dim(), op);
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  SizeVec strides(self.strides().begin(), self.strides().end());
  if (self.dim() > 0) {
    std::swap(sizes[d0], sizes[d1]);
    std::swap(strides[d0], strides[d1]);
  }
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor expand_kernel(const Tensor& self, IntArrayRef size, bool implicit) {
  constexpr std::string_view op = "aten::expand";
  const int64_t ndim = static_cast<int64_t>(size.size());
  const int64_t tensor_dim = self.dim();
  OPSPEC_CHECK(ndim >= tensor_dim, op, ": expand(", self.meta_str(), ", size=", format_sizes(size),
               "): the number of sizes provided (", ndim,
               ") must be greater or equal to the number of dimensions in the tensor (", tensor_dim, ")");
  // PyTorch's inferExpandGeometry, walking from the last dim.
  SizeVec sizes(static_cast<size_t>(ndim)), strides(static_cast<size_t>(ndim));
  for (int64_t i = ndim - 1; i >= 0; --i) {
    const int64_t dim = tensor_dim - 1 - (ndim - 1 - i);
    int64_t cur_size = dim >= 0 ? self.sizes()[dim] : 1;
    int64_t cur_stride = dim >= 0 ? self.strides()[dim] : (i + 1 < ndim ? sizes[i + 1] * strides[i + 1] : 1);
    int64_t target = size[i];
    if (target == -1) {
      OPSPEC_CHECK(dim >= 0, op, ": The expanded size of the tensor (-1) isn't allowed in a leading, "
                   "non-existing dimension ", i);
      target = cur_size;
    }
    OPSPEC_CHECK(target >= 0, op, ": The expanded size of the tensor (", target, ") must be non-negative (",
                 "target sizes ", format_sizes(size), ")");
    if (cur_size != target) {
      OPSPEC_CHECK(cur_size == 1, op, ": The expanded size of the tensor (", target,
                   ") must match the existing size (", cur_size, ") at non-singleton dimension ", i,
                   ".  Target sizes: ", format_sizes(size), ".  Tensor sizes: ", format_sizes(self.sizes()));
      cur_size = target;
      cur_stride = 0;
    }
    sizes[i] = cur_size;
    strides[i] = cur_stride;
  }
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor unsqueeze_kernel(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim() + 1, "aten::unsqueeze");
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  SizeVec strides(self.strides().begin(), self.strides().end());
  // PyTorch's inferUnsqueezeGeometry: the new dim steps over the dim it precedes.
  const int64_t new_stride = d >= self.dim() ? 1 : sizes[d] * strides[d];
  sizes.insert(sizes.begin() + d, 1);
  strides.insert(strides.begin() + d, new_stride);
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_kernel(const Tensor& self) {
  auto [sizes, strides] = squeeze_geometry(self, std::nullopt);
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_dim_kernel(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "aten::squeeze.dim");
  auto [sizes, strides] = squeeze_geometry(self, d);
  return make_alias_view(self, sizes, strides, self.storage_offset());
}

Tensor squeeze_inplace_dim_kernel(const Tensor& self, int64_t dim) {
  const int64_t d = wrap_dim(dim, self.dim(), "aten::squeeze_.dim");
  auto [sizes, strides] = squeeze_geometry(self, d);
  // Metadata only: the data is untouched, so the version counter stays.
  self.impl()->set_sizes_and_strides(sizes, strides, self.storage_offset());
  return self;
}

// The in-place view ops below restride self's own TensorImpl as their
// functional view would: metadata only, so the version counter stays.
Tensor t_inplace_kernel(const Tensor& self) {
  OPSPEC_CHECK(self.dim() <= 2, "aten::t_: t_() expects a tensor with <= 2 dimensions, but self is ", self.dim(),
               "D");
  const Tensor v = t_kernel(self);
  self.impl()->set_sizes_and_strides(v.sizes(), v.strides(), self.storage_offset());
  return self;
}

Tensor transpose_inplace_kernel(const Tensor& self, int64_t dim0, int64_t dim1) {
  constexpr std::string_view op = "aten::transpose_";
  const Tensor v = transpose_kernel(self, wrap_dim(dim0, self.dim(), op), wrap_dim(dim1, self.dim(), op));
  self.impl()->set_sizes_and_strides(v.sizes(), v.strides(), self.storage_offset());
  return self;
}

Tensor unsqueeze_inplace_kernel(const Tensor& self, int64_t dim) {
  const Tensor v = unsqueeze_kernel(self, wrap_dim(dim, self.dim() + 1, "aten::unsqueeze_"));
  self.impl()->set_sizes_and_strides(v.sizes(), v.strides(), self.storage_offset());
  return self;
}

Tensor slice_kernel(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                    int64_t step) {
  constexpr std::string_view op = "aten::slice.Tensor";
  OPSPEC_CHECK(self.dim() > 0, op, ": slice() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  OPSPEC_CHECK(step > 0, op, ": slice step must be positive (got ", step, ")");
  const int64_t size = self.sizes()[d];
  int64_t s = start.value_or(0);
  int64_t e = end.value_or(std::numeric_limits<int64_t>::max());
  // Python slicing: negative bounds count from the end, then clamp to [0, size].
  if (s < 0) s += size;
  if (e < 0) e += size;
  if (s < 0) s = 0;
  else if (s > size) s = size;
  if (e < s) e = s;
  else if (e > size) e = size;
  const int64_t len = e - s;
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  SizeVec strides(self.strides().begin(), self.strides().end());
  sizes[d] = len == 0 ? 0 : 1 + (len - 1) / step;  // ceil(len / step) without overflow
  const int64_t offset = self.storage_offset() + s * strides[d];
  // PyTorch multiplies the stride by step. The product can only overflow
  // when step exceeds the length (so at most one element remains); keep the
  // stride then rather than overflow.
  int64_t stepped = 0;
  if (!__builtin_mul_overflow(strides[d], step, &stepped)) strides[d] = stepped;
  return make_alias_view(self, sizes, strides, offset);
}

Tensor select_kernel(const Tensor& self, int64_t dim, int64_t index) {
  constexpr std::string_view op = "aten::select.int";
  OPSPEC_CHECK(self.dim() > 0, op, ": select() cannot be applied to a 0-dim tensor.");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t size = self.sizes()[d];
  OPSPEC_CHECK(index >= -size && index < size, op, ": select(): index ", index,
               " out of range for tensor of size ", format_sizes(self.sizes()), " at dimension ", d);
  if (index < 0) index += size;
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  SizeVec strides(self.strides().begin(), self.strides().end());
  const int64_t offset = self.storage_offset() + index * strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  return make_alias_view(self, sizes, strides, offset);
}

Tensor lift_fresh_kernel(const Tensor& self) { return self; }

Tensor lift_fresh_copy_kernel(const Tensor& self) { return ops::clone(self); }

Tensor alias_kernel(const Tensor& self) {
  return make_alias_view(self, self.sizes(), self.strides(), self.storage_offset());
}

Tensor detach_kernel(const Tensor& self) { return make_view(self, self.sizes(), self.strides(), self.storage_offset()); }

Tensor new_empty_strided_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype,
                                std::optional<int64_t>, std::optional<Device> device, std::optional<bool>) {
  check_factory_size(size, "aten::new_empty_strided");
  OPSPEC_CHECK(size.size() == stride.size(), "aten::new_empty_strided: mismatch in length of strides and shape");
  return make_strided(size, stride, dtype.value_or(self.dtype()), device.value_or(self.device()));
}

}  // namespace opspec::internal
