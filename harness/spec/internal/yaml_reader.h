// yaml_reader.h: typed, position-keeping reads of a YAML document, for the
// spec loader. Not part of opspec's API. Every read that fails records a
// "line:col" error and returns nullopt, so a loader can report all of a
// file's problems at once (Note [Two kinds of load errors]).
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "harness/program/program.h"
#include "runtime/core/dtype.h"
#include "runtime/core/error.h"

namespace opspec::spec::internal {

// kMaxNesting: flow or block nesting beyond this is rejected before parsing.
// See Note [Hostile input].
inline constexpr int kMaxNesting = 64;

using Names = std::initializer_list<std::string_view>;

// Pos: a 1-based line and column in the file.
struct Pos {
  int line = 1;
  int col = 1;
};

// Diag: one error at a position.
struct Diag {
  Pos pos;
  std::string message;
};

// Kind: the YAML 1.2 core-schema type of a node.
enum class Kind { kNull, kBool, kInt, kFloat, kString, kSeq, kMap };

// kind_of: a node's Kind; quoted and block scalars (tag "!") and !!str are
// strings whatever they look like.
Kind kind_of(const YAML::Node& n);

// kind_name: "an integer", "a mapping", ... for messages.
std::string_view kind_name(Kind k);

// is_int_text: an optional sign, then decimal digits.
bool is_int_text(std::string_view s);

// bool_text: the value of a YAML 1.2 boolean scalar, if s is one.
std::optional<bool> bool_text(std::string_view s);

// join: the items, separated by sep.
template <typename Range>
std::string join(const Range& items, std::string_view sep) {
  std::string out;
  for (const auto& item : items) str_append(&out, out.empty() ? "" : sep, item);
  return out;
}

// is_identifier: letters, digits and '_', not starting with a digit.
bool is_identifier(std::string_view s);

// Entry: one key: value pair of a mapping.
struct Entry {
  YAML::Node key;
  YAML::Node value;
  std::string name;
};

// MapView: a mapping's entries after key checks (first occurrence of each).
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

// YamlReader: one file's text, its errors, and typed reads of its nodes.
class YamlReader {
 public:
  YamlReader(std::string_view text, std::string file);

  // load_document: the file's single YAML document, or nullopt with the
  // errors recorded (bad YAML, too deep, empty, a second document).
  std::optional<YAML::Node> load_document();

  // error: records a problem at p.
  void error(Pos p, std::string message) { errors_.push_back({p, std::move(message)}); }
  bool has_errors() const { return !errors_.empty(); }
  size_t error_count() const { return errors_.size(); }
  // take_errors_since: removes the errors recorded after the first `mark` and
  // returns them as finish() would ("file:line:col: error: ..." lines), or
  // nullopt when there are none.
  std::optional<std::string> take_errors_since(size_t mark);
  // finish: every recorded error, sorted by position and deduplicated, as one
  // InvalidArgumentError ("file:line:col: error: ..." per line).
  absl::Status finish() const;

  const std::string& file() const { return file_; }
  // loc: "file:line:col".
  std::string loc(Pos p) const { return str_cat(file_, ":", p.line, ":", p.col); }

  // pos_of: where the node is, or fallback when yaml-cpp has no mark.
  Pos pos_of(const YAML::Node& n, Pos fallback) const;
  Pos key_pos(const Entry& e) const { return pos_of(e.key, {}); }
  // val_pos: where the value is, or its key when the value is empty (yaml-cpp
  // marks an empty value at the next token, possibly lines below).
  Pos val_pos(const Entry& e) const;

  // read_map: n as a mapping whose keys are among allowed (any key when
  // allowed is empty); unknown and duplicate keys are errors naming context.
  std::optional<MapView> read_map(const YAML::Node& n, Pos where, std::string_view label, std::string_view context,
                                  Names allowed);
  std::optional<int64_t> get_int(const Entry& e, int64_t lo, int64_t hi);
  // get_double: a number (.inf and .nan allowed unless finite).
  std::optional<double> get_double(const YAML::Node& v, Pos p, std::string_view what, bool finite);
  std::optional<bool> get_bool(const Entry& e);
  std::optional<std::string> get_string(const YAML::Node& v, Pos p, std::string_view what);
  std::optional<std::string> get_string(const Entry& e) {
    return get_string(e.value, val_pos(e), str_cat("'", e.name, "'"));
  }
  std::optional<std::vector<std::string>> get_string_list(const Entry& e);
  // get_dtype: "f32", "float32", ... (did-you-mean on a typo).
  std::optional<DType> get_dtype(const Entry& e);
  // check_device: whether d parses as a Device; an error at p if not.
  bool check_device(const std::string& d, Pos p);

  // block_origin: where a scalar's text starts in the file (past quotes, a
  // tag or an anchor; a block scalar's first line and indentation), so
  // positions inside the text can be reported as file positions; unmapped
  // set where they cannot be (See Note [Program positions]).
  ProgramOrigin block_origin(const Entry& e) const;

 private:
  bool verbatim(std::string_view value, int first_line, int col0) const;
  // format_errors: errors sorted by position, deduplicated, one line each.
  std::string format_errors(std::vector<Diag> errors) const;
  std::string_view text_;
  std::string file_;
  std::vector<size_t> line_starts_;  // offset of each line of text_
  std::vector<Diag> errors_;
};

}  // namespace opspec::spec::internal
