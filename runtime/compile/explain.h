// explain.h: explain(fn)(inputs), PyTorch's torch._dynamo.explain: how many
// graphs a call makes, where and why they break, their ops and guards; and
// CompileCounter, a backend wrapper that counts and keeps what it compiles.
#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/compile/compile.h"

namespace opspec {

// ExplainOutput: what one call of a freshly compiled function did.
struct ExplainOutput {
  int graph_count = 0;
  int graph_break_count = 0;
  int op_count = 0;
  std::vector<GraphBreak> break_reasons;
  std::vector<std::vector<std::string>> ops_per_graph;
  std::vector<std::string> guards;  // one line per graph (GuardSet::summary())
  // OutGuard: one guard as PyTorch's ExplainOutput lists it: a TENSOR_MATCH
  // per graph input (name "L['x']", source local), and per graph with
  // dynamic dims one SHAPE_ENV guard whose code list holds the symbolic guards.
  struct OutGuard {
    std::string name;
    std::string source;           // "local", "shape_env"
    std::string create_function;  // "TENSOR_MATCH", "SHAPE_ENV"
    std::vector<std::string> code_list;
  };
  std::vector<OutGuard> out_guards;
  std::vector<std::string> aot_graphs;  // forward and backward graphs' code, per graph compiled for autograd
  std::vector<Tensor> outputs;      // what the call returned

  // str: PyTorch's layout: "Graph Count: 2\nGraph Break Count: 1\nOp Count: 2\n
  // Break Reasons:\n  Break Reason 1:\n    Reason: ...\n    User Stack:\n ..."
  std::string str() const;
};

// explain_output: the ExplainOutput of a compiled function's stats, outputs
// left empty. Given the stats after a fresh function's first call (which
// compiles every graph it runs), it is what explain() reports.
ExplainOutput explain_output(const CompileStats& stats);

// Explainer: what explain() returns; call it with inputs.
class Explainer {
 public:
  Explainer(TracedFunction fn, CompileOptions options) : fn_(std::move(fn)), options_(std::move(options)) {}
  ExplainOutput operator()(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  ExplainOutput operator()(const Ts&... inputs) const {
    return (*this)(std::vector<Tensor>{inputs...});
  }

 private:
  TracedFunction fn_;
  CompileOptions options_;
};

// explain: `explain(f)(x, y).str()`; compiles f afresh (fullgraph is ignored:
// breaks are what explain reports).
template <class Fn>
Explainer explain(Fn fn, CompileOptions options = {}) {
  options.fullgraph = false;
  return Explainer(internal::as_traced_function(std::move(fn)), std::move(options));
}

// CompileCounter: a backend that counts compilations (frame_count), their ops
// (op_count) and keeps a copy of each graph, then defers to inner (eager by
// default). Pass counter.backend() as CompileOptions::backend_fn.
class CompileCounter {
 public:
  explicit CompileCounter(Backend inner = &eager_backend);
  // backend: the counting backend (it refers to this counter: keep it alive).
  Backend backend();
  int frame_count() const;
  int op_count() const;
  // graphs: copies of every graph compiled, in order (their str()).
  std::vector<std::string> graphs() const;
  void clear();

 private:
  struct State {
    mutable std::mutex mu;
    int frames = 0;
    int ops = 0;
    std::vector<std::string> graphs;
  };
  Backend inner_;
  std::shared_ptr<State> state_;
};

}  // namespace opspec
