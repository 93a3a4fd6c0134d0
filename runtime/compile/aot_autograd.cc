// aot_autograd.cc: joint tracing, partitioning and the CompiledFunctionBackward
// node. See Note [AOT autograd] in aot_autograd.h.
#include "runtime/compile/aot_autograd.h"

#include <algorithm>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/engine.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/interpreter.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec::internal {
namespace {

// output_nodes: the nodes graph returns, in order (repeats kept).
std::vector<Node*> output_nodes(const Graph& g) {
  std::vector<Node*> out;
  for (const NodeArg& a : g.output()->args()) out.push_back(a.as_node());
  return out;
}

// Copier: copies nodes of a source graph into a new graph, mapping arguments.
struct Copier {
  Graph g;
  absl::flat_hash_map<const Node*, Node*> map;

  Node* placeholder_for(const Node* src, std::string_view name) {
    const OutputMeta& m = src->meta().at(0);
    OPSPEC_CHECK(m.has_value(), "aot_autograd: ", src->name(), " is not a tensor and cannot cross into backward");
    return map[src] = g.add_placeholder(name, *m);
  }
  NodeArg arg(const NodeArg& a) {
    if (a.is_value()) return a;
    if (a.is_node()) return NodeArg::node(map.at(a.as_node()));
    std::vector<Node*> ns;
    for (Node* x : a.as_node_list()) ns.push_back(x == nullptr ? nullptr : map.at(x));  // null: None
    return NodeArg::nodes(std::move(ns));
  }
  void copy(const Node* src) {
    switch (src->op()) {
      case NodeOp::kConstant: map[src] = g.add_constant(src->constant()); break;
      case NodeOp::kGetItem: map[src] = g.add_getitem(map.at(src->args()[0].as_node()), src->index()); break;
      case NodeOp::kCall: {
        std::vector<NodeArg> args;
        for (const NodeArg& a : src->args()) args.push_back(arg(a));
        map[src] = g.add_call(*src->target(), std::move(args), src->meta());
        break;
      }
      default: OPSPEC_INTERNAL_ASSERT(false);
    }
  }
};

// partition: PyTorch's default_partition of joint (placeholders: n_in
// primals, then tangents; results: n_out forward results, then gradients).
AotGraphs partition(std::shared_ptr<const Graph> joint, size_t n_in, size_t n_out, std::vector<size_t> grad_inputs,
                    std::vector<size_t> tangent_outputs) {
  const std::vector<Node*> nodes = joint->nodes();
  const std::vector<Node*> placeholders = joint->placeholders();
  const std::vector<Node*> results = output_nodes(*joint);
  // Tangent-dependent nodes belong to backward alone.
  absl::flat_hash_set<const Node*> from_tangents(placeholders.begin() + static_cast<std::ptrdiff_t>(n_in),
                                                 placeholders.end());
  for (const Node* n : nodes) {
    for (Node* in : n->input_nodes()) {
      if (from_tangents.contains(in)) from_tangents.insert(n);
    }
  }
  // Forward: what the forward results need, and every side effect (an
  // in-place update of an input or a view) that does not wait for a tangent.
  absl::flat_hash_set<const Node*> fwd;
  std::vector<const Node*> stack(results.begin(), results.begin() + static_cast<std::ptrdiff_t>(n_out));
  size_t last_mutation = 0;  // one past the last forward side effect, in graph order
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n->op() == NodeOp::kCall && is_impure(*n) && !from_tangents.contains(n)) {
      stack.push_back(n);
      last_mutation = i + 1;
    }
  }
  // The graph is not functionalized: a value the backward reads that was
  // computed before a forward side effect (an in-place op's saved self, cloned
  // before the op writes it) must be computed there, in the forward, and
  // saved; recomputed in the backward it would read the changed tensor.
  if (last_mutation > 0) {
    absl::flat_hash_map<const Node*, size_t> position;
    for (size_t i = 0; i < nodes.size(); ++i) position[nodes[i]] = i;
    absl::flat_hash_set<const Node*> seen;
    std::vector<const Node*> walk(results.begin() + static_cast<std::ptrdiff_t>(n_out), results.end());
    while (!walk.empty()) {
      const Node* n = walk.back();
      walk.pop_back();
      if (!seen.insert(n).second) continue;
      if (n->op() == NodeOp::kCall && !from_tangents.contains(n) && position.at(n) < last_mutation) {
        stack.push_back(n);
        continue;
      }
      for (Node* in : n->input_nodes()) walk.push_back(in);
    }
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    if (!fwd.insert(n).second) continue;
    for (Node* in : n->input_nodes()) stack.push_back(in);
  }
  for (size_t i = 0; i < n_in; ++i) fwd.insert(placeholders[i]);
  // An output of a forward op that only the backward reads (native_layer_norm's
  // mean and rstd) is selected in the forward and saved: a placeholder of the
  // backward graph holds one tensor, not the op's tuple.
  for (const Node* n : nodes) {
    if (n->op() == NodeOp::kGetItem && fwd.contains(n->args()[0].as_node())) fwd.insert(n);
  }
  // Backward: what the gradients need beyond the forward, and its side
  // effects (CopySlices writes a gradient into a view of its result).
  absl::flat_hash_set<const Node*> bwd;
  stack.assign(results.begin() + static_cast<std::ptrdiff_t>(n_out), results.end());
  for (const Node* n : nodes) {
    if (n->op() == NodeOp::kCall && is_impure(*n) && from_tangents.contains(n)) stack.push_back(n);
  }
  while (!stack.empty()) {
    const Node* n = stack.back();
    stack.pop_back();
    // A constant may serve both halves: each graph gets its own copy.
    if ((fwd.contains(n) && n->op() != NodeOp::kConstant) || !bwd.insert(n).second) continue;
    for (Node* in : n->input_nodes()) stack.push_back(in);
  }
  // Saved: forward values a backward node (or a gradient itself) reads, in graph order.
  absl::flat_hash_set<const Node*> saved_set;
  for (const Node* n : bwd) {
    for (Node* in : n->input_nodes()) {
      if (fwd.contains(in) && in->op() != NodeOp::kConstant) saved_set.insert(in);
    }
  }
  for (size_t i = n_out; i < results.size(); ++i) {
    if (fwd.contains(results[i]) && results[i]->op() != NodeOp::kConstant) saved_set.insert(results[i]);
  }
  std::vector<const Node*> saved;
  for (const Node* n : nodes) {
    if (saved_set.contains(n)) saved.push_back(n);
  }

  Copier f;
  for (size_t i = 0; i < n_in; ++i) f.placeholder_for(placeholders[i], placeholders[i]->name());
  for (const Node* n : nodes) {
    if (fwd.contains(n) && n->op() != NodeOp::kPlaceholder && n->op() != NodeOp::kOutput) f.copy(n);
  }
  std::vector<Node*> f_out;
  for (size_t i = 0; i < n_out; ++i) f_out.push_back(f.map.at(results[i]));
  for (const Node* s : saved) f_out.push_back(f.map.at(s));
  f.g.set_output(std::move(f_out));

  Copier b;
  for (const Node* s : saved) b.placeholder_for(s, s->op() == NodeOp::kPlaceholder ? s->name() : "saved_" + s->name());
  for (size_t i = n_in; i < placeholders.size(); ++i) b.placeholder_for(placeholders[i], placeholders[i]->name());
  for (const Node* n : nodes) {
    if (bwd.contains(n) && n->op() != NodeOp::kPlaceholder && n->op() != NodeOp::kOutput) b.copy(n);
  }
  std::vector<Node*> b_out;
  for (size_t i = n_out; i < results.size(); ++i) b_out.push_back(b.map.at(results[i]));
  b.g.set_output(std::move(b_out));

  AotGraphs out;
  out.joint = std::move(joint);
  out.forward = std::make_shared<const Graph>(std::move(f.g));
  out.backward = std::make_shared<const Graph>(std::move(b.g));
  out.num_outputs = n_out;
  out.num_saved = saved.size();
  out.grad_inputs = std::move(grad_inputs);
  out.tangent_outputs = std::move(tangent_outputs);
  return out;
}

// fake_like: a fake tensor with meta's sizes, strides, dtype and device (no data).
Tensor fake_like(FakeTensorMode& fake, const TensorMeta& m) {
  ModeGuard g(fake);
  return ops::empty_strided(m.sizes, m.strides, {.dtype = m.dtype, .device = m.device});
}

// CompiledFunctionBackward: the node of one call of a compiled graph: its
// backward runs the compiled backward graph on the saved values and the
// results' gradients (zeros where none flowed).
class CompiledFunctionBackward : public autograd::Node {
 public:
  CompiledFunctionBackward(CompiledGraph backward, const AotGraphs& graphs, std::vector<Tensor> saved,
                           std::vector<TensorMeta> result_metas)
      : backward_(std::move(backward)), grad_inputs_(graphs.grad_inputs), tangent_outputs_(graphs.tangent_outputs),
        result_metas_(std::move(result_metas)) {
    for (const Tensor& t : saved) saved_.emplace_back(t);
  }
  std::string name() const override { return "CompiledFunctionBackward"; }

  autograd::VariableList apply(autograd::VariableList&& grads) override {
    std::vector<Tensor> in;
    in.reserve(saved_.size() + tangent_outputs_.size());
    for (const autograd::SavedTensor& s : saved_) in.push_back(s.unpack(*this));
    for (size_t out : tangent_outputs_) {
      Tensor g = out < grads.size() ? grads[out] : Tensor();
      if (!g.defined()) {
        const TensorMeta& m = result_metas_.at(out);
        g = ops::zeros(m.sizes, {.dtype = m.dtype, .device = m.device});
      }
      in.push_back(std::move(g));
    }
    const std::vector<Tensor> computed = backward_(in);
    autograd::VariableList out(next_edges().size());
    for (size_t k = 0; k < computed.size() && k < grad_inputs_.size(); ++k) out[grad_inputs_[k]] = computed[k];
    return out;
  }
  void release_variables() override {
    for (autograd::SavedTensor& s : saved_) s.reset();
  }
  // save_output: saved value i is this node's output output_nr (self): kept
  // as a saved output, which holds the node weakly: saved as an input, the
  // output held its node and the node the output, a cycle that leaked
  // whenever backward never ran (as PyTorch's SavedVariable(is_output)).
  void save_output(size_t i, const Tensor& output, const std::shared_ptr<autograd::Node>& self, uint32_t output_nr) {
    saved_[i] = autograd::SavedTensor(output, self, output_nr);
  }

 private:
  CompiledGraph backward_;
  std::vector<size_t> grad_inputs_;
  std::vector<size_t> tangent_outputs_;
  std::vector<TensorMeta> result_metas_;
  std::vector<autograd::SavedTensor> saved_;
};

// AotCompiled: one pattern's compiled halves.
struct AotCompiled {
  AotGraphs graphs;
  CompiledGraph forward, backward;
  bool differentiable = true;  // false: no result depends on an input that requires grad
};

}  // namespace

// Note [Primals of non-leaf inputs]
// The joint trace makes each primal a leaf of its own, so gradients are taken
// with respect to the input's value on entry. Eager code may write a non-leaf
// that requires grad in place (its history is rebased), but not a leaf: for
// an input that is a non-leaf in the call, the primal is an untraced clone of
// such a leaf, so an in-place op on it is allowed and the gradient still
// reaches the leaf behind it (clone's backward is the identity, no op); the
// call then gives the written input the compiled node as its history.

AotGraphs trace_joint_and_partition(const Graph& graph, const std::vector<Tensor>& examples,
                                    const std::vector<bool>& needs_grad, const std::vector<bool>& non_leaf,
                                    bool grad_enabled) {
  FakeTensorMode fake;
  const size_t n_in = examples.size();
  std::vector<Tensor> inputs, leaves(n_in);
  for (size_t i = 0; i < n_in; ++i) {
    const Tensor f = fake.from_real(examples[i]);
    Tensor p = make_view(f, f.sizes(), f.strides(), f.storage_offset());  // a leaf of its own
    if (needs_grad[i]) p.requires_grad_();
    leaves[i] = p;
    if (needs_grad[i] && i < non_leaf.size() && non_leaf[i]) {  // See Note [Primals of non-leaf inputs]
      ModeGuard g(fake);
      p = ops::clone(p);
    }
    inputs.push_back(std::move(p));
  }
  // Tangents: one per floating result, like it in this call (a dynamic
  // graph's metadata holds the sizes it was captured with).
  std::vector<size_t> tangent_outputs;
  const std::vector<Node*> results = output_nodes(graph);
  std::vector<Tensor> probe;
  {
    ModeGuard g(fake);
    autograd::NoGradGuard no_grad;
    std::vector<Tensor> plain;
    for (size_t i = 0; i < n_in; ++i) plain.push_back(leaves[i].detach());
    probe = run_graph(graph, plain, {.check_sizes = false});
  }
  for (size_t k = 0; k < results.size() && k < probe.size(); ++k) {
    if (!probe[k].defined() || !is_floating(probe[k].dtype())) continue;
    tangent_outputs.push_back(k);
    inputs.push_back(fake_like(fake, TensorMeta::of(probe[k])));
  }
  std::vector<size_t> grad_inputs;
  std::vector<bool> differentiable;
  size_t n_out = 0;
  auto joint_fn = [&](const std::vector<Tensor>& in) {
    const std::vector<Tensor> primals(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(n_in));
    autograd::AutoGradMode grad_mode(grad_enabled);  // the graph's nodes change it as the program did
    std::vector<Tensor> outs = run_graph(graph, primals, {.check_sizes = false});
    n_out = outs.size();
    differentiable.clear();
    for (const Tensor& o : outs) differentiable.push_back(o.defined() && o.requires_grad());
    std::vector<Tensor> diff_outs, diff_tangents, wrt;
    for (size_t t = 0; t < tangent_outputs.size(); ++t) {
      const Tensor& o = outs[tangent_outputs[t]];
      if (o.requires_grad()) {
        diff_outs.push_back(o);
        diff_tangents.push_back(in[n_in + t]);
      }
    }
    std::vector<size_t> wrt_index;
    for (size_t i = 0; i < n_in; ++i) {
      // A non-leaf input's gradient is its leaf's (See Note [Primals of non-leaf inputs]).
      const bool from_leaf = i < non_leaf.size() && non_leaf[i];
      if (needs_grad[i]) wrt.push_back(from_leaf ? leaves[i] : primals[i]), wrt_index.push_back(i);
    }
    std::vector<Tensor> result = outs;
    if (!diff_outs.empty()) {
      const std::vector<Tensor> grads = autograd::grad(diff_outs, wrt, diff_tangents, /*retain_graph=*/false,
                                                       /*create_graph=*/false, /*allow_unused=*/true);
      for (size_t j = 0; j < grads.size(); ++j) {
        if (!grads[j].defined()) continue;
        grad_inputs.push_back(wrt_index[j]);
        result.push_back(grads[j]);
      }
    }
    return result;
  };
  std::vector<std::string> names;
  for (Node* p : graph.placeholders()) names.push_back(p->name());
  for (size_t k : tangent_outputs) names.push_back(str_cat("tangents_", k + 1));
  auto joint = std::make_shared<const Graph>(make_fx(joint_fn, {.input_names = names, .fake_mode = &fake})(inputs));
  AotGraphs graphs = partition(std::move(joint), n_in, n_out, std::move(grad_inputs), std::move(tangent_outputs));
  graphs.differentiable = std::move(differentiable);
  return graphs;
}

CompiledGraph with_aot_autograd(CompiledGraph inference, std::shared_ptr<const Graph> graph, Backend forward_backend,
                                Backend backward_backend, std::function<void(const AotGraphs&)> on_compile) {
  struct Cache {
    std::mutex mu;
    std::vector<std::pair<std::vector<int64_t>, std::shared_ptr<const AotCompiled>>> entries;  // key: pattern + sizes
  };
  auto cache = std::make_shared<Cache>();
  // A graph entered with grad mode off may turn it on (See Note [Grad mode nodes]).
  const std::vector<Node*> nodes = graph->nodes();
  const bool enables_grad = std::any_of(nodes.begin(), nodes.end(), [](const Node* n) {
    return sets_grad_mode(*n) && n->args()[0].as_value().to_bool();
  });
  std::shared_ptr<const GraphRunner> grad_nodes;  // the graph interpreted, when it has such nodes
  if (std::any_of(nodes.begin(), nodes.end(), [](const Node* n) { return sets_grad_mode(*n); })) {
    grad_nodes = std::make_shared<const GraphRunner>(*graph, RunGraphOptions{.check_sizes = false});
  }
  // no_grad_throughout(entry): entered in grad mode `entry`, the graph runs
  // every op with grad mode off and leaves it as entered (a no_grad block
  // around the whole graph: torch.optim's step). No gradient can then reach
  // an input, and the inference graph runs under no_grad, as eager would.
  auto no_grad_throughout = [&nodes](bool entry) {
    bool mode = entry;
    for (const Node* n : nodes) {
      if (sets_grad_mode(*n)) {
        mode = n->args()[0].as_value().to_bool();
      } else if (n->op() == NodeOp::kCall && mode) {
        return false;
      }
    }
    return mode == entry;
  };
  const bool no_grad_from_on = grad_nodes != nullptr && no_grad_throughout(true);  // once, not per call
  const bool no_grad_from_off = grad_nodes != nullptr && no_grad_throughout(false);
  return [=](const std::vector<Tensor>& inputs) -> std::vector<Tensor> {
    bool any = false;
    std::vector<bool> needs(inputs.size()), non_leaf(inputs.size());
    const bool grad_enabled = autograd::is_grad_enabled();
    if (grad_enabled || enables_grad) {
      for (size_t i = 0; i < inputs.size(); ++i) {
        needs[i] = inputs[i].defined() && autograd::requires_grad(inputs[i]);
        non_leaf[i] = needs[i] && !inputs[i].is_leaf();
        any = any || needs[i];
      }
    }
    if (!any) return inference(inputs);
    if (grad_enabled ? no_grad_from_on : no_grad_from_off) {
      autograd::NoGradGuard no_grad;
      return inference(inputs);
    }
    std::vector<int64_t> key{grad_enabled ? 1 : 0};
    for (size_t i = 0; i < inputs.size(); ++i) {
      key.push_back(non_leaf[i] ? -3 : needs[i] ? -1 : -2);
      if (inputs[i].defined()) key.insert(key.end(), inputs[i].sizes().begin(), inputs[i].sizes().end());
    }
    std::shared_ptr<const AotCompiled> aot;
    {
      std::lock_guard<std::mutex> lock(cache->mu);
      for (const auto& [k, c] : cache->entries) {
        if (k == key) aot = c;
      }
      if (aot == nullptr) {
        // Tracing runs ops on fake tensors: the user's modes must not see them
        // (See Note [Modes around a compiled call] in capture.cc).
        HideUserModesGuard hide;
        FakeTensorMode fake;
        std::vector<Tensor> examples;
        for (const Tensor& t : inputs) examples.push_back(fake.from_real(t));
        auto made = std::make_shared<AotCompiled>();
        made->graphs = trace_joint_and_partition(*graph, examples, needs, non_leaf, grad_enabled);
        made->differentiable = !made->graphs.grad_inputs.empty();
        made->forward = forward_backend(*made->graphs.forward, examples);
        std::vector<Tensor> bwd_examples;
        for (Node* p : made->graphs.backward->placeholders()) {
          bwd_examples.push_back(fake_like(fake, p->tensor_meta()));
        }
        made->backward = backward_backend(*made->graphs.backward, bwd_examples);
        if (on_compile) on_compile(made->graphs);
        cache->entries.emplace_back(key, made);
        aot = made;
      }
    }
    // No gradient reaches an input: the graph runs as eager code would, its
    // ops recording what autograd records (an in-place write of a non-leaf).
    // A graph with grad mode nodes runs interpreted: a backend's inference
    // graph may have been re-traced without them (aot_eager).
    if (!aot->differentiable) return grad_nodes != nullptr ? (*grad_nodes)(inputs) : inference(inputs);
    std::vector<Tensor> all;
    {
      ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
      all = aot->forward(inputs);
    }
    const AotGraphs& g = aot->graphs;
    std::vector<Tensor> outs(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(g.num_outputs));
    std::vector<Tensor> saved(all.begin() + static_cast<std::ptrdiff_t>(g.num_outputs), all.end());
    std::vector<TensorMeta> metas;
    for (const Tensor& o : outs) metas.push_back(o.defined() ? TensorMeta::of(o) : TensorMeta{});
    auto node = std::make_shared<CompiledFunctionBackward>(aot->backward, g, saved, std::move(metas));
    for (size_t i = 0; i < inputs.size(); ++i) {
      node->add_next_edge(needs[i] ? autograd::gradient_edge(inputs[i]) : autograd::Edge{});
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      Tensor& o = outs[k];
      if (o.defined() && is_floating(o.dtype()) && g.differentiable[k]) {
        autograd::set_history(o, node);
      } else if (o.defined()) {
        node->add_input_metadata(o);  // keeps the results' numbering
      }
    }
    for (size_t s = 0; s < saved.size(); ++s) {
      for (size_t k = 0; k < outs.size(); ++k) {
        if (saved[s].defined() && saved[s].is_same(outs[k]) && outs[k].grad_fn() == node) {
          node->save_output(s, outs[k], node, autograd::meta_of(outs[k])->output_nr);
          break;
        }
      }
    }
    return outs;
  };
}

}  // namespace opspec::internal
