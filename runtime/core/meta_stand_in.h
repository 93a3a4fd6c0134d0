// meta_stand_in.h: which device's kernel a Meta kernel answers for on this
// thread. See Note [Meta kernels standing in for a device].
#pragma once

#include "runtime/core/device.h"

namespace opspec {

// Note [Meta kernels standing in for a device]
// A Meta kernel answers for the CPU's kernel (the op crossref holds it to the
// CPU's sizes and strides) unless a fake tensor run makes it stand in for
// another device's (runtime/fake: the device of the fake results). Where
// PyTorch's CUDA kernel lays a result out otherwise than its CPU kernel
// (native_batch_norm: Note [Batch norm on CUDA]; native_group_norm and its
// backward, roll, native_dropout_backward), the Meta kernel then answers as
// the CUDA one, so a fake cuda tensor has a real one's strides.

// meta_stand_in_device: the device whose kernel Meta kernels on this thread
// answer for: kCPU unless a MetaStandInGuard is live.
Device meta_stand_in_device();

// MetaStandInGuard: Meta kernels on this thread answer for device's kernels
// until it is destroyed, which restores the previous device.
class MetaStandInGuard {
 public:
  explicit MetaStandInGuard(Device device);
  ~MetaStandInGuard();
  MetaStandInGuard(const MetaStandInGuard&) = delete;
  MetaStandInGuard& operator=(const MetaStandInGuard&) = delete;

 private:
  Device previous_;
};

}  // namespace opspec
