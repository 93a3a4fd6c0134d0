// diff_command.h: `opspec diff`, comparing two DebugMode logs. See diff_command.cc.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace opspec::cli::internal {

// run_diff: `opspec diff A B [--rtol R] [--atol A] [--no-color]` with args the
// words after "diff"; writes to out and err; returns 0 (equivalent), 1 (they
// diverge) or 2 (a usage error or a log that cannot be read).
int run_diff(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool tty);

}  // namespace opspec::cli::internal
