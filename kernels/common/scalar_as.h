// scalar_as.h: scalar_as<T>, how every backend converts a Scalar parameter
// (alpha, an exponent) to a storage type's compute type. Host code only.
#pragma once

#include <type_traits>

#include "kernels/common/opmath.h"
#include "runtime/core/scalar.h"

namespace opspec::internal {

// scalar_as<T>: a Scalar (alpha, an exponent) as T's compute type, rounded to
// T first as PyTorch's `scalar.to<scalar_t>()` does.
template <class T>
arith_t<T> scalar_as(const Scalar& s) {
  if constexpr (std::is_same_v<T, bool>) {
    return s.to_bool() ? 1 : 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(s.to_int());
  } else {
    return static_cast<arith_t<T>>(static_cast<T>(s.to<opmath_t<T>>()));
  }
}

}  // namespace opspec::internal
