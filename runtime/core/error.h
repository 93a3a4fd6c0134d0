// error.h: the exception every op throws for bad input, and the check macros.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace opspec {

namespace internal {
// Debian's Abseil is built with its own string_view type; adapt std::string_view.
template <class T>
decltype(auto) to_alpha_num(const T& v) {
  if constexpr (std::is_convertible_v<const T&, std::string_view> && !std::is_convertible_v<const T&, absl::string_view>) {
    const std::string_view sv = v;
    return absl::string_view(sv.data(), sv.size());
  } else {
    return (v);
  }
}
}  // namespace internal

// str_cat: absl::StrCat that also takes std::string_view.
template <class... Args>
std::string str_cat(const Args&... args) {
  return absl::StrCat(internal::to_alpha_num(args)...);
}

// str_append: absl::StrAppend that also takes std::string_view.
template <class... Args>
void str_append(std::string* out, const Args&... args) {
  absl::StrAppend(out, internal::to_alpha_num(args)...);
}

// shorten: s cut to about max bytes for a message, with how much was left out
// ("aten::xxxx... (1048576 bytes)"); never splits a UTF-8 sequence. Names and
// values users give are echoed through it, so a 1 MB op name is a short error.
std::string shorten(std::string_view s, size_t max = 200);

// Error: thrown for any error a caller of the runtime can cause (bad shapes,
// dtypes, devices, unknown ops). The message names the op, the argument and
// the expected vs actual value.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

// NotImplementedError: an op, dtype or device combination that is valid but
// has no kernel (e.g. an op with no CUDA kernel in a CPU-only build).
class NotImplementedError : public Error {
 public:
  using Error::Error;
};

// NoMetaKernelError: an op reached fake or meta execution without a Meta
// kernel ("aten::foo has no meta kernel"); the compiler treats it as a graph break.
class NoMetaKernelError : public NotImplementedError {
 public:
  using NotImplementedError::NotImplementedError;
};

// DataDependentOutputError: an op needs tensor data a fake tensor does not have
// (item(), to_vector()); PyTorch's DataDependentOutputException.
class DataDependentOutputError : public Error {
 public:
  using Error::Error;
};

namespace internal {
[[noreturn]] void throw_error(const std::string& message);
[[noreturn]] void throw_not_implemented(const std::string& message);
}  // namespace internal

}  // namespace opspec

// OPSPEC_CHECK(cond, parts...): throws opspec::Error with absl::StrCat(parts...)
// when cond is false. The message is only built on failure.
#define OPSPEC_CHECK(cond, ...)                                        \
  do {                                                                 \
    if (__builtin_expect(!(cond), 0)) {                                \
      ::opspec::internal::throw_error(::opspec::str_cat(__VA_ARGS__));    \
    }                                                                  \
  } while (0)

// OPSPEC_FAIL(parts...): throws opspec::Error unconditionally.
#define OPSPEC_FAIL(...) ::opspec::internal::throw_error(::opspec::str_cat(__VA_ARGS__))

// OPSPEC_INTERNAL_ASSERT(cond): an invariant of opspec itself; failing it is a bug.
#define OPSPEC_INTERNAL_ASSERT(cond)                                                     \
  do {                                                                                   \
    if (__builtin_expect(!(cond), 0)) {                                                  \
      ::opspec::internal::throw_error(::opspec::str_cat("opspec internal assert failed: ", \
                                                     #cond, " at ", __FILE__, ":",       \
                                                     __LINE__));                          \
    }                                                                                    \
  } while (0)
