// recording.h: internal: the compact recorded IR of the compiler's warm
// path: a cache entry (one compiled graph and its guards) and a Recording
// (the graph as captured, laid out as steps a replay compares against), with
// the comparisons replay makes. See Note [The warm path] in capture.h.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/internal/scalar_holes.h"
#include "runtime/dispatch/mode.h"

namespace opspec::internal {

// CacheEntry: one compiled graph, for one program at one graph position.
struct CacheEntry {
  uint64_t program = 0;  // Graph::structural_hash(false), or holes_hash with holes
  GuardSet guards;       // the graph's inputs, then one per hole
  CompiledGraph compiled;
  // holes: numbers made inputs (See Note [Values read with item()]): the
  // compiled graph takes their values after the graph's own inputs.
  std::vector<ScalarSlot> holes;
  std::shared_ptr<const Graph> graph;  // as compiled, before holes: to say what changed
};

// CompiledFor: what CompiledState::compiled_for found or built: the compiled
// graph, and its cache entry (null when it runs eagerly past cache_size_limit).
struct CompiledFor {
  CompiledGraph compiled;
  std::shared_ptr<const CacheEntry> entry;
  bool compiled_now = false;  // a miss this lookup compiled (not a hit, not an eager fallback)
};

// Recording: one graph as a call captured it, kept so that later calls which
// capture the same ops can skip building and looking up the graph. See Note
// [Replaying a capture] in replay.cc.
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

}  // namespace opspec::internal
