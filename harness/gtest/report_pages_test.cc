// report_failure: with OPSPEC_REPORT_DIR set, a failing assertion adds a page
// for its test to the report there (and the index lists it); a passing one,
// or no variable, writes nothing.
#include "harness/gtest/report_pages.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "harness/gtest/opspec_gtest.h"
#include "harness/spec/html_report.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace report_pages_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ReportPages, AFailingAssertionAddsItsTestsPage) {
  const std::string dir = ::testing::TempDir() + "/opspec_gtest_report";
  std::filesystem::remove_all(dir);
  ::setenv("OPSPEC_REPORT_DIR", dir.c_str(), 1);
  const Tensor x = ops::ones({2});
  // A failing EXPECT_OPS, caught so this test passes; its page is written anyway.
  ::testing::AssertionResult failed = internal::match_recorded_ops(
      "ops::relu(x), ElementsAre(\"aten::neg\")", OpLevel::kAten, [&] { ops::relu(x); }, ElementsAre("aten::neg"));
  EXPECT_FALSE(failed);
  EXPECT_OPS(ops::relu(x), ElementsAre("aten::relu"));  // passes: no page
  ::unsetenv("OPSPEC_REPORT_DIR");
  // The page's name is the test's id and, for its capitals, a hash (See case_page_name).
  const std::string name = spec::case_page_name("ReportPages.AFailingAssertionAddsItsTestsPage");
  EXPECT_THAT(name, MatchesRegex("ReportPages\\.AFailingAssertionAddsItsTestsPage~h[0-9a-f]{16}\\.html"));
  const std::string page = read(dir + "/cases/" + name);
  EXPECT_THAT(page, HasSubstr("<pre class=\"failure\">EXPECT_OPS: ops recorded by `ops::relu(x)`"));
  EXPECT_THAT(page, HasSubstr("report_pages_test.cc"));
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr("ReportPages.AFailingAssertionAddsItsTestsPage</a>"));
  EXPECT_THAT(read(dir + "/index.html"), HasSubstr("0 passed, 1 failed"));
  // Without the variable nothing is written.
  std::filesystem::remove_all(dir);
  EXPECT_FALSE(internal::report_failure(::testing::AssertionFailure() << "x", "EXPECT_OPS"));
  EXPECT_FALSE(std::filesystem::exists(dir));
}

}  // namespace report_pages_test
}  // namespace opspec
