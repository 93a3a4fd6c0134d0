// interpreter.h: run_graph, which executes a Graph with real tensors through
// the dispatcher (so modes such as DebugMode see every op it runs).
#pragma once

#include <memory>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/types/span.h"
#include "runtime/graph/graph.h"

namespace opspec {

// run_graph: runs g on inputs (one per placeholder, matching its dtype, device
// and sizes) and returns the output node's values. Each call node dispatches
// its op through the dispatcher exactly as eager code would, so results equal
// eager ones bit for bit. Throws opspec::Error naming the placeholder on an
// input mismatch, and naming the node when an op fails.
std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs);

// RunGraphOptions: what run_graph checks.
struct RunGraphOptions {
  // check_sizes: inputs must have the placeholders' sizes. The compiler turns
  // it off for graphs compiled with dynamic dims, which serve any size there.
  bool check_sizes = true;
};
// run_graph: as above, with options.
std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs, const RunGraphOptions& options);

// GraphRunner: runs one graph again and again exactly as run_graph does (same
// results, checks and errors), with the per-graph set-up done once: where
// each argument comes from and when each value dies. Backends keep one per
// compiled graph. g must outlive it; copies share the set-up; thread-safe.
class GraphRunner {
 public:
  explicit GraphRunner(const Graph& g, RunGraphOptions options = {});
  // operator(): run_graph(g, inputs, options).
  std::vector<Tensor> operator()(absl::Span<const Tensor> inputs) const;

  struct Plan;

 private:
  std::shared_ptr<const Plan> plan_;
};

namespace internal {
// check_graph_input: input i must have placeholder p's dtype, device and (with
// check_sizes) sizes; errors start with who ("run_graph").
void check_graph_input(const Tensor& t, const Node& p, size_t i, bool check_sizes, std::string_view who);
// run_call_node: dispatches call node n on its arguments (value_of gives each
// input node's value) exactly as run_graph does, returning its results; an op
// error is rethrown with "<who>: node %name (op): " in front.
Stack run_call_node(const Node& n, absl::FunctionRef<const Value&(const Node*)> value_of, std::string_view who);
}  // namespace internal

}  // namespace opspec
