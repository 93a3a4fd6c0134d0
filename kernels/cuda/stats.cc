// stats.cc: CUDA kernels of var, std and var_mean (.correction), logsumexp,
// any and all (kernels/cpu/stats.cc), and mse_loss and mse_loss_backward
// (kernels/cpu/loss.cc): the CPU kernels' checks (kernels/common/reduce_meta.h,
// nn_meta.h), dtypes and error texts, then the launchers of stats.cu, and
// reduce.cu's sum and mean for a reduced mse_loss. See Note [CUDA
// statistics] in stats.cu.
#include <optional>
#include <string_view>
#include <tuple>

#include "kernels/common/nn_meta.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/stats_launch.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal::cuda {
namespace {

// ---- Rows ----

// Rows: self laid out kept dims first, reduced dims last, as
// kernels/cpu/stats.cc's rows_of (See Note [Statistics rows] there): every
// output reduces one contiguous run, which the row kernels need.
struct Rows {
  Tensor data;  // contiguous on self's device: `rows` runs of `len` elements
  int64_t rows = 1, len = 1;
};

// rows_of: a permuted view of self (no copy), made contiguous on the device.
Rows rows_of(const Tensor& self, const ReductionGeometry& g) {
  Rows r;
  r.data = contiguous_cuda(reduced_dims_last(self, g));
  r.len = g.reduced_numel;
  r.rows = r.len == 0 ? compute_numel(g.out_sizes) : self.numel() / r.len;
  return r;
}

double correction_of(const std::optional<Scalar>& c) { return c ? c->to_double() : 1.0; }

// ---- var / std / var_mean ----

// moments_cuda: var (or std when take_sqrt) of self over g into a new tensor,
// and the mean into *mean when given.
Tensor moments_cuda(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                    bool keepdim, bool take_sqrt, Tensor* mean, std::string_view op) {
  const ReductionGeometry g = var_geometry(self, dim, keepdim, op);
  const Device dev = require_device(self.device(), op);
  Tensor var = empty_cuda(g.out_sizes, self.dtype(), dev);
  if (mean != nullptr) *mean = empty_cuda(g.out_sizes, self.dtype(), dev);
  if (var.numel() == 0) return var;
  const Rows r = rows_of(self, g);
  DeviceGuard guard(dev);
  launch_moments(code_of(self.dtype()), r.data.raw_data(), r.rows, r.len, correction_of(correction), take_sqrt,
                 var.raw_data(), mean != nullptr ? mean->raw_data() : nullptr);
  return var;
}

Tensor var_correction_cuda(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                           bool keepdim) {
  return moments_cuda(self, dim, correction, keepdim, /*take_sqrt=*/false, nullptr, "aten::var");
}

Tensor std_correction_cuda(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                           bool keepdim) {
  return moments_cuda(self, dim, correction, keepdim, /*take_sqrt=*/true, nullptr, "aten::std");
}

std::tuple<Tensor, Tensor> var_mean_correction_cuda(const Tensor& self, OptionalIntArrayRef dim,
                                                    const std::optional<Scalar>& correction, bool keepdim) {
  Tensor mean;
  Tensor var = moments_cuda(self, dim, correction, keepdim, /*take_sqrt=*/false, &mean, "aten::var_mean");
  return {var, mean};
}

// ---- logsumexp ----

// logsumexp: integers (and bools) are converted to the default float first, as on the CPU.
Tensor logsumexp_cuda(const Tensor& self, IntArrayRef dim, bool keepdim) {
  constexpr std::string_view kOp = "aten::logsumexp";
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, kOp);
  const Device dev = require_device(self.device(), kOp);
  const DType dt = is_floating(self.dtype()) ? self.dtype() : kDefaultFloat;
  Tensor out = empty_cuda(g.out_sizes, dt, dev);
  if (out.numel() == 0) return out;
  const Rows r = rows_of(is_floating(self.dtype()) ? self : contiguous_cuda(self, dt), g);
  DeviceGuard guard(dev);
  launch_logsumexp(code_of(dt), r.data.raw_data(), out.raw_data(), r.rows, r.len);
  return out;
}

// ---- any / all ----

Tensor bool_reduce_cuda(const Tensor& self, std::optional<int64_t> dim, bool keepdim, bool any, std::string_view op) {
  const ReductionGeometry g = bool_reduction_geometry(self, dim, keepdim, op);
  const Device dev = require_device(self.device(), op);
  Tensor out = empty_cuda(g.out_sizes, DType::kBool, dev);
  if (out.numel() == 0) return out;
  const Rows r = rows_of(self, g);
  DeviceGuard guard(dev);
  launch_any_all(code_of(self.dtype()), any, r.data.raw_data(), static_cast<bool*>(out.raw_data()), r.rows, r.len);
  return out;
}

Tensor any_cuda(const Tensor& self) { return bool_reduce_cuda(self, std::nullopt, false, true, "aten::any"); }
Tensor any_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return bool_reduce_cuda(self, dim, keepdim, true, "aten::any");
}
Tensor all_cuda(const Tensor& self) { return bool_reduce_cuda(self, std::nullopt, false, false, "aten::all"); }
Tensor all_dim_cuda(const Tensor& self, int64_t dim, bool keepdim) {
  return bool_reduce_cuda(self, dim, keepdim, false, "aten::all");
}

// ---- mse_loss ----


// sum_all_into: out (one element) = the sum, or the mean, of the contiguous
// src through reduce.cu's kernels, which the CPU's mse_loss mirrors by
// calling sum_cpu / mean_cpu.
void sum_all_into(const Tensor& src, const Tensor& out, bool mean) {
  ReduceArgs a;
  a.in = src.raw_data();
  a.out = out.raw_data();
  a.in_code = code_of(src.dtype());
  a.out_code = code_of(out.dtype());
  a.n_kept = 0;
  a.n_red = 1;
  a.red_sizes[0] = src.numel();
  a.red_strides[0] = 1;
  a.n_out = 1;
  a.n_reduced = src.numel();
  a.divisor = static_cast<double>(src.numel());  // 0 for an empty loss: mean NaN, as on the CPU
  const int64_t scratch_bytes = reduce_scratch_bytes(a);
  Tensor scratch;
  if (scratch_bytes > 0) {
    scratch = empty_cuda({scratch_bytes}, DType::kBool, out.device());
    a.scratch = scratch.raw_data();
  }
  launch_reduce(mean ? ReduceOp::kMean : ReduceOp::kSum, a);
}

// mse_loss: (self - target)^2, then reduce.cu's mean or sum.
Tensor mse_loss_cuda(const Tensor& self, const Tensor& target, int64_t reduction) {
  constexpr std::string_view kOp = "aten::mse_loss";
  check_mse_loss(self, target, reduction, kOp);
  const Device dev = op_device({self, target}, kOp);
  Tensor sq = empty_cuda(self.sizes(), self.dtype(), dev);
  DeviceGuard guard(dev);
  if (sq.numel() > 0) {
    const Tensor a = on_device(self, self.dtype(), dev), b = on_device(target, self.dtype(), dev);
    launch_mse(code_of(self.dtype()), a.raw_data(), b.raw_data(), sq.raw_data(), sq.numel());
  }
  if (reduction == static_cast<int64_t>(Reduction::kNone)) return sq;
  Tensor out = empty_cuda({}, self.dtype(), dev);
  sum_all_into(sq, out, reduction == static_cast<int64_t>(Reduction::kMean));
  return out;
}

// mse_loss_backward: 2 (self - target) grad_output, divided by numel for mean.
Tensor mse_loss_backward_cuda(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              int64_t reduction) {
  constexpr std::string_view kOp = "aten::mse_loss_backward";
  mse_loss_backward_meta(grad_output, self, target, reduction);
  const Device dev = op_device({self, target, grad_output}, kOp);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  if (out.numel() == 0) return out;
  const double norm = reduction == static_cast<int64_t>(Reduction::kMean) ? 2.0 / static_cast<double>(self.numel())
                                                                          : 2.0;
  const Tensor a = on_device(self, self.dtype(), dev), b = on_device(target, self.dtype(), dev);
  const Tensor g = on_device(grad_output, self.dtype(), dev);
  // A reduced loss's one gradient goes to every element, as the CPU's stride-0 view.
  const bool broadcast = grad_output.sizes() != self.sizes();
  DeviceGuard guard(dev);
  launch_mse_backward(code_of(self.dtype()), a.raw_data(), b.raw_data(), g.raw_data(), broadcast, norm,
                      out.raw_data(), out.numel());
  return out;
}

}  // namespace

void register_stats_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("var.correction", kKey, &var_correction_cuda)
      .impl("std.correction", kKey, &std_correction_cuda)
      .impl("var_mean.correction", kKey, &var_mean_correction_cuda)
      .impl("logsumexp", kKey, &logsumexp_cuda)
      .impl("any", kKey, &any_cuda)
      .impl("any.dim", kKey, &any_dim_cuda)
      .impl("all", kKey, &all_cuda)
      .impl("all.dim", kKey, &all_dim_cuda)
      .impl("mse_loss", kKey, &mse_loss_cuda)
      .impl("mse_loss_backward", kKey, &mse_loss_backward_cuda);
}

}  // namespace opspec::internal::cuda
