// The device seam with the CUDA backend built: the hooks and allocator are
// the backend's; without a GPU every use says so, with one they work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_cuda_hooks_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::kCuda0;

const std::string kNoDevice(kNoCudaDeviceMessage);

bool has_gpu() { return get_device_hooks(DeviceType::kCUDA).is_available(); }

TEST(CudaHooksTest, TheBackendIsBuilt) {
  const DeviceHooks& hooks = get_device_hooks(DeviceType::kCUDA);
  EXPECT_TRUE(hooks.is_built());
  EXPECT_GE(hooks.device_count(), 0);
  EXPECT_EQ(hooks.is_available(), hooks.device_count() > 0);
  EXPECT_THAT([] { get_device_hooks(DeviceType::kCPU); }, ThrowsMessage<Error>(HasSubstr("cpu has no device hooks")));
}

TEST(CudaHooksTest, TestsThatNeedAGpuSkipWithOneMessage) {
  EXPECT_EQ(testing::cuda_skip_reason(), has_gpu() ? "" : "no CUDA device available");
}

TEST(CudaHooksTest, WithoutAGpuEveryUseSaysNoDeviceIsAvailable) {
  if (has_gpu()) GTEST_SKIP() << "a CUDA device is available";
  DeviceHooks& hooks = get_device_hooks(DeviceType::kCUDA);
  EXPECT_EQ(hooks.device_count(), 0);
  EXPECT_THAT([&] { hooks.check_device(kCuda0, "my_op"); }, ThrowsMessage<Error>(HasSubstr("my_op: " + kNoDevice)));
  char buf[4] = {};
  EXPECT_THAT([&] { hooks.copy_bytes(buf, kCuda0, buf, kCPU, 4); }, ThrowsMessage<Error>(HasSubstr(kNoDevice)));
  EXPECT_THAT([&] { hooks.synchronize(kCuda0); }, ThrowsMessage<Error>(HasSubstr(kNoDevice)));
  EXPECT_THAT([] { internal::make_tensor({2}, DType::kFloat32, kCuda0); }, ThrowsMessage<Error>(HasSubstr(kNoDevice)));
  EXPECT_THAT([] { ops::zeros({2}, {.device = Device(DeviceType::kCUDA)}); },
              ThrowsMessage<Error>(HasSubstr("aten::zeros: " + kNoDevice)));
  EXPECT_THAT([] { ops::randn({2}, {.device = kCuda0}); }, ThrowsMessage<Error>(HasSubstr("aten::randn: " + kNoDevice)));
  EXPECT_THAT([] { ops::to(ops::ones({2}), kCuda0); }, ThrowsMessage<Error>(HasSubstr("aten::_to_copy: " + kNoDevice)));
  // Nothing was allocated on the way.
  EXPECT_EQ(get_allocator(DeviceType::kCUDA)->stats().active_allocations, 0);
}

TEST(CudaHooksTest, ChecksDeviceIndexes) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  DeviceHooks& hooks = get_device_hooks(DeviceType::kCUDA);
  EXPECT_EQ(hooks.check_device(Device(DeviceType::kCUDA), "op"), kCuda0);
  EXPECT_EQ(hooks.check_device(Device(DeviceType::kCUDA), "op").index, 0);
  const Device missing(DeviceType::kCUDA, static_cast<int8_t>(hooks.device_count()));
  EXPECT_THAT([&] { hooks.check_device(missing, "op"); },
              ThrowsMessage<Error>(HasSubstr(str_cat("op: CUDA device ", missing.str(), " does not exist"))));
  EXPECT_THAT([&] { ops::zeros({2}, {.device = missing}); },
              ThrowsMessage<Error>(HasSubstr(str_cat("aten::zeros: CUDA device ", missing.str(), " does not exist"))));
}

TEST(CudaHooksTest, CopiesBytesBothWays) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  DeviceHooks& hooks = get_device_hooks(DeviceType::kCUDA);
  const std::vector<int32_t> src = {1, -2, 3, 400000};
  const Tensor dev = ops::empty({4}, {.dtype = DType::kInt32, .device = kCuda0});
  const Tensor dev2 = ops::empty({4}, {.dtype = DType::kInt32, .device = kCuda0});
  hooks.copy_bytes(dev.raw_data(), kCuda0, src.data(), kCPU, 16);
  hooks.copy_bytes(dev2.raw_data(), kCuda0, dev.raw_data(), kCuda0, 16);
  std::vector<int32_t> back(4, 0);
  hooks.copy_bytes(back.data(), kCPU, dev2.raw_data(), kCuda0, 16);
  hooks.synchronize(kCuda0);
  EXPECT_EQ(back, src);
}

}  // namespace
}  // namespace opspec
