// filecheck.h: file_check(), LLVM FileCheck-style matching of debug strings
// and graph text against CHECK directives, with LLVM's semantics and an
// annotated dump of the input on failure. See Note [FileCheck semantics] and
// Note [FileCheck failure message].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "harness/check_result.h"

namespace opspec {

// Note [FileCheck semantics]
// Directives (PREFIX is FileCheckOptions::check_prefix, "CHECK" by default)
// may sit anywhere in a line ("# CHECK: x", "// CHECK: x"), but the prefix
// must start a word. The pattern is the rest of the line, trimmed. Lines
// without a directive are comments.
//   PREFIX:            match, anywhere after the previous match
//   PREFIX-NEXT:       match on the line right after the previous match
//   PREFIX-SAME:       match on the same line as the previous match
//   PREFIX-EMPTY:      the next line is empty (no pattern)
//   PREFIX-NOT:        must not occur between the surrounding matches
//   PREFIX-DAG:        consecutive DAGs match in any order (not overlapping)
//   PREFIX-COUNT-<n>:  match n times in a row (n > 0)
//   PREFIX-LABEL:      found first, in order; splits the input into blocks,
//                      each checked on its own (a failure in one block does
//                      not stop the next)
//   PREFIX{LITERAL}:   (with any suffix but -EMPTY) the pattern is plain text,
//                      with no {{ }} or [[ ]]
// Pattern text is literal, except `{{regex}}` (RE2, See Note [Regexes]) and
// `[[VAR:regex]]` (capture into VAR) / `[[VAR]]` (the captured text) /
// `[[@LINE]]`, `[[@LINE+n]]`, `[[@LINE-n]]` (the directive's line number).
// Single `[ ] { }` are literal: "f32[4, 4]" and "{'hash': 1}" need no
// escaping; write a literal "[[" as {{\[\[}} or use PREFIX{LITERAL}:. In a
// run of three or more '[' only the last two open a block, so
// "f32[[[N]], 4]" is "f32[" then [[N]] (LLVM rejects it as a bad name).
// Variables are global, as LLVM's are by default (no --enable-var-scope): a
// CHECK-LABEL does not clear them; a later definition replaces the value.
// Labels may not use or define variables; a definition inside a CHECK-NOT is
// only usable inside that same pattern. Using a variable that no earlier
// directive defines is a directive error.
// Unlike LLVM, a match never spans lines (inputs are line-oriented), and `^`
// matches only at a line start. A variable used in the pattern that defines
// it is matched without backreferences (See Note [FileCheck backreferences]).
// Whitespace: unless strict_whitespace, runs of spaces and tabs in the input
// and in patterns are canonicalized to one space (as LLVM does), so
// "t: f32[4]  ->  t" is matched by "t: f32[4] -> t"; "\r\n" reads as "\n".
// A trailing newline ends the last line; it does not start an empty one.
//
// Directive errors (reported as check_name:line:col, nothing is matched):
// a misspelled directive ("CHECK-NXT:", "CHEK:", "Check:", "CHECKS:",
// "CHECK :", "CHECK_NEXT:", "CHECK-COUNT-x:"), an empty pattern (only
// CHECK-EMPTY may have none), a pattern after CHECK-EMPTY, CHECK-NEXT/-SAME/
// -EMPTY before any positive directive, an unterminated {{ or [[, an invalid
// regex or variable name, numeric [[#...]] blocks (unsupported), variables
// in a CHECK-LABEL, and a text with no directives at all. A near miss is a
// "word:" (or "word-SUFFIX:") whose word equals the prefix ignoring case or
// (for prefixes of 4+ characters) is one edit from it: an insertion,
// deletion, substitution or swap of adjacent characters.

// Note [FileCheck failure message]
// One error per failing directive (a failure ends its CHECK-LABEL block),
// quoted from the check text with a caret, then notes locating things in the
// input, then the input annotated like LLVM's -dump-input. For the checks
// "# the op sequence\nCHECK: aten::relu\nCHECK-NEXT: aten::add\n
// CHECK-NEXT: aten::mul.Tensor" over a DebugMode log:
//
//   <checks>:4:13: error: CHECK-NEXT: expected string not found in input
//   CHECK-NEXT: aten::mul.Tensor
//               ^
//   <input>:2:14: note: scanning from here
//   <input>:3:5: note: possible intended match here
//
//   Annotated input <input> (next:4 = the CHECK-NEXT: on line 4 of <checks>; ^ match, X no match from here, ...):
//         1 |     aten::relu(t: f32[4, 4])  ->  t: f32[4, 4]
//   check:2 |     ^~~~~~~~~~
//         2 |     aten::add.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]
//    next:3 |     ^~~~~~~~~
//    next:4 |              X~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~ error: no match found in lines 2-3
//         3 |     aten::mu.Tensor(t: f32[4, 4], t: f32[4, 4])  ->  t: f32[4, 4]
//    next:4 |     ?~~~~~~~~~~~~~~ possible intended match
//
// Labels name the directive kind in lower case and its line in check_name
// (count:4'2 is the second match of a CHECK-COUNT on line 4); markers: ^~~
// a match, X~~ where scanning started for a pattern not found (to the end
// of that line; the note gives the lines searched), !~~ a bad match (a
// CHECK-NOT that matched, a CHECK-NEXT/-SAME/-EMPTY on the wrong line), ?~~
// the most similar text for a pattern not found. Columns are display
// columns (tabs expand to 8). Inputs over 20 lines show only the 5 lines
// around each annotated line, eliding the rest with "...".
// The other errors read "CHECK-NEXT: is not on the line after the previous
// match" / "is on the same line as the previous match", "CHECK-SAME: is not
// on the same line as the previous match", "CHECK-NOT: excluded string found
// in input" (with notes "found here", "the match is here", "the previous
// match ended here"); a pattern using variables adds notes such as
// `<checks>:3:8: note: with "X" equal to "relu"`.

// FileCheckOptions: what file_check() matches and how it names things.
struct FileCheckOptions {
  std::string check_prefix = "CHECK";  // [A-Za-z][A-Za-z0-9_-]*
  std::string input_name = "<input>";  // names the input in messages
  std::string check_name = "<checks>"; // names the directives' file in messages
  int check_first_line = 1;            // line of the checks' first line in check_name
  int check_column_offset = 0;         // added to reported directive columns (YAML indentation)
  // check_within: set when the checks are not check_name's text line for line
  // (a quoted or folded YAML scalar: escapes and folding move positions), to
  // what they are ("a double-quoted scalar"). Positions are then the checks'
  // own, after where their text starts (check_first_line and
  // check_column_offset + 1): "a.yaml:16:15: in the checks (a double-quoted
  // scalar) at 2:3: error: ...".
  std::string check_within;
  bool match_full_lines = false;       // positive matches must cover a whole line (leading and
                                       // trailing whitespace aside unless strict_whitespace)
  bool strict_whitespace = false;      // no whitespace canonicalization
  // Patterns (with the usual {{ }} and [[ ]] syntax) that must not occur
  // between any two positive matches, nor before the first or after the
  // last: LLVM's --implicit-check-not.
  std::vector<std::string> implicit_check_not;
};

// file_check: matches `input` against the directives in `checks`. Passes when
// every directive is satisfied; otherwise fails with the message described in
// Note [FileCheck failure message], or with the directive errors alone when
// the checks themselves are malformed. Never throws.
CheckResult file_check(std::string_view input, std::string_view checks, const FileCheckOptions& options = {});

}  // namespace opspec
