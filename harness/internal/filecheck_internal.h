// filecheck_internal.h: the pieces of file_check() shared by its parser
// (filecheck_parse.cc), matcher (filecheck.cc) and report (filecheck_report.cc).
// Not part of the public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "harness/filecheck.h"

namespace opspec::internal {

// cat / append: string concatenation of text and integers (absl::StrCat does
// not take std::string_view where absl has its own string_view).
inline void append_piece(std::string& out, std::string_view s) { out.append(s); }
template <typename T>
  requires std::is_integral_v<T>
void append_piece(std::string& out, T v) {
  out += std::to_string(v);
}
template <typename... A>
void append(std::string* out, const A&... a) {
  (append_piece(*out, a), ...);
}
template <typename... A>
std::string cat(const A&... a) {
  std::string out;
  append(&out, a...);
  return out;
}

// CanonicalText: text with "\r\n" read as "\n" and, unless strict, runs of
// spaces and tabs collapsed to one space; to_original maps each canonical
// offset (and the end) back to the original text.
struct CanonicalText {
  std::string text;
  std::vector<size_t> to_original;  // text.size() + 1 entries
};

// canonicalize: builds the CanonicalText of `s`.
CanonicalText canonicalize(std::string_view s, bool strict_whitespace);

// DirectiveKind: what a directive asks for; kEof is the implicit end-of-input
// match that carries trailing CHECK-NOTs and CHECK-DAGs.
enum class DirectiveKind : uint8_t { kCheck, kNext, kSame, kNot, kDag, kLabel, kEmpty, kCount, kEof };

// PatternPiece: literal text (canonical, unescaped), regex text, or a use of a
// variable (backref > 0 when defined earlier in the same pattern).
struct PatternPiece {
  enum class Kind : uint8_t { kLiteral, kRegex, kUse };
  Kind kind = Kind::kLiteral;
  std::string text;  // literal or regex text, or the variable name
  int backref = 0;
  std::string defines;  // a kRegex piece `(re)` that defines this variable
  int inner_groups = 0;  // capture groups inside such a piece's re
};

// Pattern: one parsed directive.
struct Pattern {
  DirectiveKind kind = DirectiveKind::kCheck;
  int count = 1;                 // CHECK-COUNT-n
  bool full_line = false;        // match_full_lines applies
  int implicit_index = 0;        // > 0: the n-th implicit_check_not pattern
  int line = 0;                  // reported line in check_name
  int column = 0;                // reported column of the pattern text
  std::string line_text;         // the directive's whole line, for quoting
  size_t caret = 0;              // byte index of the pattern text in line_text
  std::vector<PatternPiece> pieces;
  std::vector<std::pair<std::string, int>> defs;  // variable, capture group
  bool has_uses = false;         // uses of variables from earlier directives
  bool literal_only = false;     // pieces are literal text and uses only
};

// CheckString: a positive directive (or kEof) with the CHECK-DAG and
// CHECK-NOT directives written before it.
struct CheckString {
  Pattern pattern;
  std::vector<Pattern> dag_not;
};

// ParsedChecks: the directives in order, or the directive errors.
struct ParsedChecks {
  std::vector<CheckString> strings;
  std::vector<std::string> errors;  // each "name:line:col: error: ...\n<quote>\n"
};

// parse_checks: parses `checks` (see Note [FileCheck semantics]).
ParsedChecks parse_checks(std::string_view checks, const FileCheckOptions& options);

// directive_name: "CHECK-NEXT", "CHECK-COUNT-3", "implicit-check-not", ...
std::string directive_name(const Pattern& pattern, std::string_view prefix);

// directive_label: the dump's label: "next:3", "count:4'2", "implicit-not:1".
std::string directive_label(const Pattern& pattern, int match_index = 0);



// check_location: how messages name a position of the checks: "name:line:col",
// or for checks that are not name's text line for line (check_within) where
// their text starts, then "in the checks (what) at line:col". Names other
// than check_name (implicit_check_not[i]) are always "name:line:col".
std::string check_location(const FileCheckOptions& options, std::string_view name, int line, int column);
// quote_location: location + ": " + kind + ": " + message, then the quoted
// line and a caret under byte `caret` (tabs kept so the caret lines up).
std::string quote_location(std::string_view location, std::string_view kind, std::string_view message,
                           std::string_view line_text, size_t caret);

// Annotation: one marker in the dump, over canonical offsets [begin, end).
struct Annotation {
  size_t begin = 0;
  size_t end = 0;
  std::string label;  // directive_label()
  char marker = '^';  // '^' match, 'X' no match from here, '!' bad match, '?' fuzzy
  bool to_line_end = false;  // 'X': extend the marker to the end of the line
  std::string note;   // printed after the marker
};

// InputText: the input as matched (canonical) and as written, with line starts.
class InputText {
 public:
  InputText(std::string_view original, bool strict_whitespace);

  const std::string& text() const { return canonical_.text; }
  std::string_view original() const { return original_; }
  size_t to_original(size_t canonical_offset) const { return canonical_.to_original[canonical_offset]; }
  // line_of: 0-based line of an original offset.
  size_t line_of(size_t original_offset) const;
  size_t line_count() const { return line_starts_.size(); }
  // line: the original text of 0-based line `i`, without its line break.
  std::string_view line(size_t i) const;
  size_t line_start(size_t i) const { return line_starts_[i]; }
  // location: "name:line:col" of a canonical offset (1-based, byte column).
  std::string location(std::string_view name, size_t canonical_offset) const;

 private:
  std::string_view original_;
  CanonicalText canonical_;
  std::vector<size_t> line_starts_;  // original offsets
};

// fuzzy_match: the substring of one line in canonical [begin, end) closest
// to `needle` by edit distance, when close enough to suggest; {npos, 0}
// otherwise. Returns canonical {offset, length}.
std::pair<size_t, size_t> fuzzy_match(const InputText& input, size_t begin, size_t end, std::string_view needle);

// Note [FileCheck backreferences]
// RE2 has no backreferences (See Note [Regexes]), so a variable used in the
// pattern that defines it (`f32[[[N:[0-9]+]], [[N]]]`) is matched in two
// steps: the use is first read as another copy of the definition's regex (a
// superset, which finds the lines worth trying); then, on such a line, each
// value the definition's regex matches there (its match at each position)
// is tried in both places as literal text, and the earliest match wins.

// BackrefValues: variables defined and used in one pattern, each with the value to try.
using BackrefValues = std::vector<std::pair<std::string, std::string>>;

// regex_source: the RE2 regex of a pattern that is not literal_only;
// `value_of(name)` gives a used variable's value (nullptr: undefined, and
// the name is stored in *undefined). A use of a variable the pattern itself
// defines reads the definition's regex again, or with `forced` the variable's
// value in both places (See Note [FileCheck backreferences]).
std::string regex_source(const Pattern& pattern, const std::function<const std::string*(const std::string&)>& value_of,
                         bool strict_whitespace, std::string* undefined, const BackrefValues* forced = nullptr);

// backref_definitions: for each variable a pattern uses after defining it, the
// definition's regex (canonical, without its group).
std::vector<std::pair<std::string, std::string>> backref_definitions(const Pattern& pattern);

// render_dump: the annotated input under `title` (see Note [FileCheck
// failure message]).
std::string render_dump(const InputText& input, const std::vector<Annotation>& annotations, std::string_view title);

}  // namespace opspec::internal
