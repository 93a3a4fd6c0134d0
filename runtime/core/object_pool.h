// object_pool.h: Pooled, a base that gives the runtime's small, hot objects
// (TensorImpl, StorageImpl, autograd's Nodes and metadata) per-thread free lists instead of malloc.
// See Note [Object pool].
#pragma once

#include <cstddef>

namespace opspec::internal {

// pooled_allocate: nbytes of memory (aligned for any object), from the calling
// thread's free list for nbytes' size class when it holds a block.
void* pooled_allocate(size_t nbytes);

// pooled_deallocate: returns what pooled_allocate(nbytes) gave to the calling
// thread's free list, or to the heap when that list is full.
void pooled_deallocate(void* p, size_t nbytes) noexcept;

// PoolAllocator: a standard allocator over the pool, for std::allocate_shared
// (an autograd Node and its shared_ptr control block in one pooled block).
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) {}  // NOLINT: rebinding, as std::allocator
  T* allocate(size_t n) { return static_cast<T*>(pooled_allocate(n * sizeof(T))); }
  void deallocate(T* p, size_t n) noexcept { pooled_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const { return true; }
};

// Pooled: derive from it to allocate a class's objects through the pool.
// The sized operator delete receives the most-derived size, so subclasses work.
struct Pooled {
  static void* operator new(size_t nbytes) { return pooled_allocate(nbytes); }
  static void operator delete(void* p, size_t nbytes) noexcept { pooled_deallocate(p, nbytes); }
};

}  // namespace opspec::internal
