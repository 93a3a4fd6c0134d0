// graph.h: Graph, the graph IR that tracing (make_fx) produces and the
// compiler consumes: one Node type (placeholder, constant, call, getitem,
// output) in execution order. See Note [Graph IR].
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/operator.h"
#include "runtime/dispatch/value.h"

namespace opspec {

// Note [Graph IR]
// A Graph is a list of Nodes in execution order, as torch.fx: placeholders
// (the inputs), constants (tensors the program closed over), calls of one op
// with one NodeArg per schema argument (the complete stack the dispatcher saw),
// getitems (one output of a multi-output call such as native_layer_norm) and a
// single output node. Every node keeps the metadata of the value it produced
// (TensorMeta per output), taken from the fake or real tensors seen while
// tracing, so passes and backends know shapes without running anything.
// Names are for people only: the structural hash ignores them.

// NodeOp: what a node does.
enum class NodeOp : uint8_t { kPlaceholder, kConstant, kCall, kGetItem, kOutput };

// node_op_name: "placeholder", "constant", "call", "getitem", "output".
std::string_view node_op_name(NodeOp op);

// TensorMeta: the metadata of one tensor value: sizes, strides, dtype, device.
struct TensorMeta {
  SizeVec sizes;
  SizeVec strides;
  DType dtype = DType::kFloat32;
  Device device = kCPU;

  // of: the metadata of t (a real, meta or fake tensor).
  static TensorMeta of(const Tensor& t);
  // str: "f32[8, 8]", with the device appended when not cpu ("f32[8] (cuda:0)"),
  // as Tensor::meta_str spells it.
  std::string str() const;
  friend bool operator==(const TensorMeta&, const TensorMeta&) = default;
};

// OutputMeta: the metadata of one output of a node: a tensor, or nullopt for a
// non-tensor result (the Scalar of aten::_local_scalar_dense).
using OutputMeta = std::optional<TensorMeta>;

class Node;

// NodeArg: one argument of a node: a plain Value (ints, lists, dtypes, None,
// and wrapped-number tensors such as the 1.0 of `x + 1.0`), a node, or a list
// of nodes (the Tensor[] of aten::cat).
class NodeArg {
 public:
  // value / node / nodes: the three kinds of argument.
  static NodeArg value(Value v);
  static NodeArg node(Node* n);
  static NodeArg nodes(std::vector<Node*> ns);

  bool is_value() const { return kind_ == Kind::kValue; }
  bool is_node() const { return kind_ == Kind::kNode; }
  bool is_node_list() const { return kind_ == Kind::kNodeList; }
  const Value& as_value() const;
  Node* as_node() const;
  const std::vector<Node*>& as_node_list() const;
  // input_nodes: the nodes this argument refers to (zero, one or several).
  std::vector<Node*> input_nodes() const;

 private:
  enum class Kind : uint8_t { kValue, kNode, kNodeList };
  Kind kind_ = Kind::kValue;
  Value value_;
  std::vector<Node*> nodes_;  // one entry for kNode
};

// Node: one step of a graph. Created only through Graph's add_* functions.
class Node {
 public:
  NodeOp op() const { return op_; }
  // name: unique in its graph; "relu", "add_1", "arg0_1", "_tensor_constant0".
  const std::string& name() const { return name_; }
  // target: the op of a kCall node (null otherwise).
  const OperatorHandle* target() const { return target_; }
  // args: kCall: one per schema argument; kGetItem: {the call node}; kOutput:
  // the returned nodes. Empty for placeholders and constants.
  const std::vector<NodeArg>& args() const { return args_; }
  // index: the output a kGetItem node selects.
  int64_t index() const { return index_; }
  // meta: one entry per output (a getitem, placeholder or constant has one).
  const std::vector<OutputMeta>& meta() const { return meta_; }
  // tensor_meta: the single tensor output's metadata; throws if not exactly one tensor.
  const TensorMeta& tensor_meta() const;
  // constant: the tensor of a kConstant node.
  const Tensor& constant() const { return constant_; }
  // users: the nodes that take this node as an argument, in graph order.
  const std::vector<Node*>& users() const { return users_; }
  // input_nodes: the distinct nodes this node's arguments refer to, in argument order.
  std::vector<Node*> input_nodes() const;
  // str: the node's line in Graph::str, e.g. "%relu = aten::relu(%x) : f32[8, 8]".
  std::string str() const;

 private:
  friend class Graph;
  Node() = default;
  NodeOp op_ = NodeOp::kCall;
  std::string name_;
  const OperatorHandle* target_ = nullptr;
  std::vector<NodeArg> args_;
  int64_t index_ = 0;
  std::vector<OutputMeta> meta_;
  Tensor constant_;
  std::vector<Node*> users_;
};

// Graph: owns its nodes; move-only (use clone to copy).
class Graph {
 public:
  Graph() = default;
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // add_placeholder: an input; name made unique ("x", then "x_1").
  Node* add_placeholder(std::string_view name, TensorMeta meta);
  // add_constant: a tensor the program uses but does not take as input; named
  // "_tensor_constant0", "_tensor_constant1", ... unless name is given.
  Node* add_constant(Tensor value, std::string_view name = "");
  // add_call: a call of op with one argument per schema argument; named after
  // the op's base name ("add", "add_1"). Throws if args do not match the schema
  // arity or refer to a node of another graph, or meta has the wrong arity.
  Node* add_call(const OperatorHandle& op, std::vector<NodeArg> args, std::vector<OutputMeta> meta);
  // add_getitem: output `index` of a multi-output call; named "getitem", "getitem_1", ...
  Node* add_getitem(Node* call, int64_t index);
  // set_output: the graph's results (exactly one output node; replaces any previous one).
  Node* set_output(std::vector<Node*> results);

  // nodes: every node in execution order.
  std::vector<Node*> nodes() const;
  size_t size() const { return nodes_.size(); }
  // placeholders: the inputs in order.
  std::vector<Node*> placeholders() const;
  // output: the output node, or null before set_output.
  Node* output() const;
  // find: the node named name, or null.
  Node* find(std::string_view name) const;
  // erase: removes a node that has no users; throws otherwise.
  void erase(Node* node);

  // str: one line per node (see Node::str), "return ..." for the output.
  std::string str() const;
  // to_dot: the graph in Graphviz DOT, one box per node, edges from inputs to users.
  std::string to_dot(std::string_view graph_name = "graph") const;
  // structural_hash: equal for graphs with the same ops, arguments, metadata,
  // constants (by value) and wiring, whatever the node names. Without
  // metadata it identifies the program alone: the compiler's cache keys on
  // that and checks shapes and dtypes with guards.
  uint64_t structural_hash(bool include_metadata = true) const;
  // clone: a deep copy (constants share their tensors).
  Graph clone() const;
  // lint: checks the invariants (unique names, arguments defined before use,
  // users consistent, one output node last); throws opspec::Error naming the node.
  void lint() const;

 private:
  std::string unique_name(std::string_view base);
  Node* append(std::unique_ptr<Node> node);

  std::vector<std::unique_ptr<Node>> nodes_;
  absl::flat_hash_map<std::string, Node*> by_name_;
  // The next "_N" suffix to try per base name, so naming stays O(1) in graphs
  // with thousands of "add"s (FX keeps the same counters).
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t num_constants_ = 0;
};

namespace internal {
// lint_nodes: Graph::lint's checks over any node sequence (unique names,
// arguments defined earlier in the sequence, users lists matching, output
// last). Separate so tests can feed it sequences no Graph would hold.
void lint_nodes(absl::Span<Node* const> nodes);
}  // namespace internal

}  // namespace opspec
