// acme_specs_main.cc: opspec's spec runner for acme: registers acme's op,
// backends and fixture, then hands the command line to opspec, so
// `acme_specs run specs/ --junit out.xml` runs specs that use them.
#include "acme/acme.h"
#include "harness/cli/cli.h"

int main(int argc, char** argv) {
  acme::register_all();
  return opspec::cli::run_cli(argc, argv);
}
