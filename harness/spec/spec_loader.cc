// spec_loader.cc: YAML spec suites (schema v1) into the model of spec.h.
// See Note [Two kinds of load errors] and docs/spec-format.md.
#include "harness/spec/spec_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "harness/program/fixture.h"
#include "harness/tensor_hash.h"
#include "runtime/core/device.h"
#include "runtime/core/error.h"

namespace opspec::spec {
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
// and shapes are bounded by kMaxSpecNumel.
constexpr int kMaxNesting = 64;
constexpr int64_t kMaxRank = 64;
constexpr size_t kMaxRegexCheck = 4096;  // longer `error:` patterns are left to the runner

using YAML::Node;
using Names = std::initializer_list<std::string_view>;

struct Pos {
  int line = 1;
  int col = 1;
};

struct Diag {
  Pos pos;
  std::string message;
};

enum class Kind { kNull, kBool, kInt, kFloat, kString, kSeq, kMap };

bool is_int_text(std::string_view s) {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

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

std::optional<bool> bool_text(std::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  return std::nullopt;
}

// kind_of: the YAML 1.2 core-schema type of a node; quoted and block scalars
// (tag "!") and !!str are strings whatever they look like.
Kind kind_of(const Node& n) {
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

// edit_distance: optimal string alignment distance (a transposition is 1).
size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// did_you_mean: "; did you mean 'x'?" for the closest candidate, or "".
template <typename Range>
std::string did_you_mean(std::string_view word, const Range& candidates) {
  if (word.size() <= 2 || word.size() > 64) return "";  // too short to guess from, or absurd
  std::string_view best;
  size_t best_d = word.size() < 6 ? 1 : 2;
  for (std::string_view c : candidates) {
    size_t d = edit_distance(word, c);
    if (d <= best_d && (best.empty() || d < best_d)) best = c, best_d = d;
  }
  return best.empty() ? "" : str_cat("; did you mean '", best, "'?");
}

template <typename Range>
std::string join(const Range& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) str_append(&out, out.empty() ? "" : sep, item);
  return out;
}

std::string quoted_list(const std::vector<std::string_view>& names) { return join(names, ", "); }

int64_t numel_of(const SizeVec& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // shapes are bounded by kMaxSpecNumel
  return n;
}

std::string shape_str(const SizeVec& shape) { return str_cat("[", join(shape, ", "), "]"); }

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// nesting_too_deep: the position where flow brackets or `- - -` chains first
// nest deeper than kMaxNesting, if they do. A rough count (quotes and block
// scalars are not excluded) that only errs on absurd files. See Note [Hostile input].
std::optional<Pos> nesting_too_deep(std::string_view text) {
  int depth = 0;
  Pos p;
  bool line_start = true;
  int dashes = 0;
  for (char c : text) {
    if (c == '[' || c == '{') ++depth;
    if ((c == ']' || c == '}') && depth > 0) --depth;
    if (line_start && c == '-')
      ++dashes;
    else if (c != ' ')
      line_start = false;
    if (depth > kMaxNesting || dashes > kMaxNesting) return p;
    if (c == '\n') {
      ++p.line, p.col = 1, line_start = true, dashes = 0;
    } else {
      ++p.col;
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

// Entry: one key: value pair of a mapping.
struct Entry {
  Node key;
  Node value;
  std::string name;
};

// MapView: a mapping's entries after key checks (first occurrence of each;
// an empty allowed list allows any key).
struct MapView {
  std::vector<Entry> entries;
  Pos pos;
  bool had_unknown = false;  // an unknown key was reported: "missing key" errors would only repeat it
  std::map<std::string, size_t, std::less<>> index;  // name -> entries[i]
  const Entry* get(std::string_view name) const {
    auto it = index.find(name);
    return it == index.end() ? nullptr : &entries[it->second];
  }
};

// Defaults: the `defaults:` section.
struct Defaults {
  DType dtype = DType::kFloat32;
  uint64_t seed = 0;
  std::string backend = "eager";
  std::vector<std::string> devices = {"cpu"};
};

class Loader {
 public:
  Loader(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {
    line_starts_.push_back(0);
    for (size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') line_starts_.push_back(i + 1);
    }
  }

  absl::StatusOr<SuiteSpec> run();

 private:
  void error(Pos p, std::string message) { errors_.push_back({p, std::move(message)}); }
  std::string loc(Pos p) const { return str_cat(file_, ":", p.line, ":", p.col); }

  Pos pos_of(const Node& n, Pos fallback) const {
    YAML::Mark m = n.Mark();
    if (m.is_null() || m.line < 0 || m.column < 0) return fallback;
    return {m.line + 1, m.column + 1};
  }
  Pos key_pos(const Entry& e) const { return pos_of(e.key, {}); }
  // val_pos: where the value is, or its key when the value is empty (yaml-cpp
  // marks an empty value at the next token, possibly lines below).
  Pos val_pos(const Entry& e) const {
    Pos k = key_pos(e);
    if (kind_of(e.value) == Kind::kNull) {
      Pos v = pos_of(e.value, k);
      return v.line == k.line ? v : k;
    }
    return pos_of(e.value, k);
  }

  std::optional<MapView> read_map(const Node& n, Pos where, std::string_view label, std::string_view context,
                                  Names allowed);
  std::optional<int64_t> get_int(const Entry& e, int64_t lo, int64_t hi);
  std::optional<double> get_double(const Node& v, Pos p, std::string_view what, bool finite);
  std::optional<bool> get_bool(const Entry& e);
  std::optional<std::string> get_string(const Node& v, Pos p, std::string_view what);
  std::optional<std::string> get_string(const Entry& e) {
    return get_string(e.value, val_pos(e), str_cat("'", e.name, "'"));
  }
  std::optional<std::vector<std::string>> get_string_list(const Entry& e);
  std::optional<DType> get_dtype(const Entry& e);
  bool check_device(const std::string& d, Pos p);

  Defaults parse_defaults(const Entry& e);
  void parse_root(const Node& root, SuiteSpec& suite);
  void parse_case(const Node& n, int index, const Defaults& defaults, SuiteSpec& suite);
  std::optional<InputSpec> parse_input(const Entry& e, const std::string& where, const InputSpec* base);
  std::vector<InputSpec> parse_inputs(const Entry& e, const std::string& where, const std::vector<InputSpec>* base);
  void read_program(const Entry& e, CaseSpec& c);
  bool read_fixture(const Entry& e, CaseSpec& c, bool have_inputs);
  std::optional<CompileSpec> parse_compile(const Entry& e, const CaseSpec& c, bool inputs_known,
                                           const Defaults& defaults, const std::string& where);
  void parse_marks(const Entry& e, const CaseSpec& c, bool inputs_known,
                   std::vector<std::pair<std::string, int64_t>>& out);
  void parse_expect(const Entry& e, ExpectSpec& x, const std::string& where);
  void parse_equivalent(const Entry& e, ExpectSpec& x);
  void parse_graph_breaks(const Entry& e, ExpectSpec& x);
  void parse_debug(const Entry& e, DebugSpec& d, const std::string& where);
  ProgramOrigin program_origin(const Entry& e) const;

  absl::Status finish() const;

  std::string_view text_;
  std::string file_;
  std::vector<size_t> line_starts_;  // offset of each line of text_
  std::vector<Diag> errors_;
};

std::optional<MapView> Loader::read_map(const Node& n, Pos where, std::string_view label, std::string_view context,
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
                        " (allowed: ", quoted_list(allowed), ")"));
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

std::optional<int64_t> Loader::get_int(const Entry& e, int64_t lo, int64_t hi) {
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

std::optional<double> Loader::get_double(const Node& v, Pos p, std::string_view what, bool finite) {
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

std::optional<bool> Loader::get_bool(const Entry& e) {
  Kind k = kind_of(e.value);
  if (k != Kind::kBool) {
    error(val_pos(e), str_cat("'", e.name, "' must be a boolean (true or false), got ", kind_name(k)));
    return std::nullopt;
  }
  return bool_text(e.value.Scalar());
}

std::optional<std::string> Loader::get_string(const Node& v, Pos p, std::string_view what) {
  Kind k = kind_of(v);
  if (k == Kind::kNull || k == Kind::kSeq || k == Kind::kMap) {
    error(p, str_cat(what, " must be a string, got ", kind_name(k)));
    return std::nullopt;
  }
  return v.Scalar();
}

std::optional<std::vector<std::string>> Loader::get_string_list(const Entry& e) {
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

std::optional<DType> Loader::get_dtype(const Entry& e) {
  auto s = get_string(e);
  if (!s) return std::nullopt;
  if (auto d = parse_dtype(*s)) return d;
  static const std::vector<std::string_view> kNames = {"f32", "f64", "f16", "bf16", "i64", "i32", "b8"};
  static const std::vector<std::string_view> kAllNames = {
      "f32",      "f64",   "f16",   "bf16", "i64",   "i32",    "b8",   "float32", "float64", "float16",
      "bfloat16", "int64", "int32", "bool", "float", "double", "half", "long",    "int"};
  error(val_pos(e), str_cat("unknown dtype '", *s, "'", did_you_mean(*s, kAllNames), " (allowed: ", quoted_list(kNames),
                            ", or torch names like float32)"));
  return std::nullopt;
}

bool Loader::check_device(const std::string& d, Pos p) {
  try {
    (void)Device::parse(d);
    return true;
  } catch (const std::exception&) {
    error(p, str_cat("unknown device '", d, "' (allowed: cpu, cuda, cuda:N, meta)"));
    return false;
  }
}

Defaults Loader::parse_defaults(const Entry& e) {
  Defaults d;
  auto m =
      read_map(e.value, val_pos(e), "'defaults'", "in defaults", {"dtype", "seed", "backend", "device", "devices"});
  if (!m) return d;
  if (const Entry* x = m->get("dtype")) d.dtype = get_dtype(*x).value_or(d.dtype);
  if (const Entry* x = m->get("seed")) d.seed = get_int(*x, 0, std::numeric_limits<int64_t>::max()).value_or(0);
  if (const Entry* x = m->get("backend")) d.backend = get_string(*x).value_or(d.backend);
  if (m->get("device") && m->get("devices"))
    error(key_pos(*m->get("devices")), "give 'device' or 'devices' in defaults, not both");
  if (const Entry* x = m->get("device")) {
    if (auto s = get_string(*x); s && check_device(*s, val_pos(*x))) d.devices = {*s};
  }
  if (const Entry* x = m->get("devices")) {
    if (auto l = get_string_list(*x)) {
      for (const std::string& s : *l) check_device(s, val_pos(*x));
      d.devices = *l;
    }
  }
  return d;
}

std::optional<InputSpec> Loader::parse_input(const Entry& e, const std::string& where, const InputSpec* base) {
  const std::string ctx = str_cat("in input '", e.name, "' of ", where);
  auto m = read_map(e.value, val_pos(e), str_cat("input '", e.name, "'"), ctx,
                    {"shape", "init", "dtype", "device", "full", "values"});
  if (!m) return std::nullopt;
  InputSpec in = base ? *base : InputSpec{};
  in.name = e.name;
  in.where = {file_, key_pos(e).line, key_pos(e).col};
  size_t before = errors_.size();
  if (!base && !is_identifier(e.name)) {
    error(key_pos(e), str_cat("input name '", e.name, "' is not an identifier (letters, digits, '_')"));
  }
  bool have_shape = false;
  if (const Entry* s = m->get("shape")) {
    Kind k = kind_of(s->value);
    if (k != Kind::kSeq) {
      error(val_pos(*s), str_cat("'shape' must be a list of non-negative integers, got ", kind_name(k)));
    } else {
      SizeVec shape;
      bool ok = true;
      for (auto it = s->value.begin(); it != s->value.end(); ++it) {
        Pos dp = pos_of(*it, val_pos(*s));
        Kind dk = kind_of(*it);
        int64_t v = 0;
        if (dk != Kind::kInt) {
          error(dp, str_cat("shape dims must be integers, got ", kind_name(dk)));
          ok = false;
        } else if (!absl::SimpleAtoi(it->Scalar(), &v) || v < 0 || v > kMaxSpecNumel) {
          error(dp, str_cat("shape dim ", it->Scalar(), " is ", it->Scalar()[0] == '-' ? "negative" : "out of range"));
          ok = false;
        }
        shape.push_back(v);
      }
      if (ok && static_cast<int64_t>(shape.size()) > kMaxRank) {
        error(val_pos(*s), str_cat("shape has ", shape.size(), " dims; at most ", kMaxRank, " are allowed"));
        ok = false;
      }
      int64_t numel = 1;
      for (int64_t d : shape) numel = (d != 0 && numel > kMaxSpecNumel / d) ? kMaxSpecNumel + 1 : numel * d;
      if (ok && numel > kMaxSpecNumel) {
        error(val_pos(*s), str_cat("shape ", shape_str(shape), " has more than ", kMaxSpecNumel,
                                   " elements, the most a spec input may have"));
        ok = false;
      }
      if (ok) in.shape = shape, have_shape = true;
    }
  }
  const Entry* init = m->get("init");
  const Entry* full = m->get("full");
  const Entry* values = m->get("values");
  if ((init != nullptr) + (full != nullptr) + (values != nullptr) > 1) {
    error(m->pos, str_cat("give one of 'init', 'full', 'values' ", ctx));
  }
  std::optional<MapView> init_map;  // init: {full: 2.5} / init: {values: [..]}
  if (init && kind_of(init->value) == Kind::kMap) {
    init_map = read_map(init->value, val_pos(*init), "'init'", str_cat("in init of input '", e.name, "' of ", where),
                        {"full", "values"});
    if (init_map && init->value.size() != 1) {
      error(val_pos(*init), "'init' as a mapping takes one key: {full: X} or {values: [...]}");
    } else if (init_map && !init_map->entries.empty()) {
      (init_map->entries[0].name == "full" ? full : values) = &init_map->entries[0];
    }
  } else if (init) {
    static const std::vector<std::string_view> kKinds(std::begin(kInitKinds), std::end(kInitKinds));
    if (auto s = get_string(*init)) {
      if (*s == "full" || *s == "values") {
        error(val_pos(*init),
              str_cat("init '", *s, "' needs its value: write init: {", *s, *s == "full" ? ": 2.5}" : ": [1, 2, 3]}"));
      } else if (std::find(kKinds.begin(), kKinds.end(), *s) == kKinds.end()) {
        error(val_pos(*init),
              str_cat("unknown init '", *s, "'", did_you_mean(*s, kKinds), " (allowed: ", quoted_list(kKinds), ")"));
      } else {
        in.init = *s, in.values.clear(), in.fill = 0;
      }
    }
  }
  if (full) {
    if (auto v = get_double(full->value, val_pos(*full), "'full'", false))
      in.init = "full", in.fill = *v, in.values.clear();
  }
  if (values) {
    Kind k = kind_of(values->value);
    if (k != Kind::kSeq) {
      error(val_pos(*values), str_cat("'values' must be a list of numbers, got ", kind_name(k)));
    } else {
      std::vector<double> vals;
      bool ok = true;
      for (auto it = values->value.begin(); it != values->value.end(); ++it) {
        auto v = get_double(*it, pos_of(*it, val_pos(*values)), "an entry of 'values'", false);
        ok = ok && v.has_value();
        vals.push_back(v.value_or(0));
      }
      if (ok) {
        // Without a shape, `values` is 1-d, unless an overridden input's shape fits.
        if (!have_shape && (!base || numel_of(base->shape) != static_cast<int64_t>(vals.size()))) {
          in.shape = {static_cast<int64_t>(vals.size())};
        }
        have_shape = true;
        in.init = "values", in.values = std::move(vals);
      }
    }
  }
  if (!have_shape && !base && !m->get("shape") && !m->had_unknown) {
    error(m->pos, str_cat("missing required key 'shape' ", ctx));
  }
  if (in.init == "values" && errors_.size() == before) {
    int64_t numel = numel_of(in.shape);
    if (numel != static_cast<int64_t>(in.values.size())) {
      Pos p = values ? val_pos(*values) : m->pos;
      error(p, str_cat("init values has ", in.values.size(), " elements but shape ", shape_str(in.shape), " needs ",
                       numel));
    }
  }
  if (const Entry* d = m->get("dtype")) {
    if (auto t = get_dtype(*d)) in.dtype = t;
  }
  if (const Entry* d = m->get("device")) {
    if (auto s = get_string(*d); s && check_device(*s, val_pos(*d))) in.device = *s;
  }
  if (errors_.size() != before) return std::nullopt;
  return in;
}

std::vector<InputSpec> Loader::parse_inputs(const Entry& e, const std::string& where,
                                            const std::vector<InputSpec>* base) {
  std::vector<InputSpec> out;
  auto m = read_map(e.value, val_pos(e), base ? "a 'calls' entry" : "'inputs'",
                    str_cat("in ", base ? "a calls entry" : "inputs", " of ", where), {});
  if (!m) return out;
  if (base) out = *base;  // a call repeats the inputs it does not override
  for (const Entry& x : m->entries) {
    const InputSpec* b = nullptr;
    if (base) {
      auto it = std::find_if(base->begin(), base->end(), [&](const InputSpec& in) { return in.name == x.name; });
      if (it == base->end()) {
        std::vector<std::string_view> names;
        for (const InputSpec& in : *base) names.push_back(in.name);
        error(key_pos(x), str_cat("'", x.name, "' is not an input of ", where, did_you_mean(x.name, names),
                                  " (inputs: ", quoted_list(names), ")"));
        continue;
      }
      b = &*it;
    }
    if (auto in = parse_input(x, where, b)) {
      if (b)
        out[b - base->data()] = *in;
      else
        out.push_back(*in);
    }
  }
  return out;
}

// program_origin: where a program's text starts in the file, so parse errors
// point into the YAML file. See ProgramOrigin.
ProgramOrigin Loader::program_origin(const Entry& e) const {
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
  if (c == '"' || c == '\'') {
    o.column_offset = col + 1;
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
  }
  return o;
}

void Loader::read_program(const Entry& e, CaseSpec& c) {
  auto text = get_string(e);
  if (!text) return;
  try {
    auto program = opspec::parse_program(*text, program_origin(e));
    if (!program.ok()) {
      c.load_error = std::string(program.status().message());
      return;
    }
    std::vector<std::string> names;
    for (const InputSpec& in : c.inputs) names.push_back(in.name);
    if (absl::Status st = check_program(*program, names); !st.ok()) c.load_error = std::string(st.message());
    c.program = *std::move(program);
  } catch (const std::exception& ex) {
    c.load_error = str_cat(loc(val_pos(e)), ": ", ex.what());
  }
}

// read_fixture: looks the fixture up; returns whether the case's inputs are known.
bool Loader::read_fixture(const Entry& e, CaseSpec& c, bool have_inputs) {
  auto name = get_string(e);
  if (!name) return have_inputs;
  c.fixture = *name;
  const Fixture* f = find_fixture(*name);
  if (f == nullptr) {
    std::vector<std::string_view> names;
    for (const Fixture* g : list_fixtures()) names.push_back(g->name);
    c.load_error =
        str_cat(loc(val_pos(e)), ": unknown fixture '", *name, "'", did_you_mean(*name, names),
                names.empty() ? " (no fixtures are registered)" : str_cat(" (registered: ", quoted_list(names), ")"));
    return have_inputs;
  }
  if (!have_inputs) {
    for (const FixtureInput& fi : f->inputs) {
      InputSpec in;
      in.name = fi.name, in.shape = fi.shape, in.dtype = fi.dtype, in.init = fi.init;
      in.where = {file_, val_pos(e).line, val_pos(e).col};
      c.inputs.push_back(std::move(in));
    }
    return true;
  }
  if (f->inputs.empty()) return true;  // a fixture that declares no inputs takes them as given
  // Inputs given for a fixture: the same names, put in the fixture's order.
  std::vector<InputSpec> ordered;
  for (const FixtureInput& fi : f->inputs) {
    auto it = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const InputSpec& in) { return in.name == fi.name; });
    if (it != c.inputs.end()) ordered.push_back(*it);
  }
  if (ordered.size() != f->inputs.size() || ordered.size() != c.inputs.size()) {
    std::vector<std::string_view> want, got;
    for (const FixtureInput& fi : f->inputs) want.push_back(fi.name);
    for (const InputSpec& in : c.inputs) got.push_back(in.name);
    c.load_error = str_cat(loc(val_pos(e)), ": fixture '", *name, "' takes inputs (", quoted_list(want),
                           ") but the case gives (", quoted_list(got), ")");
    return true;
  }
  c.inputs = std::move(ordered);
  return true;
}

void Loader::parse_marks(const Entry& e, const CaseSpec& c, bool inputs_known,
                         std::vector<std::pair<std::string, int64_t>>& out) {
  Kind k = kind_of(e.value);
  if (k != Kind::kSeq) {
    error(val_pos(e), str_cat("'", e.name, "' must be a list of NAME.DIM marks (e.g. [x.0]), got ", kind_name(k)));
    return;
  }
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    Pos p = pos_of(*it, val_pos(e));
    auto s = get_string(*it, p, str_cat("an entry of '", e.name, "'"));
    if (!s) continue;
    size_t dot = s->rfind('.');
    std::string name = dot == std::string::npos ? *s : s->substr(0, dot);
    std::string dim_text = dot == std::string::npos ? "" : s->substr(dot + 1);
    int64_t dim = 0;
    if (dot == std::string::npos || !is_identifier(name) || !is_int_text(dim_text) || dim_text[0] == '+' ||
        !absl::SimpleAtoi(dim_text, &dim) || dim < 0) {
      error(p, str_cat("'", e.name, "' entry '", *s, "' must be NAME.DIM with a non-negative DIM, e.g. x.0"));
      continue;
    }
    if (inputs_known) {
      auto in = std::find_if(c.inputs.begin(), c.inputs.end(), [&](const InputSpec& i) { return i.name == name; });
      if (in == c.inputs.end()) {
        std::vector<std::string_view> names;
        for (const InputSpec& i : c.inputs) names.push_back(i.name);
        error(p, str_cat("'", e.name, "' entry '", *s, "': '", name, "' is not an input of case '", c.name, "'",
                         did_you_mean(name, names), " (inputs: ", quoted_list(names), ")"));
        continue;
      }
      if (dim >= static_cast<int64_t>(in->shape.size())) {
        error(p, str_cat("'", e.name, "' entry '", *s, "': dim ", dim, " is out of range for input '", name,
                         "' of shape ", shape_str(in->shape)));
        continue;
      }
    }
    out.emplace_back(name, dim);
  }
}

std::optional<CompileSpec> Loader::parse_compile(const Entry& e, const CaseSpec& c, bool inputs_known,
                                                 const Defaults& defaults, const std::string& where) {
  CompileSpec cs;
  cs.backend = defaults.backend;
  cs.where = {file_, val_pos(e).line, val_pos(e).col};
  Kind k = kind_of(e.value);
  if (k == Kind::kNull) return cs;  // `compile:` alone: every option at its default
  if (k == Kind::kBool) return get_bool(e).value_or(false) ? std::optional(cs) : std::nullopt;
  auto m = read_map(e.value, val_pos(e), "'compile'", str_cat("in compile of ", where),
                    {"backend", "fullgraph", "dynamic", "static", "disallow_in_graph", "cache_size_limit",
                     "error_on_recompile", "calls"});
  if (!m) return std::nullopt;
  if (const Entry* x = m->get("backend")) {
    cs.backend = get_string(*x).value_or(cs.backend);
    if (cs.backend.empty()) error(val_pos(*x), "'backend' must not be empty");
  }
  if (const Entry* x = m->get("fullgraph")) cs.fullgraph = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("dynamic")) {
    if (kind_of(x->value) == Kind::kBool)
      cs.dynamic = get_bool(*x).value_or(false);
    else if (kind_of(x->value) == Kind::kSeq)
      parse_marks(*x, c, inputs_known, cs.mark_dynamic);
    else
      error(val_pos(*x), str_cat("'dynamic' must be a boolean or a list of NAME.DIM marks (e.g. [x.0]), got ",
                                 kind_name(kind_of(x->value))));
  }
  if (const Entry* x = m->get("static")) parse_marks(*x, c, inputs_known, cs.mark_static);
  if (const Entry* x = m->get("disallow_in_graph"))
    cs.disallow_in_graph = get_string_list(*x).value_or(std::vector<std::string>{});
  if (const Entry* x = m->get("cache_size_limit"))
    cs.cache_size_limit = static_cast<int>(get_int(*x, 0, 1 << 20).value_or(8));
  if (const Entry* x = m->get("error_on_recompile")) cs.error_on_recompile = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("calls")) {
    Kind ck = kind_of(x->value);
    if (ck != Kind::kSeq) {
      error(val_pos(*x), str_cat("'calls' must be a list of input overrides, got ", kind_name(ck)));
    } else if (inputs_known) {
      for (auto it = x->value.begin(); it != x->value.end(); ++it) {
        cs.calls.push_back(parse_inputs(Entry{x->key, *it, "calls"}, where, &c.inputs));
      }
    }
  }
  return cs;
}

void Loader::parse_graph_breaks(const Entry& e, ExpectSpec& x) {
  Kind k = kind_of(e.value);
  if (k == Kind::kInt) {
    if (auto n = get_int(e, 0, std::numeric_limits<int>::max())) x.graph_break_count = static_cast<int>(*n);
    return;
  }
  if (k != Kind::kSeq) {
    error(val_pos(e), str_cat("'graph_breaks' must be an integer or a list of {reason: ...}, got ", kind_name(k)));
    return;
  }
  std::vector<GraphBreakSpec> breaks;
  for (auto it = e.value.begin(); it != e.value.end(); ++it) {
    Pos p = pos_of(*it, val_pos(e));
    Kind ik = kind_of(*it);
    if (ik == Kind::kMap) {
      auto m = read_map(*it, p, "a 'graph_breaks' entry", "in a graph_breaks entry", {"reason"});
      if (!m) continue;
      const Entry* r = m->get("reason");
      if (r == nullptr) {
        if (!m->had_unknown) error(p, "missing required key 'reason' in a graph_breaks entry");
      } else if (auto s = get_string(*r)) {
        breaks.push_back({*s});
      }
    } else if (ik == Kind::kSeq || ik == Kind::kNull) {
      error(p, str_cat("'graph_breaks' entries must be {reason: ...} or strings, got ", kind_name(ik)));
    } else {
      breaks.push_back({it->Scalar()});
    }
  }
  x.graph_breaks = std::move(breaks);
}

void Loader::parse_equivalent(const Entry& e, ExpectSpec& x) {
  EquivalenceSpec eq;
  Pos p = val_pos(e);
  eq.where = {file_, p.line, p.col};
  Kind k = kind_of(e.value);
  if (k == Kind::kBool) {
    if (get_bool(e).value_or(false)) x.equivalent = eq;
    return;
  }
  if (k == Kind::kString && e.value.Scalar() == "bitwise") {
    eq.bitwise = true;
    x.equivalent = eq;
    return;
  }
  if (k != Kind::kMap) {
    error(p, str_cat("'equivalent' must be 'bitwise', true or a mapping {hash, rtol, atol}, got ", kind_name(k),
                     k == Kind::kString ? str_cat(" '", e.value.Scalar(), "'") : ""));
    return;
  }
  auto m = read_map(e.value, p, "'equivalent'", "in equivalent", {"bitwise", "hash", "rtol", "atol"});
  if (!m) return;
  if (const Entry* b = m->get("bitwise")) eq.bitwise = get_bool(*b).value_or(false);
  if (const Entry* h = m->get("hash")) {
    if (auto s = get_string(*h)) {
      if (parse_hash_kind(*s))
        eq.hash = *s;
      else
        error(val_pos(*h), str_cat("unknown hash '", *s, "' (allowed: norm, hash_tensor, bitwise)"));
    }
  }
  const Entry* rtol = m->get("rtol");
  const Entry* atol = m->get("atol");
  if (rtol) eq.rtol = get_double(rtol->value, val_pos(*rtol), "'rtol'", true);
  if (atol) eq.atol = get_double(atol->value, val_pos(*atol), "'atol'", true);
  for (const Entry* t : {rtol, atol}) {
    if (t && t->value.IsScalar() && !t->value.Scalar().empty() && t->value.Scalar()[0] == '-') {
      error(val_pos(*t), str_cat("'", t->name, "' must be non-negative"));
    }
  }
  if ((rtol == nullptr) != (atol == nullptr) && !m->had_unknown) {
    error(key_pos(rtol ? *rtol : *atol),
          str_cat("'", rtol ? "rtol" : "atol", "' given without '", rtol ? "atol" : "rtol", "': give both or neither"));
  }
  if (eq.bitwise && (rtol || atol)) error(m->pos, "'bitwise' excludes 'rtol' and 'atol'");
  x.equivalent = eq;
}

void Loader::parse_expect(const Entry& e, ExpectSpec& x, const std::string& where) {
  auto m = read_map(e.value, val_pos(e), "'expect'", str_cat("in expect of ", where),
                    {"ops", "ops_contain", "ops_exclude", "function_ops", "graphs", "graph_breaks", "recompiles",
                     "fused_kernels", "equivalent", "check", "check_graphs", "debug_string", "error", "outputs"});
  if (!m) return;
  x.where = {file_, val_pos(e).line, val_pos(e).col};
  constexpr int64_t kMaxCount = std::numeric_limits<int>::max();
  if (const Entry* v = m->get("ops")) x.ops = get_string_list(*v);
  if (const Entry* v = m->get("ops_contain")) x.ops_contain = get_string_list(*v);
  if (const Entry* v = m->get("ops_exclude")) x.ops_exclude = get_string_list(*v);
  if (const Entry* v = m->get("function_ops")) x.function_ops = get_string_list(*v);
  if (const Entry* v = m->get("graphs")) x.graphs = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("recompiles")) x.recompiles = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("fused_kernels")) x.fused_kernels = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("graph_breaks")) parse_graph_breaks(*v, x);
  if (const Entry* v = m->get("equivalent")) parse_equivalent(*v, x);
  // FileCheck directives report check-file positions; the block's origin
  // makes them the YAML file's (as for programs).
  auto check_where = [&](const Entry& v) {
    ProgramOrigin o = program_origin(v);
    return SourceLocation{file_, o.first_line, o.column_offset + 1};
  };
  if (const Entry* v = m->get("check")) x.check = get_string(*v), x.check_where = check_where(*v);
  if (const Entry* v = m->get("check_graphs")) x.check_graphs = get_string(*v), x.check_graphs_where = check_where(*v);
  if (const Entry* v = m->get("debug_string")) {
    // An empty `debug_string:` is an empty golden text, for --accept to fill in.
    x.debug_string = kind_of(v->value) == Kind::kNull ? std::optional<std::string>("") : get_string(*v);
    Pos p = val_pos(*v);
    x.debug_string_where = {file_, p.line, p.col};
  }
  if (const Entry* v = m->get("error")) {
    x.error = get_string(*v);
    if (x.error && x.error->size() <= kMaxRegexCheck) {
      try {
        std::regex re(*x.error, std::regex::ECMAScript);
      } catch (const std::regex_error& ex) {
        error(val_pos(*v), str_cat("'error' is not a valid regular expression: ", ex.what()));
      }
    }
  }
  if (const Entry* v = m->get("outputs")) {
    Kind k = kind_of(v->value);
    if (k != Kind::kSeq) {
      error(val_pos(*v), str_cat("'outputs' must be a list of numbers, got ", kind_name(k)));
    } else {
      std::vector<double> out;
      for (auto it = v->value.begin(); it != v->value.end(); ++it) {
        out.push_back(get_double(*it, pos_of(*it, val_pos(*v)), "an entry of 'outputs'", false).value_or(0));
      }
      x.outputs = std::move(out);
    }
  }
}

void Loader::parse_debug(const Entry& e, DebugSpec& d, const std::string& where) {
  auto m = read_map(e.value, val_pos(e), "'debug'", str_cat("in debug of ", where),
                    {"hash", "hash_inputs", "record_ids", "function_level", "record_output", "record_nn_module"});
  if (!m) return;
  if (const Entry* h = m->get("hash")) {
    if (auto s = get_string(*h)) {
      if (parse_hash_kind(*s))
        d.hash = *s;
      else
        error(val_pos(*h), str_cat("unknown hash '", *s, "' (allowed: norm, hash_tensor, bitwise)"));
    }
  }
  if (const Entry* x = m->get("hash_inputs")) d.hash_inputs = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("record_ids")) d.record_ids = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("function_level")) d.function_level = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("record_output")) d.record_output = get_bool(*x).value_or(true);
  if (const Entry* x = m->get("record_nn_module")) d.record_nn_module = get_bool(*x).value_or(false);
}

void Loader::parse_case(const Node& n, int index, const Defaults& defaults, SuiteSpec& suite) {
  Pos cp = pos_of(n, {});
  std::string where = str_cat("case #", index + 1);
  if (n.IsMap()) {  // name the case in messages about its other keys
    for (auto it = n.begin(); it != n.end(); ++it) {
      if (it->first.IsScalar() && it->first.Scalar() == "name" && it->second.IsScalar()) {
        where = str_cat("case '", it->second.Scalar(), "'");
        break;
      }
    }
  }
  auto m = read_map(n, cp, where, str_cat("in ", where),
                    {"name", "description", "inputs", "program", "fixture", "compile", "expect", "debug", "skip_if",
                     "xfail", "devices", "dtype", "seed"});
  if (!m) return;
  CaseSpec c;
  c.where = {file_, cp.line, cp.col};
  c.dtype = defaults.dtype, c.seed = defaults.seed, c.devices = defaults.devices;
  if (const Entry* x = m->get("name")) {
    c.name = get_string(*x).value_or("");
    if (c.name.empty() || !std::all_of(c.name.begin(), c.name.end(), [](char ch) {
          return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
        })) {
      error(val_pos(*x), str_cat("case name '", c.name,
                                 "' must be non-empty and use only letters, digits, "
                                 "'_', '-' and '.'"));
    }
  } else if (!m->had_unknown) {
    error(cp, str_cat("missing required key 'name' in ", where));
  }
  if (const Entry* x = m->get("description")) c.description = get_string(*x).value_or("");
  if (const Entry* x = m->get("dtype")) c.dtype = get_dtype(*x).value_or(c.dtype);
  if (const Entry* x = m->get("seed")) c.seed = get_int(*x, 0, std::numeric_limits<int64_t>::max()).value_or(0);
  const Entry* inputs = m->get("inputs");
  if (inputs) c.inputs = parse_inputs(*inputs, where, nullptr);
  const Entry* program = m->get("program");
  const Entry* fixture = m->get("fixture");
  bool inputs_known = true;
  if (program && fixture) {
    error(key_pos(*fixture), str_cat(where, " has both 'program' and 'fixture'; give one"));
  } else if (program) {
    read_program(*program, c);
  } else if (fixture) {
    inputs_known = read_fixture(*fixture, c, inputs != nullptr);
  } else if (!m->had_unknown) {
    error(cp, str_cat(where, " needs 'program' or 'fixture'"));
  }
  if (const Entry* x = m->get("compile")) c.compile = parse_compile(*x, c, inputs_known, defaults, where);
  // An empty `expect:` or `debug:` is an empty mapping.
  if (const Entry* x = m->get("expect"); x && kind_of(x->value) != Kind::kNull) parse_expect(*x, c.expect, where);
  if (const Entry* x = m->get("debug"); x && kind_of(x->value) != Kind::kNull) parse_debug(*x, c.debug, where);
  if (const Entry* x = m->get("skip_if")) {
    static const std::vector<std::string_view> kConds(std::begin(kSkipConditions), std::end(kSkipConditions));
    for (const std::string& s : get_string_list(*x).value_or(std::vector<std::string>{})) {
      if (std::find(kConds.begin(), kConds.end(), s) == kConds.end()) {
        error(val_pos(*x), str_cat("unknown skip_if condition '", s, "'", did_you_mean(s, kConds),
                                   " (allowed: ", quoted_list(kConds), ")"));
      }
      c.skip_if.push_back(s);
    }
  }
  if (const Entry* x = m->get("xfail")) c.xfail = get_string(*x);
  if (const Entry* x = m->get("devices")) {
    if (auto l = get_string_list(*x)) {
      if (l->empty()) error(val_pos(*x), "'devices' must not be empty");
      for (const std::string& s : *l) check_device(s, val_pos(*x));
      c.devices = *l;
    }
  }
  suite.cases.push_back(std::move(c));
}

void Loader::parse_root(const Node& root, SuiteSpec& suite) {
  auto m = read_map(root, {1, 1}, "the top level", "at the top level", {"schema", "suite", "defaults", "cases"});
  if (!m) return;
  if (const Entry* x = m->get("schema")) {
    if (auto v = get_int(*x, 0, std::numeric_limits<int>::max()); v && *v != kSchemaVersion) {
      error(val_pos(*x), str_cat("unsupported schema version ", *v, "; this opspec reads schema ", kSchemaVersion));
    }
  }
  if (const Entry* x = m->get("suite")) {
    suite.name = get_string(*x).value_or(suite.name);
    if (suite.name.empty()) error(val_pos(*x), "'suite' must not be empty");
  }
  Defaults defaults;
  if (const Entry* x = m->get("defaults")) defaults = parse_defaults(*x);
  const Entry* cases = m->get("cases");
  if (cases == nullptr) {
    if (!m->had_unknown) error(m->pos, "missing required key 'cases' at the top level");
    return;
  }
  Kind k = kind_of(cases->value);
  if (k != Kind::kSeq) {
    error(val_pos(*cases), str_cat("'cases' must be a list of cases, got ", kind_name(k)));
    return;
  }
  int index = 0;
  for (auto it = cases->value.begin(); it != cases->value.end(); ++it) parse_case(*it, index++, defaults, suite);
  std::map<std::string, Pos> seen;
  for (const CaseSpec& c : suite.cases) {
    if (c.name.empty()) continue;
    auto [it, inserted] = seen.emplace(c.name, Pos{c.where.line, c.where.column});
    if (!inserted) {
      error({c.where.line, c.where.column},
            str_cat("duplicate case name '", c.name, "' (first at ", loc(it->second), ")"));
    }
  }
}

absl::StatusOr<SuiteSpec> Loader::run() {
  SuiteSpec suite;
  suite.file = file_;
  suite.name = std::filesystem::path(file_).stem().string();
  if (auto p = nesting_too_deep(text_)) {
    error(*p, str_cat("nesting deeper than ", kMaxNesting, " levels"));
    return finish();
  }
  try {
    // YAML::LoadAll loops forever on some malformed input (yaml-cpp issue
    // #1040, e.g. a lone ","), so only the first document is parsed and a
    // second one is found by its marker.
    Node root = YAML::Load(std::string(text_));
    if (auto second = second_document(text_)) {
      error(*second, "a spec file holds one YAML document; this starts a second one");
    } else if (kind_of(root) == Kind::kNull) {
      error({1, 1}, "the file holds no YAML document; a spec file is a mapping with a 'cases' list");
    } else {
      parse_root(root, suite);
    }
  } catch (const YAML::Exception& ex) {
    Pos p = ex.mark.is_null() || ex.mark.line < 0 ? Pos{} : Pos{ex.mark.line + 1, ex.mark.column + 1};
    error(p, ex.msg);
  } catch (const std::exception& ex) {
    error({1, 1}, str_cat("cannot read the file: ", ex.what()));
  }
  if (!errors_.empty()) return finish();
  return suite;
}

absl::Status Loader::finish() const {
  std::vector<Diag> errors = errors_;
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
  return absl::InvalidArgumentError(out);
}

}  // namespace

absl::StatusOr<SuiteSpec> load_suite_string(std::string_view yaml_text, std::string_view file_name) {
  return Loader(yaml_text, std::string(file_name)).run();
}

absl::StatusOr<SuiteSpec> load_suite_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(str_cat(path, ": error: no such file"));
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f) return absl::NotFoundError(str_cat(path, ": error: cannot read the file"));
  return load_suite_string(ss.str(), path);
}

absl::StatusOr<std::vector<std::string>> find_spec_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  std::set<std::string> seen;
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    fs::path canonical = fs::weakly_canonical(p, ec);
    if (seen.insert(ec ? p.string() : canonical.string()).second) out.push_back(p.string());
  };
  for (const std::string& path : paths) {
    std::error_code ec;
    fs::file_status st = fs::status(path, ec);
    if (ec || !fs::exists(st)) return absl::NotFoundError(str_cat(path, ": error: no such file or directory"));
    if (!fs::is_directory(st)) {
      add(path);
      continue;
    }
    std::vector<fs::path> found;
    fs::recursive_directory_iterator it(path, fs::directory_options::skip_permission_denied, ec), end;
    if (ec) return absl::NotFoundError(str_cat(path, ": error: cannot read the directory: ", ec.message()));
    for (; it != end; it.increment(ec)) {
      if (ec) return absl::NotFoundError(str_cat(path, ": error: cannot read the directory: ", ec.message()));
      std::string name = it->path().filename().string();
      if (!name.empty() && name[0] == '.') {
        if (it->is_directory(ec)) it.disable_recursion_pending();
        continue;
      }
      std::string ext = it->path().extension().string();
      if ((ext == ".yaml" || ext == ".yml") && it->is_regular_file(ec)) found.push_back(it->path());
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) add(p);
  }
  return out;
}

absl::StatusOr<std::vector<SuiteSpec>> load_suites(const std::vector<std::string>& paths) {
  auto files = find_spec_files(paths);
  if (!files.ok()) return files.status();
  std::vector<SuiteSpec> suites;
  std::vector<std::string> errors;
  std::map<std::string, std::string> names;  // suite name -> file
  for (const std::string& f : *files) {
    auto s = load_suite_file(f);
    if (!s.ok()) {
      errors.emplace_back(s.status().message());
      continue;
    }
    auto [it, inserted] = names.emplace(s->name, f);
    if (!inserted) {
      errors.push_back(str_cat(f, ": error: suite name '", s->name, "' is also the name of ", it->second,
                               "; set `suite:` in one of them"));
    }
    suites.push_back(*std::move(s));
  }
  if (!errors.empty()) return absl::InvalidArgumentError(join(errors, "\n"));
  return suites;
}

}  // namespace opspec::spec
