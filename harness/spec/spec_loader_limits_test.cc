// spec_loader_limits_test.cc: the loader's bounds on what a YAML file may
// make it build, aliases expanded (kMaxSpecYamlNodes, kMaxSpecYamlBytes):
// small files that once took gigabytes are errors at the alias that crosses
// the line, and the aliases real specs use still load. See Note [Hostile
// input] in yaml_reader.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/strings/str_cat.h"
#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace spec_loader_limits_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// file_error: the file-level error of loading yaml ("" when it loads).
std::string file_error(std::string_view yaml) {
  auto s = load_suite_string(yaml, "t.yaml");
  return s.ok() ? "" : std::string(s.status().message());
}

// The classic "billion laughs": each line names the one above ten times, so
// 10 lines of text are 10^10 nodes once expanded.
TEST(SpecLoaderLimits, AliasesOfAliasesStopAtTheAliasThatCrossesTheLine) {
  std::string text = "cases:\n  - name: c\n    program: return 1\n    description: &l0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i <= 9; ++i) {
    absl::StrAppend(&text, "    note", i, ": &l", i, " [");
    for (int j = 0; j < 10; ++j) absl::StrAppend(&text, j ? ", " : "", "*l", i - 1);
    text += "]\n";
  }
  // Level k holds (10^(k+2) - 1) / 9 nodes: 1,111,111 at level 5 (line 9),
  // whose ninth alias (column 17 + 8 * 5) passes 2^20 with the levels before.
  EXPECT_EQ(file_error(text),
            "t.yaml:9:57: error: this alias takes the file past 1048576 YAML nodes (kMaxSpecYamlNodes) once aliases "
            "are expanded: each alias counts all it names");
}

// One big text named by many cases: each case copies it (4 MB x 2,000 cases
// once took 24 GB and was killed).
TEST(SpecLoaderLimits, ABigScalarNamedByManyCasesIsRefused) {
  std::string text = absl::StrCat("x: &p \"", std::string(1 << 20, 'a'), "\"\ncases:\n");
  for (int i = 0; i < 100; ++i) absl::StrAppend(&text, "  - {name: c", i, ", program: *p}\n");
  // The file's own copy and 62 aliases, with the names beside them, fill all
  // but a few hundred bytes of 64 MiB; the 63rd alias (line 3 + 62) passes it.
  EXPECT_EQ(file_error(text),
            "t.yaml:65:26: error: this alias takes the file past 67108864 bytes of scalar text (kMaxSpecYamlBytes) "
            "once aliases are expanded: each alias counts all it names");
}

// Without aliases too: yaml-cpp takes ~480 bytes a node, so a 14 MB list of
// numbers took 3.4 GB.
TEST(SpecLoaderLimits, TooManyLiteralNodes) {
  std::string values;
  for (int64_t i = 0; i < kMaxSpecYamlNodes; ++i) values += "1,";
  const std::string text = absl::StrCat("cases:\n  - name: c\n    inputs: {x: {values: [", values, "1]}}\n");
  EXPECT_THAT(file_error(text), StartsWith("t.yaml:3:"));
  EXPECT_THAT(file_error(text), HasSubstr("the file holds more than 1048576 YAML nodes (kMaxSpecYamlNodes); values are "
                                          "written by hand: give a large input an init: instead"));
}

// What specs do with aliases, many times over, is far from the limits; and
// '*' in a program or a regex is not an alias.
TEST(SpecLoaderLimits, SharedInputsAndProgramsLoad) {
  std::string text =
      "cases:\n  - name: c0\n    inputs: &in {x: {shape: [2, 3]}, y: {shape: [3]}}\n"
      "    program: &prog |\n      return add(mul(x, 2), y)\n    expect: {ops: [aten::mul.Tensor, aten::add.Tensor]}\n";
  for (int i = 1; i < 2000; ++i) absl::StrAppend(&text, "  - {name: c", i, ", inputs: *in, program: *prog}\n");
  auto s = load_suite_string(text, "t.yaml");
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_EQ(s->cases.size(), 2000u);
  EXPECT_EQ(s->cases.back().inputs.size(), 2u);
  ASSERT_TRUE(s->cases.back().program.has_value()) << s->cases.back().load_error.value_or("");
  EXPECT_EQ(s->cases.back().program->source(), "return add(mul(x, 2), y)\n");
  EXPECT_EQ(file_error("cases:\n  - name: c\n    description: 2 *x is no alias\n    program: return 2\n"
                       "    expect: {error: 'a.*b'}\n"), "");
}

}  // namespace spec_loader_limits_test
}  // namespace opspec::spec
