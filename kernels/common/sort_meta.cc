// sort_meta.cc: see sort_meta.h.
#include "kernels/common/sort_meta.h"

#include <string>

#include "runtime/core/memory_format.h"
#include "runtime/core/error.h"

namespace opspec::internal {

DimGeometry dim_geometry(const Tensor& self, int64_t dim, std::string_view op) {
  DimGeometry g;
  g.dim = wrap_dim(dim, self.dim(), op);
  if (self.dim() == 0) return g;
  g.len = self.size(g.dim);
  for (int64_t i = 0; i < g.dim; ++i) g.outer *= self.size(i);
  for (int64_t i = g.dim + 1; i < self.dim(); ++i) g.inner *= self.size(i);
  return g;
}

ReductionGeometry prod_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  if (!dim) return reduction_geometry(self, std::nullopt, false, "aten::prod");
  const int64_t one[] = {*dim};
  return reduction_geometry(self, IntArrayRef(one), keepdim, "aten::prod");
}

ReductionGeometry extremum_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                    std::string_view name) {
  const std::string op = str_cat("aten::", name);
  ReductionGeometry g;
  if (dim) {
    const int64_t one[] = {*dim};
    g = reduction_geometry(self, IntArrayRef(one), keepdim, op);
  } else {
    g = reduction_geometry(self, std::nullopt, false, op);
  }
  check_nonempty_reduction(self, g, name);
  return g;
}

DType scan_result_dtype(DType self, std::optional<DType> dtype) { return sum_result_dtype(self, dtype); }

void check_topk_k(const Tensor& self, int64_t k, const DimGeometry& g) {
  OPSPEC_CHECK(k >= 0 && k <= (self.dim() > 0 ? g.len : 1), "aten::topk: selected index k out of range");
}

SizeVec topk_sizes(const Tensor& self, int64_t k, const DimGeometry& g) {
  SizeVec out(self.sizes().begin(), self.sizes().end());
  if (!out.empty()) out[static_cast<size_t>(g.dim)] = k;
  return out;
}

Tensor prod_meta(const Tensor& self, std::optional<DType> dtype) {
  return make_tensor(prod_geometry(self, std::nullopt, false).out_sizes, sum_result_dtype(self.dtype(), dtype),
                     kMeta);
}

Tensor prod_dim_int_meta(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return make_tensor(prod_geometry(self, dim, keepdim).out_sizes, sum_result_dtype(self.dtype(), dtype), kMeta);
}

Tensor max_meta(const Tensor& self) {
  return make_tensor(extremum_geometry(self, std::nullopt, false, "max").out_sizes, self.dtype(), kMeta);
}

Tensor min_meta(const Tensor& self) {
  return make_tensor(extremum_geometry(self, std::nullopt, false, "min").out_sizes, self.dtype(), kMeta);
}

namespace {
std::tuple<Tensor, Tensor> values_indices_meta(IntArrayRef sizes, DType dtype) {
  return {make_tensor(sizes, dtype, kMeta), make_tensor(sizes, DType::kInt64, kMeta)};
}
}  // namespace

std::tuple<Tensor, Tensor> max_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return values_indices_meta(extremum_geometry(self, dim, keepdim, "max").out_sizes, self.dtype());
}

std::tuple<Tensor, Tensor> min_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return values_indices_meta(extremum_geometry(self, dim, keepdim, "min").out_sizes, self.dtype());
}

Tensor cumsum_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  dim_geometry(self, dim, "aten::cumsum");
  return make_tensor(self.sizes(), scan_result_dtype(self.dtype(), dtype), kMeta);
}

Tensor cumprod_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  dim_geometry(self, dim, "aten::cumprod");
  return make_tensor(self.sizes(), scan_result_dtype(self.dtype(), dtype), kMeta);
}

std::tuple<Tensor, Tensor> sort_meta(const Tensor& self, int64_t dim, bool) {
  dim_geometry(self, dim, "aten::sort");
  const SizeVec strides = preserve_strides(self);  // See Note [Memory formats]
  return {make_strided(self.sizes(), strides, self.dtype(), kMeta),
          make_strided(self.sizes(), strides, DType::kInt64, kMeta)};
}

std::tuple<Tensor, Tensor> sort_stable_meta(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
  return sort_meta(self, dim, descending);
}

std::tuple<Tensor, Tensor> topk_meta(const Tensor& self, int64_t k, int64_t dim, bool, bool) {
  const DimGeometry g = dim_geometry(self, dim, "aten::topk");
  check_topk_k(self, k, g);
  return values_indices_meta(topk_sizes(self, k, g), self.dtype());
}

}  // namespace opspec::internal
