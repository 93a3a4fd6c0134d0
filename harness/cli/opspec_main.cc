// opspec_main.cc: the `opspec` command: the builtin fixtures (linked in from
// fixtures/) plus the spec runner's command line (harness/spec/cli.h).
#include "harness/spec/cli.h"

int main(int argc, char** argv) { return opspec::spec::run_cli(argc, argv); }
