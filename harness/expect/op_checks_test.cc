// check_ops_exact / contain / exclude and check_text_equal: pass and fail
// paths with their messages.
#include "harness/expect/op_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace opspec {
namespace op_checks_test {

using ::testing::HasSubstr;

TEST(CheckOpsExact, PassesWithPatterns) {
  EXPECT_TRUE(check_ops_exact({"aten::add.Tensor", "aten::relu"}, {"aten::add", "relu"}).ok);
  EXPECT_TRUE(check_ops_exact({}, {}).ok);
  EXPECT_TRUE(check_ops_exact({"aten::add.Tensor"}, {"aten::add.Tensor"}).message.empty());
}

TEST(CheckOpsExact, FailureShowsCountsAndDiff) {
  const CheckResult r =
      check_ops_exact({"aten::add.Tensor", "aten::mul.Tensor", "aten::relu", "aten::sum"},
                      {"aten::add", "aten::relu", "aten::sum"});
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message,
            "op sequence differs: expected 3 ops, got 4\n"
            "  [0|0] aten::add.Tensor\n"
            "+ [1]   aten::mul.Tensor\n"
            "  [1|2] aten::relu\n"
            "  [2|3] aten::sum\n");
  EXPECT_EQ(check_ops_exact({"aten::add.Scalar"}, {"aten::add.Tensor"}).message,
            "op sequence differs: expected 1 op, got 1\n"
            "- [0] aten::add.Tensor\n"
            "+ [0] aten::add.Scalar\n");
}

TEST(CheckOpsContain, PassesOnOrderedSubsequence) {
  const std::vector<std::string> actual = {"aten::ones", "aten::add.Tensor", "aten::mm", "aten::relu"};
  EXPECT_TRUE(check_ops_contain(actual, {"add", "relu"}).ok);
  EXPECT_TRUE(check_ops_contain(actual, {}).ok);
  EXPECT_TRUE(check_ops_contain(actual, {"aten::ones", "aten::add.Tensor", "aten::mm", "aten::relu"}).ok);
}

TEST(CheckOpsContain, FailureNamesTheMissingOpAndWhere) {
  const std::vector<std::string> actual = {"aten::ones", "aten::add.Tensor", "aten::mm", "aten::relu"};
  EXPECT_EQ(check_ops_contain(actual, {"aten::add", "aten::sin", "aten::relu"}).message,
            "expected op 'aten::sin' (#2 of 3) not found after 'aten::add.Tensor' at index 1 (matching 'aten::add')\n"
            "recorded ops (4), '*' marks the matched ones:\n"
            "  [0] aten::ones\n"
            "* [1] aten::add.Tensor  (#1)\n"
            "  [2] aten::mm\n"
            "  [3] aten::relu\n");
  // Out of order: the op exists, but before the last match.
  EXPECT_EQ(check_ops_contain(actual, {"aten::mm", "aten::add"}).message,
            "expected op 'aten::add' (#2 of 2) not found after 'aten::mm' at index 2 (matching 'aten::mm')\n"
            "(it was called earlier, at index 1)\n"
            "recorded ops (4), '*' marks the matched ones:\n"
            "  [0] aten::ones\n"
            "  [1] aten::add.Tensor\n"
            "* [2] aten::mm  (#1)\n"
            "  [3] aten::relu\n");
  EXPECT_EQ(check_ops_contain({}, {"aten::mm"}).message,
            "expected op 'aten::mm' (#1 of 1) not found in the 0 ops recorded\n"
            "recorded ops (0), '*' marks the matched ones:\n"
            "  (none)\n");
}

TEST(CheckOpsContain, LongListingsAreElided) {
  std::vector<std::string> actual;
  for (int i = 0; i < 100; ++i) actual.push_back(i == 50 ? "aten::mm" : "aten::add.Tensor");
  const CheckResult r = check_ops_contain(actual, {"aten::mm", "aten::sin"});
  EXPECT_THAT(r.message, HasSubstr("  ... 47 ops ...\n"));  // before the match: the 3 nearest kept
  EXPECT_THAT(r.message, HasSubstr("* [50] aten::mm  (#1)\n"));
  EXPECT_THAT(r.message, HasSubstr("  ... 31 ops ...\n"));  // after it: 15 then 3 kept
  EXPECT_LT(std::count(r.message.begin(), r.message.end(), '\n'), 40);
}

TEST(CheckOpsExclude, PassAndFailWithIndices) {
  const std::vector<std::string> actual = {"aten::_to_copy", "aten::add.Tensor", "aten::_to_copy", "aten::add.Scalar"};
  EXPECT_TRUE(check_ops_exclude(actual, {"aten::mul", "aten::sub.Tensor"}).ok);
  EXPECT_EQ(check_ops_exclude(actual, {"aten::_to_copy", "aten::mul", "add"}).message,
            "excluded op 'aten::_to_copy' was called: aten::_to_copy at indices 0, 2\n"
            "excluded op 'add' was called: aten::add.Tensor at index 1; aten::add.Scalar at index 3\n"
            "(4 ops recorded)");
}

TEST(CheckOpNamesKnown, AMisspeltNameFailsEveryListCheck) {
  const std::vector<std::string> actual = {"aten::_to_copy"};
  EXPECT_TRUE(check_op_names_known({"aten::_to_copy", "add", "aten::add.Tensor", "aten::relu.default"}).ok);
  // .default is the unnamed overload alone: aten::add has only .Tensor and .Scalar.
  EXPECT_FALSE(check_op_names_known({"aten::add.default"}).ok);
  // Exclude: the name could never be called, so the check would pass whatever ran.
  EXPECT_EQ(check_ops_exclude(actual, {"aten::_to_cpy"}).message,
            "'aten::_to_cpy' names no registered op; did you mean 'aten::_to_copy'?");
  // Exact and contain fail anyway; the unknown name comes first, as the likely reason.
  EXPECT_THAT(check_ops_exact(actual, {"aten::_to_cpy"}).message,
              ::testing::StartsWith("'aten::_to_cpy' names no registered op; did you mean 'aten::_to_copy'?\n"
                                  "op sequence differs"));
  EXPECT_THAT(check_ops_contain(actual, {"aten::_to_cpy"}).message,
              ::testing::StartsWith("'aten::_to_cpy' names no registered op; did you mean 'aten::_to_copy'?\n"
                                  "expected op 'aten::_to_cpy' (#1 of 1) not found"));
}

TEST(CheckTextEqual, PassAndFail) {
  EXPECT_TRUE(check_text_equal("a\nb\n", "a\nb\n").ok);
  EXPECT_EQ(check_text_equal("a\nB\nc\n", "a\nb\nc\n").message,
            "text differs from the expected (golden) text (- expected, + actual):\n"
            "  [1|1] a\n"
            "- [2]   b\n"
            "+ [2]   B\n"
            "  [3|3] c\n");
  EXPECT_EQ(check_text_equal("a\n", "a").message,
            "text differs from the expected (golden) text only in the trailing newline: "
            "actual ends with one, expected does not");
}

}  // namespace
}  // namespace opspec
