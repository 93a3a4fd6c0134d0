// replay.cc: Replayer, warm calls matching their ops against recordings of
// earlier calls instead of building graphs. See Note [Replaying a capture].
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "runtime/compile/internal/capture_mode.h"
#include "runtime/compile/internal/replayer.h"
#include "runtime/core/grad_mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/passes.h"

namespace opspec::internal {

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
// statistic are those of a plain capture. The comparisons are in recording.cc.
// Replay runs once per op on every warm call, so a recording also keeps its
// call nodes as compact steps (op, argument producers and values, and a fake
// per result whose metadata fresh fakes copy; index_steps): the usual op,
// whose tensors are all tracked, is matched and answered from them without
// touching the nodes, and without leaving the mode stack (answer_without_ops,
// See Note [Answers that run no op]).

// ---- Answering ----

void Replayer::start(std::vector<std::shared_ptr<const Recording>> candidates) {
  candidates_ = std::move(candidates);
  replay_ = candidates_.empty() ? nullptr : candidates_.front().get();
  cursor_ = 0;
  replayed_calls_ = 0;
}

// Defined here, beside the Replayer it calls, so the hot path stays in one
// translation unit: the Replayer's per-op functions are `inline` (used only
// in this file) so GCC folds answer_without_ops -> match_tracked ->
// answer_fresh into one function, as it did when they were in-class members.
bool CaptureMode::answer_without_ops(const OperatorHandle& op, Stack& stack) {
  if (session_.suspended()) return false;
  // A first op or a change of grad mode goes through dispatch(), which notes
  // or replays it (See Note [Grad mode nodes]).
  if (graph_grad_mode_ != autograd::is_grad_enabled()) return false;
  return replayer_.answer_without_ops(op, stack);
}

inline bool Replayer::answer_without_ops(const OperatorHandle& op, Stack& stack) {
  if (replay_ == nullptr || cursor_ >= replay_->steps.size()) return false;
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

// ---- Matching ----

// match: whether the op on stack is the next node of replay_ (after the
// placeholders its new tensors need); on success inputs holds those new
// tensors with their placeholders and *call_at the call node's position.
bool Replayer::match(const OperatorHandle& op, const Stack& stack, std::vector<std::pair<Tensor, Node*>>& inputs,
           size_t* call_at) const {
  const Recording& rec = *replay_;
  size_t c = cursor_;
  int tmp_taken = 0, captured_taken = 0;
  auto producer = [&](const Tensor& t) -> const Node* {
    if (Node* n = mode_.node_of(t)) return n;
    for (const auto& [seen, p] : inputs) {
      if (seen.is_same(t)) return p;
    }
    if (c >= rec.nodes.size()) return nullptr;
    Node* p = rec.nodes[c];
    if (p->op() != NodeOp::kPlaceholder || !mode_.has_input_name(t, p->name(), tmp_taken, captured_taken) ||
        !(p->tensor_meta() == TensorMeta::of(t))) {
      return nullptr;
    }
    if (mode_.fn_input_index(t) < 0) ++(mode_.materialized_.contains(t.impl()) ? tmp_taken : captured_taken);
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
inline const Recording::Step* Replayer::match_tracked(const OperatorHandle& op, const Stack& stack, bool* subclassed) const {
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
          mode_.node_of(v.to_tensor()) != a.node) {
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
// null and the capture mode's graph the graph captured so far.
bool Replayer::replay(OpCall& call) {
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

bool Replayer::replay_grad_mode(bool enabled) {
  auto sets = [&](const Recording& r) {
    if (cursor_ >= r.nodes.size()) return false;
    const Node& n = *r.nodes[cursor_];
    return sets_grad_mode(n) && n.args()[0].as_value().to_bool() == enabled;
  };
  if (!sets(*replay_) && !switch_recording(cursor_, sets)) {
    diverge();
    return false;
  }
  ++cursor_;  // not a replayed call: the op before it was one
  return true;
}

// replay_tracked: replay() for an op match_tracked matched to step (at cursor_).
inline bool Replayer::replay_tracked(OpCall& call, const Recording::Step& step) { return replay_matched(call, step, cursor_, {}); }

// replay_matched: answers a call matched to the recording's node call_at
// (step is its compact form; inputs, the placeholders match() found for
// tensors seen for the first time): fresh fakes made from the recorded
// metadata when nothing could see the meta kernel run, else the op run and
// its results checked against the recording.
inline bool Replayer::replay_matched(OpCall& call, const Recording::Step& step, size_t call_at,
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
    mode_.rethrow_with_context(call.op());
  }
  if (!results_match(*rec.nodes[call_at], stack)) {
    // The same op on the same inputs gave other results (a kernel was
    // overridden in between): record it as captured.
    diverge();
    mode_.record_call(call.op(), mode_.node_args(saved), stack);
    mode_.remember_results(stack);
    return true;
  }
  track_inputs(inputs);
  size_t g = call_at + (stack.size() == 1 ? 0 : 1);  // the results' nodes: the call, or its getitems
  for (const Value& r : stack) {
    if (r.is_tensor() && r.to_tensor().defined()) mode_.track(r.to_tensor(), rec.nodes[g++]);
  }
  cursor_ = step.end;
  ++replayed_calls_;
  mode_.remember_results(stack);
  return true;
}

// track_inputs: makes the placeholders match() found the producers of their new tensors.
inline void Replayer::track_inputs(const std::vector<std::pair<Tensor, Node*>>& inputs) {
  for (const auto& [t, p] : inputs) {
    mode_.count_input_name(t);
    mode_.bound_[p] = t;
    mode_.track(t, p);
  }
}

// answer_fresh: answers the op of fresh_fakes step, matched to the node at
// call_at, with fresh fakes copied from the recording's, tracked and remembered.
inline void Replayer::answer_fresh(const Recording::Step& step, size_t call_at, Stack& stack) {
  const Recording& rec = *replay_;
  stack.clear();
  size_t g = call_at + (step.fakes_end - step.fakes_begin == 1 ? 0 : 1);  // the call, or its getitems
  for (uint32_t k = step.fakes_begin; k < step.fakes_end; ++k) {
    Tensor fake = internal::make_fake_like(rec.step_fakes[k]);
    mode_.track_new(fake, rec.nodes[g++]);
    mode_.captured_.emplace_back(IntrusivePtr<TensorImpl>::share_unpublished(fake.impl()));  // remember(fake), unlocked
    stack.emplace_back(std::move(fake));
  }
  cursor_ = step.end;
  ++replayed_calls_;
}

// switch_recording: moves to another candidate whose first `prefix` nodes
// equal replay_'s and that accepts fits; the tracked nodes follow by position.
template <class Fits>
bool Replayer::switch_recording(size_t prefix, Fits fits, const std::vector<const Recording*>& tried) {
  for (const auto& candidate : candidates_) {
    const Recording* r = candidate.get();
    if (r == replay_ || std::find(tried.begin(), tried.end(), r) != tried.end() || !fits(*r) ||
        !same_prefix(*replay_, *r, prefix)) {
      continue;
    }
    const Recording& from = *replay_;
    mode_.remap_nodes([&](Node* old) { return r->nodes[from.position.at(old)]; });
    absl::flat_hash_map<const Node*, Tensor> bound;
    for (auto& [p, t] : mode_.bound_) bound[r->nodes[from.position.at(p)]] = std::move(t);
    mode_.bound_ = std::move(bound);
    replay_ = r;
    return true;
  }
  return false;
}

// diverge: leaves replay: the capture mode's graph becomes the graph captured so far (the
// first cursor_ nodes of the recording, rebuilt in order, hence equally named).
void Replayer::diverge() {
  const Recording& rec = *replay_;
  std::vector<Node*> made(cursor_);
  auto remap = [&](const Node* old) { return made[rec.position.at(old)]; };
  for (size_t i = 0; i < cursor_; ++i) {
    const Node& n = *rec.nodes[i];
    switch (n.op()) {
      case NodeOp::kPlaceholder: made[i] = mode_.graph_.add_placeholder(n.name(), n.tensor_meta()); break;
      case NodeOp::kConstant: made[i] = mode_.graph_.add_constant(n.constant(), n.name()); break;
      case NodeOp::kGetItem: made[i] = mode_.graph_.add_getitem(remap(n.args()[0].as_node()), n.index()); break;
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
            for (const Node* x : a.as_node_list()) list.push_back(x == nullptr ? nullptr : remap(x));
            args.push_back(NodeArg::nodes(std::move(list)));
          }
        }
        made[i] = mode_.graph_.add_call(*n.target(), std::move(args), n.meta());
        break;
      }
      case NodeOp::kOutput: OPSPEC_INTERNAL_ASSERT(false);
    }
  }
  mode_.remap_nodes([&](Node* old) { return remap(old); });
  absl::flat_hash_map<const Node*, Tensor> bound;
  for (auto& [p, t] : mode_.bound_) bound[remap(p)] = std::move(t);
  mode_.bound_ = std::move(bound);
  replay_ = nullptr;
  replayed_calls_ = 0;
}

// flush: ends a graph that matched a recording to its last node with
// the same values held: runs the recording's compiled graph when its guards
// pass. False (nothing done) otherwise.
bool Replayer::flush() {
  if (cursor_ == 0) {  // nothing captured
    mode_.end_graph();
    return true;
  }
  const std::vector<Tensor> held = mode_.held_tensors();
  std::vector<const Node*> outputs;
  for (const Tensor& t : held) outputs.push_back(mode_.node_of(t));
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
  for (const Node* p : replay_->inputs) inputs.push_back(mode_.bound_.at(p));
  if (replay_->entry->guards.first_failure(inputs)) return false;
  const std::shared_ptr<const CacheEntry> entry = replay_->entry;
  ++mode_.position_;
  if (mode_.trace_once()) {  // a plan keeps the recording it replayed
    for (const auto& candidate : candidates_) {
      if (candidate.get() == replay_) mode_.remember_last(inputs, held, candidate);
    }
  }
  mode_.run_and_fill(entry->compiled, inputs, held);
  mode_.end_graph();
  return true;
}

}  // namespace opspec::internal
