// replayer.h: internal: Replayer, the part of a capture that matches a
// call's ops against recordings of earlier calls and answers them without
// building a graph. See Note [Replaying a capture] in replay.cc.
#pragma once

#include <memory>
#include <utility>
#include <vector>

#include "runtime/compile/internal/recording.h"

namespace opspec::internal {

class CaptureMode;

// Replayer: the replay state machine of one capture mode: matching (match,
// match_tracked), answering (replay_matched, answer_fresh), moving to another
// recording (switch_recording), leaving replay (diverge) and ending a graph
// that matched to its end (flush). Used by its CaptureMode only.
class Replayer {
 public:
  explicit Replayer(CaptureMode& mode) : mode_(mode) {}

  // start: a new graph begins: candidates are its position's recordings,
  // most recent first; replay starts with the first, if any.
  void start(std::vector<std::shared_ptr<const Recording>> candidates);
  // active: a recording is being matched (else ops are captured into a graph).
  bool active() const { return replay_ != nullptr; }
  // recording: the recording being matched, or null.
  const Recording* recording() const { return replay_; }
  // replayed_calls: the ops answered from the recording in this graph.
  size_t replayed_calls() const { return replayed_calls_; }

  // answer_without_ops: the usual replayed op (the next recorded node, every
  // tensor argument tracked, fresh fakes allowed) answered while the capture
  // is still on its mode stack (See Note [Answers that run no op]).
  bool answer_without_ops(const OperatorHandle& op, Stack& stack);
  // replay: handles the call by matching it against the recording; false
  // when it does not match (replay then ended, see diverge).
  bool replay(OpCall& call);
  // replay_grad_mode: matches a change of grad mode to enabled against the
  // recording's next node, a _set_grad_enabled node (See Note [Grad mode
  // nodes]); false when it does not match (replay then ended).
  bool replay_grad_mode(bool enabled);
  // flush: ends a graph that matched a recording to its last node with the
  // same values held: runs the recording's compiled graph when its guards
  // pass. False (nothing done) otherwise.
  bool flush();
  // diverge: leaves replay: the capture mode's graph becomes the graph
  // captured so far (the recording's first nodes, rebuilt in order).
  void diverge();

 private:
  bool match(const OperatorHandle& op, const Stack& stack, std::vector<std::pair<Tensor, Node*>>& inputs,
             size_t* call_at) const;
  const Recording::Step* match_tracked(const OperatorHandle& op, const Stack& stack,
                                       bool* subclassed = nullptr) const;
  bool replay_tracked(OpCall& call, const Recording::Step& step);
  bool replay_matched(OpCall& call, const Recording::Step& step, size_t call_at,
                      const std::vector<std::pair<Tensor, Node*>>& inputs);
  void track_inputs(const std::vector<std::pair<Tensor, Node*>>& inputs);
  void answer_fresh(const Recording::Step& step, size_t call_at, Stack& stack);
  template <class Fits>
  bool switch_recording(size_t prefix, Fits fits, const std::vector<const Recording*>& tried = {});

  CaptureMode& mode_;
  std::vector<std::shared_ptr<const Recording>> candidates_;  // this position's recordings
  const Recording* replay_ = nullptr;  // the one being matched, or null: capturing into the mode's graph
  size_t cursor_ = 0;                  // its next node to match
  size_t replayed_calls_ = 0;
};

}  // namespace opspec::internal
