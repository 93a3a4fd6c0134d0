// scalar.h: Scalar, a number that is not a tensor (the `Scalar` schema type).
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

#include "runtime/core/dtype.h"

namespace opspec {

// Scalar: an int64, double or bool, remembering which, like c10::Scalar.
// The kind decides type promotion: `x + 1` keeps x's integer dtype, `x + 1.0`
// makes it floating.
class Scalar {
 public:
  enum class Kind : uint8_t { kInt, kDouble, kBool };

  Scalar() : Scalar(int64_t{0}) {}
  Scalar(double v) : kind_(Kind::kDouble) { v_.d = v; }              // NOLINT
  Scalar(float v) : Scalar(static_cast<double>(v)) {}                // NOLINT
  Scalar(bool v) : kind_(Kind::kBool) { v_.i = v ? 1 : 0; }          // NOLINT
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : kind_(Kind::kInt) { v_.i = static_cast<int64_t>(v); }  // NOLINT

  Kind kind() const { return kind_; }
  bool is_floating_point() const { return kind_ == Kind::kDouble; }
  bool is_integral() const { return kind_ == Kind::kInt; }
  bool is_bool() const { return kind_ == Kind::kBool; }

  // to<T>: converts to T (int64_t, double, float, bool, Half, ...) like a C++ cast.
  template <class T> T to() const {
    if (kind_ == Kind::kDouble) return static_cast<T>(v_.d);
    return static_cast<T>(v_.i);
  }
  double to_double() const { return kind_ == Kind::kDouble ? v_.d : static_cast<double>(v_.i); }
  int64_t to_int() const { return kind_ == Kind::kDouble ? static_cast<int64_t>(v_.d) : v_.i; }
  bool to_bool() const { return kind_ == Kind::kDouble ? v_.d != 0 : v_.i != 0; }

  // dtype: the dtype this scalar has as a wrapped number (f64, i64 or b8).
  DType dtype() const {
    return kind_ == Kind::kDouble ? DType::kFloat64 : kind_ == Kind::kInt ? DType::kInt64 : DType::kBool;
  }

  // str: as Python prints it: 1, 2.5, 1.0, True, inf, nan.
  std::string str() const;

  friend bool operator==(const Scalar& a, const Scalar& b) {
    if (a.kind_ != b.kind_) return false;
    return a.kind_ == Kind::kDouble ? a.v_.d == b.v_.d : a.v_.i == b.v_.i;
  }

 private:
  Kind kind_;
  union {
    int64_t i;
    double d;
  } v_;
};

// format_double: Python's repr of a float ("1.0", "0.1", "1e-05", "inf", "nan").
std::string format_double(double v);

}  // namespace opspec
