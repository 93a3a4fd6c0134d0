// report_command.h: `opspec report`, building HTML reports outside a run. See report_command.cc.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace opspec::cli::internal {

// run_report: `opspec report DIR` (rebuilds DIR/index.html over the case
// pages there, e.g. after failing gtest assertions added theirs) or `opspec
// report [--out DIR] LOG...` (a page per saved DebugMode log, JSON or text,
// into DIR, default ./opspec-report);
// args are the words after "report", options anywhere among them. Returns
// 0, or 2 on a usage error or an unreadable input (a directory given as a log).
int run_report(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace opspec::cli::internal
