// sequence_diff and line_diff formatting: insertions, deletions,
// replacements, context, elision, long runs, custom equality.
#include "harness/expect/sequence_diff.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

namespace opspec {
namespace sequence_diff_test {

using ::testing::ElementsAre;
using ::testing::Pair;

std::vector<std::string> numbered(const std::string& prefix, int n) {
  std::vector<std::string> v;
  for (int i = 0; i < n; ++i) v.push_back(prefix + std::to_string(i));
  return v;
}

TEST(SequenceDiff, EqualSequencesGiveNothing) {
  EXPECT_EQ(sequence_diff({}, {}), "");
  EXPECT_EQ(sequence_diff({"a", "b"}, {"a", "b"}), "");
}

TEST(SequenceDiff, TheHeaderExample) {
  EXPECT_EQ(sequence_diff({"aten::add.Tensor", "aten::mul.Tensor", "aten::relu", "aten::sum", "aten::exp",
                           "aten::neg", "aten::abs", "aten::sin"},
                          {"aten::add.Tensor", "aten::sub.Tensor", "aten::relu", "aten::sum", "aten::exp",
                           "aten::neg", "aten::abs", "aten::sin", "aten::cos"},
                          {}, 1),
            "  [0|0] aten::add.Tensor\n"
            "- [1]   aten::mul.Tensor\n"
            "+ [1]   aten::sub.Tensor\n"
            "  [2|2] aten::relu\n"
            "  ... 4 matching ops ...\n"
            "  [7|7] aten::sin\n"
            "+ [8]   aten::cos\n");
}

TEST(SequenceDiff, Insertion) {
  EXPECT_EQ(sequence_diff({"a", "b", "c"}, {"a", "b", "x", "c"}),
            "  [0|0] a\n"
            "  [1|1] b\n"
            "+ [2]   x\n"
            "  [2|3] c\n");
}

TEST(SequenceDiff, Deletion) {
  EXPECT_EQ(sequence_diff({"a", "b", "c"}, {"a", "c"}),
            "  [0|0] a\n"
            "- [1]   b\n"
            "  [2|1] c\n");
}

TEST(SequenceDiff, ReplacementShowsDeletionsThenInsertions) {
  EXPECT_EQ(sequence_diff({"aten::add.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", "aten::relu"},
                          {"aten::add.Tensor", "aten::sin", "aten::cos", "aten::relu"}),
            "  [0|0] aten::add.Tensor\n"
            "- [1]   aten::mul.Tensor\n"
            "- [2]   aten::mul.Tensor\n"
            "+ [1]   aten::sin\n"
            "+ [2]   aten::cos\n"
            "  [3|3] aten::relu\n");
}

TEST(SequenceDiff, EmptySides) {
  EXPECT_EQ(sequence_diff({}, {"a", "b"}), "+ [0] a\n+ [1] b\n");
  EXPECT_EQ(sequence_diff({"a"}, {}), "- [0] a\n");
}

TEST(SequenceDiff, LongEqualRunsAreElidedAroundChanges) {
  std::vector<std::string> e = numbered("op", 50);
  std::vector<std::string> a = e;
  a[20] = "X";
  a.push_back("tail");
  EXPECT_EQ(sequence_diff(e, a),
            "  ... 18 matching ops ...\n"
            "  [18|18] op18\n"
            "  [19|19] op19\n"
            "- [20]    op20\n"
            "+ [20]    X\n"
            "  [21|21] op21\n"
            "  [22|22] op22\n"
            "  ... 25 matching ops ...\n"
            "  [48|48] op48\n"
            "  [49|49] op49\n"
            "+ [50]    tail\n");
}

TEST(SequenceDiff, ContextIsConfigurableAndOneHiddenLineIsShownInstead) {
  // A run of exactly 2*context+1 would hide one element: it is shown whole.
  EXPECT_EQ(sequence_diff({"a", "b", "c", "d", "e", "f"}, {"X", "b", "c", "d", "e", "Y"}, {}, 1),
            "- [0]   a\n"
            "+ [0]   X\n"
            "  [1|1] b\n"
            "  ... 2 matching ops ...\n"
            "  [4|4] e\n"
            "- [5]   f\n"
            "+ [5]   Y\n");
  EXPECT_EQ(sequence_diff({"a", "b", "c", "d", "e"}, {"X", "b", "c", "d", "Y"}, {}, 1),
            "- [0]   a\n"
            "+ [0]   X\n"
            "  [1|1] b\n"
            "  [2|2] c\n"
            "  [3|3] d\n"
            "- [4]   e\n"
            "+ [4]   Y\n");
  EXPECT_EQ(sequence_diff({"a", "b", "c", "d"}, {"a", "b", "c", "X"}, {}, 0),
            "  ... 3 matching ops ...\n"
            "- [3] d\n"
            "+ [3] X\n");
}

TEST(SequenceDiff, LongRunsOfChangesAreShortened) {
  const std::string diff = sequence_diff({"a"}, numbered("new", 100));
  EXPECT_THAT(diff, ::testing::HasSubstr("+ [29] new29\n  ... 65 more ops only in actual ...\n+ [95] new95\n"));
  EXPECT_THAT(diff, ::testing::StartsWith("- [0]  a\n+ [0]  new0\n"));
  EXPECT_LT(std::count(diff.begin(), diff.end(), '\n'), 40);
}

TEST(SequenceDiff, CustomEqualityGetsExpectedThenActual) {
  auto prefix = [](const std::string& e, const std::string& a) { return a.rfind(e, 0) == 0; };
  EXPECT_EQ(sequence_diff({"aten::add", "aten::mul"}, {"aten::add.Tensor", "aten::mul.Tensor"}, prefix), "");
  EXPECT_EQ(sequence_diff({"aten::add", "aten::mul"}, {"aten::add.Tensor", "aten::sub.Tensor"}, prefix),
            "  [0|0] aten::add.Tensor\n"
            "- [1]   aten::mul\n"
            "+ [1]   aten::sub.Tensor\n");
}

TEST(SequenceDiff, BeyondTheCellLimitTheMiddleIsReplacedWhole) {
  // 2100 x 2100 differing middle > kSequenceDiffCellLimit: still a valid diff, quickly.
  std::vector<std::string> e = numbered("e", 2100), a = numbered("a", 2100);
  e.insert(e.begin(), "same");
  a.insert(a.begin(), "same");
  const std::string diff = sequence_diff(e, a);
  EXPECT_THAT(diff, ::testing::StartsWith("  [0|0]  same\n- [1]    e0\n"));
  EXPECT_THAT(diff, ::testing::HasSubstr("more ops only in expected"));
  EXPECT_THAT(diff, ::testing::HasSubstr("more ops only in actual"));
}

TEST(LineDiff, UsesOneBasedLineNumbersAndLines) {
  const std::string expected = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nl9\nl10\n";
  const std::string actual = "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\nCHANGED\nl10\n";
  EXPECT_EQ(line_diff(expected, actual),
            "  ... 5 matching lines ...\n"
            "  [6|6]   l6\n"
            "  [7|7]   l7\n"
            "  [8|8]   l8\n"
            "- [9]     l9\n"
            "+ [9]     CHANGED\n"
            "  [10|10] l10\n");
  EXPECT_EQ(line_diff("a\nb", "a\nb\n"), "");  // only a trailing newline differs: same lines
  EXPECT_EQ(line_diff("", "x"), "+ [1] x\n");
}

TEST(AlignSequences, GivesMatchedPairs) {
  EXPECT_THAT(align_sequences({"a", "b", "c"}, {"a", "x", "c"}), ElementsAre(Pair(0u, 0u), Pair(2u, 2u)));
  EXPECT_THAT(align_sequences({"a", "b"}, {"b", "a", "b"}), ElementsAre(Pair(0u, 1u), Pair(1u, 2u)));
}

}  // namespace
}  // namespace opspec
