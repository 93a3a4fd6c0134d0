// reduce.cc: CUDA kernels of sum, mean, amax, amin, linalg_vector_norm,
// _softmax, _log_softmax and native_layer_norm (and their backward ops): the CPU kernels' meta checks
// and dtype rules, then the launchers of reduce.cu, softmax.cu and
// layer_norm.cu. See Note [CUDA reductions] in reduce.cu.
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <tuple>

#include "kernels/common/backward_meta.h"
#include "kernels/common/reduce_plan.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/common/reduce_meta.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal::cuda {
namespace {

// plan: in's reduction geometry (the CPU's ReducePlan) as launch arguments;
// false when either dim list is longer than kMaxDims.
bool plan(const Tensor& in, absl::Span<const bool> mask, ReduceArgs& a) {
  const ReducePlan p = make_reduce_plan(in, mask);
  if (static_cast<int>(p.kept_sizes.size()) > kMaxDims || static_cast<int>(p.red_sizes.size()) > kMaxDims) return false;
  a.n_kept = static_cast<int>(p.kept_sizes.size());
  a.n_red = static_cast<int>(p.red_sizes.size());
  std::copy(p.kept_sizes.begin(), p.kept_sizes.end(), a.kept_sizes);
  std::copy(p.kept_strides.begin(), p.kept_strides.end(), a.kept_strides);
  std::copy(p.red_sizes.begin(), p.red_sizes.end(), a.red_sizes);
  std::copy(p.red_strides.begin(), p.red_strides.end(), a.red_strides);
  a.n_out = p.n_out;
  a.n_reduced = in.numel() == 0 ? 0 : p.n_red;
  return true;
}

// reduce_into: out = op over g of in (on in's device).
void reduce_into(ReduceOp op, const Tensor& self, const ReductionGeometry& g, const Tensor& out, double p = 2) {
  if (out.numel() == 0) return;
  ReduceArgs a;
  Tensor in = self;
  if (!plan(in, g.mask, a)) {
    in = contiguous_cuda(self);  // dims of a contiguous tensor coalesce further
    if (!plan(in, g.mask, a)) {
      throw_not_implemented(str_cat("CUDA reductions take at most ", kMaxDims, " kept and ", kMaxDims,
                                    " reduced dims after coalescing; got more for ", self.meta_str()));
    }
  }
  a.in = in.raw_data();
  a.out = out.raw_data();
  a.in_code = code_of(in.dtype());
  a.out_code = code_of(out.dtype());
  a.divisor = static_cast<double>(g.reduced_numel);
  a.p = p;
  DeviceGuard guard(out.device());
  const int64_t scratch_bytes = reduce_scratch_bytes(a);
  Tensor scratch;
  if (scratch_bytes > 0) {
    scratch = empty_cuda({scratch_bytes}, DType::kBool, out.device());
    a.scratch = scratch.raw_data();
  }
  launch_reduce(op, a);
}

Tensor sum_impl(const Tensor& self, const ReductionGeometry& g, std::optional<DType> dtype, DType out_dtype,
                bool mean, std::string_view op) {
  Tensor out = empty_cuda(g.out_sizes, out_dtype, require_device(self.device(), op));
  // dtype= computes in that dtype (PyTorch converts the input first).
  const Tensor in = dtype && *dtype != self.dtype() ? contiguous_cuda(self, *dtype) : self;
  reduce_into(mean ? ReduceOp::kMean : ReduceOp::kSum, in, g, out);
  return out;
}

Tensor sum_dim_cuda(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::sum");
  return sum_impl(self, g, dtype, sum_result_dtype(self.dtype(), dtype), /*mean=*/false, "aten::sum");
}

Tensor sum_cuda(const Tensor& self, std::optional<DType> dtype) { return sum_dim_cuda(self, std::nullopt, false, dtype); }

Tensor mean_dim_cuda(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const DType out_dtype = mean_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::mean");
  return sum_impl(self, g, dtype, out_dtype, /*mean=*/true, "aten::mean");
}

Tensor mean_cuda(const Tensor& self, std::optional<DType> dtype) { return mean_dim_cuda(self, std::nullopt, false, dtype); }

template <bool kMax>
Tensor extremum_cuda(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const std::string_view name = kMax ? "amax" : "amin";
  const std::string op = str_cat("aten::", name);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, op);
  check_nonempty_reduction(self, g, name);
  Tensor out = empty_cuda(g.out_sizes, self.dtype(), require_device(self.device(), op));
  reduce_into(kMax ? ReduceOp::kMax : ReduceOp::kMin, self, g, out);
  return out;
}

Tensor amax_cuda(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_cuda<true>(self, dim, keepdim); }
Tensor amin_cuda(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_cuda<false>(self, dim, keepdim); }

Tensor linalg_vector_norm_cuda(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                               std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::linalg_vector_norm";
  const DType out_dtype = norm_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, kOp);
  const double p = ord.to_double();
  check_norm_ord(self, g, p);
  Tensor out = empty_cuda(g.out_sizes, out_dtype, require_device(self.device(), kOp));
  const Tensor in = out_dtype != self.dtype() ? contiguous_cuda(self, out_dtype) : self;
  constexpr double kInf = std::numeric_limits<double>::infinity();
  const ReduceOp op = p == 2      ? ReduceOp::kNorm2
                      : p == 1    ? ReduceOp::kNorm1
                      : p == kInf ? ReduceOp::kNormInf
                      : p == -kInf ? ReduceOp::kNormNegInf
                      : p == 0    ? ReduceOp::kNorm0
                                  : ReduceOp::kNormP;
  reduce_into(op, in, g, out, p);
  return out;
}

// ---- Softmax and layer norm ----

template <bool kLog>
Tensor softmax_impl(const Tensor& self, int64_t dim, bool half_to_float) {
  const std::string_view op = kLog ? "aten::_log_softmax" : "aten::_softmax";
  const int64_t d = softmax_dim(self, dim, half_to_float, /*is_cpu=*/false, op);
  const Device dev = require_device(self.device(), op);
  // half_to_float: an f16 input computes in float anyway, so it is widened first.
  const DType dt = half_to_float ? DType::kFloat32 : self.dtype();
  Tensor out = empty_cuda(self.sizes(), dt, dev);
  if (self.numel() == 0) return out;
  const Tensor in = contiguous_cuda(self, dt);
  int64_t outer = 1, inner = 1;
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[d];
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) outer *= self.sizes()[i];
    if (i > d) inner *= self.sizes()[i];
  }
  DeviceGuard guard(dev);
  launch_softmax(code_of(dt), kLog, in.raw_data(), out.raw_data(), outer, len, inner);
  return out;
}

Tensor softmax_cuda(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<false>(self, dim, half_to_float);
}
Tensor log_softmax_cuda(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<true>(self, dim, half_to_float);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_cuda(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, double eps) {
  constexpr std::string_view kOp = "aten::native_layer_norm";
  const LayerNormGeometry g = layer_norm_geometry(input, normalized_shape, weight, bias);
  // The CPU kernel's message (its dtype dispatch).
  OPSPEC_CHECK(is_floating(input.dtype()), kOp, ": expected a floating dtype, got ", dtype_short_name(input.dtype()));
  const Device dev = require_device(input.device(), kOp);
  // Statistics are computed in the compute type and converted once when their dtype differs.
  const DType kC = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  Tensor out = empty_cuda(input.sizes(), input.dtype(), dev);
  Tensor mean_c = empty_cuda(g.stat_sizes, kC, dev);
  Tensor rstd_c = empty_cuda(g.stat_sizes, kC, dev);
  DeviceGuard guard(dev);
  if (input.numel() != 0) {
    const Tensor x = contiguous_cuda(input);
    const Tensor w = weight ? contiguous_cuda(*weight, kC) : Tensor();
    const Tensor b = bias ? contiguous_cuda(*bias, kC) : Tensor();
    launch_layer_norm(code_of(input.dtype()), x.raw_data(), out.raw_data(), mean_c.raw_data(), rstd_c.raw_data(),
                      w.defined() ? w.raw_data() : nullptr, b.defined() ? b.raw_data() : nullptr, g.rows, g.cols, eps);
  } else if (g.rows != 0) {
    // Rows of zero elements: mean 0/0 and rstd of it, as the formula gives.
    const Tensor nan = make_tensor({}, kC, kCPU);
    if (kC == DType::kFloat64) *static_cast<double*>(nan.raw_data()) = std::numeric_limits<double>::quiet_NaN();
    else *static_cast<float*>(nan.raw_data()) = std::numeric_limits<float>::quiet_NaN();
    device_copy(mean_c, nan);
    device_copy(rstd_c, nan);
  }
  const Tensor mean = g.stat_dtype == kC ? mean_c : contiguous_cuda(mean_c, g.stat_dtype);
  const Tensor rstd = g.stat_dtype == kC ? rstd_c : contiguous_cuda(rstd_c, g.stat_dtype);
  return {out, mean, rstd};
}

// ---- Their backward ops ----

template <bool kLog>
Tensor softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  const std::string_view op = kLog ? "aten::_log_softmax_backward_data" : "aten::_softmax_backward_data";
  const SoftmaxBackwardGeometry geo = softmax_backward_geometry(grad, output, dim, input_dtype, op);
  const Device dev = require_device(grad.device(), op);
  Tensor out = empty_cuda(grad.sizes(), grad.dtype(), dev);
  if (grad.numel() != 0) {
    const Tensor g = contiguous_cuda(grad);
    const Tensor y = contiguous_cuda(output);
    DeviceGuard guard(dev);
    launch_softmax_backward(code_of(grad.dtype()), kLog, g.raw_data(), y.raw_data(), out.raw_data(), geo.outer,
                            geo.len, geo.inner);
  }
  return geo.result_dtype == out.dtype() ? out : contiguous_cuda(out, geo.result_dtype);
}

Tensor softmax_backward_data_cuda(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  return softmax_backward_impl<false>(grad, output, dim, input_dtype);
}
Tensor log_softmax_backward_data_cuda(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  return softmax_backward_impl<true>(grad, output, dim, input_dtype);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_cuda(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_layer_norm_backward";
  const LayerNormGeometry g =
      layer_norm_backward_geometry(grad_out, input, normalized_shape, mean, rstd, weight, bias);
  const Device dev = require_device(input.device(), kOp);
  const DType kC = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const bool want_w = output_mask[1] && weight.has_value();
  const bool want_b = output_mask[2] && bias.has_value();
  Tensor dx = output_mask[0] ? empty_cuda(input.sizes(), input.dtype(), dev) : Tensor();
  Tensor dw_c = want_w ? empty_cuda(weight->sizes(), kC, dev) : Tensor();
  Tensor db_c = want_b ? empty_cuda(bias->sizes(), kC, dev) : Tensor();
  const Tensor dy = contiguous_cuda(grad_out);
  const Tensor x = contiguous_cuda(input);
  const Tensor m = contiguous_cuda(mean, kC);
  const Tensor rs = contiguous_cuda(rstd, kC);
  const Tensor w = weight ? contiguous_cuda(*weight, kC) : Tensor();
  DeviceGuard guard(dev);
  launch_layer_norm_backward(code_of(input.dtype()), dy.raw_data(), x.raw_data(), m.raw_data(), rs.raw_data(),
                             w.defined() ? w.raw_data() : nullptr, dx.defined() ? dx.raw_data() : nullptr,
                             dw_c.defined() ? dw_c.raw_data() : nullptr, db_c.defined() ? db_c.raw_data() : nullptr,
                             g.rows, g.cols);
  Tensor dw = want_w && weight->dtype() != kC ? contiguous_cuda(dw_c, weight->dtype()) : dw_c;
  Tensor db = want_b && bias->dtype() != kC ? contiguous_cuda(db_c, bias->dtype()) : db_c;
  return {dx, dw, db};
}

}  // namespace

void register_reduction_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("sum", kKey, &sum_cuda)
      .impl("sum.dim_IntList", kKey, &sum_dim_cuda)
      .impl("mean", kKey, &mean_cuda)
      .impl("mean.dim", kKey, &mean_dim_cuda)
      .impl("amax", kKey, &amax_cuda)
      .impl("amin", kKey, &amin_cuda)
      .impl("linalg_vector_norm", kKey, &linalg_vector_norm_cuda)
      .impl("_softmax", kKey, &softmax_cuda)
      .impl("_log_softmax", kKey, &log_softmax_cuda)
      .impl("native_layer_norm", kKey, &native_layer_norm_cuda)
      .impl("_softmax_backward_data", kKey, &softmax_backward_data_cuda)
      .impl("_log_softmax_backward_data", kKey, &log_softmax_backward_data_cuda)
      .impl("native_layer_norm_backward", kKey, &native_layer_norm_backward_cuda);
}

}  // namespace opspec::internal::cuda
