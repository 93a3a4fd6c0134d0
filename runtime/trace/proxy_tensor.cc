#include "runtime/trace/proxy_tensor.h"

#include <atomic>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/core/call_site.h"
#include "runtime/core/error.h"
#include "runtime/core/grad_mode.h"
#include "runtime/core/internal/unique_id.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/op_table.h"

namespace opspec {
namespace {

// The error of an op under tracing, prefixed with the op and the user's call
// site once (an op inside a decomposition names itself, not its caller).
std::string with_context(std::string_view tool, const OperatorHandle& op, std::string_view message) {
  const std::string prefix = str_cat(tool, ": while tracing ");
  if (message.substr(0, prefix.size()) == prefix) return std::string(message);
  std::string out = str_cat(prefix, op.name());
  if (const std::source_location* site = current_call_site()) {
    std::string_view file = site->file_name();
    if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
    str_append(&out, " (called from ", file, ":", site->line(), ")");
  }
  str_append(&out, ": ", message);
  return out;
}

// Note [Trace slots]
// Tracing asks "which node produced this tensor?" for every tensor argument
// and answers it anew for every result. A hash map from tensor uid (an
// address can be reused once a tensor dies) costs a hash, a probe and, for a
// fresh tensor, a uid; so each TensorImpl has one slot a tracer may claim:
// an owner word (0 while free) and an index into that tracer's table of
// producers. A tracer claims a free slot with a compare-and-swap (a tensor
// may be shared by threads tracing at once), finds its own slots by
// comparing one word, and keeps tensors whose slot another tracer owns in
// its map, so nested tracers (make_fx around a compiled function) each see
// their own records. Owner words are never reused: each tracer, and each
// graph it starts (forget()), takes a fresh one, so a stale slot can only
// look foreign. A tracer may give a slot back (release_slot) once it will not
// ask about the tensor again: the compiler does so for a graph's inputs, which
// every warm call tracks anew; a slot never given back keeps later tracers on
// the map for that tensor, which is correct, only slower. Giving back is a
// release store and claiming an acquiring compare-and-swap, so the index
// written by the old owner happens before the new owner's.

// next_owner: a fresh, nonzero owner word.
uint64_t next_owner() {
  struct TracerOwners;
  return internal::next_unique_id<TracerOwners>();
}

}  // namespace

ProxyTensorMode::ProxyTensorMode(Graph& graph, DispatchKey key, const DecompositionTable* decompositions)
    : graph_(graph), key_(key), decompositions_(decompositions), owner_(next_owner()) {
  OPSPEC_CHECK(key == DispatchKey::kPython || key == DispatchKey::kPreDispatch,
               "ProxyTensorMode: traces at the Python or PreDispatch key, not ", dispatch_key_name(key));
}

void ProxyTensorMode::track(const Tensor& t, Node* node) {
  OPSPEC_CHECK(t.defined(), "ProxyTensorMode::track: tensor is undefined");
  const TensorImpl& impl = *t.impl();
  uint64_t owner = impl.trace_owner().load(std::memory_order_relaxed);
  if (owner == owner_) {
    slots_[impl.trace_index()] = node;
    return;
  }
  if (owner == 0 && slots_.size() < UINT32_MAX &&
      impl.trace_owner().compare_exchange_strong(owner, owner_, std::memory_order_acquire,
                                                 std::memory_order_relaxed)) {
    impl.trace_index() = static_cast<uint32_t>(slots_.size());
    slots_.push_back(node);
    return;
  }
  nodes_[impl.uid()] = node;
}

void ProxyTensorMode::track_new(const Tensor& t, Node* node) {
  const TensorImpl& impl = *t.impl();
  // A locked compare-and-swap on every fresh result was a visible part of replaying a capture.
  if (impl.trace_owner().load(std::memory_order_relaxed) == 0 && slots_.size() < UINT32_MAX) {
    impl.trace_owner().store(owner_, std::memory_order_relaxed);
    impl.trace_index() = static_cast<uint32_t>(slots_.size());
    slots_.push_back(node);
    return;
  }
  track(t, node);
}

Node* ProxyTensorMode::node_of_untracked_slot(const Tensor& t) const {
  if (!t.defined() || nodes_.empty()) return nullptr;
  auto it = nodes_.find(t.impl()->uid());
  return it == nodes_.end() ? nullptr : it->second;
}

void ProxyTensorMode::release_slot(const Tensor& t) {
  if (!t.defined()) return;
  std::atomic<uint64_t>& owner = t.impl()->trace_owner();
  if (owner.load(std::memory_order_relaxed) == owner_) owner.store(0, std::memory_order_release);
}

void ProxyTensorMode::forget() {
  nodes_.clear();
  slots_.clear();
  owner_ = next_owner();  // every slot this mode claimed is stale now
}

Node* ProxyTensorMode::node_or_constant(const Tensor& t) {
  if (Node* node = node_of(t)) return node;
  Node* made = on_untracked(t);
  track(t, made);
  return made;
}

Node* ProxyTensorMode::on_untracked(const Tensor& t) { return graph_.add_constant(t); }

NodeArg ProxyTensorMode::to_node_arg(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return NodeArg::value(Value());
    // `x + 1.0` records 1.0; a wrapped number that is a graph input (a hole of
    // Note [Values read with item()]) stays that input.
    if (t.is_wrapped_number() && node_of(t) == nullptr) return NodeArg::value(v);
    return NodeArg::node(node_or_constant(t));
  }
  if (v.is_tensor_list()) {
    std::vector<Node*> nodes;
    // An undefined entry is None of a Tensor?[] list (See Note [Optional tensor lists]).
    for (const Tensor& t : v.to_tensor_list()) nodes.push_back(t.defined() ? node_or_constant(t) : nullptr);
    return NodeArg::nodes(std::move(nodes));
  }
  return NodeArg::value(v);
}

void ProxyTensorMode::rethrow_with_context(const OperatorHandle& op) {
  // Keep the exception's type: callers (the compiler) tell a missing meta
  // kernel or a data-dependent op apart from a user error by it.
  try {
    throw;
  } catch (const NoMetaKernelError& e) {
    throw NoMetaKernelError(with_context(error_prefix_, op, e.what()));
  } catch (const NotImplementedError& e) {
    throw NotImplementedError(with_context(error_prefix_, op, e.what()));
  } catch (const DataDependentOutputError& e) {
    throw DataDependentOutputError(with_context(error_prefix_, op, e.what()));
  } catch (const Error& e) {
    throw Error(with_context(error_prefix_, op, e.what()));
  }
}

// Note [Grad mode nodes]
// A graph holds the grad mode changes of the program it traced, as Dynamo's
// and pre-dispatch make_fx's graphs hold torch._C._set_grad_enabled calls:
// a `torch._C::_set_grad_enabled(False)` node (an op with no result, so no
// pass removes or moves it: is_impure) before the first op whose mode differs
// from the mode so far, and one restoring the mode the program goes on in
// after the last op. C++ guards are not ops, so a tracer notes the mode at
// each op (one thread-local read) instead of seeing the guard. A graph
// records absolute modes and is entered in the mode its tracing started in
// (make_fx's call; for the compiler, the call's for its first graph); a
// graph without nodes is independent of the mode. Running a graph runs the
// nodes (the op's composite kernel sets the mode), and run_graph and the
// fused backend restore the caller's mode afterwards. So ops of a no_grad
// block record no history, and AOT autograd's joint trace, which runs the
// graph under autograd in its entry mode, takes no gradient through them.
// At the Python key a tracer records nothing: the mode decides what autograd
// records above it, as in PyTorch's make_fx.

void ProxyTensorMode::sync_grad_mode() {
  const bool grad = autograd::is_grad_enabled();
  if (graph_grad_mode_ == grad) return;
  if (graph_grad_mode_.has_value()) record_grad_mode(grad);
  graph_grad_mode_ = grad;
}

void ProxyTensorMode::record_grad_mode(bool enabled) {
  graph_.add_call(builtin_op(OpId::_set_grad_enabled), {NodeArg::value(Value(enabled))}, {});
}

bool ProxyTensorMode::dispatch(OpCall& call) {
  const OperatorHandle& op = call.op();
  if (key_ == DispatchKey::kPreDispatch) {
    // A graph run under the tracer sets the mode through the op: the next
    // op notes the change, as for a C++ guard.
    if (&op == &builtin_op(OpId::_set_grad_enabled)) {
      call.proceed();
      return true;
    }
    sync_grad_mode();
  }
  if (decompositions_ != nullptr && decompositions_->contains(op)) {
    ModeGuard reenter(*this);  // the decomposition's ops are traced
    try {
      decompositions_->apply(op, call.stack());
    } catch (...) {
      rethrow_with_context(op);
    }
    return true;
  }
  std::vector<NodeArg> args = node_args(call.stack());
  // PyTorch's proxy mode traces lift_fresh as lift_fresh_copy: the graph
  // copies its constant, so running it twice cannot alias the data.
  if (&op == &builtin_op(OpId::lift_fresh)) {
    const OperatorHandle& copy = builtin_op(OpId::lift_fresh_copy);
    try {
      Tensor out = Dispatcher::singleton().call<Tensor, const Tensor&>(copy, call.stack().at(0).to_tensor());
      call.stack().clear();
      call.stack().emplace_back(std::move(out));
    } catch (...) {
      rethrow_with_context(copy);
    }
    record_call(copy, std::move(args), call.stack());
    return true;
  }
  try {
    call.proceed();
  } catch (...) {
    rethrow_with_context(op);
  }
  record_call(op, std::move(args), call.stack());
  return true;
}

std::vector<NodeArg> ProxyTensorMode::node_args(const Stack& stack) {
  std::vector<NodeArg> args;
  args.reserve(stack.size());
  for (const Value& v : stack) args.push_back(to_node_arg(v));
  return args;
}

void ProxyTensorMode::record_call(const OperatorHandle& op, std::vector<NodeArg> args, const Stack& results) {
  // Note [List results in graphs]
  // A Tensor[] result (split's) is one output per element, as FX's
  // `split = aten.split.Tensor(x, 2); getitem = split[0]`: one metadata entry
  // each and a getitem for each, even a list of one, so a call node of a
  // list-returning op is never itself a tensor. Runners flatten the list the
  // same way (dispatch_node in runtime/graph/interpreter.cc).
  if (results.size() == 1 && results[0].is_tensor_list()) {
    const std::vector<Tensor>& list = results[0].to_tensor_list();
    std::vector<OutputMeta> metas;
    metas.reserve(list.size());
    for (const Tensor& t : list) metas.emplace_back(TensorMeta::of(t));
    Node* node = graph_.add_call(op, std::move(args), std::move(metas));
    for (size_t i = 0; i < list.size(); ++i) track(list[i], graph_.add_getitem(node, static_cast<int64_t>(i)));
    return;
  }
  std::vector<OutputMeta> meta;
  meta.reserve(results.size());
  for (const Value& r : results) {
    if (r.is_tensor() && r.to_tensor().defined()) {
      meta.emplace_back(TensorMeta::of(r.to_tensor()));
    } else {
      meta.emplace_back(std::nullopt);
    }
  }
  Node* node = graph_.add_call(op, std::move(args), std::move(meta));
  if (results.size() == 1) {
    if (results[0].is_tensor() && results[0].to_tensor().defined()) track(results[0].to_tensor(), node);
    return;
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (results[i].is_tensor() && results[i].to_tensor().defined()) {
      track(results[i].to_tensor(), graph_.add_getitem(node, static_cast<int64_t>(i)));
    }
  }
}

void ProxyTensorMode::remap_nodes(absl::FunctionRef<Node*(Node*)> f) {
  for (Node*& node : slots_) node = f(node);
  for (auto& [uid, node] : nodes_) node = f(node);
}

}  // namespace opspec
