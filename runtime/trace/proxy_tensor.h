// proxy_tensor.h: ProxyTensorMode, the mode that records every op it sees
// into a Graph (PyTorch's ProxyTorchDispatchMode), and DecompositionMode,
// which applies a decomposition table above it. make_fx (make_fx.h) drives both.
#pragma once

#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "runtime/dispatch/mode.h"
#include "runtime/graph/graph.h"
#include "runtime/trace/decomposition_table.h"

namespace opspec {

// Note [Proxy tracing]
// Tensors are not wrapped: the mode keeps a record from each traced tensor to
// the node that produced it (See Note [Trace slots]), which is what makes
// "the same tensor used twice" one node. For every op call it builds the
// node's arguments from that map (a tensor it never saw is a constant the
// program closed over and becomes a constant node; wrapped numbers stay
// plain values), runs the rest of the chain (the fake mode, or real
// kernels), records the call with the results' metadata and maps the results
// to the new node. An in-place op's result is its argument, so later uses of
// that tensor refer to the in-place node, keeping mutations ordered. At the
// Python key (the default) it sees ops after decomposition; at PreDispatch it
// sees them as called (`linear`), and its own handler runs with it popped,
// so the parts of a composite are not recorded twice. An op with an entry in
// the decomposition table is not recorded: its decomposition runs with the
// mode active, so its parts are (PyTorch's proxy_call does the same). Ops
// the mode never sees cannot be decomposed by the table: at the Python key
// these are composites, which the runtime has already decomposed.

// ProxyTensorMode: records the ops it sees into graph (which must outlive it).
class ProxyTensorMode : public DispatchMode {
 public:
  // key: DispatchKey::kPython (after decomposition) or kPreDispatch (before).
  // decompositions (optional, must outlive the mode) are applied as described above.
  ProxyTensorMode(Graph& graph, DispatchKey key, const DecompositionTable* decompositions = nullptr);

  bool dispatch(OpCall& call) override;
  DispatchKey key() const override { return key_; }
  ModeKind kind() const override { return ModeKind::kProxy; }
  std::string_view name() const override { return "ProxyTensorMode"; }

  // track: makes node the producer of t (inputs become placeholders this way).
  void track(const Tensor& t, Node* node);
  // node_of: the node that produced t, or null if t was never seen.
  Node* node_of(const Tensor& t) const {
    // Inline for the usual tensor, whose slot this mode owns (Note [Trace slots]).
    if (t.defined() && t.impl()->trace_owner().load(std::memory_order_relaxed) == owner_) {
      return slots_[t.impl()->trace_index()];
    }
    return node_of_untracked_slot(t);
  }
  // node_or_constant: node_of(t), or the node on_untracked makes for t.
  Node* node_or_constant(const Tensor& t);
  // forget: drops every tensor -> node mapping (a new graph starts).
  void forget();
  // reserve_tracking: room for n tracked tensors, so a graph of known size
  // is tracked without growing its table step by step.
  void reserve_tracking(size_t n) { slots_.reserve(n); }
  // sync_grad_mode: at PreDispatch, records a _set_grad_enabled node when the
  // thread's grad mode is not the one the graph's ops ran under so far; the
  // first call only notes the mode (See Note [Grad mode nodes]). make_fx calls
  // it before and after the traced function, dispatch() before each op.
  void sync_grad_mode();

 protected:
  Graph& graph() { return graph_; }
  // on_untracked: the node for a tensor the mode never saw: by default a
  // constant holding it (make_fx); the compiler makes it a graph input.
  virtual Node* on_untracked(const Tensor& t);
  // set_error_prefix: what errors of traced ops start with ("make_fx").
  void set_error_prefix(std::string prefix) { error_prefix_ = std::move(prefix); }
  // node_args: the arguments of a call node for an op's argument stack
  // (tensors the mode never saw go through on_untracked).
  std::vector<NodeArg> node_args(const Stack& stack);
  // record_call: adds the call of op with args, its results' metadata taken
  // from results, and makes the new node (or its getitems) their producer.
  void record_call(const OperatorHandle& op, std::vector<NodeArg> args, const Stack& results);
  // track_new: track() for a tensor this thread has just made and no other
  // thread can reach yet: its free slot is claimed without a compare-and-swap.
  void track_new(const Tensor& t, Node* node);
  // release_slot: gives t's slot back if this mode holds it, so that a later
  // graph or tracer can claim it (Note [Trace slots]); t must not be asked
  // about again before forget().
  void release_slot(const Tensor& t);
  // remap_nodes: every tracked tensor's producer n becomes f(n).
  void remap_nodes(absl::FunctionRef<Node*(Node*)> f);
  // rethrow_with_context: rethrows the current exception, keeping its type,
  // with the op and the user's call site in front of its message.
  [[noreturn]] void rethrow_with_context(const OperatorHandle& op);
  // record_grad_mode: appends the node that sets grad mode to enabled.
  void record_grad_mode(bool enabled);

  // graph_grad_mode_: the grad mode the graph's latest ops ran under (See
  // Note [Grad mode nodes]); unset until noted.
  std::optional<bool> graph_grad_mode_;

 private:
  NodeArg to_node_arg(const Value& v);
  // node_of_untracked_slot: node_of for a tensor whose slot another tracer owns (or none).
  Node* node_of_untracked_slot(const Tensor& t) const;

  Graph& graph_;
  DispatchKey key_;
  const DecompositionTable* decompositions_;
  std::string error_prefix_ = "make_fx";
  // See Note [Trace slots]: the producers of tensors whose slot this mode
  // owns (by slot index), and of the others (by tensor uid).
  uint64_t owner_;
  std::vector<Node*> slots_;
  absl::flat_hash_map<uint64_t, Node*> nodes_;
};

}  // namespace opspec
