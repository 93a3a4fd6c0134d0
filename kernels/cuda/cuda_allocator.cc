#include "kernels/cuda/cuda_allocator.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/cuda_device.h"

namespace opspec::internal::cuda {

// Note [CUDA caching allocator]
// A simplified PyTorch CUDACachingAllocator. Requests are rounded up to 512
// bytes (small pool, up to 1 MiB: every 512-byte size is its own class) or
// to 2 MiB (large pool), and a freed block goes to its device's free list
// instead of cudaFree; the next request of the same rounded size reuses it.
// Blocks are never split or merged, so a cached block serves exactly its
// size class. All work runs on one stream per device (See Note [CUDA streams]
// in cuda_device.h), so a block freed by one op may be reused by the next
// without events. When cudaMalloc runs out of memory the cache is emptied
// and the allocation retried once. The statistics count requested bytes, as
// the CPU allocator does: cached blocks are not "in use" (reserved_bytes()
// and cached_bytes() report what the cache holds).

size_t CudaCachingAllocator::round_size(size_t nbytes) {
  if (nbytes <= kSmallLimit) return (nbytes + kRound - 1) / kRound * kRound;
  return (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound;
}

void* CudaCachingAllocator::allocate_on(Device device, size_t nbytes) {
  const Device dev = require_device(device, "CUDA allocator");
  if (nbytes == 0) return nullptr;
  const size_t size = round_size(nbytes);
  const int index = dev.index;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.size() <= static_cast<size_t>(index)) free_.resize(static_cast<size_t>(index) + 1);
    auto& pool = free_[static_cast<size_t>(index)];
    if (auto it = pool.find(size); it != pool.end()) {
      void* p = it->second;
      pool.erase(it);
      cached_ -= static_cast<int64_t>(size);
      live_[p] = {size, index};
      record_alloc(nbytes);
      return p;
    }
  }
  DeviceGuard guard(dev);
  void* p = nullptr;
  cudaError_t err = cudaMalloc(&p, size);
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    empty_cache();
    err = cudaMalloc(&p, size);
  }
  if (err == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    OPSPEC_FAIL("CUDA out of memory: tried to allocate ", nbytes, " bytes on ", dev.str(), " (opspec holds ",
                reserved_bytes(), " bytes, ", cached_bytes(), " of them cached)");
  }
  check(err, str_cat("cudaMalloc of ", size, " bytes on ", dev.str()));
  std::lock_guard<std::mutex> lock(mu_);
  live_[p] = {size, index};
  reserved_ += static_cast<int64_t>(size);
  record_alloc(nbytes);
  return p;
}

void CudaCachingAllocator::deallocate(void* ptr, size_t nbytes) {
  if (ptr == nullptr) return;
  std::lock_guard<std::mutex> lock(mu_);
  auto it = live_.find(ptr);
  OPSPEC_INTERNAL_ASSERT(it != live_.end());
  const Block b = it->second;
  live_.erase(it);
  free_[static_cast<size_t>(b.device)].emplace(b.size, ptr);
  cached_ += static_cast<int64_t>(b.size);
  record_free(nbytes);
}

void CudaCachingAllocator::release_cached_locked() {
  for (size_t d = 0; d < free_.size(); ++d) {
    if (free_[d].empty()) continue;
    DeviceGuard guard(Device(DeviceType::kCUDA, static_cast<int8_t>(d)));
    // cudaFree waits for queued work, so no kernel still uses the block.
    for (const auto& [size, p] : free_[d]) {
      cudaFree(p);
      reserved_ -= static_cast<int64_t>(size);
      cached_ -= static_cast<int64_t>(size);
    }
    free_[d].clear();
  }
}

void CudaCachingAllocator::empty_cache() {
  std::lock_guard<std::mutex> lock(mu_);
  release_cached_locked();
}

int64_t CudaCachingAllocator::reserved_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return reserved_;
}

int64_t CudaCachingAllocator::cached_bytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cached_;
}

CudaCachingAllocator& cuda_allocator() {
  static CudaCachingAllocator* allocator = new CudaCachingAllocator();
  return *allocator;
}

}  // namespace opspec::internal::cuda
