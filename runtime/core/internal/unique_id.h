// unique_id.h: internal: next_unique_id<Tag>(), process-unique nonzero ids for
// objects made on hot paths (tensor uids, tracer ids).
#pragma once

#include <atomic>
#include <cstdint>

namespace opspec::internal {

// next_unique_id: an id no other call with the same Tag returns. Threads take
// ids from the shared counter in blocks of 1024, so the hot path costs one
// atomic add per block instead of one per id.
template <class Tag>
uint64_t next_unique_id() {
  static std::atomic<uint64_t> next_block{1};
  constexpr uint64_t kBlock = 1024;
  thread_local uint64_t next = 0, end = 0;
  if (next == end) {
    next = next_block.fetch_add(kBlock, std::memory_order_relaxed);
    end = next + kBlock;
  }
  return next++;
}

}  // namespace opspec::internal
