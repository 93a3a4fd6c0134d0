// compile_observer.cc: observe_compile and the compile checks.
#include "harness/expect/compile_observer.h"

#include <memory>
#include <mutex>

#include "harness/expect/internal/compiled_target.h"
#include "runtime/compile/explain.h"
#include "runtime/compile/fusion.h"

namespace opspec {
namespace {

std::string plural(int64_t n, std::string_view noun) { return str_cat(n, " ", noun, n == 1 ? "" : "s"); }

std::string list_breaks(const CompileStats& stats) {
  std::string out;
  for (size_t i = 0; i < stats.breaks.size(); ++i) {
    const GraphBreak& b = stats.breaks[i];
    str_append(&out, "  break ", i + 1, ": ", b.reason, " at ", b.user_site.empty() ? "<unknown>" : b.user_site, "\n");
  }
  return out;
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) str_append(&out, i ? ", " : "", "'", items[i], "'");
  return out;
}

// fused_programs: the fused backend's kernels for graph, each as its name and
// its FusedProgram (one line per instruction), for cpu graphs (partitioning
// a cuda graph would compile each kernel with NVRTC again).
std::vector<std::string> fused_programs(const Graph& graph, const std::vector<Tensor>& examples) {
  for (const Tensor& t : examples) {
    if (t.defined() && !t.device().is_cpu()) return {};
  }
  std::vector<std::string> out;
  for (const FusionGroup& g : partition_graph(graph)) out.push_back(str_cat(g.name, ":\n", g.program->str()));
  return out;
}

// describe_module: CompileObservation::module_text.
std::string describe_module(const OptimizedModule& opt, const nn::Module* given) {
  std::string out = str_cat(opt.type_name(), "(_orig_mod=", opt.orig_mod()->type_name(), ")\n");
  str_append(&out, "orig_mod(): ", opt.orig_mod().get() == given ? "the module given" : "another module", "\n");
  const auto section = [&out](std::string_view title, const std::vector<std::pair<std::string, Tensor>>& named) {
    if (named.empty()) return;
    str_append(&out, title, ":\n");
    for (const auto& [name, t] : named) {
      str_append(&out, "  ", name, ": ", dtype_short_name(t.dtype()), format_sizes(t.sizes()), "\n");
    }
  };
  section("parameters", opt.named_parameters());
  section("buffers", opt.named_buffers());
  return out;
}

}  // namespace

CompileObservation observe_compile(const TracedFunction& fn, const std::vector<std::vector<Tensor>>& calls,
                                   const CompileOptions& options, const DebugModeOptions& debug,
                                   std::optional<HashKind> hash, bool hash_inputs) {
  return observe_compile(
      fn, calls.size(), [&](size_t i) { return calls[i]; }, options,
      ObserveOptions{.debug = debug, .hash = hash, .hash_inputs = hash_inputs, .keep_outputs = true});
}

CompileObservation observe_compile(const TracedFunction& fn, size_t n,
                                   const std::function<std::vector<Tensor>(size_t)>& make_call,
                                   const CompileOptions& options, const ObserveOptions& observe) {
  struct Captured {
    std::mutex mu;
    std::vector<std::string> graphs;
    std::vector<std::string> dots;
    std::vector<std::string> kernel_programs;
  };
  auto captured = std::make_shared<Captured>();
  Backend inner = options.backend_fn ? options.backend_fn : lookup_backend(options.backend);
  CompileOptions opts = options;
  const bool fused = observe.kernel_programs && !options.backend_fn && options.backend == "fused";
  opts.backend_fn = [inner = std::move(inner), captured, fused](const Graph& graph, const std::vector<Tensor>& examples) {
    std::vector<std::string> programs = fused ? fused_programs(graph, examples) : std::vector<std::string>{};
    {
      std::lock_guard<std::mutex> lock(captured->mu);
      captured->graphs.push_back(graph.str());
      captured->dots.push_back(graph.to_dot(str_cat("graph_", captured->dots.size() + 1)));
      for (std::string& p : programs) captured->kernel_programs.push_back(std::move(p));
    }
    return inner(graph, examples);
  };
  const internal::CompiledTarget target(fn, observe.module, std::move(opts));
  const CompiledFunction& compiled = target.compiled();

  CompileObservation obs;
  obs.counts_per_call.reserve(n);
  for (size_t c = 0; c < n; ++c) {
    std::vector<Tensor> outputs;
    if (c == 0) {
      const std::vector<Tensor> inputs = make_call(c);
      DebugMode dm(observe.debug);
      {
        auto scope = dm.enter();
        std::optional<DebugMode::HashScope> hashes;
        if (observe.hash.has_value()) hashes.emplace(std::vector<HashKind>{*observe.hash}, observe.hash_inputs, false);
        outputs = target(inputs);
      }
      obs.log.assign(dm.logs().begin(), dm.logs().end());
      obs.debug_string = dm.debug_string();
    } else {
      outputs = target(make_call(c));
    }
    if (observe.keep_output_layouts) obs.output_layouts.push_back(layouts_of(outputs));
    if (observe.keep_outputs) obs.outputs.push_back(std::move(outputs));
    // Counters only: a whole CompileStats a call grew as calls times breaks, in memory and time.
    if (c == 0) obs.first_call_stats = compiled.stats();
    obs.counts_per_call.push_back(compiled.counters());
  }
  obs.stats = compiled.stats();
  {
    std::lock_guard<std::mutex> lock(captured->mu);
    obs.graphs = captured->graphs;
    obs.graph_dots = captured->dots;
    obs.kernel_programs = captured->kernel_programs;
  }
  for (const DebugCall& entry : obs.log) {
    if (entry.kind != DebugCall::Kind::kKernel) continue;
    obs.kernel_names.push_back(str_cat("[", entry.kernel_prefix, "] ", entry.name));
    obs.fused_kernels += entry.kernel_prefix == "fused";
  }
  if (target.module()) obs.module_text = describe_module(*target.module(), observe.module.get());
  if (n > 0) {
    // explain() of the first call: a fresh function's first call compiles
    // every graph it runs, so its stats are what explain() reports.
    obs.graphs_first_call = obs.first_call_stats.graphs_run;
    obs.explain = explain_output(obs.first_call_stats).str();
  }
  return obs;
}

CheckResult check_graph_breaks(const CompileStats& stats, int expected) {
  const int got = static_cast<int>(stats.breaks.size());
  if (got == expected) return CheckResult::pass();
  std::string msg = str_cat("expected ", plural(expected, "graph break"), ", got ", got);
  if (got > 0) str_append(&msg, ":\n", list_breaks(stats));
  return CheckResult::fail(std::move(msg));
}

CheckResult check_graph_breaks(const CompileStats& stats, const std::vector<std::string>& reason_substrings) {
  const size_t got = stats.breaks.size();
  if (got != reason_substrings.size()) {
    std::string msg = str_cat("expected ", plural(static_cast<int64_t>(reason_substrings.size()), "graph break"));
    if (!reason_substrings.empty()) str_append(&msg, " (reasons containing ", quoted_list(reason_substrings), ")");
    str_append(&msg, ", got ", got);
    if (got > 0) str_append(&msg, ":\n", list_breaks(stats));
    return CheckResult::fail(std::move(msg));
  }
  for (size_t i = 0; i < got; ++i) {
    if (stats.breaks[i].reason.find(reason_substrings[i]) == std::string::npos) {
      return CheckResult::fail(str_cat("graph break ", i + 1, "'s reason does not contain '", reason_substrings[i],
                                       "':\n", list_breaks(stats)));
    }
  }
  return CheckResult::pass();
}

CheckResult check_graphs(const CompileObservation& obs, int expected) {
  if (obs.graphs_first_call == expected) return CheckResult::pass();
  std::string msg = str_cat("expected ", plural(expected, "graph"), ", got ", obs.graphs_first_call,
                            " (in the first call)\n");
  if (!obs.first_call_stats.breaks.empty()) {
    str_append(&msg, "graph breaks:\n", list_breaks(obs.first_call_stats));
  }
  if (obs.graphs.empty()) {
    msg += "the backend compiled no graph\n";
  }
  for (size_t i = 0; i < obs.graphs.size(); ++i) {
    str_append(&msg, "--- graph ", i + 1, " of ", obs.graphs.size(), " compiled ---\n", obs.graphs[i]);
    if (!obs.graphs[i].empty() && obs.graphs[i].back() != '\n') msg += '\n';
  }
  return CheckResult::fail(std::move(msg));
}

CheckResult check_recompiles(const CompileStats& stats, int expected) {
  if (stats.recompiles == expected) return CheckResult::pass();
  std::string msg = str_cat("expected ", plural(expected, "recompile"), ", got ", stats.recompiles);
  if (!stats.recompile_reasons.empty()) msg += ":\n";
  for (size_t i = 0; i < stats.recompile_reasons.size(); ++i) {
    str_append(&msg, "  recompile ", i + 1, ": ", stats.recompile_reasons[i], "\n");
  }
  return CheckResult::fail(std::move(msg));
}

CheckResult check_fused_kernels(const CompileObservation& obs, int expected) {
  if (obs.fused_kernels == expected) return CheckResult::pass();
  std::string msg = str_cat("expected ", plural(expected, "fused kernel"), ", got ", obs.fused_kernels,
                            " (in the first call)");
  if (obs.kernel_names.empty()) {
    msg += "; no kernel was launched outside the dispatcher";
  } else {
    msg += "; kernels launched:\n";
    for (const std::string& k : obs.kernel_names) str_append(&msg, "  ", k, "\n");
  }
  return CheckResult::fail(std::move(msg));
}

}  // namespace opspec
