// text_assertions.cc: the bodies of EXPECT_DEBUG_STRING and EXPECT_FILECHECK.
#include "harness/gtest/text_assertions.h"

#include <cstdio>
#include <exception>
#include <optional>

#include "harness/expect/op_checks.h"
#include "harness/gtest/report_pages.h"

namespace opspec::internal {

::testing::AssertionResult check_debug_string(const char* text, const char* file, int line,
                                              const DebugModeOptions& options, const std::function<void()>& statement,
                                              std::string_view golden) {
  const std::vector<std::string> args = split_macro_args(text);
  const std::string head = str_cat("debug string of `", abbreviate(join_args(args, 0, args.size() - 1)), "`");
  DebugMode dm(options);
  std::optional<std::string> error;
  {
    auto scope = dm.enter();
    try {
      statement();
    } catch (const std::exception& e) {
      error = e.what();
    } catch (...) {
      error = "an exception that is not a std::exception";
    }
  }
  if (error) {
    return report_failure(::testing::AssertionFailure() << head << ": the statement threw: " << *error,
                          "EXPECT_DEBUG_STRING", {.eager_log = dm.debug_string()});
  }
  const std::string actual = dm.debug_string();
  CheckResult r = check_text_equal(actual, golden_text(golden));
  if (r.ok) return ::testing::AssertionSuccess();
  std::string message = r.message;
  while (!message.empty() && message.back() == '\n') message.pop_back();
  if (accept_mode()) {
    absl::Status s = rewrite_golden_literal(file, line, actual);
    if (s.ok()) {
      std::printf("Accepted new golden text for %s:%d\n", file, line);
      std::fflush(stdout);
      return ::testing::AssertionSuccess();
    }
    return ::testing::AssertionFailure() << head << ":\n"
                                         << message << "\nOPSPEC_ACCEPT=1 could not rewrite it: " << s.message();
  }
  ::testing::AssertionResult fail = ::testing::AssertionFailure() << head << ":\n" << message << "\n";
  if (accept_requested()) {
    fail << "OPSPEC_ACCEPT is ignored because the CI environment variable is set.";
  } else {
    fail << "To accept the new text, re-run with OPSPEC_ACCEPT=1 (it rewrites the golden literal in " << file << ").";
  }
  return report_failure(fail, "EXPECT_DEBUG_STRING", {.eager_log = actual});
}

::testing::AssertionResult filecheck_assertion(const char* text, std::string_view input, std::string_view checks,
                                               const FileCheckOptions& options) {
  CheckResult r = file_check(input, checks, options);
  if (r.ok) return ::testing::AssertionSuccess();
  const std::vector<std::string> args = split_macro_args(text);
  return ::testing::AssertionFailure() << "FileCheck of `" << abbreviate(args.empty() ? "" : args[0]) << "` failed:\n"
                                       << r.message;
}

}  // namespace opspec::internal
