// macro_args.h: the preprocessor plumbing behind opspec's gtest macros, and
// the runtime helpers that turn a macro's stringized arguments back into
// readable text for failure messages. See Note [Statement arguments].
#pragma once

#include <string>
#include <string_view>
#include <vector>

// Note [Statement arguments]
// The preprocessor splits macro arguments at every comma outside
// parentheses, so `EXPECT_OPS({ std::vector<int> v{1, 2}; f(v); }, m)` reaches
// the macro as three arguments. Macros that take a statement therefore take
// everything as __VA_ARGS__, use the LAST argument as the matcher/golden and
// glue the others back together, commas included, as the statement: any
// statement works, braces or not, as long as the last argument (the matcher
// or golden text) has no comma outside parentheses. Macros that take
// values (functions, inputs, options) forward __VA_ARGS__ into an ordinary
// function call, where C++ (not the preprocessor) groups `{x, y}` and
// lambdas. Up to 32 preprocessor arguments are supported.

#define OPSPEC_GTEST_CAT_(a, b) OPSPEC_GTEST_CAT_I_(a, b)
#define OPSPEC_GTEST_CAT_I_(a, b) a##b

// OPSPEC_GTEST_NARG_(...): the number of preprocessor arguments (1..32).
#define OPSPEC_GTEST_NARG_(...)                                                                                   \
  OPSPEC_GTEST_NARG_PICK_(__VA_ARGS__, 32, 31, 30, 29, 28, 27, 26, 25, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15, \
                          14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define OPSPEC_GTEST_NARG_PICK_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15, _16, _17, _18, \
                                _19, _20, _21, _22, _23, _24, _25, _26, _27, _28, _29, _30, _31, _32, N, ...)    \
  N

// OPSPEC_GTEST_LAST_(...): the last argument; OPSPEC_GTEST_INIT_(...): all
// the others, joined by commas again.
#define OPSPEC_GTEST_LAST_(...) OPSPEC_GTEST_CAT_(OPSPEC_GTEST_LAST_, OPSPEC_GTEST_NARG_(__VA_ARGS__))(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_(...) OPSPEC_GTEST_CAT_(OPSPEC_GTEST_INIT_, OPSPEC_GTEST_NARG_(__VA_ARGS__))(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_1(a) a
#define OPSPEC_GTEST_LAST_2(a, ...) OPSPEC_GTEST_LAST_1(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_3(a, ...) OPSPEC_GTEST_LAST_2(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_4(a, ...) OPSPEC_GTEST_LAST_3(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_5(a, ...) OPSPEC_GTEST_LAST_4(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_6(a, ...) OPSPEC_GTEST_LAST_5(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_7(a, ...) OPSPEC_GTEST_LAST_6(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_8(a, ...) OPSPEC_GTEST_LAST_7(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_9(a, ...) OPSPEC_GTEST_LAST_8(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_10(a, ...) OPSPEC_GTEST_LAST_9(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_11(a, ...) OPSPEC_GTEST_LAST_10(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_12(a, ...) OPSPEC_GTEST_LAST_11(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_13(a, ...) OPSPEC_GTEST_LAST_12(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_14(a, ...) OPSPEC_GTEST_LAST_13(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_15(a, ...) OPSPEC_GTEST_LAST_14(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_16(a, ...) OPSPEC_GTEST_LAST_15(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_17(a, ...) OPSPEC_GTEST_LAST_16(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_18(a, ...) OPSPEC_GTEST_LAST_17(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_19(a, ...) OPSPEC_GTEST_LAST_18(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_20(a, ...) OPSPEC_GTEST_LAST_19(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_21(a, ...) OPSPEC_GTEST_LAST_20(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_22(a, ...) OPSPEC_GTEST_LAST_21(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_23(a, ...) OPSPEC_GTEST_LAST_22(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_24(a, ...) OPSPEC_GTEST_LAST_23(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_25(a, ...) OPSPEC_GTEST_LAST_24(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_26(a, ...) OPSPEC_GTEST_LAST_25(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_27(a, ...) OPSPEC_GTEST_LAST_26(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_28(a, ...) OPSPEC_GTEST_LAST_27(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_29(a, ...) OPSPEC_GTEST_LAST_28(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_30(a, ...) OPSPEC_GTEST_LAST_29(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_31(a, ...) OPSPEC_GTEST_LAST_30(__VA_ARGS__)
#define OPSPEC_GTEST_LAST_32(a, ...) OPSPEC_GTEST_LAST_31(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_1(a)
#define OPSPEC_GTEST_INIT_2(a, b) a
#define OPSPEC_GTEST_INIT_3(a, ...) a, OPSPEC_GTEST_INIT_2(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_4(a, ...) a, OPSPEC_GTEST_INIT_3(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_5(a, ...) a, OPSPEC_GTEST_INIT_4(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_6(a, ...) a, OPSPEC_GTEST_INIT_5(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_7(a, ...) a, OPSPEC_GTEST_INIT_6(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_8(a, ...) a, OPSPEC_GTEST_INIT_7(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_9(a, ...) a, OPSPEC_GTEST_INIT_8(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_10(a, ...) a, OPSPEC_GTEST_INIT_9(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_11(a, ...) a, OPSPEC_GTEST_INIT_10(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_12(a, ...) a, OPSPEC_GTEST_INIT_11(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_13(a, ...) a, OPSPEC_GTEST_INIT_12(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_14(a, ...) a, OPSPEC_GTEST_INIT_13(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_15(a, ...) a, OPSPEC_GTEST_INIT_14(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_16(a, ...) a, OPSPEC_GTEST_INIT_15(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_17(a, ...) a, OPSPEC_GTEST_INIT_16(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_18(a, ...) a, OPSPEC_GTEST_INIT_17(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_19(a, ...) a, OPSPEC_GTEST_INIT_18(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_20(a, ...) a, OPSPEC_GTEST_INIT_19(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_21(a, ...) a, OPSPEC_GTEST_INIT_20(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_22(a, ...) a, OPSPEC_GTEST_INIT_21(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_23(a, ...) a, OPSPEC_GTEST_INIT_22(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_24(a, ...) a, OPSPEC_GTEST_INIT_23(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_25(a, ...) a, OPSPEC_GTEST_INIT_24(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_26(a, ...) a, OPSPEC_GTEST_INIT_25(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_27(a, ...) a, OPSPEC_GTEST_INIT_26(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_28(a, ...) a, OPSPEC_GTEST_INIT_27(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_29(a, ...) a, OPSPEC_GTEST_INIT_28(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_30(a, ...) a, OPSPEC_GTEST_INIT_29(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_31(a, ...) a, OPSPEC_GTEST_INIT_30(__VA_ARGS__)
#define OPSPEC_GTEST_INIT_32(a, ...) a, OPSPEC_GTEST_INIT_31(__VA_ARGS__)

namespace opspec::internal {

// split_macro_args: text (a stringized __VA_ARGS__) split at the commas
// outside (), [], {} and string/char literals, each part trimmed.
std::vector<std::string> split_macro_args(std::string_view text);

// join_args: parts [begin, end) joined with ", ".
std::string join_args(const std::vector<std::string>& parts, size_t begin, size_t end);

// abbreviate: text on one line, shortened to at most max_chars ("..." in the middle).
std::string abbreviate(std::string_view text, size_t max_chars = 100);

}  // namespace opspec::internal
