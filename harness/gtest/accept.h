// accept.h: accept mode for golden-text assertions (EXPECT_DEBUG_STRING):
// with OPSPEC_ACCEPT=1, a failing golden comparison rewrites the golden string
// literal in the test's source file instead of failing, as PyTorch's
// expecttest does with EXPECTTEST_ACCEPT=1. See Note [Accepting golden text].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace opspec {

// Note [Accepting golden text]
// The macro passes __FILE__ and __LINE__. GCC reports the line of the macro
// name, Clang the line of the closing parenthesis, so the call is the first
// call of a golden macro (golden_macro_names()) that starts or ends at that
// line; failing that, the outermost call starting or ending there whose last
// argument is a string literal (a user's own wrapper macro). Its last
// argument, one or more string literals (plain "..." concatenated, raw
// R"d(...)d", across lines, any prefix), is replaced by one raw literal
// holding the new text (make_raw_literal); every other byte of the file is
// kept. The file is rewritten through a temporary and a rename; the first
// rewrite of a file in this process first copies it to FILE.orig. Rewrites
// change line counts, while __LINE__ stays what the binary was compiled with,
// so each rewrite records (line, lines added) per file and later lines are
// shifted by the edits above them (expecttest's EditHistory). Never on CI:
// with the CI environment variable set, nothing is rewritten.

// accept_requested: the OPSPEC_ACCEPT environment variable is set to
// something other than "" or "0".
bool accept_requested();

// running_on_ci: the CI environment variable is set (to anything non-empty).
bool running_on_ci();

// accept_mode: accept_requested() and not running_on_ci().
bool accept_mode();

// golden_macro_names: the macros whose golden literal accept mode rewrites:
// EXPECT_DEBUG_STRING, ASSERT_DEBUG_STRING and their _WITH forms.
const std::vector<std::string>& golden_macro_names();

// golden_text: the text a golden literal stands for: its value with one
// leading newline dropped, so a raw literal may open at the end of a line:
//   EXPECT_DEBUG_STRING(f(), R"(
//       aten::relu(t: f32[2])  ->  t: f32[2])");
std::string_view golden_text(std::string_view literal_value);

// make_raw_literal: a raw string literal whose golden_text() is text:
// R"(text)" for one line, R"(\ntext)" (opening at the end of the line) for
// several; a delimiter (R"golden(...)golden", ...) when text contains `)"`.
std::string make_raw_literal(std::string_view text);

// rewrite_golden_literal: in file, replaces the last argument of the golden
// macro call at line (as __LINE__ reported it; see Note [Accepting golden
// text]) with make_raw_literal(new_text). Errors: CI is set
// (FailedPrecondition), the file can't be read or written, no such call at
// that line, or its last argument is not a string literal (NotFound /
// InvalidArgument, naming file:line).
absl::Status rewrite_golden_literal(const std::string& file, int line, std::string_view new_text);

// resolve_source_path: where the source file named file (a __FILE__) is:
// file itself when absolute or found from the working directory; else,
// because build tools compile with relative paths from the build directory
// while tests may run elsewhere, file relative to the test executable's
// directory or one of its four nearest ancestors; else file unchanged.
std::string resolve_source_path(const std::string& file);

// adjusted_line: where line of file (as compiled) is now, after this
// process's rewrites of that file.
int adjusted_line(const std::string& file, int line);

// reset_golden_edit_history: forgets all rewrites (tests; the next rewrite of
// a file writes a new .orig backup).
void reset_golden_edit_history();

}  // namespace opspec
