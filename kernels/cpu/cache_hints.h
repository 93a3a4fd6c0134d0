// cache_hints.h: software prefetches and streaming stores, for kernels whose
// memory traffic would otherwise wait behind their arithmetic or fill the
// caches with output nobody reads soon. See Note [Prefetching ahead] and
// Note [Streaming stores].
#pragma once

#include <cstdint>

namespace opspec::internal {

// Note [Prefetching ahead]
// A row kernel (softmax, layer_norm) reads its row from memory once and then
// makes passes over it in L1/L2 (exp, sums, scaling). During those passes the
// memory bus idles: the hardware prefetcher follows the addresses the loop
// touches, and those are in cache. So a compute pass asks for the next row a
// chunk at a time (prefetch_chunk), and its read overlaps this row's
// arithmetic; the rows of one thread are consecutive (static schedule, or
// ranges of rows: parallel_row_ranges). A prefetch never faults and changes
// no value.

// kPrefetchChunk: elements a row kernel computes between two prefetch_chunk calls.
inline constexpr int64_t kPrefetchChunk = 512;

// prefetch_chunk: asks for elements [begin, end) of row `next` (of T) to be
// brought into the cache; a no-op for a null next (the last row).
template <class T>
__attribute__((always_inline)) inline void prefetch_chunk(const T* next, int64_t begin, int64_t end) {
  if (next == nullptr) return;
  const char* p = reinterpret_cast<const char*>(next + begin);
  const char* e = reinterpret_cast<const char*>(next + end);
  for (; p < e; p += 64) __builtin_prefetch(p, 0, 3);
}

// Note [Streaming stores]
// A plain store to a line that is not in cache first reads the line from
// memory (to own it), so writing n bytes of fresh output moves 2n bytes; a
// streaming (non-temporal) store writes whole lines without reading them and
// without evicting useful data. On the 2-core AVX-512 VM a 64 MiB relu loop ran at
// 26 GB/s with plain stores and at 40 GB/s streamed. The cost: the output is
// not in cache afterwards, so a consumer reads it from memory. Kernels
// therefore stream only outputs of kStreamMinBytes or more (larger than the
// L2s by far, a quarter of a 32 MiB L3 and more: mostly evicted before anyone
// reads them), and compute each tile or row in an L1 buffer first, then
// stream_copy it out, or compute and stream in one pass (stream_scale and
// stream_sub_sub, softmax's last operations: See Note [Softmax rows in flight]
// in softmax.cc). Streaming changes where bytes go, never their values.

// kStreamMinBytes: outputs at least this large are written with streaming stores.
inline constexpr int64_t kStreamMinBytes = int64_t{8} << 20;

// stream_copy: copies `bytes` bytes from src to dst (not overlapping) with
// streaming stores. Plain memcpy where the CPU has none. Streaming stores are
// weakly ordered: call stream_fence before the data is handed to another
// thread (before the end of a parallel task).
void stream_copy(void* dst, const void* src, int64_t bytes);

// stream_scale: dst[i] = src[i] * k for i < n; stream_sub_sub: dst[i] =
// (src[i] - a) - b. Each element is the one IEEE operation (or two) a plain
// loop does, written with streaming stores (64-byte ones where the CPU has
// AVX-512), so a kernel can finish a row and stream it out in one pass.
void stream_scale(float* dst, const float* src, float k, int64_t n);
void stream_sub_sub(float* dst, const float* src, float a, float b, int64_t n);

// stream_fence: orders this thread's earlier streaming stores before its later stores.
void stream_fence();

}  // namespace opspec::internal
