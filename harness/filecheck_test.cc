// filecheck_test.cc: file_check()'s directives, pass and fail paths, and the
// failure message. Directive errors are in filecheck_errors_test.cc.
#include "harness/filecheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "harness/debug_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace filecheck_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// fails: the failure message of a check that must fail ("" if it passed).
std::string fails(std::string_view input, std::string_view checks, const FileCheckOptions& options = {}) {
  const CheckResult r = file_check(input, checks, options);
  EXPECT_FALSE(r.ok) << "expected a failure for checks:\n" << checks;
  return r.message;
}

void passes(std::string_view input, std::string_view checks, const FileCheckOptions& options = {}) {
  const CheckResult r = file_check(input, checks, options);
  EXPECT_TRUE(r.ok) << r.message;
  EXPECT_EQ(r.message, "");
}

constexpr std::string_view kOps =
    "    aten::relu(t: f32[4, 4])  ->  t: f32[4, 4]\n"
    "    aten::add.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]\n"
    "    aten::mul.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]\n"
    "    aten::sum(t: f32[4, 4])  ->  t: f32[]\n";

TEST(FileCheckTest, CheckMatchesInOrder) {
  passes(kOps, "CHECK: aten::relu\nCHECK: aten::mul.Tensor\nCHECK: aten::sum");
  passes(kOps, "# comments and blank lines are ignored\n\n// CHECK: aten::add\n; CHECK: f32[]");
  const std::string m = fails(kOps, "CHECK: aten::mul\nCHECK: aten::add");
  EXPECT_THAT(m, StartsWith("<checks>:2:8: error: CHECK: expected string not found in input\n"
                            "CHECK: aten::add\n"
                            "       ^\n"
                            "<input>:3:14: note: scanning from here\n"));
}

TEST(FileCheckTest, FailureMessageShowsTheAnnotatedInput) {
  const std::string m = fails(kOps, "CHECK: aten::relu(t: f32[4, 4]) -> t: f32[4, 4]\nCHECK-NEXT: aten::mull.Tensor\n");
  EXPECT_EQ(m,
            "<checks>:2:13: error: CHECK-NEXT: expected string not found in input\n"
            "CHECK-NEXT: aten::mull.Tensor\n"
            "            ^\n"
            "<input>:2:1: note: scanning from here\n"
            "<input>:3:5: note: possible intended match here\n"
            "\n"
            "Annotated input <input> (next:2 = the CHECK-NEXT: on line 2 of <checks>; ^ match, X no match from "
            "here, ! bad match, ? possible intended match):\n"
            "      1 |     aten::relu(t: f32[4, 4])  ->  t: f32[4, 4]\n"
            "check:1 |     ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
            "      2 |     aten::add.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]\n"
            " next:2 | X~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ error: no match found "
            "in lines 2-4\n"
            "      3 |     aten::mul.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]\n"
            " next:2 |     ?~~~~~~~~~~~~~~~ possible intended match\n"
            "      4 |     aten::sum(t: f32[4, 4])  ->  t: f32[]\n");
}

TEST(FileCheckTest, NextMustBeOnTheFollowingLine) {
  passes(kOps, "CHECK: aten::relu\nCHECK-NEXT: aten::add\nCHECK-NEXT: aten::mul");
  std::string m = fails(kOps, "CHECK: aten::relu\nCHECK-NEXT: aten::mul");
  EXPECT_THAT(m, HasSubstr("<checks>:2:13: error: CHECK-NEXT: is not on the line after the previous match\n"));
  EXPECT_THAT(m, HasSubstr("<input>:3:5: note: the match is here\n<input>:1:15: note: the previous match ended here"));
  EXPECT_THAT(m, HasSubstr(" next:2 |     !~~~~~~~~ error: match on the wrong line\n"));
  m = fails(kOps, "CHECK: aten::relu\nCHECK-NEXT: f32[4, 4]");
  EXPECT_THAT(m, HasSubstr("error: CHECK-NEXT: is on the same line as the previous match"));
  m = fails(kOps, "CHECK: aten::relu\nCHECK-NEXT: aten::nope");
  EXPECT_THAT(m, HasSubstr("error: CHECK-NEXT: expected string not found in input"));
}

TEST(FileCheckTest, SameMustBeOnTheSameLine) {
  passes(kOps, "CHECK: aten::add.Tensor\nCHECK-SAME: t: f32[4, 4], t: f32[4, 4]\nCHECK-SAME: -> t: f32[4, 4]");
  const std::string m = fails(kOps, "CHECK: aten::relu\nCHECK-SAME: aten::add");
  EXPECT_THAT(m, HasSubstr("<checks>:2:13: error: CHECK-SAME: is not on the same line as the previous match"));
  EXPECT_THAT(m, HasSubstr(" same:2 |     !~~~~~~~~ error: match on the wrong line"));
}

TEST(FileCheckTest, EmptyMatchesAnEmptyNextLine) {
  const std::string input = "graph one\n\ngraph two\nx\n";
  passes(input, "CHECK: graph one\nCHECK-EMPTY:\nCHECK-NEXT: graph two");
  std::string m = fails(input, "CHECK: graph two\nCHECK-EMPTY:");
  EXPECT_THAT(m, HasSubstr("<checks>:2:13: error: CHECK-EMPTY: expected string not found in input"));
  m = fails("a\nb\n\n", "CHECK: a\nCHECK-EMPTY:");
  EXPECT_THAT(m, HasSubstr("error: CHECK-EMPTY: is not on the line after the previous match"));
  EXPECT_THAT(m, HasSubstr("empty:2 | ! error: match on the wrong line"));
}

TEST(FileCheckTest, NotForbidsTextBetweenMatches) {
  passes(kOps, "CHECK: aten::relu\nCHECK-NOT: aten::div\nCHECK: aten::sum");
  passes(kOps, "CHECK: aten::add\nCHECK-NOT: aten::relu");  // only the region after the previous match
  passes(kOps, "CHECK-NOT: aten::relu\nCHECK: aten::relu");  // only the region before the next match
  const std::string m = fails(kOps, "CHECK: aten::relu\nCHECK-NOT: aten::mul\nCHECK: aten::sum");
  EXPECT_THAT(m, StartsWith("<checks>:2:12: error: CHECK-NOT: excluded string found in input\n"
                            "CHECK-NOT: aten::mul\n"
                            "           ^\n"
                            "<input>:3:5: note: found here\n"));
  EXPECT_THAT(m, HasSubstr("  not:2 |     !~~~~~~~~ error: excluded string found\n"));
  EXPECT_THAT(m, HasSubstr("check:3 |     ^~~~~~~~~\n"));  // the CHECK after it still shows where it matched
  // Trailing NOTs cover the rest of the input.
  EXPECT_THAT(fails(kOps, "CHECK: aten::add\nCHECK-NOT: sum"), HasSubstr("error: CHECK-NOT: excluded string found"));
}

TEST(FileCheckTest, DagMatchesInAnyOrderWithoutOverlap) {
  passes(kOps, "CHECK-DAG: aten::mul\nCHECK-DAG: aten::relu\nCHECK-DAG: aten::add\nCHECK: aten::sum");
  // Two DAGs for the same text need two occurrences.
  passes("x = 1\nx = 1\n", "CHECK-DAG: x = 1\nCHECK-DAG: x = 1");
  std::string m = fails("x = 1\ny = 2\n", "CHECK-DAG: x = 1\nCHECK-DAG: x = 1");
  EXPECT_THAT(m, HasSubstr("<checks>:2:12: error: CHECK-DAG: expected string not found in input"));
  EXPECT_THAT(m, HasSubstr("dag:1 | ^~~~~"));
  // The positive check after a DAG group starts after the group's last match.
  m = fails(kOps, "CHECK-DAG: aten::mul\nCHECK-DAG: aten::relu\nCHECK: aten::add");
  EXPECT_THAT(m, HasSubstr("error: CHECK: expected string not found in input"));
}

TEST(FileCheckTest, NotBetweenDagGroupsSeparatesThem) {
  const std::string input = "a\nb\nc\nd\n";
  passes(input, "CHECK-DAG: b\nCHECK-DAG: a\nCHECK-NOT: z\nCHECK-DAG: d\nCHECK-DAG: c");
  // The NOT covers the gap between the two groups (here: "c" lies between {a, b} and {d}).
  std::string m = fails(input, "CHECK-DAG: b\nCHECK-DAG: a\nCHECK-NOT: c\nCHECK-DAG: d");
  EXPECT_THAT(m, HasSubstr("<checks>:3:12: error: CHECK-NOT: excluded string found in input"));
  // The second group starts after the first: "a" before "b" is not found again.
  m = fails(input, "CHECK-DAG: b\nCHECK-NOT: z\nCHECK-DAG: a");
  EXPECT_THAT(m, HasSubstr("<checks>:3:12: error: CHECK-DAG: expected string not found in input"));
}

TEST(FileCheckTest, CountMatchesNTimes) {
  const std::string input = "aten::randn\naten::randn\naten::randn\naten::mm\n";
  passes(input, "CHECK-COUNT-3: aten::randn\nCHECK-NEXT: aten::mm");
  passes(input, "CHECK-COUNT-2: aten::randn\nCHECK: aten::randn");
  const std::string m = fails(input, "CHECK-COUNT-4: aten::randn");
  EXPECT_THAT(m, HasSubstr("<checks>:1:16: error: CHECK-COUNT-4: expected string not found in input "
                           "(3 of 4 matches found)"));
  EXPECT_THAT(m, AllOf(HasSubstr("count:1'1 | ^~~~~~~~~~"), HasSubstr("count:1'3 | ^~~~~~~~~~"),
                       HasSubstr("count:1'4 | X~~~~~~~ error: no match found in line 4")));
}

constexpr std::string_view kBlocks =
    "graph f:\n"
    "  %x = aten::relu(%a)\n"
    "  %y = aten::mm(%x, %b)\n"
    "graph g:\n"
    "  %z = aten::relu(%c)\n";

TEST(FileCheckTest, LabelsSplitTheInputIntoBlocks) {
  passes(kBlocks, "CHECK-LABEL: graph f:\nCHECK: aten::mm\nCHECK-LABEL: graph g:\nCHECK-NEXT: aten::relu");
  // Without the label, CHECK: aten::mm could not be confined to f's block.
  std::string m = fails(kBlocks, "CHECK-LABEL: graph g:\nCHECK: aten::mm\n");
  EXPECT_THAT(m, HasSubstr("<checks>:2:8: error: CHECK: expected string not found in input"));
  // A check in f may not match in g's block.
  m = fails(kBlocks, "CHECK-LABEL: graph f:\nCHECK: %z\nCHECK-LABEL: graph g:\nCHECK: %z");
  EXPECT_THAT(m, HasSubstr("<checks>:2:8: error: CHECK: expected string not found in input"));
  EXPECT_THAT(m, HasSubstr("X~~~~~~~~~~~~~~~~~~~~ error: no match found in lines 2-4"));
  EXPECT_THAT(m, Not(HasSubstr("<checks>:4:")));  // g's block was still checked, and passed
  // A failure in one block does not stop the next: both are reported.
  m = fails(kBlocks, "CHECK-LABEL: graph f:\nCHECK: nope1\nCHECK-LABEL: graph g:\nCHECK: nope2");
  EXPECT_THAT(m, AllOf(HasSubstr("<checks>:2:8: error:"), HasSubstr("<checks>:4:8: error:")));
  EXPECT_THAT(m, AllOf(HasSubstr("label:1 | ^~~~~~~~"), HasSubstr("label:3 | ^~~~~~~~")));
  // A missing label ends the check.
  m = fails(kBlocks, "CHECK-LABEL: graph h:\nCHECK: relu");
  EXPECT_THAT(m, HasSubstr("<checks>:1:14: error: CHECK-LABEL: expected string not found in input"));
}

TEST(FileCheckTest, RegexBlocks) {
  passes(kOps, "CHECK: aten::{{relu|gelu}}(t: f32[{{[0-9]+}}, 4])");
  passes(kOps, "CHECK: aten::{{(add|sub)}}.Tensor\nCHECK: {{^}}    aten::sum");
  passes("x{y}\nab\n", "CHECK: x{y}\nCHECK: {{a{1}}}b");  // single braces are literal; "{{a{1}}}" is a{1}
  EXPECT_THAT(fails(kOps, "CHECK: aten::{{ReLU|GELU}}"), HasSubstr("error: CHECK: expected string not found"));
  // `^` anchors at a line start only, not where the previous match ended.
  EXPECT_THAT(fails("ab\n", "CHECK: a\nCHECK-SAME: {{^}}b"), HasSubstr("error: CHECK-SAME: expected string"));
  // `$` anchors at the line end.
  passes("ab\nb\n", "CHECK: a\nCHECK-NEXT: {{^b$}}");
}

TEST(FileCheckTest, VariablesCaptureAndReuse) {
  const std::string graph =
      "%x = placeholder : f32[8, 8]\n"
      "%relu = aten::relu(%x) : f32[8, 8]\n"
      "%mm = aten::mm(%relu, %x) : f32[8, 8]\n"
      "%relu_1 = aten::relu(%mm) : f32[8, 8]\n";
  passes(graph,
         "CHECK: %[[IN:[a-z]+]] = placeholder\n"
         "CHECK: %[[R:[a-z_0-9]+]] = aten::relu(%[[IN]])\n"
         "CHECK: aten::mm(%[[R]], %[[IN]])");
  // Redefinition replaces the value.
  passes(graph, "CHECK: %[[V:[a-z]+]] = aten::relu\nCHECK: %[[V:[a-z]+]] = aten::mm\nCHECK: aten::relu(%[[V]])");
  // A use in the same pattern is a back reference.
  passes("t: f32[3, 3]\n", "CHECK: f32[[[N:[0-9]+]], [[N]]]");
  EXPECT_THAT(fails("t: f32[3, 4]\n", "CHECK: f32[[[N:[0-9]+]], [[N]]]"), HasSubstr("expected string not found"));
  // A wrong value shows in a note.
  const std::string m = fails(graph, "CHECK: %[[IN:[a-z]+]] = placeholder\nCHECK: aten::mm(%[[IN]],");
  EXPECT_THAT(m, HasSubstr("<checks>:2:8: note: with \"IN\" equal to \"x\"\n"));
  // Variables are global: a label does not clear them.
  passes(kBlocks,
         "CHECK-LABEL: graph f:\nCHECK: %[[X:[a-z]]] = aten::relu\nCHECK-LABEL: graph g:\nCHECK-NOT: %[[X]]");
}

TEST(FileCheckTest, UndefinedVariableAtMatchTime) {
  // The defining directive is in a block that failed before reaching it.
  const std::string m = fails(
      kBlocks, "CHECK-LABEL: graph f:\nCHECK: nope\nCHECK: %[[X:[a-z]]] = aten::mm\nCHECK-LABEL: graph g:\nCHECK: %[[X]]");
  EXPECT_THAT(m, HasSubstr("<checks>:5:8: error: CHECK: uses undefined variable 'X' (the directive that defines it "
                           "has not matched)"));
}

TEST(FileCheckTest, LineAndLiteralDirectives) {
  FileCheckOptions options;
  options.check_first_line = 10;
  passes("line 11\n", "\nCHECK: line [[@LINE]]", options);
  passes("line 12\n", "CHECK: line [[@LINE+2]]", options);
  passes("f([[1, 2]], {{x}})\n", "CHECK{LITERAL}: f([[1, 2]], {{x}})");
  passes("[[1, 2]]\n", "CHECK: {{\\[\\[}}1, 2]]");
}

TEST(FileCheckTest, WhitespaceIsCanonicalizedUnlessStrict) {
  passes(kOps, "CHECK: aten::relu(t: f32[4, 4]) -> t: f32[4, 4]");
  passes("a\t\t  b\r\nc\r\n", "CHECK:    a b   \nCHECK-NEXT: c");
  passes("a   b\n", "CHECK: {{a b}}");  // regex text is canonicalized too
  EXPECT_THAT(fails("ab\n", "CHECK: a b"), HasSubstr("expected string not found"));
  FileCheckOptions strict;
  strict.strict_whitespace = true;
  EXPECT_THAT(fails(kOps, "CHECK: aten::relu(t: f32[4, 4]) -> t", strict), HasSubstr("expected string not found"));
  passes(kOps, "CHECK: aten::relu(t: f32[4, 4])  ->  t", strict);
}

TEST(FileCheckTest, MatchFullLines) {
  FileCheckOptions options;
  options.match_full_lines = true;
  passes(kOps, "CHECK: aten::relu(t: f32[4, 4]) -> t: f32[4, 4]", options);
  EXPECT_THAT(fails(kOps, "CHECK: aten::relu(t: f32[4, 4])", options), HasSubstr("expected string not found"));
  passes(kOps, "CHECK: aten::relu{{.*}}\nCHECK-NOT: aten::relu", options);  // NOT is unaffected
}

TEST(FileCheckTest, ImplicitCheckNot) {
  FileCheckOptions options;
  options.implicit_check_not = {"aten::{{div|sub}}"};
  passes(kOps, "CHECK: aten::relu\nCHECK: aten::sum", options);
  const std::string m = fails("aten::relu\naten::sub\naten::sum\n", "CHECK: aten::relu\nCHECK: aten::sum", options);
  EXPECT_THAT(m, HasSubstr("implicit_check_not[0]:1:1: error: implicit-check-not: excluded string found in input"));
  EXPECT_THAT(m, HasSubstr("implicit-not:1 | !~~~~~~~~ error: excluded string found"));
  EXPECT_THAT(fails("aten::relu\naten::div\n", "CHECK: aten::relu", options), HasSubstr("excluded string found"));
}

TEST(FileCheckTest, LongInputsAreElided) {
  std::string input;
  for (int i = 1; i <= 60; ++i) input += "line " + std::to_string(i) + "\n";
  const std::string m = fails(input, "CHECK: line 20\nCHECK-NEXT: line 40");
  EXPECT_THAT(m, HasSubstr("\n    ...\n     15 | line 15\n"));
  EXPECT_THAT(m, HasSubstr("     25 | line 25\n    ...\n     35 | line 35\n"));
  EXPECT_THAT(m, HasSubstr("     45 | line 45\n    ...\n"));
  EXPECT_THAT(m, Not(HasSubstr("| line 14\n")));
  EXPECT_THAT(m, Not(HasSubstr("| line 26\n")));
}

TEST(FileCheckTest, TabsAndCarriageReturnsInTheDump) {
  const std::string m = fails("a\tfoo\r\nbar\r\n", "CHECK: foo\nCHECK-NEXT: baz");
  EXPECT_THAT(m, HasSubstr("      1 | a       foo\ncheck:1 |         ^~~\n"));
  EXPECT_THAT(m, HasSubstr("<input>:2:1: note: scanning from here"));
}

// A real DebugMode log: every op line is "    aten::op(args)  ->  out".
TEST(FileCheckTest, DebugModeDebugString) {
  DebugMode dm;
  {
    auto scope = dm.enter();
    Tensor x = ops::randn({8, 8});
    Tensor y = ops::randn({8, 8});
    ops::mm(ops::relu(x), y);
  }
  const std::string log = dm.debug_string();
  passes(log,
         "CHECK-COUNT-2: aten::randn([8, 8], device=cpu, pin_memory=False) -> t: f32[8, 8]\n"
         "CHECK-NEXT: aten::relu(t: f32[8, 8]) -> t: f32[8, 8]\n"
         "CHECK-NEXT: aten::mm(t: f32[[[N:[0-9]+]], [[N]]], t: f32[8, 8])\n"
         "CHECK-SAME: -> t: f32[8, 8]\n"
         "CHECK-NOT: aten::");
  const std::string m = fails(log, "CHECK: aten::relu(t: f32[8, 8])\nCHECK-NEXT: aten::mm(t: f32[8, 4]");
  EXPECT_THAT(m, HasSubstr("error: CHECK-NEXT: expected string not found in input"));
  EXPECT_THAT(m, HasSubstr("<input>:4:5: note: possible intended match here"));
  EXPECT_THAT(m, HasSubstr("      4 |     aten::mm(t: f32[8, 8], t: f32[8, 8])  ->  t: f32[8, 8]\n"
                           " next:2 |     ?~~~~~~~~~~~~~~~~~~~~ possible intended match\n"));
}

TEST(FileCheckTest, GraphText) {
  const std::string graph =
      "%arg0_1 = placeholder : f32[4, 5]\n"
      "%add = aten::add.Tensor(%arg0_1, %arg0_1, alpha=2) : f32[4, 5]\n"
      "%add_1 = aten::add.Tensor(%add, 1.0) : f32[4, 5]\n"
      "%cat = aten::cat([%add, %add_1], 1) : f32[4, 10]\n"
      "return (%cat)\n";
  // `[` and `]` alone are literal; `[[` opens a variable, `]]]` closes one then is literal.
  passes(graph,
         "CHECK: %[[A:add]] = aten::add.Tensor\n"
         "CHECK: %[[B:add_1]] = aten::add.Tensor(%[[A]], 1.0) : f32[4, 5]\n"
         "CHECK: aten::cat([%[[A]], %[[B]]], 1) : f32[4, 10]\n"
         "CHECK-NEXT: return (%cat)");
  passes(graph, "CHECK-LABEL: %cat =\nCHECK-SAME: aten::cat([%add, %add_1], 1)");
  EXPECT_THAT(fails(graph, "CHECK: aten::cat([%add_1, %add], 1)"), HasSubstr("<input>:4:8: note: possible intended"));
}

// ---- hostile patterns and input (issue 21.2, 21.3): RE2 and linear parsing ----

TEST(FileCheckHostile, PatternsThatBacktrackOrNestRunInLinearTime) {
  const std::string as(5000, 'a');
  // (a|aa)*b backtracks exponentially in std::regex; RE2 answers at once.
  EXPECT_THAT(fails(as, "CHECK: {{(a|aa)*b}}"), HasSubstr("expected string not found"));
  passes(as + "b", "CHECK: {{(a|aa)*b}}");
  // .* over a 30k-character line recursed once per character in std::regex.
  passes(std::string(30000, 'x') + " end", "CHECK: {{^.*end$}}");
  // Groups nested 30,000 deep overflowed std::regex's stack; RE2 parses them without recursion.
  passes("a", "CHECK: {{" + std::string(30000, '(') + "a" + std::string(30000, ')') + "}}");
  EXPECT_THAT(fails("a", "CHECK: {{" + std::string(30000, '(') + "a}}"),
              AllOf(HasSubstr("<checks>:1:"), HasSubstr("invalid regex"), HasSubstr("missing )")));
  // What RE2 does not have is named in the error.
  EXPECT_THAT(fails("ab", "CHECK: {{a(?=b)}}"), HasSubstr("no lookahead or lookbehind"));
}

TEST(FileCheckHostile, VariablesUsedInTheirOwnPatternMatchWithoutBackreferences) {
  // See Note [FileCheck backreferences]: each value the definition matches on the line is tried.
  passes("t: f32[12, 12]\n", "CHECK: f32[[[N:[0-9]+]], [[N]]]");
  EXPECT_THAT(fails("t: f32[12, 2]\n", "CHECK: f32[[[N:[0-9]+]], [[N]]]"), HasSubstr("expected string not found"));
  // The value may be a shorter match than the first one the line offers.
  passes("12x2\n", "CHECK: [[N:[0-9]+]]x[[N]]");
  // The earliest match on the line wins, and the definition takes its value.
  passes("7-7 and 5-5\nsaw 7\n", "CHECK: [[V:[0-9]]]-[[V]]\nCHECK: saw [[V]]");
  EXPECT_THAT(fails("5-5 then 7-7\nsaw 7\n", "CHECK: [[V:[0-9]]]-[[V]]\nCHECK: saw [[V]]"),
              HasSubstr("expected string not found"));
}

TEST(FileCheckHostile, AHugeHyphenatedCheckLineIsReadInLinearTime) {
  // scan_line upper-cased the rest of a token at every '-': a 160 KB line took
  // 26-84 s. A 2 MB one would take hours that way; the test ends in well under ctest's timeout.
  std::string line = "CHECK: aten::relu\n";
  for (int i = 0; i < 1000000; ++i) line += "x-";
  line += "x: not a directive\n";
  passes("aten::relu\n", line);
}

}  // namespace
}  // namespace opspec
