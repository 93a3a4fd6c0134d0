#include "runtime/graph/passes.h"

#include "runtime/ops/op_table.h"

namespace opspec {

bool is_impure(const Node& node) {
  switch (node.op()) {
    case NodeOp::kPlaceholder:
    case NodeOp::kOutput: return true;  // the graph's interface, as in FX
    case NodeOp::kCall:
      // An op that returns nothing is called for its effect (_set_grad_enabled,
      // as in FX's _side_effectful_functions).
      return node.target()->schema().is_mutable() || node.target()->has_tag(OpTag::kNondeterministicSeeded) ||
             node.target()->schema().returns().empty();
    case NodeOp::kConstant:
    case NodeOp::kGetItem: return false;
  }
  return false;
}

bool sets_grad_mode(const Node& node) {
  return node.op() == NodeOp::kCall && node.target() == &builtin_op(OpId::_set_grad_enabled);
}

int eliminate_dead_code(Graph& g) {
  // Backwards, so that erasing a node frees its inputs before they are
  // visited and a whole dead chain goes in one sweep.
  int removed = 0;
  const std::vector<Node*> nodes = g.nodes();
  for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
    Node* n = *it;
    if (n->users().empty() && !is_impure(*n)) {
      g.erase(n);
      ++removed;
    }
  }
  return removed;
}

}  // namespace opspec
