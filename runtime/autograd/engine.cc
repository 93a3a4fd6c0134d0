// engine.cc: See Note [Engine order] in engine.h.
#include "runtime/autograd/engine.h"

#include <queue>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/autograd/accumulate_grad.h"
#include "runtime/autograd/autograd_meta.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd {
namespace {

// GraphRoot: hands the seeds to several roots (one root takes its seed directly).
class GraphRoot : public Node {
 public:
  GraphRoot(const std::vector<Edge>& roots, VariableList seeds) : seeds_(std::move(seeds)) {
    for (const Edge& e : roots) add_next_edge(e);
  }
  std::string name() const override { return "GraphRoot"; }
  VariableList apply(VariableList&&) override { return seeds_; }

 private:
  VariableList seeds_;
};

// can_accumulate_inplace: v is held by the buffer alone, storage included.
bool can_accumulate_inplace(const Tensor& v) {
  return v.impl()->use_count() == 1 && v.impl()->storage_unshared() && is_non_overlapping_and_dense(v);
}

// accumulate: buffer slot += v, as PyTorch's InputBuffer does.
void accumulate(Tensor& slot, Tensor&& v) {
  if (!v.defined()) return;
  if (!slot.defined()) {
    slot = std::move(v);
  } else if (!is_grad_enabled() && can_accumulate_inplace(slot)) {
    ops::add_(slot, v);
  } else {
    slot = ops::add(slot, v);
  }
}

bool expandable_to(IntArrayRef shape, IntArrayRef desired) {
  if (shape.size() > desired.size()) return false;
  for (size_t i = 0; i < shape.size(); ++i) {
    const int64_t s = shape[shape.size() - 1 - i], d = desired[desired.size() - 1 - i];
    if (s != d && s != 1) return false;
  }
  return true;
}

}  // namespace

namespace internal {
Tensor sum_to_size(const Tensor& t, IntArrayRef shape) {
  if (shape.empty()) return ops::sum(t);
  const int64_t leading = t.dim() - static_cast<int64_t>(shape.size());
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < leading; ++i) dims.push_back(i);
  for (int64_t i = leading; i < t.dim(); ++i) {
    if (shape[static_cast<size_t>(i - leading)] == 1 && t.size(i) != 1) dims.push_back(i);
  }
  Tensor r = t;
  if (!dims.empty()) r = ops::sum(r, dims, /*keepdim=*/true);
  if (leading > 0) r = ops::view(r, shape);
  return r;
}
}  // namespace internal

namespace {

// validate_outputs: each gradient reduced and cast to what its edge expects
// (name: the function that made them, for the messages).
void validate_outputs(absl::Span<const Edge> edges, VariableList& grads, std::string_view name) {
  if (grads.size() != edges.size()) {
    throw Error(str_cat("Function ", name, " returned an invalid number of gradients - expected ", edges.size(),
                        ", but got ", grads.size()));
  }
  for (size_t i = 0; i < grads.size(); ++i) {
    if (!edges[i].valid() || !grads[i].defined()) continue;
    const InputMetadata& m = edges[i].function->input_metadata().at(edges[i].input_nr);
    Tensor& g = grads[i];
    if (!std::equal(g.sizes().begin(), g.sizes().end(), m.sizes.begin(), m.sizes.end())) {
      OPSPEC_CHECK(expandable_to(m.sizes, g.sizes()), "Function ", name,
                   " returned an invalid gradient at index ", i, " - got ", format_sizes(g.sizes()),
                   " but expected shape compatible with ", format_sizes(m.sizes));
      g = internal::sum_to_size(g, m.sizes);
    }
    if (g.dtype() != m.dtype) g = ops::to(g, m.dtype);
    OPSPEC_CHECK(g.device() == m.device, "Function ", name, " returned an invalid gradient at index ", i,
                 " - expected device ", m.device.str(), " but got ", g.device().str());
  }
}

struct NodeTask {
  Node* node;
  bool operator<(const NodeTask& o) const { return node->sequence_nr() < o.node->sequence_nr(); }
};

// GraphTask: one run of the engine.
struct GraphTask {
  bool keep_graph = false;
  bool accumulate_grad = true;
  absl::flat_hash_map<Node*, int> dependencies;
  absl::flat_hash_map<Node*, VariableList> buffers;
  // grad(): which (node, input) each result is read from, and the nodes on a path to one.
  absl::flat_hash_map<Node*, std::vector<std::pair<uint32_t, size_t>>> captures;
  absl::flat_hash_set<Node*> needed;
  VariableList captured;
};

// compute_dependencies: counts edges into each node reachable from root; with
// captures, also marks the nodes from which some capture can be reached.
void compute_dependencies(Node* root, GraphTask& task) {
  std::vector<Node*> stack{root};
  absl::flat_hash_set<Node*> seen{root};
  std::vector<Node*> order;  // the nodes in the order first reached (walked backwards below)
  while (!stack.empty()) {
    Node* n = stack.back();
    stack.pop_back();
    order.push_back(n);
    for (const Edge& e : n->next_edges()) {
      if (!e.valid()) continue;
      Node* next = e.function.get();
      ++task.dependencies[next];
      if (seen.insert(next).second) stack.push_back(next);
    }
  }
  if (task.captures.empty()) return;
  // Needed: a capture target, or a node with an edge to a needed one. Iterate to a fixed point
  // (graphs are DAGs; reverse pre-order visits most children first, so this converges fast).
  for (bool changed = true; changed;) {
    changed = false;
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      Node* n = *it;
      if (task.needed.contains(n)) continue;
      bool need = task.captures.contains(n);
      for (const Edge& e : n->next_edges()) need = need || (e.valid() && task.needed.contains(e.function.get()));
      if (need) task.needed.insert(n), changed = true;
    }
  }
}

void execute(const std::vector<Edge>& roots, VariableList seeds, GraphTask& task) {
  // The formulas are C++ calls: a function mode (TorchFunctionMode) sees
  // backward() and its seeds, never the ops the engine runs, as in PyTorch.
  ExcludeDispatchKeyGuard no_function_modes(DispatchKey::kFunctionMode);
  std::shared_ptr<Node> graph_root;
  Node* root = nullptr;
  if (roots.size() == 1) {
    root = roots[0].function.get();
  } else {
    graph_root = std::make_shared<GraphRoot>(roots, std::move(seeds));
    root = graph_root.get();
  }
  compute_dependencies(root, task);
  std::priority_queue<NodeTask> ready;
  if (graph_root) {
    ready.push({root});
  } else {
    VariableList& buf = task.buffers[root];
    buf.resize(root->num_inputs());
    accumulate(buf[roots[0].input_nr], std::move(seeds[0]));
    if (task.dependencies[root] == 0) ready.push({root});
  }
  while (!ready.empty()) {
    Node* node = ready.top().node;
    ready.pop();
    VariableList inputs;
    if (auto it = task.buffers.find(node); it != task.buffers.end()) {
      inputs = std::move(it->second);
      task.buffers.erase(it);
    }
    inputs.resize(node->num_inputs());
    if (auto it = task.captures.find(node); it != task.captures.end()) {
      for (const auto& [input_nr, result] : it->second) task.captured[result] = inputs[input_nr];
    }
    for (auto& [input_nr, weak] : node->retain_grad_slots()) {
      std::shared_ptr<Tensor> slot = weak.lock();
      const Tensor& g = inputs[input_nr];
      if (slot == nullptr || !g.defined()) continue;
      // PyTorch's retain_grad hook copies the first gradient row-major.
      *slot = slot->defined() ? ops::add(*slot, g) : ops::clone(g, MemoryFormat::kContiguous);
    }
    if (!task.captures.empty() && !task.needed.contains(node)) continue;
    if (!task.accumulate_grad && dynamic_cast<AccumulateGrad*>(node) != nullptr) continue;
    VariableList outputs = node->apply(std::move(inputs));
    if (node != graph_root.get()) validate_outputs(node->next_edges(), outputs, node->name());
    if (!task.keep_graph) node->release_variables();
    const Node::EdgeList& edges = node->next_edges();
    for (size_t i = 0; i < outputs.size() && i < edges.size(); ++i) {
      if (!edges[i].valid()) continue;
      Node* next = edges[i].function.get();
      VariableList& buf = task.buffers[next];
      if (buf.size() < next->num_inputs()) buf.resize(next->num_inputs());
      accumulate(buf[edges[i].input_nr], std::move(outputs[i]));
      if (--task.dependencies[next] == 0) ready.push({next});
    }
  }
}

// make_seeds: grad_tensors, or ones_like for one-element roots (torch.autograd's _make_grads).
VariableList make_seeds(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grads) {
  OPSPEC_CHECK(grads.empty() || grads.size() == tensors.size(), "backward: got ", grads.size(), " gradients for ",
               tensors.size(), " tensors");
  VariableList seeds;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (i < grads.size() && grads[i].defined()) {
      const Tensor& g = grads[i];
      OPSPEC_CHECK(std::equal(g.sizes().begin(), g.sizes().end(), t.sizes().begin(), t.sizes().end()),
                   "Mismatch in shape: grad_output[", i, "] has a shape of torch.Size(", format_sizes(g.sizes()),
                   ") and output[", i, "] has a shape of torch.Size(", format_sizes(t.sizes()), ").");
      seeds.push_back(g);
      continue;
    }
    OPSPEC_CHECK(t.numel() == 1, "grad can be implicitly created only for scalar outputs");
    OPSPEC_CHECK(t.is_floating_point(), "grad can be implicitly created only for real scalar outputs but got ",
                 dtype_short_name(t.dtype()));
    seeds.push_back(ops::ones_like(t));
  }
  return seeds;
}

std::vector<Edge> root_edges(const std::vector<Tensor>& tensors) {
  std::vector<Edge> roots;
  for (size_t i = 0; i < tensors.size(); ++i) {
    OPSPEC_CHECK(tensors[i].defined() && requires_grad(tensors[i]), "element ", i,
                 " of tensors does not require grad and does not have a grad_fn");
    roots.push_back(gradient_edge(tensors[i]));
    // A view taken under no_grad requires grad yet has nowhere to send it: PyTorch's check of the edge.
    OPSPEC_CHECK(roots.back().valid(), "element ", i, " of tensors does not require grad and does not have a grad_fn");
  }
  return roots;
}

// validate_seeds: the seeds checked and reduced like a node's outputs.
void validate_seeds(const std::vector<Edge>& roots, VariableList& seeds) { validate_outputs(roots, seeds, "GraphRoot"); }

}  // namespace

}  // namespace opspec::autograd

namespace opspec::internal {
BackwardHook& tls_backward_hook() {
  thread_local BackwardHook hook = nullptr;
  return hook;
}
}  // namespace opspec::internal

namespace opspec::autograd {

namespace {
// HookScope: tells the thread's BackwardHook that backward starts and ends.
struct HookScope {
  opspec::internal::BackwardHook hook = opspec::internal::tls_backward_hook();
  HookScope() {
    if (hook != nullptr) hook(true);
  }
  ~HookScope() {
    if (hook != nullptr) hook(false);
  }
};
}  // namespace

void backward(const std::vector<Tensor>& tensors, const std::vector<Tensor>& grad_tensors,
              std::optional<bool> retain_graph, bool create_graph) {
  OPSPEC_CHECK(!tensors.empty(), "backward: no tensors given");
  HookScope hook;
  const std::vector<Edge> roots = root_edges(tensors);
  VariableList seeds = make_seeds(tensors, grad_tensors);
  AutoGradMode mode(create_graph);
  validate_seeds(roots, seeds);
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  execute(roots, std::move(seeds), task);
}

std::vector<Tensor> grad(const std::vector<Tensor>& outputs, const std::vector<Tensor>& inputs,
                         const std::vector<Tensor>& grad_outputs, std::optional<bool> retain_graph,
                         bool create_graph, bool allow_unused) {
  OPSPEC_CHECK(!inputs.empty(), "grad requires non-empty inputs.");
  OPSPEC_CHECK(!outputs.empty(), "grad requires non-empty outputs.");
  HookScope hook;
  const std::vector<Edge> roots = root_edges(outputs);
  GraphTask task;
  task.keep_graph = retain_graph.value_or(create_graph);
  task.accumulate_grad = false;
  task.captured.resize(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    OPSPEC_CHECK(inputs[i].defined() && requires_grad(inputs[i]), "One of the differentiated Tensors does not require grad");
    const Edge e = gradient_edge(inputs[i]);
    task.captures[e.function.get()].push_back({e.input_nr, i});
  }
  VariableList seeds = make_seeds(outputs, grad_outputs);
  AutoGradMode mode(create_graph);
  validate_seeds(roots, seeds);
  // Keep the accumulators of leaf inputs alive for the run (the graph holds them weakly otherwise).
  std::vector<Edge> input_edges;
  for (const Tensor& t : inputs) input_edges.push_back(gradient_edge(t));
  execute(roots, std::move(seeds), task);
  for (const Tensor& g : task.captured) {
    OPSPEC_CHECK(allow_unused || g.defined(),
                 "One of the differentiated Tensors appears to not have been used in the graph. Set "
                 "allow_unused=True if this is the desired behavior.");
  }
  return std::move(task.captured);
}

}  // namespace opspec::autograd
