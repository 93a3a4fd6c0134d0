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
// lane i % kSumLanes; begin must be a multiple of kSumLanes, so a sum may be
// made of consecutive ranges (a row processed in chunks) in the same order.
template <class Acc, class F>
__attribute__((always_inline)) inline void fixed_lane_add(Acc (&acc)[kSumLanes], int64_t begin, int64_t end,
                                                          const F& term) {
  int64_t i = begin;
  for (; i + kSumLanes <= end; i += kSumLanes) {
#pragma GCC unroll 8
    for (int j = 0; j < kSumLanes; ++j) acc[j] += term(i + j);
  }
  for (int j = 0; i < end; ++i, ++j) acc[j] += term(i);
}

// fixed_lane_total: the lanes of acc combined pairwise, in one fixed order.
template <class Acc>
__attribute__((always_inline)) inline Acc fixed_lane_total(const Acc (&acc)[kSumLanes]) {
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// fixed_lane_sum: term(0) + ... + term(n - 1) in Acc, in the order above.
template <class Acc, class F>
__attribute__((always_inline)) inline Acc fixed_lane_sum(int64_t n, const F& term) {
  Acc acc[kSumLanes] = {};
  fixed_lane_add(acc, 0, n, term);
  return fixed_lane_total(acc);
}

}  // namespace opspec::internal
