// capture_mode.cc: CaptureMode: capturing ops into graphs, naming inputs,
// flushing graphs. See Note [The warm path] in internal/capture.h.
#include "runtime/compile/internal/capture_mode.h"

#include <algorithm>
#include <mutex>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "runtime/autograd/autograd_meta.h"
#include "runtime/core/call_site.h"
#include "runtime/core/grad_mode.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal {

CaptureMode::CaptureMode(CaptureSession& session, const std::vector<Tensor>& fn_inputs, const std::vector<std::string>& input_names)
    : ProxyTensorMode(graph_, DispatchKey::kPreDispatch),
      session_(session),
      fake_(session),
      fn_inputs_(fn_inputs),
      fn_input_names_(input_names) {
  set_error_prefix("compile");
  start_graph();
}

// The capture's grad mode (See Note [Grad mode nodes] in runtime/trace/proxy_tensor.cc):
// a graph is entered in the mode its capture started in (the call's, for the
// first graph) and runs under it; an op under another mode records a
// _set_grad_enabled node first (a warm call's replay matches it as a step),
// and so does a flush, restoring the mode the program went on in. So a no_grad
// block is part of its graph as in Dynamo ([set(False), ops, set(True)]),
// counting no break.
void CaptureMode::sync_capture_grad_mode() {
  const bool grad = autograd::is_grad_enabled();
  if (graph_grad_mode_ == grad) return;
  if (!(replayer_.active() && replayer_.replay_grad_mode(grad))) record_grad_mode(grad);
  graph_grad_mode_ = grad;
}

bool CaptureMode::dispatch(OpCall& call) {
  if (session_.suspended()) return false;
  const OperatorHandle& op = call.op();
  if (&op == &builtin_op(OpId::_set_grad_enabled)) {  // a graph run inside fn: the next op notes it
    call.proceed();
    return true;
  }
  sync_capture_grad_mode();
  if (const std::optional<BreakKind> kind = op_break(op)) {
    return break_and_run_eagerly(call, *kind, op_break_subject(*kind, op));
  }
  if (replayer_.active() && replayer_.replay(call)) return true;
  const Stack saved = call.stack();
  try {
    ProxyTensorMode::dispatch(call);
  } catch (const NoMetaKernelError&) {
    call.stack() = saved;
    return break_and_run_eagerly(call, BreakKind::kNoMetaKernel, op.name());
  } catch (const DataDependentOutputError&) {
    // A Meta kernel that cannot know its output's shape (index with a bool mask).
    call.stack() = saved;
    return break_and_run_eagerly(call, BreakKind::kDynamicOutputShape, op.name());
  }
  remember_results(call.stack());
  return true;
}

bool CaptureMode::has_pending_ops() const {
  if (replayer_.replayed_calls() > 0) return true;
  for (Node* n : graph_.nodes()) {
    // _set_grad_enabled nodes alone make no graph.
    if (n->op() == NodeOp::kCall && !sets_grad_mode(*n)) return true;
  }
  return false;
}

bool CaptureMode::flush() {
  if (has_pending_ops()) sync_capture_grad_mode();  // the mode the program goes on in
  // The graph runs under the mode it was entered in (See Note [Grad mode nodes]).
  std::optional<autograd::AutoGradMode> grad_mode;
  if (graph_entry_grad_mode_.has_value()) grad_mode.emplace(*graph_entry_grad_mode_);
  fake_.clear_memo();  // its references must not make fakes look held
  if (replayer_.active() && replayer_.flush()) return false;
  if (replayer_.active()) replayer_.diverge();
  const std::vector<Tensor> held = held_tensors();
  std::vector<Node*> outputs;
  for (const Tensor& t : held) outputs.push_back(node_of(t));
  // The graph as captured, before outputs and dead-code elimination, for
  // later calls to replay (See Note [Replaying a capture]): a copy when
  // something is about to be pruned, else graph_ itself once compiled.
  std::shared_ptr<Recording> recording;
  if (has_pending_ops() && prunable(outputs)) recording = std::make_shared<Recording>(record_copy(graph_, outputs));
  graph_.set_output(outputs);
  eliminate_dead_code(graph_);
  std::vector<Tensor> inputs;
  std::vector<std::string> names, sources;
  for (Node* p : graph_.placeholders()) {
    if (p->users().empty()) {
      graph_.erase(p);
      continue;
    }
    inputs.push_back(bound_.at(p));
    names.push_back(p->name());
    // fn's inputs are locals of its frame to PyTorch: L['x'] (See Note [Guards]).
    sources.push_back(fn_input_index(inputs.back()) >= 0 ? str_cat("L['", p->name(), "']") : p->name());
  }
  bool compiled_now = false;
  if (has_pending_ops()) {
    CompiledFor found = session_.state_.compiled_for(graph_, inputs, names, sources, position_,
                                                     session_.item_reads(), session_.cache_only());
    compiled_now = found.compiled_now;
    std::shared_ptr<const Recording> kept;  // none when the graph runs eagerly
    // A graph with holes is not replayed: its numbers come from each capture.
    if (found.entry != nullptr && found.entry->holes.empty()) {
      if (recording == nullptr) {
        recording = std::make_shared<Recording>(record_whole(std::move(graph_)));
      } else {
        for (const std::string& name : names) recording->inputs.push_back(recording->raw.find(name));
      }
      recording->entry = std::move(found.entry);
      kept = recording;
      session_.state_.add_recording(position_, std::move(recording));
    }
    remember_last(inputs, held, std::move(kept));
    ++position_;
    run_and_fill(found.compiled, inputs, held);
  }
  end_graph();
  return compiled_now;
}

// A real tensor the graph has not produced is a graph input.
Node* CaptureMode::on_untracked(const Tensor& t) {
  Node* p = graph().add_placeholder(take_input_name(t), TensorMeta::of(t));
  bound_[p] = t;
  return p;
}

// input_name: the placeholder name for real tensor t (with `taken` more
// tmp/captured names handed out before it); take_input_name hands it out.
std::string CaptureMode::input_name(const Tensor& t, int tmp_taken, int captured_taken) const {
  if (const int i = fn_input_index(t); i >= 0) {
    return static_cast<size_t>(i) < fn_input_names_.size() ? fn_input_names_[i] : str_cat("x", i);
  }
  if (materialized_.contains(t.impl())) return str_cat("tmp", next_tmp_ + tmp_taken);
  return str_cat("captured", next_captured_ + captured_taken);
}
std::string CaptureMode::take_input_name(const Tensor& t) {
  std::string name = input_name(t);
  count_input_name(t);
  return name;
}
// count_input_name: take_input_name without building the name (replay knows it).
void CaptureMode::count_input_name(const Tensor& t) {
  if (fn_input_index(t) < 0) ++(materialized_.contains(t.impl()) ? next_tmp_ : next_captured_);
}
// has_input_name: input_name(t, ...) == name, without building a string for
// fn's inputs (every warm call matches each of them against its placeholder).
bool CaptureMode::has_input_name(const Tensor& t, std::string_view name, int tmp_taken, int captured_taken) const {
  if (const int i = fn_input_index(t); i >= 0) {
    if (static_cast<size_t>(i) < fn_input_names_.size()) return name == fn_input_names_[i];
    // "x<i>", as input_name spells it: digits, no leading zero.
    if (name.size() < 2 || name.size() > 11 || name[0] != 'x' || (name[1] == '0' && name.size() > 2)) return false;
    int64_t index = 0;
    for (char c : name.substr(1)) {
      if (c < '0' || c > '9') return false;
      index = index * 10 + (c - '0');
    }
    return index == i;
  }
  return name == input_name(t, tmp_taken, captured_taken);
}
// fn_input_index: which of fn's inputs t is (the last, when passed twice), or -1.
// A scan: fn has few inputs, and a map cost more to build every call than all lookups.
int CaptureMode::fn_input_index(const Tensor& t) const {
  for (size_t i = fn_inputs_.size(); i-- > 0;) {
    if (fn_inputs_[i].impl() == t.impl()) return static_cast<int>(i);
  }
  return -1;
}

bool CaptureMode::break_and_run_eagerly(OpCall& call, BreakKind kind, std::string_view subject) {
  session_.break_graph(kind, subject, format_site(current_call_site()));
  SuspendCapture eager(&session_);
  // item(): what it read and from where, for recompile reasons (See Note [Values read with item()]).
  std::optional<std::string> item_source;
  if (&call.op() == &builtin_op(OpId::_local_scalar_dense) && !call.stack().empty() && call.stack()[0].is_tensor()) {
    const Tensor& read = call.stack()[0].to_tensor();
    item_source = fn_input_index(read) < 0 ? std::string("a tensor") : str_cat("L['", input_name(read), "']");
  }
  Dispatcher::singleton().call_boxed(call.op(), call.stack());
  if (item_source && !call.stack().empty() && call.stack()[0].is_scalar()) {
    session_.note_item_read({*item_source, call.stack()[0].to_scalar()});
  }
  for (const Value& v : call.stack()) {
    if (v.is_tensor() && v.to_tensor().defined()) materialized_.insert(v.to_tensor().impl());
    if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) materialized_.insert(t.impl());
      }
    }
  }
  return true;
}

void CaptureMode::remember_last(const std::vector<Tensor>& inputs, const std::vector<Tensor>& held,
                   std::shared_ptr<const Recording> recording) {
  if (!session_.state_.options.trace_once) return;
  last_.inputs = inputs;
  last_.results.clear();
  for (const Tensor& t : held) last_.results.push_back(t.impl());
  last_.recording = std::move(recording);
  last_.grad_enabled = graph_entry_grad_mode_.value_or(autograd::is_grad_enabled());
}

// held_tensors: the remembered fake tensors the program still holds, in the
// order first remembered. Each of captured_'s entries is one reference of
// its own, so a tensor listed k times is held when it has more than k.
std::vector<Tensor> CaptureMode::held_tensors() const {
  absl::InlinedVector<const Tensor*, 8> candidates;  // entries with a reference besides this one
  for (const Tensor& t : captured_) {
    if (t.impl()->use_count() > 1 && is_fake(t)) candidates.push_back(&t);
  }
  std::vector<Tensor> held;
  if (candidates.size() <= 16) {  // the usual few: count entries by scanning, no map
    for (size_t i = 0; i < candidates.size(); ++i) {
      const TensorImpl* impl = candidates[i]->impl();
      bool seen = false;
      int64_t entries = 0;
      for (size_t j = 0; j < candidates.size(); ++j) {
        if (candidates[j]->impl() != impl) continue;
        if (j < i) seen = true;  // already decided at its first entry
        ++entries;
      }
      if (!seen && static_cast<int64_t>(impl->use_count()) > entries) held.push_back(*candidates[i]);
    }
    return held;
  }
  absl::flat_hash_map<const TensorImpl*, int64_t> listed;
  for (const Tensor* t : candidates) ++listed[t->impl()];
  for (const Tensor* t : candidates) {
    auto it = listed.find(t->impl());
    if (it->second == 0) continue;  // already decided at its first entry
    if (static_cast<int64_t>(t->impl()->use_count()) > it->second) held.push_back(*t);
    it->second = 0;
  }
  return held;
}

void CaptureMode::remember_results(const Stack& results) {
  for (const Value& v : results) {
    if (v.is_tensor() && is_fake(v.to_tensor())) remember(v.to_tensor());
    if (v.is_tensor_list()) {  // split's views
      for (const Tensor& t : v.to_tensor_list()) {
        if (is_fake(t)) remember(t);
      }
    }
  }
}

// run_and_fill: runs a compiled graph on the real inputs and fills every
// held fake tensor in place with its real value.
void CaptureMode::run_and_fill(const CompiledGraph& compiled, const std::vector<Tensor>& inputs, const std::vector<Tensor>& held) {
  std::vector<Tensor> results;
  {
    SuspendCapture eager(&session_);
    results = compiled(inputs);
  }
  OPSPEC_CHECK(results.size() == held.size(), "compile: the backend returned ", results.size(),
               " outputs for a graph with ", held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    held[i].impl()->materialize_from(*results[i].impl());
    autograd::share_history(results[i], held[i]);  // the compiled graph's node, See Note [AOT autograd]
    materialized_.insert(held[i].impl());
  }
  std::lock_guard<std::mutex> lock(session_.state_.mu);
  ++session_.state_.stats.graphs_run;
}

// start_graph / end_graph: per-graph state; a graph starts replaying the
// latest recording of its position, if any.
void CaptureMode::start_graph() {
  graph_grad_mode_ = graph_entry_grad_mode_ = autograd::is_grad_enabled();
  replayer_.start(session_.state_.recordings_at(position_));
  if (const Recording* r = replayer_.recording()) {  // likely as many tensors as last time
    reserve_tracking(r->nodes.size());
    captured_.reserve(r->nodes.size());
  }
}
void CaptureMode::end_graph() {
  graph_ = Graph();
  for (const auto& [p, t] : bound_) release_slot(t);  // the next graph tracks its inputs anew
  bound_.clear();
  captured_.clear();
  forget();
  start_graph();
}

// prunable: whether flush will remove nodes from graph_ once outputs are
// set (dead-code elimination, unused placeholders).
bool CaptureMode::prunable(const std::vector<Node*>& outputs) const {
  const absl::flat_hash_set<const Node*> out(outputs.begin(), outputs.end());
  for (const Node* n : graph_.nodes()) {
    if (n->users().empty() && !out.contains(n) && (n->op() == NodeOp::kPlaceholder || !is_impure(*n))) return true;
  }
  return false;
}

}  // namespace opspec::internal
