#include "kernels/cuda/cuda_copy.h"

#include <algorithm>

#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/elementwise_args.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/shape_utils.h"
#include "runtime/ops/elementwise_rules.h"  // partial_overlap, same_elements
#include "runtime/ops/untraced.h"

namespace opspec::internal::cuda {
namespace {

bool same_sizes(const Tensor& a, const Tensor& b) {
  return std::equal(a.sizes().begin(), a.sizes().end(), b.sizes().begin(), b.sizes().end());
}

void copy_bytes(const Tensor& dst, const Tensor& src) {
  OPSPEC_INTERNAL_ASSERT(dst.nbytes() == src.nbytes() && dst.is_contiguous() && src.is_contiguous());
  get_device_hooks(DeviceType::kCUDA)
      .copy_bytes(dst.raw_data(), dst.device(), src.raw_data(), src.device(), static_cast<size_t>(dst.nbytes()));
}

}  // namespace

void device_copy(const Tensor& dst, const Tensor& src) {
  const SizeVec shape = broadcast_shapes(dst.sizes(), src.sizes(), "aten::copy_");
  OPSPEC_CHECK(std::equal(shape.begin(), shape.end(), dst.sizes().begin(), dst.sizes().end()),
               "aten::copy_: output with shape ", format_sizes(dst.sizes()), " doesn't match the broadcast shape ",
               format_sizes(shape));
  if (dst.numel() == 0) return;
  if (src.device().is_cuda()) {
    if (same_elements(dst, src)) return;  // x.copy_(x)
    if (partial_overlap(dst, src)) {  // read all of src before writing any of dst
      Tensor aside = empty_cuda(src.sizes(), src.dtype(), require_device(src.device(), "aten::copy_"));
      device_copy(aside, src);
      return device_copy(dst, aside);
    }
  }
  DeviceGuard guard(dst.device());
  launch_copy(make_args(dst, {src}, {dst.dtype()}));
}

Tensor contiguous_cuda(const Tensor& src, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(src.dtype());
  if (src.is_contiguous() && src.dtype() == dt) return src;
  Tensor out = empty_cuda(src.sizes(), dt, require_device(src.device(), "contiguous"));
  device_copy(out, src);
  return out;
}

void copy_between(const Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return;
  if (dst.device().is_cuda() && src.device().is_cuda()) {
    if (dst.device() == src.device()) return device_copy(dst, src);
    // cuda:i -> cuda:j: a contiguous copy with dst's dtype moves between devices.
    const Tensor packed = contiguous_cuda(src, dst.dtype());
    if (dst.is_contiguous() && same_sizes(dst, src)) return copy_bytes(dst, packed);
    Tensor landed = empty_cuda(src.sizes(), dst.dtype(), require_device(dst.device(), "aten::copy_"));
    copy_bytes(landed, packed);
    return device_copy(dst, landed);
  }
  if (dst.device().is_cuda()) {  // host -> device, converted on the host
    Tensor host = src;
    if (!src.is_contiguous() || src.dtype() != dst.dtype()) {
      host = make_tensor(src.sizes(), dst.dtype(), kCPU);
      copy_untraced(host, src);
    }
    if (dst.is_contiguous() && same_sizes(dst, src)) return copy_bytes(dst, host);
    if (src.numel() == 1) return device_copy(dst, host);  // a scalar fills dst
    Tensor landed = empty_cuda(src.sizes(), dst.dtype(), require_device(dst.device(), "aten::copy_"));
    copy_bytes(landed, host);
    return device_copy(dst, landed);
  }
  if (src.device().is_cpu()) return copy_untraced(dst, src);  // host -> host (a 0-dim cpu operand read on the host)
  OPSPEC_INTERNAL_ASSERT(dst.device().is_cpu() && src.device().is_cuda());  // device -> host, converted on the device
  const Tensor packed = contiguous_cuda(src, dst.dtype());
  if (dst.is_contiguous() && same_sizes(dst, src)) return copy_bytes(dst, packed);
  Tensor host = make_tensor(src.sizes(), dst.dtype(), kCPU);
  copy_bytes(host, packed);
  copy_untraced(dst, host);
}

Device op_device(TensorList tensors, std::string_view op) {
  return require_device(check_same_device(tensors, op), op);
}

Tensor on_device(const Tensor& t, DType dtype, Device dev) {
  if (t.device() == dev) return contiguous_cuda(t, dtype);
  Tensor out = empty_cuda(t.sizes(), dtype, dev);
  copy_between(out, t);
  return out;
}

}  // namespace opspec::internal::cuda
