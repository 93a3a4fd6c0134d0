// cuda_hooks.cc: the CUDA backend's DeviceHooks and install_cuda_runtime,
// which kernels/device_backends.cc calls once (See Note [Device seam] in
// runtime/core/device_hooks.h).
#include <cuda_runtime_api.h>

#include <bit>
#include <memory>
#include <optional>

#include "kernels/cuda/cuda_allocator.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/hash.h"
#include "runtime/core/device_hashes.h"
#include "runtime/core/device_hooks.h"

namespace opspec::internal {

namespace {

// CudaEventTimer: a pair of timing events on the device's default stream,
// the one every opspec kernel is launched on.
class CudaEventTimer final : public DeviceEventTimer {
 public:
  explicit CudaEventTimer(Device device) : device_(device) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaEventCreate(&start_), "creating a timing event");
    if (const cudaError_t err = cudaEventCreate(&stop_); err != cudaSuccess) {
      cudaEventDestroy(start_);  // the constructor throws: no destructor runs
      cuda::check(err, "creating a timing event");
    }
  }
  ~CudaEventTimer() override {
    cuda::DeviceGuard guard(device_);
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
  }
  CudaEventTimer(const CudaEventTimer&) = delete;
  CudaEventTimer& operator=(const CudaEventTimer&) = delete;

  void start() override { record(start_); }
  void stop() override { record(stop_); }
  double elapsed_s() override {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaEventSynchronize(stop_), "waiting for a timing event");
    float ms = 0;
    cuda::check(cudaEventElapsedTime(&ms, start_, stop_), "reading a timing event pair");
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  void record(cudaEvent_t e) {
    cuda::DeviceGuard guard(device_);
    cuda::check(cudaEventRecord(e, nullptr), "recording a timing event");
  }

  Device device_;
  cudaEvent_t start_ = nullptr;
  cudaEvent_t stop_ = nullptr;
};

class CudaHooks final : public DeviceHooks {
 public:
  bool is_built() const override { return true; }
  int device_count() const override { return cuda::device_count(); }
  Device check_device(Device device, std::string_view op) const override {
    OPSPEC_CHECK(device.is_cuda(), op, ": expected a cuda device, got ", device.str());
    return cuda::require_device(device, op);
  }

  void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) override {
    if (nbytes == 0) return;
    const Device dev = dst_device.is_cuda() ? dst_device : src_device;
    OPSPEC_CHECK(dev.is_cuda(), "copy_bytes: neither ", dst_device.str(), " nor ", src_device.str(), " is a cuda device");
    const Device checked = cuda::require_device(dev, "copy_bytes");
    cuda::DeviceGuard guard(checked);
    // Unified addressing tells host and device pointers apart; a copy from
    // pageable host memory or to the host returns once dst holds the data.
    cuda::check(cudaMemcpy(dst, src, nbytes, cudaMemcpyDefault),
                str_cat("copying ", nbytes, " bytes from ", src_device.str(), " to ", dst_device.str()));
    if (!dst_device.is_cuda()) return;
    // A host-to-device copy may return before the device has the data;
    // callers may free the host buffer at once.
    if (!src_device.is_cuda()) cuda::check(cudaStreamSynchronize(nullptr), "copy_bytes");
  }

  void synchronize(Device device) override {
    const Device checked = cuda::require_device(device, "synchronize");
    cuda::DeviceGuard guard(checked);
    cuda::check(cudaDeviceSynchronize(), str_cat("synchronizing ", checked.str()));
  }

  void empty_cache() override { cuda::cuda_allocator().empty_cache(); }

  std::unique_ptr<DeviceEventTimer> make_event_timer(Device device) override {
    return std::make_unique<CudaEventTimer>(cuda::require_device(device, "make_event_timer"));
  }
};

}  // namespace

void install_cuda_runtime() {
  static CudaHooks hooks;
  register_device_hooks(DeviceType::kCUDA, &hooks);
  register_device_hash(DeviceType::kCUDA, DeviceHashKind::kNorm, [](const Tensor& t) -> std::optional<uint64_t> {
    return std::bit_cast<uint64_t>(cuda_norm_hash(t));
  });
  register_device_hash(DeviceType::kCUDA, DeviceHashKind::kXor,
                       [](const Tensor& t) -> std::optional<uint64_t> { return cuda_xor_hash(t); });
  register_device_hash(DeviceType::kCUDA, DeviceHashKind::kBitwise,
                       [](const Tensor& t) -> std::optional<uint64_t> { return cuda_bitwise_hash(t); });
  install_allocator(DeviceType::kCUDA, &cuda::cuda_allocator());
}

}  // namespace opspec::internal
