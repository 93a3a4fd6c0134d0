// conversion.cc: CPU kernels of copy_, clone and _to_copy, all built on
// copy_into (kernels/cpu/copy.h).
#include "kernels/common/factory_meta.h"
#include "kernels/cpu/copy.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/core/device_hooks.h"

namespace opspec::internal {
namespace {

// A cuda tensor dispatches to the CUDA backend's kernels (CUDA outranks CPU),
// so these kernels only see one where the backend is missing.
void check_not_cuda(Device d, std::string_view op, std::string_view direction) {
  if (d.is_cuda()) throw_not_implemented(str_cat(op, ": cannot copy ", direction, " ", d.str(), ": ", kNoCudaBackendMessage));
}

Tensor copy__cpu(const Tensor& self, const Tensor& src, bool non_blocking) {
  constexpr std::string_view kOp = "aten::copy_";
  check_copy_shapes(self, src);
  OPSPEC_CHECK(!src.device().is_meta(), kOp, ": ", kMetaCopyError);
  check_not_cuda(self.device(), kOp, "into");
  check_not_cuda(src.device(), kOp, "from");
  check_copy_overlap(self, src);  // See Note [Memory overlap]
  copy_into(self, src);
  self.impl()->bump_version();
  return self;
}

// clone: a copy laid out as memory_format says; none is preserve_format
// (self's strides when dense, else its dims' order). See Note [Memory formats].
Tensor clone_cpu(const Tensor& self, std::optional<int64_t> memory_format) {
  const SizeVec strides = like_result_strides(self, memory_format, "aten::clone");
  Tensor out = make_tensor_with_strides(self.sizes(), strides, self.dtype(), kCPU);
  copy_into(out, self);
  return out;
}

// _to_copy: dtype and/or device change, laid out as clone's result; layout,
// pin_memory and non_blocking are accepted and ignored (results are strided).
Tensor to_copy_cpu(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                   std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                   std::optional<int64_t> memory_format) {
  constexpr std::string_view kOp = "aten::_to_copy";
  const Device target = device.value_or(self.device());
  const DType dt = dtype.value_or(self.dtype());
  check_not_cuda(self.device(), kOp, "from");
  const SizeVec strides = like_result_strides(self, memory_format, kOp);
  if (target.is_meta()) return make_tensor_with_strides(self.sizes(), strides, dt, kMeta);
  if (!target.is_cpu()) {
    // cpu -> device: convert (and lay out) on the host, then one copy of the
    // dense span (See Note [Device seam]).
    DeviceHooks& hooks = get_device_hooks(target.type);
    const Device dev = hooks.check_device(target, kOp);
    Tensor host = self;
    if (self.dtype() != dt || self.strides() != IntArrayRef(strides)) {
      host = make_tensor_with_strides(self.sizes(), strides, dt, kCPU);
      copy_into(host, self);
    }
    Tensor out = make_tensor_with_strides(self.sizes(), strides, dt, dev);
    if (out.numel() != 0) hooks.copy_bytes(out.raw_data(), dev, host.raw_data(), kCPU, static_cast<size_t>(out.nbytes()));
    return out;
  }
  Tensor out = make_tensor_with_strides(self.sizes(), strides, dt, kCPU);
  copy_into(out, self);
  return out;
}

}  // namespace

void register_conversion_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("copy_", kKey, &copy__cpu).impl("clone", kKey, &clone_cpu).impl("_to_copy", kKey, &to_copy_cpu);
}

}  // namespace opspec::internal
