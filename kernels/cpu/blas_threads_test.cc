// Tests of the threaded products: blocks of rows or columns on the OpenMP
// threads, the same bits for any thread count, and no OpenBLAS thread pool.
// See Note [One thread pool for products] in blas.cc.
#include <dirent.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/gemm.h"
#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace blas_threads_test {

using internal::make_view;

Tensor random(IntArrayRef shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> v(static_cast<size_t>(compute_numel(shape)));
  for (double& x : v) x = dist(gen);
  return ops::tensor(v, shape, dtype);
}

Tensor transposed(const Tensor& t) {
  return make_view(t, {t.sizes()[1], t.sizes()[0]}, {t.strides()[1], t.strides()[0]}, t.storage_offset());
}

// max_error: the largest |mm(a, b) - a @ b in double| over the elements.
double max_error(const Tensor& got, const Tensor& a, const Tensor& b) {
  const int64_t n = a.sizes()[0], k = a.sizes()[1], m = b.sizes()[1];
  const std::vector<double> av = ops::contiguous(a).to_vector<double>(), bv = ops::contiguous(b).to_vector<double>();
  const std::vector<double> c = got.to_vector<double>();
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += av[i * k + kk] * bv[kk * m + j];
      worst = std::max(worst, std::abs(c[i * m + j] - s));
    }
  }
  return worst;
}

// Products above 2^21 multiply-adds: many rows (row blocks), few rows and
// many columns (column blocks), and each with transposed operands.
struct Shape {
  int64_t n, k, m;
};
const Shape kLargeShapes[] = {{200, 150, 100}, {16, 300, 500}, {130, 129, 131}};

TEST(ThreadedMmTest, BlocksAgreeWithTheProductInEveryLayout) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const double tol = dt == DType::kFloat32 ? 1e-3 : 1e-10;
    for (const Shape& s : kLargeShapes) {
      SCOPED_TRACE(testing::Message() << dtype_short_name(dt) << " " << s.n << "x" << s.k << "x" << s.m);
      const Tensor a = random({s.n, s.k}, dt, 1), b = random({s.k, s.m}, dt, 2);
      const Tensor at = transposed(random({s.k, s.n}, dt, 3)), bt = transposed(random({s.m, s.k}, dt, 4));
      EXPECT_LT(max_error(ops::mm(a, b), a, b), tol);
      EXPECT_LT(max_error(ops::mm(at, b), at, b), tol);
      EXPECT_LT(max_error(ops::mm(a, bt), a, bt), tol);
      EXPECT_LT(max_error(ops::mm(at, bt), at, bt), tol);
    }
  }
}

TEST(ThreadedMmTest, TheBitsDoNotDependOnTheThreadCount) {
  const Tensor a = random({200, 150}, DType::kFloat32, 5), b = random({150, 100}, DType::kFloat32, 6);
  const Tensor few = random({16, 300}, DType::kFloat32, 7), wide = transposed(random({500, 300}, DType::kFloat32, 8));
  const Tensor ba = random({6, 128, 128}, DType::kFloat32, 9), bb = random({6, 128, 128}, DType::kFloat32, 10);
  const Tensor mat = random({2048, 1100}, DType::kFloat32, 11), vec = random({1100}, DType::kFloat32, 12);
  auto run = [&] {
    return std::vector<std::vector<float>>{
        ops::mm(a, b).to_vector<float>(), ops::mm(few, wide).to_vector<float>(),
        ops::bmm(ba, bb).to_vector<float>(), ops::mv(mat, vec).to_vector<float>(),
        ops::mv(transposed(random({1100, 2048}, DType::kFloat32, 13)), vec).to_vector<float>()};
  };
  std::vector<std::vector<float>> one;
  {
    NumThreadsGuard t(1);
    one = run();
  }
  for (int threads : {2, 3, 8}) {
    NumThreadsGuard t(threads);
    EXPECT_EQ(run(), one) << threads << " threads";
  }
}

TEST(ThreadedMmTest, BlockGridsOfTheModelsShapesAgreeWithOneBlasCall) {
  // Grids of row and column blocks (See Note [Product block grids]) over the
  // GPT-2 block's linears, and a grid with ragged last blocks: every block
  // lands where one call over all of C puts it. Not bitwise: how an element
  // rounds depends on OpenBLAS's kernel and where the element sits in a call.
  const Shape shapes[] = {{512, 256, 1024}, {512, 1024, 256}, {512, 256, 512}, {300, 200, 520}};
  for (const Shape& s : shapes) {
    SCOPED_TRACE(testing::Message() << s.n << "x" << s.k << "x" << s.m);
    const Tensor a = random({s.n, s.k}, DType::kFloat32, 14), b = random({s.k, s.m}, DType::kFloat32, 15);
    const Tensor bt = transposed(random({s.m, s.k}, DType::kFloat32, 16));
    for (const bool trans_b : {false, true}) {
      const Tensor rhs = trans_b ? bt : b;
      std::vector<float> one(static_cast<size_t>(s.n * s.m));
      const Tensor rc = ops::contiguous(trans_b ? transposed(rhs) : rhs);  // B, or B^T for the call
      internal::gemm<float>(false, trans_b, s.n, s.m, s.k, 1.0f, ops::contiguous(a).data_ptr<float>(), s.k,
                            rc.data_ptr<float>(), trans_b ? s.k : s.m, 0.0f, one.data(), s.m);
      const std::vector<float> grid = ops::mm(a, rhs).to_vector<float>();
      ASSERT_EQ(grid.size(), one.size());
      size_t worst = 0;
      for (size_t i = 0; i < one.size(); ++i) {
        if (std::abs(grid[i] - one[i]) > std::abs(grid[worst] - one[worst])) worst = i;
      }
      // Elements are sums of k products of values in [-1, 1], ~10 in size:
      // two summation orders part by ~1e-5; a misplaced or missing block by ~10.
      EXPECT_LT(std::abs(grid[worst] - one[worst]), 1e-3)
          << (trans_b ? "B transposed" : "B") << ": element [" << worst / s.m << ", " << worst % s.m << "] is "
          << grid[worst] << ", one call gives " << one[worst];
    }
  }
}

TEST(ThreadedMmTest, LargeMvAgreesWithTheProduct) {
  const Tensor mat = random({2048, 1100}, DType::kFloat64, 14), vec = random({1100}, DType::kFloat64, 15);
  const Tensor col = make_view(vec, {1100, 1}, {1, 1}, 0);
  EXPECT_LT(max_error(make_view(ops::mv(mat, vec), {2048, 1}, {1, 1}, 0), mat, col), 1e-10);
  const Tensor mt = transposed(random({1100, 2048}, DType::kFloat64, 16));
  EXPECT_LT(max_error(make_view(ops::mv(mt, vec), {2048, 1}, {1, 1}, 0), mt, col), 1e-10);
}

int thread_count() {
  int n = 0;
  if (DIR* d = opendir("/proc/self/task")) {
    while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
    closedir(d);
  }
  return n;
}

// A fresh process (a forked child has one thread) on one intra-op thread
// runs a large product on that thread alone: OpenBLAS starts no pool of its
// own (its fork handler tears one down, and the next threaded call would
// have built it again).
TEST(ThreadedMmTest, ProductsStartNoThreadsOfTheirOwn) {
  const Tensor a = random({256, 256}, DType::kFloat32, 17), b = random({256, 256}, DType::kFloat32, 18);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    set_num_threads(1);
    const Tensor c = ops::mm(a, b);
    _exit(c.numel() == 256 * 256 ? thread_count() : 100);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1) << "threads in the child after a 256^3 product";
}

}  // namespace
}  // namespace opspec
