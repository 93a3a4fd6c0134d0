// graph_dot.cc: Graph::to_dot, the graph in Graphviz DOT for looking at it
// (`dot -Tsvg`), one box per node and an edge from each input to its user.
#include "runtime/core/error.h"
#include "runtime/graph/graph.h"

namespace opspec {
namespace {

// quoted: a DOT string literal. Names like "graph" are DOT keywords, so every
// identifier we emit from user text is quoted.
std::string quoted(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

}  // namespace

std::string Graph::to_dot(std::string_view graph_name) const {
  absl::flat_hash_map<const Node*, size_t> id;
  std::string out = str_cat("digraph ", quoted(graph_name), " {\n");
  for (const auto& node : nodes_) {
    const Node& n = *node;
    const size_t next_id = id.size();
    id[&n] = next_id;
    std::string label = str_cat("%", n.name(), "\n");
    label += n.op() == NodeOp::kCall ? n.target()->name() : std::string(node_op_name(n.op()));
    if (n.op() == NodeOp::kGetItem) str_append(&label, "[", n.index(), "]");
    if (n.op() != NodeOp::kOutput) {
      // The type after " : " in Node::str ("f32[4, 5]", "Scalar", "(...)").
      const std::string line = n.str();
      str_append(&label, "\n", line.substr(line.rfind(" : ") + 3));
    }
    str_append(&out, "  n", id[&n], " [shape=box, label=", quoted(label), "];\n");
  }
  for (const auto& node : nodes_) {
    for (const Node* in : node->input_nodes()) str_append(&out, "  n", id.at(in), " -> n", id.at(node.get()), ";\n");
  }
  return out + "}\n";
}

}  // namespace opspec
