// cli.h: the `opspec` command as a library function, so a downstream project
// can build its own runner: register its ops, backends and fixtures, then
// `return opspec::cli::run_cli(argc, argv);`.
#pragma once

namespace opspec::cli {

// run_cli: `opspec run|list|show ...` (see `opspec --help`); returns the exit
// status: 0 when every case passed (or was skipped/xfailed), 1 on a failure,
// 2 on a usage or load error.
int run_cli(int argc, char** argv);

}  // namespace opspec::cli
