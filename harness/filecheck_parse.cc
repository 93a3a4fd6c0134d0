// filecheck_parse.cc: reading FileCheck directives and their patterns.
// See Note [FileCheck semantics] in harness/filecheck.h.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "harness/internal/filecheck_internal.h"
#include "harness/regex.h"
#include "runtime/core/did_you_mean.h"

namespace opspec::internal {
namespace {

bool is_word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool is_token_char(char c) { return is_word_char(c) || c == '-'; }
bool is_hspace(char c) { return c == ' ' || c == '\t'; }

std::string to_upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

bool iequals(std::string_view a, std::string_view b) { return to_upper(a) == to_upper(b); }

// parse_count: the n of "COUNT-n": a positive integer of at most 7 digits.
bool parse_count(std::string_view digits, int* n) {
  if (digits.empty() || digits.size() > 7) return false;
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + (c - '0');
  }
  *n = v;
  return v > 0;
}

// parse_suffix: the kind named by what follows the prefix ("", "-NEXT",
// "-COUNT-3", ...), exactly as LLVM spells them.
bool parse_suffix(std::string_view suffix, DirectiveKind* kind, int* count) {
  static constexpr std::pair<std::string_view, DirectiveKind> kSuffixes[] = {
      {"", DirectiveKind::kCheck},       {"-NEXT", DirectiveKind::kNext},  {"-SAME", DirectiveKind::kSame},
      {"-NOT", DirectiveKind::kNot},     {"-DAG", DirectiveKind::kDag},    {"-LABEL", DirectiveKind::kLabel},
      {"-EMPTY", DirectiveKind::kEmpty}};
  for (const auto& [text, k] : kSuffixes) {
    if (suffix == text) {
      *kind = k;
      return true;
    }
  }
  if (suffix.starts_with("-COUNT-") && parse_count(suffix.substr(7), count)) {
    *kind = DirectiveKind::kCount;
    return true;
  }
  return false;
}

// closest_suffix: the known suffix a misspelled one most likely meant, or "".
std::string closest_suffix(std::string_view suffix) {
  const std::string upper = to_upper(suffix);
  DirectiveKind kind;
  int count = 0;
  if (parse_suffix(upper, &kind, &count)) return upper;
  static constexpr std::string_view kKnown[] = {"-NEXT", "-SAME", "-NOT", "-DAG", "-LABEL", "-EMPTY", "-COUNT-<n>"};
  return std::string(closest_match(upper, kKnown));
}

// LineScan: the directive (or directive error) found in one line.
struct LineScan {
  enum class What : uint8_t { kNone, kDirective, kError };
  What what = What::kNone;
  DirectiveKind kind = DirectiveKind::kCheck;
  int count = 1;
  bool literal = false;
  size_t token = 0;        // byte index of the directive's first character
  size_t after_colon = 0;  // byte index after its ':'
  std::string error;
};

// scan_line: the first directive-like token of `line`: "PREFIX...:" that
// starts a word, or a near miss of one (see Note [FileCheck semantics]).
LineScan scan_line(std::string_view line, std::string_view prefix) {
  LineScan out;
  const size_t n = line.size();
  for (size_t i = 0; i < n; ++i) {
    if (!is_word_char(line[i]) || (i > 0 && is_token_char(line[i - 1]))) continue;
    size_t j = i;
    while (j < n && is_token_char(line[j])) ++j;
    const std::string_view token = line.substr(i, j - i);
    size_t k = j;
    const bool literal = line.substr(k).starts_with("{LITERAL}");
    if (literal) k += 9;
    size_t c = k;
    while (c < n && is_hspace(line[c])) ++c;
    if (c >= n || line[c] != ':') {
      i = j - 1;
      continue;
    }
    const bool spaced = c > k;
    out.token = i;
    out.after_colon = c + 1;
    out.literal = literal;
    const std::string written = cat(line.substr(i, c + 1 - i));
    if (token.starts_with(prefix) && (token.size() == prefix.size() || token[prefix.size()] == '-')) {
      const std::string_view suffix = token.substr(prefix.size());
      out.what = LineScan::What::kError;
      if (!parse_suffix(suffix, &out.kind, &out.count)) {
        if (suffix.starts_with("-COUNT")) {
          out.error = cat("invalid count in '", written, "': write ", prefix,
                                   "-COUNT-<n>: with n a positive integer");
        } else {
          const std::string hint = closest_suffix(suffix);
          out.error = cat("misspelled directive '", written, "'",
                                   hint.empty() ? "" : cat(" (did you mean '", prefix, hint, ":'?)"),
                                   "; directives are ", prefix, ":, ", prefix, "-NEXT:, -SAME:, -NOT:, -DAG:, ",
                                   "-LABEL:, -EMPTY: and -COUNT-<n>:");
        }
      } else if (spaced) {
        out.error = cat("misspelled directive '", written, "': no space is allowed before ':'");
      } else if (literal && out.kind == DirectiveKind::kEmpty) {
        out.error = cat("'", written, "': {LITERAL} does not apply to ", prefix, "-EMPTY:");
      } else {
        out.what = LineScan::What::kDirective;
      }
      return out;
    }
    // A near miss: the prefix in another case or one edit away, followed
    // by nothing or a suffix (possibly with '_' for '-'), then ':'.
    // Only splits with a head near the prefix's length and a tail no longer
    // than a suffix can match, which keeps a long hyphenated token linear.
    if (!spaced) {
      constexpr size_t kLongestSuffix = 14;  // "-COUNT-" and 7 digits
      const size_t first = std::max<size_t>(1, token.size() > kLongestSuffix ? token.size() - kLongestSuffix : 1);
      const size_t last = std::min(token.size(), prefix.size() + 1);
      for (size_t split = first; split <= last; ++split) {
        if (split < token.size() && token[split] != '-' && token[split] != '_') continue;
        const std::string_view head = token.substr(0, split);
        std::string tail = to_upper(token.substr(split));
        if (!tail.empty()) tail[0] = '-';
        DirectiveKind kind;
        int count = 0;
        if (!parse_suffix(tail, &kind, &count)) continue;
        const bool near = iequals(head, prefix) ||
                          (prefix.size() >= 4 && edit_distance(head, prefix) == 1) ||
                          (head == prefix && split < token.size() && token[split] == '_');
        if (!near) continue;
        out.what = LineScan::What::kError;
        out.error = cat("misspelled directive '", written, "' (did you mean '", prefix, tail, ":'?)");
        return out;
      }
    }
    i = j - 1;
  }
  return LineScan{};
}

// block_end: the index of the "]]" closing a "[[" whose contents start at
// `from`, skipping escapes and nested [...] bracket expressions; npos if none.
size_t block_end(std::string_view s, size_t from, size_t end) {
  int depth = 0;
  for (size_t i = from; i < end; ++i) {
    if (depth == 0 && i + 1 < end && s[i] == ']' && s[i + 1] == ']') return i;
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']' && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

bool valid_variable_name(std::string_view name) {
  if (!name.empty() && name[0] == '$') name.remove_prefix(1);
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), is_word_char);
}

// Parser: turns the checks text into CheckStrings, collecting errors.
class Parser {
 public:
  explicit Parser(const FileCheckOptions& options) : options_(options) {}

  ParsedChecks run(std::string_view checks);

 private:
  void error(std::string_view name, int line, size_t byte, std::string_view line_text, std::string_view message) {
    const int column = static_cast<int>(byte) + 1 + (name == options_.check_name ? column_offset() : 0);
    out_.errors.push_back(quote_location(check_location(options_, name, line, column), "error", message, line_text, byte));
  }
  // first_line, column_offset: where the checks' text sits in check_name, or
  // 1 and 0 for checks with their own positions (See check_location).
  int first_line() const { return options_.check_within.empty() ? options_.check_first_line : 1; }
  int column_offset() const { return options_.check_within.empty() ? options_.check_column_offset : 0; }
  std::string canon(std::string_view s) const { return canonicalize(s, options_.strict_whitespace).text; }
  // parse_pattern: fills p.pieces from line[begin, end); false after an error.
  bool parse_pattern(Pattern& p, std::string_view name, std::string_view line, size_t begin, size_t end,
                     bool literal);
  // regex_groups: the capture groups of a valid regex; -1 (after an error) if invalid.
  int regex_groups(const std::string& re, std::string_view name, const Pattern& p, std::string_view line,
                   size_t byte);
  std::vector<Pattern> implicit_nots();

  const FileCheckOptions& options_;
  ParsedChecks out_;
  absl::flat_hash_set<std::string> defined_;  // variables defined by earlier directives
};

int Parser::regex_groups(const std::string& re, std::string_view name, const Pattern& p, std::string_view line,
                         size_t byte) {
  absl::StatusOr<Regex> compiled = Regex::compile(canon(re));  // See Note [Regexes]
  if (!compiled.ok()) {
    error(name, p.line, byte, line, cat("invalid regex '", shorten(re), "': ", std::string(compiled.status().message())));
    return -1;
  }
  return compiled->group_count();
}

bool Parser::parse_pattern(Pattern& p, std::string_view name, std::string_view line, size_t begin, size_t end,
                           bool literal) {
  const std::string dname = directive_name(p, options_.check_prefix);
  absl::flat_hash_map<std::string, int> local;  // defined earlier in this pattern -> group
  std::string text;
  int groups = 0;
  const auto flush = [&] {
    if (!text.empty()) p.pieces.push_back({PatternPiece::Kind::kLiteral, canon(text), 0});
    text.clear();
  };
  size_t i = begin;
  while (i < end) {
    if (!literal && line.substr(i, 2) == "{{") {
      size_t close = line.find("}}", i + 2);
      if (close == std::string_view::npos || close + 2 > end) {
        error(name, p.line, i, line, "unterminated regex: '{{' without a matching '}}'");
        return false;
      }
      while (close + 2 < end && line[close + 2] == '}') ++close;  // "{{a{2}}}" is the regex a{2}
      const std::string re(line.substr(i + 2, close - i - 2));
      const int n = regex_groups(re, name, p, line, i + 2);
      if (n < 0) return false;
      flush();
      p.pieces.push_back({PatternPiece::Kind::kRegex, cat("(?:", canon(re), ")"), 0});
      groups += n;
      i = close + 2;
      continue;
    }
    if (!literal && line.substr(i, 2) == "[[" && line.substr(i, 3) != "[[[") {  // "f32[[[N]]" is "f32[" [[N]]
      const size_t close = block_end(line, i + 2, end);
      if (close == std::string_view::npos) {
        error(name, p.line, i, line,
              "unterminated variable: '[[' without a matching ']]' (to match '[[' literally write {{\\[\\[}} or "
              "use a {LITERAL} directive)");
        return false;
      }
      const std::string_view block = line.substr(i + 2, close - i - 2);
      if (block.starts_with("#")) {
        error(name, p.line, i, line, "numeric substitution blocks '[[#...]]' are not supported");
        return false;
      }
      if (block.starts_with("@")) {
        int offset = 0, sign = 1;
        std::string_view rest = block.substr(1);
        bool ok = rest.starts_with("LINE");
        rest.remove_prefix(std::min<size_t>(4, rest.size()));
        if (ok && !rest.empty()) {
          sign = rest[0] == '-' ? -1 : 1;
          ok = (rest[0] == '+' || rest[0] == '-') && rest.size() > 1 && rest.size() < 8 &&
               std::all_of(rest.begin() + 1, rest.end(), [](char c) { return c >= '0' && c <= '9'; });
          if (ok) offset = std::stoi(std::string(rest.substr(1)));
        }
        if (!ok) {
          error(name, p.line, i, line,
                cat("unknown pseudo variable '[[", block, "]]' (only @LINE, @LINE+n and @LINE-n)"));
          return false;
        }
        text += std::to_string(p.line + sign * offset);
        i = close + 2;
        continue;
      }
      const size_t colon = block.find(':');
      const std::string var(block.substr(0, colon));
      if (!valid_variable_name(var)) {
        error(name, p.line, i + 2, line,
              cat("invalid variable name '", var,
                           "' in '[[...]]' (to match '[[' literally write {{\\[\\[}} or use a {LITERAL} directive)"));
        return false;
      }
      if (p.kind == DirectiveKind::kLabel) {
        error(name, p.line, i, line, cat(dname, ": cannot define or use variables"));
        return false;
      }
      if (colon != std::string_view::npos) {
        if (local.contains(var)) {
          error(name, p.line, i + 2, line, cat("variable '", var, "' is defined twice in one pattern"));
          return false;
        }
        const std::string re(block.substr(colon + 1));
        const int n = regex_groups(re, name, p, line, i + 3 + colon);
        if (n < 0) return false;
        flush();
        local[var] = ++groups;
        p.defs.emplace_back(var, groups);
        p.pieces.push_back({PatternPiece::Kind::kRegex, cat("(", canon(re), ")"), 0, var, n});
        groups += n;
      } else {
        const auto it = local.find(var);
        if (it == local.end() && !defined_.contains(var)) {
          error(name, p.line, i + 2, line,
                cat("use of undefined variable '", var, "' (no earlier directive defines it)"));
          return false;
        }
        flush();
        const int backref = it == local.end() ? 0 : it->second;
        p.has_uses = p.has_uses || backref == 0;
        p.pieces.push_back({PatternPiece::Kind::kUse, var, backref});
      }
      i = close + 2;
      continue;
    }
    text += line[i++];
  }
  flush();
  p.literal_only = !p.full_line && std::all_of(p.pieces.begin(), p.pieces.end(), [](const PatternPiece& piece) {
    return piece.kind == PatternPiece::Kind::kLiteral || (piece.kind == PatternPiece::Kind::kUse && !piece.backref);
  });
  if (!p.literal_only) {  // the parts are valid; check the whole (size, nesting) once
    std::string undefined;
    const std::string empty;
    absl::StatusOr<Regex> whole = Regex::compile(
        regex_source(p, [&](const std::string&) { return &empty; }, options_.strict_whitespace, &undefined));
    if (!whole.ok()) {
      error(name, p.line, begin, line, cat("invalid regex: ", std::string(whole.status().message())));
      return false;
    }
  }
  if (p.kind != DirectiveKind::kNot) {
    for (const auto& [var, group] : p.defs) defined_.insert(var);
  }
  return true;
}

std::vector<Pattern> Parser::implicit_nots() {
  std::vector<Pattern> nots;
  for (size_t k = 0; k < options_.implicit_check_not.size(); ++k) {
    const std::string& text = options_.implicit_check_not[k];
    Pattern p;
    p.kind = DirectiveKind::kNot;
    p.implicit_index = static_cast<int>(k) + 1;
    p.line = 1;
    p.column = 1;
    p.line_text = text;
    const std::string name = cat("implicit_check_not[", k, "]");
    size_t b = 0, e = text.size();
    while (b < e && is_hspace(text[b])) ++b;
    while (e > b && is_hspace(text[e - 1])) --e;
    p.caret = b;
    p.column = static_cast<int>(b) + 1;
    if (b == e) {
      error(name, 1, 0, text, "empty implicit_check_not pattern");
      continue;
    }
    if (text.find('\n') != std::string::npos) {
      error(name, 1, 0, text, "an implicit_check_not pattern must be one line");
      continue;
    }
    if (parse_pattern(p, name, text, b, e, /*literal=*/false)) nots.push_back(std::move(p));
  }
  return nots;
}

ParsedChecks Parser::run(std::string_view checks) {
  const std::string& prefix = options_.check_prefix;
  if (prefix.empty() || !std::isalpha(static_cast<unsigned char>(prefix[0])) ||
      !std::all_of(prefix.begin(), prefix.end(), is_token_char)) {
    out_.errors.push_back(cat("error: invalid check prefix '", prefix,
                                       "': it must start with a letter and hold only letters, digits, '_' and '-'\n"));
    return std::move(out_);
  }
  const std::vector<Pattern> implicit = implicit_nots();
  std::vector<Pattern> pending = implicit;
  bool any_directive = false;
  int line_index = 0;
  for (size_t start = 0; start <= checks.size(); ++line_index) {
    size_t eol = checks.find('\n', start);
    if (eol == std::string_view::npos) eol = checks.size();
    std::string_view line = checks.substr(start, eol - start);
    start = eol + 1;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const LineScan scan = scan_line(line, prefix);
    if (scan.what == LineScan::What::kNone) continue;
    any_directive = true;
    const int line_number = first_line() + line_index;
    if (scan.what == LineScan::What::kError) {
      error(options_.check_name, line_number, scan.token, line, scan.error);
      continue;
    }
    Pattern p;
    p.kind = scan.kind;
    p.count = scan.count;
    p.line = line_number;
    p.line_text = std::string(line);
    size_t b = scan.after_colon, e = line.size();
    while (b < e && is_hspace(line[b])) ++b;
    while (e > b && is_hspace(line[e - 1])) --e;
    p.caret = b;
    p.column = static_cast<int>(b) + 1 + column_offset();
    p.full_line = options_.match_full_lines && p.kind != DirectiveKind::kNot && p.kind != DirectiveKind::kEmpty;
    const std::string dname = directive_name(p, prefix);
    const bool follows = p.kind == DirectiveKind::kNext || p.kind == DirectiveKind::kSame ||
                         p.kind == DirectiveKind::kEmpty;
    if (follows && out_.strings.empty()) {
      error(options_.check_name, line_number, scan.token, line,
            cat("found '", dname, ":' without a previous '", prefix,
                         ":' directive to follow (it must not be the first directive)"));
      continue;
    }
    if (p.kind == DirectiveKind::kEmpty) {
      if (b != e) {
        error(options_.check_name, line_number, b, line,
              cat(dname, ": takes no pattern (it matches an empty line); found '", line.substr(b, e - b),
                           "'"));
        continue;
      }
    } else if (b == e) {
      error(options_.check_name, line_number, b, line,
            cat(dname, ": has an empty pattern", p.kind == DirectiveKind::kNext || p.kind == DirectiveKind::kCheck
                                                               ? cat(" (to match an empty line use ", prefix,
                                                                              "-EMPTY:)")
                                                               : ""));
      continue;
    } else if (!parse_pattern(p, options_.check_name, line, b, e, scan.literal)) {
      continue;
    }
    if (p.kind == DirectiveKind::kNot || p.kind == DirectiveKind::kDag) {
      pending.push_back(std::move(p));
    } else {
      out_.strings.push_back({std::move(p), std::move(pending)});
      pending = implicit;
    }
  }
  if (!any_directive) {
    out_.errors.push_back(
        cat(options_.check_name, ": error: no check directives found (prefix ", prefix, ")\n"));
  }
  if (!pending.empty()) {
    Pattern eof;
    eof.kind = DirectiveKind::kEof;
    out_.strings.push_back({std::move(eof), std::move(pending)});
  }
  return std::move(out_);
}

}  // namespace

CanonicalText canonicalize(std::string_view s, bool strict_whitespace) {
  CanonicalText out;
  out.text.reserve(s.size());
  out.to_original.reserve(s.size() + 1);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r' && i + 1 < s.size() && s[i + 1] == '\n') continue;
    out.text += (!strict_whitespace && s[i] == '\t') ? ' ' : s[i];
    out.to_original.push_back(i);
    if (!strict_whitespace && is_hspace(s[i])) {
      while (i + 1 < s.size() && is_hspace(s[i + 1])) ++i;
    }
  }
  out.to_original.push_back(s.size());
  return out;
}

std::string directive_name(const Pattern& pattern, std::string_view prefix) {
  switch (pattern.kind) {
    case DirectiveKind::kCheck: return std::string(prefix);
    case DirectiveKind::kNext: return cat(prefix, "-NEXT");
    case DirectiveKind::kSame: return cat(prefix, "-SAME");
    case DirectiveKind::kNot:
      return pattern.implicit_index ? std::string("implicit-check-not") : cat(prefix, "-NOT");
    case DirectiveKind::kDag: return cat(prefix, "-DAG");
    case DirectiveKind::kLabel: return cat(prefix, "-LABEL");
    case DirectiveKind::kEmpty: return cat(prefix, "-EMPTY");
    case DirectiveKind::kCount: return cat(prefix, "-COUNT-", pattern.count);
    case DirectiveKind::kEof: return "end of input";
  }
  return std::string(prefix);
}

std::string directive_label(const Pattern& pattern, int match_index) {
  switch (pattern.kind) {
    case DirectiveKind::kCheck: return cat("check:", pattern.line);
    case DirectiveKind::kNext: return cat("next:", pattern.line);
    case DirectiveKind::kSame: return cat("same:", pattern.line);
    case DirectiveKind::kNot:
      return pattern.implicit_index ? cat("implicit-not:", pattern.implicit_index)
                                    : cat("not:", pattern.line);
    case DirectiveKind::kDag: return cat("dag:", pattern.line);
    case DirectiveKind::kLabel: return cat("label:", pattern.line);
    case DirectiveKind::kEmpty: return cat("empty:", pattern.line);
    case DirectiveKind::kCount: return cat("count:", pattern.line, "'", match_index);
    case DirectiveKind::kEof: return "eof";
  }
  return "";
}

std::string regex_source(const Pattern& pattern,
                         const std::function<const std::string*(const std::string&)>& value_of,
                         bool strict_whitespace, std::string* undefined, const BackrefValues* forced) {
  const auto forced_value = [&](const std::string& var) -> const std::string* {
    if (forced == nullptr) return nullptr;
    for (const auto& [name, value] : *forced) {
      if (name == var) return &value;
    }
    return nullptr;
  };
  std::string out;
  if (pattern.full_line) out += strict_whitespace ? "^" : "^ ?";
  for (const PatternPiece& piece : pattern.pieces) {
    switch (piece.kind) {
      case PatternPiece::Kind::kLiteral: out += regex_quote(piece.text); break;
      case PatternPiece::Kind::kRegex:
        if (const std::string* v = piece.defines.empty() ? nullptr : forced_value(piece.defines)) {
          // The value in the group, then empty groups where re's own were, so later numbers hold.
          append(&out, "(", regex_quote(*v), ")");
          for (int g = 0; g < piece.inner_groups; ++g) out += "()";
        } else {
          out += piece.text;
        }
        break;
      case PatternPiece::Kind::kUse:
        if (piece.backref) {  // See Note [FileCheck backreferences]
          if (const std::string* v = forced_value(piece.text)) {
            out += regex_quote(*v);
          } else {
            for (const PatternPiece& def : pattern.pieces) {
              if (def.defines == piece.text) append(&out, "(?:", std::string_view(def.text).substr(1, def.text.size() - 2), ")");
            }
          }
        } else if (const std::string* value = value_of(piece.text)) {
          out += regex_quote(*value);
        } else if (undefined->empty()) {
          *undefined = piece.text;
        }
        break;
    }
  }
  if (pattern.full_line) out += strict_whitespace ? "$" : " ?$";
  return out;
}

std::vector<std::pair<std::string, std::string>> backref_definitions(const Pattern& pattern) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const PatternPiece& piece : pattern.pieces) {
    if (piece.kind != PatternPiece::Kind::kUse || !piece.backref) continue;
    if (std::any_of(out.begin(), out.end(), [&](const auto& d) { return d.first == piece.text; })) continue;
    for (const PatternPiece& def : pattern.pieces) {
      if (def.defines == piece.text) out.emplace_back(piece.text, def.text.substr(1, def.text.size() - 2));
    }
  }
  return out;
}

std::string check_location(const FileCheckOptions& options, std::string_view name, int line, int column) {
  if (options.check_within.empty() || name != options.check_name) return cat(name, ":", line, ":", column);
  return cat(name, ":", options.check_first_line, ":", options.check_column_offset + 1, ": in the checks (",
             options.check_within, ") at ", line, ":", column);
}

std::string quote_location(std::string_view location, std::string_view kind, std::string_view message,
                           std::string_view line_text, size_t caret) {
  std::string out = cat(location, ": ", kind, ": ", message, "\n", line_text, "\n");
  for (size_t i = 0; i < caret && i < line_text.size(); ++i) out += line_text[i] == '\t' ? '\t' : ' ';
  out += "^\n";
  return out;
}

ParsedChecks parse_checks(std::string_view checks, const FileCheckOptions& options) {
  return Parser(options).run(checks);
}

}  // namespace opspec::internal
