// capture.h: internal: the state of a compiled function (its cache and
// statistics) and the capture session one call runs under. See Note [The
// warm path] below and Note [Lazy capture] in compile.h.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/compile/internal/break_policy.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/internal/recording.h"
#include "runtime/dispatch/mode.h"
#include "runtime/dispatch/mode.h"

namespace opspec::internal {

// Note [The warm path]
// One call of a compiled function, from call to result, file by file:
//  1. compile.cc, CompiledFunction::operator(): counts the call; falls back to
//     fn when compiling is off; under trace_once runs a kept plan instead of
//     fn when the inputs fit one (trace_once.cc, Note [Trace once]).
//  2. capture.cc, CaptureSession::run: pushes the capture's fake mode and its
//     CaptureMode at PreDispatch, installs the data-access hook, runs fn.
//  3. Each op fn calls reaches the CaptureMode (capture_mode.cc):
//     - break_policy.h decides first whether the op ends the graph
//       (disallow_in_graph, item()); then the op runs eagerly between graphs;
//     - while a recording of this graph position is being matched, the
//       Replayer (replay.cc, Note [Replaying a capture]) answers the op with
//       fresh fakes copied from the recording, most ops without leaving the
//       mode stack (answer_without_ops); at the first mismatch it rebuilds the
//       graph captured so far and capture goes on;
//     - otherwise ProxyTensorMode records the op as a graph node on fakes.
//  4. At a break (break_policy.h: an error under fullgraph) and when fn
//     returns, CaptureMode::flush ends the graph: a fully matched recording
//     runs its cache entry's compiled graph once its guards pass; a captured
//     graph is pruned, kept as a Recording for later calls (recording.h: the
//     graph as captured plus its compact steps and its cache entry), looked
//     up by program and guards in CompiledState (compile.cc: a hit, or the
//     backend compiles it), and run; every fake the program still holds is
//     then filled with its value. A trace_once plan keeps the recording of
//     the graph it runs, so its entry is the one replay would run.
//  5. fn returns real tensors; under trace_once a call that ran one graph
//     and read no data keeps a plan for later calls (trace_once.cc).

class CaptureMode;

// TracedPlan: a call of a trace_once function kept so that later calls with
// inputs like its own run the graph without running fn. See Note [Trace
// once] in trace_once.cc.
struct TracedPlan {
  // InputMeta: what one fn input must look like (all of it: no dim is dynamic).
  struct InputMeta {
    bool defined = false;
    DType dtype = DType::kFloat32;
    Device device = kCPU;
    SizeVec sizes, strides;
    size_t same_as = 0;  // the first input that is this very tensor (itself when none)
  };
  std::vector<InputMeta> inputs;
  DispatchKeySet included, excluded;  // the thread's key adjustments during the trace
  bool grad_enabled = true;           // the grad mode around the traced call (a later call must share it)
  bool graph_grad_enabled = true;     // the mode its graph is entered in (See Note [Grad mode nodes])
  // graph_inputs: per graph input, >= 0: fn input i; < 0: kept[-1 - i], a
  // tensor fn closed over.
  std::vector<int> graph_inputs;
  std::vector<Tensor> kept;
  // outputs: per fn output, >= 0: graph result k; kUndefined; else fn input -2 - o.
  static constexpr int kUndefined = -1;
  std::vector<int> outputs;
  size_t num_results = 0;
  // recording: the graph's recording, whose cache entry runs (warm calls'
  // replay and plans share it); null when fn ran no op.
  std::shared_ptr<const Recording> recording;
};

// LastGraph: what the last graph of a call ran with (kept under trace_once).
struct LastGraph {
  std::vector<Tensor> inputs;              // the graph's real inputs, in order
  std::vector<const TensorImpl*> results;  // the captured tensors it filled, in order
  std::shared_ptr<const Recording> recording;  // null when it ran eagerly (past cache_size_limit)
  bool grad_enabled = true;                    // the grad mode it ran under
};

// CompiledState: what a CompiledFunction shares between its copies and calls.
struct CompiledState {
  TracedFunction fn;
  CompileOptions options;
  Backend backend;

  std::mutex mu;  // guards everything below
  std::vector<std::vector<std::shared_ptr<const CacheEntry>>> positions;  // entries by graph index within a call
  std::vector<std::vector<std::shared_ptr<const Recording>>> recordings;   // by graph index, most recent first
  std::vector<bool> limited;  // by graph index: its cache_size_limit was reached (warned once)
  std::set<std::tuple<size_t, std::string, std::string>> breaks_seen;  // (position, reason, user site)
  std::vector<std::shared_ptr<const TracedPlan>> plans;  // trace_once only, most recent first
  CompileStats stats;

  // compiled_for: the compiled graph for graph (the position-th of its call)
  // on inputs: a cache hit, or the backend's result on a miss (a recompile
  // when the position had entries). Throws RecompileError under error_on_recompile.
  // reads: the values the call read with item(), to name them in a recompile
  // reason (See Note [Values read with item()]).
  // sources: each input's guard source (L['x'] for fn's inputs). cache_only:
  // run(fn)'s call: a miss runs the graph eagerly and compiles nothing.
  // guard_fail_fn and guard_export_fn run once mu is released.
  CompiledFor compiled_for(const Graph& graph, const std::vector<Tensor>& inputs,
                           const std::vector<std::string>& names, const std::vector<std::string>& sources,
                           size_t position, const std::vector<ItemRead>& reads = {}, bool cache_only = false);
  // dynamic_dims_for: per input, the dims to make symbols (marks, options.dynamic,
  // automatic dynamic; See Note [Automatic dynamic] in compile.cc). mu held.
  std::vector<uint64_t> dynamic_dims_for(const std::vector<Tensor>& inputs,
                                         const std::vector<std::string>& sources) const;
  // note_size_changes: remembers the dims whose size differs from last's (mu held).
  void note_size_changes(const GuardSet& last, const std::vector<Tensor>& inputs);
  absl::flat_hash_map<std::string, uint64_t> automatic_dynamic;  // by source: dims made dynamic
  // recordings_at: the recordings of a graph position (takes mu).
  std::vector<std::shared_ptr<const Recording>> recordings_at(size_t position);
  // add_recording: keeps r first among its position's recordings (takes mu).
  void add_recording(size_t position, std::shared_ptr<const Recording> r);
  // note_break: records b unless tracing did not find it (See Note [Breaks
  // are counted when traced]); whether it did.
  bool note_break(const GraphBreak& b, size_t position, bool traced);
  // clear: forgets every cache entry and statistic (mu must be held).
  void clear();

 private:
  CompiledFor compiled_for_locked(const Graph& graph, const std::vector<Tensor>& inputs,
                                  const std::vector<std::string>& names, const std::vector<std::string>& sources,
                                  size_t position, const std::vector<ItemRead>& reads, bool cache_only,
                                  std::optional<GuardFailure>& failed, std::optional<GuardSet>& exported);
};

// CaptureSession: one call of a compiled function under capture.
class CaptureSession {
 public:
  // cache_only: a call of run(fn): graphs not in the cache run eagerly, uncompiled.
  CaptureSession(CompiledState& state, const std::vector<Tensor>& inputs, bool cache_only = false);
  ~CaptureSession();
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  // run: calls fn under capture and runs the last graph at its return.
  std::vector<Tensor> run();
  // breaks the pending graph: records why (checking fullgraph), then flushes.
  void break_graph(BreakKind kind, std::string_view subject, std::string user_site);
  // flush: runs the pending graph and fills in every captured tensor still
  // held; whether it compiled the graph (a miss, not a hit or eager fallback).
  bool flush();
  // suspended: ops run eagerly, nothing is captured (inside disable(), and
  // while a graph or an eager op runs).
  bool suspended() const { return suspended_ > 0; }
  void suspend();
  void resume();
  // has_pending_ops: the pending graph has at least one call.
  bool has_pending_ops() const;
  // current: this thread's innermost session, or null.
  static CaptureSession* current();
  // note_data_read: fn read a tensor's data (the call's ops may depend on it).
  void note_data_read() { data_read_ = true; }
  // note_item_read, item_reads: the values this call read with item(), in order.
  void note_item_read(ItemRead r) { item_reads_.push_back(std::move(r)); }
  const std::vector<ItemRead>& item_reads() const { return item_reads_; }
  bool cache_only() const { return cache_only_; }

 private:
  friend class CaptureMode;
  CompiledState& state_;
  std::vector<Tensor> inputs_;
  bool cache_only_ = false;
  int suspended_ = 0;
  bool data_read_ = false;  // for Note [Trace once]
  std::vector<ItemRead> item_reads_;
  bool broke_ = false;
  bool enabled_pre_dispatch_ = false;  // run() turned the PreDispatch key on (it was off)
  bool pre_dispatch_lifted_ = false;   // suspend() turned it off again
  bool excluded_autograd_ = false;     // run() excluded the Autograd key; suspend() lifts it
  std::shared_ptr<DispatchMode> parked_fake_;     // the fake mode, out of the way while suspended
  std::shared_ptr<DispatchMode> parked_capture_;  // the capture mode, likewise (see suspend())
  // The user's dispatch and function modes, hidden while capturing. See Note
  // [Modes around a compiled call].
  // Hides the Python and FunctionMode user modes while fn runs under capture
  // (a guard, so a mode whose guard ends meanwhile never comes back).
  std::optional<HideUserModesGuard> hidden_modes_;
  void hide_user_modes();
  void show_user_modes();
  std::unique_ptr<CaptureMode> impl_;  // See capture_mode.h
  CaptureSession* previous_;
};

// SuspendCapture: the session's ops run eagerly for this scope.
class SuspendCapture {
 public:
  explicit SuspendCapture(CaptureSession* s) : s_(s) {
    if (s_) s_->suspend();
  }
  ~SuspendCapture() {
    if (s_) s_->resume();
  }
  SuspendCapture(const SuspendCapture&) = delete;
  SuspendCapture& operator=(const SuspendCapture&) = delete;

 private:
  CaptureSession* s_;
};

// find_plan: a trace_once plan of state whose inputs are like these, or null
// (mu must be held). keep_plan: makes a plan of the call that just returned
// outputs having run one graph (last) or none (null), when it qualifies.
// run_plan: runs a plan. See Note [Trace once] in trace_once.cc.
std::shared_ptr<const TracedPlan> find_plan(const CompiledState& state, const std::vector<Tensor>& inputs);
void keep_plan(CompiledState& state, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
               const LastGraph* last);
std::vector<Tensor> run_plan(CompiledState& state, const TracedPlan& plan, const std::vector<Tensor>& inputs);

// format_site: "file.cc:42 in fn" ("" for null).
std::string format_site(const std::source_location* loc);

// disabled_depth: how many recursive disable() scopes are active on this thread.
int& disabled_depth();

}  // namespace opspec::internal
