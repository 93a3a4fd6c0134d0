// debug_text_io.cc: parse_debug_string and load_debug_log. See Note [Debug text format].
#include "harness/debug_text_io.h"

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "harness/debug_log_io.h"

namespace opspec {
namespace {

// av: s as absl's string_view (a distinct type in Debian's Abseil).
absl::string_view av(std::string_view s) { return absl::string_view(s.data(), s.size()); }

// ParseError: one problem, at a column of the line being read.
struct ParseError {
  size_t column;
  std::string what;
};

// Py: a Python literal of an annotation dict (numbers, None, strings, tuples,
// lists, dicts), with the text it was read from.
struct Py {
  enum class Kind { kNone, kInt, kFloat, kString, kTuple, kList, kDict, kWord };
  Kind kind = Kind::kNone;
  double f = 0;
  uint64_t u = 0;
  std::string s;                            // kString's value, kWord's text
  std::vector<Py> items;                    // kTuple, kList; kDict: key, value, key, value, ...
  std::string text;                         // the source text
};

// As the JSON reader's kMaxHashDepth: a log's annotations nest a few levels.
constexpr int kMaxNesting = 64;

// Cursor: a position in one line.
class Cursor {
 public:
  Cursor(std::string_view line, size_t pos) : line_(line), pos_(pos) {}
  size_t pos() const { return pos_; }
  bool done() const { return pos_ >= line_.size(); }
  char peek() const { return done() ? '\0' : line_[pos_]; }
  void skip_space() {
    while (!done() && line_[pos_] == ' ') ++pos_;
  }
  bool eat(char c) {
    skip_space();
    if (peek() != c) return false;
    ++pos_;
    return true;
  }
  void expect(char c, std::string_view what) {
    if (!eat(c)) throw ParseError{pos_, str_cat("expected '", std::string(1, c), "' ", what)};
  }

  // literal: one Python literal, nested at most kMaxNesting deep (recursion
  // on a pasted line of 50,000 '[' overflowed the stack).
  Py literal(int depth = 0) {
    skip_space();
    const size_t start = pos_;
    Py v;
    const char c = peek();
    if ((c == '(' || c == '[' || c == '{') && depth >= kMaxNesting) {
      throw ParseError{start, str_cat("annotation nested deeper than ", kMaxNesting, " levels")};
    }
    if (c == '(' || c == '[') {
      const char close = c == '(' ? ')' : ']';
      v.kind = c == '(' ? Py::Kind::kTuple : Py::Kind::kList;
      ++pos_;
      while (!eat(close)) {
        if (done()) throw ParseError{start, str_cat("unclosed '", std::string(1, c), "'")};
        v.items.push_back(literal(depth + 1));
        if (!eat(',') && peek() != close) throw ParseError{pos_, str_cat("expected ',' or '", std::string(1, close), "'")};
      }
    } else if (c == '{') {
      v.kind = Py::Kind::kDict;
      ++pos_;
      while (!eat('}')) {
        if (done()) throw ParseError{start, "unclosed '{'"};
        v.items.push_back(literal(depth + 1));
        expect(':', "after a dict key");
        v.items.push_back(literal(depth + 1));
        if (!eat(',') && peek() != '}') throw ParseError{pos_, "expected ',' or '}' in a dict"};
      }
    } else if (c == '\'' || c == '"') {
      v.kind = Py::Kind::kString;
      ++pos_;
      while (true) {
        if (done()) throw ParseError{start, "unterminated string"};
        const char d = line_[pos_++];
        if (d == c) break;
        if (d == '\\' && !done()) {
          escape(v.s);
        } else {
          v.s += d;
        }
      }
    } else {
      // A number, None, nan, inf, or a bare word (a kernel-hash key such as in_ptr0).
      while (!done() && std::string(",:)]}").find(peek()) == std::string::npos && peek() != ' ') ++pos_;
      const std::string_view word = line_.substr(start, pos_ - start);
      if (word.empty()) throw ParseError{start, "expected a value"};
      if (word == "None") {
        v.kind = Py::Kind::kNone;
      } else if (word == "nan" || word == "inf" || word == "-inf") {
        v.kind = Py::Kind::kFloat;
        v.f = word == "nan" ? std::numeric_limits<double>::quiet_NaN()
                            : (word[0] == '-' ? -1.0 : 1.0) * std::numeric_limits<double>::infinity();
      } else if (word.find_first_of(".eE") == std::string_view::npos && absl::SimpleAtoi(av(word), &v.u)) {
        v.kind = Py::Kind::kInt;
      } else if (absl::SimpleAtod(av(word), &v.f)) {
        v.kind = Py::Kind::kFloat;
      } else {
        v.kind = Py::Kind::kWord;
        v.s = std::string(word);
      }
    }
    v.text = std::string(line_.substr(start, pos_ - start));
    return v;
  }

 private:
  // escape: the escape after a backslash, as Python reads the ones its str
  // repr writes (\\ \' \" \n \r \t \xNN); others keep their backslash.
  void escape(std::string& out) {
    const char e = line_[pos_++];
    int hex = 0;
    switch (e) {
      case 'n': out += '\n'; return;
      case 'r': out += '\r'; return;
      case 't': out += '\t'; return;
      case 'x':
        if (pos_ + 2 <= line_.size() && std::isxdigit(static_cast<unsigned char>(line_[pos_])) &&
            std::isxdigit(static_cast<unsigned char>(line_[pos_ + 1]))) {
          for (int k = 0; k < 2; ++k) {
            const char h = line_[pos_++];
            hex = hex * 16 + (std::isdigit(static_cast<unsigned char>(h)) ? h - '0' : std::tolower(h) - 'a' + 10);
          }
          out += static_cast<char>(hex);
          return;
        }
        break;
      case '\\':
      case '\'':
      case '"': out += e; return;
      default: break;
    }
    out += '\\';
    out += e;
  }

  std::string_view line_;
  size_t pos_;
};

// scan: visit(i, depth) for each character of s from `from` on that is
// outside quotes, depth being its bracket nesting (before it, for a bracket);
// returns the first i for which visit returns true, or npos.
template <class F>
size_t scan(std::string_view s, size_t from, F visit) {
  int depth = 0;
  char quote = 0;
  for (size_t i = from; i < s.size(); ++i) {
    const char c = s[i];
    if (quote) {
      if (c == '\\') ++i;
      else if (c == quote) quote = 0;
      continue;
    }
    if (visit(i, depth)) return i;
    if (c == '\'' || c == '"') quote = c;
    else if (c == '(' || c == '[' || c == '{') ++depth;
    else if (c == ')' || c == ']' || c == '}') --depth;
  }
  return std::string_view::npos;
}

// split_top: s split at top-level commas (outside brackets and quotes), each part trimmed.
std::vector<std::pair<size_t, std::string_view>> split_top(std::string_view s, size_t offset) {
  std::vector<std::pair<size_t, std::string_view>> parts;
  size_t begin = 0;
  const auto push = [&](size_t end) {
    size_t b = begin, e = end;
    while (b < e && s[b] == ' ') ++b;
    while (e > b && s[e - 1] == ' ') --e;
    if (e > b) parts.emplace_back(offset + b, s.substr(b, e - b));
  };
  scan(s, 0, [&](size_t i, int depth) {
    if (s[i] == ',' && depth == 0) {
      push(i);
      begin = i + 1;
    }
    return false;
  });
  push(s.size());
  return parts;
}

// closing: the index of the bracket closing the one at open, or npos.
size_t closing(std::string_view s, size_t open) {
  return scan(s, open, [&](size_t i, int depth) {
    return depth == 1 && (s[i] == ')' || s[i] == ']' || s[i] == '}');
  });
}

// tensor_of: `t$3: f32[8, 8]` / `ft: f64[]` as a RecordedTensor, or nullopt.
std::optional<RecordedTensor> tensor_of(std::string_view s) {
  RecordedTensor t;
  size_t i = 0;
  if (s.substr(0, 2) == "ft") {
    t.fake = true;
    i = 2;
  } else if (!s.empty() && s[0] == 't') {
    i = 1;
  } else {
    return std::nullopt;
  }
  if (i < s.size() && s[i] == '$') {
    const size_t colon = s.find(':', i);
    if (colon == std::string_view::npos || !absl::SimpleAtoi(av(s.substr(i + 1, colon - i - 1)), &t.id)) return std::nullopt;
    i = colon;
  }
  if (s.substr(i, 2) != ": ") return std::nullopt;
  i += 2;
  const size_t bracket = s.find('[', i);
  if (bracket == std::string_view::npos || s.back() != ']') return std::nullopt;
  const std::optional<DType> d = parse_dtype(s.substr(i, bracket - i));
  if (!d) return std::nullopt;
  t.dtype = *d;
  const std::string_view dims = s.substr(bracket + 1, s.size() - bracket - 2);
  for (const auto& [pos, part] : split_top(dims, 0)) {
    int64_t v = 0;
    if (!absl::SimpleAtoi(av(part), &v)) return std::nullopt;  // symbolic sizes: kept as text
    t.sizes.push_back(v);
  }
  return t;
}

// value_of: one rendered argument or output.
RecordedValue value_of(std::string_view s) {
  RecordedValue v;
  if (std::optional<RecordedTensor> t = tensor_of(s)) {
    v.kind = RecordedValue::Kind::kTensor;
    v.tensors.push_back(std::move(*t));
    return v;
  }
  if (s.size() >= 2 && s.front() == '[' && s.back() == ']' && s.find("t") != std::string_view::npos) {
    // ['t: f32[2]', None]: a tensor list, if every element is a quoted tensor or None.
    RecordedValue list;
    list.kind = RecordedValue::Kind::kTensorList;
    bool all = true;
    for (const auto& [pos, part] : split_top(s.substr(1, s.size() - 2), 0)) {
      if (part == "None") {
        RecordedTensor none;
        none.none = true;
        list.tensors.push_back(none);
      } else if (part.size() >= 2 && part.front() == '\'' && part.back() == '\'') {
        std::optional<RecordedTensor> t = tensor_of(part.substr(1, part.size() - 2));
        if (!t) {
          all = false;
          break;
        }
        list.tensors.push_back(std::move(*t));
      } else {
        all = false;
        break;
      }
    }
    if (all && !list.tensors.empty()) return list;
  }
  v.kind = RecordedValue::Kind::kOther;
  v.rendered = std::string(s);
  if (s != "None") v.value = Value(std::string(s));  // not None: the renderer shows it
  return v;
}

// keyword_of: "name" of a `name=value` argument (a Python identifier before '='), or "".
std::string_view keyword_of(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || s[i] == '_')) ++i;
  if (i == 0 || i >= s.size() || s[i] != '=' || std::isdigit(static_cast<unsigned char>(s[0]))) return {};
  return s.substr(0, i);
}

std::vector<RecordedValue> args_of(std::string_view s, size_t offset) {
  std::vector<RecordedValue> args;
  for (const auto& [pos, part] : split_top(s, offset)) {
    const std::string_view key = keyword_of(part);
    RecordedValue v = value_of(key.empty() ? part : part.substr(key.size() + 1));
    v.name = std::string(key);
    args.push_back(std::move(v));
  }
  return args;
}

// Hash trees: see Note [Debug text format].
HashValue hash_value_of(const Py& p, size_t column) {
  if (p.kind == Py::Kind::kInt) return HashValue::of_int(p.u);
  if (p.kind == Py::Kind::kFloat) return HashValue::of_float(p.f);
  throw ParseError{column, str_cat("expected a hash (a number), got '", p.text, "'")};
}

HashNode node_of(const Py& p, bool* as_tuple, size_t column) {
  HashNode n;
  switch (p.kind) {
    case Py::Kind::kNone: return n;
    case Py::Kind::kInt:
    case Py::Kind::kFloat:
      n.kind = HashNode::Kind::kHashes;
      n.hashes.push_back(hash_value_of(p, column));
      return n;
    case Py::Kind::kTuple:
      n.kind = HashNode::Kind::kHashes;
      *as_tuple = true;
      for (const Py& h : p.items) n.hashes.push_back(hash_value_of(h, column));
      return n;
    case Py::Kind::kList:
      n.kind = HashNode::Kind::kList;
      for (const Py& item : p.items) n.items.push_back(node_of(item, as_tuple, column));
      return n;
    default: throw ParseError{column, str_cat("expected a tensor hash, got '", p.text, "'")};
  }
}

// per_output_tuple: whether a tuple 'hash' holds one hash per result (rather
// than one per hash function). See Note [Tuple output hashes].
bool per_output_tuple(const DebugCall& c, const Py& value) {
  if (c.has_outputs) return c.outputs.size() > 1;
  for (const Py& item : value.items) {
    if (item.kind == Py::Kind::kNone || item.kind == Py::Kind::kList || item.kind == Py::Kind::kTuple) return true;
  }
  if (!c.input_hash || c.hash_tuple) return false;
  for (const HashNode& n : *c.input_hash) {
    if (n.kind == HashNode::Kind::kHashes) return true;  // a bare number: one hash function
  }
  return false;
}

// Note [Tuple output hashes]
// 'hash': (a, b) is either two results' hashes or one tensor's hashes under
// two hash functions. With outputs recorded their count decides. Without
// (record_output=False) the evidence is the tuple's items (None, a list or a
// tuple can only be a result's hash) and the input hash read before it (bare
// numbers mean one hash function); with neither, it is read as hash functions.

void read_annotations(DebugCall& c, Cursor cur) {
  const size_t at = cur.pos();
  const Py dict = cur.literal();
  if (dict.kind != Py::Kind::kDict) throw ParseError{at, "expected the annotations as a dict {...} after '#'"};
  cur.skip_space();
  if (!cur.done()) throw ParseError{cur.pos(), "unexpected text after the annotations"};
  const auto is_key = [](const Py& key, std::string_view name) {
    return key.kind == Py::Kind::kString && key.s == name;
  };
  // 'input_hash' first, whatever the order (PyTorch's hook inserts 'hash' first): it tells how to read 'hash'.
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const Py& value = dict.items[i + 1];
    if (!is_key(dict.items[i], "input_hash")) continue;
    if (value.kind != Py::Kind::kTuple || value.items.size() != 2 || value.items[0].kind != Py::Kind::kTuple ||
        value.items[1].kind != Py::Kind::kDict) {
      throw ParseError{at, "'input_hash' must be ((positional hashes...), {keyword: hash})"};
    }
    std::vector<HashNode> nodes;
    for (const Py& p : value.items[0].items) nodes.push_back(node_of(p, &c.hash_tuple, at));
    const Py& kw = value.items[1];
    for (size_t k = 0; k + 1 < kw.items.size(); k += 2) {
      HashNode n = node_of(kw.items[k + 1], &c.hash_tuple, at);
      n.name = kw.items[k].kind == Py::Kind::kString ? kw.items[k].s : kw.items[k].text;
      nodes.push_back(std::move(n));
    }
    c.input_hash = std::move(nodes);
  }
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const Py& key = dict.items[i];
    const Py& value = dict.items[i + 1];
    if (is_key(key, "input_hash")) continue;
    if (is_key(key, "hash")) {
      c.hashed = true;
      if (value.kind == Py::Kind::kNone) continue;
      std::vector<HashNode> nodes;
      if (value.kind == Py::Kind::kTuple && per_output_tuple(c, value)) {
        for (const Py& p : value.items) nodes.push_back(node_of(p, &c.hash_tuple, at));
      } else {
        nodes.push_back(node_of(value, &c.hash_tuple, at));
      }
      c.output_hash = std::move(nodes);
    } else {
      c.log.emplace_back(key.kind == Py::Kind::kString ? key.s : key.text,
                         value.kind == Py::Kind::kString ? value.s : value.text);
    }
  }
}

// kernel_hashes: `{in0: 1.5, out0: (2.0, 7)}`.
std::vector<std::pair<std::string, std::vector<HashValue>>> kernel_hashes(Cursor cur, bool* as_tuple) {
  const size_t at = cur.pos();
  const Py dict = cur.literal();
  if (dict.kind != Py::Kind::kDict) throw ParseError{at, "expected the kernel hashes as a dict {...}"};
  std::vector<std::pair<std::string, std::vector<HashValue>>> out;
  for (size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const HashNode n = node_of(dict.items[i + 1], as_tuple, at);
    out.emplace_back(dict.items[i].kind == Py::Kind::kString ? dict.items[i].s : dict.items[i].text, n.hashes);
  }
  return out;
}

// find_outside: the first `needle` in s at or after from that is outside brackets and quotes.
size_t find_outside(std::string_view s, std::string_view needle, size_t from) {
  return scan(s, from, [&](size_t i, int depth) { return depth == 0 && s.substr(i, needle.size()) == needle; });
}

DebugCall entry_of(std::string_view line, size_t at) {
  DebugCall c;
  std::string_view body = line.substr(at);
  if (body.substr(0, 9) == "[nn.Mod] ") {
    c.kind = DebugCall::Kind::kModule;
    c.name = std::string(body.substr(9));
    return c;
  }
  size_t name_at = at;
  if (!body.empty() && body[0] == '[') {
    const size_t close = body.find(']');
    if (close == std::string_view::npos || close + 1 >= body.size() || body[close + 1] != ' ') {
      throw ParseError{at, "expected '[prefix] kernel(...)' or '[nn.Mod] name'"};
    }
    c.kind = DebugCall::Kind::kKernel;
    c.kernel_prefix = std::string(body.substr(1, close - 1));
    name_at = at + close + 2;
  }
  const size_t open = line.find('(', name_at);
  if (open == std::string_view::npos) throw ParseError{name_at, "expected 'name(arguments)'"};
  c.name = std::string(line.substr(name_at, open - name_at));
  if (c.name.empty() || c.name.find(' ') != std::string::npos) throw ParseError{name_at, "expected an op name before '('"};
  const size_t close = closing(line, open);
  if (close == std::string_view::npos) throw ParseError{open, "unclosed '(' of the arguments"};
  c.args = args_of(line.substr(open + 1, close - open - 1), open + 1);
  if (c.kind == DebugCall::Kind::kKernel) {
    if (line.find_first_not_of(' ', close + 1) != std::string_view::npos) {
      throw ParseError{close + 1, "unexpected text after a kernel's arguments"};
    }
    return c;
  }
  size_t rest = close + 1;
  const size_t hash = find_outside(line, "#", rest);
  const std::string_view middle = line.substr(rest, hash == std::string_view::npos ? std::string_view::npos : hash - rest);
  const size_t arrow = middle.find("->");
  if (arrow != std::string_view::npos) {
    if (middle.substr(0, arrow).find_first_not_of(' ') != std::string_view::npos) {
      throw ParseError{rest, "unexpected text before '->'"};
    }
    std::string_view out = middle.substr(arrow + 2);
    while (!out.empty() && out.front() == ' ') out.remove_prefix(1);
    while (!out.empty() && out.back() == ' ') out.remove_suffix(1);
    if (out.empty()) throw ParseError{rest + arrow + 2, "expected the outputs after '->'"};
    c.has_outputs = true;
    if (out.front() == '(' && closing(out, 0) == out.size() - 1) {
      // A tuple of results: quoted tensors and bare values.
      for (const auto& [pos, part] : split_top(out.substr(1, out.size() - 2), 0)) {
        const bool quoted = part.size() >= 2 && part.front() == '\'' && part.back() == '\'';
        c.outputs.push_back(value_of(quoted ? part.substr(1, part.size() - 2) : part));
      }
    } else {
      c.outputs.push_back(value_of(out));
    }
  } else if (middle.find_first_not_of(' ') != std::string_view::npos) {
    throw ParseError{rest, "expected '->' or '#' after the arguments"};
  }
  if (hash != std::string_view::npos) read_annotations(c, Cursor(line, hash + 1));
  return c;
}

// excerpt: the line an error quotes, cut to 160 characters around column
// (a 100,000-character line of brackets was quoted whole).
std::string excerpt(std::string_view line, size_t column) {
  constexpr size_t kWidth = 160;
  if (line.size() <= kWidth) return std::string(line);
  const size_t begin = std::min(column > kWidth / 2 ? column - kWidth / 2 : 0, line.size() - kWidth);
  return str_cat(begin > 0 ? "..." : "", line.substr(begin, kWidth), begin + kWidth < line.size() ? "..." : "");
}

}  // namespace

absl::StatusOr<std::vector<DebugCall>> parse_debug_string(std::string_view text, std::string_view name) {
  std::vector<DebugCall> log;
  std::optional<size_t> base;  // depth 0's indentation
  std::string site;
  size_t line_no = 0;
  size_t begin = 0;
  while (begin <= text.size()) {
    size_t end = text.find('\n', begin);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(begin, end - begin);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    ++line_no;
    const size_t at = line.find_first_not_of(' ');
    try {
      if (at == std::string_view::npos) {
        // blank
      } else if (line[at] == '#') {
        const std::string_view comment = line.substr(at);
        const bool pre = comment.substr(0, 20) == "# pre-kernel hashes:";
        const bool post = comment.substr(0, 21) == "# post-kernel hashes:";
        if (pre || post) {
          if (log.empty() || log.back().kind != DebugCall::Kind::kKernel) {
            throw ParseError{at, "kernel hashes without a kernel entry before them"};
          }
          DebugCall& k = log.back();
          (pre ? k.pre_kernel_hashes : k.post_kernel_hashes) =
              kernel_hashes(Cursor(line, at + (pre ? 20 : 21)), &k.hash_tuple);
        } else if (comment.substr(0, 8) == "# File: ") {
          site = std::string(comment.substr(8));
        }  // other comments: stack trace lines
      } else {
        // Depth 0 is indented two spaces (both renderers); a log pasted with
        // less indentation takes its first entry's as depth 0.
        if (!base) base = std::min<size_t>(at, 2);
        if (at < *base || (at - *base) % 2 != 0) {
          throw ParseError{at, str_cat("indentation of ", at, " spaces does not fit the log's (", *base,
                                       " for depth 0, two more per level)")};
        }
        DebugCall c = entry_of(line, at);
        c.depth = static_cast<int>((at - *base) / 2);
        c.site_text = site;
        log.push_back(std::move(c));
      }
    } catch (const ParseError& e) {
      return absl::InvalidArgumentError(
          str_cat(name, ":", line_no, ":", e.column + 1, ": ", e.what, "\n  ", excerpt(line, e.column)));
    }
    begin = end + 1;
  }
  return log;
}

absl::StatusOr<std::vector<DebugCall>> load_debug_log(const std::string& path) {
  std::error_code ec;  // an ifstream opens a directory and reads nothing: an empty log that agrees with any
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(str_cat("cannot read debug log '", path, "': it is a directory"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(str_cat("cannot read debug log '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string::npos || text[first] != '{') return parse_debug_string(text, path);
  absl::StatusOr<std::vector<DebugCall>> log = load_log_json(text);
  if (log.ok()) return log;
  // Name the line and column where the JSON reader stopped (it says "at line
  // L, column C" for syntax errors); other errors name the entry and field.
  const std::string message(log.status().message());
  const auto number_after = [&message](std::string_view key) -> std::optional<size_t> {
    const size_t at = message.find(key);
    if (at == std::string::npos) return std::nullopt;
    size_t i = at + key.size(), v = 0;
    if (i >= message.size() || !std::isdigit(static_cast<unsigned char>(message[i]))) return std::nullopt;
    while (i < message.size() && std::isdigit(static_cast<unsigned char>(message[i]))) v = v * 10 + (message[i++] - '0');
    return v;
  };
  const std::optional<size_t> line = number_after("at line "), column = number_after(", column ");
  if (line && column) return absl::InvalidArgumentError(str_cat(path, ":", *line, ":", *column, ": ", message));
  return absl::InvalidArgumentError(str_cat(path, ": ", message));
}

}  // namespace opspec
