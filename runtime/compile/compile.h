// compile.h: compile(fn, options), opspec's torch.compile: lazy capture of
// fn's ops into graphs, guards and recompiles, graph breaks, backends.
// See Note [Lazy capture].
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/compile/backend.h"
#include "runtime/compile/guards.h"
#include "runtime/trace/make_fx.h"

namespace opspec {

// Note [Lazy capture]
// C++ has no bytecode to rewrite, so capture is lazy (like LazyTensor): every
// call of a compiled function runs fn, with a capture mode at the PreDispatch
// key that records each op as a graph node (as Dynamo sees torch-level ops:
// `linear`, not its parts) and returns fake tensors instead of computing. The
// pending graph runs at a graph break and when fn returns: it is looked up in
// the function's cache by program (the graph's structure without shapes) and
// guards (the inputs' dtypes, devices, sizes and strides, see Note [Guards]),
// compiled by the backend on a miss, and run on the real inputs; every
// captured tensor the program still holds is then filled in place with its
// real value, so fn goes on with real tensors, and later ops start the next
// graph. Because fn itself runs on every call, its control flow (if on a
// value read with item(), loops over a list) is right on every call; a
// different path simply gives a different graph. What breaks a graph:
// graph_break(), an op marked disallow_in_graph, reading data (item(),
// to_vector, data_ptr) while ops are pending, calling a function wrapped with
// disable(), and an op without a meta kernel. The op or function behind a
// break runs eagerly between the two graphs. Graph inputs are fn's tensor
// arguments (named by CompileOptions::input_names), tensors fn closed over,
// and tensors a previous graph produced. A function that promises its ops
// depend only on its inputs' metadata can skip running fn on warm calls
// (CompileOptions::trace_once, See Note [Trace once] in trace_once.cc).

// GuardFailure: why a call missed the cache: the first failing guard of the
// most recent entry, in PyTorch's words, and where.
struct GuardFailure {
  std::string reason;    // "tensor 'L['x']' size mismatch at index 0. expected 3, actual 4"
  std::string function;  // CompileOptions::name
  size_t graph = 0;      // the graph's position within the call (0: the first graph)
};

// CompileOptions: how compile() compiles.
struct CompileOptions {
  // backend: a registered name ("eager", "aot_eager", "fused") ...
  std::string backend = "eager";
  // ... or a Backend function, used instead of the name when set.
  Backend backend_fn;
  // backward_backend / backward_backend_fn: what compiles the backward half
  // of a graph whose inputs require grad (See Note [AOT autograd] in
  // aot_autograd.h); neither set: the backend above.
  std::string backward_backend;
  Backend backward_backend_fn;
  // fullgraph: any graph break is an error (PyTorch's fullgraph=True / nopython).
  bool fullgraph = false;
  // dynamic: true: every dim is dynamic unless marked static; false: only
  // dims marked dynamic; unset (PyTorch's dynamic=None, the default): marked
  // dims, and a dim whose size changed once is dynamic from the recompile on
  // (See Note [Automatic dynamic] in compile.cc). Sizes 0 and 1 are always
  // specialized (See Note [Guards]).
  std::optional<bool> dynamic;
  // cache_size_limit: compiled graphs kept per graph of the function (the part
  // before a break, each part after one); past it that part still runs its
  // cached graphs and runs other inputs eagerly, with one warning
  // (PyTorch's torch._dynamo.config.cache_size_limit, per code object; See
  // Note [Cache size limit per graph] in compile.cc).
  int cache_size_limit = 8;
  // error_on_recompile: a recompile throws RecompileError instead.
  bool error_on_recompile = false;
  // trace_once: fn's ops depend only on its inputs' dtypes, devices, sizes and
  // strides (no branch on a value, no state of its own), as under jax.jit: a
  // call with inputs like an earlier one's runs that call's graph without
  // running fn again (See Note [Trace once] in trace_once.cc).
  bool trace_once = false;
  // input_names: the names guards and logs use for fn's inputs ("x0", "x1", ... when absent).
  std::vector<std::string> input_names;
  // name: the function's name in logs and errors.
  std::string name = "fn";
  // disable: compile() is a no-op, the function runs eagerly (PyTorch's optimize(disable=True)).
  bool disable = false;
  // guard_fail_fn: called with each guard failure that makes a call miss the
  // cache (PyTorch's guard_fail_fn), once the graph it missed is recompiled
  // (or refused, under error_on_recompile); it may call stats().
  std::function<void(const GuardFailure&)> guard_fail_fn;
  // guard_export_fn: called with the guards of each graph compiled (PyTorch's guard_export_fn).
  std::function<void(const GuardSet&)> guard_export_fn;
};

// GraphBreakError: a graph break under fullgraph, or a forbidden function.
class GraphBreakError : public Error {
 public:
  using Error::Error;
};

// ConstraintViolationError: a dim marked or declared dynamic that the program
// specializes (PyTorch's "Constraints violated" error).
class ConstraintViolationError : public Error {
 public:
  using Error::Error;
};

// RecompileError: a recompile with CompileOptions::error_on_recompile.
class RecompileError : public Error {
 public:
  using Error::Error;
};

// GraphBreak: one break: why, where (file:line in function), and its kind.
struct GraphBreak {
  std::string reason;
  std::string user_site;  // "model.cc:42 in forward", or "" when unknown
};

// CompileStats: what a compiled function did (explain() and tests read it).
struct CompileStats {
  int calls = 0;                 // calls of the compiled function
  int graphs_run = 0;            // graphs executed
  int compiles = 0;              // backend compilations (cache misses)
  int recompiles = 0;            // misses for a graph position that had entries
  std::vector<GraphBreak> breaks;                 // every break, in order
  std::vector<std::vector<std::string>> ops_per_graph;  // for each compile, its ops
  // graphs: for each compile, its graph's code (Graph::str), sizes symbolic
  // where its inputs have dynamic dims ("f32[s0, 3]", "f32[4*s0]").
  std::vector<std::string> graphs;
  std::vector<std::string> guards;                // for each compile, its guards (GuardSet::summary())
  std::vector<std::string> guard_code;            // for each compile, GuardSet::code(), one guard per line
  std::vector<std::string> recompile_reasons;     // why each recompile happened
  bool fell_back_to_eager = false;                // a graph's cache_size_limit was reached and a miss ran eagerly
  int traced_calls = 0;  // calls that ran a trace_once plan without running fn
  // aot_graphs: for each graph compiled for autograd, its forward and backward
  // graphs' code ("forward:\n...\nbackward:\n...").
  std::vector<std::string> aot_graphs;
};

// CompileCounters: CompileStats' counts alone, cheap enough to read after
// every call (stats() copies every break and guard so far).
struct CompileCounters {
  int calls = 0;
  int graphs_run = 0;
  int compiles = 0;
  int recompiles = 0;
  int breaks = 0;
};

namespace internal {
struct CompiledState;
}  // namespace internal

// CompiledFunction: what compile() returns; call it like fn. Copies share the
// cache. Thread-safe: several threads may call it at once.
class CompiledFunction {
 public:
  CompiledFunction(TracedFunction fn, CompileOptions options);

  // operator(): runs fn with lazy capture (see Note [Lazy capture]).
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  std::vector<Tensor> operator()(const Ts&... inputs) const {
    return (*this)(std::vector<Tensor>{inputs...});
  }

  // stats: a snapshot of what it did so far.
  CompileStats stats() const;
  // counters: the counts of stats(), without copying its lists.
  CompileCounters counters() const;
  // reset: clears its cache and statistics (the next call compiles again).
  void reset() const;

 private:
  friend CompiledFunction run(const CompiledFunction& fn);
  // check_inputs: throws for an undefined input or more input_names than inputs.
  void check_inputs(const std::vector<Tensor>& inputs) const;
  std::shared_ptr<internal::CompiledState> state_;
  bool cache_only_ = false;  // See run()
};

// run: fn restricted to the graphs it has compiled (torch._dynamo.run): a
// call whose graph misses the cache runs that graph eagerly and compiles
// nothing, recompiles and statistics included; guard_fail_fn still hears of
// the miss. Shares fn's cache.
CompiledFunction run(const CompiledFunction& fn);

// compile: `auto cf = compile(f, {.backend = "fused"}); cf(x, y);` fn takes a
// std::vector<Tensor> or up to eight tensors and returns tensors (see make_fx).
template <class Fn>
CompiledFunction compile(Fn fn, CompileOptions options = {}) {
  return CompiledFunction(internal::as_traced_function(std::move(fn)), std::move(options));
}

// reset: clears the caches of every compiled function (torch._dynamo.reset()).
void reset();

}  // namespace opspec
