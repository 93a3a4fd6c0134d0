// conversion.cc: CUDA kernels of copy_, clone and _to_copy, built on
// kernels/cuda/cuda_copy.h. copy_ reaches this kernel whenever either side is
// a cuda tensor (CUDA outranks CPU), so it copies in every direction.
#include "kernels/common/factory_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal::cuda {
namespace {

Tensor copy__cuda(const Tensor& self, const Tensor& src, bool non_blocking) {
  constexpr std::string_view kOp = "aten::copy_";
  check_copy_shapes(self, src);
  OPSPEC_CHECK(!src.device().is_meta(), kOp, ": ", kMetaCopyError);
  if (self.device().is_cuda()) require_device(self.device(), kOp);
  if (src.device().is_cuda()) require_device(src.device(), kOp);
  check_copy_overlap(self, src);  // See Note [Memory overlap]
  copy_between(self, src);
  self.impl()->bump_version();
  return self;
}

// clone: a copy laid out as memory_format says; none is preserve_format, as
// on the CPU (kernels/cpu/conversion.cc). See Note [Memory formats].
Tensor clone_cuda(const Tensor& self, std::optional<int64_t> memory_format) {
  const SizeVec strides = like_result_strides(self, memory_format, "aten::clone");
  Tensor out = make_tensor_with_strides(self.sizes(), strides, self.dtype(), require_device(self.device(), "aten::clone"));
  device_copy(out, self);
  return out;
}

// _to_copy: dtype and/or device change, laid out as clone's result; layout,
// pin_memory and non_blocking are accepted and ignored (results are strided).
Tensor to_copy_cuda(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<int64_t> memory_format) {
  constexpr std::string_view kOp = "aten::_to_copy";
  const Device target = device.value_or(self.device());
  const DType dt = dtype.value_or(self.dtype());
  require_device(self.device(), kOp);
  const SizeVec strides = like_result_strides(self, memory_format, kOp);
  if (target.is_meta()) return make_tensor_with_strides(self.sizes(), strides, dt, kMeta);
  const Device dev = target.is_cpu() ? target : require_device(target, kOp);
  Tensor out = make_tensor_with_strides(self.sizes(), strides, dt, dev);
  copy_between(out, self);
  return out;
}

}  // namespace

void register_conversion_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("copy_", kKey, &copy__cuda).impl("clone", kKey, &clone_cuda).impl("_to_copy", kKey, &to_copy_cuda);
}

}  // namespace opspec::internal::cuda
