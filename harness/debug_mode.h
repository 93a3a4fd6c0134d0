// debug_mode.h: DebugMode, a dispatch mode that records every op as a compact
// structured log and renders it in PyTorch's DebugMode format on request.
// See Note [DebugMode log format].
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "harness/tensor_hash.h"
#include "runtime/dispatch/mode.h"

namespace opspec {

// Note [DebugMode log format]
// debug_string() follows PyTorch's DebugMode (torch/utils/_debug_mode.py):
// each line is "  " + "  " * depth + entry; dispatched ops sit one level below
// the enclosing function call or module (so 4 spaces at top level); outputs
// follow "  ->  " and annotations "  # " (two spaces each side, as PyTorch
// prints them); tensors render as t: f32[8, 8] (ft for fake tensors, t$3 with
// record_ids); arguments follow the dispatcher's rule (trailing positional
// defaults dropped, keyword-only ones shown as k=v when not default); hash
// annotations are Python dict reprs {'input_hash': (args, kwargs), 'hash': h}.

// DebugModeOptions: what a DebugMode records (PyTorch's constructor keywords).
struct DebugModeOptions {
  bool record_output = true;          // "  ->  outputs"
  bool record_ids = false;            // t$0, t$1, ... by tensor identity
  bool record_stack_trace = false;    // "# File: model.cc:59 in run_once" headers
  bool full_stack_traces = false;     // also keep a symbolized stack (absl) per op; slower
  bool record_nn_module = false;      // "[nn.Mod] Bar.abc.l1" headers
  bool record_function_level = false; // function-mode calls (linear, matmul) above their aten ops
  bool record_fake = false;           // ops on fake tensors (rendered ft)
  bool record_real = true;            // ops on real tensors
};

// RecordedTensor: a tensor's metadata at record time (no reference is kept).
struct RecordedTensor {
  DType dtype = DType::kFloat32;
  SizeVec sizes;
  int64_t id = -1;    // with record_ids
  bool fake = false;  // rendered "ft"
  bool none = false;  // a None entry of a Tensor?[] list (index's indices), rendered None
};

// RecordedValue: one argument or output: a tensor, a list of tensors, or any
// other value (kept boxed and rendered only when asked).
struct RecordedValue {
  enum class Kind : uint8_t { kTensor, kTensorList, kOther };
  Kind kind = Kind::kOther;
  absl::InlinedVector<RecordedTensor, 1> tensors;  // one for kTensor (inline: no allocation)
  Value value;                          // kOther
  std::string name;                     // keyword name ("" for positional)
  const ArgType* type = nullptr;        // schema type, for rendering layouts etc.
  std::string rendered;                 // logs loaded from JSON: the saved text of kOther
};

// other_value_text: the text a kOther value renders as (its saved text for a
// loaded log, else its schema type's format); logs compare and save it.
std::string other_value_text(const RecordedValue& v);

// HashNode: the hashes of one argument or output, mirroring its structure:
// a tensor's hashes (one per hash function), None, or a list of nodes.
struct HashNode {
  enum class Kind : uint8_t { kNone, kHashes, kList };
  Kind kind = Kind::kNone;
  std::vector<HashValue> hashes;
  std::vector<HashNode> items;
  std::string name;  // keyword name for kwargs ("" for positional)
};

// DebugCall: one log entry: an op, a function-level call, a module boundary or
// a kernel launched outside the dispatcher (e.g. a fused kernel).
struct DebugCall {
  enum class Kind : uint8_t { kOp, kFunction, kModule, kKernel };
  Kind kind = Kind::kOp;
  int depth = 0;
  std::string name;  // "aten::mm", module fqn, or kernel name
  std::string kernel_prefix;  // kernels: "fused", "cuda", ...
  std::vector<RecordedValue> args;
  std::vector<RecordedValue> outputs;
  bool has_outputs = false;
  std::optional<std::source_location> site;  // with record_stack_trace
  std::string site_text;  // "model.cc:59 in run_once"; set for loaded logs (no site)
  std::string stack;      // symbolized stack with full_stack_traces
  // Hashes (with log_tensor_hashes). hash_tuple: several hash functions, or a
  // list given, so each tensor's hash renders as a tuple.
  std::optional<std::vector<HashNode>> input_hash;
  std::optional<std::vector<HashNode>> output_hash;
  bool hash_tuple = false;
  bool hashed = false;  // a 'hash' entry exists (even if None)
  // Hook annotations: log ones render inline, record ones are only stored.
  std::vector<std::pair<std::string, std::string>> log;
  std::vector<std::pair<std::string, std::string>> record;
  // Kernels: hashes of named buffers before and after the launch.
  std::vector<std::pair<std::string, std::vector<HashValue>>> pre_kernel_hashes;
  std::vector<std::pair<std::string, std::vector<HashValue>>> post_kernel_hashes;

  // clear: empties the entry like a new one but keeps its buffers, for reuse.
  void clear();

  // render: this entry's text without indentation (one line, or several for kernels).
  std::string render(const DebugModeOptions& options) const;
  // site_summary: "model.cc:59 in run_once" or "" when no site was recorded.
  std::string site_summary() const;
};

// DispatchHook: a callback given (op call, results or null) returning
// key/value annotations; values are rendered text (use HashValue::str etc.).
using DispatchHook =
    std::function<std::vector<std::pair<std::string, std::string>>(const OpCall& call, const Stack* results)>;

// DebugMode: records every op dispatched while it is active, including
// factory functions. RAII: `DebugMode dm; { auto scope = dm.enter(); ... }`
// (enter clears the log first), or `DebugMode::Scope s(dm)` to add to the
// log. See Note [DebugMode log format].
class DebugMode : public DispatchMode {
 public:
  explicit DebugMode(DebugModeOptions options = {});
  ~DebugMode() override;

  // Scope: pushes this mode (and its function-level and module hooks) for its lifetime.
  class Scope {
   public:
    explicit Scope(DebugMode& mode);
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
  };
  // enter: a Scope; the log is cleared first, as PyTorch's __enter__ does.
  [[nodiscard]] Scope enter() { return Scope(*this); }

  // logs: the recorded entries.
  absl::Span<const DebugCall> logs() const { return {calls_.data(), size_}; }
  // reset: clears the log and the tensor ids.
  void reset();
  // debug_string: the log as text; stack-trace headers when show_stack_trace
  // (default: the record_stack_trace option).
  std::string debug_string(std::optional<bool> show_stack_trace = std::nullopt) const;
  const DebugModeOptions& options() const { return options_; }

  // set_enabled: suspends (false) or resumes recording without leaving the scope;
  // ops run normally while suspended.
  void set_enabled(bool enabled) { enabled_ = enabled; }
  bool enabled() const { return enabled_; }

  // record_kernel: logs a kernel that is not a dispatched op (fused CPU kernels,
  // CUDA kernels) with every active DebugMode: "[prefix] name(in0=t: f32[3, 3], n=9)".
  // Returns a token whose finish() adds the post-kernel hashes after the launch.
  class KernelRecord {
   public:
    KernelRecord() = default;
    // finish: call after the kernel ran; hashes the tensor arguments again.
    void finish();

   private:
    friend class DebugMode;
    std::vector<std::pair<DebugMode*, size_t>> entries_;
    std::vector<std::pair<std::string, Value>> kwargs_;
  };
  static KernelRecord record_kernel(std::string_view prefix, std::string_view name,
                                    std::vector<std::pair<std::string, Value>> kwargs);

  // HashScope: PyTorch's log_tensor_hashes(hash_fn, hash_inputs): annotates
  // every recorded call with output hashes ('hash') and, with hash_inputs,
  // pre-op input hashes ('input_hash'). A single kind renders bare values; a
  // list (as_tuple) renders a tuple per tensor.
  class HashScope {
   public:
    HashScope(std::vector<HashKind> kinds, bool hash_inputs, bool as_tuple);
    ~HashScope();
    HashScope(const HashScope&) = delete;
    HashScope& operator=(const HashScope&) = delete;
  };
  // log_tensor_hashes: a HashScope; "norm" is PyTorch's default.
  [[nodiscard]] static HashScope log_tensor_hashes(HashKind kind = HashKind::kNorm, bool hash_inputs = false) {
    return HashScope({kind}, hash_inputs, false);
  }
  [[nodiscard]] static HashScope log_tensor_hashes(std::vector<HashKind> kinds, bool hash_inputs = false) {
    return HashScope(std::move(kinds), hash_inputs, true);
  }

  // HookScope: PyTorch's dispatch_hooks(record_hook, log_hook, pre_log_hook).
  class HookScope {
   public:
    HookScope(DispatchHook record_hook, DispatchHook log_hook, DispatchHook pre_log_hook);
    ~HookScope();
    HookScope(const HookScope&) = delete;
    HookScope& operator=(const HookScope&) = delete;
  };
  [[nodiscard]] static HookScope dispatch_hooks(DispatchHook record_hook = nullptr, DispatchHook log_hook = nullptr,
                                                DispatchHook pre_log_hook = nullptr) {
    return HookScope(std::move(record_hook), std::move(log_hook), std::move(pre_log_hook));
  }

  // memory_hook: a ready log hook reporting the CPU allocator's bytes in use
  // and peak ("mem": "8.125 MB", "peak": "14.128 MB"), resetting the peak, as
  // in PyTorch's memory example.
  static DispatchHook memory_hook(DeviceType device = DeviceType::kCPU);

  // DispatchMode interface.
  bool dispatch(OpCall& call) override;
  std::string_view name() const override { return "DebugMode"; }

 private:
  friend class Scope;
  friend class KernelRecord;
  int64_t tensor_id(const Tensor& t);
  RecordedValue record_value(const Value& v, const Argument* arg);
  void record_value_into(RecordedValue& r, const Value& v, const Argument* arg);
  void record_function_call(OpCall& call);
  void enter_module(std::string_view fqn);
  void exit_module();

  DebugModeOptions options_;
  // calls_[0, size_) is the log; entries past it are kept from before the last
  // reset() for reuse (See Note [Reused log entries] in debug_mode.cc).
  std::vector<DebugCall> calls_;
  size_t size_ = 0;
  // append_entry: the next log entry, emptied (a reused one keeps its buffers).
  DebugCall& append_entry();
  int depth_ = 0;
  bool enabled_ = true;
  // Ids by TensorImpl uid (never reused), as PyTorch's id tracker by identity.
  absl::flat_hash_map<uint64_t, int64_t> ids_;
  int64_t next_id_ = 0;
};

}  // namespace opspec
