#include "runtime/core/object_pool.h"

#include <new>
#include <utility>

namespace opspec::internal {
namespace {

// Note [Object pool]
// Every op makes at least one TensorImpl and one StorageImpl and usually frees
// as many: on a 1-element add, glibc's malloc and free of those two objects
// were a third of the instructions. Objects of up to kClasses * kClassBytes
// bytes are kept on per-thread free lists by size class (at most kPerClass
// each), as the CPU allocator keeps small data blocks (Note [Small block
// cache]), so steady-state ops make tensors without calling malloc. An object
// freed on another thread joins that thread's lists; lists beyond kPerClass
// and everything after the thread's pool is destroyed go back to the heap
// (unsized delete: clang builds without -fsized-deallocation).
constexpr size_t kClassBytes = 64;
constexpr size_t kClasses = 8;  // 64, 128, ..., 512 bytes
constexpr size_t kPerClass = 256;

struct ThreadPool {
  struct Node {
    Node* next;
  };
  Node* heads[kClasses] = {};
  size_t counts[kClasses] = {};
  bool destroyed = false;

  ~ThreadPool() {
    for (size_t c = 0; c < kClasses; ++c) {
      while (heads[c] != nullptr) ::operator delete(std::exchange(heads[c], heads[c]->next));
    }
    destroyed = true;
  }
};

thread_local ThreadPool pool;

}  // namespace

void* pooled_allocate(size_t nbytes) {
  const size_t cls = (nbytes - 1) / kClassBytes;
  if (cls >= kClasses) return ::operator new(nbytes);
  ThreadPool& p = pool;
  if (ThreadPool::Node* n = p.heads[cls]) {
    p.heads[cls] = n->next;
    --p.counts[cls];
    return n;
  }
  return ::operator new((cls + 1) * kClassBytes);
}

void pooled_deallocate(void* ptr, size_t nbytes) noexcept {
  const size_t cls = (nbytes - 1) / kClassBytes;
  if (cls >= kClasses) return ::operator delete(ptr);
  ThreadPool& p = pool;
  if (p.destroyed || p.counts[cls] == kPerClass) return ::operator delete(ptr);
  p.heads[cls] = new (ptr) ThreadPool::Node{p.heads[cls]};
  ++p.counts[cls];
}

}  // namespace opspec::internal
