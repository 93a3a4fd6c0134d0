// The device seam with the CUDA backend built: the hooks and allocator are
// the backend's; without a GPU every use says so, with one they work.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
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
  EXPECT_THAT([&] { hooks.make_event_timer(kCuda0); },
              ThrowsMessage<Error>(HasSubstr("make_event_timer: " + kNoDevice)));
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

// The event timer times the device's work, not its launch: ten 64 MiB
// copies take about ten times one (and at least the bytes over an HBM's
// 10 TB/s), though the host returns from each launch at once.
TEST(CudaHooksTest, EventTimerTimesTheDevicesWork) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  std::unique_ptr<DeviceEventTimer> timer = get_device_hooks(DeviceType::kCUDA).make_event_timer(kCuda0);
  ASSERT_NE(timer, nullptr);
  const Tensor a = ops::zeros({16 << 20}, {.device = kCuda0});
  Tensor b = ops::empty({16 << 20}, {.device = kCuda0});
  auto time_copies = [&](int n) {
    timer->start();
    for (int i = 0; i < n; ++i) ops::copy_(b, a);
    timer->stop();
    return timer->elapsed_s();
  };
  time_copies(2);  // warm
  const double one = time_copies(1), ten = time_copies(10);
  EXPECT_GT(one, 2.0 * 64 * (1 << 20) / 10e12) << "one copy: " << one << " s";
  EXPECT_GT(ten, 5 * one) << "one copy " << one << " s, ten " << ten << " s";
  EXPECT_LT(ten, 20 * one) << "one copy " << one << " s, ten " << ten << " s";
  // Reading the pair again gives the same interval.
  EXPECT_EQ(timer->elapsed_s(), ten);
}

}  // namespace
}  // namespace opspec
