// allocator_small_blocks_test.cc: the CPU allocator's per-thread small block
// cache (Note [Small block cache]) keeps the counters exact and reuses memory.
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "runtime/core/allocator.h"
#include "runtime/core/tensor.h"

namespace opspec {
namespace allocator_small_blocks_test {

TEST(SmallBlockCacheTest, ReusesAFreedBlockAndStillCountsEveryAllocation) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  cpu->reset_stats();
  const AllocatorStats before = cpu->stats();
  void* first = cpu->allocate(4);
  cpu->deallocate(first, 4);
  void* second = cpu->allocate(60);  // the same 64-byte class: the cached block comes back
  EXPECT_EQ(second, first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % 64, 0u);
  const AllocatorStats during = cpu->stats();
  EXPECT_EQ(during.allocation_count, 2);
  EXPECT_EQ(during.active_allocations - before.active_allocations, 1);
  EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 60);  // cached memory is not in use
  cpu->deallocate(second, 60);
  EXPECT_EQ(cpu->stats().bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(cpu->stats().active_allocations, before.active_allocations);
}

TEST(SmallBlockCacheTest, LargeBlocksAndOtherClassesAreNotMixedUp) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  void* small = cpu->allocate(64);
  cpu->deallocate(small, 64);
  void* bigger = cpu->allocate(65);  // the 128-byte class must not get the 64-byte block
  EXPECT_NE(bigger, small);
  void* large = cpu->allocate(1 << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(large) % 64, 0u);
  cpu->deallocate(large, 1 << 20);
  cpu->deallocate(bigger, 65);
}

TEST(SmallBlockCacheTest, TensorsFreedOnAnotherThreadAndAfterItsExitAreSafe) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  const AllocatorStats before = cpu->stats();
  Tensor made_there;
  std::thread([&] {
    made_there = internal::make_tensor({3}, DType::kFloat32, kCPU);
    Tensor scratch = internal::make_tensor({5}, DType::kFloat32, kCPU);  // cached on that thread at exit
  }).join();
  made_there = Tensor();  // freed here, into this thread's cache
  EXPECT_EQ(cpu->stats().bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(cpu->stats().active_allocations, before.active_allocations);
}

// See Note [Allocator counters]: counts kept per thread add up, from live
// threads and finished ones, wherever a block is freed.
TEST(SmallBlockCacheTest, CountsOfLiveAndFinishedThreadsAddUp) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  cpu->reset_stats();
  const AllocatorStats before = cpu->stats();
  std::mutex mu;
  std::condition_variable cv;
  bool allocated = false, may_exit = false;
  std::vector<void*> blocks;
  std::thread worker([&] {
    for (int i = 0; i < 3; ++i) blocks.push_back(cpu->allocate(16));
    std::unique_lock<std::mutex> lock(mu);
    allocated = true;
    cv.notify_all();
    cv.wait(lock, [&] { return may_exit; });
    cpu->deallocate(blocks[0], 16);  // one freed there
  });
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return allocated; });
    const AllocatorStats live = cpu->stats();  // the worker's counters, read while it runs
    EXPECT_EQ(live.allocation_count - before.allocation_count, 3);
    EXPECT_EQ(live.active_allocations - before.active_allocations, 3);
    may_exit = true;
    cv.notify_all();
  }
  worker.join();
  AllocatorStats after = cpu->stats();  // the worker's counts, folded at its exit
  EXPECT_EQ(after.allocation_count - before.allocation_count, 3);
  EXPECT_EQ(after.active_allocations - before.active_allocations, 2);
  cpu->deallocate(blocks[1], 16);  // the others freed here
  cpu->deallocate(blocks[2], 16);
  after = cpu->stats();
  EXPECT_EQ(after.active_allocations, before.active_allocations);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  cpu->reset_stats();
  EXPECT_EQ(cpu->stats().allocation_count, 0);
}

}  // namespace
}  // namespace opspec
