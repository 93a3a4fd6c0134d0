// spec_loader_positions_test.cc: where a program's errors point in its YAML
// file, for every way a scalar can hold the program: exact where the text is
// the file's, else the text's start and the program's own line:col. See
// Note [Program positions] in yaml_reader.cc.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/spec/spec_loader.h"

namespace opspec::spec {
namespace spec_loader_positions_test {

using ::testing::StartsWith;

// program_error: the load error of the one case whose program is `program:`
// followed by the given text (the key at line 4, column 5).
std::string program_error(std::string_view program) {
  const std::string yaml = str_cat("cases:\n  - name: c\n    inputs: {x: {shape: [2]}}\n    program: ", program, "\n");
  auto s = load_suite_string(yaml, "t.yaml");
  EXPECT_TRUE(s.ok()) << s.status();
  if (!s.ok() || s->cases.size() != 1) return "(no case)";
  return s->cases[0].load_error.value_or("(no load error)");
}

TEST(SpecLoaderPositions, TextThatIsTheFilesIsMappedExactly) {
  EXPECT_THAT(program_error("|\n      y = add(x, 1)\n      return frob(y)"), StartsWith("t.yaml:6:14: unknown op 'frob'"));
  EXPECT_THAT(program_error("|-\n      return frob(x)"), StartsWith("t.yaml:5:14: unknown op 'frob'"));
  EXPECT_THAT(program_error("return frob(x)"), StartsWith("t.yaml:4:21: unknown op 'frob'"));
  EXPECT_THAT(program_error("\"return frob(x)\""), StartsWith("t.yaml:4:22: unknown op 'frob'"));
  EXPECT_THAT(program_error("'return frob(x)'"), StartsWith("t.yaml:4:22: unknown op 'frob'"));
  EXPECT_THAT(program_error(">\n      return frob(x)"), StartsWith("t.yaml:5:14: unknown op 'frob'"));
}

// Escapes and folded lines moved positions: `"y = 1\nreturn frob(y)"` put
// frob at line 4 (not the file's line of it) and past the end of the line.
TEST(SpecLoaderPositions, EscapedOrFoldedTextNamesItsStartAndTheProgramsPosition) {
  EXPECT_THAT(program_error("\"y = add(x, 1)\\nreturn frob(y)\\n\""),
              StartsWith("t.yaml:4:15: in the program (a double-quoted scalar) at 2:8: unknown op 'frob'"));
  EXPECT_THAT(program_error("\"y = add(x, 1)\n\n      return frob(y)\""),
              StartsWith("t.yaml:4:15: in the program (a double-quoted scalar) at 2:8: unknown op 'frob'"));
  EXPECT_THAT(program_error("\"\\treturn frob(x)\""),
              StartsWith("t.yaml:4:15: in the program (a double-quoted scalar) at 1:9: unknown op 'frob'"));
  EXPECT_THAT(program_error("'return frob(x, ''a'')'"),
              StartsWith("t.yaml:4:15: in the program (a single-quoted scalar) at 1:8: unknown op 'frob'"));
  EXPECT_THAT(program_error(">\n      y = add(x, 1)\n\n      return frob(y)"),
              StartsWith("t.yaml:5:7: in the program (a folded scalar) at 2:8: unknown op 'frob'"));
  EXPECT_THAT(program_error("y = add(x, 1)\n      z = frob(y)"),
              StartsWith("t.yaml:4:14: in the program (a plain scalar on several lines) at 1:15: expected end of line"));
}

}  // namespace spec_loader_positions_test
}  // namespace opspec::spec
