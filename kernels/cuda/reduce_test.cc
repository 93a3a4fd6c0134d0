// CUDA reductions, softmax and layer norm against the CPU kernels (skipped
// without a GPU): exact for max/min and integer sums, to rounding for float
// sums (a different but fixed summation order) and exp/log.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <tuple>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_reduce_test {

using testing::expect_close;
using testing::expect_same;
using testing::kCuda0;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

TEST(CudaReduceTest, SumsAndMeansOverAnyDims) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = input({6, 7, 33}, dt, 1);
    const Tensor xt = ops::permute(x, {2, 0, 1});
    const Tensor d = to_cuda(x), dt_ = ops::permute(d, {2, 0, 1});
    const std::string n(dtype_short_name(dt));
    expect_close(ops::sum(d), ops::sum(x), "sum " + n, 8);
    expect_close(ops::mean(d), ops::mean(x), "mean " + n, 8);
    for (const std::vector<int64_t>& dims : {std::vector<int64_t>{0}, {1}, {2}, {0, 2}, {-1, 0}}) {
      expect_close(ops::sum(d, dims), ops::sum(x, dims), "sum dims " + n, 8);
      expect_close(ops::mean(d, dims, true), ops::mean(x, dims, true), "mean keepdim " + n, 8);
      expect_close(ops::sum(dt_, dims), ops::sum(xt, dims), "sum permuted " + n, 8);
    }
    // 7 signed values of |x| ~ 1 cancel: the floor is their magnitude.
    expect_close(ops::sum(d, {1}, false, DType::kFloat64), ops::sum(x, {1}, false, DType::kFloat64), "sum dtype " + n,
                 8, 7.0);
  }
  // Integer and bool sums are exact (and widen to i64).
  for (DType dt : {DType::kInt64, DType::kInt32, DType::kBool}) {
    const Tensor x = ops::to(ops::mul(input({40, 50}, DType::kFloat64, 2), 1000.0), dt);
    expect_same(ops::sum(to_cuda(x)), ops::sum(x), "int sum");
    expect_same(ops::sum(to_cuda(x), {0}), ops::sum(x, {0}), "int sum dim");
    expect_same(ops::sum(to_cuda(x), {1}, true, dt), ops::sum(x, {1}, true, dt), "int sum keep dtype");
  }
}

TEST(CudaReduceTest, LargeReductionsSplitDeterministically) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = input({3000000}, DType::kFloat32, 3);
  const Tensor d = to_cuda(x);
  const Tensor s1 = ops::sum(d), s2 = ops::sum(d);
  EXPECT_TRUE(ops::equal(to_cpu(s1), to_cpu(s2)));  // the same order every time
  expect_close(s1, ops::sum(x), "sum 3M", 8);
  const Tensor m = ops::view(x, {3, 1000000});
  expect_close(ops::mean(ops::view(d, {3, 1000000}), {1}), ops::mean(m, {1}), "mean rows", 8);
  expect_close(ops::sum(ops::view(d, {1000000, 3}), {0}), ops::sum(ops::view(x, {1000000, 3}), {0}), "sum cols", 8);
}

TEST(CudaReduceTest, ExtremaAndNormsMatch) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64,
                   DType::kInt32, DType::kBool}) {
    Tensor x = ops::to(ops::mul(input({9, 65}, DType::kFloat64, 4), 100.0), dt);
    const Tensor d = to_cuda(x);
    expect_same(ops::amax(d), ops::amax(x), "amax");
    expect_same(ops::amin(d, {1}), ops::amin(x, {1}), "amin dim");
    expect_same(ops::amax(ops::t(d), {0}, true), ops::amax(ops::t(x), {0}, true), "amax t");
  }
  // NaN propagates.
  const Tensor nan = ops::tensor({1, std::nan(""), 3, -1}, {2, 2});
  expect_same(ops::amax(to_cuda(nan), {1}), ops::amax(nan, {1}), "amax nan");
  for (DType dt : kFloats) {
    const Tensor x = input({17, 40}, dt, 5);
    const Tensor d = to_cuda(x);
    const double inf = std::numeric_limits<double>::infinity();
    for (double p : {2.0, 1.0, inf, -inf, 0.0, 3.5}) {
      const std::string what = str_cat("norm ", p, " ", dtype_short_name(dt));
      expect_close(ops::linalg_vector_norm(d, p), ops::linalg_vector_norm(x, p), what, 8);
      const std::vector<int64_t> dims{1};
      expect_close(ops::linalg_vector_norm(d, p, dims), ops::linalg_vector_norm(x, p, dims), what + " dim", 8);
    }
  }
}

TEST(CudaReduceTest, EmptyReductions) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor e = ops::zeros({3, 0});
  const Tensor d = to_cuda(e);
  expect_same(ops::sum(d, {1}), ops::sum(e, {1}), "sum of nothing");
  expect_same(ops::mean(d, {1}), ops::mean(e, {1}), "mean of nothing");
  expect_same(ops::sum(d, {0}), ops::sum(e, {0}), "empty output");
  EXPECT_THROW(ops::amax(d, {1}), Error);
}

TEST(CudaReduceTest, SoftmaxAndLogSoftmax) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = ops::mul(input({4, 37, 5}, dt, 6), 4.0);
    const Tensor d = to_cuda(x);
    for (int64_t dim : {0, 1, 2, -1}) {
      const std::string what = str_cat("dim ", dim, " ", dtype_short_name(dt));
      expect_close(ops::softmax(d, dim), ops::softmax(x, dim), "softmax " + what, 4);
      // x - logsumexp cancels: the floor is the inputs' magnitude.
      expect_close(ops::log_softmax(d, dim), ops::log_softmax(x, dim), "log_softmax " + what, 4, 4.0);
    }
  }
  // half_to_float (CUDA only): as softmax of the widened input.
  const Tensor h = input({3, 20}, DType::kFloat16, 7);
  const Tensor got = ops::_softmax(to_cuda(h), 1, true);
  EXPECT_EQ(got.dtype(), DType::kFloat32);
  expect_close(got, ops::_softmax(ops::to(h, DType::kFloat32), 1, false), "half_to_float", 4);
}

TEST(CudaReduceTest, LayerNormWithAndWithoutAffine) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = ops::add(input({6, 5, 24}, dt, 8), 3.0);
    const Tensor w = input({5, 24}, dt, 9), b = input({5, 24}, dt, 10);
    const std::string n(dtype_short_name(dt));
    auto [y, mean, rstd] = ops::native_layer_norm(to_cuda(x), {5, 24}, to_cuda(w), to_cuda(b), 1e-5);
    auto [ry, rmean, rrstd] = ops::native_layer_norm(x, {5, 24}, w, b, 1e-5);
    expect_close(y, ry, "layer_norm " + n, 8, 4.0);  // x - mean cancels
    expect_close(mean, rmean, "mean " + n, 8);
    expect_close(rstd, rrstd, "rstd " + n, 8);
    expect_close(ops::layer_norm(to_cuda(x), {24}), ops::layer_norm(x, {24}), "no affine " + n, 8, 4.0);
  }
  // f16 input with f32 weights: f32 statistics (PyTorch's mixed type).
  const Tensor x = input({4, 16}, DType::kFloat16, 11), w = input({16}, DType::kFloat32, 12);
  auto [y, mean, rstd] = ops::native_layer_norm(to_cuda(x), {16}, to_cuda(w), std::nullopt, 1e-5);
  auto [ry, rmean, rrstd] = ops::native_layer_norm(x, {16}, w, std::nullopt, 1e-5);
  EXPECT_EQ(mean.dtype(), rmean.dtype());
  expect_close(y, ry, "mixed", 8);
  expect_close(rstd, rrstd, "mixed rstd", 8);
}

}  // namespace
}  // namespace opspec
