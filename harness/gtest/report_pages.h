// report_pages.h: failing assertions into the HTML report: with
// OPSPEC_REPORT_DIR=DIR set, a failing EXPECT_OPS, EXPECT_EAGER_COMPILED_EQUIVALENT,
// EXPECT_GRAPH_BREAKS or EXPECT_DEBUG_STRING writes a page for its test into
// DIR (the report `opspec run --report DIR` writes) and rebuilds its index.
// See Note [HTML report] in harness/spec/html_report.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace opspec::internal {

// FailureLogs: what a failing assertion saw, for its page.
struct FailureLogs {
  std::string eager_log;      // a DebugMode debug string
  std::string compiled_log;
  std::vector<std::string> graphs, graph_dots, graph_breaks;
  std::vector<std::string> equivalence_eager, equivalence_compiled;  // rendered entries
  int equivalence_divergence = -1;
};

// report_failure: r, after adding it to the report in $OPSPEC_REPORT_DIR when
// r failed and the variable is set: id "Suite.Test" (a second failure in the
// same test adds to its page), the test's file and line, `macro` and the
// message. A report that cannot be written is a message on stderr, never a
// second failure.
::testing::AssertionResult report_failure(::testing::AssertionResult r, std::string_view macro,
                                          const FailureLogs& logs = {});

}  // namespace opspec::internal
