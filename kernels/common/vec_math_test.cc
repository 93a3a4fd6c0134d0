// vec_math's float functions against glibc: sampled bit patterns of the whole
// float range and the special values, directly and through the CPU kernels
// (vectorized, wide clones, sin/cos fast paths), every f16/bf16 value, and
// contiguous vs strided kernel paths bit for bit.
#include "kernels/common/vec_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>
#include <vector>

#include "kernels/common/elementwise_ops.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace vec_math_test {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// ulp_distance: the number of floats from a to b (finite or equal infinities).
int64_t ordered(float f) {
  const int32_t i = std::bit_cast<int32_t>(f);
  return i < 0 ? int64_t{INT32_MIN} - i : i;
}
int64_t ulp_distance(float a, float b) { return std::abs(ordered(a) - ordered(b)); }

// agree: got is want's special value (NaN, an infinity, a zero of the same
// sign), or a finite value within max_ulp of it.
::testing::AssertionResult agree(float x, float got, float want, int64_t max_ulp) {
  const bool special = std::isnan(want) || std::isinf(want) || want == 0.0f;
  const bool ok = special ? (std::isnan(want) ? std::isnan(got)
                                              : got == want && std::signbit(got) == std::signbit(want))
                          : std::isfinite(got) && ulp_distance(got, want) <= max_ulp;
  if (ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "x = " << std::hexfloat << x << ": got " << got << ", libm " << want;
}

// MathFn: one function, its glibc reference, its op and its accuracy bound in ulp.
struct MathFn {
  const char* name;
  float (*ours)(float);
  float (*libm)(float);
  Tensor (*op)(const Tensor&);
  int64_t max_ulp;
};
const MathFn kFns[] = {
    {"exp", vec_math::exp, ::expf, [](const Tensor& t) { return ops::exp(t); }, 1},
    {"log", vec_math::log, ::logf, [](const Tensor& t) { return ops::log(t); }, 1},
    {"sin", vec_math::sin, ::sinf, [](const Tensor& t) { return ops::sin(t); }, 1},
    {"cos", vec_math::cos, ::cosf, [](const Tensor& t) { return ops::cos(t); }, 1},
    {"tanh", vec_math::tanh, ::tanhf, [](const Tensor& t) { return ops::tanh(t); }, 2},
    {"erf", vec_math::erf, ::erff, [](const Tensor& t) { return ops::erf(t); }, 1},
};

// sampled_floats: every stride-th bit pattern (all exponents, both signs).
std::vector<float> sampled_floats(uint32_t stride) {
  std::vector<float> v;
  for (uint64_t b = 0; b <= 0xffffffffu; b += stride) v.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  return v;
}

const std::vector<float> kSpecial = {
    0.0f, -0.0f, kInf, -kInf, kNaN, -kNaN, std::numeric_limits<float>::denorm_min(), -0x1p-140f,
    0x1p-126f, -0x1.fffffep-127f, std::numeric_limits<float>::max(), -std::numeric_limits<float>::max(),
    1.0f, -1.0f, 0.5f, 0x1p-12f, -0x1p-13f, 0.625f, -0.625f, 1.25f, -1.25f, 3.9f, 4.0f, 9.0f, 10.0f, -11.0f,
    88.72283f, 88.7228394f, 88.73f, 89.0f, -87.33655f, -103.97f, -103.98f, -104.0f, -150.0f,
    3.14159274f, -3.14159274f, 1.57079637f, 4.71238899f, 0x1.921fb6p+10f, 8388607.5f, 0x1p23f, 8388609.0f,
    0x1p24f, 1e10f, -1e30f, 0x1.fffffep+127f, 2.0f, 0.70710677f, 0.70710683f, 1.41421354f};

// same_float: the same bits, or both NaN.
bool same_float(float a, float b) {
  return std::bit_cast<uint32_t>(a) == std::bit_cast<uint32_t>(b) || (std::isnan(a) && std::isnan(b));
}

// same_bits: equal sizes and identical element bits (NaNs included).
::testing::AssertionResult same_bits(const Tensor& a, const Tensor& b) {
  const std::vector<float> x = a.to_vector<float>(), y = b.to_vector<float>();
  if (a.sizes() == b.sizes() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "the two loop paths differ";
}

Tensor from_floats(const std::vector<float>& v) {
  Tensor t = make_tensor({static_cast<int64_t>(v.size())}, DType::kFloat32, kCPU);
  std::memcpy(t.raw_data(), v.data(), v.size() * sizeof(float));
  return t;
}

TEST(VecMathTest, FunctionsMatchLibmOverSampledFloats) {
  const std::vector<float> xs = sampled_floats(4099);
  for (const MathFn& fn : kFns) {
    int64_t worst = 0;
    float worst_x = 0;
    int failures = 0;
    for (float x : xs) {
      const float got = fn.ours(x), want = fn.libm(x);
      const ::testing::AssertionResult ok = agree(x, got, want, fn.max_ulp);
      if (!ok && ++failures <= 3) ADD_FAILURE() << fn.name << ": " << ok.message();
      if (std::isfinite(want) && want != 0.0f && std::isfinite(got) && ulp_distance(got, want) > worst) {
        worst = ulp_distance(got, want);
        worst_x = x;
      }
    }
    EXPECT_LE(worst, fn.max_ulp) << fn.name << " at " << std::hexfloat << worst_x;
  }
}

TEST(VecMathTest, SpecialValuesMatchLibm) {
  for (const MathFn& fn : kFns) {
    for (float x : kSpecial) {
      for (float v : {x, -x}) EXPECT_TRUE(agree(v, fn.ours(v), fn.libm(v), fn.max_ulp)) << fn.name;
    }
  }
  // The exact results libm gives, which the clamps and the two-factor scaling must keep.
  EXPECT_EQ(vec_math::exp(-kInf), 0.0f);
  EXPECT_EQ(vec_math::exp(89.0f), kInf);
  EXPECT_EQ(vec_math::exp(-103.0f), ::expf(-103.0f));  // a subnormal, rounded once
  EXPECT_EQ(vec_math::log(0.0f), -kInf);
  EXPECT_TRUE(std::isnan(vec_math::log(-1.0f)));
  EXPECT_TRUE(std::signbit(vec_math::tanh(-0.0f)) && std::signbit(vec_math::sin(-0.0f)) &&
              std::signbit(vec_math::erf(-0.0f)));
  EXPECT_EQ(vec_math::tanh(-20.0f), -1.0f);
  EXPECT_EQ(vec_math::erf(5.0f), 1.0f);
}

// exp_nonpositive is exp, bit for bit, wherever softmax calls it (x <= 0 or
// NaN): sampled negative floats, the special values, NaNs of both signs.
TEST(VecMathTest, ExpNonpositiveIsExpForNonpositiveArguments) {
  std::vector<float> xs = {0.0f, -0.0f, -kInf, kNaN, -kNaN};
  for (uint64_t b = 0x80000000u; b <= 0xffffffffu; b += 1021) xs.push_back(std::bit_cast<float>(static_cast<uint32_t>(b)));
  for (float x : kSpecial) xs.push_back(-std::abs(x));
  for (float x : xs) {
    if (!(x <= 0.0f) && !std::isnan(x)) continue;
    ASSERT_TRUE(same_float(vec_math::exp_nonpositive(x), vec_math::exp(x))) << std::hexfloat << x;
  }
}

// The kernels (vectorized loops, wide clones, sin/cos blocks) give each
// element exactly the scalar function's value, and strided inputs (scalar
// loops) the same bits as contiguous ones.
TEST(VecMathTest, KernelsAgreeWithScalarFunctionsBitForBit) {
  std::vector<float> xs = sampled_floats(65537);
  xs.insert(xs.end(), kSpecial.begin(), kSpecial.end());
  if (xs.size() % 2 != 0) xs.push_back(1.0f);
  const Tensor x = from_floats(xs);
  const int64_t half = static_cast<int64_t>(xs.size()) / 2;
  for (const MathFn& fn : kFns) {
    const std::vector<float> got = fn.op(x).to_vector<float>();
    int failures = 0;
    for (size_t i = 0; i < xs.size(); ++i) {
      const float want = fn.ours(xs[i]);
      if (!same_float(got[i], want) && ++failures <= 3) {
        ADD_FAILURE() << fn.name << "(" << std::hexfloat << xs[i] << ") = " << got[i] << " in the kernel, " << want
                      << " in scalar code";
      }
    }
    // [2, half] view of a [half, 2] tensor: a transposed input runs the strided loop.
    const Tensor strided = fn.op(ops::t(ops::reshape(x, {half, 2})));
    EXPECT_TRUE(same_bits(ops::reshape(ops::t(strided), {2 * half}), fn.op(x))) << fn.name;
  }
}

// Blocks with an argument beyond kTrigFastLimit take libm per element; the
// others keep the fast path, whatever block they share.
TEST(VecMathTest, SinCosCallLibmBeyondTheFastRange) {
  std::vector<float> xs;
  for (int i = 0; i < 1000; ++i) xs.push_back(i % 97 == 5 ? 1e6f * static_cast<float>(i) + 0.25f : 0.01f * i);
  xs.push_back(0x1p23f);
  xs.push_back(0x1.000002p23f);
  const std::vector<float> s = ops::sin(from_floats(xs)).to_vector<float>();
  const std::vector<float> c = ops::cos(from_floats(xs)).to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const bool libm = vec_math::trig_needs_libm(xs[i]);
    EXPECT_EQ(s[i], libm ? ::sinf(xs[i]) : vec_math::sin_fast(xs[i])) << std::hexfloat << xs[i];
    EXPECT_EQ(c[i], libm ? ::cosf(xs[i]) : vec_math::cos_fast(xs[i])) << std::hexfloat << xs[i];
    EXPECT_EQ(libm, std::abs(xs[i]) > 0x1p23f);
  }
}

// f16 and bf16 compute in float and round once: every one of their values.
TEST(VecMathTest, ReducedPrecisionKernelsRoundTheFloatFunctionForEveryValue) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    Tensor x = make_tensor({65536}, dt, kCPU);
    uint16_t* bits = static_cast<uint16_t*>(x.raw_data());
    for (uint32_t b = 0; b < 65536; ++b) bits[b] = static_cast<uint16_t>(b);
    const std::vector<float> in = ops::to(x, DType::kFloat32).to_vector<float>();
    for (const MathFn& fn : kFns) {
      const std::vector<float> got = ops::to(fn.op(x), DType::kFloat32).to_vector<float>();
      int failures = 0;
      for (size_t i = 0; i < in.size(); ++i) {
        const float r = fn.ours(in[i]);
        const float want = dt == DType::kFloat16 ? static_cast<float>(Half(r)) : static_cast<float>(BFloat16(r));
        if (!same_float(got[i], want) && ++failures <= 3) {
          ADD_FAILURE() << dtype_short_name(dt) << " " << fn.name << "(" << in[i] << ") = " << got[i] << ", want "
                        << want;
        }
      }
    }
  }
}

// The functors built on exp, tanh and erf: contiguous and strided kernels agree bit for bit.
TEST(VecMathTest, CompositeFunctorsAgreeAcrossLoopPaths) {
  const Tensor x = ops::mul(ops::randn({64, 48}), 4.0);
  const std::vector<std::pair<const char*, Tensor (*)(const Tensor&)>> composite = {
      {"sigmoid", [](const Tensor& t) { return ops::sigmoid(t); }},
      {"silu", [](const Tensor& t) { return ops::silu(t); }},
      {"gelu", [](const Tensor& t) { return ops::gelu(t); }},
      {"gelu_tanh", [](const Tensor& t) { return ops::gelu(t, "tanh"); }},
  };
  for (const auto& [name, op] : composite) {
    EXPECT_TRUE(same_bits(ops::t(op(ops::t(x))), op(x))) << name;
    const std::vector<float> in = x.to_vector<float>(), got = op(x).to_vector<float>();
    for (size_t i = 0; i < in.size(); i += 97) {
      const double v = in[i];
      const std::string_view n = name;
      const double ref = n == "sigmoid" ? 1 / (1 + std::exp(-v))
                         : n == "silu"  ? v / (1 + std::exp(-v))
                         : n == "gelu"  ? 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)))
                                        : 0.5 * v * (1 + std::tanh(std::sqrt(2 / M_PI) * (v + 0.044715 * v * v * v)));
      EXPECT_NEAR(got[i], ref, 1e-6 * std::max(1.0, std::abs(ref))) << name << "(" << v << ")";
    }
  }
}

}  // namespace
}  // namespace opspec::internal
