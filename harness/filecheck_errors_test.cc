// filecheck_errors_test.cc: errors in the directives themselves: each class
// is reported at check_name:line:col, and nothing is matched.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "harness/filecheck.h"

namespace opspec {
namespace filecheck_errors_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

// directive_error: the message of checks that must be rejected (the input
// would satisfy every well-formed directive, so only the error can fail).
std::string directive_error(std::string_view checks, const FileCheckOptions& options = {}) {
  const CheckResult r = file_check("foo\nbar\n", checks, options);
  EXPECT_FALSE(r.ok) << checks;
  EXPECT_THAT(r.message, Not(HasSubstr("Annotated input"))) << "directive errors match nothing";
  return r.message;
}

TEST(FileCheckErrorsTest, MisspelledSuffix) {
  EXPECT_EQ(directive_error("CHECK: foo\nCHECK-NXT: bar"),
            "<checks>:2:1: error: misspelled directive 'CHECK-NXT:' (did you mean 'CHECK-NEXT:'?); directives are "
            "CHECK:, CHECK-NEXT:, -SAME:, -NOT:, -DAG:, -LABEL:, -EMPTY: and -COUNT-<n>:\n"
            "CHECK-NXT: bar\n"
            "^\n");
  EXPECT_THAT(directive_error("// CHECK-next: foo"), StartsWith("<checks>:1:4: error: misspelled directive "
                                                                 "'CHECK-next:' (did you mean 'CHECK-NEXT:'?)"));
  EXPECT_THAT(directive_error("CHECK-NOT-NEXT: foo"), HasSubstr("<checks>:1:1: error: misspelled directive"));
  EXPECT_THAT(directive_error("CHECK_NEXT: foo"),
              HasSubstr("<checks>:1:1: error: misspelled directive 'CHECK_NEXT:' (did you mean 'CHECK-NEXT:'?)"));
}

TEST(FileCheckErrorsTest, NearMissesOfThePrefix) {
  EXPECT_THAT(directive_error("CHEK: foo"),
              StartsWith("<checks>:1:1: error: misspelled directive 'CHEK:' (did you mean 'CHECK:'?)"));
  EXPECT_THAT(directive_error("CHECK: foo\n  Check-Next: bar"),
              StartsWith("<checks>:2:3: error: misspelled directive 'Check-Next:' (did you mean 'CHECK-NEXT:'?)"));
  EXPECT_THAT(directive_error("# CHECKS: foo"), HasSubstr("<checks>:1:3: error: misspelled directive 'CHECKS:'"));
  EXPECT_THAT(directive_error("CHCEK-DAG: foo"), HasSubstr("(did you mean 'CHECK-DAG:'?)"));  // a swap
  EXPECT_THAT(directive_error("CHECK : foo"),
              StartsWith("<checks>:1:1: error: misspelled directive 'CHECK :': no space is allowed before ':'\n"));
  EXPECT_THAT(directive_error("CHECK-NEXT\t: foo"), HasSubstr("no space is allowed before ':'"));
  // Words that are not near the prefix, or a prefix inside a word, are comments.
  EXPECT_TRUE(file_check("foo\n", "Note: CHECKER: x, fooCHECK: y\nCHECK: foo").ok);
  EXPECT_TRUE(file_check("foo\n", "This tests CHECK-NEXT without a colon\nCHECK: foo").ok);
}

TEST(FileCheckErrorsTest, InvalidCount) {
  EXPECT_THAT(directive_error("CHECK-COUNT-x: foo"),
              StartsWith("<checks>:1:1: error: invalid count in 'CHECK-COUNT-x:': write CHECK-COUNT-<n>: with n a "
                         "positive integer\n"));
  EXPECT_THAT(directive_error("CHECK-COUNT-0: foo"), HasSubstr("invalid count in 'CHECK-COUNT-0:'"));
  EXPECT_THAT(directive_error("CHECK-COUNT: foo"), HasSubstr("invalid count in 'CHECK-COUNT:'"));
}

TEST(FileCheckErrorsTest, EmptyPatterns) {
  EXPECT_EQ(directive_error("CHECK: foo\nCHECK-NEXT:   "),
            "<checks>:2:15: error: CHECK-NEXT: has an empty pattern (to match an empty line use CHECK-EMPTY:)\n"
            "CHECK-NEXT:   \n"
            "              ^\n");
  EXPECT_THAT(directive_error("CHECK:"), HasSubstr("<checks>:1:7: error: CHECK: has an empty pattern"));
  EXPECT_THAT(directive_error("CHECK: foo\nCHECK-SAME:"), HasSubstr("<checks>:2:12: error: CHECK-SAME: has an empty"));
  EXPECT_THAT(directive_error("CHECK-NOT:"), HasSubstr("error: CHECK-NOT: has an empty pattern"));
  EXPECT_THAT(directive_error("CHECK: foo\nCHECK-EMPTY: bar"),
              HasSubstr("<checks>:2:14: error: CHECK-EMPTY: takes no pattern (it matches an empty line); found 'bar'"));
}

TEST(FileCheckErrorsTest, NextSameAndEmptyNeedAPreviousMatch) {
  EXPECT_THAT(directive_error("CHECK-NEXT: foo"),
              StartsWith("<checks>:1:1: error: found 'CHECK-NEXT:' without a previous 'CHECK:' directive to follow"));
  EXPECT_THAT(directive_error("CHECK-NOT: x\nCHECK-SAME: foo"), HasSubstr("<checks>:2:1: error: found 'CHECK-SAME:'"));
  EXPECT_THAT(directive_error("CHECK-EMPTY:"), HasSubstr("found 'CHECK-EMPTY:' without a previous"));
}

TEST(FileCheckErrorsTest, UnbalancedBlocks) {
  EXPECT_THAT(directive_error("CHECK: a{{b"),
              StartsWith("<checks>:1:9: error: unterminated regex: '{{' without a matching '}}'\n"
                         "CHECK: a{{b\n"
                         "        ^\n"));
  EXPECT_THAT(directive_error("CHECK: a[[X:b"),
              StartsWith("<checks>:1:9: error: unterminated variable: '[[' without a matching ']]'"));
  EXPECT_THAT(directive_error("CHECK: [[1, 2]]"),
              StartsWith("<checks>:1:10: error: invalid variable name '1, 2' in '[[...]]' (to match '[[' literally "
                         "write {{\\[\\[}} or use a {LITERAL} directive)"));
}

TEST(FileCheckErrorsTest, InvalidRegex) {
  EXPECT_THAT(directive_error("CHECK: foo{{(ab}}"), StartsWith("<checks>:1:13: error: invalid regex '(ab': "));
  EXPECT_THAT(directive_error("CHECK: [[X:(a]]"), StartsWith("<checks>:1:12: error: invalid regex '(a': "));
}

TEST(FileCheckErrorsTest, VariableErrors) {
  EXPECT_THAT(directive_error("CHECK: foo [[X]]"),
              StartsWith("<checks>:1:14: error: use of undefined variable 'X' (no earlier directive defines it)"));
  // A definition in a CHECK-NOT cannot be used later.
  EXPECT_THAT(directive_error("CHECK-NOT: [[X:z]]\nCHECK: [[X]]"), HasSubstr("<checks>:2:10: error: use of undefined"));
  EXPECT_THAT(directive_error("CHECK: [[X:foo]]\nCHECK-LABEL: [[X]]"),
              HasSubstr("<checks>:2:14: error: CHECK-LABEL: cannot define or use variables"));
  EXPECT_THAT(directive_error("CHECK: [[X:f]][[X:o]]"), HasSubstr("variable 'X' is defined twice in one pattern"));
  EXPECT_THAT(directive_error("CHECK: [[#N]]"), HasSubstr("<checks>:1:8: error: numeric substitution blocks"));
  EXPECT_THAT(directive_error("CHECK: [[@FILE]]"), HasSubstr("unknown pseudo variable '[[@FILE]]'"));
  EXPECT_THAT(directive_error("CHECK: [[9X:a]]"), HasSubstr("invalid variable name '9X'"));
}

TEST(FileCheckErrorsTest, NoDirectives) {
  EXPECT_EQ(directive_error("just a comment\n"), "<checks>: error: no check directives found (prefix CHECK)\n");
  EXPECT_EQ(directive_error(""), "<checks>: error: no check directives found (prefix CHECK)\n");
  FileCheckOptions options;
  options.check_prefix = "GRAPH";
  options.check_name = "case.yaml";
  EXPECT_EQ(directive_error("CHECK: foo", options), "case.yaml: error: no check directives found (prefix GRAPH)\n");
  EXPECT_TRUE(file_check("foo\n", "CHECK: nope\nGRAPH: foo", options).ok);
  options.check_prefix = "1bad";
  EXPECT_THAT(directive_error("CHECK: foo", options), HasSubstr("error: invalid check prefix '1bad'"));
}

TEST(FileCheckErrorsTest, LocationsHonourTheYamlOffsets) {
  FileCheckOptions options;
  options.check_name = "specs/ops.yaml";
  options.check_first_line = 12;
  options.check_column_offset = 8;
  EXPECT_THAT(directive_error("CHECK: foo\nCHECK-NXT: bar", options),
              StartsWith("specs/ops.yaml:13:9: error: misspelled directive 'CHECK-NXT:'"));
  const CheckResult r = file_check("foo\n", "CHECK: foo\nCHECK: bar", options);
  EXPECT_THAT(r.message, StartsWith("specs/ops.yaml:13:16: error: CHECK: expected string not found in input"));
}

// check_within: the checks are not the file's text line for line, so every
// position is the checks' own, after where their text starts.
TEST(FileCheckErrorsTest, ChecksWithTheirOwnPositionsNameWhereTheyStart) {
  FileCheckOptions options;
  options.check_name = "specs/ops.yaml";
  options.check_first_line = 12;
  options.check_column_offset = 14;
  options.check_within = "a double-quoted scalar";
  EXPECT_THAT(directive_error("CHECK: foo\nCHECK-NXT: bar", options),
              StartsWith("specs/ops.yaml:12:15: in the checks (a double-quoted scalar) at 2:1: error: misspelled "
                         "directive 'CHECK-NXT:'"));
  const CheckResult r = file_check("foo\n", "CHECK: [[X:fo+]]\nCHECK: [[X]]bar", options);
  EXPECT_THAT(r.message, StartsWith("specs/ops.yaml:12:15: in the checks (a double-quoted scalar) at 2:8: error: "
                                    "CHECK: expected string not found in input"));
  EXPECT_THAT(r.message, HasSubstr("specs/ops.yaml:12:15: in the checks (a double-quoted scalar) at 2:8: note: with "
                                   "\"X\" equal to \"foo\""));
  EXPECT_THAT(r.message, HasSubstr("(check:2 = the CHECK: on line 2 of the checks (a double-quoted scalar at "
                                   "specs/ops.yaml:12:15);"));
  // Implicit patterns keep their own names.
  options.implicit_check_not = {"{{"};
  EXPECT_THAT(directive_error("CHECK: foo", options), HasSubstr("implicit_check_not[0]:1:"));
}

TEST(FileCheckErrorsTest, AllErrorsAreReported) {
  const std::string m = directive_error("CHEK: a\nCHECK: b{{\nCHECK-NXT: c");
  EXPECT_THAT(m, HasSubstr("<checks>:1:1: error:"));
  EXPECT_THAT(m, HasSubstr("<checks>:2:9: error:"));
  EXPECT_THAT(m, HasSubstr("<checks>:3:1: error:"));
}

TEST(FileCheckErrorsTest, ImplicitCheckNotErrors) {
  FileCheckOptions options;
  options.implicit_check_not = {"a{{b"};
  EXPECT_THAT(directive_error("CHECK: foo", options), StartsWith("implicit_check_not[0]:1:2: error: unterminated regex"));
}

}  // namespace
}  // namespace opspec
