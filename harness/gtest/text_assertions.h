// text_assertions.h: gtest macros over text: EXPECT_DEBUG_STRING (a
// DebugMode log against golden text, with accept mode) and EXPECT_FILECHECK
// (FileCheck directives over any text), and their ASSERT_ forms.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

#include "harness/debug_mode.h"
#include "harness/filecheck.h"
#include "harness/gtest/accept.h"
#include "harness/gtest/macro_args.h"

// EXPECT_DEBUG_STRING(statement, "golden"): runs statement (any statement or
// block; see Note [Statement arguments]) under a DebugMode with default
// options and compares its debug_string() with the golden text (the last
// argument, a string literal; one leading newline is dropped, see
// golden_text()). Failure: the statement, check_text_equal's line_diff, and how to accept:
//   debug string of `ops::sin(ops::relu(x))`:
//   text differs from the expected (golden) text (- expected, + actual):
//     [1|1]     aten::relu(t: f32[4, 4])  ->  t: f32[4, 4]
//   - [2]       aten::cos(t: f32[4, 4])  ->  t: f32[4, 4]
//   + [2]       aten::sin(t: f32[4, 4])  ->  t: f32[4, 4]
//   To accept the new text, re-run with OPSPEC_ACCEPT=1 (it rewrites the golden literal in FILE).
// With OPSPEC_ACCEPT=1 (and CI unset) a mismatch instead rewrites the golden
// literal in the source file (see Note [Accepting golden text]), prints
// "Accepted new golden text for FILE:LINE" and passes (rebuild to use the
// new golden). With CI set, OPSPEC_ACCEPT is ignored and the failure says so.
//   EXPECT_DEBUG_STRING(ops::relu(x), R"(
//       aten::relu(t: f32[2, 3])  ->  t: f32[2, 3])");
#define EXPECT_DEBUG_STRING(...) \
  OPSPEC_GTEST_DEBUG_STRING_(::opspec::DebugModeOptions{}, GTEST_NONFATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)
// ASSERT_DEBUG_STRING(statement, "golden"): fatal form.
#define ASSERT_DEBUG_STRING(...) \
  OPSPEC_GTEST_DEBUG_STRING_(::opspec::DebugModeOptions{}, GTEST_FATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

// EXPECT_DEBUG_STRING_WITH(options, statement, "golden"): EXPECT_DEBUG_STRING
// with DebugModeOptions; a braced list with commas needs parentheses:
//   EXPECT_DEBUG_STRING_WITH((DebugModeOptions{.record_output = false, .record_ids = true}),
//                            ops::relu(x), "    aten::relu(t$0: f32[2])");
#define EXPECT_DEBUG_STRING_WITH(options, ...) \
  OPSPEC_GTEST_DEBUG_STRING_(options, GTEST_NONFATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)
// ASSERT_DEBUG_STRING_WITH(options, statement, "golden"): fatal form.
#define ASSERT_DEBUG_STRING_WITH(options, ...) \
  OPSPEC_GTEST_DEBUG_STRING_(options, GTEST_FATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

#define OPSPEC_GTEST_DEBUG_STRING_(options, on_failure, text, ...)                                 \
  GTEST_ASSERT_(::opspec::internal::check_debug_string(                                            \
                    text, __FILE__, __LINE__, options, [&]() { OPSPEC_GTEST_INIT_(__VA_ARGS__); }, \
                    OPSPEC_GTEST_LAST_(__VA_ARGS__)),                                              \
                on_failure)

// EXPECT_FILECHECK(text, checks [, options]): FileCheck directives (CHECK,
// CHECK-NEXT, CHECK-SAME, CHECK-NOT, CHECK-DAG, CHECK-COUNT-n, CHECK-LABEL,
// {{regex}}, [[VAR:regex]]) over text (anything convertible to
// std::string_view), with FileCheckOptions. Failure: "FileCheck of `TEXT`
// failed:" then file_check's message (the directive that failed and the
// input annotated with where each directive matched).
//   EXPECT_FILECHECK(dm.debug_string(), R"(
//     CHECK: aten::relu
//     CHECK-NEXT: aten::mm)");
#define EXPECT_FILECHECK(...) \
  GTEST_ASSERT_(::opspec::internal::filecheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_FILECHECK(text, checks [, options]): fatal form.
#define ASSERT_FILECHECK(...) \
  GTEST_ASSERT_(::opspec::internal::filecheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

namespace opspec::internal {

// check_debug_string: the body of EXPECT_DEBUG_STRING; file and line locate
// the call for accept mode.
::testing::AssertionResult check_debug_string(const char* text, const char* file, int line,
                                              const DebugModeOptions& options, const std::function<void()>& statement,
                                              std::string_view golden);

// filecheck_assertion: the body of EXPECT_FILECHECK.
::testing::AssertionResult filecheck_assertion(const char* text, std::string_view input, std::string_view checks,
                                               const FileCheckOptions& options = {});

}  // namespace opspec::internal
