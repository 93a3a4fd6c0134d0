// sort.cc: CUDA kernels of prod (and .dim_int), max/min (full and .dim),
// cumsum/cumprod, sort (and .stable) and topk: the CPU kernels' checks
// (kernels/common/sort_meta.h), dtypes and error texts, then the launchers
// of sort.cu over a contiguous copy of self (See Note [CUDA sort rows] there);
// max() and min() run reduce.cu's amax/amin reduction.
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "kernels/common/layout_format.h"
#include "kernels/common/sort_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/sort_launch.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal::cuda {
namespace {

// ---- prod ----

Tensor prod_cuda_impl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::prod";
  const ReductionGeometry rg = prod_geometry(self, dim, keepdim);
  const Device dev = require_device(self.device(), kOp);
  const DType out_dtype = sum_result_dtype(self.dtype(), dtype);
  Tensor out = empty_cuda(rg.out_sizes, out_dtype, dev);
  if (out.numel() == 0) return out;
  DimGeometry g;
  if (dim && self.dim() > 0) {
    g = dim_geometry(self, *dim, kOp);
  } else {
    g.len = self.numel();
  }
  // The product runs over out_dtype's values, as on the CPU.
  const Tensor src = contiguous_cuda(self, out_dtype);
  DeviceGuard guard(dev);
  launch_prod_rows(code_of(out_dtype), src.raw_data(), out.raw_data(), g.outer, g.len, g.inner);
  return out;
}

Tensor prod_cuda(const Tensor& self, std::optional<DType> dtype) {
  return prod_cuda_impl(self, std::nullopt, false, dtype);
}
Tensor prod_dim_int_cuda(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return prod_cuda_impl(self, dim, keepdim, dtype);
}

// ---- max / min ----

// extremum_all_cuda: max() / min() through reduce.cu's amax/amin block
// reduction (NaN propagates there too; the result is exact, so the CPU's).
template <bool kMax>
Tensor extremum_all_cuda(const Tensor& self) {
  const std::string_view name = kMax ? "max" : "min";
  const std::string op = str_cat("aten::", name);
  const ReductionGeometry rg = extremum_geometry(self, std::nullopt, false, name);
  const Device dev = require_device(self.device(), op);
  Tensor out = empty_cuda(rg.out_sizes, self.dtype(), dev);
  const Tensor src = contiguous_cuda(self);
  ReduceArgs a;
  a.in = src.raw_data();
  a.out = out.raw_data();
  a.in_code = a.out_code = code_of(self.dtype());
  a.n_red = 1;
  a.red_sizes[0] = self.numel();
  a.red_strides[0] = 1;
  a.n_reduced = self.numel();
  Tensor scratch;
  const int64_t scratch_bytes = reduce_scratch_bytes(a);
  if (scratch_bytes > 0) {
    scratch = empty_cuda({scratch_bytes}, DType::kBool, dev);
    a.scratch = scratch.raw_data();
  }
  DeviceGuard guard(dev);
  launch_reduce(kMax ? ReduceOp::kMax : ReduceOp::kMin, a);
  return out;
}

template <bool kMax>
std::tuple<Tensor, Tensor> extremum_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  const std::string_view name = kMax ? "max" : "min";
  const std::string op = str_cat("aten::", name);
  const ReductionGeometry rg = extremum_geometry(self, dim, keepdim, name);
  const DimGeometry g = dim_geometry(self, dim, op);
  const Device dev = require_device(self.device(), op);
  Tensor values = empty_cuda(rg.out_sizes, self.dtype(), dev);
  Tensor indices = empty_cuda(rg.out_sizes, DType::kInt64, dev);
  if (values.numel() == 0) return {values, indices};
  const Tensor src = contiguous_cuda(self);
  DeviceGuard guard(dev);
  launch_extremum_rows(code_of(self.dtype()), kMax, src.raw_data(), values.raw_data(),
                       static_cast<int64_t*>(indices.raw_data()), g.outer, g.len, g.inner);
  return {values, indices};
}

Tensor max_cuda(const Tensor& self) { return extremum_all_cuda<true>(self); }
Tensor min_cuda(const Tensor& self) { return extremum_all_cuda<false>(self); }
std::tuple<Tensor, Tensor> max_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim_cuda<true>(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim_cuda<false>(self, dim, keepdim);
}

// ---- cumsum / cumprod ----

Tensor scan_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype, bool prod, std::string_view op) {
  const DimGeometry g = dim_geometry(self, dim, op);
  const Device dev = require_device(self.device(), op);
  const DType out_dtype = scan_result_dtype(self.dtype(), dtype);
  Tensor out = empty_cuda(self.sizes(), out_dtype, dev);
  if (out.numel() == 0) return out;
  const Tensor src = contiguous_cuda(self, out_dtype);
  DeviceGuard guard(dev);
  launch_scan(code_of(out_dtype), prod, src.raw_data(), out.raw_data(), g.outer, g.len, g.inner);
  return out;
}

Tensor cumsum_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cuda(self, dim, dtype, false, "aten::cumsum");
}
Tensor cumprod_cuda(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan_cuda(self, dim, dtype, true, "aten::cumprod");
}

// ---- sort / topk ----

// sort_into: the first k of each row's stable sort of self (dim g) into new values and indices of sizes.
std::tuple<Tensor, Tensor> sort_into(const Tensor& self, const DimGeometry& g, IntArrayRef sizes, int64_t k,
                                     bool descending, Device dev) {
  Tensor values = empty_cuda(sizes, self.dtype(), dev);
  Tensor indices = empty_cuda(sizes, DType::kInt64, dev);
  if (values.numel() == 0) return {values, indices};
  const Tensor src = contiguous_cuda(self);
  const Tensor scratch = empty_cuda({2 * self.numel()}, DType::kInt64, dev);
  DeviceGuard guard(dev);
  launch_sort_rows(code_of(self.dtype()), src.raw_data(), values.raw_data(), static_cast<int64_t*>(indices.raw_data()),
                   static_cast<int64_t*>(scratch.raw_data()), g.outer, g.len, g.inner, k, descending);
  return {values, indices};
}

std::tuple<Tensor, Tensor> sort_cuda(const Tensor& self, int64_t dim, bool descending) {
  constexpr std::string_view kOp = "aten::sort";
  const DimGeometry g = dim_geometry(self, dim, kOp);
  const Device dev = require_device(self.device(), kOp);
  auto [values, indices] = sort_into(self, g, self.sizes(), g.len, descending, dev);
  // Results take self's layout (PyTorch 2.x's sort.stable meta), as on the CPU.
  const SizeVec strides = preserve_strides(self);
  return {with_strides(values, strides, device_copy), with_strides(indices, strides, device_copy)};
}

std::tuple<Tensor, Tensor> sort_stable_cuda(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
  return sort_cuda(self, dim, descending);
}

std::tuple<Tensor, Tensor> topk_cuda(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
  constexpr std::string_view kOp = "aten::topk";
  const DimGeometry g = dim_geometry(self, dim, kOp);
  check_topk_k(self, k, g);
  OPSPEC_CHECK(self.dtype() != DType::kBool, kOp, ": \"topk_out_cuda\" not implemented for 'Bool'");
  const Device dev = require_device(self.device(), kOp);
  // A 0-D tensor is its own top element whatever k, as on the CPU.
  return sort_into(self, g, topk_sizes(self, k, g), self.dim() == 0 ? 1 : k, largest, dev);
}

}  // namespace

void register_sort_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("prod", kKey, &prod_cuda)
      .impl("prod.dim_int", kKey, &prod_dim_int_cuda)
      .impl("max", kKey, &max_cuda)
      .impl("min", kKey, &min_cuda)
      .impl("max.dim", kKey, &max_dim_cuda)
      .impl("min.dim", kKey, &min_dim_cuda)
      .impl("cumsum", kKey, &cumsum_cuda)
      .impl("cumprod", kKey, &cumprod_cuda)
      .impl("sort", kKey, &sort_cuda)
      .impl("sort.stable", kKey, &sort_stable_cuda)
      .impl("topk", kKey, &topk_cuda);
}

}  // namespace opspec::internal::cuda
