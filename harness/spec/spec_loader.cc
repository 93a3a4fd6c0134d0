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
#include <set>
#include <sstream>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "harness/regex.h"
#include "harness/program/fixture.h"
#include "harness/spec/internal/spec_loader_impl.h"
#include "harness/spec/internal/yaml_reader.h"
#include "harness/tensor_hash.h"
#include "runtime/core/device.h"
#include "runtime/core/did_you_mean.h"
#include "runtime/core/error.h"

namespace opspec::spec {
namespace internal {

using YAML::Node;

namespace {

// kMemoryFormatNames: what `memory_format:` takes (with or without "torch.").
constexpr std::string_view kMemoryFormatNames[] = {"contiguous_format", "channels_last", "channels_last_3d"};

// bare_format_name: "channels_last" for MemoryFormat::kChannelsLast (PyTorch's
// messages name the format without "torch.").
std::string_view bare_format_name(MemoryFormat f) { return memory_format_name(f).substr(6); }

}  // namespace

// read_memory_format: an input's `memory_format:` as torch names it; its rank
// is checked against the shape once the whole input is read.
std::optional<MemoryFormat> Loader::read_memory_format(const Entry& e) {
  auto s = get_string(e);
  if (!s) return std::nullopt;
  std::string_view name = *s;
  if (name.starts_with("torch.")) name.remove_prefix(6);
  for (MemoryFormat f : {MemoryFormat::kContiguous, MemoryFormat::kChannelsLast, MemoryFormat::kChannelsLast3d}) {
    if (bare_format_name(f) == name) return f;
  }
  static const std::vector<std::string_view> kNames(std::begin(kMemoryFormatNames), std::end(kMemoryFormatNames));
  if (name == "preserve_format") {  // x.contiguous(memory_format=torch.preserve_format) is refused in PyTorch too
    error(val_pos(e), str_cat("memory_format '", *s, "' is not a layout an input can be made in (allowed: ",
                              join(kNames, ", "), ")"));
  } else {
    error(val_pos(e), str_cat("unknown memory_format '", *s, "'", did_you_mean(name, kNames), " (allowed: ",
                              join(kNames, ", "), ", or torch names like torch.channels_last)"));
  }
  return std::nullopt;
}

Defaults Loader::parse_defaults(const Entry& e) {
  Defaults d;
  auto m =
      read_map(e.value, val_pos(e), "'defaults'", "in defaults", {"dtype", "seed", "backend", "device", "devices", "no_grad"});
  if (!m) return d;
  if (const Entry* x = m->get("dtype")) d.dtype = get_dtype(*x).value_or(d.dtype);
  if (const Entry* x = m->get("seed")) d.seed = get_int(*x, 0, std::numeric_limits<int64_t>::max()).value_or(0);
  if (const Entry* x = m->get("no_grad")) d.no_grad = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("backend")) {
    if (auto b = get_string(*x); b && check_backend(val_pos(*x), *b)) d.backend = *b;
  }
  if (m->get("device") && m->get("devices"))
    error(key_pos(*m->get("devices")), "give 'device' or 'devices' in defaults, not both");
  if (const Entry* x = m->get("device")) {
    if (auto s = get_string(*x); s && check_device(*s, val_pos(*x))) d.devices = {*s};
  }
  if (const Entry* x = m->get("devices")) {
    if (auto l = get_string_list(*x); l && check_devices(*x, *l)) d.devices = *l;
  }
  return d;
}

bool Loader::check_devices(const Entry& e, const std::vector<std::string>& devices) {
  if (devices.empty()) {
    error(val_pos(e), "'devices' must not be empty");
    return false;
  }
  bool ok = true;
  auto it = e.value.begin();
  for (size_t i = 0; i < devices.size(); ++i, ++it) {
    const Pos p = pos_of(*it, val_pos(e));  // get_string_list read e.value, a sequence of devices.size()
    ok = check_device(devices[i], p) && ok;
    if (std::find(devices.begin(), devices.begin() + static_cast<std::ptrdiff_t>(i), devices[i]) !=
        devices.begin() + static_cast<std::ptrdiff_t>(i)) {
      error(p, str_cat("device '", devices[i], "' is listed twice in 'devices'"));  // one id per run
      ok = false;
    }
  }
  return ok;
}

std::optional<InputSpec> Loader::parse_input(const Entry& e, const std::string& where, const InputSpec* base) {
  const std::string ctx = str_cat("in input '", e.name, "' of ", where);
  auto m = read_map(e.value, val_pos(e), str_cat("input '", e.name, "'"), ctx,
                    {"shape", "init", "dtype", "device", "full", "values", "requires_grad", "memory_format"});
  if (!m) return std::nullopt;
  InputSpec in = base ? *base : InputSpec{};
  in.name = e.name;
  in.where = {file(), key_pos(e).line, key_pos(e).col};
  size_t before = error_count();
  if (!base && !is_identifier(e.name)) {
    error(key_pos(e), str_cat("input name '", e.name, "' is not an identifier (letters, digits, '_')"));
  } else if (!base && is_reserved_name(e.name)) {  // the program would read a literal, never the input
    error(key_pos(e), str_cat("input name '", e.name,
                              "' is reserved in the program language (True, None, inf, dtypes such as f32, "
                              "return); rename the input"));
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
      // Size-0 dims count as 1, so each dim is bounded even when numel is 0:
      // ops on the input (a reduction over the 0 dim) may make every other dim
      // real. See Note [Checked sizes] in runtime/core/tensor.cc.
      int64_t span = 1;
      for (int64_t d : shape) {
        const int64_t f = std::max<int64_t>(d, 1);
        span = span > kMaxSpecNumel / f ? kMaxSpecNumel + 1 : span * f;
      }
      if (ok && span > kMaxSpecNumel) {
        const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
        error(val_pos(*s), str_cat("shape ", shape_str(shape), " has more than ", kMaxSpecNumel,
                                   empty ? " elements once its size-0 dims are left out" : " elements",
                                   ", the most a spec input may have"));
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
              str_cat("unknown init '", *s, "'", did_you_mean(*s, kKinds), " (allowed: ", join(kKinds, ", "), ")"));
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
  if (in.init == "values" && error_count() == before) {
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
  if (const Entry* r = m->get("requires_grad")) in.requires_grad = get_bool(*r).value_or(false);
  const Entry* format = m->get("memory_format");
  if (format) in.memory_format = read_memory_format(*format);
  if (in.memory_format && *in.memory_format != MemoryFormat::kContiguous && error_count() == before) {
    // PyTorch's words (x.contiguous(memory_format=...) on the wrong rank), at
    // the key, or at the shape when a calls/bench override changed the shape.
    const size_t rank = *in.memory_format == MemoryFormat::kChannelsLast ? 4 : 5;
    if (in.shape.size() != rank) {
      const Entry* shape = m->get("shape") ? m->get("shape") : values;
      const Pos p = format ? key_pos(*format) : shape ? val_pos(*shape) : m->pos;
      error(p, str_cat("input '", e.name, "': required rank ", rank, " tensor to use ",
                       bare_format_name(*in.memory_format), " format (shape ", shape_str(in.shape), " has ",
                       in.shape.size(), in.shape.size() == 1 ? " dim)" : " dims)"));
    }
  }
  if (error_count() != before) return std::nullopt;
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
                                  " (inputs: ", join(names, ", "), ")"));
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


void Loader::read_program(const Entry& e, CaseSpec& c) {
  auto text = get_string(e);
  if (!text) return;
  try {
    auto program = opspec::parse_program(*text, block_origin(e));
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
                names.empty() ? " (no fixtures are registered)" : str_cat(" (registered: ", join(names, ", "), ")"));
    return have_inputs;
  }
  if (!have_inputs) {
    for (const FixtureInput& fi : f->inputs) {
      InputSpec in;
      in.name = fi.name, in.shape = fi.shape, in.dtype = fi.dtype, in.init = fi.init;
      in.where = {file(), val_pos(e).line, val_pos(e).col};
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
    c.load_error = str_cat(loc(val_pos(e)), ": fixture '", *name, "' takes inputs (", join(want, ", "),
                           ") but the case gives (", join(got, ", "), ")");
    return true;
  }
  c.inputs = std::move(ordered);
  return true;
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
  // Errors from here on belong to this case (See Note [Two kinds of load errors]).
  const size_t mark = error_count();
  CaseSpec c;
  parse_case_body(n, index, defaults, c);
  c.spec_error = take_errors_since(mark);
  if (c.spec_error && !valid_case_name(c.name)) c.name.clear();  // parse_root names it case_N
  suite.cases.push_back(std::move(c));
}

void Loader::parse_case_body(const Node& n, int index, const Defaults& defaults, CaseSpec& c) {
  Pos cp = pos_of(n, {});
  c.where = {file(), cp.line, cp.col};
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
                     "xfail", "devices", "dtype", "seed", "bench", "no_grad"});
  if (!m) return;
  c.dtype = defaults.dtype, c.seed = defaults.seed, c.devices = defaults.devices;
  c.default_backend = defaults.backend;
  c.no_grad = defaults.no_grad;
  if (const Entry* x = m->get("name")) {
    c.name = get_string(*x).value_or("");
    if (!valid_case_name(c.name)) {
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
  if (const Entry* x = m->get("no_grad")) c.no_grad = get_bool(*x).value_or(c.no_grad);
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
  if (const Entry* x = m->get("bench")) c.bench = parse_bench(*x, c, inputs_known, where);
  // An empty `expect:` or `debug:` is an empty mapping.
  if (const Entry* x = m->get("expect"); x && kind_of(x->value) != Kind::kNull) parse_expect(*x, c.expect, where);
  if (c.expect.check_module && !(c.compile && c.compile->module)) {
    error({c.expect.check_module_where.line, c.expect.check_module_where.column},
          "'check_module' reads what compile(module) made: it needs 'compile: {module: true}'");
  }
  if (const Entry* x = m->get("debug"); x && kind_of(x->value) != Kind::kNull) parse_debug(*x, c.debug, where);
  if (const Entry* x = m->get("skip_if")) {
    static const std::vector<std::string_view> kConds(std::begin(kSkipConditions), std::end(kSkipConditions));
    for (const std::string& s : get_string_list(*x).value_or(std::vector<std::string>{})) {
      if (std::find(kConds.begin(), kConds.end(), s) == kConds.end()) {
        error(val_pos(*x), str_cat("unknown skip_if condition '", s, "'", did_you_mean(s, kConds),
                                   " (allowed: ", join(kConds, ", "), ")"));
      }
      c.skip_if.push_back(s);
    }
  }
  if (const Entry* x = m->get("xfail")) c.xfail = get_string(*x);
  if (const Entry* x = m->get("devices")) {
    if (auto l = get_string_list(*x); l && check_devices(*x, *l)) c.devices = *l;
  }
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
    suite.name_line = key_pos(*x).line;
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
  // A case without a usable name fails with its own error as case_N: a name
  // no other case has, so the file's other cases still run.
  for (size_t i = 0; i < suite.cases.size(); ++i) {
    CaseSpec& c = suite.cases[i];
    if (!c.name.empty()) continue;
    std::string name = str_cat("case_", i + 1);
    while (seen.contains(name)) name += "_";
    seen.emplace(name, Pos{c.where.line, c.where.column});
    c.name = std::move(name);
  }
}

absl::StatusOr<SuiteSpec> Loader::run() {
  SuiteSpec suite;
  suite.file = file();
  suite.name = std::filesystem::path(file()).stem().string();
  if (std::optional<Node> root = load_document()) parse_root(*root, suite);
  if (has_errors()) return finish();
  return suite;
}

}  // namespace internal

using internal::join;
using internal::Loader;

absl::StatusOr<SuiteSpec> load_suite_string(std::string_view yaml_text, std::string_view file_name) {
  return Loader(yaml_text, std::string(file_name)).run();
}

absl::StatusOr<SuiteSpec> load_suite_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    return absl::NotFoundError(str_cat(path, ": error: no such file"));
  }
  // A spec file is text a person writes: past kMaxSpecFileBytes it is a
  // mistake (a data file, /dev/zero behind a link) and is not read whole.
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > kMaxSpecFileBytes) {
    return absl::InvalidArgumentError(str_cat(path, ":1:1: error: the file has ", size, " bytes; a spec file may have ",
                                              kMaxSpecFileBytes, " at most"));
  }
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  if (!f) return absl::NotFoundError(str_cat(path, ": error: cannot read the file"));
  return load_suite_string(ss.str(), path);
}

// Note [Unreadable directories]
// A directory under a PATH that cannot be listed is an error naming it, as an
// unreadable spec file is: skipping it (skip_permission_denied) let a run pass
// with exit 0 while the specs in it never loaded.
absl::StatusOr<std::vector<std::string>> find_spec_files(const std::vector<std::string>& paths,
                                                         std::vector<std::string>* unreadable) {
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
    // Each directory listed on its own (not recursive_directory_iterator), so
    // an error names the directory that failed; links to directories are not
    // followed, as that iterator's default had it.
    std::vector<fs::path> found, dirs{fs::path(path)};
    while (!dirs.empty()) {
      const fs::path dir = std::move(dirs.back());
      dirs.pop_back();
      fs::directory_iterator it(dir, ec), end;
      for (; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!name.empty() && name[0] == '.') continue;
        std::error_code ignored;  // an entry that vanished or a dangling link: not a spec file
        if (it->is_directory(ignored) && !it->is_symlink(ignored)) {
          dirs.push_back(it->path());
          continue;
        }
        const std::string ext = it->path().extension().string();
        if ((ext == ".yaml" || ext == ".yml") && it->is_regular_file(ignored)) found.push_back(it->path());
      }
      if (!ec) continue;
      std::string message = str_cat(dir.string(), ": error: cannot read the directory: ", ec.message());
      if (unreadable == nullptr) return absl::PermissionDeniedError(message);
      unreadable->push_back(std::move(message));
      ec.clear();
    }
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) add(p);
  }
  return out;
}

absl::StatusOr<std::vector<SuiteSpec>> load_suites(const std::vector<std::string>& paths) {
  std::vector<std::string> errors;
  auto files = find_spec_files(paths, &errors);
  if (!files.ok()) return files.status();
  std::vector<SuiteSpec> suites;
  for (const std::string& f : *files) {
    auto s = load_suite_file(f);
    if (!s.ok()) {
      errors.emplace_back(s.status().message());
      continue;
    }
    suites.push_back(*std::move(s));
  }
  for (const DuplicateSuite& d : duplicate_suites(suites)) errors.push_back(d.message);
  if (!errors.empty()) return absl::InvalidArgumentError(join(errors, "\n"));
  return suites;
}

std::vector<DuplicateSuite> duplicate_suites(const std::vector<SuiteSpec>& suites) {
  std::vector<DuplicateSuite> out;
  std::map<std::string, const SuiteSpec*> first;  // suite name -> the first file to use it
  for (size_t i = 0; i < suites.size(); ++i) {
    const SuiteSpec& s = suites[i];
    auto [it, inserted] = first.emplace(s.name, &s);
    if (inserted) continue;
    const SuiteSpec& other = *it->second;
    const auto where = [](const SuiteSpec& x) { return x.name_line > 0 ? str_cat(x.file, ":", x.name_line) : x.file; };
    out.push_back({i, str_cat(where(s), ": error: suite name '", s.name, "' is also the name of ", where(other),
                              " (case ids suite::case would clash); set a different `suite:` in one of them")});
  }
  return out;
}

}  // namespace opspec::spec
