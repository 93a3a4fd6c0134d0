// elementwise_ops.h: the scalar function of every elementwise op, written once
// as a small functor and shared by the CPU kernels, the fused CPU backend and
// the CUDA backend. See Note [Shared elementwise functors].
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/vec_math.h"
#include "runtime/core/host_device.h"
// OPSPEC_FUNCTOR: a functor's call operator, always inlined so the loops that
// call it stay vectorizable (GCC's inliner gives up on the larger math ones
// in files that instantiate many loops).
#define OPSPEC_FUNCTOR OPSPEC_HOST_DEVICE __attribute__((always_inline))

namespace opspec::internal {

// Note [Shared elementwise functors]
// Each elementwise op's math lives in exactly one functor below, called with
// its *compute type*: float for f16/bf16 (values are widened on load and rounded
// on store, see Note [Reduced precision math]), int32 for bool arithmetic, and
// the storage type otherwise. Eager CPU kernels, fused CPU kernels and CUDA
// kernels all call these functors, so they agree bit for bit as long as they
// widen and round at the same points. To keep that true the functors are
// pure (no state but constructor arguments, no errno, no branches on global
// state) and use only:
//   - + - * / and comparisons (IEEE, exactly rounded; the library is built with
//     -ffp-contract=off so no FMA is formed behind our back) and math::fma
//     where PyTorch computes one (add/sub with alpha: See Note [Add with alpha]),
//   - the math functions in namespace math below: on the host, f32 exp, log,
//     sin, cos, tanh and erf are vec_math's vectorizable versions (See Note
//     [Vectorizable float math]) and everything else (f64, pow, expm1,
//     log1p) is <math.h>;
//     CUDA device code calls <math.h>'s names (libdevice). sqrt and fabs are
//     exactly rounded everywhere; transcendental functions are bit-identical
//     between the CPU paths (same code) but may differ in the last ulps on
//     CUDA, whose libdevice is a different implementation.
// NaN tests are written `x != x` rather than std::isnan. Signed integer
// arithmetic wraps (computed in the unsigned type), as PyTorch's does in
// practice, instead of being undefined behaviour.

namespace math {
#define OPSPEC_MATH_FN(name)                                                  \
  OPSPEC_HOST_DEVICE inline float name(float x) { return ::name##f(x); }      \
  OPSPEC_HOST_DEVICE inline double name(double x) { return ::name(x); }
#ifdef __CUDA_ARCH__
#define OPSPEC_F32_MATH(name, x) ::name##f(x)
#else
#define OPSPEC_F32_MATH(name, x) vec_math::name(x)
#endif
#define OPSPEC_VEC_MATH_FN(name)                                                                \
  OPSPEC_HOST_DEVICE OPSPEC_VEC_INLINE float name(float x) { return OPSPEC_F32_MATH(name, x); } \
  OPSPEC_HOST_DEVICE inline double name(double x) { return ::name(x); }
OPSPEC_VEC_MATH_FN(exp)
OPSPEC_VEC_MATH_FN(log)
OPSPEC_VEC_MATH_FN(sin)
OPSPEC_VEC_MATH_FN(cos)
OPSPEC_VEC_MATH_FN(tanh)
OPSPEC_VEC_MATH_FN(erf)
OPSPEC_MATH_FN(sqrt)
OPSPEC_MATH_FN(fabs)
OPSPEC_MATH_FN(expm1)
OPSPEC_MATH_FN(log1p)
OPSPEC_MATH_FN(cosh)
OPSPEC_MATH_FN(sinh)
OPSPEC_MATH_FN(log2)
OPSPEC_MATH_FN(floor)
OPSPEC_MATH_FN(ceil)
OPSPEC_MATH_FN(trunc)
OPSPEC_MATH_FN(nearbyint)
#undef OPSPEC_VEC_MATH_FN
#undef OPSPEC_F32_MATH
#undef OPSPEC_MATH_FN
// fma: x * y + z rounded once (exact everywhere: the x86-64-v3 clones' and
// -march=native's vfmadd, libm's fmaf on baseline x86-64, CUDA's fma.rn).
OPSPEC_HOST_DEVICE OPSPEC_VEC_INLINE float fma(float x, float y, float z) { return ::fmaf(x, y, z); }
OPSPEC_HOST_DEVICE OPSPEC_VEC_INLINE double fma(double x, double y, double z) { return ::fma(x, y, z); }
OPSPEC_HOST_DEVICE inline float pow(float x, float y) { return ::powf(x, y); }
OPSPEC_HOST_DEVICE inline double pow(double x, double y) { return ::pow(x, y); }
OPSPEC_HOST_DEVICE inline float fmod(float x, float y) { return ::fmodf(x, y); }
OPSPEC_HOST_DEVICE inline double fmod(double x, double y) { return ::fmod(x, y); }
OPSPEC_HOST_DEVICE inline float atan2(float x, float y) { return ::atan2f(x, y); }
OPSPEC_HOST_DEVICE inline double atan2(double x, double y) { return ::atan2(x, y); }
OPSPEC_HOST_DEVICE inline float copysign(float x, float y) { return ::copysignf(x, y); }
OPSPEC_HOST_DEVICE inline double copysign(double x, double y) { return ::copysign(x, y); }
}  // namespace math

// kIsSignedInt<T>: int32/int64 (not bool), whose arithmetic must wrap.
template <class T>
inline constexpr bool kIsSignedInt = std::is_integral_v<T> && std::is_signed_v<T>;

// wrap_add / wrap_sub / wrap_mul / wrap_neg: integer ops that wrap on overflow
// (two's complement) instead of being undefined; plain ops for floats.
template <class T> OPSPEC_HOST_DEVICE inline T wrap_add(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}
template <class T> OPSPEC_HOST_DEVICE inline T wrap_sub(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) - static_cast<U>(b));
  } else {
    return a - b;
  }
}
template <class T> OPSPEC_HOST_DEVICE inline T wrap_mul(T a, T b) {
  if constexpr (kIsSignedInt<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
  } else {
    return a * b;
  }
}
// wrap_neg: -a (not 0 - a: neg(0.0) is -0.0). On the host a float's sign bit
// is flipped as bits: GCC folds a plain -fma(x, y, z) into one fnmadd, which
// keeps the sign of a NaN the fma makes, where eager's neg (its own loop)
// flips it; fused kernels must keep eager's bits, NaNs included.
template <class T> OPSPEC_HOST_DEVICE inline T wrap_neg(T a) {
  if constexpr (kIsSignedInt<T>) {
    return wrap_sub(T(0), a);
  } else if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
#ifdef __CUDA_ARCH__
    return -a;
#else
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    return __builtin_bit_cast(T, __builtin_bit_cast(Bits, a) ^ (Bits(1) << (sizeof(T) * 8 - 1)));
#endif
  } else {
    return -a;
  }
}

// CastOp<To>: converts a compute value to the compute type To the way
// PyTorch's CPU casts do: to bool is `!= 0`; floating to integer truncates,
// and NaN or out-of-range values give the integer minimum (what x86's
// cvttsd2si produces), rather than undefined behaviour.
template <class To>
struct CastOp {
  template <class From>
  OPSPEC_FUNCTOR To operator()(From v) const {
    if constexpr (std::is_same_v<To, From>) {
      return v;
    } else if constexpr (std::is_same_v<To, bool>) {
      return v != From(0);
    } else if constexpr (std::is_integral_v<To> && std::is_floating_point_v<From>) {
      // 2^(bits-1) is exact in float and double; the compare is false for NaN.
      constexpr From kLimit = From(std::is_same_v<To, int64_t> ? 9223372036854775808.0 : 2147483648.0);
      constexpr To kMin = To(std::is_same_v<To, int64_t> ? (-9223372036854775807LL - 1) : (-2147483647 - 1));
      return (v >= -kLimit && v < kLimit) ? static_cast<To>(v) : kMin;
    } else {
      return static_cast<To>(v);
    }
  }
};

// ---- Unary ----

// NegOp: -x (wrapping for integers).
struct NegOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return wrap_neg(x); }
};
// AbsOp: |x|; fabs for floats so abs(-0.0) is +0.0 and NaN stays NaN.
struct AbsOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::fabs(x);
    } else if constexpr (std::is_same_v<T, bool>) {
      return x;
    } else {
      return x < T(0) ? wrap_neg(x) : x;
    }
  }
};
// SgnOp: PyTorch's sign for real types: (0 < x) - (x < 0), so 0 for 0, -0.0 and NaN.
struct SgnOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_same_v<T, bool>) {
      return x;
    } else {
      return T(T(0) < x) - T(x < T(0));
    }
  }
};
// SignOp: sgn, for real tensors the same function under PyTorch's other name.
struct SignOp : SgnOp {};
// FloorOp, CeilOp, TruncOp, RoundOp: to an integral value, the identity on
// integers; RoundOp rounds halves to even (nearbyint in the default rounding
// mode), as PyTorch's round does.
struct FloorOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x;
    else return math::floor(x);
  }
};
struct CeilOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x;
    else return math::ceil(x);
  }
};
struct TruncOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x;
    else return math::trunc(x);
  }
};
struct RoundOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    if constexpr (std::is_integral_v<T>) return x;
    else return math::nearbyint(x);
  }
};
// ReluOp: max(x, 0) as PyTorch's clamp_min: NaN propagates, -0.0 stays -0.0.
struct ReluOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return x < T(0) ? T(0) : x; }
};

// Note [Functor fast paths]
// A functor may add a vectorizable fast path for one compute type: `fast(x)`
// and `needs_exact(x)`, with operator()(x) == fast(x) whenever !needs_exact(x).
// SinOp and CosOp have one for float: their operator() calls libm beyond
// vec_math::kTrigFastLimit, a branch no compiler vectorizes. cpu_kernel's
// contiguous loops (and so fused kernels, which run them) check a block of
// inputs with needs_exact first and run fast() vectorized when none needs
// libm, else operator() element by element; every other caller just calls
// operator(). Each element's value is therefore the same on every path.
// Functors with `kComputeBound` (the transcendental ones) are limited by
// arithmetic rather than memory; cpu_kernel compiles their f32 loops for
// wider vector ISAs too (See Note [Wide vector clones] in kernels/cpu/loops.h).

// SinOp, CosOp: sin, cos; f32 has a fast path (See Note [Functor fast paths]).
struct SinOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::sin(x); }
  template <class T> OPSPEC_VEC_INLINE T fast(T x) const requires std::is_same_v<T, float> {
    return vec_math::sin_fast(x);
  }
  template <class T> OPSPEC_VEC_INLINE bool needs_exact(T x) const requires std::is_same_v<T, float> {
    return vec_math::trig_needs_libm(x);
  }
};
struct CosOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::cos(x); }
  template <class T> OPSPEC_VEC_INLINE T fast(T x) const requires std::is_same_v<T, float> {
    return vec_math::cos_fast(x);
  }
  template <class T> OPSPEC_VEC_INLINE bool needs_exact(T x) const requires std::is_same_v<T, float> {
    return vec_math::trig_needs_libm(x);
  }
};
// ExpOp, LogOp, TanhOp, ErfOp, SqrtOp: the math functions above.
struct ExpOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::exp(x); }
};
struct LogOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::log(x); }
};
struct TanhOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::tanh(x); }
};
// Log2Op: <math.h>'s log2.
struct Log2Op {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::log2(x); }
};
// CoshOp, SinhOp: <math.h>'s, as ATen's CPU kernels (Sleef's are also within 1 ulp).
struct CoshOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::cosh(x); }
};
struct SinhOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::sinh(x); }
};
struct ErfOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::erf(x); }
};
struct SqrtOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::sqrt(x); }
};
// Expm1Op, Log1pOp: exp(x) - 1 and log(1 + x) without the cancellation of
// writing them so (libm's, within 1 ulp; PyTorch's CPU uses Sleef's, also 1 ulp).
struct Expm1Op {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::expm1(x); }
};
struct Log1pOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return math::log1p(x); }
};
// RsqrtOp: 1 / sqrt(x), as PyTorch computes it (not a hardware rsqrt estimate).
struct RsqrtOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return T(1) / math::sqrt(x); }
};
// ReciprocalOp: 1 / x.
struct ReciprocalOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return T(1) / x; }
};
// SigmoidOp: 1 / (1 + exp(-x)), PyTorch's CPU formula.
struct SigmoidOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return T(1) / (T(1) + math::exp(-x)); }
};
// SiluOp: x / (1 + exp(-x)).
struct SiluOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return x / (T(1) + math::exp(-x)); }
};
// GeluErfOp: gelu(approximate='none') = x * 0.5 * (1 + erf(x / sqrt(2))), in
// PyTorch's evaluation order.
struct GeluErfOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    const T kAlpha = T(0.70710678118654752440);  // M_SQRT1_2
    return x * T(0.5) * (T(1) + math::erf(x * kAlpha));
  }
};
// GeluTanhOp: gelu(approximate='tanh') =
// 0.5 * x * (1 + tanh(sqrt(2/pi) * (x + 0.044715 * x^3))), in PyTorch's order.
struct GeluTanhOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const {
    const T kBeta = T(1.41421356237309504880 * 1.12837916709551257390 * 0.5);  // M_SQRT2 * M_2_SQRTPI / 2
    const T kKappa = T(0.044715);
    const T x_cube = x * x * x;
    const T inner = kBeta * (x + kKappa * x_cube);
    return T(0.5) * x * (T(1) + math::tanh(inner));
  }
};
// LogicalNotOp: x == 0, for any input type; the result is bool.
struct LogicalNotOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T x) const { return x == T(0); }
};
// BitwiseNotOp: ~x for integers, !x for bool (the `~` operator on a mask).
struct BitwiseNotOp {
  OPSPEC_FUNCTOR bool operator()(bool x) const { return !x; }
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return static_cast<T>(~x); }
};
// SquareOp, CubeOp, InvSquareOp: pow(x, 2), pow(x, 3), pow(x, -2) as PyTorch's
// pow.Tensor_Scalar fast paths compute them.
struct SquareOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return wrap_mul(x, x); }
};
struct CubeOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return wrap_mul(wrap_mul(x, x), x); }
};
struct InvSquareOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T x) const { return T(1) / (x * x); }
};

// ---- Binary ----

// AddOp / SubOp / MulOp: a + b, a - b, a * b (wrapping for integers).
struct AddOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return wrap_add(a, b); }
};
struct SubOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return wrap_sub(a, b); }
};
struct MulOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return wrap_mul(a, b); }
};
// Note [Add with alpha]
// PyTorch's CPU add computes a + alpha * b as vec::fmadd(b, alpha, a), one
// rounding (ufunc/add.h; AVX2/AVX-512 FMA, f16/bf16 in float), and its CUDA
// add contracts the same expression into an FMA; sub is add with -alpha.
// So floating AddAlphaOp/SubAlphaOp call math::fma: an exactly rounded
// operation, so eager, fused (interpreted or generated with -march=native)
// and CUDA (explicit fmaf survives --fmad=false) keep one value bit for bit.
// Baseline x86-64 has no FMA instruction, so loops over these functors are
// built in the wide clones (kUsesFma, Note [Wide vector clones]) where one is
// picked; the default clone calls libm's fmaf, exact too. Integers wrap.

// Note [Ternary pointwise ops]
// addcmul, addcdiv and lerp read three operands (lerp.Scalar two and a number)
// and keep PyTorch's CPU bits, measured against python3-torch 1.13's AVX2
// build on 1,007 random f32 elements per case: addcmul's
// `self + value * t1 * t2` comes out as fma(value * t1, t2, self) (its
// compiler contracts the vector expression; 172 of 1,007 differ from the
// unfused form, none from this one), addcdiv's `self + value * t1 / t2` has
// nothing to contract, and lerp is its vec::fmadd(w < 0.5 ? w : w - 1,
// end - self, w < 0.5 ? self : end) (|w| < 0.5 picks the branch), which every
// element matched, the scalar tail too. PyTorch's CUDA kernels contract the
// same expressions (nvcc's default --fmad), so CUDA keeps these bits too.
// Integers wrap; value is converted to the compute type first, as
// Scalar::to<scalar_t>() does (addcmul of i64 with value 0.5 adds nothing).

// FmaOp: a * b + c, rounded once for floating types (math::fma), wrapping for
// integers: the one three-operand step of addcmul and lerp, shared by their
// eager functors below and the fused backend's fma instruction, so both round
// alike by construction (See Note [Ternary pointwise ops]).
struct FmaOp {
  static constexpr bool kUsesFma = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b, T c) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::fma(a, b, c);
    } else {
      return wrap_add(c, wrap_mul(a, b));
    }
  }
};
// AddcmulOp<T>: self + value * t1 * t2 as FmaOp(value * t1, t2, self) (See
// Note [Ternary pointwise ops]).
template <class T>
struct AddcmulOp {
  static constexpr bool kUsesFma = std::is_floating_point_v<T>;
  T value;
  OPSPEC_FUNCTOR T operator()(T self, T t1, T t2) const { return FmaOp{}(MulOp{}(value, t1), t2, self); }
};
// AddcdivOp<T>: self + value * t1 / t2, floating only (PyTorch refuses two
// integral tensors; the common dtype of the rest is floating).
template <class T>
struct AddcdivOp {
  T value;
  OPSPEC_FUNCTOR T operator()(T self, T t1, T t2) const { return self + value * t1 / t2; }
};
// LerpOp: self + weight * (end - self) as ATen's lerp_vec: one fma from the
// end nearer to the weight (See Note [Ternary pointwise ops]).
struct LerpOp {
  static constexpr bool kUsesFma = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T self, T end, T weight) const {
    const bool small = (weight < T(0) ? -weight : weight) < T(0.5);
    return FmaOp{}(small ? weight : weight - T(1), end - self, small ? self : end);
  }
};
// LerpScalarOp<T>: LerpOp with a number weight (lerp.Scalar), already in the compute type.
template <class T>
struct LerpScalarOp {
  static constexpr bool kUsesFma = true;
  T weight;
  OPSPEC_FUNCTOR T operator()(T self, T end) const { return LerpOp{}(self, end, weight); }
};

// AddAlphaOp<T> / SubAlphaOp<T>: a + alpha * b and a - alpha * b (add/sub with
// alpha != 1), alpha already in the compute type.
template <class T>
struct AddAlphaOp {
  static constexpr bool kUsesFma = std::is_floating_point_v<T>;
  T alpha;
  OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::fma(b, alpha, a);
    } else {
      return wrap_add(a, wrap_mul(alpha, b));
    }
  }
};
template <class T>
struct SubAlphaOp {
  static constexpr bool kUsesFma = std::is_floating_point_v<T>;
  T alpha;
  OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::fma(b, -alpha, a);  // PyTorch's sub: add with -alpha
    } else {
      return wrap_sub(a, wrap_mul(alpha, b));
    }
  }
};
// DivOp: true division a / b (floating compute types only).
struct DivOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return a / b; }
};
// PowOp: a ** b. Integers use exponentiation by squaring (wrapping); a
// negative integer exponent gives 1 for a == 1, +-1 for a == -1 and 0 otherwise,
// as PyTorch's powi.
struct PowOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::pow(a, b);
    } else {
      if (b < T(0)) {
        if (a == T(1)) return T(1);
        if (a == T(-1)) return (b & T(1)) ? T(-1) : T(1);
        return T(0);
      }
      T result = T(1);
      while (b != T(0)) {
        if (b & T(1)) result = wrap_mul(result, a);
        b = static_cast<T>(b >> 1);
        a = wrap_mul(a, a);
      }
      return result;
    }
  }
};
// ThresholdBackwardOp, TanhBackwardOp, SigmoidBackwardOp: autograd's
// backward ops, (grad, saved) -> the input's gradient, computed as ATen's CPU
// kernels do: relu's zero where its input (its result, as saved) is at most
// the threshold, tanh's grad * (1 - y * y), sigmoid's grad * (1 - y) * y.
struct ThresholdBackwardOp {
  double threshold;
  template <class T> OPSPEC_FUNCTOR T operator()(T g, T x) const { return x <= static_cast<T>(threshold) ? T(0) : g; }
};
struct TanhBackwardOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T g, T y) const { return g * (T(1) - y * y); }
};
struct SigmoidBackwardOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T g, T y) const { return g * (T(1) - y) * y; }
};
// GeluBackwardErfOp, GeluBackwardTanhOp, SiluBackwardOp: (grad, x) -> the
// input's gradient, in ATen's CPU kernels' evaluation order.
struct GeluBackwardErfOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T dy, T x) const {
    const T kAlpha = T(0.70710678118654752440);                                       // M_SQRT1_2
    const T kBeta = T(1.12837916709551257390 * 0.70710678118654752440 * 0.5);        // M_2_SQRTPI * M_SQRT1_2 / 2
    const T cdf = T(0.5) * (T(1) + math::erf(x * kAlpha));
    const T pdf = math::exp(T(-0.5) * x * x) * kBeta;
    return dy * (cdf + x * pdf);
  }
};
struct GeluBackwardTanhOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T dy, T x) const {
    const T kBeta = T(1.41421356237309504880 * 1.12837916709551257390 * 0.5);  // M_SQRT2 * M_2_SQRTPI / 2
    const T kKappa = T(0.044715);
    const T x_sq = x * x;
    const T x_cube = x_sq * x;
    const T inner = kBeta * (x + kKappa * x_cube);
    const T tanh_inner = math::tanh(inner);
    const T left = T(0.5) * x;
    const T right = T(1) + tanh_inner;
    const T left_derivative = T(0.5) * right;
    const T right_derivative = left * (T(1) - tanh_inner * tanh_inner) * kBeta * (T(1) + T(3) * kKappa * x_sq);
    return dy * (left_derivative + right_derivative);
  }
};
struct SiluBackwardOp {
  static constexpr bool kComputeBound = true;
  template <class T> OPSPEC_FUNCTOR T operator()(T dy, T x) const {
    const T sigmoid = T(1) / (T(1) + math::exp(-x));
    return dy * sigmoid * (T(1) + x * (T(1) - sigmoid));
  }
};
// DropoutBackwardOp: native_dropout_backward's (grad * mask) * scale, the
// mask as 0 or 1 of grad's type (so NaN * 0 stays NaN), scale rounded to T.
struct DropoutBackwardOp {
  double scale;
  template <class T> OPSPEC_FUNCTOR T operator()(T g, T m) const { return (g * m) * T(scale); }
};
// MaximumOp / MinimumOp: elementwise max / min; a NaN in either operand gives NaN.
// Written as one select (a NaN a, or a NaN b with a > b false, pick the
// NaN operand, as the nested `a != a ? a : (b != b ? b : ...)` does):
// GCC if-converts the nested form into chains of mask-register logic that
// ran the fused cheap chain at half speed.
struct MaximumOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return (a > b || a != a) ? a : b; }
};
struct MinimumOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return (a < b || a != a) ? a : b; }
};
// ---- Rounding division, remainder, atan2, bitwise ----
// Integer division and remainder by zero return 0 here and INT_MIN / -1
// wraps, rather than trapping: eager kernels raise PyTorch's ZeroDivisionError
// before calling these (See Note [Parametrized pointwise ops]).

// DivTruncOp: a / b rounded toward zero (div(rounding_mode='trunc')).
struct DivTruncOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::trunc(a / b);
    } else {
      if (b == T(0)) return T(0);
      if constexpr (kIsSignedInt<T>) {
        if (b == T(-1)) return wrap_neg(a);
      }
      return static_cast<T>(a / b);
    }
  }
};
// DivFloorOp: a / b rounded down (div(rounding_mode='floor')), as c10's
// div_floor_floating (through fmod, so the result is exact) and div_floor_integer.
struct DivFloorOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      if (b == T(0)) return a / b;  // the IEEE result: +-inf or NaN
      const T mod = math::fmod(a, b);
      T div = (a - mod) / b;
      if ((mod != T(0)) && (b < T(0)) != (mod < T(0))) div -= T(1);
      if (div == T(0)) return math::copysign(T(0), a / b);
      T floordiv = math::floor(div);
      if (div - floordiv > T(0.5)) floordiv += T(1);
      return floordiv;
    } else {
      if (b == T(0)) return T(0);
      if constexpr (kIsSignedInt<T>) {
        if (b == T(-1)) return wrap_neg(a);
      }
      const T quot = static_cast<T>(a / b);
      const T rem = static_cast<T>(a % b);
      return (rem != T(0) && ((rem < T(0)) != (b < T(0)))) ? static_cast<T>(quot - T(1)) : quot;
    }
  }
};
// RemainderOp: Python's a % b: the result takes b's sign.
struct RemainderOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      T mod = math::fmod(a, b);
      if ((mod != T(0)) && ((b < T(0)) != (mod < T(0)))) mod += b;
      return mod;
    } else {
      if (b == T(0) || b == T(-1)) return T(0);
      T r = static_cast<T>(a % b);
      if ((r != T(0)) && ((r < T(0)) != (b < T(0)))) r = wrap_add(r, b);
      return r;
    }
  }
};
// FmodOp: C's fmod: the result takes a's sign.
struct FmodOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_floating_point_v<T>) {
      return math::fmod(a, b);
    } else {
      if (b == T(0) || b == T(-1)) return T(0);
      return static_cast<T>(a % b);
    }
  }
};
// Atan2Op: atan2(a, b) (floating compute types only).
struct Atan2Op {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const { return math::atan2(a, b); }
};
// BitwiseAndOp / BitwiseOrOp / BitwiseXorOp: a & b, a | b, a ^ b on integers
// (b8 computes in int32); floating types never reach them (the meta rejects
// them), so their branch just returns a.
struct BitwiseAndOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a & b); else return a;
  }
};
struct BitwiseOrOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a | b); else return a;
  }
};
struct BitwiseXorOp {
  template <class T> OPSPEC_FUNCTOR T operator()(T a, T b) const {
    if constexpr (std::is_integral_v<T>) return static_cast<T>(a ^ b); else return a;
  }
};

// ---- Parametrized unary ops and their backward ops ----
// Their parameters are in the compute type C (PyTorch's Scalar.to<opmath_t>()).
// The fused backend lowers each forward op to the shared functors above in
// exactly this order, so eager and fused agree bit for bit (See Note
// [Parametrized pointwise ops] in runtime/compile/fusion_lowering.cc).

// ClampMinOp<C> / ClampMaxOp<C>: clamp_min / clamp_max with a number bound,
// ATen's std::max(x, lo) / std::min(x, hi): NaN in x stays, x stays where it
// ties the bound (-0.0 against 0), and a NaN bound gives NaN (ATen fills the
// result with it). See Note [clamp_min and clamp_max].
template <class C>
struct ClampMinOp {
  C lo;
  OPSPEC_FUNCTOR C operator()(C x) const { return (x < lo || lo != lo) ? lo : x; }
};
template <class C>
struct ClampMaxOp {
  C hi;
  OPSPEC_FUNCTOR C operator()(C x) const { return (hi < x || hi != hi) ? hi : x; }
};
// ClampOp<C>: clamp with number bounds and hardtanh, ATen's std::min(std::max(x,
// lo), hi): ClampMinOp then ClampMaxOp; a missing bound is skipped. See Note
// [clamp with number bounds].
template <class C>
struct ClampOp {
  C lo, hi;
  bool has_lo, has_hi;
  OPSPEC_FUNCTOR C operator()(C x) const {
    if (has_lo) x = ClampMinOp<C>{lo}(x);
    if (has_hi) x = ClampMaxOp<C>{hi}(x);
    return x;
  }
};
// RoundDecimalsOp<C>: round.decimals as ATen's round_decimals_kernel:
// nearbyint(x * ten) / ten, or nearbyint(x / ten) * ten for a negative
// decimals, in the compute type C (ten = 10^|decimals| converted to C, so
// f32's 2.675 rounds to 2.68 at decimals = 2 as PyTorch's does).
template <class C>
struct RoundDecimalsOp {
  C ten;
  bool negative;
  OPSPEC_FUNCTOR C operator()(C x) const {
    return negative ? math::nearbyint(x / ten) * ten : math::nearbyint(x * ten) / ten;
  }
};
// LeakyReluOp<C>: x > 0 ? x : x * slope.
template <class C>
struct LeakyReluOp {
  C slope;
  OPSPEC_FUNCTOR C operator()(C x) const { return x > C(0) ? x : x * slope; }
};
// EluOp<C>: x <= 0 ? expm1(x * input_scale) * (alpha * scale) : x * scale.
template <class C>
struct EluOp {
  C negcoef, poscoef, negiptcoef;
  OPSPEC_FUNCTOR C operator()(C x) const {
    return x <= C(0) ? math::expm1(x * negiptcoef) * negcoef : x * poscoef;
  }
};
// SoftplusOp<C>: x * beta > threshold ? x : log1p(exp(x * beta)) / beta.
template <class C>
struct SoftplusOp {
  C beta, threshold;
  OPSPEC_FUNCTOR C operator()(C x) const {
    return (x * beta) > threshold ? x : math::log1p(math::exp(x * beta)) / beta;
  }
};
// IsnanOp / IsinfOp: b8 tests (always false for integers).
struct IsnanOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T x) const { return x != x; }
};
struct IsinfOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T x) const {
    if constexpr (std::is_floating_point_v<T>) return math::fabs(x) == T(__builtin_inff()); else return false;
  }
};
// NanToNumOp<C>: NaN -> nan, +inf -> posinf, -inf -> neginf (replacements
// already rounded to the storage type).
template <class C>
struct NanToNumOp {
  C nan, posinf, neginf;
  OPSPEC_FUNCTOR C operator()(C x) const {
    return x != x ? nan : (x == C(__builtin_inff()) ? posinf : (x == -C(__builtin_inff()) ? neginf : x));
  }
};
// HardtanhBackwardOp<C>: (grad, x) -> 0 where x <= lo or x >= hi, else grad.
template <class C>
struct HardtanhBackwardOp {
  C lo, hi;
  OPSPEC_FUNCTOR C operator()(C g, C x) const { return (x <= lo || x >= hi) ? C(0) : g; }
};
// LeakyReluBackwardOp<C>: (grad, x) -> x > 0 ? grad : grad * slope.
template <class C>
struct LeakyReluBackwardOp {
  C slope;
  OPSPEC_FUNCTOR C operator()(C g, C x) const { return x > C(0) ? g : g * slope; }
};
// EluBackwardOp<C>: (grad, x or elu(x)) -> the input's gradient, as ATen's elu_backward.
template <class C>
struct EluBackwardOp {
  C negcoef, poscoef, negiptcoef;
  bool is_result;
  OPSPEC_FUNCTOR C operator()(C g, C b) const {
    if (is_result) return b <= C(0) ? g * negiptcoef * (b + negcoef) : g * poscoef;
    return b <= C(0) ? g * negiptcoef * negcoef * math::exp(b * negiptcoef) : g * poscoef;
  }
};
// SoftplusBackwardOp<C>: (grad, x) -> x * beta > threshold ? grad : grad * z / (z + 1), z = exp(x * beta).
template <class C>
struct SoftplusBackwardOp {
  C beta, threshold;
  OPSPEC_FUNCTOR C operator()(C g, C x) const {
    const C z = math::exp(x * beta);
    return (x * beta) > threshold ? g : g * z / (z + C(1));
  }
};

// EqOp .. GeOp: comparisons, bool results (IEEE: any comparison with NaN is
// false except !=).
struct EqOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a == b; }
};
struct NeOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a != b; }
};
struct LtOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a < b; }
};
struct LeOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a <= b; }
};
struct GtOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a > b; }
};
struct GeOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return a >= b; }
};
// LogicalAndOp / LogicalOrOp: truthiness of both / either operand.
struct LogicalAndOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return (a != T(0)) & (b != T(0)); }
};
struct LogicalOrOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return (a != T(0)) | (b != T(0)); }
};
// LogicalXorOp: exactly one operand is truthy.
struct LogicalXorOp {
  template <class T> OPSPEC_FUNCTOR bool operator()(T a, T b) const { return (a != T(0)) != (b != T(0)); }
};

// ---- Ternary ----

// WhereOp: cond ? a : b.
struct WhereOp {
  template <class T> OPSPEC_FUNCTOR T operator()(bool cond, T a, T b) const { return cond ? a : b; }
};

}  // namespace opspec::internal
