// yaml_reader.cc: typed, position-keeping YAML reads. See
// harness/spec/internal/yaml_reader.h and Note [Hostile input].
#include "harness/spec/internal/yaml_reader.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <sstream>
#include <tuple>

#include <yaml-cpp/eventhandler.h>

#include "absl/strings/numbers.h"
#include "harness/spec/spec_loader.h"
#include "runtime/core/device.h"
#include "runtime/core/did_you_mean.h"

namespace opspec::spec::internal {
namespace {

// Note [Hostile input]
// The loader runs on untrusted text (and under a fuzzer), so it never
// recurses over the YAML tree generically: it walks the schema, which bounds
// the depth, and so an alias cycle (`&a [*a]`, which yaml-cpp builds as a
// cyclic node) is just a value of the wrong type. yaml-cpp's own parser
// recurses once per nesting level; flow collections nest one level per byte,
// so nesting is measured before parsing and rejected past kMaxNesting.
// YAML::LoadAll can loop forever on malformed input, so it is not used. Every
// yaml-cpp exception is caught, numbers are parsed by hand with range checks,
// and shapes are bounded by kMaxSpecNumel. An alias shares its node in
// yaml-cpp's tree but the loader copies what it reads through one, so aliases
// of aliases (or a 4 MB program named by 2,000 cases) made a 4 MB file take
// 24 GB; and a literal node costs yaml-cpp ~480 bytes. So a streaming pass
// (no tree) first counts the nodes and scalar bytes the document holds with
// its aliases expanded, and refuses it past kMaxSpecYamlNodes or
// kMaxSpecYamlBytes, at the alias or node that crosses the line.

using YAML::Node;

bool is_special_float(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  for (std::string_view w : {".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "inf", "nan"}) {
    if (s == w) return true;
  }
  return false;
}

bool is_float_text(std::string_view s) {
  if (is_special_float(s)) return true;
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    size_t exp = 0;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i, ++exp;
    if (exp == 0) return false;
  }
  return i == s.size();
}


// nesting_too_deep: the position where flow collections or `- - -` chains
// first nest deeper than kMaxNesting, if they do. Brackets count only where
// YAML reads them as flow indicators: inside a flow collection, or where a
// value starts (after `: `, `- `, `? `, or as a line's first text); brackets in
// quoted scalars, plain scalars, block scalars (`|`, `>`) and comments are
// text (`"shape '\\[3"` in 70 cases once added up past the limit). See Note
// [Hostile input].
std::optional<Pos> nesting_too_deep(std::string_view text) {
  int depth = 0;             // open flow collections
  char quote = 0;            // the quote of the quoted scalar we are in, if any
  int block_indent = -1;     // >= 0: in a block scalar under a line of this indentation
  Pos p;
  for (size_t start = 0; start < text.size(); ++p.line) {
    const size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = text.substr(start, end - start);
    start = end + 1;
    const size_t indent = std::min(line.find_first_not_of(' '), line.size());
    if (block_indent >= 0) {
      if (indent == line.size() || static_cast<int>(indent) > block_indent) continue;  // block scalar text
      block_indent = -1;
    }
    bool value_start = true;  // the next non-space character starts a value
    int dashes = 0;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      p.col = static_cast<int>(i) + 1;
      if (quote != 0) {
        if (quote == '"' && c == '\\') {
          ++i;  // an escaped character, \" included
        } else if (c == quote) {
          if (quote == '\'' && i + 1 < line.size() && line[i + 1] == '\'') {
            ++i;  // '' stands for ' in a single-quoted scalar
          } else {
            quote = 0;
            value_start = false;
          }
        }
        continue;
      }
      if (c == ' ' || c == '\t') continue;
      if (c == '#' && (i == 0 || line[i - 1] == ' ' || line[i - 1] == '\t')) break;  // a comment
      const bool flow = depth > 0;
      const bool next_blank = i + 1 == line.size() || line[i + 1] == ' ' || line[i + 1] == '\t';
      if (c == '-' && value_start && !flow && next_blank) {
        if (++dashes > kMaxNesting) return p;  // `- - -`: block sequences nested on one line
        continue;
      }
      if ((value_start || flow) && (c == '[' || c == '{')) {
        if (++depth > kMaxNesting) return p;
        value_start = true;
        continue;
      }
      if (flow && (c == ']' || c == '}')) {
        --depth;
        value_start = false;
        continue;
      }
      if (value_start && (c == '&' || c == '!')) {  // an anchor or tag: the value follows it
        while (i + 1 < line.size() && line[i + 1] != ' ' && line[i + 1] != '\t' && line[i + 1] != ',' &&
               line[i + 1] != '[' && line[i + 1] != '{') {  // (counting a bracket too many is the safe side)
          ++i;
        }
        continue;
      }
      if ((value_start || flow) && (c == '"' || c == '\'')) {
        quote = c;
        continue;
      }
      if (value_start && !flow && (c == '|' || c == '>')) {
        block_indent = static_cast<int>(indent);
        break;
      }
      // After `: `, `? ` or (in a flow collection) `,`, a value starts.
      value_start = ((c == ':' || c == '?') && (next_blank || flow)) || (flow && c == ',');
    }
  }
  return std::nullopt;
}

// second_document: where a second YAML document starts (a `---` or content
// after a `...` at column 1, once the first document has content), if any.
std::optional<Pos> second_document(std::string_view text) {
  bool content = false, ended = false;
  int line = 0;
  for (size_t start = 0; start < text.size(); ++line) {
    size_t end = std::min(text.find('\n', start), text.size());
    std::string_view l = text.substr(start, end - start);
    start = end + 1;
    auto marker = [&](std::string_view m) {
      return l.starts_with(m) && (l.size() == 3 || l[3] == ' ' || l[3] == '\t' || l[3] == '\r');
    };
    size_t first = l.find_first_not_of(" \t\r");
    bool blank = first == std::string_view::npos || l[first] == '#';
    if (marker("---")) {
      if (content || ended) return Pos{line + 1, 1};
      std::string_view rest = l.substr(3);
      size_t r = rest.find_first_not_of(" \t\r");
      content = r != std::string_view::npos && rest[r] != '#';
    } else if (marker("...")) {
      ended = ended || content;
    } else if (!blank && !(l.starts_with('%') && !content)) {
      if (ended) return Pos{line + 1, 1};
      content = true;
    }
  }
  return std::nullopt;
}

// ExpansionCounter: yaml-cpp events in, the document's size with aliases
// expanded out; stops (throws Crossed) at the first node past a limit. See
// Note [Hostile input].
class ExpansionCounter : public YAML::EventHandler {
 public:
  struct Crossed {
    Pos pos;
    bool alias;
    bool bytes;  // the byte limit, not the node limit
  };

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t a) override { leaf(m, a, 1, 0); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t a, const std::string& v) override {
    leaf(m, a, 1, static_cast<int64_t>(v.size()));
  }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    // An anchor still open is a cycle (`&a [*a]`): the loader meets it as a
    // value of the wrong type, one node.
    Size s = a < done_.size() && done_[a].nodes > 0 ? done_[a] : Size{1, 0};
    add(m, s, true);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnSequenceEnd() override { close(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    open(m, a);
  }
  void OnMapEnd() override { close(); }

 private:
  struct Size {
    int64_t nodes = 0;
    int64_t bytes = 0;
  };
  struct Frame {
    YAML::anchor_t anchor;
    Size size;  // this collection's subtree so far
  };

  void add(const YAML::Mark& m, Size s, bool alias) {
    total_.nodes += s.nodes;
    total_.bytes += s.bytes;
    if (!stack_.empty()) {
      stack_.back().size.nodes += s.nodes;
      stack_.back().size.bytes += s.bytes;
    }
    if (total_.nodes > kMaxSpecYamlNodes || total_.bytes > kMaxSpecYamlBytes) {
      throw Crossed{{m.line + 1, m.column + 1}, alias, total_.nodes <= kMaxSpecYamlNodes};
    }
  }
  void record(YAML::anchor_t a, Size s) {
    if (a == YAML::NullAnchor) return;
    if (a >= done_.size()) done_.resize(a + 1);
    done_[a] = s;
  }
  void leaf(const YAML::Mark& m, YAML::anchor_t a, int64_t nodes, int64_t bytes) {
    add(m, {nodes, bytes}, false);
    record(a, {nodes, bytes});
  }
  void open(const YAML::Mark& m, YAML::anchor_t a) {
    add(m, {1, 0}, false);
    stack_.push_back({a, {1, 0}});
  }
  void close() {
    Frame f = stack_.back();
    stack_.pop_back();
    record(f.anchor, f.size);
    if (!stack_.empty()) {  // the node itself was counted into the parent at open()
      stack_.back().size.nodes += f.size.nodes - 1;
      stack_.back().size.bytes += f.size.bytes;
    }
  }

  std::vector<Frame> stack_;
  std::vector<Size> done_;  // by anchor id (yaml-cpp numbers them from 1)
  Size total_;
};

// too_large_expanded: an error where the document, aliases expanded, first
// holds more than kMaxSpecYamlNodes nodes or kMaxSpecYamlBytes scalar bytes.
// Malformed YAML throws YAML::Exception, as YAML::Load would.
std::optional<Diag> too_large_expanded(std::string_view text) {
  // Without an alias the counts are bounded by the text (a node takes a byte
  // or more), so a small file skips the pass: it doubled the parse of the
  // shipped specs, where 3 files in 62 use aliases. '*' starts an alias only
  // where a node starts, after one of these and before a name.
  bool alias = false;
  for (size_t i = 0; i + 1 < text.size() && !alias; ++i) {
    alias = text[i + 1] == '*' && std::string_view(" \t\r\n[{,:").find(text[i]) != std::string_view::npos &&
            i + 2 < text.size() && std::string_view(" \t\r\n").find(text[i + 2]) == std::string_view::npos;
  }
  if (!alias && !text.starts_with('*') && static_cast<int64_t>(text.size()) < kMaxSpecYamlNodes / 2) return std::nullopt;
  std::istringstream in{std::string(text)};
  YAML::Parser parser(in);
  ExpansionCounter counter;
  try {
    parser.HandleNextDocument(counter);
  } catch (const ExpansionCounter::Crossed& c) {
    std::string what = c.bytes ? str_cat(kMaxSpecYamlBytes, " bytes of scalar text (kMaxSpecYamlBytes)")
                               : str_cat(kMaxSpecYamlNodes, " YAML nodes (kMaxSpecYamlNodes)");
    if (c.alias) {
      return Diag{c.pos, str_cat("this alias takes the file past ", what,
                                 " once aliases are expanded: each alias counts all it names")};
    }
    return Diag{c.pos, str_cat("the file holds more than ", what,
                               c.bytes ? "" : "; values are written by hand: give a large input an init: instead")};
  }
  return std::nullopt;
}

}  // namespace

bool is_int_text(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

std::optional<bool> bool_text(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

Kind kind_of(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return Kind::kNull;
  if (n.IsSequence()) return Kind::kSeq;
  if (n.IsMap()) return Kind::kMap;
  const std::string& tag = n.Tag();
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return Kind::kString;
  const std::string& s = n.Scalar();
  if (bool_text(s)) return Kind::kBool;
  if (is_int_text(s)) return Kind::kInt;
  if (is_float_text(s)) return Kind::kFloat;
  return Kind::kString;
}

std::string_view kind_name(Kind k) {
  switch (k) {
    case Kind::kNull: return "null";
    case Kind::kBool: return "a boolean";
    case Kind::kInt: return "an integer";
    case Kind::kFloat: return "a float";
    case Kind::kString: return "a string";
    case Kind::kSeq: return "a sequence";
    case Kind::kMap: return "a mapping";
  }
  return "?";
}

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

YamlReader::YamlReader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n') line_starts_.push_back(i + 1);
  }
}

std::optional<YAML::Node> YamlReader::load_document() {
  if (auto p = nesting_too_deep(text_)) {
    error(*p, str_cat("nesting deeper than ", kMaxNesting, " levels"));
    return std::nullopt;
  }
  try {
    // YAML::LoadAll loops forever on some malformed input (yaml-cpp issue
    // #1040, e.g. a lone ","), so only the first document is parsed and a
    // second one is found by its marker.
    if (auto big = too_large_expanded(text_)) {
      errors_.push_back(std::move(*big));
      return std::nullopt;
    }
    Node root = YAML::Load(std::string(text_));
    if (auto second = second_document(text_)) {
      error(*second, "a spec file holds one YAML document; this starts a second one");
    } else if (kind_of(root) == Kind::kNull) {
      error({1, 1}, "the file holds no YAML document; a spec file is a mapping with a 'cases' list");
    } else {
      return root;
    }
  } catch (const YAML::Exception& ex) {
    Pos p = ex.mark.is_null() || ex.mark.line < 0 ? Pos{} : Pos{ex.mark.line + 1, ex.mark.column + 1};
    error(p, ex.msg);
  } catch (const std::exception& ex) {
    error({1, 1}, str_cat("cannot read the file: ", ex.what()));
  }
  return std::nullopt;
}

Pos YamlReader::pos_of(const YAML::Node& n, Pos fallback) const {
  YAML::Mark m = n.Mark();
  if (m.is_null() || m.line < 0 || m.column < 0) return fallback;
  return {m.line + 1, m.column + 1};
}

Pos YamlReader::val_pos(const Entry& e) const {
  Pos k = key_pos(e);
  if (kind_of(e.value) == Kind::kNull) {
    Pos v = pos_of(e.value, k);
    return v.line == k.line ? v : k;
  }
  return pos_of(e.value, k);
}

std::optional<MapView> YamlReader::read_map(const Node& n, Pos where, std::string_view label, std::string_view context,
                                        Names allowed) {
  Kind k = kind_of(n);
  if (k != Kind::kMap) {
    error(where, str_cat(label, " must be a mapping, got ", kind_name(k)));
    return std::nullopt;
  }
  MapView view;
  view.pos = pos_of(n, where);
  for (auto it = n.begin(); it != n.end(); ++it) {
    Entry e{it->first, it->second, ""};
    Pos kp = pos_of(e.key, view.pos);
    Kind kk = kind_of(e.key);
    if (kk == Kind::kSeq || kk == Kind::kMap || kk == Kind::kNull) {
      error(kp, str_cat("keys must be names, got ", kind_name(kk), " ", context));
      continue;
    }
    e.name = e.key.Scalar();
    if (allowed.size() != 0 && std::find(allowed.begin(), allowed.end(), e.name) == allowed.end()) {
      view.had_unknown = true;
      error(kp, str_cat("unknown key '", e.name, "' ", context, did_you_mean(e.name, allowed),
                        " (allowed: ", join(allowed, ", "), ")"));
      continue;
    }
    if (const Entry* first = view.get(e.name)) {
      Pos fp = key_pos(*first);
      error(kp,
            str_cat("duplicate key '", e.name, "' ", context, " (first at line ", fp.line, ", column ", fp.col, ")"));
      continue;
    }
    view.index.emplace(e.name, view.entries.size());
    view.entries.push_back(std::move(e));
  }
  return view;
}

std::optional<int64_t> YamlReader::get_int(const Entry& e, int64_t lo, int64_t hi) {
  Kind k = kind_of(e.value);
  Pos p = val_pos(e);
  if (k != Kind::kInt) {
    error(p, str_cat("'", e.name, "' must be an integer, got ", kind_name(k)));
    return std::nullopt;
  }
  std::string s = e.value.Scalar();
  if (!s.empty() && s[0] == '+') s.erase(0, 1);
  int64_t v = 0;
  if (!absl::SimpleAtoi(s, &v) || v < lo || v > hi) {
    if (lo == 0 && !s.empty() && s[0] == '-') {
      error(p, str_cat("'", e.name, "' must be non-negative, got ", s));
    } else {
      error(p, str_cat("'", e.name, "' is out of range: ", s, " is not in [", lo, ", ", hi, "]"));
    }
    return std::nullopt;
  }
  return v;
}

std::optional<double> YamlReader::get_double(const Node& v, Pos p, std::string_view what, bool finite) {
  Kind k = kind_of(v);
  if (k != Kind::kInt && k != Kind::kFloat) {
    error(p, str_cat(what, " must be a number, got ", kind_name(k)));
    return std::nullopt;
  }
  std::string s = v.Scalar();
  std::string t = s;
  if (!t.empty() && (t[0] == '-' || t[0] == '+')) t.erase(0, 1);
  double d = 0;
  if (t[0] == '.' && is_special_float(t)) {
    d = (t[1] == 'n' || t[1] == 'N') ? std::numeric_limits<double>::quiet_NaN()
                                     : std::numeric_limits<double>::infinity();
    if (s[0] == '-') d = -d;
  } else if (!absl::SimpleAtod(s, &d)) {
    error(p, str_cat(what, " is not a valid number: ", s));
    return std::nullopt;
  }
  if (std::isinf(d) && !is_special_float(s)) {
    error(p, str_cat(what, " is out of range: ", s));
    return std::nullopt;
  }
  if (finite && !std::isfinite(d)) {
    error(p, str_cat(what, " must be finite, got ", s));
    return std::nullopt;
  }
  return d;
}

std::optional<bool> YamlReader::get_bool(const Entry& e) {
  Kind k = kind_of(e.value);
  if (k != Kind::kBool) {
    error(val_pos(e), str_cat("'", e.name, "' must be a boolean (true or false), got ", kind_name(k)));
    return std::nullopt;
  }
  return bool_text(e.value.Scalar());
}

std::optional<std::string> YamlReader::get_string(const Node& v, Pos p, std::string_view what) {
  Kind k = kind_of(v);
  if (k == Kind::kNull || k == Kind::kSeq || k == Kind::kMap) {
    error(p, str_cat(what, " must be a string, got ", kind_name(k)));
    return std::nullopt;
  }
  return v.Scalar();
}

std::optional<std::vector<std::string>> YamlReader::get_string_list(const Entry& e) {
  Kind k = kind_of(e.value);
  Pos p = val_pos(e);
  if (k != Kind::kSeq) {
    error(p, str_cat("'", e.name, "' must be a list of strings, got ", kind_name(k)));
    return std::nullopt;
  }
  std::vector<std::string> out;
  bool ok = true;
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    auto s = get_string(*it, pos_of(*it, p), str_cat("an entry of '", e.name, "'"));
    if (s) out.push_back(*s);
    ok = ok && s.has_value();
  }
  if (!ok) return std::nullopt;
  return out;
}

std::optional<DType> YamlReader::get_dtype(const Entry& e) {
  auto s = get_string(e);
  if (!s) return std::nullopt;
  if (auto d = parse_dtype(*s)) return d;
  static const std::vector<std::string_view> kNames = {"f32", "f64", "f16", "bf16", "i64", "i32", "b8"};
  static const std::vector<std::string_view> kAllNames = {
      "f32",      "f64",   "f16",   "bf16", "i64",   "i32",    "b8",   "float32", "float64", "float16",
      "bfloat16", "int64", "int32", "bool", "float", "double", "half", "long",    "int"};
  error(val_pos(e), str_cat("unknown dtype '", *s, "'", did_you_mean(*s, kAllNames), " (allowed: ", join(kNames, ", "),
                            ", or torch names like float32)"));
  return std::nullopt;
}

bool YamlReader::check_device(const std::string& d, Pos p) {
  try {
    (void)Device::parse(d);
    return true;
  } catch (const std::exception&) {
    error(p, str_cat("unknown device '", d, "' (allowed: cpu, cuda, cuda:N, meta)"));
    return false;
  }
}

// Note [Program positions]
// A literal block (|) is the file's text line for line, so a position in the
// program is one in the file. A quoted, folded (>) or multi-line plain scalar
// is not in general: escapes change columns and folding joins or drops lines.
// Such a scalar is mapped exactly when its value is the file's text at the
// mapped places (checked, not assumed); otherwise errors point at where its
// text starts, which stays clickable and true, and give the program's own
// line:col: "a.yaml:4:14: in the program (a double-quoted scalar) at 2:8: ...".

// verbatim: whether value is the file's text from first_line at column
// offset col0 (0-based), line for line (each value line a prefix of its file
// line there, so every position in it maps exactly).
bool YamlReader::verbatim(std::string_view value, int first_line, int col0) const {
  size_t start = 0;
  for (int line = first_line;; ++line) {
    const size_t end = std::min(value.find('\n', start), value.size());
    if (line < 1 || line > static_cast<int>(line_starts_.size())) return false;
    const size_t from = line_starts_[line - 1] + static_cast<size_t>(col0);
    if (from > text_.size() || text_.substr(from, end - start) != value.substr(start, end - start)) return false;
    if (end == value.size()) return true;
    start = end + 1;
  }
}

// block_origin: see the header.
ProgramOrigin YamlReader::block_origin(const Entry& e) const {
  ProgramOrigin o;
  o.file = file_;
  Pos vp = val_pos(e);
  // Offsets from line/column (yaml-cpp's pos does not count a byte-order mark).
  size_t line_start = vp.line - 1 < static_cast<int>(line_starts_.size()) ? line_starts_[vp.line - 1] : text_.size();
  size_t off = std::min(line_start + vp.col - 1, text_.size());
  int col = vp.col - 1;                                                     // 0-based
  while (off < text_.size() && (text_[off] == '!' || text_[off] == '&')) {  // a tag or an anchor
    while (off < text_.size() && text_[off] != ' ' && text_[off] != '\n') ++off, ++col;
    while (off < text_.size() && text_[off] == ' ') ++off, ++col;
  }
  char c = off < text_.size() ? text_[off] : '\0';
  o.first_line = vp.line;
  o.column_offset = col;
  const std::string value = e.value.IsScalar() ? e.value.Scalar() : "";
  std::string_view trimmed = value;  // a block's final newlines: no position is in them
  while (!trimmed.empty() && trimmed.back() == '\n') trimmed.remove_suffix(1);
  if (c == '"' || c == '\'') {
    // One line, no escapes ('' in single quotes) and the closing quote right after: the file's text.
    o.column_offset = col + 1;
    const bool plain_text = value.find_first_of(c == '"' ? "\n\\" : "\n'") == std::string::npos &&
                            off + 1 + value.size() < text_.size() && text_[off + 1 + value.size()] == c;
    if (!plain_text || !verbatim(value, o.first_line, o.column_offset)) {
      o.unmapped = c == '"' ? "a double-quoted scalar" : "a single-quoted scalar";
    }
  } else if (c == '|' || c == '>') {
    // A block scalar: its text starts on the next line, at the block's indentation.
    o.first_line = vp.line + 1;
    int explicit_indent = 0;
    size_t i = off + 1;
    for (; i < text_.size() && text_[i] != '\n' && text_[i] != ' ' && text_[i] != '#'; ++i) {
      if (text_[i] >= '1' && text_[i] <= '9') explicit_indent = text_[i] - '0';
    }
    if (explicit_indent > 0) {
      o.column_offset = key_pos(e).col - 1 + explicit_indent;
    } else {
      while (i < text_.size() && text_[i] != '\n') ++i;
      while (i < text_.size()) {  // the first non-blank line sets the indentation
        size_t start = ++i;
        while (i < text_.size() && text_[i] == ' ') ++i;
        if (i < text_.size() && text_[i] != '\n') {
          o.column_offset = static_cast<int>(i - start);
          break;
        }
      }
    }
    if (c == '>' && !verbatim(trimmed, o.first_line, o.column_offset)) o.unmapped = "a folded scalar";
  } else if (!verbatim(trimmed, o.first_line, o.column_offset)) {
    o.unmapped = "a plain scalar on several lines";
  }
  return o;
}

std::optional<std::string> YamlReader::take_errors_since(size_t mark) {
  if (errors_.size() <= mark) return std::nullopt;
  std::vector<Diag> taken(errors_.begin() + static_cast<std::ptrdiff_t>(mark), errors_.end());
  errors_.resize(mark);
  return format_errors(std::move(taken));
}

absl::Status YamlReader::finish() const { return absl::InvalidArgumentError(format_errors(errors_)); }

std::string YamlReader::format_errors(std::vector<Diag> errors) const {
  std::stable_sort(errors.begin(), errors.end(), [](const Diag& a, const Diag& b) {
    return std::tie(a.pos.line, a.pos.col) < std::tie(b.pos.line, b.pos.col);
  });
  errors.erase(std::unique(errors.begin(), errors.end(),
                           [](const Diag& a, const Diag& b) {
                             return a.pos.line == b.pos.line && a.pos.col == b.pos.col && a.message == b.message;
                           }),
               errors.end());
  std::string out;
  for (size_t i = 0; i < errors.size() && i < kMaxReportedErrors; ++i) {
    str_append(&out, i ? "\n" : "", loc(errors[i].pos), ": error: ", errors[i].message);
  }
  if (errors.size() > kMaxReportedErrors) {
    str_append(&out, "\n", file_, ": error: ", errors.size() - kMaxReportedErrors, " more errors not shown");
  }
  return out;
}

}  // namespace opspec::spec::internal
