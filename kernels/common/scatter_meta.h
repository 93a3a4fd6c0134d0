// scatter_meta.h: shape, dtype and device rules of the scatter, gather and
// indexing ops (gather, scatter*, masked_fill.Tensor, masked_select,
// select/slice_scatter, diagonal, index, index_put, nonzero), the plans
// their CPU and CUDA kernels walk, and their Meta kernels. Error texts are
// PyTorch's, prefixed with the op. See Note [Scatter lines].
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "runtime/core/shape_utils.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

// Note [Scatter lines]
// gather and every scatter walk index one "line" at a time: the index
// positions that differ only along dim. All of a line's writes land in one
// line of the target, so one worker per line, stepping along dim in order,
// applies duplicate indices in index order without atomics: CPU threads and
// CUDA threads give the same bits, and the same as PyTorch's serial CPU
// loop. A plan holds each line's start offset (in elements) in index, in
// the tensor indexed along dim, and in the tensor laid out like index.

// ScatterReduce: how a scatter combines a value with its target.
enum class ScatterReduce : int { kAssign = 0, kSum = 1, kProd = 2, kMean = 3, kMax = 4, kMin = 5 };

// parse_scatter_reduce: "sum", "prod", "mean", "amax", "amin" (scatter_reduce.two's names).
ScatterReduce parse_scatter_reduce(std::string_view reduce, std::string_view op);

// ScatterPlan: the lines of index (See Note [Scatter lines]).
struct ScatterPlan {
  int64_t dim = 0;      // wrapped
  int64_t lines = 0;    // index positions apart from dim
  int64_t len = 0;      // positions along dim in a line
  int64_t bound = 0;    // indices must lie in [0, bound)
  std::vector<int64_t> index_off, indexed_off, aligned_off;  // each line's start
  int64_t index_step = 0, indexed_step = 0, aligned_step = 0;  // strides along dim
};

// make_scatter_plan: the lines of index over `indexed` (read by gather,
// written by scatter, along dim) and `aligned` (out of gather, src of
// scatter; may be undefined for scatter.value).
ScatterPlan make_scatter_plan(const Tensor& index, int64_t dim, const Tensor& indexed, const Tensor& aligned);

// check_gather: gather's checks (int64 index, same rank, index no larger
// than self apart from dim, one device); returns the wrapped dim.
int64_t check_gather(const Tensor& self, int64_t dim, const Tensor& index);
// check_scatter: the checks of scatter-like op `name` ("scatter", "scatter_add",
// "scatter_reduce") with src (or none for scatter.value); returns the wrapped dim.
int64_t check_scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor* src, std::string_view name);
// check_scatter_overlap: an in-place scatter's memory checks (scatter_meta_impl
// with a given output): self has no internal overlap and shares no memory
// with index or src, fully or partly (See Note [Memory overlap]).
void check_scatter_overlap(const Tensor& self, const Tensor& index, const Tensor* src, std::string_view op);
// index_out_of_bounds: PyTorch's "index 5 is out of bounds for dimension 0 with size 3".
[[noreturn]] void index_out_of_bounds(std::string_view op, int64_t index, int64_t dim, int64_t size);

// check_masked_fill_value: value is a 0-dim tensor (masked_fill.Tensor); same device as self or cpu.
void check_masked_fill_value(const Tensor& self, const Tensor& value, std::string_view op);
// masked_select_shape: the broadcast shape of self and a b8 mask (data decides the result's length).
SizeVec masked_select_shape(const Tensor& self, const Tensor& mask);

// select_scatter_target / slice_scatter_target: out's part that src replaces
// (a view of out), after checking src has its sizes.
Tensor select_scatter_target(const Tensor& out, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter_target(const Tensor& out, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                            std::optional<int64_t> end, int64_t step);

// diagonal_kernel: the diagonal view (device-independent, as the other views of views.h).
Tensor diagonal_kernel(const Tensor& self, int64_t offset, int64_t dim1, int64_t dim2);
// diagonal_backward_target: the diagonal of out (input_sizes) that grad fills, checked against grad.
Tensor diagonal_backward_target(const Tensor& out, const Tensor& grad, int64_t offset, int64_t dim1, int64_t dim2);

// IndexPlan: advanced indexing (index.Tensor / index_put_) as
// result[(p * adv + b) * post + q] = self[pre_off[p] + adv_off(b) + post_off[q]],
// where b runs over the broadcast index shape and adv_off(b) =
// sum_k idx_k[b] * adv_stride[k] (negative indices wrapped by adv_size[k]).
// See Note [Advanced indexing plans] in scatter_meta.cc.
struct IndexPlan {
  SizeVec result_sizes;
  SizeVec broadcast;                     // the indices' broadcast shape
  std::vector<Tensor> indices;           // int64, broadcast to `broadcast`, contiguous (on self's device)
  std::vector<int64_t> adv_dim, adv_size, adv_stride;  // self's dim, size and stride per index
  std::vector<int64_t> pre_off, post_off;              // self offsets of the non-indexed positions
  int64_t adv = 1;                                     // numel of broadcast
};

// expand_index_masks: indices with each bool/byte mask replaced by the long
// indices of its nonzero entries (one per mask dim), after PyTorch's checks
// (index dtypes, too many indices, mask shapes). nonzero is the backend's.
std::vector<Tensor> expand_index_masks(const Tensor& self, OptionalTensorList indices, std::string_view op,
                                       Tensor (*nonzero)(const Tensor&));
// make_index_plan: the plan for long (or int) indices with undefined entries
// for `:`; `contiguous` makes a tensor contiguous int64 on its device.
IndexPlan make_index_plan(const Tensor& self, const std::vector<Tensor>& indices, std::string_view op,
                          Tensor (*contiguous_long)(const Tensor&));
// index_plan_offsets: adv_off(b) for every b, from the plan's indices (which
// must be cpu tensors here), after checking each against its dim's size
// (PyTorch's "index 5 is out of bounds for dimension 0 with size 3").
std::vector<int64_t> index_plan_offsets(const IndexPlan& p, std::string_view op);
// element_offsets: the offsets, by strides, of every position of sizes in row-major order.
std::vector<int64_t> element_offsets(IntArrayRef sizes, IntArrayRef strides);
// broadcast_view: t viewed with sizes (leading dims added, size-1 dims stepped by 0).
Tensor broadcast_view(const Tensor& t, IntArrayRef sizes);

// check_index_put: values' dtype equals self's and values broadcast to the result.
void check_index_put(const Tensor& self, const Tensor& values, IntArrayRef result_sizes, std::string_view op);
// check_index_put_overlap: _index_put_impl_'s memory checks: values and every
// index share no memory with self; where PyTorch hands the call to
// masked_fill_ (one bool mask, a one-element cpu value, no accumulate) the
// mask must not partially overlap self instead (See Note [Memory overlap]).
void check_index_put_overlap(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                             std::string_view op);
// index_meta_sizes: index.Tensor's result shape from metadata alone (a bool mask makes it data-dependent).
SizeVec index_meta_sizes(const Tensor& self, OptionalTensorList indices, std::string_view op);

// Meta kernels.
Tensor gather_meta(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad);
Tensor scatter_src_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_value_meta(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_reduce_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                           std::string_view reduce, bool include_self);
Tensor scatter__src_meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter__value_meta(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor scatter_add__meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor scatter_reduce__meta(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                            std::string_view reduce, bool include_self);
Tensor masked_fill_tensor_meta(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_fill__tensor_meta(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_select_meta(const Tensor& self, const Tensor& mask);
Tensor select_scatter_meta(const Tensor& self, const Tensor& src, int64_t dim, int64_t index);
Tensor slice_scatter_meta(const Tensor& self, const Tensor& src, int64_t dim, std::optional<int64_t> start,
                          std::optional<int64_t> end, int64_t step);
Tensor diagonal_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                              int64_t dim2);
Tensor index_meta(const Tensor& self, OptionalTensorList indices);
Tensor index_put__meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate);
Tensor index_put_meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate);
Tensor index_put_impl__meta(const Tensor& self, OptionalTensorList indices, const Tensor& values, bool accumulate,
                            bool unsafe);
Tensor nonzero_meta(const Tensor& self);

// register_scatter_meta_kernels: the Meta kernels above (and diagonal's view kernel).
void register_scatter_meta_kernels(Library& lib);
// register_scatter_kernels: the CPU and Meta kernels of this family (kernels/cpu/scatter.cc).
void register_scatter_kernels(Dispatcher& d);

}  // namespace opspec::internal
