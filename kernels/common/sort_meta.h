// sort_meta.h: shape, dtype and argument rules of prod, max/min (full and
// .dim), cumsum/cumprod, sort (and .stable) and topk, shared by their CPU,
// CUDA and Meta kernels, plus the Meta kernels themselves. Error texts are
// PyTorch's, prefixed with the op.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "kernels/common/reduce_meta.h"
#include "runtime/core/shape_utils.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {

// DimGeometry: self seen as [outer, len, inner] around one (wrapped) dim; a
// 0-D tensor is one row of length 1.
struct DimGeometry {
  int64_t dim = 0;  // wrapped dim (0 for a 0-D tensor)
  int64_t outer = 1, len = 1, inner = 1;
};
// dim_geometry: wraps dim against self for op ("aten::sort"; PyTorch's "Dimension out of range" text).
DimGeometry dim_geometry(const Tensor& self, int64_t dim, std::string_view op);

// prod_geometry: prod's reduction, over every dim (dim None) or one dim.
ReductionGeometry prod_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim);
// extremum_geometry: max/min's (full: dim None) reduction; zero-size reduced dims are
// errors ("aten::max(): Expected reduction dim 1 to have non-zero size.").
ReductionGeometry extremum_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                    std::string_view name);
// scan_result_dtype: cumsum/cumprod's result dtype: dtype, else i64 for bool and integer inputs, else self's.
DType scan_result_dtype(DType self, std::optional<DType> dtype);
// check_topk_k: k in [0, size of dim] (1 for a 0-D tensor): "selected index k out of range".
void check_topk_k(const Tensor& self, int64_t k, const DimGeometry& g);
// topk_sizes: self's sizes with dim's replaced by k (a 0-D tensor keeps its shape).
SizeVec topk_sizes(const Tensor& self, int64_t k, const DimGeometry& g);

// Meta kernels: outputs with the CPU kernels' sizes and dtypes, and no data.
Tensor prod_meta(const Tensor& self, std::optional<DType> dtype);
Tensor prod_dim_int_meta(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype);
Tensor max_meta(const Tensor& self);
Tensor min_meta(const Tensor& self);
std::tuple<Tensor, Tensor> max_dim_meta(const Tensor& self, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor> min_dim_meta(const Tensor& self, int64_t dim, bool keepdim);
Tensor cumsum_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype);
Tensor cumprod_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype);
std::tuple<Tensor, Tensor> sort_meta(const Tensor& self, int64_t dim, bool descending);
std::tuple<Tensor, Tensor> sort_stable_meta(const Tensor& self, std::optional<bool> stable, int64_t dim,
                                            bool descending);
std::tuple<Tensor, Tensor> topk_meta(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted);

// register_sort_kernels: the CPU and Meta kernels of this family (kernels/cpu/sort.cc).
void register_sort_kernels(Dispatcher& d);

}  // namespace opspec::internal
