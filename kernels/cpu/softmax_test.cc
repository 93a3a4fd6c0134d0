// Tests of _softmax, _log_softmax and native_layer_norm (CPU and Meta).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <string>
#include <vector>
#include <cmath>
#include <limits>
#include <random>

#include "kernels/cpu/cache_hints.h"
#include "kernels/cpu/copy.h"
#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace softmax_test {

using internal::make_tensor;
using internal::make_view;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();


std::vector<double> random_values(int64_t n, uint32_t seed, double scale = 3) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0, scale);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(gen);
  return v;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// ref_softmax: softmax of t's logical values along dim, in double.
std::vector<double> ref_softmax(const Tensor& t, int64_t dim, bool log) {
  const std::vector<double> v = values(t);
  int64_t outer = 1, inner = 1;
  const int64_t len = t.sizes()[dim];
  for (int64_t i = 0; i < t.dim(); ++i) {
    if (i < dim) outer *= t.sizes()[i];
    if (i > dim) inner *= t.sizes()[i];
  }
  std::vector<double> out(v.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t k = 0; k < len; ++k) m = std::max(m, v[(o * len + k) * inner + j]);
      for (int64_t k = 0; k < len; ++k) s += std::exp(v[(o * len + k) * inner + j] - m);
      for (int64_t k = 0; k < len; ++k) {
        const double x = v[(o * len + k) * inner + j] - m;
        out[(o * len + k) * inner + j] = log ? x - std::log(s) : std::exp(x) / s;
      }
    }
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double atol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], atol) << "at " << i;
}

// ---- softmax ----

TEST(SoftmaxTest, HandComputedRow) {
  const Tensor x = ops::tensor({1, 2, 3}, {3});
  const double z = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const Tensor s = ops::_softmax(x, 0, false);
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_THAT(values(s), ElementsAre(DoubleNear(std::exp(1.0) / z, 1e-7), DoubleNear(std::exp(2.0) / z, 1e-7),
                                     DoubleNear(std::exp(3.0) / z, 1e-7)));
  EXPECT_THAT(values(ops::_log_softmax(x, -1, false)),
              ElementsAre(DoubleNear(1 - std::log(z), 1e-6), DoubleNear(2 - std::log(z), 1e-6),
                          DoubleNear(3 - std::log(z), 1e-6)));
}

TEST(SoftmaxTest, StableForLargeInputs) {
  const Tensor x = ops::tensor({1000, 1001, -1000, -1001}, {2, 2});
  const double a = 1 / (1 + std::exp(1.0));
  EXPECT_THAT(values(ops::_softmax(x, 1, false)),
              ElementsAre(DoubleNear(a, 1e-6), DoubleNear(1 - a, 1e-6), DoubleNear(1 - a, 1e-6), DoubleNear(a, 1e-6)));
  EXPECT_THAT(values(ops::_log_softmax(x, 1, false)),
              ElementsAre(DoubleNear(std::log(a), 1e-5), DoubleNear(std::log(1 - a), 1e-5),
                          DoubleNear(std::log(1 - a), 1e-5), DoubleNear(std::log(a), 1e-5)));
  // The same along dim 0 (the column path).
  const Tensor xt = ops::tensor({1000, -1000, 1001, -1001}, {2, 2});
  EXPECT_THAT(values(ops::_softmax(xt, 0, false)),
              ElementsAre(DoubleNear(a, 1e-6), DoubleNear(1 - a, 1e-6), DoubleNear(1 - a, 1e-6), DoubleNear(a, 1e-6)));
  EXPECT_THAT(values(ops::_log_softmax(xt, 0, false)),
              ElementsAre(DoubleNear(std::log(a), 1e-5), DoubleNear(std::log(1 - a), 1e-5),
                          DoubleNear(std::log(1 - a), 1e-5), DoubleNear(std::log(a), 1e-5)));
}

TEST(SoftmaxTest, EveryDimOfStridedInputs) {
  const Tensor base = ops::tensor(random_values(5 * 7 * 130, 11), {5, 7, 130}, DType::kFloat64);
  const Tensor permuted = make_view(base, {130, 5, 7}, {1, 910, 130}, 0);
  const Tensor sliced = make_view(base, {5, 3, 65}, {910, 260, 2}, 1);
  for (const Tensor& t : {base, permuted, sliced}) {
    for (int64_t d = 0; d < 3; ++d) {
      SCOPED_TRACE(t.meta_str() + " dim " + std::to_string(d));
      const Tensor s = ops::_softmax(t, d, false);
      EXPECT_TRUE(s.is_contiguous());
      expect_near(values(s), ref_softmax(t, d, false), 1e-14);
      expect_near(values(ops::_log_softmax(t, d - 3, false)), ref_softmax(t, d, true), 1e-12);
    }
  }
}

TEST(SoftmaxTest, RowsSumToOneAndLogMatches) {
  // Big enough for the parallel paths, last dim and a middle dim.
  const Tensor x = ops::tensor(random_values(64 * 1000, 5, 10), {64, 1000});
  for (int64_t d : {0, 1}) {
    const Tensor s = ops::_softmax(x, d, false);
    const std::vector<double> sums = values(ops::sum(s, {d}, false, DType::kFloat64));
    for (double v : sums) EXPECT_NEAR(v, 1, 1e-5);
    const std::vector<double> ls = values(ops::_log_softmax(x, d, false));
    const std::vector<double> sv = values(s);
    for (size_t i = 0; i < sv.size(); i += 97) EXPECT_NEAR(ls[i], std::log(sv[i]), 1e-4) << i;
  }
}

TEST(SoftmaxTest, Float32MatchesDoubleReference) {
  // f32 softmax uses vec_math::exp, the exp op's (see Note [Vectorised exp in softmax]).
  const std::vector<double> v = random_values(6 * 200, 21, 8);
  const Tensor x = ops::tensor(v, {6, 200});  // rounded to f32
  const Tensor xd = ops::tensor(x.to_vector<double>(), {6, 200}, DType::kFloat64);
  for (int64_t d : {0, 1}) {
    const std::vector<double> got = values(ops::_softmax(x, d, false)), want = ref_softmax(xd, d, false);
    // x - max rounds in f32, so the relative error grows with |log p|, as in PyTorch.
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i], want[i], 3e-7 * (1 + std::abs(std::log(want[i]))) * want[i]) << i;
    }
    const std::vector<double> lg = values(ops::_log_softmax(x, d, false)), lw = ref_softmax(xd, d, true);
    for (size_t i = 0; i < lg.size(); ++i) EXPECT_NEAR(lg[i], lw[i], 1e-5 * (1 + std::abs(lw[i]))) << i;
  }
  // softmax([0, a])[1] is exactly exp(a) in f32 for a < -17.5 (the sum rounds to 1): within
  // 1 ulp of glibc's expf down to the subnormal range, and 0 below it.
  for (float a = -17.5f; a > -110.0f; a -= 0.37f) {
    const Tensor row = ops::tensor({0, static_cast<double>(a)}, {2});
    const float got = ops::_softmax(row, 0, false).to_vector<float>()[1];
    const float want = std::exp(a);
    EXPECT_LE(std::abs(std::bit_cast<int32_t>(got) - std::bit_cast<int32_t>(want)), 1) << a << ": " << got << " vs " << want;
    // ... and exactly the exp op's value.
    const float op = ops::exp(ops::tensor({static_cast<double>(a)}, {1})).to_vector<float>()[0];
    EXPECT_EQ(std::bit_cast<uint32_t>(got), std::bit_cast<uint32_t>(op)) << a;
  }
}

// bits: a tensor's elements as raw bytes, for bit-for-bit comparisons.
std::vector<uint8_t> bits(const Tensor& t) {
  const Tensor c = internal::contiguous_cpu(t);
  const auto* p = static_cast<const uint8_t*>(c.raw_data());
  return std::vector<uint8_t>(p, p + c.nbytes());
}

// Inputs of kStreamMinBytes and more prefetch the next row and stream their
// output (See Note [Prefetching ahead], Note [Streaming stores]); each row
// still has the bits it has when softmaxed alone (a small tensor, neither).
TEST(SoftmaxTest, LargeInputsStreamAndMatchRowsAlone) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const int64_t rows = dt == DType::kFloat32 ? 520 : 260, n = 4099;
    const Tensor x = ops::to(ops::tensor(random_values(rows * n, 31, 6), {rows, n}), dt);
    ASSERT_GE(x.nbytes(), internal::kStreamMinBytes);
    for (bool log : {false, true}) {
      const Tensor y = log ? ops::_log_softmax(x, 1, false) : ops::_softmax(x, 1, false);
      for (int64_t r : {int64_t{0}, int64_t{1}, rows / 2, rows - 1}) {
        SCOPED_TRACE(std::string(dtype_short_name(dt)) + (log ? " log_softmax" : " softmax") + " row " +
                     std::to_string(r));
        const Tensor alone = ops::clone(ops::select(x, 0, r));
        EXPECT_EQ(bits(ops::select(y, 0, r)), bits(log ? ops::_log_softmax(alone, 0, false)
                                                        : ops::_softmax(alone, 0, false)));
      }
    }
  }
}

// Rows are handed out to threads in ranges, each row writing the previous
// one's output (See Note [Softmax rows in flight]): any thread count gives the
// same bits, streamed or not, in every floating dtype.
TEST(SoftmaxTest, ThreadCountDoesNotChangeBits) {
  const struct {
    DType dtype;
    int64_t rows, n;
  } cases[] = {{DType::kFloat32, 37, 1000}, {DType::kFloat32, 520, 4099}, {DType::kFloat64, 37, 1000},
               {DType::kFloat64, 260, 4099}, {DType::kBFloat16, 37, 1000}};
  for (const auto& c : cases) {
    const Tensor x = ops::to(ops::tensor(random_values(c.rows * c.n, 41, 5), {c.rows, c.n}), c.dtype);
    for (bool log : {false, true}) {
      SCOPED_TRACE(std::string(dtype_short_name(c.dtype)) + (log ? " log_softmax " : " softmax ") +
                   std::to_string(c.rows) + "x" + std::to_string(c.n));
      const auto run = [&] { return bits(log ? ops::_log_softmax(x, 1, false) : ops::_softmax(x, 1, false)); };
      const std::vector<uint8_t> want = run();
      for (int threads : {1, 3}) {
        NumThreadsGuard guard(threads);
        EXPECT_EQ(run(), want) << threads << " threads";
      }
    }
  }
}

TEST(SoftmaxTest, ReducedPrecisionNanAndEdgeShapes) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = ops::tensor({0, 1, 2, 3}, {4}, dt);
    const Tensor s = ops::_softmax(x, 0, false);
    EXPECT_EQ(s.dtype(), dt);
    expect_near(values(s), ref_softmax(ops::tensor({0, 1, 2, 3}, {4}, DType::kFloat64), 0, false), 4e-3);
  }
  const std::vector<double> nan_row = values(ops::_softmax(ops::tensor({1, kNaN, 2, 1, 2, 3}, {2, 3}), 1, false));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan(nan_row[i]));
  EXPECT_FALSE(std::isnan(nan_row[3]));
  EXPECT_EQ(ops::_softmax(ops::tensor({5}, {}), 0, false).item<double>(), 1);
  EXPECT_EQ(ops::_log_softmax(ops::tensor({5}, {}), -1, false).item<double>(), 0);
  EXPECT_THAT(ops::_softmax(make_tensor({0, 4}, DType::kFloat32, kCPU), 1, false).sizes(), ElementsAre(0, 4));
}

TEST(SoftmaxTest, Errors) {
  const Tensor h = ops::tensor({1, 2}, {2}, DType::kFloat16);
  EXPECT_THAT([&] { ops::_softmax(h, 0, true); },
              ThrowsMessage<Error>(HasSubstr("softmax with half to float conversion is not supported on CPU")));
  EXPECT_THAT([&] { ops::_log_softmax(h, 0, true); },
              ThrowsMessage<Error>(HasSubstr("log_softmax with half to float conversion is not supported on CPU")));
  EXPECT_THAT([&] { ops::_softmax(ops::tensor({1, 2}, {2}, DType::kInt64), 0, false); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::_softmax(h, 1, false); },
              ThrowsMessage<Error>(HasSubstr("aten::_softmax: Dimension out of range")));
}

TEST(SoftmaxTest, Meta) {
  const Tensor h = make_tensor({3, 5}, DType::kFloat16, kMeta);
  const Tensor s = ops::_softmax(h, 1, false);
  EXPECT_TRUE(s.device().is_meta());
  EXPECT_THAT(s.sizes(), ElementsAre(3, 5));
  EXPECT_EQ(s.dtype(), DType::kFloat16);
  // Meta models PyTorch's meta function: half_to_float gives f32 for an f16 input.
  EXPECT_EQ(ops::_log_softmax(h, 0, true).dtype(), DType::kFloat32);
  EXPECT_THAT([&] { ops::_softmax(make_tensor({3}, DType::kFloat32, kMeta), 0, true); },
              ThrowsMessage<Error>(HasSubstr("conversion is supported for Half type only")));
}

// ---- native_layer_norm ----

TEST(LayerNormTest, HandComputedWithWeightAndBias) {
  const Tensor x = ops::tensor({1, 2, 3, 2, 4, 6}, {2, 3});
  const Tensor w = ops::tensor({1, 2, 3}, {3});
  const Tensor b = ops::tensor({0, 1, -1}, {3});
  auto [out, mean, rstd] = ops::native_layer_norm(x, {3}, w, b, 1e-5);
  // Row 0: mean 2, biased var 2/3; row 1: mean 4, var 8/3.
  const double r0 = 1 / std::sqrt(2.0 / 3 + 1e-5), r1 = 1 / std::sqrt(8.0 / 3 + 1e-5);
  EXPECT_THAT(mean.sizes(), ElementsAre(2, 1));
  EXPECT_THAT(rstd.sizes(), ElementsAre(2, 1));
  EXPECT_EQ(mean.dtype(), DType::kFloat32);
  EXPECT_THAT(values(mean), ElementsAre(2, 4));
  EXPECT_THAT(values(rstd), ElementsAre(DoubleNear(r0, 1e-5), DoubleNear(r1, 1e-5)));
  EXPECT_THAT(values(out), ElementsAre(DoubleNear(-r0, 1e-5), DoubleNear(1, 1e-5), DoubleNear(3 * r0 - 1, 1e-5),
                                       DoubleNear(-2 * r1, 1e-5), DoubleNear(1, 1e-5),
                                       DoubleNear(3 * 2 * r1 - 1, 1e-5)));
}

TEST(LayerNormTest, MultiDimNormalizedShapeStridedAndNoAffine) {
  const Tensor base = ops::tensor(random_values(3 * 4 * 5, 2), {3, 4, 5}, DType::kFloat64);
  const Tensor x = make_view(base, {3, 5, 4}, {20, 1, 5}, 0);  // transposed last two dims
  auto [out, mean, rstd] = ops::native_layer_norm(x, {5, 4}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT(mean.sizes(), ElementsAre(3, 1, 1));
  EXPECT_EQ(rstd.dtype(), DType::kFloat64);
  const std::vector<double> v = values(x), o = values(out), mv = values(mean), rv = values(rstd);
  for (int r = 0; r < 3; ++r) {
    double m = 0, var = 0;
    for (int i = 0; i < 20; ++i) m += v[r * 20 + i] / 20;
    for (int i = 0; i < 20; ++i) var += (v[r * 20 + i] - m) * (v[r * 20 + i] - m) / 20;
    EXPECT_NEAR(mv[r], m, 1e-12);
    EXPECT_NEAR(rv[r], 1 / std::sqrt(var + 1e-5), 1e-12);
    for (int i = 0; i < 20; ++i) EXPECT_NEAR(o[r * 20 + i], (v[r * 20 + i] - m) / std::sqrt(var + 1e-5), 1e-12);
  }
}

TEST(LayerNormTest, ReducedPrecisionStatDtypes) {
  const Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kBFloat16);
  auto [out, mean, rstd] = ops::native_layer_norm(x, {2}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_EQ(out.dtype(), DType::kBFloat16);
  EXPECT_EQ(mean.dtype(), DType::kBFloat16);
  EXPECT_THAT(values(out), ElementsAre(DoubleNear(-1, 1e-2), DoubleNear(1, 1e-2), DoubleNear(-1, 1e-2),
                                       DoubleNear(1, 1e-2)));
  // Mixed type: f16 input with f32 weight gives f32 mean and rstd, as on PyTorch's CPU.
  const Tensor h = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kFloat16);
  auto [o2, m2, r2] = ops::native_layer_norm(h, {2}, ops::tensor({1, 1}, {2}), ops::tensor({0, 0}, {2}), 1e-5);
  EXPECT_EQ(o2.dtype(), DType::kFloat16);
  EXPECT_EQ(m2.dtype(), DType::kFloat32);
  EXPECT_THAT(values(m2), ElementsAre(1.5, 3.5));
}

// The large-input paths of layer_norm (See Note [Streaming stores]): each row
// has the output, mean and rstd bits it has normalized alone.
TEST(LayerNormTest, LargeInputsStreamAndMatchRowsAlone) {
  const int64_t rows = 520, n = 4099;
  const Tensor x = ops::tensor(random_values(rows * n, 32, 4), {rows, n});
  ASSERT_GE(x.nbytes(), internal::kStreamMinBytes);
  const Tensor w = ops::tensor(random_values(n, 33), {n}), b = ops::tensor(random_values(n, 34), {n});
  auto [out, mean, rstd] = ops::native_layer_norm(x, {n}, w, b, 1e-5);
  for (int64_t r : {int64_t{0}, int64_t{1}, rows / 2, rows - 1}) {
    SCOPED_TRACE("row " + std::to_string(r));
    auto [o1, m1, r1] = ops::native_layer_norm(ops::clone(ops::select(x, 0, r)), {n}, w, b, 1e-5);
    EXPECT_EQ(bits(ops::select(out, 0, r)), bits(o1));
    EXPECT_EQ(bits(ops::select(mean, 0, r)), bits(m1));
    EXPECT_EQ(bits(ops::select(rstd, 0, r)), bits(r1));
  }
}

TEST(LayerNormTest, Errors) {
  const Tensor x = make_tensor({2, 4}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { ops::native_layer_norm(x, {5}, std::nullopt, std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr(
                  "Given normalized_shape=[5], expected input with shape [*, 5], but got input of size[2, 4]")));
  EXPECT_THAT([&] { ops::native_layer_norm(x, {4}, ops::tensor({1, 1, 1}, {3}), std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected weight to be of same shape as normalized_shape, but got weight "
                                             "of shape [3] and normalized_shape = [4]")));
  EXPECT_THAT([&] { ops::native_layer_norm(x, {4}, std::nullopt, ops::tensor({1}, {1}), 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected bias to be of same shape as normalized_shape")));
  EXPECT_THAT([&] { ops::native_layer_norm(x, IntArrayRef{}, std::nullopt, std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected normalized_shape to be at least 1-dimensional")));
  EXPECT_THAT([&] { ops::native_layer_norm(x, {4}, ops::tensor({1, 1, 1, 1}, {4}, DType::kFloat64), std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("expected weight to have dtype f32")));
  EXPECT_THAT([&] { ops::native_layer_norm(x, {4}, make_tensor({4}, DType::kFloat32, kMeta), std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

TEST(LayerNormTest, Meta) {
  const Tensor x = make_tensor({2, 3, 4}, DType::kFloat16, kMeta);
  auto [out, mean, rstd] = ops::native_layer_norm(x, {4}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_TRUE(out.device().is_meta());
  EXPECT_THAT(out.sizes(), ElementsAre(2, 3, 4));
  EXPECT_THAT(mean.sizes(), ElementsAre(2, 3, 1));
  EXPECT_EQ(rstd.dtype(), DType::kFloat16);
  EXPECT_THAT([&] { ops::native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("expected input with shape [*, 3]")));
}

}  // namespace
}  // namespace opspec
