#include "harness/gtest/accept.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"

namespace opspec {
namespace accept_test {

using ::testing::HasSubstr;
using testing_util::ScopedEnv;

std::string read(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

// AcceptTest: each test works on its own copy of a snippet, with CI unset
// and a fresh edit history.
class AcceptTest : public ::testing::Test {
 protected:
  void SetUp() override { reset_golden_edit_history(); }
  void TearDown() override {
    reset_golden_edit_history();
    for (const std::string& path : paths_) {
      std::filesystem::remove(path);
      std::filesystem::remove(path + ".orig");
    }
  }

  std::string snippet(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    const std::string path = ::testing::TempDir() + "opspec_accept_" + info->name() + ".cc";
    write(path, text);
    std::filesystem::remove(path + ".orig");
    paths_.push_back(path);
    return path;
  }

  std::vector<std::string> paths_;

  ScopedEnv no_ci_{"CI", std::nullopt};
};

TEST_F(AcceptTest, PlainLiteral) {
  const std::string file = snippet(
      "TEST(A, B) {\n"
      "  EXPECT_DEBUG_STRING(f(x), \"old text\");  // keep me\n"
      "}\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 2, "new text").ok());
  EXPECT_EQ(read(file),
            "TEST(A, B) {\n"
            "  EXPECT_DEBUG_STRING(f(x), R\"(new text)\");  // keep me\n"
            "}\n");
}

TEST_F(AcceptTest, ConcatenatedLiteralsAcrossLines) {
  const std::string file = snippet(
      "TEST(A, B) {\n"
      "  EXPECT_DEBUG_STRING(f(x, \"not me\"),\n"
      "                      \"line 1\\n\"\n"
      "                      \"line \\\"2\\\"\");\n"
      "  int after = 1;\n"
      "}\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 2, "a\nb").ok());
  EXPECT_EQ(read(file),
            "TEST(A, B) {\n"
            "  EXPECT_DEBUG_STRING(f(x, \"not me\"),\n"
            "                      R\"(\n"
            "a\n"
            "b)\");\n"
            "  int after = 1;\n"
            "}\n");
}

TEST_F(AcceptTest, RawLiteralWithDelimiterSpanningLines) {
  const std::string file = snippet(
      "  ASSERT_DEBUG_STRING({ g(); h(1, 2); }, R\"xy(\n"
      "    old )\" line\n"
      "    old line 2)xy\");\n"
      "  next();\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 1, "single").ok());
  EXPECT_EQ(read(file),
            "  ASSERT_DEBUG_STRING({ g(); h(1, 2); }, R\"(single)\");\n"
            "  next();\n");
  // Two lines fewer: a call that was on line 4 is now on line 2.
  EXPECT_EQ(adjusted_line(file, 4), 2);
  EXPECT_EQ(adjusted_line(file, 1), 1);
}

TEST_F(AcceptTest, TwoRewritesInOneFileShiftLines) {
  const std::string original =
      "TEST(A, B) {\n"                          // 1
      "  EXPECT_DEBUG_STRING(f(), \"one\");\n"  // 2
      "}\n"                                     // 3
      "TEST(A, C) {\n"                          // 4
      "  EXPECT_DEBUG_STRING(g(), \"two\");\n"  // 5
      "}\n";                                    // 6
  const std::string file = snippet(original);
  ASSERT_TRUE(rewrite_golden_literal(file, 2, "x\ny\nz").ok());  // adds 3 lines
  EXPECT_EQ(adjusted_line(file, 5), 8);
  ASSERT_TRUE(rewrite_golden_literal(file, 5, "w").ok());  // __LINE__ as compiled
  EXPECT_EQ(read(file),
            "TEST(A, B) {\n"
            "  EXPECT_DEBUG_STRING(f(), R\"(\n"
            "x\n"
            "y\n"
            "z)\");\n"
            "}\n"
            "TEST(A, C) {\n"
            "  EXPECT_DEBUG_STRING(g(), R\"(w)\");\n"
            "}\n");
  // The backup is the file before the first rewrite, not overwritten by the second.
  EXPECT_EQ(read(file + ".orig"), original);
}

TEST_F(AcceptTest, BackupWrittenBeforeTheFirstRewrite) {
  const std::string original = "EXPECT_DEBUG_STRING(f(), \"a\");\n";
  const std::string file = snippet(original);
  EXPECT_FALSE(std::filesystem::exists(file + ".orig"));
  ASSERT_TRUE(rewrite_golden_literal(file, 1, "b").ok());
  EXPECT_EQ(read(file + ".orig"), original);
  EXPECT_EQ(read(file), "EXPECT_DEBUG_STRING(f(), R\"(b)\");\n");
}

TEST_F(AcceptTest, ClangStyleLineOfTheClosingParenthesis) {
  // Clang reports __LINE__ of a multi-line macro call at its closing parenthesis.
  const std::string file = snippet(
      "EXPECT_DEBUG_STRING(\n"
      "    f(),\n"
      "    \"a\");\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 3, "b").ok());
  EXPECT_EQ(read(file), "EXPECT_DEBUG_STRING(\n    f(),\n    R\"(b)\");\n");
}

TEST_F(AcceptTest, CiSetMeansNoRewrite) {
  const std::string original = "EXPECT_DEBUG_STRING(f(), \"a\");\n";
  const std::string file = snippet(original);
  ScopedEnv ci("CI", "true");
  const absl::Status s = rewrite_golden_literal(file, 1, "b");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()), HasSubstr("the CI environment variable is set"));
  EXPECT_EQ(read(file), original);
  EXPECT_FALSE(std::filesystem::exists(file + ".orig"));
  EXPECT_FALSE(accept_mode());
}

TEST_F(AcceptTest, ErrorsNameFileAndLine) {
  const std::string file = snippet(
      "int x = 1;\n"
      "EXPECT_DEBUG_STRING(f(), golden_variable);\n");
  absl::Status s = rewrite_golden_literal(file, 1, "b");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(s.message()), HasSubstr("no golden macro call found at " + file + ":1"));
  s = rewrite_golden_literal(file, 2, "b");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(s.message()), HasSubstr(file + ":2 is not a string literal"));
  EXPECT_EQ(rewrite_golden_literal(file + ".missing", 1, "b").code(), absl::StatusCode::kNotFound);
}

TEST_F(AcceptTest, IgnoresCommentsAndStringsAndPrefersKnownMacros) {
  const std::string file = snippet(
      "/* EXPECT_DEBUG_STRING(a, \"no\") */ s = \"EXPECT_DEBUG_STRING(b, \\\"no\\\")\"; "
      "MY_CHECK(EXPECT_DEBUG_STRING(c(\"q\"), \"yes\"));\n"
      "WRAPPER(f(), \"wrapped\");\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 1, "new").ok());
  // A line without a known macro: the outermost call whose last argument is a literal.
  ASSERT_TRUE(rewrite_golden_literal(file, 2, "w2").ok());
  EXPECT_EQ(read(file),
            "/* EXPECT_DEBUG_STRING(a, \"no\") */ s = \"EXPECT_DEBUG_STRING(b, \\\"no\\\")\"; "
            "MY_CHECK(EXPECT_DEBUG_STRING(c(\"q\"), R\"(new)\"));\n"
            "WRAPPER(f(), R\"(w2)\");\n");
}

TEST_F(AcceptTest, SameTextTwiceIsANoOp) {
  const std::string file = snippet("EXPECT_DEBUG_STRING(f(), \"a\");\nEXPECT_DEBUG_STRING(g(), \"c\");\n");
  ASSERT_TRUE(rewrite_golden_literal(file, 1, "b\nb").ok());
  ASSERT_TRUE(rewrite_golden_literal(file, 1, "b\nb").ok());  // e.g. a loop: the same call again
  EXPECT_EQ(adjusted_line(file, 2), 4);
  ASSERT_TRUE(rewrite_golden_literal(file, 2, "d").ok());
  EXPECT_EQ(read(file), "EXPECT_DEBUG_STRING(f(), R\"(\nb\nb)\");\nEXPECT_DEBUG_STRING(g(), R\"(d)\");\n");
}

TEST(ResolveSourcePathTest, FindsRelativeFileNamesFromAnyWorkingDirectory) {
  // Build tools may compile with paths relative to the build directory.
  const std::filesystem::path cwd = std::filesystem::current_path();
  std::filesystem::current_path(::testing::TempDir());
  const std::string resolved = resolve_source_path(__FILE__);
  std::filesystem::current_path(cwd);
  EXPECT_TRUE(std::filesystem::exists(resolved)) << __FILE__ << " -> " << resolved;
  EXPECT_EQ(resolve_source_path("no/such/file.cc"), "no/such/file.cc");
}

TEST(MakeRawLiteralTest, PicksLayoutAndDelimiter) {
  EXPECT_EQ(make_raw_literal("abc"), "R\"(abc)\"");
  EXPECT_EQ(make_raw_literal(""), "R\"()\"");
  EXPECT_EQ(make_raw_literal("a\nb"), "R\"(\na\nb)\"");
  EXPECT_EQ(make_raw_literal("f(\"x\")\""), "R\"golden(f(\"x\")\")golden\"");
  EXPECT_EQ(make_raw_literal(")\" and )golden\""), "R\"golden1()\" and )golden\")golden1\"");
  for (const char* text : {"abc", "", "a\nb", "\nleading", "trailing\n", ")\""}) {
    const std::string lit = make_raw_literal(text);
    const size_t open = lit.find('(');
    const std::string delim = lit.substr(2, open - 2);
    const std::string value = lit.substr(open + 1, lit.size() - open - 1 - delim.size() - 2);
    EXPECT_EQ(golden_text(value), text) << lit;
  }
}

TEST(AcceptModeTest, NeedsOpspecAcceptAndNoCi) {
  {
    ScopedEnv accept("OPSPEC_ACCEPT", "1");
    ScopedEnv ci("CI", std::nullopt);
    EXPECT_TRUE(accept_requested());
    EXPECT_TRUE(accept_mode());
  }
  {
    ScopedEnv accept("OPSPEC_ACCEPT", "1");
    ScopedEnv ci("CI", "1");
    EXPECT_TRUE(accept_requested());
    EXPECT_TRUE(running_on_ci());
    EXPECT_FALSE(accept_mode());
  }
  {
    ScopedEnv accept("OPSPEC_ACCEPT", "0");
    EXPECT_FALSE(accept_requested());
  }
}

}  // namespace
}  // namespace opspec
