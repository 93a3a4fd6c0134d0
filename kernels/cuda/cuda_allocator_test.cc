// The CUDA caching allocator: size rounding (host only), statistics, reuse of
// cached blocks and empty_cache (device), and DebugMode's memory hook on cuda.
#include "kernels/cuda/cuda_allocator.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_format.h"
#include "harness/debug_mode.h"
#include "kernels/cuda/cuda_test_util.h"

namespace opspec::internal::cuda {
namespace cuda_cuda_allocator_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::kCuda0;

TEST(CudaAllocatorTest, RoundsToSmallClassesAndLargeChunks) {
  using A = CudaCachingAllocator;
  EXPECT_EQ(A::round_size(1), 512u);
  EXPECT_EQ(A::round_size(512), 512u);
  EXPECT_EQ(A::round_size(513), 1024u);
  EXPECT_EQ(A::round_size(A::kSmallLimit), A::kSmallLimit);
  EXPECT_EQ(A::round_size(A::kSmallLimit + 1), size_t{2} << 20);
  EXPECT_EQ(A::round_size((size_t{3} << 20) + 5), size_t{4} << 20);
}

TEST(CudaAllocatorTest, IsTheCudaAllocator) {
  EXPECT_EQ(get_allocator(DeviceType::kCUDA), &cuda_allocator());
}

TEST(CudaAllocatorTest, WithoutAGpuAllocationFailsAndCountsNothing) {
  if (get_device_hooks(DeviceType::kCUDA).is_available()) GTEST_SKIP() << "a CUDA device is available";
  const AllocatorStats before = cuda_allocator().stats();
  EXPECT_THAT([] { cuda_allocator().allocate_on(kCuda0, 64); },
              ThrowsMessage<Error>(HasSubstr(std::string(kNoCudaDeviceMessage))));
  EXPECT_EQ(cuda_allocator().stats().allocation_count, before.allocation_count);
}

TEST(CudaAllocatorTest, CountsLikeTheCpuAllocatorAndReusesFreedBlocks) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  CudaCachingAllocator& alloc = cuda_allocator();
  alloc.empty_cache();  // blocks earlier tests freed
  alloc.reset_stats();
  const AllocatorStats before = alloc.stats();
  void* first = nullptr;
  {
    const Tensor t = ops::empty({1000}, {.device = kCuda0});
    first = t.raw_data();
    const AllocatorStats during = alloc.stats();
    EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 4000);
    EXPECT_EQ(during.allocation_count, 1);
    EXPECT_EQ(during.active_allocations - before.active_allocations, 1);
    EXPECT_GE(during.peak_bytes, during.bytes_in_use);
  }
  EXPECT_EQ(alloc.stats().bytes_in_use, before.bytes_in_use);
  EXPECT_GE(alloc.cached_bytes(), 4096);
  const int64_t reserved = alloc.reserved_bytes();
  const Tensor again = ops::empty({1020}, {.device = kCuda0});  // the same 4096-byte class
  EXPECT_EQ(again.raw_data(), first);
  EXPECT_EQ(alloc.reserved_bytes(), reserved);
  const int64_t cached = alloc.cached_bytes();
  alloc.empty_cache();
  EXPECT_EQ(alloc.cached_bytes(), 0);
  EXPECT_EQ(alloc.reserved_bytes(), reserved - cached);  // the live block stays
}

TEST(CudaAllocatorTest, NamesADeviceThatDoesNotExist) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Device missing(DeviceType::kCUDA, static_cast<int8_t>(get_device_hooks(DeviceType::kCUDA).device_count()));
  EXPECT_THAT([&] { cuda_allocator().allocate_on(missing, 64); },
              ThrowsMessage<Error>(HasSubstr(str_cat("CUDA device ", missing.str(), " does not exist"))));
}

TEST(CudaAllocatorTest, DebugModeMemoryHookReportsCudaBytes) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const double before_mb = static_cast<double>(cuda_allocator().stats().bytes_in_use) / (1 << 20);
  DebugMode dm;
  {
    auto scope = dm.enter();
    auto hooks = DebugMode::dispatch_hooks(nullptr, DebugMode::memory_hook(DeviceType::kCUDA));
    const Tensor t = ops::zeros({1024, 256}, {.device = kCuda0});  // 1 MiB
  }
  EXPECT_THAT(dm.debug_string(), HasSubstr(absl::StrFormat("'mem': '%.3f MB'", before_mb + 1.0)));
}

}  // namespace
}  // namespace opspec::internal::cuda
