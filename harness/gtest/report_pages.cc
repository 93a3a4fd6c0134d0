// report_pages.cc: report_failure. See report_pages.h.
#include "harness/gtest/report_pages.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "harness/spec/html_report.h"

namespace opspec::internal {

::testing::AssertionResult report_failure(::testing::AssertionResult r, std::string_view macro,
                                          const FailureLogs& logs) {
  const char* dir = std::getenv("OPSPEC_REPORT_DIR");
  if (r || dir == nullptr || *dir == '\0') return r;
  const ::testing::TestInfo* test = ::testing::UnitTest::GetInstance()->current_test_info();
  spec::CaseResult c;
  c.suite = test != nullptr ? test->test_suite_name() : "gtest";
  c.name = test != nullptr ? test->name() : "unknown";
  c.id = absl::StrCat(c.suite, ".", c.name);
  c.file = test != nullptr && test->file() != nullptr ? test->file() : "";
  c.line = test != nullptr ? test->line() : 0;
  c.outcome = spec::Outcome::kFailed;
  // Every failure of one test goes on its page, in order.
  static std::mutex mu;
  static std::map<std::string, std::string>* messages = new std::map<std::string, std::string>();
  std::lock_guard<std::mutex> lock(mu);
  std::string& message = (*messages)[c.id];
  str_append(&message, message.empty() ? "" : "\n\n", macro, ": ", r.message());
  c.message = message;
  c.eager_debug_string = logs.eager_log;
  c.compiled_debug_string = logs.compiled_log;
  c.graphs = logs.graphs;
  c.graph_dots = logs.graph_dots;
  c.graph_breaks = logs.graph_breaks;
  c.equivalence_eager = logs.equivalence_eager;
  c.equivalence_compiled = logs.equivalence_compiled;
  c.equivalence_divergence = logs.equivalence_divergence;
  spec::make_reportable(c);
  if (absl::Status s = spec::add_to_html_report(dir, {c, nullptr}); !s.ok()) {
    std::fprintf(stderr, "opspec: OPSPEC_REPORT_DIR: %s\n", std::string(s.message()).c_str());
  }
  return r;
}

}  // namespace opspec::internal
