// capture_mode.h: internal: CaptureMode, the mode a capture session pushes
// at PreDispatch: it records each op as a graph node on fake tensors, names
// graph inputs, breaks the graph where the break policy says, and at each
// flush compiles (or looks up) the graph and runs it, filling the fakes the
// program still holds with real values. Its Replayer answers warm calls from
// recordings. See Note [The warm path] in capture.h.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "runtime/compile/internal/capture.h"
#include "runtime/compile/internal/replayer.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/trace/proxy_tensor.h"

namespace opspec::internal {

// The fake mode of a capture session; it declines while the session is suspended.
class CaptureFakeMode : public FakeTensorMode {
 public:
  explicit CaptureFakeMode(const CaptureSession& session) : session_(session) {}
  bool dispatch(OpCall& call) override { return session_.suspended() ? false : FakeTensorMode::dispatch(call); }

 private:
  const CaptureSession& session_;
};

// CaptureMode: one call's capture (See Note [Lazy capture] in compile.h).
class CaptureMode : public ProxyTensorMode {
 public:
  CaptureMode(CaptureSession& session, const std::vector<Tensor>& fn_inputs,
              const std::vector<std::string>& input_names);

  bool dispatch(OpCall& call) override;
  // answer_without_ops: the Replayer's (defined in replay.cc).
  bool answer_without_ops(const OperatorHandle& op, Stack& stack) override;

  // has_pending_ops: the pending graph has at least one call.
  bool has_pending_ops() const;
  // flush: ends the pending graph: replays a recording's compiled graph, or
  // compiles (a cache lookup first) and runs the captured one. Whether this
  // call compiled it (a graph traced: See Note [Breaks are counted when traced]).
  bool flush();

  CaptureFakeMode& fake() { return fake_; }
  // graphs_run: how many graphs this call ran so far; last_graph: the latest
  // one's inputs, results and entry (kept only under trace_once).
  size_t graphs_run() const { return position_; }
  const LastGraph& last_graph() const { return last_; }

 protected:
  // on_untracked: a real tensor the graph has not produced is a graph input.
  Node* on_untracked(const Tensor& t) override;

 private:
  friend class Replayer;

  // input_name: the placeholder name for real tensor t (with `taken` more
  // tmp/captured names handed out before it); take_input_name hands it out.
  std::string input_name(const Tensor& t, int tmp_taken = 0, int captured_taken = 0) const;
  std::string take_input_name(const Tensor& t);
  // count_input_name: take_input_name without building the name (replay knows it).
  void count_input_name(const Tensor& t);
  // has_input_name: input_name(t, ...) == name, without building a string for
  // fn's inputs (every warm call matches each of them against its placeholder).
  bool has_input_name(const Tensor& t, std::string_view name, int tmp_taken, int captured_taken) const;
  // fn_input_index: which of fn's inputs t is (the last, when passed twice), or -1.
  int fn_input_index(const Tensor& t) const;
  // sync_capture_grad_mode: notes the grad mode at an op, or records (or
  // replays) a change of it (See Note [Grad mode nodes]).
  void sync_capture_grad_mode();
  // break_and_run_eagerly: applies the break policy, then runs the op eagerly.
  bool break_and_run_eagerly(OpCall& call, BreakKind kind, std::string_view subject);
  // trace_once: the function keeps plans (See Note [Trace once]).
  bool trace_once() const { return session_.state_.options.trace_once; }
  // remember_last: under trace_once, what the graph just run ran with.
  void remember_last(const std::vector<Tensor>& inputs, const std::vector<Tensor>& held,
                     std::shared_ptr<const Recording> recording);
  // held_tensors: the remembered fake tensors the program still holds, in the
  // order first remembered.
  std::vector<Tensor> held_tensors() const;
  // remember: a tensor this graph produced, filled in at flush if still held.
  // A tensor may be remembered more than once (an in-place op returns its
  // input); held_tensors() accounts for that instead of a lookup per result.
  void remember(const Tensor& t) { captured_.push_back(t); }
  // remember_results: remember() for each fake result of an op.
  void remember_results(const Stack& results);
  // run_and_fill: runs a compiled graph on the real inputs and fills every
  // held fake tensor in place with its real value.
  void run_and_fill(const CompiledGraph& compiled, const std::vector<Tensor>& inputs, const std::vector<Tensor>& held);
  // start_graph / end_graph: per-graph state; a graph starts replaying the
  // latest recording of its position, if any.
  void start_graph();
  void end_graph();
  // prunable: whether flush will remove nodes from the graph once outputs are
  // set (dead-code elimination, unused placeholders).
  bool prunable(const std::vector<Node*>& outputs) const;

  Graph graph_;  // constructed before the base class uses it: see the constructor
  CaptureSession& session_;
  CaptureFakeMode fake_;
  const std::vector<Tensor>& fn_inputs_;               // the session's, which outlives this
  const std::vector<std::string>& fn_input_names_;     // CompileOptions::input_names
  absl::flat_hash_map<const Node*, Tensor> bound_;  // placeholder -> real tensor
  std::vector<Tensor> captured_;  // remembered results, possibly more than once each
  absl::flat_hash_set<const TensorImpl*> materialized_;
  size_t position_ = 0;
  // graph_entry_grad_mode_: the grad mode when the pending graph's capture
  // started, which the graph runs under (See Note [Grad mode nodes]).
  std::optional<bool> graph_entry_grad_mode_;
  int next_tmp_ = 0;
  int next_captured_ = 0;
  LastGraph last_;
  Replayer replayer_{*this};  // See Note [Replaying a capture]
};

}  // namespace opspec::internal
