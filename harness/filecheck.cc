// filecheck.cc: file_check(): matching parsed directives against the input
// in LLVM FileCheck's order (labels first, then each block; DAG groups with
// the NOTs between them; NOTs checked over the skipped region), recording
// where each directive matched for the annotated dump.
#include "harness/filecheck.h"

#include <algorithm>
#include <exception>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "harness/internal/filecheck_internal.h"
#include "harness/regex.h"

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
  std::string engine_error;  // the regex could not be built (a value made it too long, too many tries)
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
  const Regex* compiled(const Pattern* cache_key, const std::string& source, Found* f);
  Found search(const Regex& re, const Pattern& p, size_t begin, size_t end, bool define);
  Found search_with_backrefs(const Regex& superset, const std::vector<std::pair<std::string, std::string>>& defs,
                             const Pattern& p, size_t begin, size_t end, bool define);

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
  std::map<const Pattern*, Regex> cache_;   // regexes of patterns that use no earlier variables
  std::optional<Regex> scratch_;            // the regex of the pattern being matched, when not cached
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
  std::string undefined;
  const std::string source = regex_source(
      p, [this](const std::string& name) { return value_of(name); }, options_.strict_whitespace, &undefined);
  if (!undefined.empty()) {
    f.undefined = undefined;
    return f;
  }
  const Regex* re = compiled(p.has_uses ? nullptr : &p, source, &f);
  if (re == nullptr) return f;
  const std::vector<std::pair<std::string, std::string>> backrefs = backref_definitions(p);
  if (!backrefs.empty()) return search_with_backrefs(*re, backrefs, p, begin, end, define);
  return search(*re, p, begin, end, define);
}

const Regex* Matcher::compiled(const Pattern* cache_key, const std::string& source, Found* f) {
  if (cache_key != nullptr) {
    if (auto it = cache_.find(cache_key); it != cache_.end()) return &it->second;
  }
  absl::StatusOr<Regex> re = Regex::compile(source);
  if (!re.ok()) {  // parsing checked the pattern; a variable's value can still make it too long
    f->engine_error = std::string(re.status().message());
    return nullptr;
  }
  if (cache_key == nullptr) {
    scratch_ = *std::move(re);
    return &*scratch_;
  }
  return &cache_.emplace(cache_key, *std::move(re)).first->second;
}

Found Matcher::search(const Regex& re, const Pattern& p, size_t begin, size_t end, bool define) {
  // One line at a time: a match never spans lines; the line is the context of ^ and $.
  const std::string& t = in_.text();
  Found f;
  for (size_t s = std::min(begin, end);;) {
    const size_t bol = s == 0 ? 0 : t.rfind('\n', s - 1) + 1;  // rfind's npos + 1 is 0
    size_t eol = t.find('\n', s);
    if (eol == kNpos) eol = t.size();
    const size_t e = std::min(eol, end);
    const std::string_view line(t.data() + bol, eol - bol);
    if (std::optional<RegexMatch> m = re.find(line, s - bol, e - bol, define && !p.defs.empty())) {
      f.ok = true;
      f.pos = bol + m->pos;
      f.len = m->len;
      if (define) {
        for (const auto& [name, group] : p.defs) vars_[name] = std::string(m->groups[group].value_or(""));
      }
      return f;
    }
    if (eol >= t.size() || eol + 1 >= end) return f;
    s = eol + 1;
  }
}

Found Matcher::search_with_backrefs(const Regex& superset, const std::vector<std::pair<std::string, std::string>>& defs,
                                    const Pattern& p, size_t begin, size_t end, bool define) {
  // See Note [FileCheck backreferences]. Lines where the superset matches are
  // tried with each combination of candidate values, at most kMaxTries.
  constexpr size_t kMaxTries = 4096;
  const std::string& t = in_.text();
  Found f;
  for (size_t s = std::min(begin, end);;) {
    Found line_found = search(superset, p, s, end, false);
    if (!line_found.ok) return line_found;
    const size_t bol = line_found.pos == 0 ? 0 : t.rfind('\n', line_found.pos - 1) + 1;
    size_t eol = t.find('\n', line_found.pos);
    if (eol == kNpos) eol = t.size();
    const size_t from = std::max(s, bol), to = std::min(eol, end);
    const std::string_view line(t.data() + bol, eol - bol);
    // Candidate values of each variable: the longest match of its regex at each position.
    std::vector<std::vector<std::string>> values;
    size_t tries = 1;
    for (const auto& [name, def_re] : defs) {
      absl::StatusOr<Regex> anchored = Regex::compile(cat("^(?:", def_re, ")"));
      if (!anchored.ok()) {
        f.engine_error = std::string(anchored.status().message());
        return f;
      }
      std::vector<std::string> vs;
      for (size_t i = from - bol; i <= to - bol; ++i) {
        if (auto m = anchored->find(line.substr(i), 0, to - bol - i)) {
          std::string v(line.substr(i, m->len));
          if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(std::move(v));
        }
      }
      tries *= std::max<size_t>(vs.size(), 1);
      if (tries > kMaxTries) {
        f.engine_error = cat("a pattern that uses a variable it defines has more than ", kMaxTries,
                             " candidate values on input line ", in_.location(options_.input_name, bol));
        return f;
      }
      values.push_back(std::move(vs));
    }
    std::optional<Found> best;
    std::vector<std::pair<std::string, std::string>> best_values;  // what the best match so far defines
    BackrefValues forced(defs.size());
    // A variable with no candidate on this line means no match here.
    if (std::any_of(values.begin(), values.end(), [](const auto& v) { return v.empty(); })) tries = 0;
    for (size_t k = 0; k < tries; ++k) {
      size_t rest = k;
      for (size_t d = 0; d < defs.size(); ++d) {
        forced[d] = {defs[d].first, values[d][rest % values[d].size()]};
        rest /= values[d].size();
      }
      std::string undefined;
      absl::StatusOr<Regex> exact = Regex::compile(regex_source(
          p, [this](const std::string& name) { return value_of(name); }, options_.strict_whitespace, &undefined,
          &forced));
      if (!exact.ok()) continue;  // a value too long to quote
      std::optional<RegexMatch> m = exact->find(line, from - bol, to - bol, define && !p.defs.empty());
      if (!m || (best && bol + m->pos >= best->pos)) continue;
      Found candidate;
      candidate.ok = true;
      candidate.pos = bol + m->pos;
      candidate.len = m->len;
      best = candidate;
      if (define) {
        best_values.clear();
        for (const auto& [name, group] : p.defs) best_values.emplace_back(name, m->groups[group].value_or(""));
      }
    }
    if (best) {
      if (define) {
        for (auto& [name, value] : best_values) vars_[name] = std::move(value);
      }
      return *best;
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
  errors_ += quote_location(check_location(options_, check_file(p), p.line, p.column), "error",
                            cat(directive_name(p, options_.check_prefix), ": ", message), p.line_text,
                            p.caret);
}

void Matcher::variable_notes(const Pattern& p) {
  for (const PatternPiece& piece : p.pieces) {
    if (piece.kind != PatternPiece::Kind::kUse || piece.backref) continue;
    const std::string* value = value_of(piece.text);
    const std::string where = cat(check_location(options_, check_file(p), p.line, p.column), ": note: ");
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
                                ": on line ", p.line, " of ",
                                options_.check_within.empty()
                                    ? options_.check_name
                                    : cat("the checks (", options_.check_within, " at ", options_.check_name, ":",
                                          options_.check_first_line, ":", options_.check_column_offset + 1, ")"));
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
  } catch (const std::exception& e) {  // allocation; never let a check crash a test run
    return CheckResult::fail(internal::cat("file_check: internal error: ", e.what()));
  }
}

}  // namespace opspec
