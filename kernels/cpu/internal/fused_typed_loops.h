// fused_typed_loops.h: the typed loops of the tile interpreter's
// instructions (private to fused_loops.cc and fused_loops_unary.cc, which
// select them; two files so that neither compile takes long).
#pragma once

#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/fused_loops.h"
#include "kernels/cpu/loops.h"

namespace opspec::internal::fused_loops_detail {

using Instr = FusedProgram::Instr;
using Reg = FusedProgram::Reg;

// ---- Typed loops ----
// Each mirrors the lambda the eager kernel passes to cpu_kernel, and runs it
// through the same contiguous_loop, so fused and eager values agree bit for
// bit. See Note [Shared elementwise functors].


// Note [Fused loops run wide]
// A fused kernel runs each instruction over a tile that stays in L1, so its
// loops are bound by arithmetic even where the eager op is bound by memory:
// every loop over plain (not f16/bf16) elements is built in the wide vector
// clones (See Note [Wide vector clones] in loops.h). The values are the same
// in every clone, so fused and eager stay bit-identical.
template <class T>
constexpr bool kWideType = !std::is_same_v<T, Half> && !std::is_same_v<T, BFloat16>;

// mask_inline: loops_detail::dispatch_mask, forced inline, so that the loop
// is compiled inside each clone of launch_wide (a call out of a clone would
// run the baseline build).
template <unsigned kMask, class Out, class... In, class F>
__attribute__((always_inline)) inline void mask_inline(unsigned mask, char** data, int64_t n, const F& f) {
  if constexpr (kMask < (1u << sizeof...(In))) {
    if (mask == kMask) {
      loops_detail::contiguous_body<kMask, Out>(data, n, f, loops_detail::TypeList<In...>{},
                                                std::index_sequence_for<In...>{});
    } else {
      mask_inline<kMask + 1, Out, In...>(mask, data, n, f);
    }
  }
}

template <class Out, class... In, class F>
OPSPEC_WIDE_CLONES void launch_wide(char** data, unsigned mask, int64_t n, const F& f) {
  mask_inline<0, Out, In...>(mask, data, n, f);
}

// launch: out[i] = f(args[0][i], ...) for n elements; bit k of mask marks
// argument k as one broadcast value.
template <class Out, class... In, class F>
inline void launch(char* out, char* const* args, unsigned mask, int64_t n, const F& f) {
  constexpr int kN = sizeof...(In);
  char* data[kN + 1];
  data[0] = out;
  for (int k = 0; k < kN; ++k) data[k + 1] = args[k];
  if constexpr (kWideType<Out> && (kWideType<In> && ...)) {
    launch_wide<Out, In...>(data, mask, n, f);
  } else {
    loops_detail::dispatch_mask<0, (1u << kN) - 1, Out, In...>(mask, data, n, f);
  }
}

template <class T, class Op>
void unary_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  if constexpr (std::is_floating_point_v<opmath_t<T>>) {
    launch<T, T>(out, args, mask, n, Op{});  // as unary.cc: the functor's fast path shows
  } else {
    launch<T, T>(out, args, mask, n, [](opmath_t<T> x) { return Op{}(static_cast<arith_t<T>>(x)); });
  }
}

// pow_scalar_kernel: pow.Tensor_Scalar's fast paths, exactly as binary.cc picks them.
template <class T>
void pow_scalar_kernel(const Instr& ins, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  const Scalar& exponent = ins.param;
  const double e = exponent.to_double();
  if constexpr (std::is_floating_point_v<C>) {
    const bool fast = !std::is_same_v<T, Half>;
    if (fast && e == 0.5) return unary_kernel<T, SqrtOp>(ins, out, args, mask, n);
    if (fast && e == -0.5) return unary_kernel<T, RsqrtOp>(ins, out, args, mask, n);
    if (fast && e == -1.0) return unary_kernel<T, ReciprocalOp>(ins, out, args, mask, n);
    if (fast && e == 2.0) return unary_kernel<T, SquareOp>(ins, out, args, mask, n);
    if (fast && e == 3.0) return unary_kernel<T, CubeOp>(ins, out, args, mask, n);
    if (fast && e == -2.0) return unary_kernel<T, InvSquareOp>(ins, out, args, mask, n);
    const C ev = std::is_same_v<T, Half> ? scalar_as<T>(exponent) : exponent.to<C>();
    launch<T, T>(out, args, mask, n, [ev](opmath_t<T> x) { return PowOp{}(static_cast<C>(x), ev); });
  } else {
    if (e == 2.0) return unary_kernel<T, SquareOp>(ins, out, args, mask, n);
    if (e == 3.0) return unary_kernel<T, CubeOp>(ins, out, args, mask, n);
    const C ev = scalar_as<T>(exponent);
    launch<T, T>(out, args, mask, n, [ev](opmath_t<T> x) { return PowOp{}(static_cast<C>(x), ev); });
  }
}

template <class T>
void logical_not_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<bool, T>(out, args, mask, n, [](opmath_t<T> x) { return LogicalNotOp{}(x); });
}

// bitwise_not_kernel: BitwiseNotOp on the storage type, as unary.cc's
// bitwise_not (b8 stays bool: !x, where ~ of its int32 widening would not).
template <class T>
void bitwise_not_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<T, T>(out, args, mask, n, [](T x) { return BitwiseNotOp{}(x); });
}

template <class T, class Op>
void arith_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  launch<T, T, T>(out, args, mask, n,
                  [](opmath_t<T> x, opmath_t<T> y) { return Op{}(static_cast<C>(x), static_cast<C>(y)); });
}

template <class T, template <class> class AlphaOp>
void alpha_kernel(const Instr& ins, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  const CastArgs<AlphaOp<C>, C> f{AlphaOp<C>{scalar_as<T>(ins.param)}};  // keeps kUsesFma (Note [Add with alpha])
  launch<T, T, T>(out, args, mask, n, f);
}

// ternary_kernel: Op on three operands of T's arithmetic compute type, as
// ternary.cc runs addcmul's and lerp's functors (f16/bf16 widened to float).
template <class T, class Op>
void ternary_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  using C = arith_t<T>;
  const CastArgs<Op, C> f{Op{}};  // keeps kUsesFma (Note [Wide vector clones])
  launch<T, T, T, T>(out, args, mask, n, f);
}

// reduced_rhs_kernel: f16/bf16 mul and div by a one-element operand already
// converted to float (binary.cc's reduced_scalar_rhs).
template <class T, class Op>
void reduced_rhs_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<T, T, float>(out, args, mask, n, [](float x, float y) { return Op{}(x, y); });
}

template <class T, class Op>
void predicate_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<bool, T, T>(out, args, mask, n, [](opmath_t<T> x, opmath_t<T> y) { return Op{}(x, y); });
}

// where_kernel: WhereOp on the elements' bits, as a mask select: both values
// are read unconditionally and the condition as the byte (0 or 1) a bool is,
// so the loop vectorizes (GCC neither widens a bool nor if-converts `c ? x :
// y` over memory); the result's bits are the same.
template <class U>
void where_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  static_assert(std::is_unsigned_v<U> && sizeof(bool) == 1);
  launch<U, uint8_t, U, U>(out, args, mask, n, [](uint8_t c, U x, U y) {
    const U m = static_cast<U>(U{0} - static_cast<U>(c));
    return static_cast<U>((x & m) | (y & static_cast<U>(~m)));
  });
}

template <class D, class S>
void cast_kernel(const Instr&, char* out, char* const* args, unsigned mask, int64_t n) {
  launch<D, S>(out, args, mask, n, [](opmath_t<S> v) { return CastOp<opmath_t<D>>{}(v); });
}

template <class T>
constexpr bool kFloating = std::is_floating_point_v<opmath_t<T>>;

// select_unary_fused_loop: select_fused_loop for the unary ops, pow.Tensor_Scalar,
// logical_not and casts (fused_loops_unary.cc).
FusedLoopFn select_unary_fused_loop(const Instr& ins, const std::vector<Reg>& regs);

}  // namespace opspec::internal::fused_loops_detail
