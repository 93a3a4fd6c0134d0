// allocator.h: Allocator, one per device type, with statistics a test or a
// DebugMode hook can read and reset.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "runtime/core/device.h"

namespace opspec {

// AllocatorStats: a snapshot of an allocator's counters.
struct AllocatorStats {
  int64_t bytes_in_use = 0;        // bytes currently allocated
  int64_t peak_bytes = 0;          // high-water mark of bytes_in_use since the last reset
  int64_t allocation_count = 0;    // allocations made since the last reset
  int64_t active_allocations = 0;  // allocations not yet freed
};

// Allocator: hands out raw memory for a device and counts it.
// Meta allocations have size but no memory: their statistics stay at zero so a
// test can prove that a fake or meta run allocated no data.
class Allocator {
 public:
  Allocator();
  virtual ~Allocator() = default;

  // allocate: nbytes of memory aligned to 64 bytes (nullptr for zero bytes).
  virtual void* allocate(size_t nbytes) = 0;
  // allocate_on: nbytes on one device of this allocator's type (cuda:1); the
  // default ignores the index (cpu and meta have one device each).
  virtual void* allocate_on(Device /*device*/, size_t nbytes) { return allocate(nbytes); }
  // deallocate: frees what allocate or allocate_on returned; nbytes must match.
  virtual void deallocate(void* ptr, size_t nbytes) = 0;

  // cached_bytes: memory this allocator keeps for reuse, freed but not returned
  // to the system (not part of bytes_in_use).
  virtual int64_t cached_bytes() const { return 0; }
  // empty_cache: returns the cached memory to the system (torch.cuda.empty_cache()).
  virtual void empty_cache() {}

  // stats: the current counters.
  AllocatorStats stats() const;
  // reset_peak_stats: sets peak_bytes to the bytes in use now.
  void reset_peak_stats();
  // reset_stats: zeroes allocation_count and resets the peak (bytes in use are kept:
  // they describe live memory).
  void reset_stats();

 protected:
  void record_alloc(size_t nbytes);
  void record_free(size_t nbytes);

 private:
  // total_allocs / total_frees: allocations ever made and freed, on every thread.
  int64_t total_allocs() const;
  int64_t total_frees() const;

  // One atomic add per allocation and per free (See Note [Allocator counters]).
  std::atomic<int64_t> bytes_in_use_{0};
  std::atomic<int64_t> peak_bytes_{0};
  int counter_slot_;                     // this allocator's per-thread counters, or -1: allocs_ and frees_
  std::atomic<int64_t> allocs_{0};       // allocations ever made (or made after a thread's counters went)
  std::atomic<int64_t> frees_{0};        // allocations ever freed (likewise)
  std::atomic<int64_t> allocs_at_reset_{0};
};

// get_allocator: the allocator for a device type. CUDA's throws unless the CUDA
// backend is built (See Note [Device seam] in runtime/core/device_hooks.h).
Allocator* get_allocator(DeviceType type);

// set_allocator: replaces a device type's allocator (backends and tests).
// The previous allocator must outlive every tensor it allocated.
void set_allocator(DeviceType type, Allocator* allocator);

// cpu_cache_limit: the most bytes of freed large CPU blocks kept for reuse
// (256 MiB unless set; See Note [Large block cache] in allocator.cc).
size_t cpu_cache_limit();
// set_cpu_cache_limit: changes it; 0 turns the cache off. Excess blocks are freed at once.
void set_cpu_cache_limit(size_t bytes);

namespace internal {
// install_allocator: set_allocator for a backend's own allocator, from
// install_device_runtimes (See Note [Device seam] in runtime/core/device_hooks.h).
void install_allocator(DeviceType type, Allocator* allocator);
}  // namespace internal

}  // namespace opspec
