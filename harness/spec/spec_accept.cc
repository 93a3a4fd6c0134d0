// spec_accept.cc: rewrites golden debug strings in spec files.
// See Note [Accepting debug strings].
#include "harness/spec/spec_accept.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <optional>
#include <sstream>

#include "runtime/core/error.h"

namespace opspec::spec {
namespace {

using YAML::Node;

// Text: a file's text with line lookups. Lines and columns are 0-based, as
// yaml-cpp marks are.
class Text {
 public:
  explicit Text(std::string_view s) : s_(s) {
    starts_.push_back(0);
    for (size_t i = 0; i < s.size(); ++i) {
      if (s[i] == '\n') starts_.push_back(i + 1);
    }
    if (s.find("\r\n") != std::string_view::npos) eol_ = "\r\n";
  }
  std::string_view str() const { return s_; }
  const std::string& eol() const { return eol_; }
  int lines() const { return static_cast<int>(starts_.size()); }
  size_t start(int line) const { return line < lines() ? starts_[line] : s_.size(); }
  // end: the offset of line's break (or of the end of the text).
  size_t end(int line) const {
    size_t e = line + 1 < lines() ? starts_[line + 1] - 1 : s_.size();
    return (e > start(line) && s_[e - 1] == '\r') ? e - 1 : e;
  }
  // next: the start of the line after line (the end of the text for the last).
  size_t next(int line) const { return line + 1 < lines() ? starts_[line + 1] : s_.size(); }
  bool has_break(int line) const { return line + 1 < lines(); }
  size_t offset(int line, int col) const { return std::min(start(line) + col, end(line)); }
  int line_of(size_t off) const {
    return static_cast<int>(std::upper_bound(starts_.begin(), starts_.end(), off) - starts_.begin()) - 1;
  }
  int indent(int line) const {
    size_t i = start(line);
    while (i < end(line) && s_[i] == ' ') ++i;
    return static_cast<int>(i - start(line));
  }
  bool blank(int line) const {
    for (size_t i = start(line); i < end(line); ++i) {
      if (s_[i] != ' ' && s_[i] != '\t') return false;
    }
    return true;
  }
  bool comment(int line) const {
    size_t i = start(line) + indent(line);
    return i < end(line) && s_[i] == '#';
  }

 private:
  std::string_view s_;
  std::vector<size_t> starts_;
  std::string eol_ = "\n";
};

struct Edit {
  size_t begin, end;
  std::string text;
};

// Rendered: a new value: the part after `key: ` and the lines that follow it.
struct Rendered {
  std::string header;
  std::string body;
  bool keep = false;  // `|+`: blank lines after the body would join the value
};

std::string quoted(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out = "\"";
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\t': out += "\\t"; break;
      case '\r': out += "\\r"; break;
      default:
        if (c < 0x20 || c == 0x7f)
          out += str_cat("\\x", std::string(1, kHex[c >> 4]), std::string(1, kHex[c & 15]));
        else
          out += ch;
    }
  }
  return out + "\"";
}

// block: text as a literal block scalar for a key at column key_col, or
// nullopt when a block scalar cannot hold it.
std::optional<Rendered> block(std::string_view text, int key_col, const std::string& eol) {
  for (char ch : text) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) return std::nullopt;
  }
  size_t trailing = 0;
  while (trailing < text.size() && text[text.size() - 1 - trailing] == '\n') ++trailing;
  std::string_view body = text.substr(0, text.size() - trailing);
  Rendered r;
  r.header = "|";
  if (!body.empty() && (body[0] == ' ' || body[0] == '\t' || body[0] == '\n')) r.header += "2";
  r.keep = trailing >= 2 || (body.empty() && trailing == 1);
  r.header += trailing == 0 ? "-" : r.keep ? "+" : "";
  std::string indent(key_col + 2, ' ');
  for (size_t pos = 0; pos < body.size();) {  // body ends in no line break
    size_t nl = std::min(body.find('\n', pos), body.size());
    std::string_view line = body.substr(pos, nl - pos);
    r.body += line.empty() ? eol : str_cat(indent, line, eol);
    pos = nl + 1;
  }
  size_t empties = body.empty() ? trailing : (trailing > 0 ? trailing - 1 : 0);
  for (size_t i = 0; i < empties; ++i) r.body += eol;
  return r;
}

// reads_back: whether `key: header\nbody` at key_col reads back as text.
bool reads_back(const Rendered& r, int key_col, std::string_view text) {
  try {
    Node n = YAML::Load(str_cat(std::string(key_col, ' '), "k: ", r.header, "\n", r.body));
    return n.IsMap() && n.begin()->second.IsScalar() && n.begin()->second.Scalar() == text;
  } catch (const std::exception&) {
    return false;
  }
}

Rendered render(std::string_view text, int key_col, const std::string& eol) {
  if (auto r = block(text, key_col, eol); r && reads_back(*r, key_col, text)) return *r;
  return {quoted(text), "", false};
}

// find_entry: the value of key in mapping n (with its key node), or nullopt.
std::optional<std::pair<Node, Node>> find_entry(const Node& n, std::string_view key) {
  if (!n.IsMap()) return std::nullopt;
  for (auto it = n.begin(); it != n.end(); ++it) {
    if (it->first.IsScalar() && it->first.Scalar() == key) return std::make_pair(it->first, it->second);
  }
  return std::nullopt;
}

// find_case: the case mapping called name.
absl::StatusOr<Node> find_case(const Node& root, const std::string& name, std::string_view file) {
  auto cases = find_entry(root, "cases");
  if (!cases || !cases->second.IsSequence()) {
    return absl::InvalidArgumentError(str_cat(file, ": error: no 'cases' list to accept into"));
  }
  std::optional<Node> found;
  for (auto it = cases->second.begin(); it != cases->second.end(); ++it) {
    auto n = find_entry(*it, "name");
    if (!n || !n->second.IsScalar() || n->second.Scalar() != name) continue;
    if (found) return absl::InvalidArgumentError(str_cat(file, ": error: more than one case is named '", name, "'"));
    found.emplace(static_cast<const Node&>(*it));
  }
  if (!found) return absl::NotFoundError(str_cat(file, ": error: no case named '", name, "'"));
  return *found;
}

class Rewriter {
 public:
  Rewriter(std::string_view text, std::string_view file) : t_(text), file_(file) {}

  absl::Status add(const Node& root, const std::string& name, const std::string& new_text);
  absl::StatusOr<std::string> apply();

 private:
  absl::Status replace_value(const Node& key, const Node& value, const std::string& new_text);
  absl::Status insert_key(const Node& map_key, const Node& map, int map_col, int key_col, std::string prefix,
                          const std::string& new_text);
  // content_edit: replaces [begin, end) (whole lines) by prefix and r's
  // lines, taking the blank lines after them when the value keeps its
  // trailing newlines (they would join it).
  void content_edit(size_t begin, size_t end, std::string prefix, const Rendered& r);
  int line_of(const Node& n) const { return n.Mark().line; }
  size_t offset_of(const Node& n) const {
    YAML::Mark m = n.Mark();
    return m.line < 0 || m.column < 0 ? 0 : t_.offset(m.line, m.column);
  }
  // end_of_block: the last non-blank line of the block that starts at line
  // and holds lines indented at least col.
  int end_of_block(int line, int col) const {
    int last = line;
    for (int l = line + 1; l < t_.lines(); ++l) {
      if (t_.blank(l)) continue;
      if (t_.indent(l) >= col)
        last = l;
      else if (!t_.comment(l))
        break;
    }
    return last;
  }
  absl::Status unsupported(const Node& n, std::string_view what) const {
    return absl::InvalidArgumentError(
        str_cat(file_, ":", n.Mark().line + 1, ":", n.Mark().column + 1, ": error: cannot accept into ", what));
  }

  Text t_;
  std::string file_;
  std::vector<Edit> edits_;
};

void Rewriter::content_edit(size_t begin, size_t end, std::string prefix, const Rendered& r) {
  int line = t_.line_of(end);
  if (r.keep && end == t_.start(line)) {
    while (line < t_.lines() && t_.blank(line) && t_.has_break(line)) end = t_.next(line++);
  }
  if (!prefix.empty() || !r.body.empty() || begin != end) edits_.push_back({begin, end, prefix + r.body});
}

absl::Status Rewriter::replace_value(const Node& key, const Node& value, const std::string& new_text) {
  std::string_view s = t_.str();
  int kline = line_of(key);
  int kcol = key.Mark().column;
  size_t colon = offset_of(key);
  if (colon < s.size() && (s[colon] == '"' || s[colon] == '\'')) colon = s.find(s[colon], colon + 1);
  colon = colon == std::string_view::npos ? colon : s.find(':', colon);
  if (colon == std::string_view::npos || colon >= t_.end(kline)) return unsupported(key, "a key spread over lines");
  Rendered r = render(new_text, kcol, t_.eol());
  size_t vs = offset_of(value);
  if (value.IsNull() && (line_of(value) != kline || vs <= colon)) {  // `debug_string:` with no value
    edits_.push_back({colon + 1, colon + 1, " " + r.header});
    content_edit(t_.next(kline), t_.next(kline), t_.has_break(kline) ? "" : t_.eol(), r);
    return absl::OkStatus();
  }
  size_t p = vs;
  while (p < s.size() && (s[p] == '!' || s[p] == '&')) {  // a tag or an anchor
    while (p < s.size() && s[p] != ' ' && s[p] != '\n') ++p;
    while (p < s.size() && s[p] == ' ') ++p;
  }
  char c = p < s.size() ? s[p] : '\0';
  size_t ve = p;          // the end of the value's text on the header line...
  int last_line = kline;  // ...and its last line
  size_t content_begin = t_.next(kline), content_end = content_begin;
  if (c == '|' || c == '>') {
    int explicit_indent = 0;
    for (ve = p + 1; ve < s.size() && (std::isdigit(static_cast<unsigned char>(s[ve])) || s[ve] == '+' || s[ve] == '-');
         ++ve) {
      if (s[ve] >= '1' && s[ve] <= '9') explicit_indent = s[ve] - '0';
    }
    int hline = t_.line_of(p);
    int content_indent = explicit_indent ? kcol + explicit_indent : -1;
    content_begin = content_end = t_.next(hline);
    for (int l = hline + 1; l < t_.lines(); ++l) {
      if (t_.blank(l)) {  // an empty line, or content when it has spaces past the indentation
        if (content_indent >= 0 && t_.indent(l) > content_indent) content_end = t_.next(l);
        continue;
      }
      if (content_indent < 0) content_indent = std::max(t_.indent(l), kcol + 1);
      if (t_.indent(l) < content_indent) break;
      content_end = t_.next(l);
    }
    edits_.push_back({vs, ve, r.header});
    content_edit(content_begin, content_end, t_.has_break(hline) ? "" : t_.eol(), r);
    return absl::OkStatus();
  }
  if (c == '[' || c == '{') return unsupported(value, "a debug_string that is not a string");
  if (c == '"' || c == '\'') {
    for (ve = p + 1; ve < s.size(); ++ve) {
      if (c == '"' && s[ve] == '\\')
        ++ve;
      else if (s[ve] == c && c == '\'' && ve + 1 < s.size() && s[ve + 1] == '\'')
        ++ve;
      else if (s[ve] == c)
        break;
    }
    ve = std::min(ve + 1, s.size());
    last_line = t_.line_of(ve == 0 ? 0 : ve - 1);
  } else {  // a plain scalar: up to ` #` or the end of the line, then more-indented lines
    auto plain_end = [&](int line, size_t from) {
      size_t e = from;
      for (size_t i = from; i < t_.end(line); ++i) {
        if (s[i] == '#' && i > from && (s[i - 1] == ' ' || s[i - 1] == '\t')) break;
        if (s[i] != ' ' && s[i] != '\t') e = i + 1;
      }
      return e;
    };
    ve = plain_end(t_.line_of(p), p);
    last_line = t_.line_of(p);
    for (int l = last_line + 1; l < t_.lines(); ++l) {
      if (t_.blank(l)) continue;
      if (t_.indent(l) <= kcol || t_.comment(l)) break;
      ve = plain_end(l, t_.start(l)), last_line = l;
    }
  }
  edits_.push_back({vs, ve, r.header});
  content_edit(t_.next(last_line), t_.next(last_line), t_.has_break(last_line) ? "" : t_.eol(), r);
  return absl::OkStatus();
}

// insert_key: adds `debug_string:` at column key_col (after prefix, e.g.
// "expect:") at the end of the block mapping map, whose entries sit at
// column map_col; map may also be empty (null or {}), after map_key.
absl::Status Rewriter::insert_key(const Node& map_key, const Node& map, int map_col, int key_col, std::string prefix,
                                  const std::string& new_text) {
  std::string_view s = t_.str();
  int last;
  if (map.IsMap() && map.size() > 0) {
    if (s[offset_of(map)] == '{') return unsupported(map, "a mapping in flow style ({...}); write it in block style");
    last = end_of_block(line_of(map), map_col);
  } else if (map.IsNull() || (map.IsMap() && s.substr(offset_of(map), 2) == "{}")) {
    last = line_of(map_key);
    if (map.IsMap()) edits_.push_back({offset_of(map), offset_of(map) + 2, ""});
  } else {
    return unsupported(map, "a value that is not a mapping");
  }
  Rendered r = render(new_text, key_col, t_.eol());
  prefix = str_cat(t_.has_break(last) ? "" : t_.eol(), prefix, std::string(key_col, ' '), "debug_string: ", r.header,
                   t_.eol());
  content_edit(t_.next(last), t_.next(last), prefix, r);
  return absl::OkStatus();
}

absl::Status Rewriter::add(const Node& root, const std::string& name, const std::string& new_text) {
  auto c = find_case(root, name, file_);
  if (!c.ok()) return c.status();
  if (!c->IsMap()) return unsupported(*c, "a case that is not a mapping");
  if (t_.str()[offset_of(*c)] == '{') return unsupported(*c, "a case in flow style ({...}); write it in block style");
  auto expect = find_entry(*c, "expect");
  if (!expect) {
    int col = c->Mark().column;
    return insert_key(find_entry(*c, "name")->first, *c, col, col + 2,
                      str_cat(std::string(col, ' '), "expect:", t_.eol()), new_text);
  }
  const Node& x = expect->second;
  bool block_map = x.IsMap() && x.size() > 0;
  if (block_map && t_.str()[offset_of(x)] == '{') {
    return unsupported(x, "an expect in flow style ({...}); write it in block style");
  }
  if (auto d = find_entry(x, "debug_string")) return replace_value(d->first, d->second, new_text);
  int col = block_map ? x.Mark().column : expect->first.Mark().column + 2;
  return insert_key(expect->first, x, col, col, "", new_text);
}

absl::StatusOr<std::string> Rewriter::apply() {
  std::stable_sort(edits_.begin(), edits_.end(),
                   [](const Edit& a, const Edit& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::string out;
  size_t pos = 0;
  for (const Edit& e : edits_) {
    if (e.begin < pos) return absl::InternalError(str_cat(file_, ": error: overlapping debug_string edits"));
    out.append(t_.str().substr(pos, e.begin - pos));
    out += e.text;
    pos = e.end;
  }
  out.append(t_.str().substr(pos));
  return out;
}

}  // namespace

absl::StatusOr<std::string> rewrite_debug_strings(
    std::string_view yaml_text, std::string_view file_name,
    const std::vector<std::pair<std::string, std::string>>& case_to_new_text) {
  Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(
        str_cat(file_name, ":", ex.mark.line + 1, ":", ex.mark.column + 1, ": error: ", ex.msg));
  }
  Rewriter rw(yaml_text, file_name);
  try {
    for (const auto& [name, text] : case_to_new_text) {
      if (absl::Status st = rw.add(root, name, text); !st.ok()) return st;
    }
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(str_cat(file_name, ": error: cannot accept: ", ex.what()));
  }
  auto out = rw.apply();
  if (!out.ok()) return out.status();
  // Read it back: every case must hold exactly its new text.
  try {
    Node again = YAML::Load(*out);
    for (const auto& [name, text] : case_to_new_text) {
      auto c = find_case(again, name, file_name);
      std::optional<std::pair<Node, Node>> d;
      if (c.ok()) {
        if (auto e = find_entry(*c, "expect")) d = find_entry(e->second, "debug_string");
      }
      if (!d || !d->second.IsScalar() || d->second.Scalar() != text) {
        return absl::InternalError(
            str_cat(file_name, ": error: accepting case '", name, "' would not read back its text; file left as is"));
      }
    }
  } catch (const YAML::Exception& ex) {
    return absl::InternalError(
        str_cat(file_name, ": error: accepting would break the file (", ex.what(), "); file left as is"));
  }
  return out;
}

absl::Status accept_debug_strings(const std::string& file,
                                  const std::vector<std::pair<std::string, std::string>>& case_to_new_text) {
  if (case_to_new_text.empty()) return absl::OkStatus();
  std::ifstream in(file, std::ios::binary);
  if (!in) return absl::NotFoundError(str_cat(file, ": error: cannot read the file"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string original = ss.str();
  auto updated = rewrite_debug_strings(original, file, case_to_new_text);
  if (!updated.ok()) return updated.status();
  if (*updated == original) return absl::OkStatus();
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    return static_cast<bool>(out);
  };
  if (!write(file + ".orig", original))
    return absl::InternalError(str_cat(file, ".orig: error: cannot write the backup"));
  if (!write(file, *updated)) return absl::InternalError(str_cat(file, ": error: cannot write the file"));
  return absl::OkStatus();
}

}  // namespace opspec::spec
