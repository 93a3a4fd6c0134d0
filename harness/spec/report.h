// report.h: results as text (the summary line), JUnit XML and JSON, and the
// JSON form a child process sends its result back in (--isolate).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "harness/spec/runner.h"

namespace opspec::spec {

// Summary: counts of each outcome and the wall time of the run.
struct Summary {
  int passed = 0, failed = 0, skipped = 0, xfailed = 0;
  double seconds = 0;
  void add(const CaseResult& r);
  // str: "12 passed, 1 failed, 2 skipped, 1 xfailed in 0.84 s".
  std::string str() const;
  int total() const { return passed + failed + skipped + xfailed; }
};

// valid_utf8: s with each byte that is not part of a valid UTF-8 sequence, and
// each U+FFFE and U+FFFF (which XML forbids), replaced by U+FFFD.
std::string valid_utf8(std::string_view s);

// make_reportable: every text of r made valid UTF-8 (valid_utf8), so a result
// reads the same in JUnit and JSON whether it ran in this process or came
// back from a worker as JSON. run_case's results are already reportable.
void make_reportable(CaseResult& r);

// result_to_json / result_from_json: one CaseResult as a JSON document.
std::string result_to_json(const CaseResult& r);
absl::StatusOr<CaseResult> result_from_json(std::string_view json);

// write_junit: JUnit XML (one <testsuite> per suite; skipped and xfailed
// cases as <skipped/>, failures with their message), as CI systems read it.
absl::Status write_junit(const std::string& path, const std::vector<CaseResult>& results, const Summary& summary);

// check_writable: whether a file can be written at path (a file there is left
// as it is; one the check creates is removed), else why not; so a command
// says so before a long run rather than after it.
absl::Status check_writable(const std::string& path);
// junit_xml: the document write_junit writes: well-formed XML 1.0 whatever the
// results hold (invalid UTF-8, control characters, "]]>").
std::string junit_xml(const std::vector<CaseResult>& results, const Summary& summary);
// write_json: {"summary": {...}, "cases": [{id, suite, name, file, line, outcome, message, seconds}]}.
absl::Status write_json(const std::string& path, const std::vector<CaseResult>& results, const Summary& summary);

}  // namespace opspec::spec
