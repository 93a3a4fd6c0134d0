#include "runtime/core/allocator.h"

#include <array>
#include <cstdlib>
#include <new>

#include "runtime/core/error.h"

namespace opspec {

AllocatorStats Allocator::stats() const {
  return {bytes_in_use_.load(std::memory_order_relaxed), peak_bytes_.load(std::memory_order_relaxed),
          allocation_count_.load(std::memory_order_relaxed),
          active_allocations_.load(std::memory_order_relaxed)};
}

void Allocator::reset_peak_stats() {
  peak_bytes_.store(bytes_in_use_.load(std::memory_order_relaxed), std::memory_order_relaxed);
}

void Allocator::reset_stats() {
  allocation_count_.store(0, std::memory_order_relaxed);
  reset_peak_stats();
}

void Allocator::record_alloc(size_t nbytes) {
  const int64_t now = bytes_in_use_.fetch_add(static_cast<int64_t>(nbytes), std::memory_order_relaxed) +
                      static_cast<int64_t>(nbytes);
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (now > peak && !peak_bytes_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
  allocation_count_.fetch_add(1, std::memory_order_relaxed);
  active_allocations_.fetch_add(1, std::memory_order_relaxed);
}

void Allocator::record_free(size_t nbytes) {
  bytes_in_use_.fetch_sub(static_cast<int64_t>(nbytes), std::memory_order_relaxed);
  active_allocations_.fetch_sub(1, std::memory_order_relaxed);
}

namespace {

constexpr size_t kAlignment = 64;

class CpuAllocator final : public Allocator {
 public:
  void* allocate(size_t nbytes) override {
    if (nbytes == 0) return nullptr;
    const size_t rounded = (nbytes + kAlignment - 1) / kAlignment * kAlignment;
    void* p = std::aligned_alloc(kAlignment, rounded);
    OPSPEC_CHECK(p != nullptr, "CPU out of memory: tried to allocate ", nbytes, " bytes");
    record_alloc(nbytes);
    return p;
  }
  void deallocate(void* ptr, size_t nbytes) override {
    if (ptr == nullptr) return;
    std::free(ptr);
    record_free(nbytes);
  }
};

// Meta tensors own no memory; the allocator never counts anything.
class MetaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override { return nullptr; }
  void deallocate(void*, size_t) override {}
};

class MissingCudaAllocator final : public Allocator {
 public:
  void* allocate(size_t) override {
    internal::throw_not_implemented(
        "CUDA requested but this build of opspec has no CUDA backend (or no device is available)");
  }
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

Allocator* get_allocator(DeviceType type) { return allocators()[static_cast<int>(type)]; }

void set_allocator(DeviceType type, Allocator* allocator) {
  OPSPEC_CHECK(allocator != nullptr, "set_allocator: allocator for ", device_type_name(type),
               " must not be null");
  allocators()[static_cast<int>(type)] = allocator;
}

}  // namespace opspec
