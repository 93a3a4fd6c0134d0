// runner.cc: run_case. See Note [Running a case].
#include "harness/spec/runner.h"

#include <algorithm>
#include <chrono>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "harness/debug_diff.h"
#include "harness/debug_mode.h"
#include "harness/expect/assert_close.h"
#include "harness/expect/compile_observer.h"
#include "harness/expect/equivalence.h"
#include "harness/expect/gradcheck.h"
#include "harness/expect/op_checks.h"
#include "harness/expect/op_log.h"
#include "harness/expect/stride_checks.h"
#include "harness/filecheck.h"
#include "harness/regex.h"
#include "harness/program/fixture.h"
#include "harness/spec/case_inputs.h"
#include "harness/spec/report.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/export.h"
#include "runtime/compile/guards.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/mode.h"

namespace opspec::spec {
namespace {

// guards_text: what `check_guards:` reads: each compiled graph's guards, the
// recompile reasons, then what guard_fail_fn heard.
std::string guards_text(const CompileStats& stats, const std::vector<std::string>& guard_failures) {
  std::string text;
  for (size_t i = 0; i < stats.guard_code.size(); ++i) str_append(&text, "graph ", i + 1, " guards:\n", stats.guard_code[i], "\n");
  for (size_t i = 0; i < stats.recompile_reasons.size(); ++i) {
    str_append(&text, "recompile ", i + 1, ": ", stats.recompile_reasons[i], "\n");
  }
  for (const std::string& f : guard_failures) str_append(&text, "guard_fail_fn: ", f, "\n");
  return text;
}

// Failures: every failed expectation of one case, in the order checked.
struct Failures {
  std::vector<std::string> items;
  void add(std::string_view what, const CheckResult& r) {
    if (!r.ok) items.push_back(str_cat(what, ": ", r.message));
  }
  void add(std::string message) { items.push_back(std::move(message)); }
  bool empty() const { return items.empty(); }
  std::string str() const { return absl::StrJoin(items, "\n\n"); }
};

// error_matches: a regex search of pattern in text (See Note [Regexes]); a bad
// pattern fails with why.
CheckResult error_matches(const std::string& pattern, const std::string& text) {
  absl::StatusOr<Regex> re = Regex::compile(pattern);
  if (!re.ok()) {
    return CheckResult::fail(str_cat("expect.error is not a valid regex (", re.status().message(), "): ",
                                     shorten(pattern)));
  }
  if (re->search(text)) return CheckResult::pass();
  return CheckResult::fail(str_cat("the error does not match /", shorten(pattern), "/:\n  ", shorten(text, 4000)));
}

// needs_compile: whether the case runs compiled (see Note [Running a case], step 5).
bool needs_compile(const CaseSpec& c) {
  const ExpectSpec& e = c.expect;
  return c.compile.has_value() || e.graphs || e.graph_break_count || e.graph_breaks || e.recompiles ||
         e.fused_kernels || e.equivalent || e.check_graphs || e.check_guards || e.check_module;
}

// DisallowScope: disallow_in_graph for the case's op names, undone on exit (the
// setting is global). A bare name disallows every overload, as the spec says `sub`.
class DisallowScope {
 public:
  explicit DisallowScope(const std::vector<std::string>& patterns) {
    for (const std::string& p : patterns) {
      bool any = false;
      for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
        if (!op_name_matches(p, op->name())) continue;
        disallow_in_graph(op->name());
        names_.push_back(op->name());
        any = true;
      }
      OPSPEC_CHECK(any, "compile.disallow_in_graph: no operator is called '", p, "'");
    }
  }
  ~DisallowScope() {
    for (const std::string& n : names_) allow_op_in_graph(n);
  }

 private:
  std::vector<std::string> names_;
};

DebugModeOptions debug_options(const DebugSpec& d) {
  DebugModeOptions o;
  o.record_output = d.record_output;
  o.record_ids = d.record_ids;
  o.record_function_level = d.function_level;
  o.record_nn_module = d.record_nn_module;
  return o;
}

std::optional<HashKind> debug_hash(const DebugSpec& d) {
  if (!d.hash) return std::nullopt;
  std::optional<HashKind> k = parse_hash_kind(*d.hash);
  OPSPEC_CHECK(k.has_value(), "debug.hash: unknown hash '", *d.hash, "' (norm, hash_tensor or bitwise)");
  return k;
}

// compiled_module: the module compile: {module: true} compiles, or null.
std::shared_ptr<nn::Module> compiled_module(const CaseSpec& c, const CaseFunction& fn) {
  if (!c.compile || !c.compile->module) return nullptr;
  OPSPEC_CHECK(fn.module != nullptr, c.compile->where.str(), ": compile: module: fixture '", c.fixture,
               "' is not a module fixture (register it with OPSPEC_MODULE_FIXTURE)");
  return fn.module;
}

CompileOptions compile_options(const CaseSpec& c, const CaseFunction& fn) {
  CompileSpec cs = c.compile.value_or(CompileSpec{.backend = c.default_backend});
  CompileOptions o;
  o.backend = cs.backend;
  o.backward_backend = cs.backward_backend;
  o.fullgraph = cs.fullgraph;
  o.dynamic = cs.dynamic;
  o.cache_size_limit = cs.cache_size_limit;
  o.error_on_recompile = cs.error_on_recompile;
  o.trace_once = cs.trace_once;
  if (!cs.module) {  // compile(module) names its input and logs as the module's (See OptimizedModule)
    o.input_names = fn.input_names;
    o.name = c.name;
  }
  return o;
}

// export_dynamic_shapes: expect.export's dynamic_shapes: the dims marked
// dynamic and, with `dynamic: true`, every other dim of every input, as
// compile() takes them: sizes 0 and 1 and dims marked static stay static.
// A dim the program specializes is then a constraint violation, as a marked one.
std::vector<std::pair<std::string, std::vector<int64_t>>> export_dynamic_shapes(
    const CompileSpec& cs, const std::vector<std::string>& names, const std::vector<Tensor>& examples) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> out;
  for (const auto& [name, dim] : cs.mark_dynamic) out.push_back({name, {dim}});
  if (cs.dynamic != true) return out;
  const std::set<std::pair<std::string, int64_t>> marked(cs.mark_dynamic.begin(), cs.mark_dynamic.end());
  const std::set<std::pair<std::string, int64_t>> fixed(cs.mark_static.begin(), cs.mark_static.end());
  for (size_t i = 0; i < names.size() && i < examples.size(); ++i) {
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < examples[i].dim(); ++d) {
      if (examples[i].sizes()[d] >= 2 && !marked.contains({names[i], d}) && !fixed.contains({names[i], d})) {
        dims.push_back(d);
      }
    }
    if (!dims.empty()) out.push_back({names[i], std::move(dims)});
  }
  return out;
}

// check_outputs: expect.outputs against the eager outputs: as many lists as
// outputs (a flat list for a single one), each assert_close'd.
CheckResult check_outputs(const OutputsSpec& spec, const std::vector<Tensor>& outputs) {
  if (spec.values.size() != outputs.size()) {
    return CheckResult::fail(
        spec.per_output || outputs.empty()
            ? str_cat("the case returned ", outputs.size(), " outputs; 'outputs' lists ", spec.values.size())
            : str_cat("the case returned ", outputs.size(),
                      " outputs; a flat 'outputs' list checks a single one (give one list per output: [[...], [...]])"));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Tensor expected = expected_tensor(spec.values[i], outputs[i]);
    CheckResult r = assert_close(outputs[i], expected,
                                 CloseOptions{.rtol = spec.rtol, .atol = spec.atol, .equal_nan = true, .check_dtype = false});
    if (!r.ok) return spec.per_output ? CheckResult::fail(str_cat("output ", i, ": ", r.message)) : r;
  }
  return CheckResult::pass();
}

// check_strides: expect.strides against the eager outputs (exact values; a
// flat list checks a single output, as `outputs` reads one).
CheckResult check_strides(const StridesSpec& spec, const std::vector<Tensor>& outputs) {
  CheckResult r = check_output_strides(outputs, spec.strides);
  if (!r.ok && !spec.per_output && outputs.size() != 1) {
    str_append(&r.message, "; a flat 'strides' list checks a single output (give one list per output: [[...], [...]])");
  }
  return r;
}

// eager_call_layouts: each compiled call's outputs must be laid out as eager
// lays out the same inputs: call 1's are the eager run's (checked against
// `strides:` already), later calls' (whose shapes may differ) are run here.
std::vector<std::vector<TensorLayout>> eager_call_layouts(const CaseSpec& c, const CaseFunction& fn,
                                                          std::vector<TensorLayout> first) {
  std::vector<std::vector<TensorLayout>> out{std::move(first)};
  for (const std::vector<InputSpec>& call : c.compile ? c.compile->calls : std::vector<std::vector<InputSpec>>{}) {
    out.push_back(layouts_of(fn.fn(fn.make_inputs(call))));
  }
  return out;
}

// run_file_check: FileCheck of text against a `check:`-style block of the case.
CheckResult run_file_check(const std::string& text, const std::string& checks, const SourceLocation& where,
                           std::string input_name) {
  FileCheckOptions o;
  o.check_name = where.file;
  o.check_first_line = where.line;
  o.check_column_offset = where.column > 0 ? where.column - 1 : 0;
  o.check_within = where.within;  // a quoted or folded scalar: positions in the checks themselves
  o.input_name = std::move(input_name);
  return file_check(text, checks, o);
}

// run_expectations: steps 4-7 of Note [Running a case]; throws on the first error.
void run_expectations(const CaseRef& ref, const RunOptions& options, CaseResult& result, Failures& failures) {
  const CaseSpec& c = *ref.spec;
  const ExpectSpec& e = c.expect;
  CaseFunction fn = make_case_function(c, ref.device);

  // Step 4: eager.
  std::vector<Tensor> eager_outputs;
  std::vector<std::string> aten_ops, function_ops;
  {
    std::vector<Tensor> inputs = fn.make_inputs();
    DebugMode dm(debug_options(c.debug));
    std::optional<HashKind> hash = debug_hash(c.debug);
    auto scope = dm.enter();
    std::optional<DebugMode::HashScope> hashes;
    if (hash) hashes.emplace(std::vector<HashKind>{*hash}, c.debug.hash_inputs, false);
    OpRecorder functions(OpLevel::kFunction);
    OpRecorder aten(OpLevel::kAten);
    eager_outputs = fn.fn(inputs);
    aten_ops = aten.names();
    function_ops = functions.names();
    hashes.reset();
    result.eager_debug_string = dm.debug_string();
  }
  for (const std::string& pattern : e.ignore_ops) {  // expect.ignore_ops: out of the sequences before the checks
    for (auto* names : {&aten_ops, &function_ops}) {
      std::erase_if(*names, [&](const std::string& n) { return op_name_matches(pattern, n); });
    }
  }
  if (e.ops) failures.add("expect.ops", check_ops_exact(aten_ops, *e.ops));
  if (e.ops_contain) failures.add("expect.ops_contain", check_ops_contain(aten_ops, *e.ops_contain));
  if (e.ops_exclude) failures.add("expect.ops_exclude", check_ops_exclude(aten_ops, *e.ops_exclude));
  if (e.function_ops) failures.add("expect.function_ops", check_ops_exact(function_ops, *e.function_ops));
  if (e.outputs) failures.add("expect.outputs", check_outputs(*e.outputs, eager_outputs));
  if (e.strides) failures.add("expect.strides", check_strides(*e.strides, eager_outputs));
  const std::vector<TensorLayout> eager_layouts = layouts_of(eager_outputs);  // for the compiled calls' strides
  eager_outputs.clear();  // only the checks above read them: memory for the runs below (docs/memory.md)
  if (options.report_logs) {  // --report: the eager run again, logged with everything a reader needs
    DebugModeOptions o = debug_options(c.debug);
    o.record_ids = o.record_nn_module = true;
    DebugMode dm(o);
    {
      auto scope = dm.enter();
      const DebugMode::HashScope hashes({HashKind::kNorm}, /*hash_inputs=*/true, false);
      fn.fn(fn.make_inputs());
    }
    result.report_eager_log = dm.debug_string();
  }

  // Step 5: compiled.
  const bool compiles = needs_compile(c);
  if (compiles) {
    CompileOptions copts = compile_options(c, fn);
    std::vector<std::string> guard_failures;  // for check_guards: what guard_fail_fn hears
    copts.guard_fail_fn = [&guard_failures](const GuardFailure& f) {
      guard_failures.push_back(str_cat(f.reason, " (graph ", f.graph + 1, ")"));
    };
    DisallowScope disallow(c.compile ? c.compile->disallow_in_graph : std::vector<std::string>{});
    // Each call's inputs are made when it runs, and no call's outputs are kept
    // (the checks read stats, graphs and the first call's log): memory stays
    // flat in the number of `compile.calls` (docs/memory.md).
    const size_t n_calls = 1 + (c.compile ? c.compile->calls.size() : 0);
    size_t current_call = 0;
    const auto make_call = [&](size_t i) {
      current_call = i;
      std::vector<Tensor> in = i == 0 ? fn.make_inputs() : fn.make_inputs(c.compile->calls[i - 1]);
      if (c.compile) mark_inputs(*c.compile, fn.input_names, in);
      return in;
    };
    ObserveOptions oo{.debug = debug_options(c.debug), .hash = debug_hash(c.debug),
                      .hash_inputs = c.debug.hash_inputs, .keep_outputs = false,
                      .keep_output_layouts = e.strides.has_value(),
                      .module = compiled_module(c, fn), .kernel_programs = options.report_logs};
    CompileObservation obs;
    try {
      obs = observe_compile(fn.fn, n_calls, make_call, copts, oo);
    } catch (const Error& ex) {
      if (current_call == 0) throw;
      // A later call's error (a recompile refused, a shape the program rejects) says which call it was.
      const std::vector<InputSpec>& call = c.compile->calls[current_call - 1];
      throw Error(str_cat(ex.what(), "\n  in call ", current_call + 1, " of the compiled function (compile.calls[",
                          current_call - 1, "]", call.empty() ? "" : str_cat(" at ", call.front().where.str()), ")"));
    }
    result.compiled_debug_string = obs.debug_string;
    result.graphs = obs.graphs;
    result.graph_dots = obs.graph_dots;
    for (const GraphBreak& b : obs.stats.breaks)
      result.graph_breaks.push_back(b.user_site.empty() ? b.reason : str_cat(b.reason, " (at ", b.user_site, ")"));
    result.fused_kernels = obs.kernel_names;
    result.guards = guards_text(obs.stats, guard_failures);
    result.kernel_programs = obs.kernel_programs;
    if (e.graphs) failures.add("expect.graphs", check_graphs(obs, *e.graphs));
    if (e.graph_break_count) failures.add("expect.graph_breaks", check_graph_breaks(obs.stats, *e.graph_break_count));
    if (e.graph_breaks) {
      std::vector<std::string> reasons;
      for (const GraphBreakSpec& b : *e.graph_breaks) reasons.push_back(b.reason);
      failures.add("expect.graph_breaks", check_graph_breaks(obs.stats, reasons));
    }
    if (e.recompiles) failures.add("expect.recompiles", check_recompiles(obs.stats, *e.recompiles));
    if (e.fused_kernels) failures.add("expect.fused_kernels", check_fused_kernels(obs, *e.fused_kernels));
    if (e.strides) {  // each call's compiled outputs, as inductor's assert_size_stride
      failures.add("expect.strides",
                   check_compiled_strides(obs.output_layouts, eager_call_layouts(c, fn, eager_layouts)));
    }
    if (e.check_graphs)
      // Each compiled graph (sizes symbolic where dims are dynamic), then the AOT forward/backward graphs.
      failures.add("expect.check_graphs", run_file_check(absl::StrJoin(obs.stats.graphs, "\n") + "\n" +
                                                             absl::StrJoin(obs.stats.aot_graphs, "\n"),
                                                         *e.check_graphs,
                                                         e.check_graphs_where.line ? e.check_graphs_where : e.where,
                                                         "<graphs>"));
    if (e.check_guards)
      failures.add("expect.check_guards", run_file_check(guards_text(obs.stats, guard_failures), *e.check_guards,
                                                         e.check_guards_where.line ? e.check_guards_where : e.where,
                                                         "<guards>"));
    if (e.check_module)
      failures.add("expect.check_module", run_file_check(obs.module_text, *e.check_module,
                                                         e.check_module_where.line ? e.check_module_where : e.where,
                                                         "<compiled module>"));
  }

  // Step 5b: export (See Note [Export]): FileCheck its text, then save -> load
  // -> run must give eager's outputs bit for bit.
  if (e.export_check) {
    ExportOptions xo{.input_names = fn.input_names, .name = c.name};
    const std::vector<Tensor> examples = fn.make_inputs();
    if (c.compile) xo.dynamic_shapes = export_dynamic_shapes(*c.compile, fn.input_names, examples);
    const ExportedProgram ep = export_program(fn.fn, xo)(examples);
    const ExportedProgram loaded = ExportedProgram::from_json(ep.to_json());
    // The first inputs, then each of compile.calls': the loaded program runs
    // them as eager does, bit for bit, or refuses them by a guard ("call N:").
    std::string text = ep.str();
    const size_t n_calls = 1 + (c.compile ? c.compile->calls.size() : 0);
    for (size_t call = 0; call < n_calls; ++call) {
      auto inputs = [&] { return call == 0 ? fn.make_inputs() : fn.make_inputs(c.compile->calls[call - 1]); };
      std::vector<Tensor> got;
      try {
        got = loaded.run(inputs());
      } catch (const Error& refused) {
        OPSPEC_CHECK(call > 0, "expect.export: the saved and loaded program refuses its own example inputs: ", refused.what());
        str_append(&text, "call ", call, ": refused: ", refused.what(), "\n");
        continue;
      }
      const std::vector<Tensor> want = fn.fn(inputs());
      OPSPEC_CHECK(got.size() == want.size(), "expect.export: the loaded program returned ", got.size(),
                   " outputs, eager ", want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        failures.add("expect.export", assert_close(got[i], want[i], CloseOptions{.bitwise = true, .equal_nan = true}));
      }
      if (call > 0) str_append(&text, "call ", call, ": ran\n");
    }
    failures.add("expect.export", run_file_check(text, *e.export_check,
                                                 e.export_where.line ? e.export_where : e.where, "<exported program>"));
  }

  // Step 6: the debug string.
  const std::string& debug_string = compiles ? result.compiled_debug_string : result.eager_debug_string;
  if (e.check) failures.add("expect.check", run_file_check(debug_string, *e.check,
                                                           e.check_where.line ? e.check_where : e.where, "<debug string>"));
  if (e.debug_string) {
    // Trailing newlines are not compared: a YAML `|` block ends with one, a
    // debug string does not, and neither carries meaning.
    auto trimmed = [](std::string_view s) {
      while (!s.empty() && s.back() == '\n') s.remove_suffix(1);
      return s;
    };
    CheckResult r = check_text_equal(trimmed(debug_string), trimmed(*e.debug_string));
    if (!r.ok && options.accept && !c.xfail) {  // an xfail's golden documents the wanted text
      result.accepted_debug_string = str_cat(trimmed(debug_string), "\n");
    } else {
      failures.add("expect.debug_string", r);
    }
  }

  // Step 7: equivalence.
  if (e.equivalent) {
    EquivalenceOptions eo;
    eo.compile = compile_options(c, fn);
    eo.module = compiled_module(c, fn);
    eo.close.bitwise = e.equivalent->bitwise;
    eo.close.rtol = e.equivalent->rtol;
    eo.close.atol = e.equivalent->atol;
    eo.close.equal_nan = e.equivalent->equal_nan;
    std::optional<HashKind> k = parse_hash_kind(e.equivalent->hash);
    OPSPEC_CHECK(k.has_value(), "expect.equivalent.hash: unknown hash '", e.equivalent->hash, "'");
    eo.hash = *k;
    DisallowScope disallow(c.compile ? c.compile->disallow_in_graph : std::vector<std::string>{});
    // The inputs marked as the compile step marks them: the graph compared is
    // the one the case compiles (dynamic marks made a symbolic graph there,
    // and this used to compare a static one).
    std::vector<Tensor> inputs = fn.make_inputs();
    if (c.compile) mark_inputs(*c.compile, fn.input_names, inputs);
    EquivalenceResult r = check_eager_compiled_equivalent(fn.fn, inputs, eo);
    failures.add("expect.equivalent", r.result);
    if (!r.result.ok) {  // for --report: the two logs side by side, the divergence marked
      result.equivalence_eager = rendered_entries(r.eager_log);
      result.equivalence_compiled = rendered_entries(r.compiled_log);
      const std::optional<size_t> at = diff_logs(r.eager_log, r.compiled_log).divergence_index();
      result.equivalence_divergence = at ? static_cast<int>(*at) : -1;
    }
  }

  // Step 8: gradcheck.
  if (e.gradcheck) {
    GradcheckOptions go{.eps = e.gradcheck->eps, .atol = e.gradcheck->atol, .rtol = e.gradcheck->rtol};
    failures.add("expect.gradcheck", gradcheck(fn.fn, fn.make_inputs(), go));
  }
}

}  // namespace

std::string_view outcome_name(Outcome o) {
  switch (o) {
    case Outcome::kPassed: return "passed";
    case Outcome::kFailed: return "failed";
    case Outcome::kSkipped: return "skipped";
    case Outcome::kXfailed: return "xfailed";
  }
  return "?";
}

std::string CaseRef::id() const {
  std::string id = str_cat(suite->name, "::", spec->name);
  if (spec->devices.size() > 1 || device != "cpu") str_append(&id, "@", device);
  return id;
}

std::vector<CaseRef> expand_cases(const SuiteSpec& suite) {
  std::vector<CaseRef> out;
  for (const CaseSpec& c : suite.cases) {
    if (c.devices.empty()) out.push_back({&suite, &c, "cpu"});
    for (const std::string& d : c.devices) out.push_back({&suite, &c, d});
  }
  return out;
}

std::vector<CaseRef> expand_cases(const std::vector<SuiteSpec>& suites) {
  std::vector<CaseRef> out;
  for (const SuiteSpec& s : suites) {
    std::vector<CaseRef> refs = expand_cases(s);
    out.insert(out.end(), refs.begin(), refs.end());
  }
  return out;
}

CaseResult case_result(const CaseRef& ref) {
  CaseResult r;
  r.id = ref.id();
  r.suite = ref.suite->name;
  r.name = ref.spec->name;
  r.file = ref.suite->file;
  r.line = ref.spec->where.line;
  return r;
}

namespace {
std::optional<int> g_cuda_device_count;  // set_cuda_device_count, else asked of CUDA
}  // namespace

void set_cuda_device_count(int count) { g_cuda_device_count = count; }

bool device_available(const std::string& device) {
  try {
    const Device d = Device::parse(device);
    if (!d.is_cuda()) return true;
    const int count = g_cuda_device_count ? *g_cuda_device_count : get_device_hooks(d.type).device_count();
    return std::max<int>(d.index, 0) < count;
  } catch (const Error&) {
    return false;
  }
}

std::optional<std::string> skip_reason(const CaseRef& ref) {
  const bool cuda = device_available("cuda");
  for (const std::string& cond : ref.spec->skip_if) {
    if (cond == "always") return "skip_if always";
    if ((cond == "no_cuda" || cond == "no_gpu") && !cuda) return str_cat("skip_if ", cond, ": CUDA is not available");
    if (cond == "cuda" && cuda) return "skip_if cuda: CUDA is available";
  }
  if (!device_available(ref.device)) return str_cat("device ", ref.device, " is not available");
  return std::nullopt;
}

CaseResult run_case(const CaseRef& ref, const RunOptions& options) {
  const CaseSpec& c = *ref.spec;
  CaseResult result = case_result(ref);
  auto start = std::chrono::steady_clock::now();
  auto finish = [&](Outcome o, std::string message) {
    result.outcome = o;
    result.message = std::move(message);
    result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    make_reportable(result);  // the same text in this process as back from a worker
    return result;
  };

  // Step 0: the case's own YAML is wrong (See Note [Two kinds of load errors]).
  if (c.spec_error) return finish(Outcome::kFailed, *c.spec_error);

  // Step 1: skips.
  if (std::optional<std::string> why = skip_reason(ref)) return finish(Outcome::kSkipped, *std::move(why));

  // Steps 2-7; the first error ends the case.
  Failures failures;
  std::optional<std::string> error = c.load_error;
  if (!error) {
    try {
      // Outside the compiled call, as `with torch.no_grad(): compiled(x)`: inside
      // it would be captured as a grad mode node (See Note [Grad mode nodes]).
      std::optional<autograd::NoGradGuard> no_grad;
      if (c.no_grad) no_grad.emplace();
      run_expectations(ref, options, result, failures);
    } catch (const std::exception& ex) {
      error = ex.what();
      // A program's errors name their statement's file:line:col; a fixture is
      // C++, so its errors are located at the case that uses it.
      if (!c.fixture.empty() && !error->starts_with(str_cat(c.where.file, ":"))) {
        error = str_cat(c.where.str(), ": fixture '", c.fixture, "': ", *error);
      }
    }
    result.error = error.value_or("");
  }
  if (error) {
    if (c.expect.error) {
      CheckResult r = error_matches(*c.expect.error, *error);
      if (!r.ok) failures.add("expect.error", r);
    } else {
      failures.add(str_cat("error: ", *error));
    }
  } else if (c.expect.error) {
    failures.add(str_cat("expect.error: expected an error matching /", shorten(*c.expect.error),
                              "/, but the case ran without one"));
  }

  if (c.xfail) {
    if (failures.empty()) return finish(Outcome::kFailed, str_cat("unexpected pass (xfail: ", *c.xfail, ")"));
    return finish(Outcome::kXfailed, str_cat(*c.xfail, "\n", failures.str()));
  }
  if (!failures.empty()) return finish(Outcome::kFailed, failures.str());
  return finish(Outcome::kPassed, "");
}

}  // namespace opspec::spec
