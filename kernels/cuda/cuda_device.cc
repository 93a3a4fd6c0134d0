#include "kernels/cuda/cuda_device.h"

#include <limits>

#include "runtime/core/device_hooks.h"

namespace opspec::internal::cuda {

// The kernels' element codes are DType's values (launch.h cannot include dtype.h).
static_assert(kF32 == static_cast<Code>(DType::kFloat32) && kF64 == static_cast<Code>(DType::kFloat64) &&
              kF16 == static_cast<Code>(DType::kFloat16) && kBF16 == static_cast<Code>(DType::kBFloat16) &&
              kI64 == static_cast<Code>(DType::kInt64) && kI32 == static_cast<Code>(DType::kInt32) &&
              kB8 == static_cast<Code>(DType::kBool));

void check(cudaError_t err, std::string_view what) {
  if (err == cudaSuccess) [[likely]] return;
  cudaGetLastError();  // clears a non-sticky error so the next call starts clean
  OPSPEC_FAIL(what, ": CUDA error ", cudaGetErrorName(err), ": ", cudaGetErrorString(err));
}

void check_launch(const char* what) { check(cudaGetLastError(), str_cat("launching the ", what, " kernel")); }

void fail_launch(const char* what) { OPSPEC_FAIL("opspec CUDA backend: ", what); }
unsigned grid_rows(int64_t rows, const char* what) {
  OPSPEC_CHECK(rows <= std::numeric_limits<int32_t>::max(), what, ": ", rows,
               " rows exceed the CUDA kernel's 2147483647 blocks of one row each");
  return static_cast<unsigned>(rows);
}

int device_count() {
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();
      n = 0;
    }
    return n;
  }();
  return count;
}

Device require_device(Device device, std::string_view op) {
  OPSPEC_INTERNAL_ASSERT(device.is_cuda());
  const int count = device_count();
  OPSPEC_CHECK(count > 0, op, ": ", kNoCudaDeviceMessage);
  const int index = device.index < 0 ? 0 : device.index;
  OPSPEC_CHECK(index < count, op, ": CUDA device ", Device(DeviceType::kCUDA, static_cast<int8_t>(index)).str(),
               " does not exist; this machine has ", count, " CUDA device", count == 1 ? "" : "s",
               " (cuda:0 to cuda:", count - 1, ")");
  return Device(DeviceType::kCUDA, static_cast<int8_t>(index));
}

DeviceGuard::DeviceGuard(Device device) {
  const int index = device.index < 0 ? 0 : device.index;
  int current = 0;
  check(cudaGetDevice(&current), "cudaGetDevice");
  if (current != index) {
    check(cudaSetDevice(index), str_cat("selecting ", device.str()));
    previous_ = current;
  }
}

DeviceGuard::~DeviceGuard() {
  if (previous_ >= 0) cudaSetDevice(previous_);
}

Tensor empty_cuda(IntArrayRef sizes, DType dtype, Device device) {
  OPSPEC_INTERNAL_ASSERT(device.is_cuda() && device.index >= 0);
  return make_tensor(sizes, dtype, device);
}

}  // namespace opspec::internal::cuda
