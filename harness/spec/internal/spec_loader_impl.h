// spec_loader_impl.h: the spec loader's internals (Loader, Defaults and
// helpers), shared by spec_loader.cc (files, suites, cases, inputs, debug)
// and spec_loader_sections.cc (the compile:, bench: and expect: sections).
#pragma once

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "harness/spec/internal/yaml_reader.h"
#include "harness/spec/spec.h"

namespace opspec::spec::internal {

// kMaxRank: the most dims a spec input may have.
inline constexpr int64_t kMaxRank = 64;

using YAML::Node;

// numel_of: the product of shape (bounded by kMaxSpecNumel).
inline int64_t numel_of(const SizeVec& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;  // shapes are bounded by kMaxSpecNumel
  return n;
}

// shape_str: "[2, 3]".
inline std::string shape_str(const SizeVec& shape) { return str_cat("[", join(shape, ", "), "]"); }

// valid_case_name: non-empty, letters, digits, '_', '-' and '.' only (case
// ids appear in test names, filters and report files).
inline bool valid_case_name(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_' || ch == '-' || ch == '.';
  });
}

// Defaults: the `defaults:` section.
struct Defaults {
  DType dtype = DType::kFloat32;
  uint64_t seed = 0;
  std::string backend = "eager";
  std::vector<std::string> devices = {"cpu"};
  bool no_grad = false;
};

// Loader: one file's text into a SuiteSpec.
class Loader : public YamlReader {
 public:
  Loader(std::string_view text, std::string file) : YamlReader(text, std::move(file)) {}

  absl::StatusOr<SuiteSpec> run();

 private:
  Defaults parse_defaults(const Entry& e);
  void parse_root(const Node& root, SuiteSpec& suite);
  void parse_case(const Node& n, int index, const Defaults& defaults, SuiteSpec& suite);
  void parse_case_body(const Node& n, int index, const Defaults& defaults, CaseSpec& c);
  std::optional<InputSpec> parse_input(const Entry& e, const std::string& where, const InputSpec* base);
  std::optional<MemoryFormat> read_memory_format(const Entry& e);
  std::vector<InputSpec> parse_inputs(const Entry& e, const std::string& where, const std::vector<InputSpec>* base);
  void read_program(const Entry& e, CaseSpec& c);
  bool read_fixture(const Entry& e, CaseSpec& c, bool have_inputs);
  std::optional<BenchSpec> parse_bench(const Entry& e, const CaseSpec& c, bool inputs_known, const std::string& where);
  std::optional<CompileSpec> parse_compile(const Entry& e, const CaseSpec& c, bool inputs_known,
                                           const Defaults& defaults, const std::string& where);
  void parse_marks(const Entry& e, const CaseSpec& c, bool inputs_known,
                   std::vector<std::pair<std::string, int64_t>>& out);
  void parse_expect(const Entry& e, ExpectSpec& x, const std::string& where);
  void parse_equivalent(const Entry& e, ExpectSpec& x);
  void parse_gradcheck(const Entry& e, ExpectSpec& x);
  void parse_outputs(const Entry& e, ExpectSpec& x);
  void parse_strides(const Entry& e, ExpectSpec& x);
  // read_tolerances: a mapping's rtol and atol (non-negative, both or neither).
  void read_tolerances(const MapView& m, std::optional<double>& rtol, std::optional<double>& atol);
  void parse_graph_breaks(const Entry& e, ExpectSpec& x);
  void parse_debug(const Entry& e, DebugSpec& d, const std::string& where);
  // check_op_names: each name of op list e names a registered op (See Note
  // [Op name patterns]); a misspelt one would make ops_exclude pass vacuously.
  void check_op_names(const Entry& e, const std::vector<std::string>& names);
  // check_backend: name is a registered backend (e.g. compile.backend), else an error at p.
  bool check_backend(Pos p, const std::string& name);
  // check_devices: a devices list: each a device, none twice, not empty.
  bool check_devices(const Entry& e, const std::vector<std::string>& devices);
};

}  // namespace opspec::spec::internal
