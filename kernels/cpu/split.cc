// split.cc: the list-returning views split.Tensor, split_with_sizes and
// unbind.int (device-independent: registered at CPU, Meta and, by the CUDA
// backend, CUDA; See Note [Device-independent views]) and chunk's
// decomposition. See Note [List-returning views].
#include <limits>
#include <vector>

#include "absl/strings/str_join.h"
#include "kernels/common/registration.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {

// Note [List-returning views]
// split.Tensor, split_with_sizes and unbind.int are CompositeExplicitAutograd
// in PyTorch: modes, tracing and autograd see the op itself (one node whose
// output is a Tensor[], each element a view of self), never the narrow or
// select calls ATen makes inside. Here each is one kernel computing every
// view's geometry directly, as its ATen body would through narrow/select,
// with ATen's checks and messages. chunk is CompositeImplicitAutograd: it
// decomposes into split.Tensor (split_with_sizes when the dim and every
// chunk are empty), as at::native::chunk does.

namespace {

// narrow_view: the view of self holding [start, start + length) of dim d.
// Each is marked as a multi-output view (See Note [Views that refuse in-place changes]).
Tensor narrow_view(const Tensor& self, int64_t d, int64_t start, int64_t length) {
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  sizes[d] = length;
  return make_alias_view(self, sizes, self.strides(), self.storage_offset() + start * self.strides()[d],
                         /*multi_output=*/true);
}

std::vector<Tensor> split_kernel(const Tensor& self, int64_t split_size, int64_t dim) {
  constexpr std::string_view op = "aten::split.Tensor";
  OPSPEC_CHECK(self.dim() != 0, op, ": split expects at least a 1-dimensional tensor");
  OPSPEC_CHECK(split_size >= 0, op, ": split expects split_size be non-negative, but got split_size=", split_size);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t dim_size = self.sizes()[d];
  OPSPEC_CHECK(split_size > 0 || dim_size == 0, op,
               ": split_size can only be 0 if dimension size is 0, but got dimension size of ", dim_size);
  // One split when split_size is 0 (an empty dim) or exceeds the dim, as ATen's get_num_splits.
  // Written so a split_size near INT64_MAX cannot overflow: last = split_size - (split_size * num_splits - dim_size).
  const int64_t num_splits = split_size == 0 || dim_size == 0 ? 1 : (dim_size - 1) / split_size + 1;
  const int64_t last = dim_size - split_size * (num_splits - 1);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(num_splits));
  for (int64_t i = 0; i < num_splits; ++i) {
    out.push_back(narrow_view(self, d, i * split_size, i < num_splits - 1 ? split_size : last));
  }
  return out;
}

std::vector<Tensor> split_with_sizes_kernel(const Tensor& self, IntArrayRef split_sizes, int64_t dim) {
  constexpr std::string_view op = "aten::split_with_sizes";
  OPSPEC_CHECK(self.dim() != 0, op, ": split expects at least a 1-dimensional tensor");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const int64_t dim_size = self.sizes()[d];
  std::vector<Tensor> out;
  out.reserve(split_sizes.size());
  int64_t start = 0;
  for (int64_t length : split_sizes) {
    OPSPEC_CHECK(length >= 0, op, ": split_with_sizes expects split_sizes have only non-negative entries, ",
                 "but got split_sizes=", format_sizes(split_sizes));
    // ATen slices, which clamps to the dim; the sum check below then fails.
    const int64_t begin = std::min(start, dim_size);
    out.push_back(narrow_view(self, d, begin, std::min(start + length, dim_size) - begin));
    start += length;
  }
  OPSPEC_CHECK(start == dim_size, op, ": split_with_sizes expects split_sizes to sum exactly to ", dim_size,
               " (input tensor's size at dimension ", dim, "), but got split_sizes=", format_sizes(split_sizes));
  return out;
}

std::vector<Tensor> unbind_kernel(const Tensor& self, int64_t dim) {
  constexpr std::string_view op = "aten::unbind.int";
  OPSPEC_CHECK(self.dim() > 0, op, ": Dimension specified as ", dim, " but tensor has no dimensions");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  SizeVec sizes(self.sizes().begin(), self.sizes().end());
  SizeVec strides(self.strides().begin(), self.strides().end());
  const int64_t n = sizes[d], stride = strides[d];
  sizes.erase(sizes.begin() + d);
  strides.erase(strides.begin() + d);
  std::vector<Tensor> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out.push_back(make_alias_view(self, sizes, strides, self.storage_offset() + i * stride, /*multi_output=*/true));
  }
  return out;
}

// chunk_kernel: at::native::chunk (CompositeImplicitAutograd), op for op.
std::vector<Tensor> chunk_kernel(const Tensor& self, int64_t chunks, int64_t dim) {
  constexpr std::string_view op = "aten::chunk";
  OPSPEC_CHECK(self.dim() > 0, op, ": chunk expects at least a 1-dimensional tensor");
  OPSPEC_CHECK(chunks > 0, op, ": chunk expects `chunks` to be greater than 0, got: ", chunks);
  const int64_t dim_size = self.sizes()[wrap_dim(dim, self.dim(), op)];
  // PyTorch's (dim_size + chunks - 1) / chunks, without its overflow for chunks near INT64_MAX.
  const int64_t split_size = dim_size == 0 ? 0 : (dim_size - 1) / chunks + 1;
  // split would give one empty chunk here; split_with_sizes keeps `chunks` of them.
  if (split_size == 0 && dim_size == 0) {
    // PyTorch fails allocating the list beyond memory; a clear error instead of std::bad_alloc.
    OPSPEC_CHECK(chunks <= std::numeric_limits<int32_t>::max(), op, ": cannot return ", chunks,
                 " empty chunks of dim ", dim, " (size 0)");
    std::vector<int64_t> sizes(static_cast<size_t>(chunks), split_size);
    sizes.back() = split_size - (split_size * chunks - dim_size);
    return ops::split_with_sizes(self, sizes, dim);
  }
  return ops::split(self, split_size, dim);
}

}  // namespace

void register_split_kernels_at(Library& lib, DispatchKey key) {
  lib.impl("split.Tensor", key, &split_kernel)
      .impl("split_with_sizes", key, &split_with_sizes_kernel)
      .impl("unbind.int", key, &unbind_kernel);
}

void register_split_kernels(Dispatcher& d) {
  Library lib("aten", d);
  register_split_kernels_at(lib, DispatchKey::kCPU);
  register_split_kernels_at(lib, DispatchKey::kMeta);
  lib.impl("chunk", DispatchKey::kCompositeImplicit, &chunk_kernel);
}

}  // namespace opspec::internal
