// acme_test_main.cc: the test binary's main: acme's registrations first (spec
// programs resolve op names when they are loaded), then the usual GoogleTest
// set-up, with every case of specs/ registered as a test (`acme.<case>`).
#include "acme/acme.h"
#include "gtest/gtest.h"
#include "harness/gtest/spec_gtest.h"

int main(int argc, char** argv) {
  acme::register_all();
  ::testing::InitGoogleTest(&argc, argv);
  opspec::register_spec_tests({ACME_SPEC_DIR});
  return RUN_ALL_TESTS();
}
