#include "runtime/core/object_pool.h"

#include <new>

#include "runtime/core/internal/free_lists.h"

namespace opspec::internal {
namespace {

// Note [Object pool]
// Every op makes at least one TensorImpl and one StorageImpl and usually frees
// as many: on a 1-element add, glibc's malloc and free of those two objects
// were a third of the instructions. Objects of up to kClasses * kClassBytes
// bytes are kept on per-thread free lists by size class (at most kPerClass
// each), as the CPU allocator keeps small data blocks (Note [Small block
// cache]), so steady-state ops make tensors without calling malloc; autograd's
// Nodes (with their shared_ptr control blocks) and AutogradMeta come from the
// same lists, so recording history does not call malloc either. An object
// freed on another thread joins that thread's lists; lists beyond kPerClass
// and everything after the thread's pool is destroyed go back to the heap
// (unsized delete: clang builds without -fsized-deallocation).
constexpr size_t kClassBytes = 64;
constexpr size_t kClasses = 20;  // 64, 128, ..., 1280 bytes (an autograd FormulaNode is ~1.1 KB)
constexpr size_t kPerClass = 256;

struct OperatorDelete {
  void operator()(void* p) const { ::operator delete(p); }
};

thread_local FreeLists<kClasses, kPerClass, OperatorDelete> pool;

}  // namespace

void* pooled_allocate(size_t nbytes) {
  const size_t cls = (nbytes - 1) / kClassBytes;
  if (cls >= kClasses) return ::operator new(nbytes);
  if (void* p = pool.take(cls)) return p;
  return ::operator new((cls + 1) * kClassBytes);
}

void pooled_deallocate(void* ptr, size_t nbytes) noexcept {
  const size_t cls = (nbytes - 1) / kClassBytes;
  if (cls >= kClasses || !pool.keep(ptr, cls)) ::operator delete(ptr);
}

}  // namespace opspec::internal
