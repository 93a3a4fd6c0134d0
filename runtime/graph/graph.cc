#include "runtime/graph/graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"

namespace opspec {

std::string_view node_op_name(NodeOp op) {
  switch (op) {
    case NodeOp::kPlaceholder: return "placeholder";
    case NodeOp::kConstant: return "constant";
    case NodeOp::kCall: return "call";
    case NodeOp::kGetItem: return "getitem";
    case NodeOp::kOutput: return "output";
  }
  return "?";
}

TensorMeta TensorMeta::of(const Tensor& t) {
  OPSPEC_CHECK(t.defined(), "TensorMeta::of: tensor is undefined");
  return TensorMeta{SizeVec(t.sizes().begin(), t.sizes().end()), SizeVec(t.strides().begin(), t.strides().end()),
                    t.dtype(), t.device()};
}

std::string TensorMeta::str() const {
  // Same spelling as Tensor::meta_str, so graphs and DebugMode logs agree.
  std::string s = str_cat(dtype_short_name(dtype), format_sizes(sizes));
  if (!device.is_cpu()) str_append(&s, " (", device.str(), ")");
  return s;
}

// ---- NodeArg ----

NodeArg NodeArg::value(Value v) {
  NodeArg a;
  a.kind_ = Kind::kValue;
  a.value_ = std::move(v);
  return a;
}

NodeArg NodeArg::node(Node* n) {
  NodeArg a;
  a.kind_ = Kind::kNode;
  a.nodes_ = {n};
  return a;
}

NodeArg NodeArg::nodes(std::vector<Node*> ns) {
  NodeArg a;
  a.kind_ = Kind::kNodeList;
  a.nodes_ = std::move(ns);
  return a;
}

const Value& NodeArg::as_value() const {
  OPSPEC_CHECK(is_value(), "NodeArg::as_value: the argument is a node reference, not a value");
  return value_;
}

Node* NodeArg::as_node() const {
  OPSPEC_CHECK(is_node(), "NodeArg::as_node: the argument is not a single node");
  return nodes_[0];
}

const std::vector<Node*>& NodeArg::as_node_list() const {
  OPSPEC_CHECK(is_node_list(), "NodeArg::as_node_list: the argument is not a node list");
  return nodes_;
}

std::vector<Node*> NodeArg::input_nodes() const {
  if (is_value()) return {};
  std::vector<Node*> out;
  for (Node* n : nodes_) {
    if (n != nullptr) out.push_back(n);  // null: a None entry of a Tensor?[] list
  }
  return out;
}

// ---- Node ----

const TensorMeta& Node::tensor_meta() const {
  OPSPEC_CHECK(meta_.size() == 1 && meta_[0].has_value(), "Node::tensor_meta: %", name_,
               " does not produce exactly one tensor (", meta_.size(), " output(s))");
  return *meta_[0];
}

std::vector<Node*> Node::input_nodes() const {
  std::vector<Node*> out;
  auto add = [&out](Node* n) {
    if (std::find(out.begin(), out.end(), n) == out.end()) out.push_back(n);
  };
  for (const NodeArg& a : args_) {
    if (a.is_node()) {
      add(a.as_node());
    } else if (a.is_node_list()) {
      for (Node* n : a.as_node_list()) {
        if (n != nullptr) add(n);
      }
    }
  }
  return out;
}

// ---- Graph construction ----

std::string Graph::unique_name(std::string_view base) {
  // FX style: "add", then "add_1", "add_2", ...
  std::string name = base.empty() ? std::string("node") : std::string(base);
  if (!by_name_.contains(name)) return name;
  int64_t& next = next_suffix_[name];
  for (next = std::max<int64_t>(next, 1);; ++next) {
    std::string candidate = str_cat(name, "_", next);
    if (!by_name_.contains(candidate)) {
      ++next;
      return candidate;
    }
  }
}

namespace {

// Whether n is a node of the graph whose name map is by_name.
bool owns(const absl::flat_hash_map<std::string, Node*>& by_name, const Node* n) {
  if (n == nullptr) return false;
  auto it = by_name.find(n->name());
  return it != by_name.end() && it->second == n;
}

}  // namespace

Node* Graph::append(std::unique_ptr<Node> node) {
  // New nodes go before the output node so that it stays last (as FX's
  // default insertion point); its users lists must keep graph order too.
  Node* out = output();
  Node* n = node.get();
  for (Node* input : n->input_nodes()) {
    auto& users = input->users_;
    if (out != nullptr && !users.empty() && users.back() == out) {
      users.insert(users.end() - 1, n);
    } else {
      users.push_back(n);
    }
  }
  by_name_[n->name_] = n;
  if (out != nullptr && n->op_ != NodeOp::kOutput) {
    nodes_.insert(nodes_.end() - 1, std::move(node));
  } else {
    nodes_.push_back(std::move(node));
  }
  return n;
}

Node* Graph::add_placeholder(std::string_view name, TensorMeta meta) {
  auto n = std::unique_ptr<Node>(new Node());
  n->op_ = NodeOp::kPlaceholder;
  n->name_ = unique_name(name.empty() ? std::string_view("arg") : name);
  n->meta_ = {std::move(meta)};
  return append(std::move(n));
}

Node* Graph::add_constant(Tensor value, std::string_view name) {
  OPSPEC_CHECK(value.defined(), "Graph::add_constant: the tensor is undefined");
  auto n = std::unique_ptr<Node>(new Node());
  n->op_ = NodeOp::kConstant;
  n->name_ = unique_name(name.empty() ? str_cat("_tensor_constant", num_constants_++) : std::string(name));
  n->meta_ = {TensorMeta::of(value)};
  n->constant_ = std::move(value);
  return append(std::move(n));
}

Node* Graph::add_call(const OperatorHandle& op, std::vector<NodeArg> args, std::vector<OutputMeta> meta) {
  const FunctionSchema& schema = op.schema();
  OPSPEC_CHECK(args.size() == schema.arguments().size(), "Graph::add_call: ", op.name(), " takes ",
               schema.arguments().size(), " argument(s) but ", args.size(), " were given. Declaration: ",
               schema.str());
  // A Tensor[] result has one entry per element (See Note [List results in graphs] in proxy_tensor.cc).
  const bool list_result = schema.returns().size() == 1 && schema.returns()[0].type.is_list;
  OPSPEC_CHECK(list_result || meta.size() == schema.returns().size(), "Graph::add_call: ", op.name(), " returns ",
               schema.returns().size(), " value(s) but metadata for ", meta.size(), " was given");
  for (size_t i = 0; i < args.size(); ++i) {
    const Argument& a = schema.arguments()[i];
    const NodeArg& arg = args[i];
    if (arg.is_value()) {
      OPSPEC_CHECK(FunctionSchema::value_matches(a.type, arg.as_value()), "Graph::add_call: ", op.name(),
                   " argument '", a.name, "' (position ", i + 1, ") must be ", a.type.str(), ", not ",
                   arg.as_value().type_name());
      continue;
    }
    OPSPEC_CHECK(arg.is_node() != a.type.is_list, "Graph::add_call: ", op.name(), " argument '", a.name,
                 "' (position ", i + 1, ") is ", a.type.str(), " and cannot take a node ",
                 arg.is_node() ? "" : "list");
    for (const Node* input : arg.input_nodes()) {
      OPSPEC_CHECK(owns(by_name_, input), "Graph::add_call: ", op.name(), " argument '", a.name,
                   "' refers to ", input ? str_cat("%", input->name()) : std::string("a null node"),
                   ", which is not a node of this graph");
    }
  }
  auto n = std::unique_ptr<Node>(new Node());
  n->op_ = NodeOp::kCall;
  n->name_ = unique_name(schema.name());
  n->target_ = &op;
  n->args_ = std::move(args);
  n->meta_ = std::move(meta);
  return append(std::move(n));
}

Node* Graph::add_getitem(Node* call, int64_t index) {
  OPSPEC_CHECK(owns(by_name_, call), "Graph::add_getitem: ", call ? str_cat("%", call->name()) : "null",
               " is not a node of this graph");
  OPSPEC_CHECK(call->op() == NodeOp::kCall, "Graph::add_getitem: %", call->name(), " is a ",
               node_op_name(call->op()), ", not a call");
  OPSPEC_CHECK(index >= 0 && index < static_cast<int64_t>(call->meta().size()), "Graph::add_getitem: index ",
               index, " is out of range for %", call->name(), ", which has ", call->meta().size(), " output(s)");
  auto n = std::unique_ptr<Node>(new Node());
  n->op_ = NodeOp::kGetItem;
  n->name_ = unique_name("getitem");
  n->args_ = {NodeArg::node(call)};
  n->index_ = index;
  n->meta_ = {call->meta()[static_cast<size_t>(index)]};
  return append(std::move(n));
}

Node* Graph::set_output(std::vector<Node*> results) {
  for (const Node* r : results) {
    OPSPEC_CHECK(owns(by_name_, r), "Graph::set_output: ", r ? str_cat("%", r->name()) : "null",
                 " is not a node of this graph");
    OPSPEC_CHECK(r->op() != NodeOp::kOutput, "Graph::set_output: cannot return the output node");
  }
  if (Node* old = output()) erase(old);
  auto n = std::unique_ptr<Node>(new Node());
  n->op_ = NodeOp::kOutput;
  n->name_ = unique_name("output");
  for (Node* r : results) {
    n->args_.push_back(NodeArg::node(r));
    n->meta_.push_back(r->meta().size() == 1 ? r->meta()[0] : std::nullopt);
  }
  return append(std::move(n));
}

// ---- Queries and erase ----

std::vector<Node*> Graph::nodes() const {
  std::vector<Node*> out;
  out.reserve(nodes_.size());
  for (const auto& n : nodes_) out.push_back(n.get());
  return out;
}

std::vector<Node*> Graph::placeholders() const {
  std::vector<Node*> out;
  for (const auto& n : nodes_) {
    if (n->op() == NodeOp::kPlaceholder) out.push_back(n.get());
  }
  return out;
}

Node* Graph::output() const {
  return !nodes_.empty() && nodes_.back()->op() == NodeOp::kOutput ? nodes_.back().get() : nullptr;
}

Node* Graph::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : it->second;
}

void Graph::erase(Node* node) {
  OPSPEC_CHECK(owns(by_name_, node), "Graph::erase: ", node ? str_cat("%", node->name()) : "null",
               " is not a node of this graph");
  OPSPEC_CHECK(node->users().empty(), "Graph::erase: cannot erase %", node->name(), ": it is still used by ",
               absl::StrJoin(node->users(), ", ", [](std::string* o, const Node* u) { o->append("%" + u->name()); }));
  for (Node* input : node->input_nodes()) {
    auto& users = input->users_;
    users.erase(std::remove(users.begin(), users.end(), node), users.end());
  }
  by_name_.erase(node->name());
  auto it = std::find_if(nodes_.begin(), nodes_.end(), [&](const auto& p) { return p.get() == node; });
  nodes_.erase(it);
}

// ---- clone and lint ----

Graph Graph::clone() const {
  Graph g;
  g.num_constants_ = num_constants_;
  g.next_suffix_ = next_suffix_;
  g.nodes_.reserve(nodes_.size());
  g.by_name_.reserve(nodes_.size());
  absl::flat_hash_map<const Node*, Node*> map;
  map.reserve(nodes_.size());
  auto remap = [&](Node* n) { return map.at(n); };
  for (const auto& src : nodes_) {
    auto n = std::unique_ptr<Node>(new Node());
    n->op_ = src->op_;
    n->name_ = src->name_;
    n->target_ = src->target_;
    n->index_ = src->index_;
    n->meta_ = src->meta_;
    n->constant_ = src->constant_;
    n->args_.reserve(src->args_.size());
    for (const NodeArg& a : src->args_) {
      if (a.is_value()) {
        n->args_.push_back(a);
      } else if (a.is_node()) {
        n->args_.push_back(NodeArg::node(remap(a.as_node())));
      } else {
        std::vector<Node*> ns;
        for (Node* x : a.as_node_list()) ns.push_back(x == nullptr ? nullptr : remap(x));
        n->args_.push_back(NodeArg::nodes(std::move(ns)));
      }
    }
    map[src.get()] = n.get();
    g.append(std::move(n));
  }
  return g;
}

namespace internal {

void lint_nodes(absl::Span<Node* const> nodes) {
  // Checks in one forward pass what every pass may rely on; see Graph::lint.
  absl::flat_hash_set<std::string_view> names;
  absl::flat_hash_map<const Node*, size_t> position;
  absl::flat_hash_set<const Node*> members(nodes.begin(), nodes.end());
  absl::flat_hash_map<const Node*, std::vector<Node*>> expected_users;
  for (size_t i = 0; i < nodes.size(); ++i) {
    Node* n = nodes[i];
    OPSPEC_CHECK(names.insert(n->name()).second, "Graph::lint: node %", n->name(), " (position ", i,
                 ") has a duplicate name");
    if (n->op() == NodeOp::kOutput) {
      OPSPEC_CHECK(i + 1 == nodes.size(), "Graph::lint: output node %", n->name(), " is at position ", i,
                   " but must be the last of ", nodes.size(), " nodes");
    }
    OPSPEC_CHECK((n->op() == NodeOp::kCall) == (n->target() != nullptr), "Graph::lint: node %", n->name(),
                 " is a ", node_op_name(n->op()), n->target() ? " with" : " without", " a target");
    for (Node* input : n->input_nodes()) {
      OPSPEC_CHECK(input != nullptr, "Graph::lint: node %", n->name(), " has a null argument");
      OPSPEC_CHECK(members.contains(input), "Graph::lint: node %", n->name(), " uses %", input->name(),
                   ", which is not in this graph");
      OPSPEC_CHECK(position.contains(input), "Graph::lint: node %", n->name(), " uses %", input->name(),
                   " before it is defined");
      expected_users[input].push_back(n);
    }
    position[n] = i;
  }
  auto names_of = [](const std::vector<Node*>& ns) {
    return str_cat("[", absl::StrJoin(ns, ", ", [](std::string* o, const Node* u) { o->append("%" + u->name()); }),
                   "]");
  };
  for (Node* n : nodes) {
    const auto it = expected_users.find(n);
    const std::vector<Node*> expected = it == expected_users.end() ? std::vector<Node*>{} : it->second;
    OPSPEC_CHECK(n->users() == expected, "Graph::lint: node %", n->name(), " lists users ", names_of(n->users()),
                 " but is used by ", names_of(expected));
  }
}

}  // namespace internal

void Graph::lint() const {
  internal::lint_nodes(nodes());
  for (const auto& n : nodes_) {
    OPSPEC_CHECK(owns(by_name_, n.get()), "Graph::lint: node %", n->name(), " is missing from the name table");
  }
  OPSPEC_CHECK(by_name_.size() == nodes_.size(), "Graph::lint: the name table has ", by_name_.size(),
               " entries for ", nodes_.size(), " nodes");
}

}  // namespace opspec
