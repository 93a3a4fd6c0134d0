// cuda_allocator.h: CudaCachingAllocator, the allocator of cuda tensors: it
// keeps freed device blocks for reuse (cudaMalloc and cudaFree synchronize
// the device and cost microseconds) and counts like every Allocator, so
// DebugMode's memory hook works on cuda. See Note [CUDA caching allocator].
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/core/allocator.h"

namespace opspec::internal::cuda {

// CudaCachingAllocator: per-device pools of cached blocks, sizes rounded up.
class CudaCachingAllocator final : public Allocator {
 public:
  // kRound: every block is a multiple of 512 bytes.
  static constexpr size_t kRound = 512;
  // kSmallLimit: requests up to 1 MiB come from the small pool (exact size
  // classes); larger ones are rounded up to kLargeRound.
  static constexpr size_t kSmallLimit = size_t{1} << 20;
  static constexpr size_t kLargeRound = size_t{2} << 20;

  // allocate: nbytes on cuda:0.
  void* allocate(size_t nbytes) override { return allocate_on(Device(DeviceType::kCUDA, 0), nbytes); }
  // allocate_on: nbytes on device (cuda:N), from the cache when a block of
  // the rounded size is free, else cudaMalloc (after emptying the cache if
  // the device is full). Throws without a device or for a bad index.
  void* allocate_on(Device device, size_t nbytes) override;
  // deallocate: returns the block to its device's cache.
  void deallocate(void* ptr, size_t nbytes) override;

  // empty_cache: cudaFree every cached (free) block.
  void empty_cache() override;
  // reserved_bytes: device memory held, in use or cached, on every device.
  int64_t reserved_bytes() const;
  // cached_bytes: device memory held in free blocks.
  int64_t cached_bytes() const override;

  // round_size: the block size a request of nbytes gets.
  static size_t round_size(size_t nbytes);

 private:
  struct Block {
    size_t size;
    int device;
  };
  void release_cached_locked();

  mutable std::mutex mu_;
  // free_[device]: cached blocks by size.
  std::vector<std::multimap<size_t, void*>> free_;
  std::unordered_map<void*, Block> live_;
  int64_t reserved_ = 0;
  int64_t cached_ = 0;
};

// cuda_allocator: the process's one caching allocator (never destroyed:
// tensors may be freed during static destruction).
CudaCachingAllocator& cuda_allocator();

}  // namespace opspec::internal::cuda
