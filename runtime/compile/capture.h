// capture.h: internal: the state of a compiled function (its cache and
// statistics) and the capture session one call runs under. See Note [Lazy
// capture] in compile.h.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/compile/compile.h"
#include "runtime/dispatch/mode.h"

namespace opspec::internal {

// CacheEntry: one compiled graph, for one program at one graph position.
struct CacheEntry {
  uint64_t program = 0;  // Graph::structural_hash(false)
  GuardSet guards;
  CompiledGraph compiled;
};

// CompiledFor: what CompiledState::compiled_for found or built: the compiled
// graph, and its cache entry (null when it runs eagerly past cache_size_limit).
struct CompiledFor {
  CompiledGraph compiled;
  std::shared_ptr<const CacheEntry> entry;
};

// Recording: one graph as a call captured it, kept so that later calls which
// capture the same ops can skip building and looking up the graph. See Note
// [Replaying a capture] in capture.cc.
struct Recording {
  // Step / StepArg: a call node as replay compares against it, laid out
  // contiguously (walking the nodes themselves missed the cache on every op).
  struct StepArg {
    enum class Kind : uint8_t { kNode, kValue, kNone, kOther } kind = Kind::kOther;  // kOther: a node list
    // Numbers are compared against a copy of their bits kept here: the
    // recorded Value lives in its node, a cache miss per replayed op.
    enum class Bits : uint8_t { kNone, kInt, kDouble, kBool, kWrappedNumber } bits_kind = Bits::kNone;
    DType wrapped_dtype = DType::kFloat32;  // kWrappedNumber: its dtype
    const Node* node = nullptr;    // kNode: the producer
    const Value* value = nullptr;  // kValue: the recorded value
    uint64_t bits = 0;             // bits_kind's value, bitwise (a wrapped number's element, zero-padded)
  };
  struct Step {
    const OperatorHandle* op = nullptr;  // null: not a call node
    uint32_t args_begin = 0, args_end = 0;  // step_args[begin, end)
    uint32_t end = 0;                       // the cursor after the call and its getitems (0: laid out otherwise)
    uint32_t fakes_begin = 0, fakes_end = 0;  // fresh_fakes: step_fakes[begin, end), one per result
    bool fresh_fakes = false;                 // results all tensors and op functional: see replay_matched()
  };

  Graph raw;                   // as captured (with its output node when pruning removed nothing)
  std::vector<Node*> nodes;    // raw's nodes in order, the output node left out
  std::vector<Step> steps;     // per node (see index_steps)
  std::vector<StepArg> step_args;
  std::vector<Tensor> step_fakes;  // per result of a fresh_fakes step: a fake with its metadata, to copy
  absl::flat_hash_map<const Node*, uint32_t> position;  // index in nodes
  std::vector<const Node*> held;    // the captured values still held at flush (the outputs), in order
  std::vector<const Node*> inputs;  // the placeholders left after dead-code elimination, in order
  std::shared_ptr<const CacheEntry> entry;  // what the graph compiled to, and its guards
};

// index_steps: fills r.steps, r.step_args and r.step_fakes from r.nodes.
void index_steps(Recording& r);
// record_copy: a Recording of a copy of graph as captured; outputs are the
// nodes held at flush. Its inputs are filled in once pruning is done.
Recording record_copy(const Graph& graph, const std::vector<Node*>& outputs);
// record_whole: a Recording of a finished graph that pruning left as
// captured (its output node aside), taking it over.
Recording record_whole(Graph graph);
// results_match: whether an op's results have call node n's recorded metadata.
bool results_match(const Node& n, const Stack& results);

// kMaxRecordings: recordings kept per graph position (most recent first).
inline constexpr size_t kMaxRecordings = 8;

// same_as_recorded: same_value(*a.value, v) for a recorded value argument,
// read from a's copy of its bits when it has one.
bool same_as_recorded(const Recording::StepArg& a, const Value& v);
// same_value: whether two op arguments are interchangeable when replaying:
// by value for numbers (bitwise for doubles, so -0.0 is not 0.0) and for
// wrapped-number scalars, by identity for other tensors.
bool same_value(const Value& a, const Value& b);
// same_prefix: the first n nodes of a and b are interchangeable (ops, names,
// values, producers by position, metadata).
bool same_prefix(const Recording& a, const Recording& b, size_t n);
// observed: whether anything besides the capture could see an op with these
// arguments run below the PreDispatch key (user modes at any key, an outer
// tracer's proxy mode, tensor subclasses). own_pre_dispatch_modes: how many
// PreDispatch modes are the capture itself (1 while it answers on its stack).
bool observed(const Stack& stack, size_t own_pre_dispatch_modes = 0);
// modes_observe: observed()'s question about modes alone (no tensor's
// subclass). At the Python key the capture's own fake mode is expected; any
// other mode there is not.
inline bool modes_observe(size_t own_pre_dispatch_modes) {
  const ModeCensus modes = mode_census();
  return modes.function > 0 || modes.pre_dispatch > own_pre_dispatch_modes || modes.python > 0 || modes.proxy;
}

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
  // graph_inputs: per graph input, >= 0: fn input i; < 0: kept[-1 - i], a
  // tensor fn closed over.
  std::vector<int> graph_inputs;
  std::vector<Tensor> kept;
  // outputs: per fn output, >= 0: graph result k; kUndefined; else fn input -2 - o.
  static constexpr int kUndefined = -1;
  std::vector<int> outputs;
  size_t num_results = 0;
  std::shared_ptr<const CacheEntry> entry;  // null when fn ran no op
};

// LastGraph: what the last graph of a call ran with (kept under trace_once).
struct LastGraph {
  std::vector<Tensor> inputs;              // the graph's real inputs, in order
  std::vector<const TensorImpl*> results;  // the captured tensors it filled, in order
  std::shared_ptr<const CacheEntry> entry;
};

// BreakKind: why a graph ended early; each kind has PyTorch-style text.
enum class BreakKind : uint8_t { kUser, kDisallowedOp, kDataDependent, kDisabledFunction, kNoMetaKernel };

// CompiledState: what a CompiledFunction shares between its copies and calls.
struct CompiledState {
  TracedFunction fn;
  CompileOptions options;
  Backend backend;

  std::mutex mu;  // guards everything below
  std::vector<std::vector<std::shared_ptr<const CacheEntry>>> positions;  // entries by graph index within a call
  std::vector<std::vector<std::shared_ptr<const Recording>>> recordings;   // by graph index, most recent first
  int entries = 0;
  std::vector<std::shared_ptr<const TracedPlan>> plans;  // trace_once only, most recent first
  CompileStats stats;

  // compiled_for: the compiled graph for graph (the position-th of its call)
  // on inputs: a cache hit, or the backend's result on a miss (a recompile
  // when the position had entries). Throws RecompileError under error_on_recompile.
  CompiledFor compiled_for(const Graph& graph, const std::vector<Tensor>& inputs,
                           const std::vector<std::string>& names, size_t position);
  // recordings_at: the recordings of a graph position (takes mu).
  std::vector<std::shared_ptr<const Recording>> recordings_at(size_t position);
  // add_recording: keeps r first among its position's recordings (takes mu).
  void add_recording(size_t position, std::shared_ptr<const Recording> r);
  void record_break(const GraphBreak& b);
  // clear: forgets every cache entry and statistic (mu must be held).
  void clear();
};

// CaptureSession: one call of a compiled function under capture.
class CaptureSession {
 public:
  CaptureSession(CompiledState& state, const std::vector<Tensor>& inputs);
  ~CaptureSession();
  CaptureSession(const CaptureSession&) = delete;
  CaptureSession& operator=(const CaptureSession&) = delete;

  // run: calls fn under capture and runs the last graph at its return.
  std::vector<Tensor> run();
  // breaks the pending graph: records why (checking fullgraph), then flushes.
  void break_graph(BreakKind kind, std::string_view subject, std::string user_site);
  // flush: runs the pending graph and fills in every captured tensor still held.
  void flush();
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

  class Impl;

 private:
  friend class Impl;
  CompiledState& state_;
  std::vector<Tensor> inputs_;
  int suspended_ = 0;
  bool data_read_ = false;  // for Note [Trace once]
  bool broke_ = false;
  bool enabled_pre_dispatch_ = false;  // run() turned the PreDispatch key on (it was off)
  bool pre_dispatch_lifted_ = false;   // suspend() turned it off again
  std::shared_ptr<DispatchMode> parked_fake_;     // the fake mode, out of the way while suspended
  std::shared_ptr<DispatchMode> parked_capture_;  // the capture mode, likewise (see suspend())
  std::unique_ptr<Impl> impl_;
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

// disallowed_op_count: how many ops are marked with disallow_in_graph, read
// without a lock (most programs mark none; every captured op asks).
extern constinit std::atomic<size_t> disallowed_op_count;
// op_disallowed_locked: op_disallowed's lookup (controls.cc).
bool op_disallowed_locked(const OperatorHandle& op);
// op_disallowed: op was marked with disallow_in_graph.
inline bool op_disallowed(const OperatorHandle& op) {
  return disallowed_op_count.load(std::memory_order_acquire) != 0 && op_disallowed_locked(op);
}

// format_site: "file.cc:42 in fn" ("" for null).
std::string format_site(const std::source_location* loc);

// disabled_depth: how many recursive disable() scopes are active on this thread.
int& disabled_depth();

}  // namespace opspec::internal
