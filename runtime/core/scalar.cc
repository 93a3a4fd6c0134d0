#include "runtime/core/scalar.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace opspec {

std::string format_double(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  // Python's repr: the shortest text that round-trips, with ".0" on integers.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof(buf), "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  std::string s(buf);
  // %g writes 1e-05 like Python; Python switches to exponent at 1e16 and below 1e-4.
  const bool has_exp = s.find('e') != std::string::npos;
  if (!has_exp && s.find('.') == std::string::npos && s.find("inf") == std::string::npos) {
    s += ".0";
  }
  if (has_exp) {
    // Python writes 1e+16 as 1e+16 and 1.5e-07 as 1.5e-07: same as %g.
    const double mag = std::fabs(v);
    if (mag >= 1e-4 && mag < 1e16) {  // %g chose exponent form where Python would not
      std::snprintf(buf, sizeof(buf), "%.17f", v);
      s = buf;
      while (s.back() == '0') s.pop_back();
      if (s.back() == '.') s += "0";
    }
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
