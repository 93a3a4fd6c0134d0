// scalar_as.h: scalar_as<T>, how every backend converts a Scalar parameter
// (alpha, an exponent) to a storage type's compute type. Host code only.
#pragma once

#include <cmath>
#include <limits>
#include <string_view>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "runtime/core/error.h"
#include "runtime/core/half.h"
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

// cpp_type_name: the C++ type PyTorch names in conversion errors.
template <class T> constexpr std::string_view cpp_type_name() {
  if constexpr (std::is_same_v<T, float>) return "float";
  else if constexpr (std::is_same_v<T, double>) return "double";
  else if constexpr (std::is_same_v<T, Half>) return "c10::Half";
  else if constexpr (std::is_same_v<T, BFloat16>) return "c10::BFloat16";
  else if constexpr (std::is_same_v<T, int64_t>) return "int64_t";
  else if constexpr (std::is_same_v<T, int32_t>) return "int32_t";
  else return "bool";
}

// checked_scalar_cast: value as T, refusing values T cannot hold (PyTorch's
// checked_convert): out-of-range or NaN for integers, finite values beyond
// the largest finite value for floating types. inf and NaN fill floats.
template <class T> T checked_scalar_cast(const Scalar& value, std::string_view op) {
  if constexpr (std::is_same_v<T, bool>) {
    return value.to_bool();
  } else if constexpr (std::is_integral_v<T>) {
    constexpr double lo = static_cast<double>(std::numeric_limits<T>::min());  // -2^(bits-1), exact
    if (value.is_floating_point()) {
      const double v = value.to_double();
      OPSPEC_CHECK(v >= lo && v < -lo, op, ": value cannot be converted to type ", cpp_type_name<T>(),
                   " without overflow (value ", value.str(), ")");
      return static_cast<T>(v);
    }
    const int64_t v = value.to_int();
    OPSPEC_CHECK(v >= std::numeric_limits<T>::min() && v <= std::numeric_limits<T>::max(), op,
                 ": value cannot be converted to type ", cpp_type_name<T>(), " without overflow (value ",
                 value.str(), ")");
    return static_cast<T>(v);
  } else {
    const double v = value.to_double();
    if constexpr (std::is_same_v<T, double>) {
      return v;
    } else {
      double max = std::numeric_limits<float>::max();
      if constexpr (std::is_same_v<T, Half>) max = 65504.0;
      if constexpr (std::is_same_v<T, BFloat16>) max = 3.3895313892515355e38;
      OPSPEC_CHECK(!std::isfinite(v) || std::fabs(v) <= max, op, ": value cannot be converted to type ",
                   cpp_type_name<T>(), " without overflow (value ", value.str(), ")");
      return T(static_cast<float>(v));
    }
  }
}

}  // namespace opspec::internal
