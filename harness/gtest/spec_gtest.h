// spec_gtest.h: spec cases as GoogleTest tests, one per case, so ctest,
// --gtest_filter, sharding and --gtest_output=xml work on them.
#pragma once

#include <string>
#include <vector>

namespace opspec {

// register_spec_tests: loads the YAML suites under paths (files or
// directories) and registers one test per case and device, named
// `<suite>.<case>` (`<case>_<device>` for extra devices; characters other than
// letters, digits and '_' become '_'), reported at the case's file and line.
// A failed case adds a failure with the runner's message, a skipped one calls
// GTEST_SKIP, an xfailed one passes (recording the reason as a test property).
// A file that fails to load registers one failing test, `<file stem>.load`.
// Call after testing::InitGoogleTest and before RUN_ALL_TESTS. Returns the
// number of tests registered.
int register_spec_tests(const std::vector<std::string>& paths);

// gtest_name: the sanitized gtest name of a suite or case name.
std::string gtest_name(std::string_view name);

}  // namespace opspec
