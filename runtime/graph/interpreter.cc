#include "runtime/graph/interpreter.h"

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec {
namespace {

// single_value: the one value a node produced, as an argument of a later node.
const Value& single_value(const std::vector<Value>& values, const Node& producer, const Node& user) {
  OPSPEC_CHECK(values.size() == 1, "run_graph: node %", user.name(), " uses %", producer.name(), ", which has ",
               values.size(), " outputs; select one with a getitem node");
  return values[0];
}

// constant_value: a constant's tensor, which must hold data (not meta, not fake).
const Tensor& constant_value(const Node& n) {
  const Tensor& t = n.constant();
  const bool no_data = t.impl()->storage()->device().is_meta();
  OPSPEC_CHECK(!no_data, "run_graph: constant %", n.name(), " is a ", t.device().is_meta() ? "meta" : "fake",
               " tensor (", t.meta_str(), ") and has no data; trace with real constants to run this graph");
  return t;
}

}  // namespace

namespace internal {

// Strides may differ: the ops handle any layout.
void check_graph_input(const Tensor& t, const Node& p, size_t i, bool check_sizes, std::string_view who) {
  const TensorMeta& want = p.tensor_meta();
  OPSPEC_CHECK(t.defined(), who, ": input ", i, " (%", p.name(), ") is undefined but the graph was traced with ",
               want.str());
  const bool same_sizes = check_sizes ? std::equal(t.sizes().begin(), t.sizes().end(), want.sizes.begin(), want.sizes.end())
                                      : t.dim() == static_cast<int64_t>(want.sizes.size());
  OPSPEC_CHECK(same_sizes && t.dtype() == want.dtype && t.device() == want.device, who, ": input ", i, " (%",
               p.name(), ") is ", TensorMeta::of(t).str(), " but the graph was traced with ", want.str());
}

Stack run_call_node(const Node& n, absl::FunctionRef<const Value&(const Node*)> value_of, std::string_view who) {
  Stack stack;
  stack.reserve(n.args().size());
  for (const NodeArg& a : n.args()) {
    if (a.is_value()) {
      stack.push_back(a.as_value());
    } else if (a.is_node()) {
      stack.push_back(value_of(a.as_node()));
    } else {
      std::vector<Tensor> list;
      for (const Node* x : a.as_node_list()) list.push_back(value_of(x).to_tensor());
      stack.push_back(std::move(list));
    }
  }
  // Full dispatch, as eager code does, so active modes see the op.
  try {
    n.target()->schema().check_stack(stack);
    Dispatcher::singleton().call_boxed(*n.target(), stack);
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  } catch (const Error& e) {
    throw Error(str_cat(who, ": node %", n.name(), " (", n.target()->name(), "): ", e.what()));
  }
  return stack;
}

}  // namespace internal

std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs) { return run_graph(g, inputs, {}); }

std::vector<Tensor> run_graph(const Graph& g, absl::Span<const Tensor> inputs, const RunGraphOptions& options) {
  const std::vector<Node*> nodes = g.nodes();
  const std::vector<Node*> placeholders = g.placeholders();
  OPSPEC_CHECK(inputs.size() == placeholders.size(), "run_graph: the graph takes ", placeholders.size(),
               " input(s) (", absl::StrJoin(placeholders, ", ", [](std::string* o, const Node* p) {
                 o->append("%" + p->name());
               }),
               ") but ", inputs.size(), " were given");
  for (size_t i = 0; i < inputs.size(); ++i) internal::check_graph_input(inputs[i], *placeholders[i], i, options.check_sizes, "run_graph");
  const Node* output = g.output();
  OPSPEC_CHECK(output != nullptr, "run_graph: the graph has no output node");

  // Values live from their node until their last user has run, and no longer,
  // so the graph's peak memory matches eager execution.
  absl::flat_hash_map<const Node*, size_t> position;
  for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
  std::vector<std::vector<size_t>> release_after(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    const std::vector<Node*>& users = nodes[i]->users();
    // users are in graph order, so the last one is the last use.
    release_after[users.empty() ? i : position.at(users.back())].push_back(i);
  }

  std::vector<std::vector<Value>> values(nodes.size());
  auto value_of = [&](const Node* producer, const Node& user) -> const Value& {
    return single_value(values[position.at(producer)], *producer, user);
  };
  size_t next_input = 0;
  std::vector<Tensor> results;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node& n = *nodes[i];
    switch (n.op()) {
      case NodeOp::kPlaceholder: values[i] = {inputs[next_input++]}; break;
      case NodeOp::kConstant: values[i] = {constant_value(n)}; break;
      case NodeOp::kGetItem: {
        const std::vector<Value>& call = values[position.at(n.args()[0].as_node())];
        OPSPEC_CHECK(n.index() < static_cast<int64_t>(call.size()), "run_graph: node %", n.name(), " selects output ",
                     n.index(), " of %", n.args()[0].as_node()->name(), ", which has ", call.size());
        values[i] = {call[static_cast<size_t>(n.index())]};
        break;
      }
      case NodeOp::kCall:
        values[i] = internal::run_call_node(n, [&](const Node* producer) -> const Value& {
          return value_of(producer, n);
        }, "run_graph");
        break;
      case NodeOp::kOutput:
        for (const NodeArg& a : n.args()) {
          const Value& v = value_of(a.as_node(), n);
          OPSPEC_CHECK(v.is_tensor(), "run_graph: output %", a.as_node()->name(), " is a ", v.type_name(),
                       ", not a tensor");
          results.push_back(v.to_tensor());
        }
        break;
    }
    for (size_t dead : release_after[i]) values[dead].clear();
  }
  return results;
}

}  // namespace opspec
