// object_pool.h: Pooled, a base that gives the runtime's small, hot objects
// (TensorImpl, StorageImpl) per-thread free lists instead of malloc.
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

// Pooled: derive from it to allocate a class's objects through the pool.
// The sized operator delete receives the most-derived size, so subclasses work.
struct Pooled {
  static void* operator new(size_t nbytes) { return pooled_allocate(nbytes); }
  static void operator delete(void* p, size_t nbytes) noexcept { pooled_deallocate(p, nbytes); }
};

}  // namespace opspec::internal
