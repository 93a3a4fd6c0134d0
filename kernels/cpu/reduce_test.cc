// Tests of sum, mean, amax, amin and linalg_vector_norm (CPU and Meta).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>

#include "kernels/cpu/copy.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace reduce_test {

using internal::make_tensor;
using internal::make_view;
using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// filled: a contiguous cpu tensor holding values converted to dtype.

std::vector<double> iota(int64_t n, double start = 0) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = start + static_cast<double>(i);
  return v;
}

std::vector<double> random_values(int64_t n, uint32_t seed, double lo = -1, double hi = 1) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = dist(gen);
  return v;
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// naive_reduce: reduces t's logical values over the dims in mask with op, in double.
std::vector<double> naive_reduce(const Tensor& t, const std::vector<bool>& mask, double init,
                                 const std::function<double(double, double)>& op) {
  const std::vector<double> v = values(t);
  const IntArrayRef sizes = t.sizes();
  SizeVec out_sizes;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out_sizes.push_back(sizes[d]);
  }
  std::vector<double> out(static_cast<size_t>(compute_numel(out_sizes)), init);
  SizeVec idx(sizes.size(), 0);
  for (size_t i = 0; i < v.size(); ++i) {
    int64_t o = 0;
    for (size_t d = 0; d < sizes.size(); ++d) {
      if (!mask[d]) o = o * sizes[d] + idx[d];
    }
    out[o] = op(out[o], v[i]);
    for (size_t d = sizes.size(); d-- > 0;) {
      if (++idx[d] < sizes[d]) break;
      idx[d] = 0;
    }
  }
  return out;
}

double add(double a, double b) { return a + b; }

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double rtol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], rtol * (1 + std::abs(want[i]))) << "at " << i;
  }
}

// ---- sum ----

TEST(SumTest, AllAndPerDim) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor all = ops::sum(x);
  EXPECT_EQ(all.dim(), 0);
  EXPECT_EQ(all.dtype(), DType::kFloat32);
  EXPECT_EQ(all.item<double>(), 21);
  EXPECT_THAT(values(ops::sum(x, {0})), ElementsAre(5, 7, 9));
  EXPECT_THAT(values(ops::sum(x, {1})), ElementsAre(6, 15));
  EXPECT_THAT(values(ops::sum(x, {-1})), ElementsAre(6, 15));
  EXPECT_THAT(values(ops::sum(x, {0, 1})), ElementsAre(21));
  EXPECT_THAT(values(ops::sum(x, {-1, 0})), ElementsAre(21));
  // dim=[] reduces every dim, as in PyTorch.
  EXPECT_EQ(ops::sum(x, IntArrayRef{}).item<double>(), 21);
  const Tensor kept = ops::sum(x, {1}, /*keepdim=*/true);
  EXPECT_THAT(kept.sizes(), ElementsAre(2, 1));
  EXPECT_THAT(values(kept), ElementsAre(6, 15));
  EXPECT_THAT(ops::sum(x, IntArrayRef{}, true).sizes(), ElementsAre(1, 1));
}

TEST(SumTest, ThreeDimsContiguousPermutedAndSliced) {
  const Tensor base = ops::tensor(random_values(4 * 6 * 10, 1), {4, 6, 10}, DType::kFloat64);
  // A permuted view ([10, 4, 6]) and a stepped slice (base[:, 1::2, ::3] -> [4, 3, 4]).
  const Tensor permuted = make_view(base, {10, 4, 6}, {1, 60, 10}, 0);
  const Tensor sliced = make_view(base, {4, 3, 4}, {60, 20, 3}, 10);
  for (const Tensor& t : {base, permuted, sliced}) {
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1}, {0, 1, 2}}) {
      std::vector<bool> mask(3, false);
      for (int64_t d : dims) mask[d] = true;
      SCOPED_TRACE(t.meta_str() + " dims " + format_sizes(dims));
      expect_near(values(ops::sum(t, dims)), naive_reduce(t, mask, 0, add), 1e-13);
      expect_near(values(ops::mean(t, dims)), [&] {
        auto s = naive_reduce(t, mask, 0, add);
        int64_t n = 1;
        for (int64_t d : dims) n *= t.sizes()[d];
        for (double& v : s) v /= static_cast<double>(n);
        return s;
      }(), 1e-13);
      expect_near(values(ops::amax(t, dims)),
                  naive_reduce(t, mask, -kInf, [](double a, double b) { return std::max(a, b); }), 0);
      expect_near(values(ops::amin(t, dims)),
                  naive_reduce(t, mask, kInf, [](double a, double b) { return std::min(a, b); }), 0);
    }
  }
}

TEST(SumTest, LargeReductionsAreAccurateOnEveryPath) {
  // All elements (chunked, parallel): 0.1f * 1e6 accumulated in double rounds to exactly 1e5.
  const Tensor ones = ops::tensor(std::vector<double>(1000000, 0.1), {1000, 1000});
  EXPECT_EQ(ops::sum(ones).item<float>(), 100000.0f);
  // Inner (last dim), outer (dim 0) and transposed-all reductions against a double reference.
  const Tensor x = ops::tensor(random_values(700 * 300, 7), {700, 300}, DType::kFloat64);
  expect_near(values(ops::sum(x, {1})), naive_reduce(x, {false, true}, 0, add), 1e-13);
  expect_near(values(ops::sum(x, {0})), naive_reduce(x, {true, false}, 0, add), 1e-13);
  const Tensor xt = make_view(x, {300, 700}, {1, 300}, 0);
  expect_near(values(ops::sum(xt, {0})), naive_reduce(xt, {true, false}, 0, add), 1e-13);
  expect_near(values(ops::sum(xt)), naive_reduce(xt, {true, true}, 0, add), 1e-12);
  // A long f32 row keeps float precision although it has 1e6 terms.
  const Tensor row = ops::tensor(std::vector<double>(1 << 20, 1.0 / 3), {2, 1 << 19});
  for (double v : values(ops::sum(row, {1}))) EXPECT_NEAR(v, (1 << 19) * static_cast<double>(1.0f / 3), 0.05);
}

TEST(SumTest, DtypeDefaultsAndOverrides) {
  const Tensor i32 = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kInt32);
  const Tensor s = ops::sum(i32);
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(s.item<int64_t>(), 10);
  const Tensor b8 = ops::tensor({1, 0, 1, 1, 0}, {5}, DType::kBool);
  EXPECT_EQ(ops::sum(b8).dtype(), DType::kInt64);
  EXPECT_EQ(ops::sum(b8).item<int64_t>(), 3);
  EXPECT_EQ(ops::sum(ops::tensor({1, 2}, {2}, DType::kInt64)).dtype(), DType::kInt64);
  const Tensor f = ops::tensor({0.5, 0.25}, {2});
  const Tensor d = ops::sum(f, DType::kFloat64);
  EXPECT_EQ(d.dtype(), DType::kFloat64);
  EXPECT_EQ(d.item<double>(), 0.75);
  // dtype= keeps an integer dtype when asked to, and converts before summing.
  EXPECT_EQ(ops::sum(i32, {0}, false, DType::kInt32).dtype(), DType::kInt32);
  EXPECT_THAT(values(ops::sum(ops::tensor({1.5, 2.5}, {2}), {0}, false, DType::kInt64)), ElementsAre(3));
  // i64 overflow wraps as in PyTorch.
  const Tensor big = ops::tensor({0, 0}, {2}, DType::kInt64);
  big.data_ptr<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  big.data_ptr<int64_t>()[1] = 1;
  EXPECT_EQ(ops::sum(big).item<int64_t>(), std::numeric_limits<int64_t>::min());
}

TEST(SumTest, HalfAndBFloat16AccumulateInFloat) {
  // 1000 x 0.1 summed in f16 steps would stall far from 100; accumulating in float does not.
  const Tensor h = ops::tensor(std::vector<double>(1000, 0.1), {1000}, DType::kFloat16);
  const Tensor s = ops::sum(h);
  EXPECT_EQ(s.dtype(), DType::kFloat16);
  EXPECT_NEAR(s.item<double>(), 100, 0.07);
  const Tensor b = ops::tensor(std::vector<double>(4096, 1), {64, 64}, DType::kBFloat16);
  EXPECT_EQ(ops::sum(b).item<double>(), 4096);
  EXPECT_THAT(values(ops::mean(b, {0})), ::testing::Each(1.0));
}

TEST(SumTest, EmptyTensors) {
  const Tensor e = make_tensor({0, 3}, DType::kFloat32, kCPU);
  EXPECT_EQ(ops::sum(e).item<double>(), 0);
  EXPECT_THAT(values(ops::sum(e, {0})), ElementsAre(0, 0, 0));
  EXPECT_THAT(ops::sum(e, {1}).sizes(), ElementsAre(0));
  EXPECT_EQ(ops::sum(make_tensor({0}, DType::kInt32, kCPU)).item<int64_t>(), 0);
  EXPECT_TRUE(std::isnan(ops::mean(e).item<double>()));
  // 0-dim input.
  EXPECT_EQ(ops::sum(ops::tensor({4}, {})).item<double>(), 4);
  EXPECT_EQ(ops::sum(ops::tensor({4}, {}), {0}).item<double>(), 4);
}

TEST(SumTest, BadDims) {
  const Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT([&] { ops::sum(x, {0, 0}); },
              ThrowsMessage<Error>(HasSubstr("aten::sum: dim 0 appears multiple times in the list of dims")));
  EXPECT_THAT([&] { ops::sum(x, {1, -1}); },
              ThrowsMessage<Error>(HasSubstr("dim 1 appears multiple times in the list of dims")));
  EXPECT_THAT([&] { ops::sum(x, {2}); }, ThrowsMessage<Error>(HasSubstr("aten::sum: Dimension out of range")));
  EXPECT_THAT([&] { ops::mean(x, {-3}); }, ThrowsMessage<Error>(HasSubstr("aten::mean: Dimension out of range")));
}

// ---- mean ----

TEST(MeanTest, ValuesAndDtypes) {
  const Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(ops::mean(x).item<double>(), 2.5);
  EXPECT_THAT(values(ops::mean(x, {0})), ElementsAre(2, 3));
  EXPECT_THAT(ops::mean(x, {1}, true).sizes(), ElementsAre(2, 1));
  const Tensor i = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kInt64);
  EXPECT_THAT([&] { ops::mean(i); },
              ThrowsMessage<Error>(HasSubstr("mean(): could not infer output dtype. Input dtype must be either a "
                                             "floating point or complex dtype. Got: Long")));
  EXPECT_THAT([&] { ops::mean(x, DType::kInt32); },
              ThrowsMessage<Error>(HasSubstr("Optional dtype must be either a floating point or complex dtype. Got: Int")));
  const Tensor m = ops::mean(i, DType::kFloat64);
  EXPECT_EQ(m.dtype(), DType::kFloat64);
  EXPECT_EQ(m.item<double>(), 2.5);
}

// ---- amax / amin ----

TEST(AmaxTest, ValuesDimsAndDtypes) {
  const Tensor x = ops::tensor({1, 5, -2, 7, 0, 3}, {2, 3});
  EXPECT_EQ(ops::amax(x).item<double>(), 7);
  EXPECT_EQ(ops::amin(x).item<double>(), -2);
  EXPECT_THAT(values(ops::amax(x, {0})), ElementsAre(7, 5, 3));
  EXPECT_THAT(values(ops::amin(x, {1})), ElementsAre(-2, 0));
  EXPECT_THAT(ops::amax(x, {1}, true).sizes(), ElementsAre(2, 1));
  for (DType dt : {DType::kInt32, DType::kInt64, DType::kBFloat16, DType::kFloat16, DType::kFloat64}) {
    const Tensor t = ops::tensor({1, 5, -2, 7, 0, 3}, {2, 3}, dt);
    EXPECT_EQ(ops::amax(t, {1}).dtype(), dt);
    EXPECT_THAT(values(ops::amax(t, {1})), ElementsAre(5, 7));
    EXPECT_THAT(values(ops::amin(t, {0})), ElementsAre(1, 0, -2));
  }
  const Tensor b = ops::tensor({0, 1, 0, 0}, {2, 2}, DType::kBool);
  EXPECT_THAT(values(ops::amax(b, {1})), ElementsAre(1, 0));
  EXPECT_THAT(values(ops::amin(b, {0})), ElementsAre(0, 0));
  const Tensor neg = ops::tensor({-kInf, -kInf}, {2});
  EXPECT_EQ(ops::amax(neg).item<double>(), -kInf);
}

TEST(AmaxTest, NanPropagates) {
  std::vector<double> v = iota(200);
  v[137] = kNaN;
  const Tensor x = ops::tensor(v, {2, 100});
  EXPECT_TRUE(std::isnan(ops::amax(x).item<double>()));
  EXPECT_TRUE(std::isnan(ops::amin(x).item<double>()));
  const std::vector<double> rows = values(ops::amax(x, {1}));
  EXPECT_EQ(rows[0], 99);
  EXPECT_TRUE(std::isnan(rows[1]));
  const std::vector<double> cols = values(ops::amin(x, {0}));  // the outer-reduction path
  EXPECT_TRUE(std::isnan(cols[37]));
  EXPECT_EQ(cols[36], 36);
  // NaN first, then larger values.
  EXPECT_TRUE(std::isnan(ops::amax(ops::tensor({kNaN, 1, 2}, {3})).item<double>()));
}

// Contiguous f32/f64 leaves take the vectorized max (fast_leaf); it must give
// the lanes' bits: the same NaN, the same signed zero, the same extremum.
TEST(AmaxTest, VectorizedLeavesAgreeWithTheLanesBitForBit) {
  for (const DType d : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(d));
    const Tensor x = ops::randn({3, 5000}, {.dtype = d});
    const Tensor strided = ops::transpose(ops::contiguous(ops::transpose(x, 0, 1)), 0, 1);  // the lanes' path
    EXPECT_TRUE(ops::equal(ops::amax(x, {1}), ops::amax(strided, {1})));
    EXPECT_TRUE(ops::equal(ops::amin(x, {1}), ops::amin(strided, {1})));
    EXPECT_TRUE(ops::equal(ops::amax(x), ops::amax(strided)));
    // A NaN far into a long row, and a row of zeros of both signs.
    std::vector<double> v(40000, 0.0);
    for (size_t i = 0; i < v.size(); ++i) v[i] = (i % 3 == 0) ? -0.0 : 0.0;
    const Tensor zeros = ops::tensor(v, {40000}, d);
    const Tensor zeros_strided = ops::slice(ops::reshape(ops::stack({zeros, zeros}, 1), {80000}), 0, 0, 80000, 2);
    EXPECT_EQ(std::signbit(ops::amax(zeros).item<double>()), std::signbit(ops::amax(zeros_strided).item<double>()));
    EXPECT_EQ(std::signbit(ops::amin(zeros).item<double>()), std::signbit(ops::amin(zeros_strided).item<double>()));
    v.assign(40000, 1.0);
    v[31111] = kNaN;
    EXPECT_TRUE(std::isnan(ops::amax(ops::tensor(v, {40000}, d)).item<double>()));
  }
}

TEST(AmaxTest, EmptyReductionsAreErrors) {
  const Tensor e = make_tensor({0, 3}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { ops::amax(e, {0}); },
              ThrowsMessage<Error>(HasSubstr("amax(): Expected reduction dim 0 to have non-zero size.")));
  EXPECT_THAT([&] { ops::amin(e, {0}); },
              ThrowsMessage<Error>(HasSubstr("amin(): Expected reduction dim 0 to have non-zero size.")));
  EXPECT_THAT([&] { ops::amax(e); },
              ThrowsMessage<Error>(HasSubstr("amax(): Expected reduction dim to be specified for input.numel() == 0")));
  // Reducing the non-empty dim of an empty tensor is fine.
  EXPECT_THAT(ops::amax(e, {1}).sizes(), ElementsAre(0));
}

// ---- linalg_vector_norm ----

TEST(NormTest, Orders) {
  const Tensor x = ops::tensor({3, -4, 0}, {3});
  EXPECT_EQ(ops::linalg_vector_norm(x).item<double>(), 5);
  EXPECT_EQ(ops::linalg_vector_norm(x, 1).item<double>(), 7);
  EXPECT_EQ(ops::linalg_vector_norm(x, kInf).item<double>(), 4);
  EXPECT_EQ(ops::linalg_vector_norm(x, -kInf).item<double>(), 0);
  EXPECT_EQ(ops::linalg_vector_norm(x, 0).item<double>(), 2);
  EXPECT_NEAR(ops::linalg_vector_norm(x, 3).item<double>(), std::cbrt(91.0), 1e-5);
  EXPECT_NEAR(ops::linalg_vector_norm(x, 0.5).item<double>(), std::pow(std::sqrt(3.0) + 2, 2), 1e-4);
  const Tensor m = ops::tensor({3, 4, 6, 8}, {2, 2}, DType::kFloat64);
  EXPECT_THAT(values(ops::linalg_vector_norm(m, 2, IntArrayRef{1})), ElementsAre(5, 10));
  EXPECT_THAT(values(ops::linalg_vector_norm(m, 1, IntArrayRef{0})), ElementsAre(9, 12));
  EXPECT_THAT(ops::linalg_vector_norm(m, 2, IntArrayRef{0}, true).sizes(), ElementsAre(1, 2));
  EXPECT_EQ(ops::linalg_vector_norm(m, 2, IntArrayRef{0}).dtype(), DType::kFloat64);
  EXPECT_EQ(ops::linalg_vector_norm(x, 2, std::nullopt, false, DType::kFloat64).dtype(), DType::kFloat64);
  EXPECT_TRUE(std::isnan(ops::linalg_vector_norm(ops::tensor({1, kNaN}, {2}), kInf).item<double>()));
  EXPECT_EQ(ops::linalg_vector_norm(make_tensor({0}, DType::kFloat32, kCPU)).item<double>(), 0);
}

TEST(NormTest, F64OrdOneMatchesNaive) {
  // DebugMode's 'norm' hash: ord=1 on f64 of large (strided) tensors.
  const Tensor x = ops::tensor(random_values(1 << 18, 3, -100, 100), {512, 512}, DType::kFloat64);
  double want = 0;
  for (double v : values(x)) want += std::abs(v);
  EXPECT_NEAR(ops::linalg_vector_norm(x, 1).item<double>(), want, 1e-12 * want);
  const Tensor xt = make_view(x, {512, 512}, {1, 512}, 0);
  EXPECT_NEAR(ops::linalg_vector_norm(xt, 1).item<double>(), want, 1e-12 * want);
}

TEST(NormTest, Errors) {
  EXPECT_THAT([&] { ops::linalg_vector_norm(ops::tensor({1, 2}, {2}, DType::kInt64)); },
              ThrowsMessage<Error>(HasSubstr("Expected a floating point or complex tensor as input. Got Long")));
  EXPECT_THAT([&] { ops::linalg_vector_norm(ops::tensor({1, 2}, {2}, DType::kFloat64), 2, std::nullopt, false,
                                            DType::kFloat32); },
              ThrowsMessage<Error>(HasSubstr("should be convertible without narrowing")));
  EXPECT_THAT([&] { ops::linalg_vector_norm(make_tensor({0}, DType::kFloat32, kCPU), kInf); },
              ThrowsMessage<Error>(HasSubstr("cannot compute the inf norm on an empty tensor")));
}

// ---- Meta ----

TEST(ReductionMetaTest, ShapesAndDtypes) {
  const Tensor x = make_tensor({2, 3, 4}, DType::kInt32, kMeta);
  const Tensor s = ops::sum(x, {1});
  EXPECT_TRUE(s.device().is_meta());
  EXPECT_THAT(s.sizes(), ElementsAre(2, 4));
  EXPECT_EQ(s.dtype(), DType::kInt64);
  EXPECT_EQ(ops::sum(x).dim(), 0);
  EXPECT_EQ(ops::sum(x, DType::kFloat16).dtype(), DType::kFloat16);
  const Tensor f = make_tensor({2, 3, 4}, DType::kBFloat16, kMeta);
  EXPECT_THAT(ops::mean(f, {0, 2}, true).sizes(), ElementsAre(1, 3, 1));
  EXPECT_EQ(ops::mean(f).dtype(), DType::kBFloat16);
  EXPECT_THAT(ops::amax(f, {-1}).sizes(), ElementsAre(2, 3));
  EXPECT_EQ(ops::amin(x).dtype(), DType::kInt32);
  EXPECT_THAT(ops::linalg_vector_norm(f, 2, IntArrayRef{0}).sizes(), ElementsAre(3, 4));
  EXPECT_THAT([&] { ops::mean(x); }, ThrowsMessage<Error>(HasSubstr("Got: Int")));
  EXPECT_THAT([&] { ops::sum(x, {3}); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([&] { ops::amax(make_tensor({2, 0}, DType::kFloat32, kMeta), {1}); },
              ThrowsMessage<Error>(HasSubstr("amax(): Expected reduction dim 1 to have non-zero size.")));
  EXPECT_THAT([&] { ops::linalg_vector_norm(x); }, ThrowsMessage<Error>(HasSubstr("Got Int")));
}

}  // namespace
}  // namespace opspec
