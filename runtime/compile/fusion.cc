// fusion.cc: graph partitioning into fusion groups, each lowered to a
// FusedProgram (internal/fusion_lowering.h). See Note [Fusion].
#include "runtime/compile/fusion.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/compile/internal/fusion_lowering.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/op_table.h"

namespace opspec {
namespace {

using internal::FusedProgram;
using internal::has_fusion_rule;
using internal::is_inplace_call;
using internal::Lowerer;
using internal::single_tensor;

bool is_barrier(const Node& n) { return n.op() == NodeOp::kCall && is_impure(n); }

// returns_alias: n's result may alias one of its arguments (a view, or an
// in-place op's self).
bool returns_alias(const Node& n) {
  const Node* call = n.op() == NodeOp::kGetItem ? n.args()[0].as_node() : &n;
  if (call->op() != NodeOp::kCall) return false;
  const auto& returns = call->target()->schema().returns();
  const size_t i = n.op() == NodeOp::kGetItem ? static_cast<size_t>(n.index()) : 0;
  return i < returns.size() && !returns[i].alias_set.empty();
}

// chain_root_ok: whether root may have an in-place chain written over it by
// a group of shape `sizes` (See Note [In-place fusion]): a dense cpu tensor
// of that shape with no view taken of it, which is a graph input, a fresh
// result or (member) one of the group's own values.
bool chain_root_ok(const Node& root, const SizeVec& sizes, bool member) {
  const TensorMeta* m = single_tensor(root);
  if (m == nullptr || !m->device.is_cpu() || m->sizes != sizes || !is_contiguous_strides(m->sizes, m->strides)) {
    return false;
  }
  if (!member && root.op() != NodeOp::kPlaceholder && (root.op() == NodeOp::kConstant || returns_alias(root))) {
    return false;
  }
  return std::none_of(root.users().begin(), root.users().end(), [](const Node* u) {
    return u->op() == NodeOp::kCall && !u->target()->schema().is_mutable() && returns_alias(*u);
  });
}

std::string group_name(const std::vector<Node*>& nodes, int64_t index) {
  constexpr size_t kMaxNames = 8;
  std::string name = "fused";
  for (size_t i = 0; i < nodes.size() && i < kMaxNames; ++i) {
    str_append(&name, "_", i + 1 == kMaxNames && nodes.size() > kMaxNames ? "etc" : nodes[i]->target()->schema().name());
  }
  str_append(&name, "_", index);
  return name;
}

// epilogue_matmul: a `linear` the group of `members` can finish as its
// epilogue (See Note [Matmul epilogues]), or null: a cpu f32 or f64 linear
// of the group's shape (a vector bias or none, an input of two dims or a
// contiguous one of more) that only members read and that no mutation or
// grad mode change separates from the group, since the linear then runs at
// the group's place.
Node* epilogue_matmul(const std::vector<Node*>& members, const std::vector<Node*>& chain,
                      const absl::flat_hash_map<const Node*, int64_t>& pos, const std::vector<Node*>& nodes) {
  if (!chain.empty()) return nullptr;
  const absl::flat_hash_set<const Node*> in_group(members.begin(), members.end());
  const TensorMeta& shape = members.front()->tensor_meta();
  for (const Node* m : members) {
    for (Node* l : m->input_nodes()) {
      if (l->op() != NodeOp::kCall || l->target() != &builtin_op(OpId::linear) || l->args().size() != 3) continue;
      const TensorMeta* out = single_tensor(*l);
      if (out == nullptr || !out->device.is_cpu() || out->sizes != shape.sizes || out->sizes.size() < 2 ||
          (out->dtype != DType::kFloat32 && out->dtype != DType::kFloat64) ||
          !is_contiguous_strides(out->sizes, out->strides)) {
        continue;
      }
      const NodeArg& input = l->args()[0];
      const NodeArg& weight = l->args()[1];
      const NodeArg& bias = l->args()[2];
      if (!input.is_node() || !weight.is_node() || !(bias.is_node() || (bias.is_value() && bias.as_value().is_none()))) {
        continue;
      }
      const TensorMeta* x = single_tensor(*input.as_node());
      const TensorMeta* w = single_tensor(*weight.as_node());
      const TensorMeta* b = bias.is_node() ? single_tensor(*bias.as_node()) : nullptr;
      if (x == nullptr || w == nullptr || (bias.is_node() && b == nullptr) || x->dtype != out->dtype ||
          w->dtype != out->dtype || (b != nullptr && b->dtype != out->dtype) || x->sizes.size() < 2 ||
          w->sizes.size() != 2 || (x->sizes.size() > 2 && !is_contiguous_strides(x->sizes, x->strides)) ||
          (b != nullptr && (b->sizes.size() != 1 || !is_contiguous_strides(b->sizes, b->strides)))) {
        continue;
      }
      const bool read_by_members_only = std::all_of(l->users().begin(), l->users().end(),
                                                    [&](const Node* u) { return in_group.contains(u); });
      if (!read_by_members_only) continue;
      const int64_t last = pos.at(members.back());
      // A write, or a grad mode change (a barrier: the linear would run in the other mode).
      bool mutation_between = false;
      for (int64_t i = pos.at(l) + 1; i < last && !mutation_between; ++i) {
        const Node& between = *nodes[static_cast<size_t>(i)];
        mutation_between = is_barrier(between) || is_inplace_call(between);
      }
      if (!mutation_between) return l;
    }
  }
  return nullptr;
}

}  // namespace

bool is_fusable(const Node& node) {
  if (!has_fusion_rule(node)) return false;
  const TensorMeta* out = single_tensor(node);
  if (out == nullptr) return false;
  // Fused kernels write row-major results. On cpu a group copies a result
  // eager lays out otherwise (a transposed or channels-last input's) into that
  // layout (run_group); on a device such a result runs unfused (See Note [Memory formats]).
  if (!out->device.is_cpu() && !is_contiguous_strides(out->sizes, out->strides)) return false;
  // In place: on cpu, over a node (See Note [In-place fusion]).
  if (is_inplace_call(node) && (!out->device.is_cpu() || node.args().empty() || !node.args()[0].is_node())) {
    return false;
  }
  // A trial lowering with every node argument as an input: the op's own shape
  // function decides (See Note [Fusion]).
  try {
    FusedProgram program(out->sizes);
    Lowerer lowerer{program, out->device};
    lowerer.lower(node);
    return true;
  } catch (const Error&) {
    return false;
  }
}

std::vector<FusionGroup> partition_graph(const Graph& g) {
  const std::vector<Node*> nodes = g.nodes();
  absl::flat_hash_map<const Node*, int64_t> pos;
  for (size_t i = 0; i < nodes.size(); ++i) pos[nodes[i]] = static_cast<int64_t>(i);

  struct Group {
    std::vector<Node*> nodes;
    bool open = true;
    int64_t last_step = -1;  // the step of its last member
    bool adjacent = true;    // its members are consecutive steps
    Node* root = nullptr;    // See Note [In-place fusion]
    std::vector<Node*> chain;
  };
  std::vector<Group> groups;
  absl::flat_hash_map<const Node*, int> group_of;

  // convex: no path from a member through a non-member back into members.
  // Only nodes after the first member can lie on such a path.
  auto convex = [&](const absl::flat_hash_set<const Node*>& members) {
    int64_t first = static_cast<int64_t>(nodes.size());
    for (const Node* m : members) first = std::min(first, pos.at(m));
    std::vector<const Node*> stack;
    for (const Node* m : members) {
      for (Node* in : m->input_nodes()) {
        if (!members.contains(in)) stack.push_back(in);
      }
    }
    absl::flat_hash_set<const Node*> seen;
    while (!stack.empty()) {
      const Node* q = stack.back();
      stack.pop_back();
      if (pos.at(q) < first || !seen.insert(q).second) continue;
      if (members.contains(q)) return false;
      for (Node* in : q->input_nodes()) stack.push_back(in);
    }
    return true;
  };
  auto members_of = [&](const std::vector<int>& ids, Node* extra) {
    absl::flat_hash_set<const Node*> set{extra};
    for (int id : ids) set.insert(groups[id].nodes.begin(), groups[id].nodes.end());
    return set;
  };
  // stale: n reads the chain's root or an earlier link of grp's chain, whose
  // buffer holds the chain's latest value by then (See Note [In-place fusion]).
  auto stale = [&](const Group& grp, const Node& n) {
    if (grp.chain.empty()) return false;
    for (const Node* in : n.input_nodes()) {
      if (in == grp.root ||
          (in != grp.chain.back() && std::find(grp.chain.begin(), grp.chain.end(), in) != grp.chain.end())) {
        return true;
      }
    }
    return false;
  };
  auto add_to = [&](int id, Node* n, int64_t step) {
    Group& grp = groups[static_cast<size_t>(id)];
    grp.adjacent = grp.adjacent && (grp.nodes.empty() || grp.last_step == step - 1);
    grp.last_step = step;
    grp.nodes.push_back(n);
    group_of[n] = id;
  };
  // join_inplace: the group in-place node n joins, or -1 (See Note [In-place fusion]).
  auto join_inplace = [&](Node* n, int64_t step) -> int {
    if (!is_fusable(*n)) return -1;
    Node* self = n->args()[0].as_node();
    const SizeVec& shape = n->tensor_meta().sizes;
    if (auto it = group_of.find(self); it != group_of.end()) {
      const int id = it->second;  // (add_to inserts into group_of: it dies)
      Group& grp = groups[static_cast<size_t>(id)];
      if (!grp.open || grp.last_step != step - 1 || stale(grp, *n)) return -1;
      if (grp.chain.empty()) {  // the first link, over one of the group's values
        if (!grp.adjacent || !chain_root_ok(*self, shape, /*member=*/true)) return -1;
        grp.root = self;
      } else if (grp.chain.back() != self) {  // only the latest link may be written again
        return -1;
      }
      add_to(id, n, step);
      grp.chain.push_back(n);
      return id;
    }
    if (!chain_root_ok(*self, shape, /*member=*/false)) return -1;
    // The first link: with the adjacent group of another argument, if any, else alone.
    int id = -1;
    for (Node* in : n->input_nodes()) {
      auto it = group_of.find(in);
      if (in == self || it == group_of.end()) continue;
      const Group& grp = groups[static_cast<size_t>(it->second)];
      if (grp.open && grp.chain.empty() && grp.adjacent && grp.last_step == step - 1 &&
          grp.nodes.front()->tensor_meta().sizes == shape) {
        id = it->second;
      }
    }
    if (id < 0) {
      groups.push_back(Group{});
      id = static_cast<int>(groups.size()) - 1;
    }
    add_to(id, n, step);
    groups[static_cast<size_t>(id)].root = self;
    groups[static_cast<size_t>(id)].chain.push_back(n);
    return id;
  };

  int64_t step = 0;  // call and getitem nodes seen: the unit of adjacency
  int open_chain = -1;  // the open group with a chain (one at most: a link closes the others)
  for (Node* n : nodes) {
    if (n->op() == NodeOp::kPlaceholder || n->op() == NodeOp::kConstant) continue;  // they read nothing
    ++step;
    int joined = -1;
    if (is_inplace_call(*n)) {
      joined = join_inplace(n, step);
      // Joined or not, it writes: other groups close, as at a barrier.
      for (size_t id = 0; id < groups.size(); ++id) {
        if (static_cast<int>(id) != joined) groups[id].open = false;
      }
      open_chain = joined;
      continue;
    }
    if (is_barrier(*n)) {
      for (Group& grp : groups) grp.open = false;
      open_chain = -1;
      continue;
    }
    if (is_fusable(*n)) {
      const SizeVec& shape = n->tensor_meta().sizes;
      std::vector<int> candidates;
      int chained = -1;  // a candidate with an in-place chain joins alone
      for (Node* in : n->input_nodes()) {
        auto it = group_of.find(in);
        if (it == group_of.end()) continue;
        const int id = it->second;
        const Group& grp = groups[static_cast<size_t>(id)];
        if (!grp.open || grp.nodes.front()->tensor_meta().sizes != shape ||
            std::find(candidates.begin(), candidates.end(), id) != candidates.end()) {
          continue;
        }
        if (!grp.chain.empty()) {
          if (grp.last_step == step - 1 && !stale(grp, *n)) chained = id;
          continue;
        }
        candidates.push_back(id);
      }
      if (chained >= 0) candidates = {chained};
      std::vector<int> chosen;
      if (!candidates.empty() && convex(members_of(candidates, n))) {
        chosen = candidates;
      } else {
        for (int id : candidates) {
          if (convex(members_of({id}, n))) {
            chosen = {id};
            break;
          }
        }
      }
      if (chosen.empty()) {
        groups.push_back(Group{});
        joined = static_cast<int>(groups.size()) - 1;
        add_to(joined, n, step);
      } else {
        joined = chosen[0];
        Group& into = groups[static_cast<size_t>(joined)];
        for (size_t k = 1; k < chosen.size(); ++k) {
          Group& from = groups[static_cast<size_t>(chosen[k])];
          for (Node* m : from.nodes) {
            into.nodes.push_back(m);
            group_of[m] = joined;
          }
          into.adjacent = false;  // merged groups interleave
          from.nodes.clear();
          from.open = false;
        }
        add_to(joined, n, step);
        std::sort(into.nodes.begin(), into.nodes.end(), [&](Node* a, Node* b) { return pos.at(a) < pos.at(b); });
      }
    }
    // A group with a chain takes no member after a node it did not take.
    if (open_chain >= 0 && open_chain != joined) {
      groups[static_cast<size_t>(open_chain)].open = false;
      open_chain = -1;
    }
  }

  std::vector<Group*> kept;
  absl::flat_hash_map<const Group*, Node*> matmul_of;
  for (Group& grp : groups) {
    if (grp.nodes.empty()) continue;
    Node* matmul = epilogue_matmul(grp.nodes, grp.chain, pos, nodes);
    if (matmul != nullptr) matmul_of[&grp] = matmul;
    if (grp.nodes.size() >= 2 || matmul != nullptr) kept.push_back(&grp);
  }
  std::sort(kept.begin(), kept.end(), [&](Group* a, Group* b) { return pos.at(a->nodes[0]) < pos.at(b->nodes[0]); });

  std::vector<FusionGroup> result;
  for (Group* grp : kept) {
    FusionGroup fg;
    auto matmul = matmul_of.find(grp);
    fg.matmul = matmul == matmul_of.end() ? nullptr : matmul->second;
    std::vector<Node*> named = grp->nodes;
    if (fg.matmul != nullptr) named.insert(named.begin(), fg.matmul);
    fg.name = group_name(named, static_cast<int64_t>(result.size()));
    fg.nodes = grp->nodes;
    const absl::flat_hash_set<const Node*> members(fg.nodes.begin(), fg.nodes.end());
    auto program = std::make_shared<FusedProgram>(fg.nodes.front()->tensor_meta().sizes);
    Lowerer lowerer{*program, fg.nodes.front()->tensor_meta().device};
    std::vector<int> out_regs;
    const absl::flat_hash_set<const Node*> chain(grp->chain.begin(), grp->chain.end());
    for (Node* m : fg.nodes) {
      const int reg = lowerer.lower(*m);
      const bool used_outside =
          std::any_of(m->users().begin(), m->users().end(), [&](const Node* u) { return !members.contains(u); });
      if (used_outside && !chain.contains(m) && m != grp->root) {  // a chain's links are its root (See Note [In-place fusion])
        fg.outputs.push_back(m);
        out_regs.push_back(reg);
      }
    }
    for (int reg : out_regs) program->add_output(reg);
    if (!grp->chain.empty()) {
      program->add_output(lowerer.regs.at(grp->chain.back()).reg);
      fg.inplace_root = grp->root;
      fg.inplace_chain = grp->chain;
      const auto root = std::find(lowerer.inputs.begin(), lowerer.inputs.end(), grp->root);
      if (root != lowerer.inputs.end()) fg.inplace_input = static_cast<int>(root - lowerer.inputs.begin());
    }
    if (fg.matmul != nullptr) {
      // The product's buffer becomes the first output of its dtype laid out as eager lays it out.
      for (size_t k = 0; k < fg.outputs.size() && fg.matmul_output < 0; ++k) {
        const TensorMeta& m = fg.outputs[k]->tensor_meta();
        if (m.dtype == fg.matmul->tensor_meta().dtype && is_contiguous_strides(m.sizes, m.strides)) {
          fg.matmul_output = static_cast<int>(k);
        }
      }
      const auto in = std::find(lowerer.inputs.begin(), lowerer.inputs.end(), fg.matmul);
      OPSPEC_INTERNAL_ASSERT(in != lowerer.inputs.end());  // a member reads it
      fg.matmul_input = static_cast<int>(in - lowerer.inputs.begin());
      if (fg.matmul_output < 0) {  // nothing to write over the product: only a group of two or more stays
        fg.matmul = nullptr;
        fg.matmul_input = -1;
        if (fg.nodes.size() < 2) continue;
        fg.name = group_name(fg.nodes, static_cast<int64_t>(result.size()));
      }
    }
    program->finalize();
    fg.inputs = std::move(lowerer.inputs);
    fg.program = std::move(program);
    fg.kernel = internal::make_fused_kernel(fg.nodes.front()->tensor_meta().device.type, fg.program, fg.name);
    result.push_back(std::move(fg));
  }
  return result;
}

}  // namespace opspec
