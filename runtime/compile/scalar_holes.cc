// scalar_holes.cc: See Note [Values read with item()] in internal/scalar_holes.h.
#include "runtime/compile/internal/scalar_holes.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "runtime/compile/internal/recording.h"

namespace opspec::internal {
namespace {

bool is_number(const NodeArg& a) {
  return a.is_value() && a.as_value().is_tensor() && a.as_value().to_tensor().defined() &&
         a.as_value().to_tensor().is_wrapped_number();
}

Scalar number_of(const NodeArg& a) { return a.as_value().to_scalar(); }

// same_number: the same kind and bits (-0.0 is not 0.0: the program's hash tells them apart too).
bool same_number(const Scalar& a, const Scalar& b) {
  if (a.is_floating_point() != b.is_floating_point()) return false;
  return a.is_floating_point() ? std::bit_cast<uint64_t>(a.to_double()) == std::bit_cast<uint64_t>(b.to_double())
                               : a.to<int64_t>() == b.to<int64_t>();
}

}  // namespace

std::optional<std::vector<ConstantChange>> constant_changes(const Graph& a, const Graph& b) {
  const std::vector<Node*> na = a.nodes(), nb = b.nodes();
  if (na.size() != nb.size()) return std::nullopt;
  absl::flat_hash_map<const Node*, size_t> ia, ib;
  for (size_t i = 0; i < na.size(); ++i) ia[na[i]] = i, ib[nb[i]] = i;
  std::vector<ConstantChange> changes;
  for (size_t i = 0; i < na.size(); ++i) {
    const Node& x = *na[i];
    const Node& y = *nb[i];
    if (x.op() != y.op() || x.target() != y.target() || x.index() != y.index() ||
        x.args().size() != y.args().size()) {
      return std::nullopt;
    }
    if (x.op() == NodeOp::kConstant && !x.constant().is_same(y.constant())) return std::nullopt;
    for (size_t k = 0; k < x.args().size(); ++k) {
      const NodeArg& p = x.args()[k];
      const NodeArg& q = y.args()[k];
      if (p.is_node() != q.is_node() || p.is_value() != q.is_value() || p.is_node_list() != q.is_node_list()) {
        return std::nullopt;
      }
      if (p.is_node()) {
        if (ia.at(p.as_node()) != ib.at(q.as_node())) return std::nullopt;
      } else if (p.is_node_list()) {
        if (p.as_node_list().size() != q.as_node_list().size()) return std::nullopt;
        for (size_t j = 0; j < p.as_node_list().size(); ++j) {
          const Node* pj = p.as_node_list()[j];
          const Node* qj = q.as_node_list()[j];
          if ((pj == nullptr) != (qj == nullptr)) return std::nullopt;  // null: a None entry
          if (pj != nullptr && ia.at(pj) != ib.at(qj)) return std::nullopt;
        }
      } else if (is_number(p) && is_number(q)) {
        const Scalar before = number_of(p), after = number_of(q);
        if (p.as_value().to_tensor().dtype() != q.as_value().to_tensor().dtype()) return std::nullopt;
        if (!same_number(before, after)) changes.push_back({{i, k}, before, after, x.target()->name()});
      } else if (!same_value(p.as_value(), q.as_value())) {
        return std::nullopt;
      }
    }
  }
  return changes;
}

Graph with_holes(const Graph& g, const std::vector<ScalarSlot>& slots) {
  const std::vector<Node*> nodes = g.nodes();
  Graph out;
  absl::flat_hash_map<const Node*, Node*> map;
  for (Node* n : nodes) {
    if (n->op() == NodeOp::kPlaceholder) map[n] = out.add_placeholder(n->name(), n->tensor_meta());
  }
  std::vector<Node*> holes;
  for (const ScalarSlot& s : slots) {
    const Tensor number = nodes.at(s.node)->args().at(s.arg).as_value().to_tensor();
    holes.push_back(out.add_placeholder("scalar", TensorMeta::of(number)));
  }
  auto remap = [&](const std::vector<Node*>& ns) {
    std::vector<Node*> r;
    for (Node* n : ns) r.push_back(n == nullptr ? nullptr : map.at(n));  // null: a None entry
    return r;
  };
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    switch (n->op()) {
      case NodeOp::kPlaceholder: break;
      case NodeOp::kConstant: map[n] = out.add_constant(n->constant(), n->name()); break;
      case NodeOp::kGetItem: map[n] = out.add_getitem(map.at(n->args()[0].as_node()), n->index()); break;
      case NodeOp::kOutput: {
        std::vector<Node*> results;  // each returned node, repeats kept
        for (const NodeArg& a : n->args()) {
          if (a.is_node()) results.push_back(map.at(a.as_node()));
          if (a.is_node_list()) {
            for (Node* r : remap(a.as_node_list())) results.push_back(r);
          }
        }
        out.set_output(std::move(results));
        break;
      }
      case NodeOp::kCall: {
        std::vector<NodeArg> args;
        for (size_t k = 0; k < n->args().size(); ++k) {
          const NodeArg& a = n->args()[k];
          const auto hole = std::find(slots.begin(), slots.end(), ScalarSlot{i, k});
          if (hole != slots.end()) {
            args.push_back(NodeArg::node(holes[static_cast<size_t>(hole - slots.begin())]));
          } else if (a.is_node()) {
            args.push_back(NodeArg::node(map.at(a.as_node())));
          } else if (a.is_node_list()) {
            args.push_back(NodeArg::nodes(remap(a.as_node_list())));
          } else {
            args.push_back(a);
          }
        }
        map[n] = out.add_call(*n->target(), std::move(args), n->meta());
        break;
      }
    }
  }
  return out;
}

std::vector<Tensor> hole_values(const Graph& g, const std::vector<ScalarSlot>& slots) {
  const std::vector<Node*> nodes = g.nodes();
  std::vector<Tensor> values;
  for (const ScalarSlot& s : slots) {
    values.push_back(make_wrapped_number(nodes.at(s.node)->args().at(s.arg).as_value().to_scalar()));
  }
  return values;
}

uint64_t holes_hash(const Graph& g, const std::vector<ScalarSlot>& slots) {
  return with_holes(g, slots).structural_hash(/*include_metadata=*/false);
}

}  // namespace opspec::internal
