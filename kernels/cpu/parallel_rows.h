// parallel_rows.h: row loops split over OpenMP threads only when the work is
// large. See Note [No OpenMP region for small work].
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>

#include "runtime/core/parallel.h"

namespace opspec::internal {

// Note [No OpenMP region for small work]
// `#pragma omp parallel for if (n >= grain)` still enters libgomp when the
// condition is false: it runs a team of one and ends it with a futex call,
// 2 us natively and 30 us on a loaded VM, for every small op. The spec suite
// made 1,900 such calls, 60 ms of a 0.2 s run. So no kernel writes an `if`
// clause: element loops call parallel_for (loops.h), which enters OpenMP
// only at `grain` elements, and row loops call parallel_rows, which enters
// it only when the caller says the op is large. The same holds for the
// harness's hashes (tensor_hash.cc).

// kParallelGrain: elements (multiply-adds for the integer gemm) below which
// a kernel's loops stay on the calling thread; one value for every kernel.
inline constexpr int64_t kParallelGrain = 32768;

// parallel_rows: f(i) for every i in [0, n): over OpenMP threads (static
// schedule) when parallel and n > 1, else a plain loop on this thread.
template <class F>
void parallel_rows(int64_t n, bool parallel, F&& f) {
  if (!parallel || n < 2) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for schedule(static) num_threads(get_num_threads())
  for (int64_t i = 0; i < n; ++i) f(i);
}

// parallel_rows_with: parallel_rows where each thread first makes its own
// scratch (make_scratch()) and f(i, scratch) reuses it across rows.
template <class MakeScratch, class F>
void parallel_rows_with(int64_t n, bool parallel, MakeScratch&& make_scratch, F&& f) {
  if (!parallel || n < 2) {
    auto scratch = make_scratch();
    for (int64_t i = 0; i < n; ++i) f(i, scratch);
    return;
  }
#pragma omp parallel num_threads(get_num_threads())
  {
    auto scratch = make_scratch();
#pragma omp for schedule(static)
    for (int64_t i = 0; i < n; ++i) f(i, scratch);
  }
}

// parallel_row_ranges: f(begin, end, scratch) over consecutive ranges of
// rows covering [0, n), for kernels that carry work from one row to the next
// (See Note [Softmax rows in flight] in softmax.cc). Threads claim the ranges
// in order from a shared counter, kRangesPerThread each, so a thread that is
// descheduled on a shared machine holds up little (as in Note [parallel_for
// chunks] in loops.cc); each thread makes its own scratch once.
template <class MakeScratch, class F>
void parallel_row_ranges(int64_t n, bool parallel, MakeScratch&& make_scratch, F&& f) {
  if (n <= 0) return;
  const int64_t threads = parallel ? std::min<int64_t>(get_num_threads(), n) : 1;
  if (threads < 2) {
    auto scratch = make_scratch();
    f(int64_t{0}, n, scratch);
    return;
  }
  constexpr int64_t kRangesPerThread = 4;
  const int64_t len = (n + threads * kRangesPerThread - 1) / (threads * kRangesPerThread);
  const int64_t ranges = (n + len - 1) / len;
  std::atomic<int64_t> next{0};
#pragma omp parallel num_threads(static_cast<int>(threads))
  {
    auto scratch = make_scratch();
    for (int64_t r = next.fetch_add(1, std::memory_order_relaxed); r < ranges;
         r = next.fetch_add(1, std::memory_order_relaxed)) {
      f(r * len, std::min(n, (r + 1) * len), scratch);
    }
  }
}

}  // namespace opspec::internal
