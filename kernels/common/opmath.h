// opmath.h: the compute types of elementwise math on each storage type,
// shared by the CPU loops (kernels/cpu/loops.h) and the CUDA kernels, which
// must widen and round at the same points (See Note [Reduced precision math]).
#pragma once

#include <cstdint>
#include <type_traits>

#include "runtime/core/half.h"

namespace opspec::internal {

// OpMath<T>::type: the type values of storage type T are computed in: float
// for f16/bf16 (See Note [Reduced precision math]), T itself otherwise.
template <class T> struct OpMath { using type = T; };
template <> struct OpMath<Half> { using type = float; };
template <> struct OpMath<BFloat16> { using type = float; };
template <class T> using opmath_t = typename OpMath<T>::type;

// arith_t<T>: the compute type of arithmetic on storage type T; bool
// arithmetic runs on int32 (add = or, mul = and, max = or, ...) and is stored
// back as `!= 0`.
template <class T>
using arith_t = std::conditional_t<std::is_same_v<T, bool>, int32_t, opmath_t<T>>;

}  // namespace opspec::internal
