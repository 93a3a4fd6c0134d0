// source_location.h: std::source_location for clang 14 with libstdc++ 12,
// force-included (-include) by ci/fuzz. See Note [clang 14 and source_location].
#pragma once

// Note [clang 14 and source_location]
// libstdc++ 12 defines std::source_location only when the compiler has
// __builtin_source_location, which clang gained in version 15, so with clang 14
// <source_location> declares nothing and the runtime (call sites, fixtures)
// does not compile. This header fills the gap with clang's older builtins
// (__builtin_FILE, __builtin_LINE, ...), which as default arguments are
// evaluated at the caller exactly like source_location::current(). It does
// nothing where the standard library already provides the type.
#include <cstdint>
#include <source_location>

#if defined(__cplusplus) && !defined(__cpp_lib_source_location) && defined(__clang__)
namespace std {
struct source_location {
  static constexpr source_location current(const char* file = __builtin_FILE(),
                                           const char* function = __builtin_FUNCTION(),
                                           unsigned line = __builtin_LINE(),
                                           unsigned column = __builtin_COLUMN()) noexcept {
    source_location loc;
    loc.file_ = file;
    loc.function_ = function;
    loc.line_ = line;
    loc.column_ = column;
    return loc;
  }
  constexpr source_location() noexcept = default;
  constexpr std::uint_least32_t line() const noexcept { return line_; }
  constexpr std::uint_least32_t column() const noexcept { return column_; }
  constexpr const char* file_name() const noexcept { return file_; }
  constexpr const char* function_name() const noexcept { return function_; }

 private:
  const char* file_ = "";
  const char* function_ = "";
  std::uint_least32_t line_ = 0;
  std::uint_least32_t column_ = 0;
};
}  // namespace std
#define __cpp_lib_source_location 201907L
#endif
