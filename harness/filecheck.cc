// filecheck.cc: file_check(): matching parsed directives against the input
// in LLVM FileCheck's order (labels first, then each block; DAG groups with
// the NOTs between them; NOTs checked over the skipped region), recording
// where each directive matched for the annotated dump.
#include "harness/filecheck.h"

#include <algorithm>
#include <exception>
#include <list>
#include <map>
#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "harness/internal/filecheck_internal.h"

namespace opspec {
namespace internal {
namespace {

constexpr size_t kNpos = std::string::npos;

// Found: where a pattern matched, or why it could not be searched.
struct Found {
  bool ok = false;
  size_t pos = 0;
  size_t len = 0;
  std::string undefined;     // a used variable without a value
  std::string engine_error;  // std::regex gave up (complexity, stack)
};

class Matcher {
 public:
  Matcher(const InputText& input, const FileCheckOptions& options) : in_(input), options_(options) {}

  // run: true when every directive is satisfied.
  bool run(const std::vector<CheckString>& strings);
  // message: the errors and the annotated input (after run() returned false).
  std::string message() const;

 private:
  size_t check_string(const CheckString& cs, size_t begin, size_t end, bool label_scan, size_t* match_len);
  size_t check_dag(const CheckString& cs, size_t begin, size_t end, std::vector<const Pattern*>* nots);
  bool check_not(size_t begin, size_t end, const std::vector<const Pattern*>& nots);  // true: failed
  Found match(const Pattern& p, size_t begin, size_t end, bool define);
  Found search(const std::regex& re, const Pattern& p, size_t begin, size_t end, bool define);

  // Reporting.
  std::string check_file(const Pattern& p) const;  // check_name, or the implicit pattern's name
  void error(const Pattern& p, std::string_view message);
  void note(size_t pos, std::string_view text) { errors_ += cat(in_.location(options_.input_name, pos), ": note: ", text, "\n"); }
  void not_found(const Pattern& p, size_t begin, size_t end, const Found& f, int match_index);
  void variable_notes(const Pattern& p);
  void annotate(size_t begin, size_t end, std::string label, char marker, std::string note_text = "") {
    annotations_.push_back({begin, end, std::move(label), marker, false, std::move(note_text)});
  }
  // scan_start: where scanning from `pos` visibly starts: at the next line
  // when `pos` is the line break ending a previous match's line.
  size_t scan_start(size_t pos) const {
    const std::string& t = in_.text();
    return pos < t.size() && t[pos] == '\n' && pos + 1 < t.size() ? pos + 1 : pos;
  }
  const std::string* value_of(const std::string& name) const {
    const auto it = vars_.find(name);
    return it == vars_.end() ? nullptr : &it->second;
  }

  const InputText& in_;
  const FileCheckOptions& options_;
  absl::flat_hash_map<std::string, std::string> vars_;  // all global, as in LLVM without --enable-var-scope
  std::map<const Pattern*, std::regex> cache_;          // regexes of patterns that use no variables
  std::vector<Annotation> annotations_;
  std::string errors_;
  const Pattern* first_failure_ = nullptr;
};

bool Matcher::run(const std::vector<CheckString>& strings) {
  // As LLVM: find the next CHECK-LABEL first, then check everything before
  // it (the label included, again) within the block it ends.
  bool failed = false;
  size_t i = 0, j = 0, buffer = 0;
  const size_t e = strings.size(), size = in_.text().size();
  while (true) {
    size_t region_begin = buffer, region_end = size;
    if (j != e) {
      if (strings[j].pattern.kind != DirectiveKind::kLabel) {
        ++j;
        continue;
      }
      size_t len = 0;
      const size_t pos = check_string(strings[j], buffer, size, /*label_scan=*/true, &len);
      if (pos == kNpos) {
        failed = true;
        break;
      }
      region_end = buffer = pos + len;
      ++j;
    }
    for (; i != j; ++i) {
      size_t len = 0;
      const size_t pos = check_string(strings[i], region_begin, region_end, /*label_scan=*/false, &len);
      if (pos == kNpos) {  // the rest of this block is skipped; the next block is checked
        failed = true;
        i = j;
        break;
      }
      region_begin = pos + len;
    }
    if (j == e) break;
  }
  return !failed;
}

size_t Matcher::check_string(const CheckString& cs, size_t begin, size_t end, bool label_scan, size_t* match_len) {
  const Pattern& p = cs.pattern;
  size_t last = begin;
  std::vector<const Pattern*> nots;
  if (!label_scan) {  // labels are found before their block's DAGs and NOTs can be checked
    last = check_dag(cs, begin, end, &nots);
    if (last == kNpos) return kNpos;
  }
  std::vector<std::pair<size_t, size_t>> matches;
  size_t last_end = last;
  if (p.kind == DirectiveKind::kEof) {
    matches.emplace_back(end, 0);
    last_end = end;
  }
  for (int n = 1; p.kind != DirectiveKind::kEof && n <= p.count; ++n) {
    const Found f = match(p, last_end, end, /*define=*/true);
    if (!f.ok) {
      for (size_t k = 0; k < matches.size(); ++k) {
        annotate(matches[k].first, matches[k].first + matches[k].second, directive_label(p, static_cast<int>(k) + 1), '^');
      }
      not_found(p, last_end, end, f, n);
      return kNpos;
    }
    matches.emplace_back(f.pos, f.len);
    last_end = f.pos + f.len;
  }
  const size_t first = matches.front().first;
  *match_len = last_end - first;
  char marker = '^';
  std::string problem;
  const std::string& t = in_.text();
  if (!label_scan) {
    const size_t newlines = std::count(t.begin() + last, t.begin() + first, '\n');
    if ((p.kind == DirectiveKind::kNext || p.kind == DirectiveKind::kEmpty) && newlines != 1) {
      problem = newlines == 0 ? "is on the same line as the previous match"
                              : "is not on the line after the previous match";
    } else if (p.kind == DirectiveKind::kSame && newlines != 0) {
      problem = "is not on the same line as the previous match";
    }
    if (!problem.empty()) marker = '!';
  }
  // A label is annotated when found; its second match (in its block) is the same.
  if (p.kind != DirectiveKind::kEof && (label_scan || p.kind != DirectiveKind::kLabel || marker == '!')) {
    for (size_t k = 0; k < matches.size(); ++k) {
      annotate(matches[k].first, matches[k].first + matches[k].second, directive_label(p, static_cast<int>(k) + 1),
               marker, marker == '!' ? "error: match on the wrong line" : "");
    }
  }
  if (!problem.empty()) {
    error(p, problem);
    note(scan_start(first), "the match is here");
    note(last, "the previous match ended here");
    return kNpos;
  }
  if (!label_scan && check_not(last, first, nots)) return kNpos;
  return first;
}

size_t Matcher::check_dag(const CheckString& cs, size_t begin, size_t end, std::vector<const Pattern*>* nots) {
  size_t start = begin;  // where the current DAG group's search starts
  std::list<std::pair<size_t, size_t>> ranges;  // sorted, non-overlapping matches of this group
  for (size_t k = 0; k < cs.dag_not.size(); ++k) {
    const Pattern& p = cs.dag_not[k];
    if (p.kind == DirectiveKind::kNot) {
      nots->push_back(&p);
      continue;
    }
    size_t pos = start;
    auto it = ranges.begin();
    std::pair<size_t, size_t> m;
    while (true) {  // the first match that overlaps no earlier match of the group
      const Found f = match(p, pos, end, /*define=*/true);
      if (!f.ok) {
        not_found(p, start, end, f, 1);
        return kNpos;
      }
      m = {f.pos, f.pos + f.len};
      while (it != ranges.end() && it->second <= m.first) ++it;
      if (it == ranges.end() || m.second <= it->first) {
        ranges.insert(it, m);
        break;
      }
      pos = it->second;
    }
    annotate(m.first, m.second, directive_label(p), '^');
    const bool group_ends = k + 1 == cs.dag_not.size() || cs.dag_not[k + 1].kind == DirectiveKind::kNot;
    if (group_ends) {
      if (!nots->empty()) {
        if (check_not(start, ranges.front().first, *nots)) return kNpos;
        nots->clear();
      }
      start = std::max(start, ranges.back().second);
      ranges.clear();
    }
  }
  return start;
}

bool Matcher::check_not(size_t begin, size_t end, const std::vector<const Pattern*>& nots) {
  bool failed = false;
  for (const Pattern* p : nots) {
    const Found f = match(*p, begin, end, /*define=*/false);
    if (f.ok) {
      annotate(f.pos, f.pos + f.len, directive_label(*p), '!', "error: excluded string found");
      error(*p, "excluded string found in input");
      note(f.pos, "found here");
      variable_notes(*p);
      failed = true;
    } else if (!f.undefined.empty() || !f.engine_error.empty()) {
      not_found(*p, begin, end, f, 1);
      failed = true;
    }
  }
  return failed;
}

Found Matcher::match(const Pattern& p, size_t begin, size_t end, bool define) {
  const std::string& t = in_.text();
  Found f;
  if (p.kind == DirectiveKind::kEmpty) {  // a line break ending the previous line, then an empty line
    for (size_t q = t.find('\n', begin); q != kNpos && q + 1 < end; q = t.find('\n', q + 1)) {
      if (t[q + 1] == '\n') {
        f.ok = true;
        f.pos = q + 1;
        return f;
      }
    }
    return f;
  }
  if (p.literal_only) {
    std::string needle;
    for (const PatternPiece& piece : p.pieces) {
      if (piece.kind == PatternPiece::Kind::kLiteral) {
        needle += piece.text;
      } else if (const std::string* value = value_of(piece.text)) {
        needle += *value;
      } else {
        f.undefined = piece.text;
        return f;
      }
    }
    const size_t pos = begin <= t.size() ? t.find(needle, begin) : kNpos;
    if (pos != kNpos && pos + needle.size() <= end) {
      f.ok = true;
      f.pos = pos;
      f.len = needle.size();
    }
    return f;
  }
  if (!p.has_uses) {
    auto it = cache_.find(&p);
    if (it == cache_.end()) {
      std::string unused;
      it = cache_.emplace(&p, std::regex(regex_source(p, [](const std::string&) { return nullptr; },
                                                      options_.strict_whitespace, &unused),
                                         std::regex::ECMAScript)).first;
    }
    return search(it->second, p, begin, end, define);
  }
  const std::string source = regex_source(
      p, [this](const std::string& name) { return value_of(name); }, options_.strict_whitespace, &f.undefined);
  if (!f.undefined.empty()) return f;
  return search(std::regex(source, std::regex::ECMAScript), p, begin, end, define);
}

Found Matcher::search(const std::regex& re, const Pattern& p, size_t begin, size_t end, bool define) {
  // One line at a time: a match never spans lines, and std::regex (which
  // recurses per character) only ever sees one line.
  const std::string& t = in_.text();
  const char* base = t.data();
  Found f;
  for (size_t s = std::min(begin, end);;) {
    size_t eol = t.find('\n', s);
    if (eol == kNpos) eol = t.size();
    const size_t e = std::min(eol, end);
    auto flags = std::regex_constants::match_default;
    if (s > 0 && t[s - 1] != '\n') flags |= std::regex_constants::match_prev_avail | std::regex_constants::match_not_bol;
    if (e < eol) flags |= std::regex_constants::match_not_eol;
    std::cmatch m;
    try {
      if (std::regex_search(base + s, base + e, m, re, flags)) {
        f.ok = true;
        f.pos = s + static_cast<size_t>(m.position(0));
        f.len = static_cast<size_t>(m.length(0));
        if (define) {
          for (const auto& [name, group] : p.defs) vars_[name] = m[group].str();
        }
        return f;
      }
    } catch (const std::regex_error& ex) {
      f.engine_error = ex.what();
      return f;
    }
    if (eol >= t.size() || eol + 1 >= end) return f;
    s = eol + 1;
  }
}

std::string Matcher::check_file(const Pattern& p) const {
  return p.implicit_index ? cat("implicit_check_not[", p.implicit_index - 1, "]") : options_.check_name;
}

void Matcher::error(const Pattern& p, std::string_view message) {
  if (first_failure_ == nullptr) first_failure_ = &p;
  errors_ += quote_location(check_file(p), p.line, p.column, "error",
                            cat(directive_name(p, options_.check_prefix), ": ", message), p.line_text,
                            p.caret);
}

void Matcher::variable_notes(const Pattern& p) {
  for (const PatternPiece& piece : p.pieces) {
    if (piece.kind != PatternPiece::Kind::kUse || piece.backref) continue;
    const std::string* value = value_of(piece.text);
    const std::string where = cat(check_file(p), ":", p.line, ":", p.column, ": note: ");
    errors_ += value ? cat(where, "with \"", piece.text, "\" equal to \"", *value, "\"\n")
                     : cat(where, "\"", piece.text, "\" is undefined\n");
  }
}

void Matcher::not_found(const Pattern& p, size_t begin, size_t end, const Found& f, int match_index) {
  std::string message;
  if (!f.undefined.empty()) {
    message = cat("uses undefined variable '", f.undefined,
                           "' (the directive that defines it has not matched)");
  } else if (!f.engine_error.empty()) {
    message = cat("the regex engine gave up: ", f.engine_error);
  } else {
    message = "expected string not found in input";
    if (p.count > 1) append(&message, " (", match_index - 1, " of ", p.count, " matches found)");
  }
  error(p, message);
  const size_t s = scan_start(begin);
  note(s, "scanning from here");
  variable_notes(p);
  const size_t last = end > s ? end - 1 : s;
  const size_t first_line = in_.line_of(in_.to_original(s)) + 1;
  const size_t last_line = in_.line_of(in_.to_original(std::min(last, in_.text().size()))) + 1;
  Annotation a{s, s, directive_label(p, match_index), 'X', true,
               first_line == last_line ? cat("error: no match found in line ", first_line)
                                       : cat("error: no match found in lines ", first_line, "-", last_line)};
  annotations_.push_back(std::move(a));
  if (!f.undefined.empty() || p.kind == DirectiveKind::kEmpty) return;
  std::string needle;  // the pattern's literal text, for the most similar line
  for (const PatternPiece& piece : p.pieces) {
    if (piece.kind == PatternPiece::Kind::kLiteral) {
      needle += piece.text;
    } else if (piece.kind == PatternPiece::Kind::kUse && !piece.backref) {
      if (const std::string* value = value_of(piece.text)) needle += *value;
    }
  }
  const auto [pos, len] = fuzzy_match(in_, s, end, needle);
  if (pos == kNpos) return;
  note(pos, "possible intended match here");
  annotate(pos, pos + len, directive_label(p, match_index), '?', "possible intended match");
}

std::string Matcher::message() const {
  std::string out = errors_;
  if (annotations_.empty()) return out;
  std::string legend;
  if (first_failure_ != nullptr) {
    const Pattern& p = *first_failure_;
    legend = p.implicit_index
                 ? cat(directive_label(p, 1), " = implicit_check_not[", p.implicit_index - 1, "]")
                 : cat(directive_label(p, 1), " = the ", directive_name(p, options_.check_prefix),
                                ": on line ", p.line, " of ", options_.check_name);
  }
  out += render_dump(in_, annotations_,
                     cat("\nAnnotated input ", options_.input_name, " (", legend,
                         "; ^ match, X no match from here, ! bad match, ? possible intended match):\n"));
  return out;
}

}  // namespace
}  // namespace internal

CheckResult file_check(std::string_view input, std::string_view checks, const FileCheckOptions& options) {
  try {
    internal::ParsedChecks parsed = internal::parse_checks(checks, options);
    if (!parsed.errors.empty()) {
      std::string message;
      for (const std::string& e : parsed.errors) message += e;
      return CheckResult::fail(std::move(message));
    }
    const internal::InputText text(input, options.strict_whitespace);
    internal::Matcher matcher(text, options);
    if (matcher.run(parsed.strings)) return CheckResult::pass();
    return CheckResult::fail(matcher.message());
  } catch (const std::exception& e) {  // std::regex or allocation; never let a check crash a test run
    return CheckResult::fail(internal::cat("file_check: internal error: ", e.what()));
  }
}

}  // namespace opspec
