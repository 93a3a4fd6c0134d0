// Values, dtype rules, broadcasting and strided inputs of the elementwise ops.
// In-place ops, copies, meta kernels and errors: elementwise_inplace_test.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace elementwise_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// Matches doubles within rel 1e-6 (f32 results against double references),
// NaN matching NaN.
MATCHER_P(NearVec, expected, "") {
  const std::vector<double>& got = arg;
  if (got.size() != expected.size()) return false;
  for (size_t i = 0; i < got.size(); ++i) {
    const double e = expected[i], g = got[i];
    if (std::isnan(e) != std::isnan(g)) return false;
    if (std::isnan(e)) continue;
    if (std::isinf(e) ? e != g : std::abs(g - e) > 1e-6 * std::max(1.0, std::abs(e))) {
      *result_listener << "element " << i << ": got " << g << ", expected " << e;
      return false;
    }
  }
  return true;
}

struct UnaryCase {
  const char* name;
  std::function<Tensor(const Tensor&)> op;
  std::vector<double> expected;  // for kUnaryInput
};

const std::vector<double> kUnaryInput = {-2.0, -0.5, 0.0, 0.5, 2.0};

TEST(ElementwiseUnaryTest, ValuesMatchHandComputedResults) {
  const double e = std::exp(1.0);
  const std::vector<UnaryCase> cases = {
      {"neg", [](const Tensor& x) { return ops::neg(x); }, {2, 0.5, 0, -0.5, -2}},
      {"abs", [](const Tensor& x) { return ops::abs(x); }, {2, 0.5, 0, 0.5, 2}},
      {"relu", [](const Tensor& x) { return ops::relu(x); }, {0, 0, 0, 0.5, 2}},
      {"sin", [](const Tensor& x) { return ops::sin(x); },
       {-0.9092974268256817, -0.479425538604203, 0, 0.479425538604203, 0.9092974268256817}},
      {"cos", [](const Tensor& x) { return ops::cos(x); },
       {-0.4161468365471424, 0.8775825618903728, 1, 0.8775825618903728, -0.4161468365471424}},
      {"exp", [](const Tensor& x) { return ops::exp(x); }, {1 / (e * e), 1 / std::sqrt(e), 1, std::sqrt(e), e * e}},
      {"log", [](const Tensor& x) { return ops::log(x); }, {kNaN, kNaN, -kInf, -0.6931471805599453, 0.6931471805599453}},
      {"tanh", [](const Tensor& x) { return ops::tanh(x); },
       {-0.9640275800758169, -0.46211715726000974, 0, 0.46211715726000974, 0.9640275800758169}},
      {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); },
       {0.11920292202211755, 0.3775406687981454, 0.5, 0.6224593312018546, 0.8807970779778823}},
      {"sqrt", [](const Tensor& x) { return ops::sqrt(x); }, {kNaN, kNaN, 0, 0.7071067811865476, 1.4142135623730951}},
      {"rsqrt", [](const Tensor& x) { return ops::rsqrt(x); }, {kNaN, kNaN, kInf, 1.4142135623730951, 0.7071067811865476}},
      {"reciprocal", [](const Tensor& x) { return ops::reciprocal(x); }, {-0.5, -2, kInf, 2, 0.5}},
      {"erf", [](const Tensor& x) { return ops::erf(x); },
       {-0.9953222650189527, -0.5204998778130465, 0, 0.5204998778130465, 0.9953222650189527}},
      {"gelu", [](const Tensor& x) { return ops::gelu(x); },
       {-0.04550026389635842, -0.15426876936299344, 0, 0.34573123063700656, 1.9544997361036416}},
      {"gelu_tanh", [](const Tensor& x) { return ops::gelu(x, "tanh"); },
       {-0.04540230591222, -0.15428599017, 0, 0.34571400983, 1.95459769409}},
      {"silu", [](const Tensor& x) { return ops::silu(x); },
       {-0.2384058440442351, -0.1887703343990727, 0, 0.3112296656009273, 1.7615941559557650}},
      {"logical_not", [](const Tensor& x) { return ops::logical_not(x); }, {0, 0, 1, 0, 0}},
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const Tensor x = ops::tensor(kUnaryInput, {5}, dt);
    for (const UnaryCase& c : cases) {
      const Tensor y = c.op(x);
      EXPECT_EQ(y.dtype(), std::string_view(c.name) == "logical_not" ? DType::kBool : dt) << c.name;
      EXPECT_THAT(values(y), NearVec(c.expected)) << c.name << " " << dtype_short_name(dt);
    }
  }
}

// expm1 and log1p keep the digits exp(x) - 1 and log(1 + x) lose near 0.
TEST(ElementwiseUnaryTest, Expm1AndLog1pAreAccurateNearZero) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(dt));
    const std::vector<double> in = {-2.0, -0.5, 0.0, 1e-10, 0.5, 2.0};
    const Tensor x = ops::tensor(in, {6}, dt);
    const std::vector<double> xs = values(x);  // as rounded to dt
    std::vector<double> want_expm1, want_log1p;
    for (double v : xs) {
      want_expm1.push_back(std::expm1(v));
      want_log1p.push_back(std::log1p(v));
    }
    EXPECT_THAT(values(ops::expm1(x)), NearVec(want_expm1));
    EXPECT_THAT(values(ops::log1p(x)), NearVec(want_log1p));
    // At 1e-10 the naive forms give 0 in f32; these give x itself to 1e-6.
    EXPECT_NEAR(values(ops::expm1(x))[3] / xs[3], 1.0, 1e-6);
    EXPECT_NEAR(values(ops::log1p(x))[3] / xs[3], 1.0, 1e-6);
    EXPECT_EQ(values(ops::log1p(ops::tensor({-1.0}, {1}, dt)))[0], -kInf);
    EXPECT_TRUE(std::isnan(values(ops::log1p(ops::tensor({-2.0}, {1}, dt)))[0]));
  }
  // Integers compute in f32, as every kFloating row.
  EXPECT_EQ(ops::expm1(ops::arange(3)).dtype(), DType::kFloat32);
}

TEST(ElementwiseUnaryTest, SpecialFloatingValues) {
  const Tensor x = ops::tensor({-0.0, kNaN, -kInf, kInf}, {4});
  EXPECT_THAT(values(ops::relu(x)), NearVec(std::vector<double>{0, kNaN, 0, kInf}));
  EXPECT_TRUE(std::signbit(values(ops::relu(x))[0]));  // clamp_min keeps -0.0, as PyTorch
  EXPECT_FALSE(std::signbit(values(ops::abs(x))[0]));
  // neg flips the sign of a zero (-x, as ATen's neg), in every floating dtype: torch 1.13 gives -0.0 for neg(0.0).
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const std::vector<double> n = values(ops::neg(ops::to(ops::tensor({0.0, -0.0}, {2}), dt)));
    EXPECT_TRUE(std::signbit(n[0]) && !std::signbit(n[1])) << dtype_short_name(dt);
  }
  EXPECT_THAT(values(ops::sigmoid(x)), NearVec(std::vector<double>{0.5, kNaN, 0, 1}));
  EXPECT_THAT(values(ops::logical_not(x)), ElementsAre(1, 0, 0, 0));
}

TEST(ElementwiseUnaryTest, DtypeRules) {
  const Tensor i = ops::tensor({-3, 0, 4}, {3}, DType::kInt64);
  EXPECT_EQ(ops::neg(i).dtype(), DType::kInt64);
  EXPECT_THAT(values(ops::neg(i)), ElementsAre(3, 0, -4));
  EXPECT_THAT(values(ops::abs(ops::tensor({-3, 5}, {2}, DType::kInt32))), ElementsAre(3, 5));
  EXPECT_THAT(values(ops::relu(i)), ElementsAre(0, 0, 4));
  EXPECT_EQ(ops::relu(i).dtype(), DType::kInt64);
  // Integer and bool inputs of floating ops compute in f32.
  const Tensor s = ops::sqrt(ops::tensor({4, 9}, {2}, DType::kInt32));
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_THAT(values(s), ElementsAre(2, 3));
  const Tensor eb = ops::exp(ops::tensor({0, 1}, {2}, DType::kBool));
  EXPECT_EQ(eb.dtype(), DType::kFloat32);
  EXPECT_THAT(values(eb), NearVec(std::vector<double>{1, std::exp(1.0f)}));
  const Tensor ln = ops::logical_not(i);
  EXPECT_EQ(ln.dtype(), DType::kBool);
  EXPECT_THAT(values(ln), ElementsAre(0, 1, 0));
  // Integer negation wraps like PyTorch's instead of being undefined.
  const Tensor m = ops::tensor({0}, {1}, DType::kInt64);
  m.data_ptr<int64_t>()[0] = std::numeric_limits<int64_t>::min();
  EXPECT_EQ(ops::neg(m).to_vector<int64_t>()[0], std::numeric_limits<int64_t>::min());
}

TEST(ElementwiseUnaryTest, ReducedPrecisionComputesInFloatAndRoundsOnStore) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = ops::tensor({1.0, 0.1, -3.0}, {3}, dt);
    const Tensor y = ops::exp(x);
    EXPECT_EQ(y.dtype(), dt);
    const std::vector<double> in = values(x), out = values(y);
    for (size_t k = 0; k < in.size(); ++k) {
      const float want = dt == DType::kFloat16 ? static_cast<float>(Half(std::exp(static_cast<float>(in[k]))))
                                               : static_cast<float>(BFloat16(std::exp(static_cast<float>(in[k]))));
      EXPECT_EQ(out[k], want) << dtype_short_name(dt) << " element " << k;
    }
  }
  EXPECT_EQ(values(ops::exp(ops::tensor({1.0}, {1}, DType::kFloat16)))[0], 2.71875);
}

TEST(ElementwiseUnaryTest, StridedEmptyAndZeroDim) {
  const Tensor x = ops::tensor({1, -2, 3, -4, 5, -6}, {2, 3});
  EXPECT_THAT(values(ops::neg(ops::t(x))), ElementsAre(-1, 4, 2, -5, -3, 6));
  EXPECT_THAT(values(ops::abs(ops::slice(x, 1, 0, 3, 2))), ElementsAre(1, 3, 4, 6));
  EXPECT_THAT(values(ops::relu(ops::expand(ops::tensor({-1, 2}, {2, 1}), {2, 3}))), ElementsAre(0, 0, 0, 2, 2, 2));
  const Tensor e = ops::sin(ops::tensor({}, {0, 3}));
  EXPECT_THAT(e.sizes(), ElementsAre(0, 3));
  const Tensor z = ops::exp(ops::tensor({0}, {}, DType::kInt64));
  EXPECT_EQ(z.dim(), 0);
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_THAT(values(z), ElementsAre(1));
}

// gelu and silu take a floating self only (PyTorch's build_unary_op, no
// promotion), naming the kernel that refused; sign and sgn return a b8 self
// as it is (sign_kernel's Bool branch).
TEST(ElementwiseUnaryTest, FloatingOnlyAndBoolKeepingOps) {
  const Tensor l = ops::tensor({-1, 2}, {2}, DType::kInt64);
  EXPECT_THAT([&] { ops::gelu(l); }, ThrowsMessage<Error>(HasSubstr("\"GeluKernelImpl\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::silu(l); }, ThrowsMessage<Error>(HasSubstr("\"silu_cpu\" not implemented for 'Long'")));
  const Tensor b = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  EXPECT_THAT([&] { ops::gelu(b, "tanh"); },
              ThrowsMessage<Error>(HasSubstr("\"GeluKernelImpl\" not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::silu(b); }, ThrowsMessage<Error>(HasSubstr("\"silu_cpu\" not implemented for 'Bool'")));
  EXPECT_EQ(ops::silu(ops::tensor({1}, {1}, DType::kFloat16)).dtype(), DType::kFloat16);
  const Tensor strided = ops::slice(ops::tensor({1, 0, 0, 1}, {4}, DType::kBool), 0, 0, 4, 3);
  for (const Tensor& s : {ops::sign(b), ops::sgn(b), ops::sign(strided)}) EXPECT_EQ(s.dtype(), DType::kBool);
  EXPECT_THAT(values(ops::sign(b)), ElementsAre(1, 0, 1));
  EXPECT_THAT(values(ops::sgn(b)), ElementsAre(1, 0, 1));
  EXPECT_THAT(values(ops::sign(strided)), ElementsAre(1, 1));
}

TEST(ElementwiseUnaryTest, GeluRejectsUnknownApproximation) {
  const Tensor x = ops::tensor({1}, {1});
  EXPECT_THAT([&] { ops::gelu(x, "fast"); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::gelu"), HasSubstr("'fast'"))));
}

// ---- Binary ----

TEST(ElementwiseBinaryTest, ArithmeticValues) {
  const Tensor a = ops::tensor({6, -3, 2.5, 0}, {4});
  const Tensor b = ops::tensor({2, 4, -0.5, 8}, {4});
  EXPECT_THAT(values(ops::add(a, b)), ElementsAre(8, 1, 2, 8));
  EXPECT_THAT(values(ops::add(a, b, 2)), ElementsAre(10, 5, 1.5, 16));
  EXPECT_THAT(values(ops::sub(a, b)), ElementsAre(4, -7, 3, -8));
  EXPECT_THAT(values(ops::sub(a, b, 0.5)), ElementsAre(5, -5, 2.75, -4));
  EXPECT_THAT(values(ops::mul(a, b)), ElementsAre(12, -12, -1.25, 0));
  EXPECT_THAT(values(ops::div(a, b)), ElementsAre(3, -0.75, -5, 0));
  EXPECT_THAT(values(ops::maximum(a, b)), ElementsAre(6, 4, 2.5, 8));
  EXPECT_THAT(values(ops::minimum(a, b)), ElementsAre(2, -3, -0.5, 0));
  EXPECT_THAT(values(ops::pow(ops::tensor({2, 9, 4}, {3}), ops::tensor({3, 0.5, -1}, {3}))), ElementsAre(8, 3, 0.25));
  EXPECT_THAT(values(ops::rsub(a, 10)), ElementsAre(4, 13, 7.5, 10));
  EXPECT_THAT(values(ops::rsub(a, 10, 2)), ElementsAre(-2, 16, 5, 10));
  EXPECT_THAT(values(ops::div(ops::tensor({1, -1, 0}, {3}), ops::tensor({0, 0, 0}, {3}))),
              NearVec(std::vector<double>{kInf, -kInf, kNaN}));
}

TEST(ElementwiseBinaryTest, IntegerArithmetic) {
  const Tensor a = ops::tensor({7, -7, 3}, {3}, DType::kInt64);
  const Tensor b = ops::tensor({2, 2, -4}, {3}, DType::kInt64);
  EXPECT_THAT(values(ops::add(a, b, 3)), ElementsAre(13, -1, -9));
  const Tensor q = ops::div(a, b);  // true division
  EXPECT_EQ(q.dtype(), DType::kFloat32);
  EXPECT_THAT(values(q), ElementsAre(3.5, -3.5, -0.75));
  const Tensor p = ops::pow(ops::tensor({2, 1, -1, -1, 3, 0}, {6}, DType::kInt32),
                            ops::tensor({10, -5, -3, -2, -1, 0}, {6}, DType::kInt32));
  EXPECT_EQ(p.dtype(), DType::kInt32);
  EXPECT_THAT(values(p), ElementsAre(1024, 1, -1, 1, 0, 1));
  EXPECT_THAT(values(ops::pow(a, 2)), ElementsAre(49, 49, 9));
  EXPECT_THAT(values(ops::pow(a, 3)), ElementsAre(343, -343, 27));
  EXPECT_THAT(values(ops::pow(ops::tensor({3}, {1}, DType::kInt64), 4)), ElementsAre(81));
  EXPECT_EQ(ops::pow(a, 2.5).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::maximum(a, b)), ElementsAre(7, 2, 3));
  // Bool arithmetic: add is or, mul is and; maximum/minimum are or/and.
  const Tensor t = ops::tensor({0, 0, 1, 1}, {4}, DType::kBool), u = ops::tensor({0, 1, 0, 1}, {4}, DType::kBool);
  EXPECT_EQ(ops::add(t, u).dtype(), DType::kBool);
  EXPECT_THAT(values(ops::add(t, u)), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(values(ops::mul(t, u)), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(values(ops::maximum(t, u)), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(values(ops::minimum(t, u)), ElementsAre(0, 0, 0, 1));
}

TEST(ElementwiseBinaryTest, PowScalarFastPathsMatchPow) {
  const Tensor x = ops::tensor({0.25, 4, 9}, {3});
  EXPECT_THAT(values(ops::pow(x, 0.5)), ElementsAre(0.5, 2, 3));
  EXPECT_THAT(values(ops::pow(x, -0.5)), ElementsAre(2, 0.5, 1.0f / 3.0f));
  EXPECT_THAT(values(ops::pow(x, -1)), ElementsAre(4, 0.25, 1.0f / 9.0f));
  EXPECT_THAT(values(ops::pow(x, 2)), ElementsAre(0.0625, 16, 81));
  EXPECT_THAT(values(ops::pow(x, 3)), ElementsAre(0.015625, 64, 729));
  EXPECT_THAT(values(ops::pow(x, -2)), ElementsAre(16, 0.0625, 1.0f / 81.0f));
  EXPECT_THAT(values(ops::pow(x, 1.5)), NearVec(std::vector<double>{0.125, 8, 27}));
  EXPECT_THAT(values(ops::pow(x, 0)), ElementsAre(1, 1, 1));
  EXPECT_THAT(values(ops::pow(ops::tensor({4}, {1}, DType::kFloat16), 0.5)), ElementsAre(2));
}

TEST(ElementwiseBinaryTest, MaximumMinimumPropagateNaN) {
  const Tensor a = ops::tensor({kNaN, 1, kNaN, 3}, {4});
  const Tensor b = ops::tensor({1, kNaN, kNaN, 2}, {4});
  EXPECT_THAT(values(ops::maximum(a, b)), NearVec(std::vector<double>{kNaN, kNaN, kNaN, 3}));
  EXPECT_THAT(values(ops::minimum(a, b)), NearVec(std::vector<double>{kNaN, kNaN, kNaN, 2}));
}

TEST(ElementwiseBinaryTest, TypePromotion) {
  const Tensor i64 = ops::tensor({1, 2}, {2}, DType::kInt64);
  const Tensor i32 = ops::tensor({1, 2}, {2}, DType::kInt32);
  const Tensor f32 = ops::tensor({0.5, 0.25}, {2});
  const Tensor b8 = ops::tensor({1, 0}, {2}, DType::kBool);
  const Tensor f16 = ops::tensor({1, 2}, {2}, DType::kFloat16);
  EXPECT_EQ(ops::add(i64, f32).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::add(i64, f32)), ElementsAre(1.5, 2.25));
  EXPECT_EQ(ops::add(i32, i64).dtype(), DType::kInt64);
  EXPECT_EQ(ops::add(b8, i64).dtype(), DType::kInt64);
  EXPECT_THAT(values(ops::add(b8, i64)), ElementsAre(2, 2));
  EXPECT_EQ(ops::add(f16, 2.5).dtype(), DType::kFloat16);
  EXPECT_THAT(values(ops::add(f16, 2.5)), ElementsAre(3.5, 4.5));
  EXPECT_EQ(ops::add(i64, 2.5).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::add(i64, 2.5)), ElementsAre(3.5, 4.5));
  EXPECT_EQ(ops::add(i32, 2).dtype(), DType::kInt32);
  EXPECT_EQ(ops::mul(b8, true).dtype(), DType::kBool);
  const Tensor f64_0d = ops::tensor({2}, {}, DType::kFloat64);
  EXPECT_EQ(ops::add(f64_0d, f32).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::add(f64_0d, i64).dtype(), DType::kFloat64);  // higher category wins
  EXPECT_EQ(ops::div(i32, i64).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::div(f16, 2).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::add(ops::tensor({1}, {1}, DType::kBFloat16), f16).dtype(), DType::kFloat32);
  // A C++ number of no higher category keeps the tensor's dtype, device and shape; else it promotes.
  EXPECT_EQ(ops::mul(b8, 2).dtype(), DType::kInt64);
  EXPECT_THAT(values(ops::mul(b8, 2)), ElementsAre(2, 0));
  EXPECT_EQ(ops::div(i32, 2).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::div(i32, 2)), ElementsAre(0.5, 1));
  EXPECT_EQ(ops::mul(f64_0d, 2.5).dtype(), DType::kFloat64);
  EXPECT_EQ(ops::mul(f64_0d, 2.5).dim(), 0);
  EXPECT_EQ(ops::mul(i64, true).dtype(), DType::kInt64);
}

TEST(ElementwiseBinaryTest, ReducedPrecisionScalarOperands) {
  // mul/div use the scalar's float value (PyTorch's original_scalar_value).
  const Tensor h = ops::tensor({3}, {1}, DType::kFloat16);
  EXPECT_EQ(values(ops::mul(h, 0.1))[0], static_cast<float>(Half(3.0f * 0.1f)));
  EXPECT_EQ(values(ops::div(h, 3))[0], 1);
  EXPECT_EQ(values(ops::add(ops::tensor({1}, {1}, DType::kBFloat16), 1.0 / 256))[0], 1.0);  // rounds to even
}

TEST(ElementwiseBinaryTest, BroadcastingShapes) {
  const Tensor col = ops::tensor({1, 2, 3}, {3, 1});
  const Tensor row = ops::tensor({10, 20, 30, 40}, {1, 4});
  const Tensor s = ops::add(col, row);
  EXPECT_THAT(s.sizes(), ElementsAre(3, 4));
  EXPECT_THAT(values(s), ElementsAre(11, 21, 31, 41, 12, 22, 32, 42, 13, 23, 33, 43));
  const Tensor lower = ops::add(ops::tensor({1, 2}, {2}), ops::tensor({0, 100, 200}, {3, 1, 1}));
  EXPECT_THAT(lower.sizes(), ElementsAre(3, 1, 2));
  EXPECT_THAT(values(lower), ElementsAre(1, 2, 101, 102, 201, 202));
  EXPECT_THAT([&] { ops::add(ops::tensor({1, 2, 3}, {3}), ops::tensor({1, 2}, {2})); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::add"), HasSubstr("must match the size"))));
  const Tensor e = ops::mul(ops::tensor({}, {0, 1}), ops::tensor({1, 2}, {2}));
  EXPECT_THAT(e.sizes(), ElementsAre(0, 2));
}

TEST(ElementwiseBinaryTest, ZeroDimAndEmptyOperands) {
  const Tensor a = ops::tensor({3}, {}, DType::kInt32), b = ops::tensor({4}, {}, DType::kInt32);
  const Tensor s = ops::mul(a, b);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.dtype(), DType::kInt32);
  EXPECT_THAT(values(s), ElementsAre(12));
  EXPECT_EQ(ops::lt(a, b).dim(), 0);
  EXPECT_THAT(values(ops::where(ops::tensor({0}, {}, DType::kBool), a, b)), ElementsAre(4));
  EXPECT_THAT(values(ops::add(a, ops::tensor({1, 2}, {2}))), ElementsAre(4, 5));  // 0-dim broadcasts
  for (const Tensor& e : {ops::add(ops::tensor({}, {0}), ops::tensor({}, {0})), ops::eq(ops::tensor({}, {2, 0}), 1),
                          ops::where(ops::tensor({}, {0}, DType::kBool), ops::tensor({}, {0}), 2.0),
                          ops::pow(ops::tensor({}, {0}), 2), ops::div(ops::tensor({}, {0}, DType::kInt64), 2)}) {
    EXPECT_EQ(e.numel(), 0);
  }
}

TEST(ElementwiseBinaryTest, StridedInputs) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor y = ops::tensor({10, 20, 30, 40, 50, 60}, {3, 2});
  EXPECT_THAT(values(ops::add(ops::t(x), y)), ElementsAre(11, 24, 32, 45, 53, 66));
  EXPECT_THAT(values(ops::mul(ops::t(x), ops::t(ops::t(y)))), ElementsAre(10, 80, 60, 200, 150, 360));
  const Tensor sl = ops::slice(x, 1, 1, 3);  // [[2, 3], [5, 6]]
  EXPECT_THAT(values(ops::sub(sl, ops::slice(y, 0, 0, 2))), ElementsAre(-8, -17, -25, -34));
  const Tensor ex = ops::expand(ops::tensor({1, 2, 3}, {3}), {2, 3});
  EXPECT_THAT(values(ops::mul(ex, x)), ElementsAre(1, 4, 9, 4, 10, 18));
  EXPECT_THAT(values(ops::maximum(ops::t(ex), ops::t(x))), ElementsAre(1, 4, 2, 5, 3, 6));
  EXPECT_THAT(values(ops::add(ops::select(x, 1, 1), ops::select(y, 0, 2))), ElementsAre(52, 65));
  // Mixed dtypes with a non-contiguous input.
  const Tensor xi = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kInt32);
  EXPECT_THAT(values(ops::add(ops::t(xi), ops::tensor({0.5}, {1}))), ElementsAre(1.5, 4.5, 2.5, 5.5, 3.5, 6.5));
}

TEST(ElementwiseBinaryTest, LargeTensorsUseEveryPathCorrectly) {
  const int64_t n = 256, m = 300;  // n * m > the parallel grain
  std::vector<double> v(static_cast<size_t>(n * m));
  for (size_t k = 0; k < v.size(); ++k) v[k] = static_cast<double>(k % 1000) - 500;
  const Tensor a = ops::tensor(v, {n, m});
  const Tensor col = ops::tensor(std::vector<double>(static_cast<size_t>(n), 2.0), {n, 1});
  const Tensor r1 = ops::mul(a, col);                    // broadcast inner stride 0
  const Tensor r2 = ops::add(ops::t(a), ops::t(a));      // transposed
  const Tensor r3 = ops::relu(a);                        // flat contiguous
  const Tensor r4 = ops::gt(a, 0.0);
  bool ok = true;
  const std::vector<double> v1 = values(r1), v2 = values(r2), v3 = values(r3), v4 = values(r4);
  for (int64_t i = 0; i < n && ok; ++i) {
    for (int64_t j = 0; j < m && ok; ++j) {
      const double x = v[i * m + j];
      ok = v1[i * m + j] == 2 * x && v2[j * n + i] == 2 * x && v3[i * m + j] == std::max(x, 0.0) &&
           v4[i * m + j] == (x > 0 ? 1 : 0);
    }
  }
  EXPECT_TRUE(ok);
}

// add/sub with alpha round once, as PyTorch's vec::fmadd (See Note [Add with
// alpha]): every loop (small, large contiguous, broadcast, strided, in place)
// gives fma's value, where a + alpha * b would round twice.
TEST(ElementwiseBinaryTest, AddWithAlphaRoundsOnce) {
  const int64_t n = 300, m = 257;  // n * m > the parallel grain; m odd leaves loop tails
  std::vector<double> va(static_cast<size_t>(n * m)), vb(va.size());
  for (size_t k = 0; k < va.size(); ++k) {
    va[k] = std::sin(0.37 * static_cast<double>(k)) * 3;
    vb[k] = std::cos(0.11 * static_cast<double>(k) + 1) * 2;
  }
  const Tensor a = ops::tensor(va, {n, m}), b = ops::tensor(vb, {n, m});
  const std::vector<float> fa = a.to_vector<float>(), fb = b.to_vector<float>();
  auto expect_fma = [&](const Tensor& got, float alpha, auto b_at, const char* what) {
    const std::vector<float> g = ops::contiguous(got).to_vector<float>();
    int64_t wrong = 0, twice = 0;
    for (size_t k = 0; k < g.size(); ++k) {
      const float want = std::fma(b_at(k), alpha, fa[k]);
      wrong += g[k] != want;
      twice += fa[k] + alpha * b_at(k) != want;  // -ffp-contract=off: two roundings
    }
    EXPECT_EQ(wrong, 0) << what;
    EXPECT_GT(twice, 0) << what << ": the values do not tell one rounding from two";
  };
  const auto same_k = [&](size_t k) { return fb[k]; };
  expect_fma(ops::add(a, b, 0.3), 0.3f, same_k, "add");
  expect_fma(ops::sub(a, b, 0.3), -0.3f, same_k, "sub");
  expect_fma(ops::t(ops::add(ops::t(a), ops::t(b), 0.3)), 0.3f, same_k, "strided");
  const Tensor small_a = ops::slice(a, 0, 0, 1), small_b = ops::slice(b, 0, 0, 1);
  expect_fma(ops::add(small_a, small_b, 0.3), 0.3f, same_k, "small");
  const Tensor b0 = ops::select(ops::select(b, 0, 0), 0, 3);  // 0-dim: a broadcast operand
  expect_fma(ops::add(a, b0, 0.3), 0.3f, [&](size_t) { return fb[3]; }, "broadcast");
  Tensor c = ops::clone(a);
  ops::add_(c, b, 0.3);
  expect_fma(c, 0.3f, same_k, "add_");
  // f64 too: fma in double.
  const Tensor da = ops::to(a, DType::kFloat64), db = ops::to(b, DType::kFloat64);
  const std::vector<double> got = ops::add(da, db, 0.3).to_vector<double>();
  int64_t wrong = 0;
  for (size_t k = 0; k < got.size(); ++k) {
    wrong += got[k] != std::fma(static_cast<double>(fb[k]), 0.3, static_cast<double>(fa[k]));
  }
  EXPECT_EQ(wrong, 0) << "f64";
}

// ---- Comparisons, logical ops, where ----

TEST(ElementwiseCompareTest, TensorAndScalarComparisons) {
  const Tensor a = ops::tensor({1, 2, 3}, {3}, DType::kInt64);
  const Tensor b = ops::tensor({3, 2, 1}, {3});
  const Tensor eq = ops::eq(a, b);
  EXPECT_EQ(eq.dtype(), DType::kBool);
  EXPECT_THAT(values(eq), ElementsAre(0, 1, 0));
  EXPECT_THAT(values(ops::ne(a, b)), ElementsAre(1, 0, 1));
  EXPECT_THAT(values(ops::lt(a, b)), ElementsAre(1, 0, 0));
  EXPECT_THAT(values(ops::le(a, b)), ElementsAre(1, 1, 0));
  EXPECT_THAT(values(ops::gt(a, b)), ElementsAre(0, 0, 1));
  EXPECT_THAT(values(ops::ge(a, b)), ElementsAre(0, 1, 1));
  // Compared in the promoted dtype: 1.5 is not truncated to an integer.
  EXPECT_THAT(values(ops::gt(a, 1.5)), ElementsAre(0, 1, 1));
  EXPECT_THAT(values(ops::eq(a, 2)), ElementsAre(0, 1, 0));
  EXPECT_THAT(values(ops::le(ops::t(ops::tensor({1, 2, 3, 4}, {2, 2})), 2)), ElementsAre(1, 0, 1, 0));
  // f16 == 0.1 compares against 0.1 rounded to f16.
  EXPECT_THAT(values(ops::eq(ops::tensor({0.1}, {1}, DType::kFloat16), 0.1)), ElementsAre(1));
  EXPECT_THAT(values(ops::ne(ops::tensor({kNaN}, {1}), ops::tensor({kNaN}, {1}))), ElementsAre(1));
  EXPECT_THAT(values(ops::eq(ops::tensor({kNaN}, {1}), ops::tensor({kNaN}, {1}))), ElementsAre(0));
}

TEST(ElementwiseCompareTest, LogicalOps) {
  const Tensor a = ops::tensor({0, 2, 0, -1}, {4}, DType::kInt32);
  const Tensor b = ops::tensor({0, 0, 0.5, kNaN}, {4});
  const Tensor land = ops::logical_and(a, b);
  EXPECT_EQ(land.dtype(), DType::kBool);
  EXPECT_THAT(values(land), ElementsAre(0, 0, 0, 1));
  EXPECT_THAT(values(ops::logical_or(a, b)), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(values(ops::logical_or(ops::tensor({0, 1}, {2, 1}, DType::kBool), ops::tensor({0, 0}, {1, 2}))),
              ElementsAre(0, 0, 1, 1));
}

TEST(ElementwiseCompareTest, Where) {
  const Tensor c = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  const Tensor x = ops::tensor({1, 2, 3}, {3}, DType::kInt64);
  const Tensor y = ops::tensor({-1, -2, -3}, {3});
  const Tensor w = ops::where(c, x, y);
  EXPECT_EQ(w.dtype(), DType::kFloat32);
  EXPECT_THAT(values(w), ElementsAre(1, -2, 3));
  const Tensor ws = ops::where(c, x, 0.5);
  EXPECT_EQ(ws.dtype(), DType::kFloat32);
  EXPECT_THAT(values(ws), ElementsAre(1, 0.5, 3));
  EXPECT_EQ(ops::where(c, x, 7).dtype(), DType::kInt64);
  // Three-way broadcast: [2, 1, 1] x [1, 3] x [3] -> [2, 1, 3] -> with [1,1] rows.
  const Tensor c3 = ops::tensor({1, 0}, {2, 1, 1}, DType::kBool);
  const Tensor w3 = ops::where(c3, ops::tensor({1, 2, 3}, {1, 3}, DType::kFloat16), ops::tensor({9}, {1}));
  EXPECT_THAT(w3.sizes(), ElementsAre(2, 1, 3));
  EXPECT_EQ(w3.dtype(), DType::kFloat32);
  EXPECT_THAT(values(w3), ElementsAre(1, 2, 3, 9, 9, 9));
  const Tensor wt = ops::where(ops::t(ops::tensor({1, 0, 0, 1}, {2, 2}, DType::kBool)),
                               ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kBFloat16), -1.0);
  EXPECT_THAT(values(wt), ElementsAre(1, -1, -1, 4));
  EXPECT_THAT([&] { ops::where(ops::tensor({1}, {1}), x, y); },
              ThrowsMessage<Error>(HasSubstr(
                  "where expected condition to be a boolean tensor, but got a tensor with dtype Float")));
}

}  // namespace
}  // namespace opspec
