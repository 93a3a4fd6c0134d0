// fixed_lane_sum.h: sums whose order does not depend on the vector width, for
// row kernels built in the wide clones. See Note [Fixed-lane sums].
#pragma once

#include <cstdint>

namespace opspec::internal {

// Note [Fixed-lane sums]
// `omp simd reduction(+ : s)` lets the compiler split a sum into as many
// partial sums as its vectors hold, so an AVX-512 build would round a row's
// sum differently from an AVX2 or SSE2 one, and a result would depend on the
// machine. Row kernels that run in the wide clones (See Note [Wide vector
// clones] in loops.h) add in kSumLanes explicit lanes instead (element i into
// lane i % kSumLanes, the tail continuing the same way), combined pairwise in
// one fixed order: every clone and every machine adds the same numbers in the
// same order, and the lanes still fill a vector of each width.
inline constexpr int kSumLanes = 8;

// fixed_lane_add: adds term(begin) ... term(end - 1) into acc, element i into
// lane i % kLanes; begin must be a multiple of kLanes, so a sum may be made of
// consecutive ranges (a row processed in chunks) in the same order. kLanes is
// kSumLanes unless a kernel says otherwise (a power of two up to 64).
template <class Acc, int kLanes, class F>
__attribute__((always_inline)) inline void fixed_lane_add(Acc (&acc)[kLanes], int64_t begin, int64_t end,
                                                          const F& term) {
  static_assert(kLanes >= 2 && kLanes <= 64 && (kLanes & (kLanes - 1)) == 0, "lanes: a power of two to 64");
  int64_t i = begin;
  for (; i + kLanes <= end; i += kLanes) {
#pragma GCC unroll 64
    for (int j = 0; j < kLanes; ++j) acc[j] += term(i + j);
  }
  for (int j = 0; i < end; ++i, ++j) acc[j] += term(i);
}

// fixed_lane_total: the lanes of acc combined pairwise, neighbours first, in
// one fixed order (for 8: ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7))).
template <class Acc, int kLanes>
__attribute__((always_inline)) inline Acc fixed_lane_total(const Acc (&acc)[kLanes]) {
  Acc t[kLanes];
  for (int j = 0; j < kLanes; ++j) t[j] = acc[j];
  for (int width = kLanes / 2; width >= 1; width /= 2) {
    for (int j = 0; j < width; ++j) t[j] = t[2 * j] + t[2 * j + 1];
  }
  return t[0];
}

// fixed_lane_sum: term(0) + ... + term(n - 1) in Acc, in the order above.
template <class Acc, int kLanes = kSumLanes, class F>
__attribute__((always_inline)) inline Acc fixed_lane_sum(int64_t n, const F& term) {
  Acc acc[kLanes] = {};
  fixed_lane_add(acc, 0, n, term);
  return fixed_lane_total(acc);
}

}  // namespace opspec::internal
