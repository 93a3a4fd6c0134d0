// cli.h: the `opspec` command as a library function, so a downstream project
// can build its own runner: register its ops, backends and fixtures, then
// `return opspec::cli::run_cli(argc, argv);`.
#pragma once

namespace opspec::cli {

// run_cli: `opspec run|list|show ...` (see `opspec --help`); returns the exit
// status: 0 when every case passed (or was skipped/xfailed), 1 on a failure,
// 2 on a usage or load error.
int run_cli(int argc, char** argv);

// bind_symbols_before_isolating: when argv is `run ... --isolate`, re-executes
// this program once with LD_BIND_NOW=1, so every shared library's symbols are
// bound before the first fork instead of in each case's process (See Note
// [Isolation]). Call it first thing in main(); it returns when there is
// nothing to do or the exec fails, and it removes the variable again in the
// re-executed process so programs the cases start do not inherit it.
void bind_symbols_before_isolating(int argc, char** argv);

}  // namespace opspec::cli
