#include "runtime/compile/capture.h"

#include <algorithm>
#include <bit>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "runtime/compile/logging.h"
#include "runtime/core/call_site.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/op_table.h"
#include "runtime/trace/proxy_tensor.h"

namespace opspec::internal {
namespace {

thread_local CaptureSession* tls_session = nullptr;
thread_local int tls_disabled_depth = 0;

// PyTorch-style text for each kind of break: what happened, why it breaks, what to do.
struct BreakText {
  std::string title, explanation, hint;
};

BreakText break_text(BreakKind kind, std::string_view subject) {
  switch (kind) {
    case BreakKind::kUser:
      return {"Call to `opspec::graph_break()`", "User-inserted graph break.",
              "Remove the `opspec::graph_break()` call."};
    case BreakKind::kDisallowedOp:
      return {str_cat("Call to op `", subject, "`, which is marked disallow_in_graph"),
              "Ops marked with disallow_in_graph run eagerly between two graphs.",
              str_cat("Call allow_op_in_graph(\"", subject, "\") to capture it.")};
    case BreakKind::kDataDependent:
      return {str_cat("Data-dependent read: ", subject),
              "The value of a captured tensor is needed to go on, so the graph so far must run first.",
              "Avoid reading tensor values (item(), to_vector, data_ptr) inside the compiled function, or move the "
              "read out of it."};
    case BreakKind::kDisabledFunction:
      return {str_cat("Call to function `", subject, "`, which is wrapped with disable()"),
              "Functions wrapped with disable() run eagerly and are never captured.",
              "Remove the disable() wrapper to capture its ops."};
    case BreakKind::kNoMetaKernel:
      return {str_cat("Op `", subject, "` has no meta kernel"),
              "Without a meta kernel the op's output metadata cannot be known without running it.",
              str_cat("Register a Meta kernel for ", subject, " with Library::impl(..., DispatchKey::kMeta, ...).")};
  }
  return {};
}

// The fake mode of a capture session; it declines while the session is suspended.
class CaptureFakeMode : public FakeTensorMode {
 public:
  explicit CaptureFakeMode(const CaptureSession& session) : session_(session) {}
  bool dispatch(OpCall& call) override { return session_.suspended() ? false : FakeTensorMode::dispatch(call); }

 private:
  const CaptureSession& session_;
};

void on_data_access(const TensorImpl*, const char* what) {
  CaptureSession* s = tls_session;
  if (s == nullptr || s->suspended()) return;
  s->note_data_read();  // even of a real tensor: fn's next ops may depend on it (Note [Trace once])
  if (!s->has_pending_ops()) return;
  s->break_graph(BreakKind::kDataDependent, str_cat("Tensor::", what), format_site(current_call_site()));
}

}  // namespace

std::string format_site(const std::source_location* loc) {
  if (const std::string* label = current_site_label()) return *label;  // a spec program's line
  if (loc == nullptr) return "";
  std::string_view file = loc->file_name();
  if (auto slash = file.rfind('/'); slash != std::string_view::npos) file.remove_prefix(slash + 1);
  // The compiler's pretty function name ("T ns::Class::f(args) const", or
  // "ns::Test::TestBody()::<lambda(...)>") shortened to its unqualified name.
  std::string_view fn = loc->function_name();
  if (auto lambda = fn.find("::<lambda"); lambda != std::string_view::npos) fn = fn.substr(0, lambda);
  if (auto paren = fn.find('('); paren != std::string_view::npos) fn = fn.substr(0, paren);
  if (auto space = fn.rfind(' '); space != std::string_view::npos) fn.remove_prefix(space + 1);
  if (auto colons = fn.rfind("::"); colons != std::string_view::npos) fn.remove_prefix(colons + 2);
  return str_cat(file, ":", loc->line(), " in ", fn);
}

int& disabled_depth() { return tls_disabled_depth; }

// ---- Replaying ----

// Note [Replaying a capture]
// Lazy capture runs fn on every call (see Note [Lazy capture]), but building
// a Graph node by node, hashing it and looking it up costs several times what
// the ops themselves cost on small tensors. So each graph a call compiles (or
// finds in the cache) is kept as a Recording: the graph as captured, before
// outputs and dead-code elimination, with the cache entry it ran. The next
// call at that graph position matches its ops against the recording instead
// of building a graph: an op matches when it is the recorded node's op with
// equal values and the same producers (a tensor seen for the first time must
// match a recorded placeholder of the same name and exact metadata). Equal
// ops on equal inputs give equal results, so a matched functional op's fake
// results are made straight from the recorded metadata, without running its
// meta kernel, unless someone could see that kernel run (a user mode, a
// tensor subclass, an outer tracer); views and in-place ops always run it,
// for their aliasing. When the graph ends with every recorded node matched,
// the same values held and the entry's guards passing, the entry's compiled
// graph runs directly. At the first mismatch the graph captured so far is
// rebuilt from the recording's prefix (node for node, so with the same
// names) and capture goes on as usual; another recording whose prefix is
// identical is tried first. Either way the graph, its cache entry and every
// statistic are those of a plain capture. The comparisons are in replay.cc.
// Replay runs once per op on every warm call, so a recording also keeps its
// call nodes as compact steps (op, argument producers and values, and a fake
// per result whose metadata fresh fakes copy; index_steps): the usual op,
// whose tensors are all tracked, is matched and answered from them without
// touching the nodes, and without leaving the mode stack (answer_without_ops,
// See Note [Answers that run no op]).

// ---- The capture mode and the pending graph ----

class CaptureSession::Impl : public ProxyTensorMode {
 public:
  Impl(CaptureSession& session, const std::vector<Tensor>& fn_inputs, const std::vector<std::string>& input_names)
      : ProxyTensorMode(graph_, DispatchKey::kPreDispatch),
        session_(session),
        fake_(session),
        fn_inputs_(fn_inputs),
        fn_input_names_(input_names) {
    set_error_prefix("compile");
    start_graph();
  }

  bool dispatch(OpCall& call) override {
    if (session_.suspended()) return false;
    const OperatorHandle& op = call.op();
    if (op_disallowed(op)) return break_and_run_eagerly(call, BreakKind::kDisallowedOp, op.name());
    if (&op == &builtin_op(OpId::_local_scalar_dense)) {
      return break_and_run_eagerly(call, BreakKind::kDataDependent, str_cat(op.name(), " (Tensor.item())"));
    }
    if (replay_ != nullptr && replay(call)) return true;
    const Stack saved = call.stack();
    try {
      ProxyTensorMode::dispatch(call);
    } catch (const NoMetaKernelError&) {
      call.stack() = saved;
      return break_and_run_eagerly(call, BreakKind::kNoMetaKernel, op.name());
    }
    remember_results(call.stack());
    return true;
  }

  // See Note [Answers that run no op]: the usual replayed op (the next
  // recorded node, every tensor argument tracked, fresh fakes allowed) is
  // answered here, with the capture still on its stack; replay() does the rest.
  bool answer_without_ops(const OperatorHandle& op, Stack& stack) override {
    if (replay_ == nullptr || session_.suspended() || cursor_ >= replay_->steps.size()) return false;
    const Recording::Step& step = replay_->steps[cursor_];
    if (!step.fresh_fakes || step.op != &op || op_disallowed(op)) return false;
    // observed(stack, 1), its tensors' half asked by match_tracked as it reads them.
    bool subclassed = false;
    if (modes_observe(/*own_pre_dispatch_modes=*/1) || match_tracked(op, stack, &subclassed) == nullptr || subclassed) {
      return false;
    }
    answer_fresh(step, cursor_, stack);
    return true;
  }

  // remember: a tensor this graph produced, filled in at flush if still held.
  // A tensor may be remembered more than once (an in-place op returns its
  // input); held_tensors() accounts for that instead of a lookup per result.
  void remember(const Tensor& t) { captured_.push_back(t); }

  bool has_pending_ops() const {
    if (replayed_calls_ > 0) return true;
    for (Node* n : graph_.nodes()) {
      if (n->op() == NodeOp::kCall) return true;
    }
    return false;
  }

  void flush() {
    fake_.clear_memo();  // its references must not make fakes look held
    if (replay_ != nullptr && replay_flush()) return;
    if (replay_ != nullptr) diverge();
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
    std::vector<std::string> names;
    for (Node* p : graph_.placeholders()) {
      if (p->users().empty()) {
        graph_.erase(p);
        continue;
      }
      inputs.push_back(bound_.at(p));
      names.push_back(p->name());
    }
    if (has_pending_ops()) {
      CompiledFor found = session_.state_.compiled_for(graph_, inputs, names, position_);
      remember_last(inputs, held, found.entry);
      if (found.entry != nullptr) {
        if (recording == nullptr) {
          recording = std::make_shared<Recording>(record_whole(std::move(graph_)));
        } else {
          for (const std::string& name : names) recording->inputs.push_back(recording->raw.find(name));
        }
        recording->entry = std::move(found.entry);
        session_.state_.add_recording(position_, std::move(recording));
      }
      ++position_;
      run_and_fill(found.compiled, inputs, held);
    }
    end_graph();
  }

  CaptureFakeMode& fake() { return fake_; }
  // graphs_run: how many graphs this call ran so far; last_graph: the latest
  // one's inputs, results and entry (kept only under trace_once).
  size_t graphs_run() const { return position_; }
  const LastGraph& last_graph() const { return last_; }

 protected:
  // A real tensor the graph has not produced is a graph input.
  Node* on_untracked(const Tensor& t) override {
    Node* p = graph().add_placeholder(take_input_name(t), TensorMeta::of(t));
    bound_[p] = t;
    return p;
  }

 private:
  // input_name: the placeholder name for real tensor t (with `taken` more
  // tmp/captured names handed out before it); take_input_name hands it out.
  std::string input_name(const Tensor& t, int tmp_taken = 0, int captured_taken = 0) const {
    if (const int i = fn_input_index(t); i >= 0) {
      return static_cast<size_t>(i) < fn_input_names_.size() ? fn_input_names_[i] : str_cat("x", i);
    }
    if (materialized_.contains(t.impl())) return str_cat("tmp", next_tmp_ + tmp_taken);
    return str_cat("captured", next_captured_ + captured_taken);
  }
  std::string take_input_name(const Tensor& t) {
    std::string name = input_name(t);
    count_input_name(t);
    return name;
  }
  // count_input_name: take_input_name without building the name (replay knows it).
  void count_input_name(const Tensor& t) {
    if (fn_input_index(t) < 0) ++(materialized_.contains(t.impl()) ? next_tmp_ : next_captured_);
  }
  // has_input_name: input_name(t, ...) == name, without building a string for
  // fn's inputs (every warm call matches each of them against its placeholder).
  bool has_input_name(const Tensor& t, std::string_view name, int tmp_taken, int captured_taken) const {
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
  int fn_input_index(const Tensor& t) const {
    for (size_t i = fn_inputs_.size(); i-- > 0;) {
      if (fn_inputs_[i].impl() == t.impl()) return static_cast<int>(i);
    }
    return -1;
  }

  bool break_and_run_eagerly(OpCall& call, BreakKind kind, std::string_view subject) {
    session_.break_graph(kind, subject, format_site(current_call_site()));
    SuspendCapture eager(&session_);
    Dispatcher::singleton().call_boxed(call.op(), call.stack());
    for (const Value& v : call.stack()) {
      if (v.is_tensor() && v.to_tensor().defined()) materialized_.insert(v.to_tensor().impl());
    }
    return true;
  }

  void remember_last(const std::vector<Tensor>& inputs, const std::vector<Tensor>& held,
                     std::shared_ptr<const CacheEntry> entry) {
    if (!session_.state_.options.trace_once) return;
    last_.inputs = inputs;
    last_.results.clear();
    for (const Tensor& t : held) last_.results.push_back(t.impl());
    last_.entry = std::move(entry);
  }

  // held_tensors: the remembered fake tensors the program still holds, in the
  // order first remembered. Each of captured_'s entries is one reference of
  // its own, so a tensor listed k times is held when it has more than k.
  std::vector<Tensor> held_tensors() const {
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

  void remember_results(const Stack& results) {
    for (const Value& v : results) {
      if (v.is_tensor() && is_fake(v.to_tensor())) remember(v.to_tensor());
    }
  }

  // run_and_fill: runs a compiled graph on the real inputs and fills every
  // held fake tensor in place with its real value.
  void run_and_fill(const CompiledGraph& compiled, const std::vector<Tensor>& inputs, const std::vector<Tensor>& held) {
    std::vector<Tensor> results;
    {
      SuspendCapture eager(&session_);
      results = compiled(inputs);
    }
    OPSPEC_CHECK(results.size() == held.size(), "compile: the backend returned ", results.size(),
                 " outputs for a graph with ", held.size());
    for (size_t i = 0; i < held.size(); ++i) {
      held[i].impl()->materialize_from(*results[i].impl());
      materialized_.insert(held[i].impl());
    }
    std::lock_guard<std::mutex> lock(session_.state_.mu);
    ++session_.state_.stats.graphs_run;
  }

  // start_graph / end_graph: per-graph state; a graph starts replaying the
  // latest recording of its position, if any.
  void start_graph() {
    candidates_ = session_.state_.recordings_at(position_);
    replay_ = candidates_.empty() ? nullptr : candidates_.front().get();
    cursor_ = 0;
    replayed_calls_ = 0;
    if (replay_ != nullptr) {  // likely as many tensors as last time
      reserve_tracking(replay_->nodes.size());
      captured_.reserve(replay_->nodes.size());
    }
  }
  void end_graph() {
    graph_ = Graph();
    for (const auto& [p, t] : bound_) release_slot(t);  // the next graph tracks its inputs anew
    bound_.clear();
    captured_.clear();
    forget();
    start_graph();
  }

  // prunable: whether flush will remove nodes from graph_ once outputs are
  // set (dead-code elimination, unused placeholders).
  bool prunable(const std::vector<Node*>& outputs) const {
    const absl::flat_hash_set<const Node*> out(outputs.begin(), outputs.end());
    for (const Node* n : graph_.nodes()) {
      if (n->users().empty() && !out.contains(n) && (n->op() == NodeOp::kPlaceholder || !is_impure(*n))) return true;
    }
    return false;
  }

  // Resolved: an argument of the op being matched, as the recording sees it.
  struct Resolved {
    const Value* value = nullptr;  // a plain value, or
    std::vector<const Node*> nodes;
    bool is_list = false;
  };

  // match: whether the op on stack is the next node of replay_ (after the
  // placeholders its new tensors need); on success inputs holds those new
  // tensors with their placeholders and *call_at the call node's position.
  bool match(const OperatorHandle& op, const Stack& stack, std::vector<std::pair<Tensor, Node*>>& inputs,
             size_t* call_at) const {
    const Recording& rec = *replay_;
    size_t c = cursor_;
    int tmp_taken = 0, captured_taken = 0;
    auto producer = [&](const Tensor& t) -> const Node* {
      if (Node* n = node_of(t)) return n;
      for (const auto& [seen, p] : inputs) {
        if (seen.is_same(t)) return p;
      }
      if (c >= rec.nodes.size()) return nullptr;
      Node* p = rec.nodes[c];
      if (p->op() != NodeOp::kPlaceholder || !has_input_name(t, p->name(), tmp_taken, captured_taken) ||
          !(p->tensor_meta() == TensorMeta::of(t))) {
        return nullptr;
      }
      if (fn_input_index(t) < 0) ++(materialized_.contains(t.impl()) ? tmp_taken : captured_taken);
      inputs.emplace_back(t, p);
      ++c;
      return p;
    };
    auto plain = [](const Value& v) {
      return !v.is_tensor_list() &&
             (!v.is_tensor() || !v.to_tensor().defined() || v.to_tensor().is_wrapped_number());
    };
    absl::InlinedVector<const Node*, 6> args;  // per argument: its producer (null for plain values)
    std::vector<std::vector<const Node*>> lists;
    for (const Value& v : stack) {
      if (plain(v)) {
        args.push_back(nullptr);
      } else if (v.is_tensor()) {
        const Node* p = producer(v.to_tensor());
        if (p == nullptr) return false;
        args.push_back(p);
      } else {
        std::vector<const Node*> list;
        for (const Tensor& t : v.to_tensor_list()) {
          const Node* p = t.defined() ? producer(t) : nullptr;
          if (p == nullptr) return false;
          list.push_back(p);
        }
        lists.push_back(std::move(list));
        args.push_back(nullptr);
      }
    }
    if (c >= rec.nodes.size()) return false;
    const Node& n = *rec.nodes[c];
    if (n.op() != NodeOp::kCall || n.target() != &op || n.args().size() != stack.size()) return false;
    size_t next_list = 0;
    for (size_t i = 0; i < stack.size(); ++i) {
      const NodeArg& a = n.args()[i];
      if (plain(stack[i])) {
        // An undefined tensor is recorded as None (ProxyTensorMode::to_node_arg).
        const bool undefined = stack[i].is_tensor() && !stack[i].to_tensor().defined();
        if (!a.is_value() || (undefined ? !a.as_value().is_none() : !same_value(a.as_value(), stack[i]))) {
          return false;
        }
      } else if (stack[i].is_tensor()) {
        if (!a.is_node() || a.as_node() != args[i]) return false;
      } else {
        const std::vector<const Node*>& list = lists[next_list++];
        if (!a.is_node_list() || a.as_node_list().size() != list.size() ||
            !std::equal(list.begin(), list.end(), a.as_node_list().begin())) {
          return false;
        }
      }
    }
    *call_at = c;
    return true;
  }

  // match_tracked: match() in its common case, in one pass over the
  // recording's compact steps: the next node is the op's call and every
  // tensor argument is one this graph already tracks. Null means "ask
  // match()", not "no match"; else the step matched.
  // subclassed, when given, is set if a tensor argument has a subclass (as
  // observed() asks); only meaningful when a step is returned.
  const Recording::Step* match_tracked(const OperatorHandle& op, const Stack& stack, bool* subclassed = nullptr) const {
    const Recording& rec = *replay_;
    if (cursor_ >= rec.steps.size()) return nullptr;
    const Recording::Step& step = rec.steps[cursor_];
    if (step.op != &op || step.end == 0 || step.args_end - step.args_begin != stack.size()) return nullptr;
    const Recording::StepArg* args = rec.step_args.data() + step.args_begin;
    for (size_t i = 0; i < stack.size(); ++i) {
      const Value& v = stack[i];
      const Recording::StepArg& a = args[i];
      if (a.kind == Recording::StepArg::Kind::kNode) {  // the usual argument: a tracked tensor
        if (!v.is_tensor() || !v.to_tensor().defined() || v.to_tensor().is_wrapped_number() ||
            node_of(v.to_tensor()) != a.node) {
          return nullptr;
        }
        if (subclassed != nullptr && v.to_tensor().impl()->subclass()) *subclassed = true;
        continue;
      }
      if (v.is_tensor_list()) return nullptr;
      if (v.is_tensor() && v.to_tensor().defined() && !v.to_tensor().is_wrapped_number()) return nullptr;
      if (subclassed != nullptr && v.is_tensor() && v.to_tensor().defined() && v.to_tensor().impl()->subclass()) {
        *subclassed = true;
      }
      // A plain value, as in match(); an undefined tensor is recorded as None.
      if (v.is_tensor() && !v.to_tensor().defined()) {
        if (a.kind != Recording::StepArg::Kind::kNone) return nullptr;
      } else if (a.kind == Recording::StepArg::Kind::kNone || a.kind == Recording::StepArg::Kind::kValue) {
        if (!same_as_recorded(a, v)) return nullptr;
      } else {
        return nullptr;
      }
    }
    return &step;
  }

  // replay: handles the call by matching it against replay_ (See Note
  // [Replaying a capture]); false when it does not match, replay_ then being
  // null and graph_ the graph captured so far.
  bool replay(OpCall& call) {
    if (const Recording::Step* step = match_tracked(call.op(), call.stack())) return replay_tracked(call, *step);
    const OperatorHandle& op = call.op();
    std::vector<std::pair<Tensor, Node*>> inputs;
    size_t call_at = 0;
    std::vector<const Recording*> tried;
    while (!match(op, call.stack(), inputs, &call_at)) {
      inputs.clear();
      tried.push_back(replay_);
      if (!switch_recording(cursor_, [](const Recording&) { return true; }, tried)) {
        diverge();
        return false;
      }
      if (const Recording::Step* step = match_tracked(op, call.stack())) return replay_tracked(call, *step);
    }
    const Recording::Step& step = replay_->steps[call_at];
    if (step.end == 0) {  // its results' nodes are not laid out as capture lays them out
      diverge();
      return false;
    }
    return replay_matched(call, step, call_at, inputs);
  }

  // replay_tracked: replay() for an op match_tracked matched to step (at cursor_).
  bool replay_tracked(OpCall& call, const Recording::Step& step) { return replay_matched(call, step, cursor_, {}); }

  // replay_matched: answers a call matched to the recording's node call_at
  // (step is its compact form; inputs, the placeholders match() found for
  // tensors seen for the first time): fresh fakes made from the recorded
  // metadata when nothing could see the meta kernel run, else the op run and
  // its results checked against the recording.
  bool replay_matched(OpCall& call, const Recording::Step& step, size_t call_at,
                      const std::vector<std::pair<Tensor, Node*>>& inputs) {
    const Recording& rec = *replay_;
    Stack& stack = call.stack();
    if (step.fresh_fakes && !observed(stack)) {
      track_inputs(inputs);
      answer_fresh(step, call_at, stack);
      return true;
    }
    const Stack saved = stack;
    try {
      call.proceed();
    } catch (...) {
      rethrow_with_context(call.op());
    }
    if (!results_match(*rec.nodes[call_at], stack)) {
      // The same op on the same inputs gave other results (a kernel was
      // overridden in between): record it as captured.
      diverge();
      record_call(call.op(), node_args(saved), stack);
      remember_results(stack);
      return true;
    }
    track_inputs(inputs);
    size_t g = call_at + (stack.size() == 1 ? 0 : 1);  // the results' nodes: the call, or its getitems
    for (const Value& r : stack) {
      if (r.is_tensor() && r.to_tensor().defined()) track(r.to_tensor(), rec.nodes[g++]);
    }
    cursor_ = step.end;
    ++replayed_calls_;
    remember_results(stack);
    return true;
  }

  // track_inputs: makes the placeholders match() found the producers of their new tensors.
  void track_inputs(const std::vector<std::pair<Tensor, Node*>>& inputs) {
    for (const auto& [t, p] : inputs) {
      count_input_name(t);
      bound_[p] = t;
      track(t, p);
    }
  }

  // answer_fresh: answers the op of fresh_fakes step, matched to the node at
  // call_at, with fresh fakes copied from the recording's, tracked and remembered.
  void answer_fresh(const Recording::Step& step, size_t call_at, Stack& stack) {
    const Recording& rec = *replay_;
    stack.clear();
    size_t g = call_at + (step.fakes_end - step.fakes_begin == 1 ? 0 : 1);  // the call, or its getitems
    for (uint32_t k = step.fakes_begin; k < step.fakes_end; ++k) {
      Tensor fake = internal::make_fake_like(rec.step_fakes[k]);
      track_new(fake, rec.nodes[g++]);
      captured_.emplace_back(IntrusivePtr<TensorImpl>::share_unpublished(fake.impl()));  // remember(fake), unlocked
      stack.emplace_back(std::move(fake));
    }
    cursor_ = step.end;
    ++replayed_calls_;
  }

  // switch_recording: moves to another candidate whose first `prefix` nodes
  // equal replay_'s and that accepts fits; the tracked nodes follow by position.
  template <class Fits>
  bool switch_recording(size_t prefix, Fits fits, const std::vector<const Recording*>& tried = {}) {
    for (const auto& candidate : candidates_) {
      const Recording* r = candidate.get();
      if (r == replay_ || std::find(tried.begin(), tried.end(), r) != tried.end() || !fits(*r) ||
          !same_prefix(*replay_, *r, prefix)) {
        continue;
      }
      const Recording& from = *replay_;
      remap_nodes([&](Node* old) { return r->nodes[from.position.at(old)]; });
      absl::flat_hash_map<const Node*, Tensor> bound;
      for (auto& [p, t] : bound_) bound[r->nodes[from.position.at(p)]] = std::move(t);
      bound_ = std::move(bound);
      replay_ = r;
      return true;
    }
    return false;
  }

  // diverge: leaves replay: graph_ becomes the graph captured so far (the
  // first cursor_ nodes of the recording, rebuilt in order, hence equally named).
  void diverge() {
    const Recording& rec = *replay_;
    std::vector<Node*> made(cursor_);
    auto remap = [&](const Node* old) { return made[rec.position.at(old)]; };
    for (size_t i = 0; i < cursor_; ++i) {
      const Node& n = *rec.nodes[i];
      switch (n.op()) {
        case NodeOp::kPlaceholder: made[i] = graph_.add_placeholder(n.name(), n.tensor_meta()); break;
        case NodeOp::kConstant: made[i] = graph_.add_constant(n.constant(), n.name()); break;
        case NodeOp::kGetItem: made[i] = graph_.add_getitem(remap(n.args()[0].as_node()), n.index()); break;
        case NodeOp::kCall: {
          std::vector<NodeArg> args;
          args.reserve(n.args().size());
          for (const NodeArg& a : n.args()) {
            if (a.is_value()) {
              args.push_back(a);
            } else if (a.is_node()) {
              args.push_back(NodeArg::node(remap(a.as_node())));
            } else {
              std::vector<Node*> list;
              for (const Node* x : a.as_node_list()) list.push_back(remap(x));
              args.push_back(NodeArg::nodes(std::move(list)));
            }
          }
          made[i] = graph_.add_call(*n.target(), std::move(args), n.meta());
          break;
        }
        case NodeOp::kOutput: OPSPEC_INTERNAL_ASSERT(false);
      }
    }
    remap_nodes([&](Node* old) { return remap(old); });
    absl::flat_hash_map<const Node*, Tensor> bound;
    for (auto& [p, t] : bound_) bound[remap(p)] = std::move(t);
    bound_ = std::move(bound);
    replay_ = nullptr;
    replayed_calls_ = 0;
  }

  // replay_flush: ends a graph that matched a recording to its last node with
  // the same values held: runs the recording's compiled graph when its guards
  // pass. False (nothing done) otherwise.
  bool replay_flush() {
    if (cursor_ == 0) {  // nothing captured
      end_graph();
      return true;
    }
    const std::vector<Tensor> held = held_tensors();
    std::vector<const Node*> outputs;
    for (const Tensor& t : held) outputs.push_back(node_of(t));
    const size_t captured = cursor_;
    auto fits = [&](const Recording& r) {
      if (r.nodes.size() != captured || r.held.size() != outputs.size()) return false;
      for (size_t i = 0; i < outputs.size(); ++i) {
        if (r.held[i] != r.nodes[replay_->position.at(outputs[i])]) return false;
      }
      return true;
    };
    if (!fits(*replay_) && !switch_recording(captured, fits)) return false;
    std::vector<Tensor> inputs;
    inputs.reserve(replay_->inputs.size());
    for (const Node* p : replay_->inputs) inputs.push_back(bound_.at(p));
    if (replay_->entry->guards.first_failure(inputs)) return false;
    const std::shared_ptr<const CacheEntry> entry = replay_->entry;
    ++position_;
    remember_last(inputs, held, entry);
    run_and_fill(entry->compiled, inputs, held);
    end_graph();
    return true;
  }

  Graph graph_;  // constructed before the base class uses it: see the constructor
  CaptureSession& session_;
  CaptureFakeMode fake_;
  const std::vector<Tensor>& fn_inputs_;               // the session's, which outlives this
  const std::vector<std::string>& fn_input_names_;     // CompileOptions::input_names
  absl::flat_hash_map<const Node*, Tensor> bound_;  // placeholder -> real tensor
  std::vector<Tensor> captured_;  // remembered results, possibly more than once each
  absl::flat_hash_set<const TensorImpl*> materialized_;
  size_t position_ = 0;
  int next_tmp_ = 0;
  int next_captured_ = 0;
  // Replay state (See Note [Replaying a capture]).
  std::vector<std::shared_ptr<const Recording>> candidates_;  // this position's recordings
  const Recording* replay_ = nullptr;  // the one being matched, or null: capturing into graph_
  size_t cursor_ = 0;                  // its next node to match
  size_t replayed_calls_ = 0;
  LastGraph last_;
};

// ---- CaptureSession ----

CaptureSession::CaptureSession(CompiledState& state, const std::vector<Tensor>& inputs)
    : state_(state), inputs_(inputs), previous_(tls_session) {
  impl_ = std::make_unique<Impl>(*this, inputs_, state_.options.input_names);
  tls_session = this;
}

CaptureSession::~CaptureSession() { tls_session = previous_; }

CaptureSession* CaptureSession::current() { return tls_session; }

// While suspended, ops run as in eager code: the fake mode leaves its slot,
// so modes such as DebugMode see real ops, not fake ones, and the capture
// mode leaves the PreDispatch stack when it is on top (not while its own
// handler runs), so a graph's ops do not pass through it on their way. The
// PreDispatch key run() enabled is lifted too: left on, every op of a graph
// went through the boxed PreDispatch fallback to find no mode there.
void CaptureSession::suspend() {
  if (suspended_++ != 0) return;
  parked_fake_ = exchange_infra_mode(ModeKind::kFake, nullptr);
  if (innermost_mode(DispatchKey::kPreDispatch) == impl_.get()) parked_capture_ = pop_mode(DispatchKey::kPreDispatch);
  LocalDispatchKeySet& tls = local_dispatch_key_set();
  pre_dispatch_lifted_ = enabled_pre_dispatch_ && tls.included.has(DispatchKey::kPreDispatch);
  if (pre_dispatch_lifted_) tls.included = tls.included.remove(DispatchKey::kPreDispatch);
}

void CaptureSession::resume() {
  if (--suspended_ != 0) return;
  if (pre_dispatch_lifted_) {
    LocalDispatchKeySet& tls = local_dispatch_key_set();
    tls.included = tls.included.add(DispatchKey::kPreDispatch);
    pre_dispatch_lifted_ = false;
  }
  if (parked_capture_ != nullptr) push_mode(std::move(parked_capture_));
  parked_capture_ = nullptr;
  exchange_infra_mode(ModeKind::kFake, std::move(parked_fake_));
}

bool CaptureSession::has_pending_ops() const { return impl_->has_pending_ops(); }

void CaptureSession::flush() {
  SuspendCapture no_hooks(this);  // the graph's kernels read data; that is not a break
  impl_->flush();
}

void CaptureSession::break_graph(BreakKind kind, std::string_view subject, std::string user_site) {
  broke_ = true;
  const BreakText text = break_text(kind, subject);
  if (state_.options.fullgraph) {
    std::string message = str_cat("compile(", state_.options.name, ", fullgraph=true): graph break: ", text.title,
                                  "\n  Explanation: ", text.explanation, "\n  Hint: ", text.hint,
                                  " Or compile with fullgraph = false to let the graph split here.");
    if (!user_site.empty()) str_append(&message, "\n  User site: ", user_site);
    throw GraphBreakError(message);
  }
  const GraphBreak b{text.title, user_site};
  state_.record_break(b);
  log_message("graph_breaks", str_cat("Graph break in ", state_.options.name, ": ", text.title,
                                      user_site.empty() ? "" : str_cat(" (", user_site, ")")));
  flush();
}

std::vector<Tensor> CaptureSession::run() {
  std::vector<Tensor> outputs;
  {
    // Restored in reverse on any exception: a throwing fn leaves no mode, guard
    // or hook behind, and nothing of the unfinished graph is cached.
    enabled_pre_dispatch_ = !local_dispatch_key_set().included.has(DispatchKey::kPreDispatch);
    EnablePreDispatchGuard pre_dispatch;
    ModeGuard fake(impl_->fake());
    ModeGuard capture(*impl_);
    struct HookGuard {
      DataAccessHook saved = tls_data_access_hook;
      HookGuard() { tls_data_access_hook = &on_data_access; }
      ~HookGuard() { tls_data_access_hook = saved; }
    } hook;
    outputs = state_.fn(inputs_);
    flush();
  }
  // One graph, no break, no data read: later calls may skip fn (Note [Trace once]).
  if (state_.options.trace_once && !broke_ && !data_read_ && impl_->graphs_run() <= 1) {
    keep_plan(state_, inputs_, outputs, impl_->graphs_run() == 1 ? &impl_->last_graph() : nullptr);
  }
  return outputs;
}

}  // namespace opspec::internal
