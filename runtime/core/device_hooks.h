// device_hooks.h: DeviceHooks, what the runtime and the harness need from a
// device other than cpu and meta (cuda), without knowing whether its backend
// was built; device-side tensor hashes are device_hashes.h. See Note [Device seam].
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "runtime/core/device.h"

namespace opspec {

class Tensor;

// Note [Device seam]
// Whether the CUDA backend is built is known in exactly two places: the build
// (cmake/opspec_cuda.cmake adds kernels/cuda/ to the runtime library) and
// kernels/device_backends.cc, the one file compiled with OPSPEC_HAS_CUDA.
// Everything else reaches a device through this interface, so a CPU-only
// build has no CUDA symbols, stubs or #ifdefs anywhere else:
//   - kernels: register_builtins calls register_device_backends(d), which
//     registers the CUDA kernels at DispatchKey::kCUDA when built;
//   - runtime services (allocator, copies, device queries, and the device-side
//     hashes of device_hashes.h):
//     the first get_device_hooks or get_allocator of a device type runs
//     install_device_runtimes() once, which registers the CUDA hooks, the
//     CUDA caching allocator and the CUDA hashes when built. Until then, and forever in a build
//     without the backend, the type has placeholder hooks and allocator whose
//     operations throw kNoCudaBackendMessage (queries answer "no devices").
// A build with the backend on a machine without a GPU registers everything
// and then throws kNoCudaDeviceMessage at the first allocation or copy, so
// the same binary works on both kinds of machine.

// kNoCudaBackendMessage: what every CUDA operation throws in a build without the backend.
inline constexpr std::string_view kNoCudaBackendMessage =
    "CUDA requested but this build of opspec has no CUDA backend (configure with -DOPSPEC_CUDA=ON)";
// kNoCudaDeviceMessage: what CUDA operations throw when the backend is built but no GPU is usable.
inline constexpr std::string_view kNoCudaDeviceMessage = "CUDA requested but no device is available";

// DeviceEventTimer: the device time between two points of a device's queue,
// as a pair of torch.cuda.Event(enable_timing=True) measures it: work queued
// between start() and stop() is timed on the device (CUDA events), so a
// benchmark times kernels rather than their launches or a host wait.
class DeviceEventTimer {
 public:
  virtual ~DeviceEventTimer() = default;
  // start: records the start event on the device's queue.
  virtual void start() = 0;
  // stop: records the end event on the device's queue.
  virtual void stop() = 0;
  // elapsed_s: waits for the end event, then the seconds between the two events.
  virtual double elapsed_s() = 0;
};

// DeviceHooks: a non-cpu device type's runtime services. No CUDA types appear
// here; pointers are device or host addresses as the Device arguments say.
class DeviceHooks {
 public:
  virtual ~DeviceHooks() = default;

  // is_built: whether the backend behind these hooks was compiled in.
  virtual bool is_built() const = 0;
  // device_count: usable devices of this type (0 without a backend or a GPU).
  virtual int device_count() const = 0;
  // is_available: device_count() > 0.
  virtual bool is_available() const { return device_count() > 0; }
  // check_device: device with its index made explicit ("cuda" is cuda:0); throws
  // opspec::Error naming the device when it does not exist (op names the caller).
  virtual Device check_device(Device device, std::string_view op) const = 0;
  // copy_bytes: copies nbytes from src to dst, host <-> device or device <->
  // device; returns once dst holds the data.
  virtual void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) = 0;
  // synchronize: waits until all work queued on device has finished.
  virtual void synchronize(Device device) = 0;
  // empty_cache: returns cached, unused device memory to the driver.
  virtual void empty_cache() {}
  // make_event_timer: a timer of device time on device, or nullptr where the
  // backend has no timing events (callers then time on the host).
  virtual std::unique_ptr<DeviceEventTimer> make_event_timer(Device /*device*/) { return nullptr; }
};

// get_device_hooks: the hooks of a non-cpu, non-meta device type: the
// backend's when built, otherwise placeholders that throw kNoCudaBackendMessage.
DeviceHooks& get_device_hooks(DeviceType type);

namespace internal {

// register_device_hooks: installs a backend's hooks (called by install_device_runtimes).
void register_device_hooks(DeviceType type, DeviceHooks* hooks);

// install_device_runtimes: registers the built backends' hooks and allocators;
// defined in kernels/device_backends.cc and run once, by ensure_device_runtimes.
void install_device_runtimes();

// ensure_device_runtimes: runs install_device_runtimes the first time it is called.
void ensure_device_runtimes();

}  // namespace internal

}  // namespace opspec
