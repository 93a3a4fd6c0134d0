// cuda_device.h: host-side helpers every CUDA kernel file uses: error checks,
// device discovery and selection, and output allocation. Host code only
// (kernels/cuda/*.cc); the .cu files see launch.h alone.
#pragma once

#include <cuda_runtime_api.h>

#include <string_view>

#include "kernels/cuda/launch.h"
#include "runtime/core/tensor.h"

namespace opspec::internal::cuda {

// Note [CUDA streams]
// Every kernel and copy runs on the legacy default stream, in call order, so
// the caching allocator can hand a freed block to the next op without
// tracking streams, and a device-to-host copy (synchronous) sees every result
// before it. Ops return once their work is queued; data reads (item(),
// to_vector on a copy, .cpu()) wait for it.

// check: throws opspec::Error "<what>: CUDA error <name>: <description>" unless err is cudaSuccess.
void check(cudaError_t err, std::string_view what);

// device_count: usable CUDA devices, counted once (0 without a driver or a GPU).
int device_count();

// require_device: device with its index made explicit (cuda is cuda:0);
// throws kNoCudaDeviceMessage without a GPU, or names the device when its
// index is out of range. `op` prefixes the message ("aten::zeros: ...").
Device require_device(Device device, std::string_view op);

// DeviceGuard: makes a device current for a scope (a no-op when it already is).
class DeviceGuard {
 public:
  explicit DeviceGuard(Device device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

// code_of: a dtype as the kernels' element code (launch.h).
inline Code code_of(DType t) { return static_cast<Code>(t); }

// empty_cuda: a new contiguous tensor on device (already checked by require_device).
Tensor empty_cuda(IntArrayRef sizes, DType dtype, Device device);

}  // namespace opspec::internal::cuda
