// movement.cc: CUDA kernels of constant_pad_nd, upsample_nearest2d (+
// backward), flip, roll, repeat (kernels/cpu/movement.cc) and
// native_group_norm (+ backward) (kernels/cpu/group_norm.cc): the CPU
// kernels' checks and plans (kernels/common/movement_meta.h), dtypes and
// error texts, then the launchers of movement.cu.
#include <cstring>
#include <limits>
#include <optional>
#include <tuple>
#include <vector>

#include "kernels/common/layout_format.h"
#include "kernels/common/movement_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/movement_launch.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {
Tensor fill_cpu(const Tensor& self, const Scalar& value);  // kernels/cpu/factory.cc
}  // namespace opspec::internal

namespace opspec::internal::cuda {
namespace {

// on_cuda: host int64 values as a new contiguous i64 tensor on dev (at least one element).
Tensor on_cuda(const std::vector<int64_t>& v, Device dev) {
  const auto n = static_cast<int64_t>(std::max<size_t>(v.size(), 1));
  const Tensor host = make_tensor({n}, DType::kInt64, kCPU);
  if (!v.empty()) std::memcpy(host.raw_data(), v.data(), v.size() * sizeof(int64_t));
  Tensor dev_t = empty_cuda({n}, DType::kInt64, dev);
  copy_between(dev_t, host);
  return dev_t;
}

// run_gather: a new contiguous tensor of sizes on dev from src (on dev, any
// strides) by make_plan(), built only once the output exists and is not empty.
template <class MakePlan>
Tensor run_gather(IntArrayRef sizes, const Tensor& src, Device dev, MakePlan make_plan, uint64_t fill_bits = 0) {
  Tensor out = empty_cuda(sizes, src.dtype(), dev);
  if (out.numel() == 0) return out;
  const GatherPlan p = make_plan();
  std::vector<int64_t> packed(p.out_sizes.begin(), p.out_sizes.end());
  packed.insert(packed.end(), p.offsets.begin(), p.offsets.end());
  packed.insert(packed.end(), p.table.begin(), p.table.end());
  const Tensor plan = on_cuda(packed, dev);
  DeviceGuard guard(dev);
  launch_plan_gather(static_cast<int>(src.element_size()), src.raw_data(), out.raw_data(),
                     static_cast<const int64_t*>(plan.raw_data()), static_cast<int>(p.out_sizes.size()), out.numel(),
                     kPadEntry, fill_bits);
  return out;
}

Tensor constant_pad_nd_cuda(const Tensor& self, IntArrayRef pad, const Scalar& value) {
  constexpr std::string_view kOp = "aten::constant_pad_nd";
  const SizeVec sizes = constant_pad_shape(self, pad);  // the checks first: they need no device
  const Device dev = require_device(self.device(), kOp);
  const Tensor host = make_tensor({}, self.dtype(), kCPU);
  fill_cpu(host, value);  // the CPU's conversion and range check
  uint64_t bits = 0;
  std::memcpy(&bits, host.raw_data(), static_cast<size_t>(host.element_size()));
  // Gathered row-major, then laid out as on the CPU (See Note [Model op layouts]).
  const Tensor out = run_gather(sizes, self, dev, [&] { return constant_pad_plan(self, pad); }, bits);
  return with_strides(out, constant_pad_strides(self, pad, sizes), device_copy);
}

Tensor flip_cuda(const Tensor& self, IntArrayRef dims) {
  flip_mask(self, dims);
  const Device dev = require_device(self.device(), "aten::flip");
  // self's layout (preserve_format), as on the CPU.
  const Tensor out = run_gather(self.sizes(), self, dev, [&] { return flip_plan(self, dims); });
  return with_strides(out, preserve_strides(self), device_copy);
}

Tensor roll_cuda(const Tensor& self, IntArrayRef shifts, IntArrayRef dims) {
  constexpr std::string_view kOp = "aten::roll";
  check_roll(self, shifts, dims);
  const Device dev = require_device(self.device(), kOp);
  if (!dims.empty()) return run_gather(self.sizes(), self, dev, [&] { return roll_plan(self, shifts, dims); });
  // dims=[]: the flattened roll over a contiguous copy, in self's shape.
  const Tensor src = contiguous_cuda(self);
  const Tensor flat = make_view(src, {self.numel()}, {1}, src.storage_offset());
  const int64_t dim0[] = {0};
  const Tensor rolled =
      run_gather({self.numel()}, flat, dev, [&] { return roll_plan(flat, shifts.subspan(0, 1), dim0); });
  return make_view(rolled, self.sizes(), contiguous_strides(self.sizes()), 0);
}

Tensor repeat_cuda(const Tensor& self, IntArrayRef repeats) {
  const SizeVec sizes = repeat_shape(self, repeats);
  const Device dev = require_device(self.device(), "aten::repeat");
  return run_gather(sizes, self, dev, [&] { return repeat_plan(self, repeats); });
}

Tensor upsample_nearest2d_cuda(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h,
                               std::optional<double> scales_w) {
  const std::array<int64_t, 4> sizes = upsample_nearest2d_shape(self, output_size);
  constexpr std::string_view kOp = "aten::upsample_nearest2d";
  const Device dev = require_device(self.device(), kOp);
  const Tensor out =
      run_gather(sizes, self, dev, [&] { return upsample_nearest2d_plan(self, output_size, scales_h, scales_w); });
  return in_format(out, suggest_memory_format(self), kOp, device_copy);  // as on the CPU
}

Tensor upsample_nearest2d_backward_cuda(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                        std::optional<double> scales_h, std::optional<double> scales_w) {
  constexpr std::string_view kOp = "aten::upsample_nearest2d_backward";
  check_upsample_nearest2d_backward(grad_output, output_size, input_size);
  const Device dev = require_device(grad_output.device(), kOp);
  Tensor out = empty_cuda(input_size, grad_output.dtype(), dev);
  if (out.numel() == 0) return in_format(out, suggest_memory_format(grad_output), kOp, device_copy);
  const int64_t ih = input_size[2], iw = input_size[3], oh = output_size[0], ow = output_size[1];
  const Tensor rh = on_cuda(nearest_source_ranges(ih, oh, scales_h), dev);
  const Tensor rw = on_cuda(nearest_source_ranges(iw, ow, scales_w), dev);
  const Tensor g = contiguous_cuda(grad_output);
  DeviceGuard guard(dev);
  launch_upsample_nearest2d_backward(code_of(g.dtype()), g.raw_data(), out.raw_data(),
                                     static_cast<const int64_t*>(rh.raw_data()),
                                     static_cast<const int64_t*>(rw.raw_data()), input_size[0] * input_size[1], ih, iw,
                                     oh, ow);
  return in_format(out, suggest_memory_format(grad_output), kOp, device_copy);
}

// filled: a new [n, group] tensor of dt on dev, every element v.
Tensor filled(int64_t n, int64_t group, DType dt, double v, Device dev) {
  const Tensor host = make_tensor({}, DType::kFloat64, kCPU);
  *host.data_ptr<double>() = v;
  Tensor t = empty_cuda({n, group}, dt, dev);
  if (t.numel() != 0) device_copy(t, host);
  return t;
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                          int64_t HxW, int64_t group, double eps) {
  constexpr std::string_view kOp = "aten::native_group_norm";
  const GroupNormGeometry g = group_norm_geometry(input, weight, bias, N, C, HxW, group, kOp);
  const Device dev = require_device(input.device(), kOp);
  Tensor out = empty_cuda(input.sizes(), input.dtype(), dev);
  if (input.numel() == 0) {
    return {out, filled(N, group, g.stat_dtype, 0.0, dev),
            filled(N, group, g.stat_dtype, std::numeric_limits<double>::quiet_NaN(), dev)};
  }
  const DType kC = compute_dtype(input.dtype());
  Tensor mean_c = empty_cuda({N, group}, kC, dev);
  Tensor rstd_c = empty_cuda({N, group}, kC, dev);
  const Tensor x = contiguous_cuda(input);
  const Tensor w = weight ? contiguous_cuda(*weight, kC) : Tensor();
  const Tensor b = bias ? contiguous_cuda(*bias, kC) : Tensor();
  DeviceGuard guard(dev);
  launch_group_norm(code_of(input.dtype()), x.raw_data(), out.raw_data(), mean_c.raw_data(), rstd_c.raw_data(),
                    w.defined() ? w.raw_data() : nullptr, b.defined() ? b.raw_data() : nullptr, N, C, HxW, group,
                    eps);
  const Tensor mean = g.stat_dtype == kC ? mean_c : contiguous_cuda(mean_c, g.stat_dtype);
  const Tensor rstd = g.stat_dtype == kC ? rstd_c : contiguous_cuda(rstd_c, g.stat_dtype);
  // Row-major whatever input's layout: PyTorch 2.x's kernel reads X made contiguous on every device
  // but the CPU and allocates Y like it (the CPU's Y takes X's suggested format).
  return {out, mean, rstd};
}

std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward_cuda(const Tensor& grad_out, const Tensor& input,
                                                                   const Tensor& mean, const Tensor& rstd,
                                                                   const std::optional<Tensor>& weight, int64_t N,
                                                                   int64_t C, int64_t HxW, int64_t group,
                                                                   std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_group_norm_backward";
  const DType pdt = check_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group);
  const Device dev = require_device(input.device(), kOp);
  Tensor dx = output_mask[0] ? empty_cuda(input.sizes(), input.dtype(), dev) : Tensor();
  Tensor dw = output_mask[1] ? empty_cuda({C}, pdt, dev) : Tensor();
  Tensor db = output_mask[2] ? empty_cuda({C}, pdt, dev) : Tensor();
  if (input.numel() == 0) {
    const Tensor zero = make_tensor({}, DType::kFloat64, kCPU);
    *zero.data_ptr<double>() = 0;
    for (const Tensor* t : {&dx, &dw, &db}) {
      if (t->defined() && t->numel() != 0) device_copy(*t, zero);
    }
    return {dx, dw, db};
  }
  const DType kC = compute_dtype(input.dtype());
  const Tensor x = contiguous_cuda(input);
  const Tensor dy = contiguous_cuda(grad_out);
  const Tensor m = contiguous_cuda(mean, kC);
  const Tensor r = contiguous_cuda(rstd, kC);
  const Tensor w = weight ? contiguous_cuda(*weight, kC) : Tensor();
  const Tensor dw_c = empty_cuda({C}, kC, dev);
  const Tensor db_c = empty_cuda({C}, kC, dev);
  const Tensor scratch = empty_cuda({2 * N * C + 2 * N * group}, kC, dev);
  DeviceGuard guard(dev);
  launch_group_norm_backward(code_of(input.dtype()), dy.raw_data(), x.raw_data(), m.raw_data(), r.raw_data(),
                             w.defined() ? w.raw_data() : nullptr, dx.defined() ? dx.raw_data() : nullptr,
                             dw_c.raw_data(), db_c.raw_data(), scratch.raw_data(), N, C, HxW, group);
  if (dw.defined()) device_copy(dw, dw_c);
  if (db.defined()) device_copy(db, db_c);
  return {dx, dw, db};
}

}  // namespace

void register_movement_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("constant_pad_nd", kKey, &constant_pad_nd_cuda)
      .impl("upsample_nearest2d", kKey, &upsample_nearest2d_cuda)
      .impl("upsample_nearest2d_backward", kKey, &upsample_nearest2d_backward_cuda)
      .impl("native_group_norm", kKey, &native_group_norm_cuda)
      .impl("native_group_norm_backward", kKey, &native_group_norm_backward_cuda)
      .impl("flip", kKey, &flip_cuda)
      .impl("roll", kKey, &roll_cuda)
      .impl("repeat", kKey, &repeat_cuda);
}

}  // namespace opspec::internal::cuda
