// bench_command.h: `opspec bench`, timing spec cases compiled against eager.
// See Note [opspec bench] in harness/spec/bench.h.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace opspec::cli::internal {

// run_bench_command: `opspec bench [PATH...] [options]` with args the words
// after "bench"; returns 0, 1 (a case failed to run, was refused, a file did
// not load, or a timing regressed against --baseline) or 2 (a usage error, a
// PATH that is not there).
int run_bench_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, bool tty);

}  // namespace opspec::cli::internal
