#include "harness/gtest/text_assertions.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace text_assertions_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using testing_util::nonfatal_failure_of;
using testing_util::ScopedEnv;

// Tests of failing golden comparisons run with accept mode off, so a
// developer's OPSPEC_ACCEPT=1 can't make them rewrite this file.
class DebugStringTest : public ::testing::Test {
 protected:
  ScopedEnv no_accept_{"OPSPEC_ACCEPT", std::nullopt};
};

TEST_F(DebugStringTest, MatchingGoldenPasses) {
  Tensor x = ops::randn({2, 3});
  EXPECT_DEBUG_STRING(ops::relu(x), "    aten::relu(t: f32[2, 3])  ->  t: f32[2, 3]");
  // One leading newline is dropped, so a raw literal can open at the end of a line.
  EXPECT_DEBUG_STRING(
      {
        Tensor y = ops::relu(x);
        ops::add(y, y);
      },
      R"(
    aten::relu(t: f32[2, 3])  ->  t: f32[2, 3]
    aten::add.Tensor(t: f32[2, 3], t: f32[2, 3])  ->  t: f32[2, 3])");
  ASSERT_DEBUG_STRING(ops::relu(x), "    aten::relu(t: f32[2, 3])  ->  t: f32[2, 3]");
}

TEST_F(DebugStringTest, WithOptions) {
  Tensor x = ops::randn({2});
  EXPECT_DEBUG_STRING_WITH((DebugModeOptions{.record_output = false, .record_ids = true}), ops::relu(x),
                           "    aten::relu(t$0: f32[2])");
  DebugModeOptions no_outputs;
  no_outputs.record_output = false;
  ASSERT_DEBUG_STRING_WITH(no_outputs, ops::relu(x), "    aten::relu(t: f32[2])");
  EXPECT_NONFATAL_FAILURE(EXPECT_DEBUG_STRING_WITH(no_outputs, ops::relu(x), "    aten::sin(t: f32[2])"),
                          "- [1]     aten::sin(t: f32[2])");
}

TEST_F(DebugStringTest, MismatchShowsALineDiffAndHowToAccept) {
  Tensor x = ops::randn({2});
  EXPECT_NONFATAL_FAILURE(EXPECT_DEBUG_STRING(ops::sin(ops::relu(x)), "    aten::relu(t: f32[2])  ->  t: f32[2]"),
                          "+ [2]       aten::sin(t: f32[2])  ->  t: f32[2]");
  const std::string msg = nonfatal_failure_of(
      [&] { EXPECT_DEBUG_STRING(ops::sin(ops::relu(x)), "    aten::cos(t: f32[2])  ->  t: f32[2]"); });
  EXPECT_THAT(msg, StartsWith("debug string of `ops::sin(ops::relu(x))`:\n"
                              "text differs from the expected (golden) text (- expected, + actual):\n"));
  EXPECT_THAT(msg, HasSubstr("- [1]     aten::cos(t: f32[2])  ->  t: f32[2]\n"));
  EXPECT_THAT(msg, HasSubstr("To accept the new text, re-run with OPSPEC_ACCEPT=1"));
}

TEST_F(DebugStringTest, AssertFormIsFatal) {
  EXPECT_FATAL_FAILURE(
      {
        Tensor x = ops::randn({2});
        ASSERT_DEBUG_STRING(ops::relu(x), "");
      },
      "+ [1]     aten::relu(t: f32[2])  ->  t: f32[2]");
}

TEST_F(DebugStringTest, ThrowingStatementFails) {
  EXPECT_NONFATAL_FAILURE(EXPECT_DEBUG_STRING(throw std::runtime_error("nope"), ""),
                          "debug string of `throw std::runtime_error(\"nope\")`: the statement threw: nope");
}

TEST_F(DebugStringTest, AcceptIsIgnoredOnCi) {
  ScopedEnv accept("OPSPEC_ACCEPT", "1");
  ScopedEnv ci("CI", "true");
  Tensor x = ops::randn({2});
  EXPECT_NONFATAL_FAILURE(EXPECT_DEBUG_STRING(ops::relu(x), "wrong"),
                          "OPSPEC_ACCEPT is ignored because the CI environment variable is set.");
}

TEST_F(DebugStringTest, AcceptModeRewritesTheCallersSource) {
  // The macro's body, pointed at a copy of a test source instead of this file.
  const std::string file = ::testing::TempDir() + "opspec_accept_debug_string_test.cc";
  {
    std::ofstream f(file, std::ios::binary | std::ios::trunc);
    f << "TEST(A, B) {\n  EXPECT_DEBUG_STRING(ops::relu(x), \"stale\");\n}\n";
  }
  std::filesystem::remove(file + ".orig");
  reset_golden_edit_history();
  ScopedEnv accept("OPSPEC_ACCEPT", "1");
  ScopedEnv ci("CI", std::nullopt);
  Tensor x = ops::randn({2});
  ::testing::internal::CaptureStdout();
  const ::testing::AssertionResult r = internal::check_debug_string(
      "ops::relu(x), \"stale\"", file.c_str(), 2, DebugModeOptions{}, [&] { ops::relu(x); }, "stale");
  const std::string out = ::testing::internal::GetCapturedStdout();
  EXPECT_TRUE(r) << r.message();
  EXPECT_EQ(out, "Accepted new golden text for " + file + ":2\n");
  std::ifstream f(file, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(),
            "TEST(A, B) {\n  EXPECT_DEBUG_STRING(ops::relu(x), R\"(    aten::relu(t: f32[2])  ->  t: f32[2])\");\n}\n");
  EXPECT_TRUE(std::filesystem::exists(file + ".orig"));
  // A call that cannot be rewritten still fails, saying why.
  const ::testing::AssertionResult bad = internal::check_debug_string(
      "ops::relu(x), \"stale\"", file.c_str(), 1, DebugModeOptions{}, [&] { ops::relu(x); }, "stale");
  EXPECT_FALSE(bad);
  EXPECT_THAT(bad.message(), HasSubstr("OPSPEC_ACCEPT=1 could not rewrite it: no golden macro call found at"));
  reset_golden_edit_history();
  std::filesystem::remove(file);
  std::filesystem::remove(file + ".orig");
}

// ---- EXPECT_FILECHECK ----

TEST(FileCheckAssertionTest, PassesAndFails) {
  const std::string text = "aten::relu(t: f32[2])\naten::mm(t: f32[2, 2], t: f32[2, 2])\n";
  EXPECT_FILECHECK(text, "CHECK: aten::relu\nCHECK-NEXT: aten::mm");
  ASSERT_FILECHECK(text, "CHECK: aten::{{[a-z]+}}(t: [[T:f[0-9]+]]\nCHECK-NEXT: [[T]][2, 2]");
  const std::string msg = nonfatal_failure_of([&] { EXPECT_FILECHECK(text, "CHECK: aten::mm\nCHECK: aten::relu"); });
  EXPECT_THAT(msg, StartsWith("FileCheck of `text` failed:\n"));
  EXPECT_THAT(msg, HasSubstr("aten::relu"));
  EXPECT_NONFATAL_FAILURE(EXPECT_FILECHECK(text, "CHECK-NOT: aten::relu"), "FileCheck of `text` failed:");
  EXPECT_FATAL_FAILURE(ASSERT_FILECHECK("abc", "CHECK: xyz"), "FileCheck of `\"abc\"` failed:");
  FileCheckOptions options;
  options.check_prefix = "MY";
  EXPECT_FILECHECK(text, "MY: aten::mm", options);
}

}  // namespace
}  // namespace opspec
