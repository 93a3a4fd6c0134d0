// allocator_large_blocks_test.cc: the CPU allocator's process-wide cache of
// large blocks (Note [Large block cache]): reuse by rounded size, exact
// counters, the limit, empty_cache, and blocks freed on another thread.
#include <string>
#include <thread>

#include "gtest/gtest.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace opspec {
namespace allocator_large_blocks_test {

constexpr size_t kMiB = size_t{1} << 20;

// Each test starts with an empty cache and the default limit, and leaves them so.
class LargeBlockCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cpu_ = get_allocator(DeviceType::kCPU);
    limit_ = cpu_cache_limit();
    cpu_->empty_cache();
  }
  void TearDown() override {
    set_cpu_cache_limit(limit_);
    cpu_->empty_cache();
  }
  Allocator* cpu_ = nullptr;
  size_t limit_ = 0;
};

TEST_F(LargeBlockCacheTest, AFreedBlockIsReusedForTheSameRoundedSize) {
  const AllocatorStats before = cpu_->stats();
  void* first = cpu_->allocate(2 * kMiB + 100);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  cpu_->deallocate(first, 2 * kMiB + 100);
  EXPECT_EQ(cpu_->cached_bytes(), static_cast<int64_t>(2 * kMiB + 64 * 1024));  // rounded up to 64 KiB
  EXPECT_EQ(cpu_->stats().bytes_in_use, before.bytes_in_use);  // cached memory is not in use
  void* second = cpu_->allocate(2 * kMiB + 5000);  // the same 64 KiB-rounded size
  EXPECT_EQ(second, first);
  EXPECT_EQ(cpu_->cached_bytes(), 0);
  EXPECT_EQ(cpu_->stats().bytes_in_use - before.bytes_in_use, static_cast<int64_t>(2 * kMiB + 5000));
  cpu_->deallocate(second, 2 * kMiB + 5000);
}

TEST_F(LargeBlockCacheTest, AnotherSizeGetsAnotherBlock) {
  void* a = cpu_->allocate(2 * kMiB);
  cpu_->deallocate(a, 2 * kMiB);
  void* b = cpu_->allocate(4 * kMiB);
  EXPECT_NE(b, a);
  EXPECT_EQ(cpu_->cached_bytes(), static_cast<int64_t>(2 * kMiB));
  cpu_->deallocate(b, 4 * kMiB);
  EXPECT_EQ(cpu_->cached_bytes(), static_cast<int64_t>(6 * kMiB));
}

TEST_F(LargeBlockCacheTest, TheLimitFreesTheOldestBlocks) {
  set_cpu_cache_limit(5 * kMiB);
  EXPECT_EQ(cpu_cache_limit(), 5 * kMiB);
  void* a = cpu_->allocate(2 * kMiB);
  void* b = cpu_->allocate(2 * kMiB);
  void* c = cpu_->allocate(2 * kMiB);
  cpu_->deallocate(a, 2 * kMiB);
  cpu_->deallocate(b, 2 * kMiB);
  cpu_->deallocate(c, 2 * kMiB);  // 6 MiB > 5 MiB: a, the oldest, goes
  EXPECT_EQ(cpu_->cached_bytes(), static_cast<int64_t>(4 * kMiB));
  void* again = cpu_->allocate(2 * kMiB);
  EXPECT_EQ(again, c);  // most recently freed first
  cpu_->deallocate(again, 2 * kMiB);
  set_cpu_cache_limit(0);  // off: everything cached is freed, nothing more is kept
  EXPECT_EQ(cpu_->cached_bytes(), 0);
  void* d = cpu_->allocate(2 * kMiB);
  cpu_->deallocate(d, 2 * kMiB);
  EXPECT_EQ(cpu_->cached_bytes(), 0);
}

TEST_F(LargeBlockCacheTest, TensorsFreedOnAnotherThreadAreReusedHere) {
  const AllocatorStats before = cpu_->stats();
  const void* data = nullptr;
  std::thread([&] {
    Tensor t = internal::make_tensor({1 << 20}, DType::kFloat32, kCPU);  // 4 MiB, freed on that thread
    data = t.raw_data();
  }).join();
  EXPECT_EQ(cpu_->cached_bytes(), static_cast<int64_t>(4 * kMiB));
  Tensor here = internal::make_tensor({1 << 20}, DType::kFloat32, kCPU);
  EXPECT_EQ(here.raw_data(), data);
  EXPECT_EQ(cpu_->stats().bytes_in_use - before.bytes_in_use, static_cast<int64_t>(4 * kMiB));
  here = Tensor();
  EXPECT_EQ(cpu_->stats().bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(cpu_->stats().active_allocations, before.active_allocations);
  cpu_->empty_cache();
  EXPECT_EQ(cpu_->cached_bytes(), 0);
}

TEST_F(LargeBlockCacheTest, OtherAllocatorsCacheNothingByDefault) {
  EXPECT_EQ(get_allocator(DeviceType::kMeta)->cached_bytes(), 0);
  get_allocator(DeviceType::kMeta)->empty_cache();  // a no-op, not an error
}

// A request larger than memory and swap is refused before malloc, whatever
// vm.overcommit_memory says (See Note [Allocations larger than memory]): 4 TiB
// was granted under overcommit 1 and its fill was an OOM kill.
TEST_F(LargeBlockCacheTest, MoreThanMemoryAndSwapIsAnError) {
  const int64_t in_use = cpu_->stats().bytes_in_use;
  try {
    cpu_->allocate(size_t{1} << 42);
    FAIL() << "4 TiB was allocated";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CPU out of memory: tried to allocate 4398046511104 bytes, more than this "
                                         "machine's "),
              std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find(" bytes of memory and swap"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cpu_->stats().bytes_in_use, in_use);
}

}  // namespace
}  // namespace opspec
