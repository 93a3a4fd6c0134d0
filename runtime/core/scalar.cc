#include "runtime/core/scalar.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/core/error.h"

namespace opspec {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Python's repr: the shortest digits that round-trip, found in %e form so
  // the decimal exponent is known whatever the precision.
  char buf[40];
  for (int precision = 0; precision <= 16; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*e", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  const std::string e_form(buf);
  const size_t e_at = e_form.find('e');
  const int exponent = std::atoi(e_form.c_str() + e_at + 1);
  std::string digits;
  for (size_t i = 0; i < e_at; ++i) {
    if (e_form[i] >= '0' && e_form[i] <= '9') digits += e_form[i];
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string s = std::signbit(v) ? "-" : "";
  // float_repr: scientific when the exponent is below -4 or at least 16.
  if (exponent < -4 || exponent >= 16) {
    str_append(&s, digits.substr(0, 1), digits.size() > 1 ? "." : "", digits.substr(1), "e",
               exponent < 0 ? "-" : "+", std::abs(exponent) < 10 ? "0" : "", std::abs(exponent));
  } else if (exponent < 0) {
    str_append(&s, "0.", std::string(static_cast<size_t>(-exponent - 1), '0'), digits);
  } else {
    const size_t int_digits = static_cast<size_t>(exponent) + 1;
    if (digits.size() < int_digits) digits.append(int_digits - digits.size(), '0');
    const std::string frac = digits.substr(int_digits);
    str_append(&s, digits.substr(0, int_digits), ".", frac.empty() ? "0" : frac);
  }
  return s;
}

std::string Scalar::str() const {
  switch (kind_) {
    case Kind::kBool: return v_.i ? "True" : "False";
    case Kind::kInt: return str_cat(v_.i);
    case Kind::kDouble: return format_double(v_.d);
  }
  return "?";
}

}  // namespace opspec
