// spec_accept.cc: rewrites golden debug strings in spec files.
// See Note [Accepting debug strings].
#include "harness/spec/spec_accept.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <variant>

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
  size_t group = 0;  // the case it accepts into (Rewriter::add's group)
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

// Overlap: two cases' edits of one text (at line, 0-based): apply's error.
struct Overlap {
  size_t a, b;
  int line;
};

class Rewriter {
 public:
  Rewriter(std::string_view text, std::string_view file) : t_(text), file_(file) {}

  // add: the edits that give case name the text, tagged group; none on an error.
  absl::Status add(const Node& root, const std::string& name, const std::string& new_text, size_t group);
  std::variant<std::string, Overlap> apply();

 private:
  absl::Status add_edits(const Node& root, const std::string& name, const std::string& new_text);
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

absl::Status Rewriter::add(const Node& root, const std::string& name, const std::string& new_text, size_t group) {
  const size_t before = edits_.size();
  absl::Status st;
  try {
    st = add_edits(root, name, new_text);
  } catch (const YAML::Exception& ex) {
    st = absl::InvalidArgumentError(str_cat(file_, ": error: cannot accept into case '", name, "': ", ex.what()));
  }
  if (!st.ok()) {
    edits_.resize(before);
    return st;
  }
  for (size_t i = before; i < edits_.size(); ++i) edits_[i].group = group;
  return absl::OkStatus();
}

absl::Status Rewriter::add_edits(const Node& root, const std::string& name, const std::string& new_text) {
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

std::variant<std::string, Overlap> Rewriter::apply() {
  std::stable_sort(edits_.begin(), edits_.end(),
                   [](const Edit& a, const Edit& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  std::string out;
  size_t pos = 0;
  for (size_t i = 0; i < edits_.size(); ++i) {
    const Edit& e = edits_[i];
    if (e.begin < pos) return Overlap{edits_[i - 1].group, e.group, t_.line_of(e.begin)};
    out.append(t_.str().substr(pos, e.begin - pos));
    out += e.text;
    pos = e.end;
  }
  out.append(t_.str().substr(pos));
  return out;
}

// Group: the updates of one case, a run per device it ran on.
struct Group {
  std::string name;
  std::vector<size_t> updates;  // indices into the updates
  absl::Status refused;         // why the case takes no new text (ok: it does)
};

// first_difference: where texts a and b (which differ) first differ: the
// line, and both lines from a little before the difference.
std::string first_difference(std::string_view a, std::string_view b) {
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  const size_t nl = i == 0 ? std::string_view::npos : a.rfind('\n', i - 1);  // a and b agree up to i
  const size_t from = nl == std::string_view::npos ? 0 : nl + 1;
  const size_t skip = i - from > 40 ? i - from - 20 : 0;  // a long line: from near the difference
  const auto excerpt = [&](std::string_view t) {
    std::string_view l = t.substr(std::min(from, t.size()));
    l = l.substr(0, l.find('\n')).substr(std::min(skip, l.size()));
    return str_cat("`", skip > 0 ? "..." : "", l.substr(0, 60), l.size() > 60 ? "..." : "", "`");
  };
  const auto line_no = std::count(a.begin(), a.begin() + static_cast<std::ptrdiff_t>(from), '\n') + 1;
  return str_cat("line ", line_no, ": ", excerpt(a), " vs ", excerpt(b));
}

// disagreement: why a case whose runs (one per device) produced different
// texts takes none: its one golden could hold only one of them.
absl::Status disagreement(const Node& root, const Group& g, const std::vector<GoldenUpdate>& updates,
                          std::string_view file) {
  std::vector<std::vector<size_t>> kinds;  // the runs, by the text they produced
  for (size_t u : g.updates) {
    auto same = std::find_if(kinds.begin(), kinds.end(),
                             [&](const std::vector<size_t>& k) { return updates[k[0]].text == updates[u].text; });
    if (same == kinds.end()) kinds.push_back({u});
    else same->push_back(u);
  }
  if (kinds.size() < 2) return absl::OkStatus();
  const auto names = [&](const std::vector<size_t>& k) {
    std::string out;
    for (size_t u : k) str_append(&out, out.empty() ? "" : " and ", updates[u].run_id);
    return out;
  };
  // Without run ids (rewrite_debug_strings) only the first difference is told.
  const bool ids = std::all_of(g.updates.begin(), g.updates.end(), [&](size_t u) { return !updates[u].run_id.empty(); });
  std::string which;
  for (size_t k = 1; k < (ids ? kinds.size() : 2); ++k) {
    str_append(&which, k > 1 ? "; " : "", ids ? str_cat(names(kinds[0]), " vs ", names(kinds[k]), " at ") : "at ",
               first_difference(updates[kinds[0][0]].text, updates[kinds[k][0]].text));
  }
  absl::StatusOr<Node> c = find_case(root, g.name, file);
  if (!c.ok()) return c.status();
  return absl::FailedPreconditionError(
      str_cat(file, ":", c->Mark().line + 1, ":", c->Mark().column + 1, ": error: case '", g.name,
              "' has one debug_string for all its devices, and their debug strings differ (", which,
              "); give each device its own case"));
}

// same: whether two YAML values are equal (tags, scalars, order of entries).
bool same(const Node& a, const Node& b) {
  if (a.Type() != b.Type() || a.Tag() != b.Tag()) return false;
  if (a.IsScalar()) return a.Scalar() == b.Scalar();
  if (!a.IsSequence() && !a.IsMap()) return true;
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (a.IsSequence() ? !same(*i, *j) : !same(i->first, j->first) || !same(i->second, j->second)) return false;
  }
  return true;
}

// same_but: whether maps (or nulls) a and b hold the same entries, in order,
// but those with a key in skip.
bool same_but(const Node& a, const Node& b, std::initializer_list<std::string_view> skip) {
  if (!(a.IsMap() || a.IsNull()) || !(b.IsMap() || b.IsNull())) return same(a, b);
  const auto rest = [&](const Node& n) {
    std::vector<std::pair<Node, Node>> out;
    for (auto it = n.begin(); n.IsMap() && it != n.end(); ++it) {
      if (!it->first.IsScalar() || std::find(skip.begin(), skip.end(), it->first.Scalar()) == skip.end()) {
        out.emplace_back(it->first, it->second);
      }
    }
    return out;
  };
  const auto x = rest(a), y = rest(b);
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (!same(x[i].first, y[i].first) || !same(x[i].second, y[i].second)) return false;
  }
  return true;
}

// Verdict: what is wrong with a rewritten file: for the file (it does not
// parse, or more than the accepted cases changed), or per case (by group).
struct Verdict {
  std::string file;  // empty: nothing
  std::map<size_t, absl::Status> groups;
};

// verify: the rewritten file must hold every accepted case's new text and,
// but for those, the very values the original held.
Verdict verify(const Node& old_root, const std::string& text, const std::vector<Group>& groups,
               const std::vector<GoldenUpdate>& updates, std::string_view file) {
  Verdict v;
  Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& ex) {
    v.file = ex.what();
    return v;
  }
  std::map<std::string, size_t> accepted;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (groups[g].refused.ok()) accepted.emplace(groups[g].name, g);
  }
  if (!same_but(old_root, root, {"cases"})) v.file = "values outside the cases would change";
  auto old_cases = find_entry(old_root, "cases"), cases = find_entry(root, "cases");
  if (!old_cases || !old_cases->second.IsSequence()) {  // then no case took a new text
    if (!same(old_root, root)) v.file = "the file's values would change";
    return v;
  }
  if (!cases || !cases->second.IsSequence() || cases->second.size() != old_cases->second.size()) {
    v.file = "the list of cases would change";
    return v;
  }
  for (size_t i = 0; i < cases->second.size(); ++i) {
    const Node before = old_cases->second[i], after = cases->second[i];
    auto name = find_entry(before, "name");
    auto g = name && name->second.IsScalar() ? accepted.find(name->second.Scalar()) : accepted.end();
    if (g == accepted.end()) {
      if (!same(before, after)) v.file = str_cat("case ", i + 1, ", which takes no new text, would change");
      continue;
    }
    const std::string& want = updates[groups[g->second].updates[0]].text;
    auto old_expect = find_entry(before, "expect"), expect = find_entry(after, "expect");
    auto d = expect ? find_entry(expect->second, "debug_string") : std::nullopt;
    const auto where = [&] { return str_cat(file, ":", before.Mark().line + 1, ":", before.Mark().column + 1); };
    if (!same_but(before, after, {"expect"}) ||
        !same_but(old_expect ? old_expect->second : Node(), expect ? expect->second : Node(), {"debug_string"})) {
      v.groups[g->second] = absl::InternalError(
          str_cat(where(), ": error: accepting case '", g->first, "' would change more than its debug_string; ",
                  "its golden is left as is"));
    } else if (!d || !d->second.IsScalar() || d->second.Scalar() != want) {
      v.groups[g->second] = absl::InternalError(str_cat(
          where(), ": error: accepting case '", g->first, "' would not read back its text; its golden is left as is"));
    }
  }
  return v;
}

// try_rewrite: the file with the groups that pass active accepted, or what is wrong.
std::variant<std::string, Verdict> try_rewrite(const Node& root, std::string_view yaml_text, std::string_view file,
                                               const std::vector<Group>& groups,
                                               const std::vector<GoldenUpdate>& updates,
                                               const std::vector<bool>& active) {
  Rewriter rw(yaml_text, file);
  Verdict v;
  for (size_t g = 0; g < groups.size(); ++g) {
    if (!active[g]) continue;
    absl::Status st = rw.add(root, groups[g].name, updates[groups[g].updates[0]].text, g);
    if (!st.ok()) v.groups[g] = st;
  }
  if (!v.groups.empty()) return v;
  std::variant<std::string, Overlap> out = rw.apply();
  if (const Overlap* o = std::get_if<Overlap>(&out)) {
    for (size_t g : {o->a, o->b}) {  // an alias (*name) is the one way two cases reach one text
      v.groups[g] = absl::FailedPreconditionError(
          str_cat(file, ":", o->line + 1, ": error: cases '", groups[o->a].name, "' and '", groups[o->b].name,
                  "' would both rewrite this debug_string (an alias shares it); give each case its own"));
    }
    return v;
  }
  std::vector<Group> only = groups;  // verify sees the inactive as refused
  for (size_t g = 0; g < only.size(); ++g) {
    if (!active[g] && only[g].refused.ok()) only[g].refused = absl::CancelledError();
  }
  v = verify(root, std::get<std::string>(out), only, updates, file);
  if (v.file.empty() && v.groups.empty()) return std::get<std::string>(std::move(out));
  return v;
}

// rewrite_rounds: text_out, the file with every group not refused accepted;
// each round refuses the groups it can blame and tries again without them.
absl::Status rewrite_rounds(const Node& root, std::string_view yaml_text, std::string_view file_name,
                            std::vector<Group>& groups, const std::vector<GoldenUpdate>& updates,
                            std::string& text_out) {
  while (true) {
    std::vector<bool> active(groups.size());
    for (size_t g = 0; g < groups.size(); ++g) active[g] = groups[g].refused.ok();
    auto tried = try_rewrite(root, yaml_text, file_name, groups, updates, active);
    if (std::string* text = std::get_if<std::string>(&tried)) {
      text_out = std::move(*text);
      return absl::OkStatus();
    }
    Verdict& v = std::get<Verdict>(tried);
    for (auto& [g, st] : v.groups) groups[g].refused = st;
    if (!v.groups.empty()) continue;
    // The file as a whole went wrong: refuse each case that does it alone.
    bool blamed = false;
    for (size_t g = 0; g < groups.size(); ++g) {
      if (!active[g]) continue;
      std::vector<bool> one(groups.size(), false);
      one[g] = true;
      auto alone = try_rewrite(root, yaml_text, file_name, groups, updates, one);
      if (Verdict* w = std::get_if<Verdict>(&alone)) {
        groups[g].refused = !w->groups.empty()
                                ? w->groups.begin()->second
                                : absl::InternalError(str_cat(file_name, ": error: accepting case '", groups[g].name,
                                                              "' would break the file (", w->file, ")"));
        blamed = true;
      }
    }
    if (!blamed) {
      return absl::InternalError(str_cat(file_name, ": error: accepting would break the file (", v.file,
                                         "); file left as is"));
    }
  }
}

}  // namespace

absl::StatusOr<RewrittenGoldens> rewrite_goldens(std::string_view yaml_text, std::string_view file_name,
                                                 const std::vector<GoldenUpdate>& updates) {
  Node root;
  try {
    root = YAML::Load(std::string(yaml_text));
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(
        str_cat(file_name, ":", ex.mark.line + 1, ":", ex.mark.column + 1, ": error: ", ex.msg));
  }
  std::vector<Group> groups;
  std::map<std::string, size_t> by_name;
  for (size_t i = 0; i < updates.size(); ++i) {
    auto [it, added] = by_name.emplace(updates[i].case_name, groups.size());
    if (added) groups.push_back({updates[i].case_name, {}, absl::OkStatus()});
    groups[it->second].updates.push_back(i);
  }
  RewrittenGoldens out;
  try {
    for (Group& g : groups) g.refused = disagreement(root, g, updates, file_name);
    if (absl::Status st = rewrite_rounds(root, yaml_text, file_name, groups, updates, out.text); !st.ok()) return st;
  } catch (const YAML::Exception& ex) {
    return absl::InvalidArgumentError(str_cat(file_name, ": error: cannot accept: ", ex.what()));
  }
  out.outcomes.assign(updates.size(), absl::OkStatus());
  for (const Group& g : groups) {
    for (size_t u : g.updates) out.outcomes[u] = g.refused;
  }
  return out;
}

absl::StatusOr<std::string> rewrite_debug_strings(
    std::string_view yaml_text, std::string_view file_name,
    const std::vector<std::pair<std::string, std::string>>& case_to_new_text) {
  std::vector<GoldenUpdate> updates;
  for (const auto& [name, text] : case_to_new_text) updates.push_back({name, "", text});
  absl::StatusOr<RewrittenGoldens> r = rewrite_goldens(yaml_text, file_name, updates);
  if (!r.ok()) return r.status();
  // Every reason, once each: the caller fails the file's other cases with it, and they must not seem to blame.
  std::vector<std::string> why;
  size_t refused = 0;
  for (const absl::Status& st : r->outcomes) {
    if (st.ok()) continue;
    ++refused;
    if (std::find(why.begin(), why.end(), st.message()) == why.end()) why.emplace_back(st.message());
  }
  if (refused == 0) return std::move(r->text);
  const absl::Status& first = *std::find_if(r->outcomes.begin(), r->outcomes.end(), [](auto& st) { return !st.ok(); });
  if (refused == r->outcomes.size() && why.size() == 1) return first;  // the one case asked for
  std::string all;
  for (const std::string& w : why) str_append(&all, all.empty() ? "" : "; ", w);
  return absl::Status(first.code(), str_cat(file_name, ": error: nothing in the file was written, as ",
                                            why.size() == 1 ? "a case" : "cases", " cannot be accepted: ", all));
}

namespace {

absl::StatusOr<std::string> read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return absl::NotFoundError(str_cat(file, ": error: cannot read the file"));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// write_with_backup: file's new text, its original kept as `<file>.orig`.
absl::Status write_with_backup(const std::string& file, const std::string& original, const std::string& updated) {
  auto write = [](const std::string& path, const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    return static_cast<bool>(out);
  };
  if (!write(file + ".orig", original))
    return absl::InternalError(str_cat(file, ".orig: error: cannot write the backup"));
  if (!write(file, updated)) return absl::InternalError(str_cat(file, ": error: cannot write the file"));
  return absl::OkStatus();
}

}  // namespace

absl::Status accept_debug_strings(const std::string& file,
                                  const std::vector<std::pair<std::string, std::string>>& case_to_new_text) {
  if (case_to_new_text.empty()) return absl::OkStatus();
  absl::StatusOr<std::string> original = read_file(file);
  if (!original.ok()) return original.status();
  auto updated = rewrite_debug_strings(*original, file, case_to_new_text);
  if (!updated.ok()) return updated.status();
  if (*updated == *original) return absl::OkStatus();
  return write_with_backup(file, *original, *updated);
}

absl::StatusOr<std::vector<absl::Status>> accept_goldens(const std::string& file,
                                                         const std::vector<GoldenUpdate>& updates) {
  if (updates.empty()) return std::vector<absl::Status>();
  absl::StatusOr<std::string> original = read_file(file);
  if (!original.ok()) return original.status();
  absl::StatusOr<RewrittenGoldens> r = rewrite_goldens(*original, file, updates);
  if (!r.ok()) return r.status();
  if (r->text != *original) {
    if (absl::Status st = write_with_backup(file, *original, r->text); !st.ok()) return st;
  }
  return std::move(r->outcomes);
}

}  // namespace opspec::spec
