// graph_printer.cc: Node::str and Graph::str, the text form of a graph that
// tests compare as golden strings. See Note [Graph IR].
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"
#include "runtime/graph/graph.h"

namespace opspec {
namespace {

std::string ref(const Node* n) { return n == nullptr ? std::string("None") : str_cat("%", n->name()); }

std::string refs(const std::vector<Node*>& ns) {
  return absl::StrJoin(ns, ", ", [](std::string* o, const Node* n) { o->append(ref(n)); });
}

// meta_text: "f32[4, 5]", "Scalar", or "(f32[4, 5], f32[4, 1])" for several
// outputs; "[f32[2], f32[2]]" for a Tensor[] result, however long (See Note
// [List results in graphs] in runtime/trace/proxy_tensor.cc).
std::string meta_text(const std::vector<OutputMeta>& meta, bool list = false) {
  auto one = [](const OutputMeta& m) { return m ? m->str() : std::string("Scalar"); };
  if (meta.size() == 1 && !list) return one(meta[0]);
  return str_cat(list ? "[" : "(",
                 absl::StrJoin(meta, ", ", [&](std::string* o, const OutputMeta& m) { o->append(one(m)); }),
                 list ? "]" : ")");
}

// call_arguments: as FunctionSchema::format_arguments renders the stack the
// dispatcher saw, with node references as %name and node lists as [%a, %b].
std::string call_arguments(const Node& n) {
  const FunctionSchema& schema = n.target()->schema();
  Stack stack;
  stack.reserve(n.args().size());
  for (const NodeArg& a : n.args()) stack.push_back(a.is_value() ? a.as_value() : Value());
  return schema.format_arguments(stack, [&](size_t i) -> std::optional<std::string> {
    const NodeArg& a = n.args()[i];
    if (a.is_node()) return ref(a.as_node());
    if (a.is_node_list()) return str_cat("[", refs(a.as_node_list()), "]");
    return std::nullopt;
  });
}

}  // namespace

std::string Node::str() const {
  switch (op_) {
    case NodeOp::kPlaceholder:
    case NodeOp::kConstant:
      return str_cat("%", name_, " = ", node_op_name(op_), " : ", meta_text(meta_));
    case NodeOp::kCall: {
      const std::vector<Argument>& returns = target_->schema().returns();
      const bool list = returns.size() == 1 && returns[0].type.is_list;
      return str_cat("%", name_, " = ", target_->name(), "(", call_arguments(*this), ") : ", meta_text(meta_, list));
    }
    case NodeOp::kGetItem:
      return str_cat("%", name_, " = getitem(", ref(args_[0].as_node()), ", ", index_, ") : ", meta_text(meta_));
    case NodeOp::kOutput: {
      std::vector<Node*> results;
      for (const NodeArg& a : args_) results.push_back(a.as_node());
      if (results.size() == 1) return str_cat("return ", ref(results[0]));
      return str_cat("return (", refs(results), ")");
    }
  }
  return "";
}

std::string Graph::str() const {
  std::string out;
  for (const auto& n : nodes_) str_append(&out, n->str(), "\n");
  return out;
}

}  // namespace opspec
