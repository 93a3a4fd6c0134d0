// compile_observer.h: observe_compile, which runs a function compiled afresh
// on several calls and keeps what the compiler did (stats, the graphs the
// backend received, fused kernels, the first call's DebugMode log), plus the
// checks over it behind EXPECT_GRAPH_BREAKS and friends.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "harness/check_result.h"
#include "harness/debug_mode.h"
#include "harness/expect/stride_checks.h"
#include "harness/tensor_hash.h"
#include "runtime/compile/compile.h"
#include "runtime/nn/module.h"

namespace opspec {

// CompileObservation: what one observe_compile saw. It keeps the whole stats
// once, after the first call and after the last, and counters per call, so
// its size grows by a few bytes a call, not by a copy of every break so far.
struct CompileObservation {
  CompileStats stats;                        // after all calls
  CompileStats first_call_stats;             // after the first call
  std::vector<CompileCounters> counts_per_call;  // after each call (cumulative)
  std::vector<std::string> graphs;           // every graph the backend compiled (Graph::str()), in order
  std::vector<std::string> graph_dots;       // the same graphs in Graphviz DOT (Graph::to_dot())
  // kernel_programs: with ObserveOptions::kernel_programs and the fused
  // backend on cpu, each fused kernel it made,
  // "fused_mul_add_0:\n" then its FusedProgram::str() (one line per instruction).
  std::vector<std::string> kernel_programs;
  int graphs_first_call = 0;                 // graphs run by the first call
  int fused_kernels = 0;                     // kernel entries with prefix "fused" in the first call's log
  std::vector<std::string> kernel_names;     // every kernel entry of the first call's log: "[fused] fused_mul_add_0"
  std::vector<std::vector<Tensor>> outputs;  // per call (empty with ObserveOptions::keep_outputs off)
  // output_layouts: each call's outputs' sizes and strides (with
  // ObserveOptions::keep_output_layouts), for strides checks without the data.
  std::vector<std::vector<TensorLayout>> output_layouts;
  std::vector<DebugCall> log;                // DebugMode log of the first call
  std::string debug_string;                  // its debug_string()
  std::string explain;                       // explain()'s layout for the first call (graph/break counts, reasons, ops)
  // module_text: with ObserveOptions::module, what compile(module) made:
  //   "OptimizedModule(_orig_mod=MLP)\norig_mod(): the module given\nparameters:\n  _orig_mod.fc1.weight: f32[32, 16]\n..."
  std::string module_text;
};

// ObserveOptions: how observe_compile watches the first call, and whether it
// keeps every call's outputs.
struct ObserveOptions {
  DebugModeOptions debug;          // the first call's DebugMode
  std::optional<HashKind> hash;    // tensor hashes in its log
  bool hash_inputs = false;        // of inputs too
  bool keep_outputs = true;        // CompileObservation::outputs
  bool keep_output_layouts = false;  // CompileObservation::output_layouts
  // module: when set, observe compile(module) (an OptimizedModule called on
  // each call's single input, as torch.compile(model)) instead of compile(fn).
  std::shared_ptr<nn::Module> module;
  // kernel_programs: fill CompileObservation::kernel_programs (partitions each
  // fused cpu graph a second time: for reports only).
  bool kernel_programs = false;
};

// observe_compile: compiles fn afresh with options (so caches belong to this
// observation), wrapping the backend (options.backend_fn, else
// lookup_backend(options.backend)) to keep each graph it compiles, and calls
// it once per entry of calls, the first call under a DebugMode with debug's
// options (and tensor hashes of kind *hash when given, of inputs too with
// hash_inputs). Errors from fn or
// the compiler propagate.
CompileObservation observe_compile(const TracedFunction& fn, const std::vector<std::vector<Tensor>>& calls,
                                   const CompileOptions& options, const DebugModeOptions& debug = {},
                                   std::optional<HashKind> hash = std::nullopt, bool hash_inputs = false);

// observe_compile: the same for n calls whose inputs make_call(i) makes when
// call i runs, so no call's inputs outlive it (the spec runner's form), of fn
// or, with observe.module, of compile(module).
CompileObservation observe_compile(const TracedFunction& fn, size_t n,
                                   const std::function<std::vector<Tensor>(size_t)>& make_call,
                                   const CompileOptions& options, const ObserveOptions& observe);

// check_graph_breaks: exactly `expected` breaks. Failure: "expected 1 graph
// break, got 2:\n  break 1: <reason> at <user site>\n  ...".
CheckResult check_graph_breaks(const CompileStats& stats, int expected);

// check_graph_breaks: as many breaks as reason_substrings, break i's reason
// containing reason_substrings[i]. Failures: "expected 2 graph breaks (reasons
// containing 'a', 'b'), got 1:\n  break 1: ..." or "graph break 1's reason
// does not contain 'disallow':\n  break 1: ...".
CheckResult check_graph_breaks(const CompileStats& stats, const std::vector<std::string>& reason_substrings);

// check_graphs: graphs_first_call == expected. Failure: "expected 1 graph,
// got 2 (in the first call)\n", the breaks ("graph breaks:\n  break 1: ...")
// and each graph the backend compiled ("--- graph 1 of 2 compiled ---\n<Graph::str()>").
CheckResult check_graphs(const CompileObservation& obs, int expected);

// check_recompiles: stats.recompiles == expected. Failure: "expected 0
// recompiles, got 1:\n  recompile 1: tensor 'L['x']' size mismatch at index 0. expected 3, actual 5\n".
CheckResult check_recompiles(const CompileStats& stats, int expected);

// check_fused_kernels: obs.fused_kernels == expected. Failure: "expected 2
// fused kernels, got 1 (in the first call); kernels launched:\n  [fused] fused_mul_add_relu_0\n"
// (or "; no kernel was launched outside the dispatcher").
CheckResult check_fused_kernels(const CompileObservation& obs, int expected);

}  // namespace opspec
