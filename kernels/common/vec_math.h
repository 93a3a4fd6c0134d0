// vec_math.h: float exp, log, sin, cos, tanh and erf written as branch-free
// scalar code that GCC vectorizes inside `omp simd` loops, for the shared
// elementwise functors. See Note [Vectorizable float math].
#pragma once

#include <math.h>

#include <bit>
#include <cstdint>

// OPSPEC_VEC_INLINE: always inlined, so a loop calling these stays vectorizable
// (GCC leaves a large function that is called twice, as exp by tanh, out of line).
#define OPSPEC_VEC_INLINE inline __attribute__((always_inline))

namespace opspec::internal::vec_math {

// Note [Vectorizable float math]
// glibc's expf, sinf, tanhf, ... are scalar calls, which no compiler
// vectorizes, so they cost 10-50x a vectorized multiply and dominated every
// f32 chain. These are the usual SIMD library designs (Cephes' and SLEEF's
// polynomials, Cody-Waite range reduction), written as plain scalar C++ with no
// branches, no calls and no table lookups, so the loops of kernels/cpu/loops.h
// vectorize them for whatever vector ISA they are compiled for (SSE2 on plain
// x86-64, AVX2 and AVX-512 in the wide clones, See Note [Wide vector clones])
// without intrinsics:
//   - selects are bit masks over values already computed (both sides run):
//     GCC does not if-convert a `c ? a : b` whose arms compute floats, since
//     under -ftrapping-math it may not speculate them;
//   - rounding to an integer adds and subtracts 1.5 * 2^23 (or 2^52), whose
//     low mantissa bits then hold the integer;
//   - 2^n is built from exponent bits, in two factors so that results in the
//     subnormal range are rounded once, as libm rounds them.
// They keep IEEE semantics under -ffp-contract=off and no -ffast-math: the
// same input gives the same bits in any loop (vectorized or not, any thread
// split), which is what keeps eager and fused kernels bit-identical (See Note
// [Shared elementwise functors]). Accuracy, checked against glibc over all
// 2^32 floats (vec_math_test samples every range and the special values):
// exp, log, sin, cos and erf within 1 ulp of glibc (at most 0.99 ulp from the
// exact value), tanh within 2 ulp (1.33 ulp from exact); inf, NaN, signed
// zeros and subnormals behave as in libm. sin and cos reduce their argument in double, exactly enough for
// |x| <= kTrigFastLimit; beyond it (rare in practice) callers use libm through
// the functors' exact path (See Note [Functor fast paths] in
// elementwise_ops.h). Double precision keeps libm.

// ---- bits ----

OPSPEC_VEC_INLINE uint32_t float_bits(float x) { return std::bit_cast<uint32_t>(x); }
OPSPEC_VEC_INLINE float bits_float(uint32_t b) { return std::bit_cast<float>(b); }
// abs: |x| by clearing the sign bit (NaN stays NaN).
OPSPEC_VEC_INLINE float abs(float x) { return bits_float(float_bits(x) & 0x7fffffffu); }
// copy_sign: |x| with the sign bit of s.
OPSPEC_VEC_INLINE float copy_sign(float x, float s) {
  return bits_float((float_bits(x) & 0x7fffffffu) | (float_bits(s) & 0x80000000u));
}
// select: c ? a : b as bit masks (See Note [Vectorizable float math]).
OPSPEC_VEC_INLINE float select(bool c, float a, float b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return bits_float((float_bits(a) & mask) | (float_bits(b) & ~mask));
}
// pow2: 2^n for n in [-126, 127], from exponent bits.
OPSPEC_VEC_INLINE float pow2(int32_t n) { return bits_float(static_cast<uint32_t>(n + 127) << 23); }

inline constexpr float kRoundF = 0x1.8p23f;  // x + kRoundF - kRoundF rounds |x| < 2^22 to an integer
inline constexpr double kRoundD = 0x1.8p52;  // the same for doubles, |x| < 2^51

// ---- exp ----

// exp_clamped: e^xc for xc already in [-104, 89] (or NaN); the body of exp.
OPSPEC_VEC_INLINE float exp_clamped(float xc) {
  // x = n ln2 + r, |r| <= ln2 / 2; n * kLn2Hi is exact (|n| <= 150, 9-bit kLn2Hi).
  const float t = xc * 0x1.715476p+0f + kRoundF;
  const float n = t - kRoundF;
  const int32_t ni = static_cast<int32_t>(float_bits(t) - float_bits(kRoundF));
  const float r = (xc - n * 0x1.63p-1f) - n * -0x1.bd0106p-13f;
  // Cephes' expf polynomial: e^r = 1 + r + r^2 P(r).
  const float z = r * r;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float er = (p * z + r) + 1.0f;
  // 2^n in two factors: n in [-150, 129] leaves the normal range, its halves do not.
  const int32_t n1 = ni >> 1;
  return er * pow2(n1) * pow2(ni - n1);
}

// exp: e^x, within 1 ulp of expf for every float.
OPSPEC_VEC_INLINE float exp(float x) {
  // Below -104 the result rounds to 0 and above 89 it overflows, as with the
  // clamped argument; NaN passes both compares unchanged.
  const float xc = select(x < -104.0f, -104.0f, x);
  return exp_clamped(select(xc > 89.0f, 89.0f, xc));
}

// exp_nonpositive: exp(x) for x <= 0 or NaN, bit for bit, without the upper
// clamp, which such an x never reaches (softmax's exp(x - max); See Note
// [Vectorised exp in softmax] in kernels/cpu/softmax.cc).
OPSPEC_VEC_INLINE float exp_nonpositive(float x) { return exp_clamped(select(x < -104.0f, -104.0f, x)); }

// ---- log ----

// log: the natural logarithm, within 1 ulp of logf; log(0) = -inf, log(x < 0) = NaN.
OPSPEC_VEC_INLINE float log(float x) {
  // Subnormals are scaled into the normal range first.
  const bool subnormal = x < 0x1p-126f;
  const float xs = select(subnormal, x * 0x1p23f, x);
  const uint32_t bits = float_bits(xs);
  // xs = m 2^e with m in [0.5, 1), then folded to [sqrt(1/2), sqrt(2)) and shifted: f = m - 1.
  const int32_t e = static_cast<int32_t>((bits >> 23) & 0xffu) - 126 - (subnormal ? 23 : 0);
  const float m = bits_float((bits & 0x007fffffu) | 0x3f000000u);
  const bool low = m < 0.707106781186547524f;
  const float f = select(low, (m + m) - 1.0f, m - 1.0f);  // both exact
  const float ef = static_cast<float>(e - (low ? 1 : 0));
  // Cephes' logf: log(1 + f) = f - f^2/2 + f^3 P(f), plus e ln2 in two parts.
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  float y = p * f * z;
  y = y + -2.12194440e-4f * ef;
  y = y + -0.5f * z;
  float r = f + y;
  r = r + 0.693359375f * ef;
  // Special values: log(+inf) = +inf, log(NaN) = NaN, log(0) = -inf, log(x < 0) = NaN.
  r = select(x == 0.0f, -__builtin_inff(), r);
  r = select(x < 0.0f, __builtin_nanf(""), r);
  return select(x < __builtin_inff(), r, x);
}

// ---- sin, cos ----

// kTrigFastLimit: sin_fast / cos_fast are exact enough for |x| <= 2^23; the
// quadrant then fits 23 bits, so products with the 30-bit head of pi/2 are exact.
inline constexpr float kTrigFastLimit = 0x1p23f;

// trig_needs_libm: x is outside the fast paths' range (inf and NaN included,
// which libm handles identically).
OPSPEC_VEC_INLINE bool trig_needs_libm(float x) { return !(abs(x) <= kTrigFastLimit); }

namespace detail {
// pi/2 = kHalfPi1 + kHalfPi2 + O(2^-84): a 30-bit head (exact products with
// integers below 2^23) and a double tail.
inline constexpr double kHalfPi1 = 0x1.921fb54p+0;
inline constexpr double kHalfPi2 = 0x1.10b4611a62633p-30;
inline constexpr double kInvPi = 0x1.45f306dc9c883p-2;

// sin_poly: sin(r) for |r| <= pi/2, in double (a degree-11 odd minimax
// polynomial, relative error 5e-11), so the float result is rounded once.
OPSPEC_VEC_INLINE float sin_poly(double r) {
  const double s = r * r;
  double p = -2.3831657710849453e-08;
  p = p * s + 2.7521740914548205e-06;
  p = p * s + -0.00019840786180355858;
  p = p * s + 0.0083333303493477572;
  p = p * s + -0.16666666602555966;
  return static_cast<float>((p * s) * r + r);
}

// reduce: x - q pi/2 for an integer q (as a double) with |q| < 2^23.
OPSPEC_VEC_INLINE double reduce(double x, double q) { return (x - q * kHalfPi1) - q * kHalfPi2; }
}  // namespace detail

// sin_fast: sin(x) within 1 ulp of sinf for |x| <= kTrigFastLimit (NaN for inf and NaN).
OPSPEC_VEC_INLINE float sin_fast(float x) {
  // x = k pi + r, |r| <= pi/2, sin(x) = (-1)^k sin(r).
  const double xd = x;
  const double t = xd * detail::kInvPi + kRoundD;
  const double k = t - kRoundD;
  const uint32_t odd = static_cast<uint32_t>(std::bit_cast<uint64_t>(t)) & 1u;
  const float y = detail::sin_poly(detail::reduce(xd, k + k));
  const float s = bits_float(float_bits(y) ^ (odd << 31));
  // sin(x) rounds to x below 2^-12 (this keeps -0.0 and subnormals).
  return select(abs(x) < 0x1p-12f, x, s);
}

// cos_fast: cos(x) within 1 ulp of cosf for |x| <= kTrigFastLimit (NaN for inf and NaN).
OPSPEC_VEC_INLINE float cos_fast(float x) {
  // x = (2k + 1) pi/2 + r, |r| <= pi/2, cos(x) = (-1)^(k+1) sin(r).
  const double xd = x;
  const double t = (xd * detail::kInvPi - 0.5) + kRoundD;
  const double k = t - kRoundD;
  const uint32_t odd = static_cast<uint32_t>(std::bit_cast<uint64_t>(t)) & 1u;
  const float y = detail::sin_poly(detail::reduce(xd, (k + k) + 1.0));
  return bits_float(float_bits(y) ^ ((odd ^ 1u) << 31));
}

// sin / cos: every float (libm beyond kTrigFastLimit); scalar callers only.
OPSPEC_VEC_INLINE float sin(float x) { return trig_needs_libm(x) ? ::sinf(x) : sin_fast(x); }
OPSPEC_VEC_INLINE float cos(float x) { return trig_needs_libm(x) ? ::cosf(x) : cos_fast(x); }

// ---- tanh ----

// tanh: within 2 ulp of tanhf for every float.
OPSPEC_VEC_INLINE float tanh(float x) {
  const float a = abs(x);
  // |x| < 0.625: Cephes' odd polynomial x + x^3 P(x^2).
  const float z = x * x;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float small = copy_sign((p * z) * x + x, x);  // keeps tanh(-0) = -0
  // Otherwise 1 - 2 / (e^2|x| + 1); beyond |x| = 10 it rounds to 1 (NaN stays NaN).
  const float ac = select(a > 10.0f, 10.0f, a);
  const float e = exp(ac + ac);
  const float large = copy_sign(1.0f - 2.0f / (e + 1.0f), x);
  return select(a < 0.625f, small, large);
}

// ---- erf ----

// erf: within 1 ulp of erff for every float.
OPSPEC_VEC_INLINE float erf(float x) {
  const float a = abs(x);
  // |x| < 1.25: an odd minimax polynomial x P(x^2), in double (its terms
  // cancel, which float would round to 3 ulp).
  const double xd = x, z = xd * xd;
  double p = 8.2615310136528512e-07;
  p = p * z + -1.2792324572487734e-05;
  p = p * z + 0.00011735807577965101;
  p = p * z + -0.00085196257719054086;
  p = p * z + 0.0052224387620866727;
  p = p * z + -0.02686570200483071;
  p = p * z + 0.11283784454772094;
  p = p * z + -0.37612638471378945;
  p = p * z + 1.1283791670525825;
  const float small = static_cast<float>(p * xd);
  // Otherwise 1 - erfc(|x|), erfc(a) = e^(-a^2) t G(t) with t = 1/a and G a
  // minimax polynomial; erf rounds to 1 beyond 4 (NaN stays NaN).
  float ac = select(a > 4.0f, 4.0f, a);
  ac = select(ac < 1.0f, 1.0f, ac);  // no 1/0 for the lanes that take the polynomial
  const float t = 1.0f / ac;
  float g = 1.0182284e-01f;
  g = g * t + -5.2148187e-01f;
  g = g * t + 1.1553243e+00f;
  g = g * t + -1.3980236e+00f;
  g = g * t + 8.8976276e-01f;
  g = g * t + -9.1270581e-02f;
  g = g * t + -2.7228263e-01f;
  g = g * t + -4.2457003e-04f;
  g = g * t + 5.6418556e-01f;
  const float large = copy_sign(1.0f - exp(-(ac * ac)) * (t * g), x);
  return select(a < 1.25f, small, large);
}

}  // namespace opspec::internal::vec_math
