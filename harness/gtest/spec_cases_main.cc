// spec_cases_main.cc: the shipped spec suite as GoogleTest tests (one per
// case): `opspec_spec_cases [gtest flags] [PATH...]`; PATH defaults to the
// source tree's specs/ (OPSPEC_SPEC_DIR), or $OPSPEC_SPECS when set.
#include <cstdlib>

#include "gtest/gtest.h"
#include "harness/gtest/spec_gtest.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::vector<std::string> paths(argv + 1, argv + argc);
  if (paths.empty()) paths.push_back(std::getenv("OPSPEC_SPECS") ? std::getenv("OPSPEC_SPECS") : OPSPEC_SPEC_DIR);
  opspec::register_spec_tests(paths);
  return RUN_ALL_TESTS();
}
