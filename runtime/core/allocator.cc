#include "runtime/core/allocator.h"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <limits>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

#ifdef __linux__
#include <sys/sysinfo.h>
#endif

#include "runtime/core/device_hooks.h"
#include "runtime/core/error.h"
#include "runtime/core/internal/free_lists.h"

namespace opspec {

// Note [Allocator counters]
// Every tensor allocation updates the counters, so they cost what a 1-element
// op can afford. Bytes in use are one shared atomic (its running value gives
// the peak, which is written only when it grows). The allocation and free
// counts are kept per thread, in counters only their thread writes (a load
// and a store, not a locked add: locked instructions were a visible part of
// small ops), and summed when stats() is read; a finished thread's counts
// are folded into a total. Allocators past kCounterSlots, and a thread whose
// counters are already gone (frees during its exit), use shared atomics.
// active_allocations and allocation_count are derived from the running totals.

namespace {

constexpr int kCounterSlots = 32;

struct ThreadCounts;

// CountRegistry: the live threads' counters and the folded counts of finished ones.
struct CountRegistry {
  std::mutex mu;
  std::vector<ThreadCounts*> live;
  int64_t finished_allocs[kCounterSlots] = {};
  int64_t finished_frees[kCounterSlots] = {};
};
CountRegistry& count_registry() {
  static CountRegistry* r = new CountRegistry();  // never destroyed: threads may exit during static destruction
  return *r;
}

constinit thread_local bool tls_counts_gone = false;

struct ThreadCounts {
  std::atomic<int64_t> allocs[kCounterSlots] = {};
  std::atomic<int64_t> frees[kCounterSlots] = {};
  ThreadCounts() {
    CountRegistry& r = count_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    r.live.push_back(this);
  }
  ~ThreadCounts() {
    CountRegistry& r = count_registry();
    std::lock_guard<std::mutex> lock(r.mu);
    for (int i = 0; i < kCounterSlots; ++i) {
      r.finished_allocs[i] += allocs[i].load(std::memory_order_relaxed);
      r.finished_frees[i] += frees[i].load(std::memory_order_relaxed);
    }
    std::erase(r.live, this);
    tls_counts_gone = true;
  }
};
thread_local ThreadCounts tls_counts;

// bump: adds one to a counter only this thread writes.
void bump(std::atomic<int64_t>& c) { c.store(c.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed); }

// summed: a slot's per-thread allocation (or free) counts, over finished and live threads.
int64_t summed(int slot, bool frees) {
  CountRegistry& r = count_registry();
  std::lock_guard<std::mutex> lock(r.mu);
  int64_t n = frees ? r.finished_frees[slot] : r.finished_allocs[slot];
  for (const ThreadCounts* t : r.live) n += (frees ? t->frees[slot] : t->allocs[slot]).load(std::memory_order_relaxed);
  return n;
}

std::atomic<int> next_counter_slot{0};

}  // namespace

Allocator::Allocator() {
  const int slot = next_counter_slot.fetch_add(1, std::memory_order_relaxed);
  counter_slot_ = slot < kCounterSlots ? slot : -1;
}

int64_t Allocator::total_allocs() const {
  const int64_t shared = allocs_.load(std::memory_order_relaxed);
  return counter_slot_ < 0 ? shared : shared + summed(counter_slot_, /*frees=*/false);
}

int64_t Allocator::total_frees() const {
  const int64_t shared = frees_.load(std::memory_order_relaxed);
  return counter_slot_ < 0 ? shared : shared + summed(counter_slot_, /*frees=*/true);
}

AllocatorStats Allocator::stats() const {
  const int64_t allocs = total_allocs();
  const int64_t frees = total_frees();
  return {bytes_in_use_.load(std::memory_order_relaxed), peak_bytes_.load(std::memory_order_relaxed),
          allocs - allocs_at_reset_.load(std::memory_order_relaxed), allocs - frees};
}

void Allocator::reset_peak_stats() {
  peak_bytes_.store(bytes_in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Allocator::reset_stats() {
  allocs_at_reset_.store(total_allocs(), std::memory_order_relaxed);
  reset_peak_stats();
}

void Allocator::record_alloc(size_t nbytes) {
  const int64_t now = bytes_in_use_.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(nbytes);
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  if (counter_slot_ >= 0 && !tls_counts_gone) {
    bump(tls_counts.allocs[counter_slot_]);
  } else {
    allocs_.fetch_add(1, std::memory_order_relaxed);
  }
}

void Allocator::record_free(size_t nbytes) {
  bytes_in_use_.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  if (counter_slot_ >= 0 && !tls_counts_gone) {
    bump(tls_counts.frees[counter_slot_]);
  } else {
    frees_.fetch_add(1, std::memory_order_relaxed);
  }
}

namespace {

// Note [Large block cache]
// An elementwise op on 4M floats allocates a 16 MB output. Left to glibc, a
// block that size is mmap'ed and unmapped again on free, or trimmed off the
// heap top, unless glibc's dynamic thresholds happen to keep it; every reuse
// then faults 4096 fresh pages in and has the kernel zero them. That is
// fragile: the same binary measured 14 ms or 52 ms for issue 7's ten-op
// chain (30k page faults per call) depending on the heap's history, and a
// compiled MLP training step, whose 128 KiB activations were mmap'ed afresh
// each call, took 250 faults a step and 1.6x eager's time. So blocks of at
// least kLargeMin bytes (glibc's default mmap threshold), rounded up to kLargeRound, are kept after free
// in one process-wide cache (they are often freed on another thread) and
// handed out again for the same rounded size, most recently freed first. At
// most cpu_cache_limit() bytes are kept; past it the oldest blocks go back
// to glibc. Like the small block cache, cached memory is not "in use":
// Allocator::cached_bytes() reports it and empty_cache() releases it.

constexpr size_t kAlignment = 64;

// Note [Small block cache]
// A 1-element op allocates a 64-byte block and frees one; glibc serves
// aligned_alloc through its slow memalign path (hundreds of instructions, and
// free then consolidates). Blocks of up to kSmallClasses * 64 bytes are kept
// on per-thread free lists by size class instead (at most kCachedPerClass
// each), so steady-state small ops reuse memory without touching malloc. The
// counters still count every allocate and deallocate: cached memory is not
// "in use". A block freed on another thread joins that thread's lists.
constexpr size_t kSmallClasses = 8;    // 64, 128, ..., 512 bytes
constexpr size_t kCachedPerClass = 64;

struct Free {
  void operator()(void* p) const { std::free(p); }
};

// Tensors that outlive the thread's cache (statics freed at exit) bypass it.
thread_local internal::FreeLists<kSmallClasses, kCachedPerClass, Free> small_blocks;

constexpr size_t kLargeMin = size_t{128} << 10;  // glibc's default mmap threshold
constexpr size_t kLargeRound = size_t{64} << 10;
constexpr size_t kDefaultCpuCacheLimit = size_t{256} << 20;

// LargeBlockCache: freed large blocks, oldest first (See Note [Large block cache]).
class LargeBlockCache {
 public:
  // take: a cached block of exactly `size` bytes, or null.
  void* take(size_t size) {
    std::lock_guard<std::mutex> lock(mu_);
    for (size_t i = blocks_.size(); i-- > 0;) {
      if (blocks_[i].size != size) continue;
      void* p = blocks_[i].ptr;
      blocks_.erase(blocks_.begin() + static_cast<std::ptrdiff_t>(i));
      cached_ -= size;
      return p;
    }
    return nullptr;
  }
  // keep: caches p, then frees the oldest blocks until the limit holds.
  void keep(void* p, size_t size) {
    std::vector<void*> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      blocks_.push_back({p, size});
      cached_ += size;
      trim_locked(limit_, released);
    }
    for (void* q : released) std::free(q);
  }
  // set_limit: keeps at most `limit` bytes from now on.
  void set_limit(size_t limit) {
    std::vector<void*> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      limit_ = limit;
      trim_locked(limit_, released);
    }
    for (void* q : released) std::free(q);
  }
  size_t limit() const {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  void empty() {
    std::vector<void*> released;
    {
      std::lock_guard<std::mutex> lock(mu_);
      trim_locked(0, released);
    }
    for (void* q : released) std::free(q);
  }
  int64_t cached() const {
    std::lock_guard<std::mutex> lock(mu_);
    return static_cast<int64_t>(cached_);
  }

 private:
  struct Block {
    void* ptr;
    size_t size;
  };
  void trim_locked(size_t limit, std::vector<void*>& released) {
    size_t drop = 0;
    while (cached_ > limit && drop < blocks_.size()) {
      cached_ -= blocks_[drop].size;
      released.push_back(blocks_[drop++].ptr);
    }
    blocks_.erase(blocks_.begin(), blocks_.begin() + static_cast<std::ptrdiff_t>(drop));
  }

  mutable std::mutex mu_;
  std::vector<Block> blocks_;  // a few dozen at most: a linear scan is cheap next to a 1 MB block
  size_t cached_ = 0;
  size_t limit_ = kDefaultCpuCacheLimit;
};

// large_blocks: never destroyed, since tensors may be freed during static destruction.
LargeBlockCache& large_blocks() {
  static LargeBlockCache* cache = new LargeBlockCache();
  return *cache;
}

size_t large_block_size(size_t nbytes) { return (nbytes + kLargeRound - 1) / kLargeRound * kLargeRound; }

// Note [Allocations larger than memory]
// Linux's default (heuristic) overcommit refuses one allocation larger than
// RAM plus swap, but under vm.overcommit_memory=1 (common in containers and
// VMs; the GPU machines ci/gpu-run uses) malloc grants any size and the
// kernel kills the process when a fill touches the pages: `ones([2**40])`
// was an OOM kill there and an error here. The CPU allocator makes the
// heuristic's check itself, so such a request is an error on every machine.
size_t memory_and_swap_bytes() {
  static const size_t total = [] {
#ifdef __linux__
    struct sysinfo si {};
    if (sysinfo(&si) == 0 && si.mem_unit > 0) {
      return static_cast<size_t>(si.totalram + si.totalswap) * si.mem_unit;
    }
#endif
    return std::numeric_limits<size_t>::max();
  }();
  return total;
}

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    void* p;
    if (nbytes >= kLargeMin) {
      // See Note [Allocations larger than memory].
      OPSPEC_CHECK(nbytes <= memory_and_swap_bytes(), "CPU out of memory: tried to allocate ", nbytes,
                   " bytes, more than this machine's ", memory_and_swap_bytes(), " bytes of memory and swap");
      const size_t size = large_block_size(nbytes);
      p = large_blocks().take(size);
      if (p == nullptr) p = std::aligned_alloc(kAlignment, size);
    } else {
      const size_t cls = (nbytes - 1) / kAlignment;  // size class: rounded up to 64 bytes
      p = cls < kSmallClasses ? small_blocks.take(cls) : nullptr;
      if (p == nullptr) p = std::aligned_alloc(kAlignment, (cls + 1) * kAlignment);
    }
    OPSPEC_CHECK(p != nullptr, "CPU out of memory: tried to allocate ", nbytes, " bytes");
    record_alloc(nbytes);
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
    record_free(nbytes);
    if (nbytes >= kLargeMin) {
      large_blocks().keep(ptr, large_block_size(nbytes));
      return;
    }
    const size_t cls = (nbytes - 1) / kAlignment;
    if (cls >= kSmallClasses || !small_blocks.keep(ptr, cls)) std::free(ptr);
  }
  int64_t cached_bytes() const override { return large_blocks().cached(); }
  void empty_cache() override { large_blocks().empty(); }
};

// Meta tensors own no memory; the allocator never counts anything.
class MetaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*, size_t) override {}
};

// The CUDA backend replaces it when built (See Note [Device seam]).
class MissingCudaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override { internal::throw_not_implemented(std::string(kNoCudaBackendMessage)); }
  void deallocate(void*, size_t) override {}
};

// One static (one initialization check per call): every storage asks for its allocator.
struct Allocators {
  CpuAllocator cpu;
  MetaAllocator meta;
  MissingCudaAllocator cuda;
  std::array<Allocator*, kNumDeviceTypes> table = {&cpu, &meta, &cuda};
};

std::array<Allocator*, kNumDeviceTypes>& allocators() {
  static Allocators all;
  return all.table;
}

}  // namespace

Allocator* get_allocator(DeviceType type) {
  if (type == DeviceType::kCUDA) internal::ensure_device_runtimes();
  return allocators()[static_cast<int>(type)];
}

void set_allocator(DeviceType type, Allocator* allocator) {
  OPSPEC_CHECK(allocator != nullptr, "set_allocator: allocator for ", device_type_name(type),
               " must not be null");
  // A backend installing its allocator later must not undo this one.
  if (type == DeviceType::kCUDA) internal::ensure_device_runtimes();
  internal::install_allocator(type, allocator);
}

size_t cpu_cache_limit() { return large_blocks().limit(); }

void set_cpu_cache_limit(size_t bytes) { large_blocks().set_limit(bytes); }

namespace internal {
void install_allocator(DeviceType type, Allocator* allocator) { allocators()[static_cast<int>(type)] = allocator; }
}  // namespace internal

}  // namespace opspec
