#include "kernels/cpu/parallel_rows.h"

#include <omp.h>

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

namespace opspec::internal {
namespace parallel_rows_test {

TEST(ParallelRows, VisitsEveryRowOnce) {
  for (bool parallel : {false, true}) {
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      parallel_rows(n, parallel, [&](int64_t i) { seen[static_cast<size_t>(i)]++; });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << n << " rows, row " << i;
    }
  }
}

// Small work enters no OpenMP region at all, not even an inactive one (omp_get_level
// counts those; omp_in_parallel does not). See Note [No OpenMP region for small work].
TEST(ParallelRows, SerialWorkStaysOutOfOpenMp) {
  std::atomic<int> inside{0};
  parallel_rows(100, /*parallel=*/false, [&](int64_t) { inside += omp_get_level(); });
  parallel_rows(1, /*parallel=*/true, [&](int64_t) { inside += omp_get_level(); });
  parallel_rows_with(
      100, false, [] { return 0; }, [&](int64_t, int&) { inside += omp_get_level(); });
  EXPECT_EQ(inside, 0);
}

TEST(ParallelRows, EachThreadMakesOneScratch) {
  std::atomic<int> made{0};
  std::vector<int> owner(64, -1);
  parallel_rows_with(
      64, true, [&] { return ++made; }, [&](int64_t i, int& scratch) { owner[static_cast<size_t>(i)] = scratch; });
  EXPECT_GE(made, 1);
  EXPECT_LE(made, get_num_threads());
  for (int o : owner) EXPECT_TRUE(o >= 1 && o <= made) << o;
}

// parallel_row_ranges: consecutive, non-empty ranges covering every row once,
// serial ones as one range outside OpenMP.
TEST(ParallelRows, RangesCoverEveryRowOnceInOrder) {
  for (bool parallel : {false, true}) {
    for (int64_t n : {0, 1, 2, 3, 7, 9, 1000}) {
      std::vector<std::atomic<int>> seen(static_cast<size_t>(n));
      std::atomic<int> bad{0}, ranges{0}, level{0};
      parallel_row_ranges(
          n, parallel, [] { return 0; },
          [&](int64_t begin, int64_t end, int&) {
            if (begin < 0 || end > n || begin >= end) ++bad;
            for (int64_t i = begin; i < end; ++i) seen[static_cast<size_t>(i)]++;
            ++ranges;
            level += omp_get_level();
          });
      EXPECT_EQ(bad, 0);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(seen[static_cast<size_t>(i)], 1) << n << " rows, row " << i;
      if (!parallel) {
        EXPECT_EQ(ranges, n == 0 ? 0 : 1);
        EXPECT_EQ(level, 0);
      }
    }
  }
}

}  // namespace
}  // namespace opspec::internal
