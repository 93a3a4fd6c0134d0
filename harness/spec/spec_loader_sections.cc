// spec_loader_sections.cc: the loader's compile:, bench: and expect:
// sections (Loader in internal/spec_loader_impl.h). See docs/spec-format.md.
#include <algorithm>
#include <limits>
#include <optional>

#include "absl/strings/numbers.h"
#include "harness/expect/op_checks.h"
#include "harness/regex.h"
#include "harness/spec/bench.h"
#include "harness/spec/internal/spec_loader_impl.h"
#include "harness/tensor_hash.h"
#include "runtime/compile/backend.h"
#include "runtime/core/did_you_mean.h"

namespace opspec::spec::internal {

using YAML::Node;

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
                         did_you_mean(name, names), " (inputs: ", join(names, ", "), ")"));
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

void Loader::check_op_names(const Entry& e, const std::vector<std::string>& names) {
  if (kind_of(e.value) != Kind::kSeq) return;
  size_t i = 0;
  for (auto it = e.value.begin(); it != e.value.end() && i < names.size(); ++it, ++i) {
    // The check library's verdict and words, as the gtest macros give them.
    const CheckResult known = check_op_names_known({names[i]});
    if (known.ok) continue;
    error(pos_of(*it, val_pos(e)), str_cat("'", e.name, "' entry ", known.message,
                                           " (See Note [Op name patterns]: aten::add, add, aten::add.Tensor)"));
  }
}

bool Loader::check_backend(Pos p, const std::string& name) {
  const std::vector<std::string> known = list_backends({.exclude_tags = {}});
  if (std::find(known.begin(), known.end(), name) != known.end()) return true;
  error(p, str_cat("unknown backend '", name, "'", did_you_mean(name, known), " (registered: ",
                            join(known, ", "), ")"));
  return false;
}

std::optional<CompileSpec> Loader::parse_compile(const Entry& e, const CaseSpec& c, bool inputs_known,
                                                 const Defaults& defaults, const std::string& where) {
  CompileSpec cs;
  cs.backend = defaults.backend;
  cs.where = {file(), val_pos(e).line, val_pos(e).col};
  Kind k = kind_of(e.value);
  if (k == Kind::kNull) return cs;  // `compile:` alone: every option at its default
  if (k == Kind::kBool) return get_bool(e).value_or(false) ? std::optional(cs) : std::nullopt;
  auto m = read_map(e.value, val_pos(e), "'compile'", str_cat("in compile of ", where),
                    {"backend", "backward_backend", "fullgraph", "dynamic", "static", "disallow_in_graph",
                     "cache_size_limit", "error_on_recompile", "trace_once", "calls", "module"});
  if (!m) return std::nullopt;
  if (const Entry* x = m->get("backend")) {
    if (auto b = get_string(*x); b && check_backend(val_pos(*x), *b)) cs.backend = *b;
  }
  if (const Entry* x = m->get("backward_backend")) {
    if (auto b = get_string(*x); b && check_backend(val_pos(*x), *b)) cs.backward_backend = *b;
  }
  if (const Entry* x = m->get("fullgraph")) cs.fullgraph = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("dynamic")) {
    if (kind_of(x->value) == Kind::kBool)
      cs.dynamic = get_bool(*x);
    else if (kind_of(x->value) == Kind::kSeq)
      parse_marks(*x, c, inputs_known, cs.mark_dynamic);
    else
      error(val_pos(*x), str_cat("'dynamic' must be a boolean or a list of NAME.DIM marks (e.g. [x.0]), got ",
                                 kind_name(kind_of(x->value))));
  }
  if (const Entry* x = m->get("static")) parse_marks(*x, c, inputs_known, cs.mark_static);
  if (const Entry* x = m->get("disallow_in_graph")) {
    cs.disallow_in_graph = get_string_list(*x).value_or(std::vector<std::string>{});
    check_op_names(*x, cs.disallow_in_graph);
  }
  if (const Entry* x = m->get("cache_size_limit"))  // compile() needs room for one graph
    cs.cache_size_limit = static_cast<int>(get_int(*x, 1, 1 << 20).value_or(8));
  if (const Entry* x = m->get("error_on_recompile")) cs.error_on_recompile = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("trace_once")) cs.trace_once = get_bool(*x).value_or(false);
  if (const Entry* x = m->get("module")) {
    cs.module = get_bool(*x).value_or(false);
    if (cs.module && c.program) error(val_pos(*x), "'module: true' needs a module fixture (fixture: NAME), not a program");
  }
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

std::optional<BenchSpec> Loader::parse_bench(const Entry& e, const CaseSpec& c, bool inputs_known,
                                             const std::string& where) {
  BenchSpec b;
  b.where = {file(), val_pos(e).line, val_pos(e).col};
  const Kind k = kind_of(e.value);
  if (k == Kind::kNull) return b;  // `bench:` alone: the case's inputs, the command's backends
  if (k == Kind::kBool) return get_bool(e).value_or(false) ? std::optional(b) : std::nullopt;
  auto m = read_map(e.value, val_pos(e), "'bench'", str_cat("in bench of ", where), {"sizes", "backends", "min_time"});
  if (!m) return std::nullopt;
  if (const Entry* x = m->get("backends")) {
    b.backends = get_string_list(*x).value_or(std::vector<std::string>{});
    if (b.backends.empty()) error(val_pos(*x), "'backends' must list at least one backend");
    // Checked here as compile.backend is: a typo failed only under `opspec bench`, without a location.
    auto it = x->value.begin();
    for (size_t i = 0; i < b.backends.size() && it != x->value.end(); ++i, ++it) {
      check_backend(pos_of(*it, val_pos(*x)), b.backends[i]);
    }
  }
  if (const Entry* x = m->get("min_time")) {
    b.min_time = get_double(x->value, val_pos(*x), "'min_time'", /*finite=*/true);
    if (b.min_time && (*b.min_time <= 0 || *b.min_time > kMaxBenchMinTime)) {
      error(val_pos(*x), str_cat("'min_time' must be a number of seconds above 0 and at most ", kMaxBenchMinTime,
                                 ", got ", *b.min_time));
    }
  }
  if (const Entry* x = m->get("sizes")) {
    // {x: [[1024], [1048576]], y: [...]}: variant i gives each input its i-th shape.
    auto sizes = read_map(x->value, val_pos(*x), "'sizes'", str_cat("in bench.sizes of ", where), {});
    if (!sizes) return b;
    size_t n = 0;
    for (const Entry& s : sizes->entries) {
      if (kind_of(s.value) != Kind::kSeq || s.value.size() == 0) {
        error(val_pos(s), str_cat("bench.sizes of '", s.name, "' must be a non-empty list of shapes, e.g. [[1024], [4096]]"));
        return b;
      }
      for (auto it = s.value.begin(); it != s.value.end(); ++it) {
        if (kind_of(*it) == Kind::kSeq) continue;  // `x: [8, 16]` reads as two shapes without their brackets
        error(pos_of(*it, val_pos(s)), str_cat("bench.sizes of '", s.name, "' lists shapes, and '", it->Scalar(),
                                               "' is not one: write [[8], [16]] for two 1-d sizes"));
        return b;
      }
      if (n != 0 && s.value.size() != n) {
        error(val_pos(s), str_cat("bench.sizes lists ", n, " shapes for one input but ", s.value.size(), " for '",
                                  s.name, "': give each input as many"));
        return b;
      }
      n = s.value.size();
    }
    if (!inputs_known) return b;
    for (size_t i = 0; i < n; ++i) {
      std::vector<InputSpec> variant = c.inputs;
      for (const Entry& s : sizes->entries) {
        auto it = std::find_if(variant.begin(), variant.end(), [&](const InputSpec& in) { return in.name == s.name; });
        if (it == variant.end()) {
          std::vector<std::string_view> names;
          for (const InputSpec& in : c.inputs) names.push_back(in.name);
          error(key_pos(s), str_cat("bench.sizes: '", s.name, "' is not an input of ", where, did_you_mean(s.name, names),
                                    " (inputs: ", join(names, ", "), ")"));
          return b;
        }
        YAML::Node spec(YAML::NodeType::Map);
        spec["shape"] = s.value[i];
        if (auto in = parse_input(Entry{s.key, spec, s.name}, where, &*it)) *it = *in;
      }
      b.variants.push_back(std::move(variant));
    }
  }
  return b;
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
  eq.where = {file(), p.line, p.col};
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
    error(p, str_cat("'equivalent' must be 'bitwise', true or a mapping {hash, rtol, atol, equal_nan}, got ", kind_name(k),
                     k == Kind::kString ? str_cat(" '", e.value.Scalar(), "'") : ""));
    return;
  }
  auto m = read_map(e.value, p, "'equivalent'", "in equivalent", {"bitwise", "hash", "rtol", "atol", "equal_nan"});
  if (!m) return;
  if (const Entry* b = m->get("bitwise")) eq.bitwise = get_bool(*b).value_or(false);
  if (const Entry* b = m->get("equal_nan")) eq.equal_nan = get_bool(*b).value_or(true);
  if (const Entry* h = m->get("hash")) {
    if (auto s = get_string(*h)) {
      if (parse_hash_kind(*s))
        eq.hash = *s;
      else
        error(val_pos(*h), str_cat("unknown hash '", *s, "' (allowed: norm, hash_tensor, bitwise)"));
    }
  }
  read_tolerances(*m, eq.rtol, eq.atol);
  if (eq.bitwise && (m->get("rtol") || m->get("atol"))) error(m->pos, "'bitwise' excludes 'rtol' and 'atol'");
  x.equivalent = eq;
}

void Loader::read_tolerances(const MapView& m, std::optional<double>& rtol_out, std::optional<double>& atol_out) {
  const Entry* rtol = m.get("rtol");
  const Entry* atol = m.get("atol");
  if (rtol) rtol_out = get_double(rtol->value, val_pos(*rtol), "'rtol'", true);
  if (atol) atol_out = get_double(atol->value, val_pos(*atol), "'atol'", true);
  for (auto [t, v] : {std::pair{rtol, rtol_out}, {atol, atol_out}}) {
    if (t && v && *v < 0) error(val_pos(*t), str_cat("'", t->name, "' must be non-negative"));  // -0.0 is 0
  }
  if ((rtol == nullptr) != (atol == nullptr) && !m.had_unknown) {
    error(key_pos(rtol ? *rtol : *atol),
          str_cat("'", rtol ? "rtol" : "atol", "' given without '", rtol ? "atol" : "rtol", "': give both or neither"));
  }
}

// parse_gradcheck: `gradcheck: true` or {eps, atol, rtol} (torch.autograd.gradcheck's defaults).
void Loader::parse_gradcheck(const Entry& e, ExpectSpec& x) {
  if (kind_of(e.value) != Kind::kMap) {
    if (get_bool(e).value_or(false)) x.gradcheck = GradcheckSpec{};
    return;
  }
  auto m = read_map(e.value, val_pos(e), "'gradcheck'", "in gradcheck", {"eps", "atol", "rtol"});
  if (!m) return;
  GradcheckSpec g;
  for (auto [key, field] : {std::pair{"eps", &g.eps}, {"atol", &g.atol}, {"rtol", &g.rtol}}) {
    const Entry* v = m->get(key);
    if (v == nullptr) continue;
    *field = get_double(v->value, val_pos(*v), str_cat("'", key, "'"), true).value_or(*field);
    if (*field < 0 || (*field == 0 && field == &g.eps)) {
      error(val_pos(*v), str_cat("'", key, "' must be ", field == &g.eps ? "positive" : "non-negative"));
    }
  }
  x.gradcheck = g;
}

void Loader::parse_expect(const Entry& e, ExpectSpec& x, const std::string& where) {
  auto m = read_map(e.value, val_pos(e), "'expect'", str_cat("in expect of ", where),
                    {"ops", "ops_contain", "ops_exclude", "function_ops", "ignore_ops", "graphs", "graph_breaks",
                     "recompiles", "fused_kernels", "equivalent", "gradcheck", "check", "check_graphs", "check_guards", "check_module", "export", "debug_string",
                     "error", "outputs", "strides"});
  if (!m) return;
  x.where = {file(), val_pos(e).line, val_pos(e).col};
  constexpr int64_t kMaxCount = std::numeric_limits<int>::max();
  for (auto [key, list] : {std::pair{"ops", &x.ops}, {"ops_contain", &x.ops_contain},
                           {"ops_exclude", &x.ops_exclude}, {"function_ops", &x.function_ops}}) {
    const Entry* v = m->get(key);
    if (v == nullptr) continue;
    *list = get_string_list(*v);
    if (*list) check_op_names(*v, **list);
  }
  if (const Entry* v = m->get("ignore_ops")) {
    x.ignore_ops = get_string_list(*v).value_or(std::vector<std::string>{});
    check_op_names(*v, x.ignore_ops);
  }
  if (const Entry* v = m->get("gradcheck")) parse_gradcheck(*v, x);
  if (const Entry* v = m->get("graphs")) x.graphs = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("recompiles")) x.recompiles = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("fused_kernels")) x.fused_kernels = get_int(*v, 0, kMaxCount);
  if (const Entry* v = m->get("graph_breaks")) parse_graph_breaks(*v, x);
  if (const Entry* v = m->get("equivalent")) parse_equivalent(*v, x);
  // FileCheck directives report check-file positions; the block's origin
  // makes them the YAML file's (as for programs). A scalar that is not the
  // file's text line for line keeps where it starts and says what it is
  // (`within`), and FileCheck gives the checks' own positions after it.
  auto check_where = [&](const Entry& v) {
    ProgramOrigin o = block_origin(v);
    return SourceLocation{file(), o.first_line, o.column_offset + 1, o.unmapped};
  };
  if (const Entry* v = m->get("check")) x.check = get_string(*v), x.check_where = check_where(*v);
  if (const Entry* v = m->get("check_graphs")) x.check_graphs = get_string(*v), x.check_graphs_where = check_where(*v);
  if (const Entry* v = m->get("check_guards")) x.check_guards = get_string(*v), x.check_guards_where = check_where(*v);
  if (const Entry* v = m->get("check_module")) x.check_module = get_string(*v), x.check_module_where = check_where(*v);
  if (const Entry* v = m->get("export")) x.export_check = get_string(*v), x.export_where = check_where(*v);
  if (const Entry* v = m->get("debug_string")) {
    // An empty `debug_string:` is an empty golden text, for --accept to fill in.
    x.debug_string = kind_of(v->value) == Kind::kNull ? std::optional<std::string>("") : get_string(*v);
    Pos p = val_pos(*v);
    x.debug_string_where = {file(), p.line, p.col};
  }
  if (const Entry* v = m->get("error")) {
    x.error = get_string(*v);
    if (x.error) {  // See Note [Regexes]
      absl::StatusOr<Regex> re = Regex::compile(*x.error);
      if (!re.ok()) error(val_pos(*v), str_cat("'error' is not a valid regular expression: ", re.status().message()));
    }
  }
  if (const Entry* v = m->get("outputs")) parse_outputs(*v, x);
  if (const Entry* v = m->get("strides")) parse_strides(*v, x);
}

// parse_strides: `strides: [1, 3]` (one output) or `[[1, 3], [4, 1]]`, each
// entry a non-negative integer (Tensor.stride() values), errors at the entry.
void Loader::parse_strides(const Entry& e, ExpectSpec& x) {
  const Kind k = kind_of(e.value);
  if (k != Kind::kSeq) {
    error(val_pos(e), str_cat("'strides' must be a list of non-negative integers, or one list per output, got ",
                              kind_name(k)));
    return;
  }
  bool ok = true;
  auto read = [&](const Node& list, Pos where) {
    SizeVec v;
    for (auto it = list.begin(); it != list.end(); ++it) {
      const Pos p = pos_of(*it, where);
      const Kind ik = kind_of(*it);
      std::string text = ik == Kind::kInt ? it->Scalar() : "";
      if (!text.empty() && text[0] == '+') text.erase(0, 1);
      int64_t stride = 0;
      if (ik != Kind::kInt) {
        error(p, str_cat("'strides' entries must be non-negative integers, got ", kind_name(ik)));
        ok = false;
      } else if (!absl::SimpleAtoi(text, &stride) || stride < 0) {
        error(p, str_cat("stride ", it->Scalar(), " is ", text[0] == '-' ? "negative" : "out of range",
                         "; strides are non-negative integers"));
        ok = false;
      }
      v.push_back(stride);
    }
    if (ok && static_cast<int64_t>(v.size()) > kMaxRank) {
      error(where, str_cat("'strides' lists ", v.size(), " dims; a tensor has at most ", kMaxRank));
      ok = false;
    }
    return v;
  };
  StridesSpec out;
  for (auto it = e.value.begin(); it != e.value.end(); ++it) out.per_output = out.per_output || it->IsSequence();
  if (!out.per_output) {
    out.strides.push_back(read(e.value, val_pos(e)));
  } else {
    for (auto it = e.value.begin(); it != e.value.end(); ++it) {
      const Pos p = pos_of(*it, val_pos(e));
      if (!it->IsSequence()) {
        error(p, "'strides' mixes lists and numbers: give one list per output, or the single output's strides");
        return;
      }
      out.strides.push_back(read(*it, p));
    }
  }
  if (ok) x.strides = std::move(out);
}

void Loader::parse_outputs(const Entry& e, ExpectSpec& x) {
  OutputsSpec out;
  const Entry* values = &e;
  std::optional<MapView> m;
  if (kind_of(e.value) == Kind::kMap) {
    m = read_map(e.value, val_pos(e), "'outputs'", "in outputs", {"values", "rtol", "atol"});
    if (!m) return;
    values = m->get("values");
    if (values == nullptr) {
      error(val_pos(e), "'outputs' needs 'values' (a list of numbers, or one list per output)");
      return;
    }
    read_tolerances(*m, out.rtol, out.atol);
  }
  const Kind k = kind_of(values->value);
  if (k != Kind::kSeq) {
    error(val_pos(*values), str_cat("'outputs' must be a list of numbers, or one list per output, got ", kind_name(k)));
    return;
  }
  auto numbers = [&](const Node& list, Pos where) {
    std::vector<double> v;
    for (auto it = list.begin(); it != list.end(); ++it) {
      v.push_back(get_double(*it, pos_of(*it, where), "an entry of 'outputs'", false).value_or(0));
    }
    return v;
  };
  bool any_list = false;
  for (auto it = values->value.begin(); it != values->value.end(); ++it) any_list = any_list || it->IsSequence();
  out.per_output = any_list;
  if (!out.per_output) {
    out.values.push_back(numbers(values->value, val_pos(*values)));
  } else {
    for (auto it = values->value.begin(); it != values->value.end(); ++it) {
      const Pos p = pos_of(*it, val_pos(*values));
      if (!it->IsSequence()) {
        error(p, "'outputs' mixes lists and numbers: give one list per output, or the single output's numbers");
        return;
      }
      out.values.push_back(numbers(*it, p));
    }
  }
  x.outputs = std::move(out);
}

}  // namespace opspec::spec::internal
