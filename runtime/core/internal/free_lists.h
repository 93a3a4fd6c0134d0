// free_lists.h: internal: FreeLists, per-size-class free lists of raw blocks,
// the mechanism behind the object pool (Note [Object pool]) and the CPU
// allocator's small block cache (Note [Small block cache]).
#pragma once

#include <cstddef>
#include <new>
#include <utility>

namespace opspec::internal {

// FreeLists: kClasses singly linked lists of freed blocks, at most kPerClass
// each, threaded through the blocks themselves. Meant to be thread_local:
// nothing is synchronized. Release{}(p) returns a block to where it came from,
// for the blocks left when the lists are destroyed (and by the caller for
// blocks keep refuses).
template <size_t kClasses, size_t kPerClass, class Release>
struct FreeLists {
  struct Node {
    Node* next;
  };
  Node* heads[kClasses] = {};
  size_t counts[kClasses] = {};
  // destroyed: the thread's lists are gone (blocks freed during static
  // destruction after them must bypass them).
  bool destroyed = false;

  // take: a kept block of class cls, or null.
  void* take(size_t cls) {
    Node* n = heads[cls];
    if (n == nullptr) return nullptr;
    heads[cls] = n->next;
    --counts[cls];
    return n;
  }
  // keep: keeps block p of class cls; false when that list is full or the lists are gone.
  bool keep(void* p, size_t cls) {
    if (destroyed || counts[cls] == kPerClass) return false;
    heads[cls] = new (p) Node{heads[cls]};
    ++counts[cls];
    return true;
  }
  ~FreeLists() {
    for (Node*& head : heads) {
      while (head != nullptr) Release{}(std::exchange(head, head->next));
    }
    destroyed = true;
  }
};

}  // namespace opspec::internal
