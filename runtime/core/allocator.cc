#include "runtime/core/allocator.h"

#include <array>
#include <cstdlib>
#include <new>
#include <utility>

#include "runtime/core/device_hooks.h"
#include "runtime/core/error.h"

namespace opspec {

// Note [Allocator counters]
// Every tensor allocation updates the counters, so they cost what a 1-element
// op can afford: an allocation is two atomic adds (bytes, allocations) and a
// peak check that writes only when the peak grows; a free is two adds.
// active_allocations and allocation_count are derived from the running totals.

AllocatorStats Allocator::stats() const {
  const int64_t allocs = allocs_.load(std::memory_order_relaxed);
  return {bytes_in_use_.load(std::memory_order_relaxed), peak_bytes_.load(std::memory_order_relaxed),
          allocs - allocs_at_reset_.load(std::memory_order_relaxed),
          allocs - frees_.load(std::memory_order_relaxed)};
}

void Allocator::reset_peak_stats() {
  peak_bytes_.store(bytes_in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Allocator::reset_stats() {
  allocs_at_reset_.store(allocs_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  reset_peak_stats();
}

void Allocator::record_alloc(size_t nbytes) {
  const int64_t now = bytes_in_use_.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(nbytes);
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  allocs_.fetch_add(1, std::memory_order_relaxed);
}

void Allocator::record_free(size_t nbytes) {
  bytes_in_use_.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  frees_.fetch_add(1, std::memory_order_relaxed);
}

namespace {

// Note [Large blocks are glibc's]
// Large blocks (an elementwise op's 16 MB output) are not cached: glibc already
// reuses them. The first free of an mmap'ed block raises its mmap threshold to
// that size (up to 32 MB), so later blocks of that size come from the heap and
// are reused without faulting pages in again. Issue 7's ten-op chain on 4M
// floats allocates 40960 pages per call and faults about 1000 of them (perf
// stat), under 5% of its time; a cache would only add memory that
// bytes_in_use does not show.

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

struct SmallBlockCache {
  struct Node {
    Node* next;
  };
  Node* heads[kSmallClasses] = {};
  size_t counts[kSmallClasses] = {};
  // Tensors that outlive the thread's cache (statics freed at exit) bypass it.
  bool destroyed = false;

  // take: a cached block of class cls, or null.
  void* take(size_t cls) {
    Node* n = heads[cls];
    if (n == nullptr) return nullptr;
    heads[cls] = n->next;
    --counts[cls];
    return n;
  }
  // keep: caches block p of class cls; false when that list is full or the cache is gone.
  bool keep(void* p, size_t cls) {
    if (destroyed || counts[cls] == kCachedPerClass) return false;
    heads[cls] = new (p) Node{heads[cls]};
    ++counts[cls];
    return true;
  }
  ~SmallBlockCache() {
    for (Node*& head : heads) {
      while (head != nullptr) std::free(std::exchange(head, head->next));
    }
    destroyed = true;
  }
};

thread_local SmallBlockCache small_blocks;

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    const size_t cls = (nbytes - 1) / kAlignment;  // size class: rounded up to 64 bytes
    void* p = cls < kSmallClasses ? small_blocks.take(cls) : nullptr;
    if (p == nullptr) {
      p = std::aligned_alloc(kAlignment, (cls + 1) * kAlignment);
      OPSPEC_CHECK(p != nullptr, "CPU out of memory: tried to allocate ", nbytes, " bytes");
    }
    record_alloc(nbytes);
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
    record_free(nbytes);
    const size_t cls = (nbytes - 1) / kAlignment;
    if (cls >= kSmallClasses || !small_blocks.keep(ptr, cls)) std::free(ptr);
  }
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

std::array<Allocator*, kNumDeviceTypes>& allocators() {
  static CpuAllocator cpu;
  static MetaAllocator meta;
  static MissingCudaAllocator cuda;
  static std::array<Allocator*, kNumDeviceTypes> table = {&cpu, &meta, &cuda};
  return table;
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

namespace internal {
void install_allocator(DeviceType type, Allocator* allocator) { allocators()[static_cast<int>(type)] = allocator; }
}  // namespace internal

}  // namespace opspec
