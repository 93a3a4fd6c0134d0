// opspec_main.cc: the `opspec` command: the builtin fixtures (linked in from
// fixtures/) plus the spec runner's command line (harness/cli/cli.h).
#include "harness/cli/cli.h"

int main(int argc, char** argv) {
  opspec::cli::bind_symbols_before_isolating(argc, argv);
  return opspec::cli::run_cli(argc, argv);
}
