// debug_mode.cc: DebugMode recording (the dispatch handler, function-level and
// module recorders, kernel records, hash and hook scopes). Rendering lives in
// debug_render.cc.
#include "harness/debug_mode.h"

#include <execinfo.h>

#include <thread>

#include "absl/debugging/symbolize.h"
#include "absl/strings/str_format.h"
#include "runtime/core/call_site.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/nn/module.h"

namespace opspec {
namespace {

// HashConfig: the innermost log_tensor_hashes scope of this thread.
struct HashConfig {
  std::vector<HashKind> kinds;
  bool hash_inputs = false;
  bool as_tuple = false;
};

// HookConfig: dispatch_hooks scopes of this thread, outermost first.
struct HookConfig {
  DispatchHook record_hook, log_hook, pre_log_hook;
};

struct DebugModeTls {
  std::vector<HashConfig> hash_scopes;
  std::vector<HookConfig> hook_scopes;
  std::vector<DebugMode*> active_modes;  // entered DebugModes, innermost last
  // Installed while any DebugMode is active, so kernels launched outside the
  // dispatcher (fused kernels) are recorded. See Note [Kernel records].
  std::optional<KernelObserverGuard> kernel_observer;
};

thread_local DebugModeTls tls;

// KernelRecorder: forwards runtime kernel records to DebugMode::record_kernel,
// which logs them with every active DebugMode of this thread.
class KernelRecorder : public KernelObserver {
 public:
  std::function<void()> on_launch(std::string_view prefix, std::string_view name, const KernelArgs& kwargs) override {
    auto record = std::make_shared<DebugMode::KernelRecord>(DebugMode::record_kernel(prefix, name, kwargs));
    return [record] { record->finish(); };
  }
};

const HashConfig* active_hash_config() { return tls.hash_scopes.empty() ? nullptr : &tls.hash_scopes.back(); }

// PyTorch never hashes ops whose name contains "empty": their data is uninitialised.
bool hashable_op(std::string_view name) { return name.find("empty") == std::string_view::npos; }

// Real data lives on the CPU or a device; fake and meta tensors have none
// (their storage is on meta). compute_hash hashes device tensors in place.
bool has_data(const Tensor& t) { return t.defined() && !t.impl()->storage()->device().is_meta(); }

HashNode hash_value(const Value& v, const HashConfig& config) {
  HashNode node;
  auto hash_tensor_node = [&](const Tensor& t) {
    HashNode n;
    if (!has_data(t) || t.is_wrapped_number()) return n;  // None, as PyTorch hashes Python scalars
    n.kind = HashNode::Kind::kHashes;
    for (HashKind k : config.kinds) n.hashes.push_back(compute_hash(t, k));
    return n;
  };
  if (v.is_tensor()) return hash_tensor_node(v.to_tensor());
  if (v.is_tensor_list()) {
    node.kind = HashNode::Kind::kList;
    for (const Tensor& t : v.to_tensor_list()) node.items.push_back(hash_tensor_node(t));
  } else if (v.is_int_list() || v.is_double_list() || v.is_bool_list()) {
    // PyTorch maps every leaf of a list to None: [1, 0] hashes as [None, None],
    // a bool[3] output_mask as [None, None, None].
    node.kind = HashNode::Kind::kList;
    node.items.resize(v.is_int_list()      ? v.to_int_list().size()
                      : v.is_double_list() ? v.to_double_list().size()
                                           : v.to_bool_list().size());
  }
  return node;
}

bool all_none(const HashNode& n) {
  if (n.kind == HashNode::Kind::kHashes) return false;
  for (const HashNode& item : n.items) {
    if (!all_none(item)) return false;
  }
  return true;
}

void append_hook_output(std::vector<std::pair<std::string, std::string>>& into,
                        std::vector<std::pair<std::string, std::string>> items) {
  for (auto& [k, v] : items) {
    bool replaced = false;  // dict.update semantics: a later hook overwrites a key
    for (auto& [ek, ev] : into) {
      if (ek == k) {
        ev = v;
        replaced = true;
      }
    }
    if (!replaced) into.emplace_back(std::move(k), std::move(v));
  }
}

// Which arguments the dispatcher would show (see FunctionSchema::format_arguments).
absl::InlinedVector<size_t, 8> shown_arguments(const FunctionSchema& schema, const Stack& args) {
  const auto& params = schema.arguments();
  const size_t n = std::min(args.size(), params.size());
  auto is_default = [&](size_t i) {
    return params[i].default_value ? args[i] == *params[i].default_value
                                   : (params[i].type.is_optional && args[i].is_none());
  };
  size_t last_positional = 0;
  for (size_t i = 0; i < n && !params[i].kwarg_only; ++i) {
    if (!is_default(i)) last_positional = i + 1;
  }
  absl::InlinedVector<size_t, 8> shown;
  for (size_t i = 0; i < n; ++i) {
    if (params[i].kwarg_only ? !is_default(i) : i < last_positional) shown.push_back(i);
  }
  return shown;
}

// Frames come from glibc's backtrace(): Debian's Abseil walks frame pointers,
// which -O2 code omits, and returns nothing. Abseil symbolizes (and demangles).
std::string symbolized_stack() {
  constexpr int kSkip = 2;  // this function and DebugMode::dispatch
  void* frames[32];
  const int depth = backtrace(frames, 32);
  std::string out;
  for (int i = kSkip; i < depth; ++i) {
    char name[512];
    const char* sym = absl::Symbolize(frames[i], name, sizeof(name)) ? name : "(unknown)";
    str_append(&out, "  ", sym, "\n");
  }
  return out;
}

// FunctionRecorder: the function-mode half of a DebugMode with
// record_function_level: logs linear/matmul/... above their aten ops.
class FunctionRecorder : public FunctionMode {
 public:
  explicit FunctionRecorder(std::function<void(OpCall&)> record) : record_(std::move(record)) {}
  bool dispatch(OpCall& call) override {
    record_(call);
    return true;
  }
  std::string_view name() const override { return "DebugMode(function level)"; }

 private:
  std::function<void(OpCall&)> record_;
};

}  // namespace

DebugMode::DebugMode(DebugModeOptions options) : options_(options) {}
DebugMode::~DebugMode() = default;

// Note [Reused log entries]
// An entry owns several heap buffers (the op name, its arguments and
// outputs); allocating them for every op and freeing them at reset() cost
// more than the op itself on small tensors. reset() therefore only empties
// the log: the entries stay, and the next ops refill them in place, so a
// mode that logs and resets in a loop allocates nothing once warm. The memory
// goes when the DebugMode does.

void DebugCall::clear() {
  kind = Kind::kOp;
  depth = 0;
  name.clear();
  kernel_prefix.clear();
  args.clear();
  outputs.clear();
  has_outputs = false;
  site.reset();
  site_text.clear();
  stack.clear();
  input_hash.reset();
  output_hash.reset();
  hash_tuple = false;
  hashed = false;
  log.clear();
  record.clear();
  pre_kernel_hashes.clear();
  post_kernel_hashes.clear();
}

DebugCall& DebugMode::append_entry() {
  if (size_ == calls_.size()) {
    ++size_;
    return calls_.emplace_back();
  }
  DebugCall& entry = calls_[size_++];
  entry.clear();
  return entry;
}

void DebugMode::reset() {
  size_ = 0;
  ids_.clear();
  next_id_ = 0;
  depth_ = 0;
}

int64_t DebugMode::tensor_id(const Tensor& t) {
  auto [it, inserted] = ids_.try_emplace(t.impl()->uid(), next_id_);
  if (inserted) ++next_id_;
  return it->second;
}

RecordedValue DebugMode::record_value(const Value& v, const Argument* arg) {
  RecordedValue r;
  record_value_into(r, v, arg);
  return r;
}

// Fills r (fresh) in place: the log's entries are appended, never moved in.
void DebugMode::record_value_into(RecordedValue& r, const Value& v, const Argument* arg) {
  if (arg != nullptr) {
    r.type = &arg->type;
    if (arg->kwarg_only) r.name = arg->name;
  }
  auto record_tensor = [&](const Tensor& t) {
    RecordedTensor& rt = r.tensors.emplace_back();
    if (!t.defined()) {  // None of a Tensor?[] (See Note [Optional tensor lists])
      rt.none = true;
      return;
    }
    rt.dtype = t.dtype();
    rt.sizes.assign(t.sizes().begin(), t.sizes().end());
    rt.fake = is_fake(t);
    if (options_.record_ids) rt.id = tensor_id(t);
  };
  if (v.is_tensor() && !v.to_tensor().defined()) {
    return;  // None: an undefined result (a backward's unneeded grad) prints None in PyTorch
  }
  if (v.is_tensor() && !v.to_tensor().is_wrapped_number()) {
    r.kind = RecordedValue::Kind::kTensor;
    record_tensor(v.to_tensor());
  } else if (v.is_tensor()) {
    r.value = Value(v.to_scalar());  // wrapped numbers print as the Python number
  } else if (v.is_tensor_list()) {
    r.kind = RecordedValue::Kind::kTensorList;
    for (const Tensor& t : v.to_tensor_list()) record_tensor(t);
  } else {
    r.value = v;
  }
}

// Note [All-None hashes]
// PyTorch's hash hook returns None, so no annotation, when every value of
// {'hash': ..., 'input_hash': ...} is None (tree_all), and otherwise shows
// 'hash': None for a result that is no tensor (item()'s number). opspec keeps
// input_hash only when some input hash is not None, so the annotation goes
// when neither it nor a result hash is there. A result hash that renders as
// a bare None is kept as the text reader keeps 'hash': None (hashed, no
// output_hash), so the JSON and the text of one run load alike.

bool DebugMode::dispatch(OpCall& call) {
  if (!enabled_) return false;
  bool fake = has_infra_mode(ModeKind::kFake);
  for (const Value& v : call.stack()) {
    if (v.is_tensor()) fake |= is_fake(v.to_tensor());
  }
  if (fake ? !options_.record_fake : !options_.record_real) return false;

  const FunctionSchema& schema = call.op().schema();
  // Built in place: a DebugCall is large, and moving one costs as much as filling it.
  const size_t index = size_;
  DebugCall& entry = append_entry();
  entry.kind = DebugCall::Kind::kOp;
  entry.depth = depth_ + 1;
  entry.name = call.name();
  const auto shown = shown_arguments(schema, call.stack());
  entry.args.reserve(shown.size());
  for (size_t i : shown) record_value_into(entry.args.emplace_back(), call.arg(i), &schema.arguments()[i]);
  if (options_.record_stack_trace) {
    if (const std::source_location* site = current_call_site()) entry.site = *site;
    if (options_.full_stack_traces) entry.stack = symbolized_stack();
  }
  const HashConfig* hashing = active_hash_config();
  const bool hash_this = hashing != nullptr && hashable_op(entry.name);
  if (hash_this) {
    entry.hash_tuple = hashing->as_tuple;
    if (hashing->hash_inputs) {
      std::vector<HashNode> nodes;
      bool any = false;
      for (size_t i : shown) {
        HashNode node = hash_value(call.arg(i), *hashing);
        if (schema.arguments()[i].kwarg_only) node.name = schema.arguments()[i].name;
        any |= !all_none(node);
        nodes.push_back(std::move(node));
      }
      if (any) entry.input_hash = std::move(nodes);
    }
  }
  for (const HookConfig& h : tls.hook_scopes) {
    if (!h.pre_log_hook) continue;
    auto items = h.pre_log_hook(call, nullptr);  // may log kernels, growing calls_: index again
    append_hook_output(calls_[index].log, std::move(items));
  }

  call.proceed();

  // The log may have grown meanwhile (kernel records inside the op), so index it.
  DebugCall& done = calls_[index];
  const Stack& results = call.stack();
  if (options_.record_output) {
    done.has_outputs = true;
    done.outputs.reserve(results.size());
    for (const Value& v : results) record_value_into(done.outputs.emplace_back(), v, nullptr);
  }
  if (hash_this) {
    // See Note [All-None hashes].
    std::vector<HashNode> nodes;
    bool any = false;
    for (const Value& v : results) {
      nodes.push_back(hash_value(v, *hashing));
      any |= !all_none(nodes.back());
    }
    if (any || done.input_hash) {
      done.hashed = true;
      const bool bare_none = nodes.empty() || (nodes.size() == 1 && nodes[0].kind == HashNode::Kind::kNone);
      if (!bare_none) done.output_hash = std::move(nodes);
    }
  }
  for (const HookConfig& h : tls.hook_scopes) {
    if (h.record_hook) append_hook_output(done.record, h.record_hook(call, &results));
  }
  for (const HookConfig& h : tls.hook_scopes) {
    if (h.log_hook) append_hook_output(done.log, h.log_hook(call, &results));
  }
  return true;
}

void DebugMode::record_function_call(OpCall& call) {
  if (!enabled_) {
    call.proceed();
    return;
  }
  DebugCall entry;
  entry.kind = DebugCall::Kind::kFunction;
  entry.depth = depth_;
  entry.name = call.name();
  for (size_t i : shown_arguments(call.op().schema(), call.stack())) {
    entry.args.push_back(record_value(call.arg(i), &call.op().schema().arguments()[i]));
  }
  if (options_.record_stack_trace) {
    if (const std::source_location* site = current_call_site()) entry.site = *site;
  }
  const size_t index = size_;
  append_entry() = std::move(entry);
  ++depth_;
  struct DepthRestore {
    int& depth;
    ~DepthRestore() { --depth; }
  } restore{depth_};
  call.proceed();
  if (options_.record_output) {
    calls_[index].has_outputs = true;
    for (const Value& v : call.stack()) calls_[index].outputs.push_back(record_value(v, nullptr));
  }
}

void DebugMode::enter_module(std::string_view fqn) {
  if (!enabled_) return;
  DebugCall entry;
  entry.kind = DebugCall::Kind::kModule;
  entry.depth = depth_ + 1;
  entry.name = std::string(fqn);
  append_entry() = std::move(entry);
  ++depth_;
}

void DebugMode::exit_module() {
  if (enabled_ && depth_ > 0) --depth_;
}

struct DebugMode::Scope::Impl {
  DebugMode& mode;
  std::optional<ModeGuard> guard;
  std::shared_ptr<FunctionMode> function_recorder;  // a FunctionRecorder (its type is file-local)
  std::optional<ModeGuard> function_guard;
  std::optional<nn::ForwardHookHandle> module_hooks;
};

DebugMode::Scope::Scope(DebugMode& mode) : impl_(new Impl{mode}) {
  mode.reset();
  if (mode.options_.record_function_level) {
    impl_->function_recorder =
        std::make_shared<FunctionRecorder>([&mode](OpCall& call) { mode.record_function_call(call); });
    impl_->function_guard.emplace(impl_->function_recorder);
  }
  if (mode.options_.record_nn_module) {
    // Module hooks are global; only this thread's modules belong to this log.
    const std::thread::id owner = std::this_thread::get_id();
    impl_->module_hooks.emplace(nn::register_module_forward_hooks(
        [&mode, owner](const nn::Module&, std::string_view fqn) {
          if (std::this_thread::get_id() == owner) mode.enter_module(fqn);
        },
        [&mode, owner](const nn::Module&, std::string_view) {
          if (std::this_thread::get_id() == owner) mode.exit_module();
        }));
  }
  impl_->guard.emplace(mode);
  if (tls.active_modes.empty()) tls.kernel_observer.emplace(std::make_shared<KernelRecorder>());
  tls.active_modes.push_back(&mode);
}

DebugMode::Scope::~Scope() {
  auto& active = tls.active_modes;
  if (auto it = std::find(active.rbegin(), active.rend(), &impl_->mode); it != active.rend()) {
    active.erase(std::next(it).base());
  }
  if (active.empty()) tls.kernel_observer.reset();
}

DebugMode::KernelRecord DebugMode::record_kernel(std::string_view prefix, std::string_view name,
                                                 std::vector<std::pair<std::string, Value>> kwargs) {
  KernelRecord record;
  const HashConfig* hashing = active_hash_config();
  for (DebugMode* mode : tls.active_modes) {
    if (!mode->enabled_) continue;
    DebugCall entry;
    entry.kind = DebugCall::Kind::kKernel;
    entry.depth = mode->depth_ + 1;
    entry.name = std::string(name);
    entry.kernel_prefix = std::string(prefix);
    entry.hash_tuple = hashing != nullptr && hashing->as_tuple;
    // PyTorch renders kernel arguments without tensor ids.
    const bool ids = mode->options_.record_ids;
    mode->options_.record_ids = false;
    for (const auto& [k, v] : kwargs) {
      RecordedValue rv = mode->record_value(v, nullptr);
      rv.name = k;
      entry.args.push_back(std::move(rv));
    }
    mode->options_.record_ids = ids;
    if (hashing != nullptr && hashing->hash_inputs) {
      for (const auto& [k, v] : kwargs) {
        if (!v.is_tensor() || !has_data(v.to_tensor())) continue;
        std::vector<HashValue> hashes;
        for (HashKind kind : hashing->kinds) hashes.push_back(compute_hash(v.to_tensor(), kind));
        entry.pre_kernel_hashes.emplace_back(k, std::move(hashes));
      }
    }
    record.entries_.emplace_back(mode, mode->size_);
    mode->append_entry() = std::move(entry);
  }
  record.kwargs_ = std::move(kwargs);
  return record;
}

void DebugMode::KernelRecord::finish() {
  const HashConfig* hashing = active_hash_config();
  if (hashing == nullptr) return;
  for (auto [mode, index] : entries_) {
    if (index >= mode->size_) continue;  // the mode was reset meanwhile
    DebugCall& entry = mode->calls_[index];
    entry.post_kernel_hashes.clear();
    for (const auto& [k, v] : kwargs_) {
      if (!v.is_tensor() || !has_data(v.to_tensor())) continue;
      std::vector<HashValue> hashes;
      for (HashKind kind : hashing->kinds) hashes.push_back(compute_hash(v.to_tensor(), kind));
      entry.post_kernel_hashes.emplace_back(k, std::move(hashes));
    }
  }
  entries_.clear();
}

DebugMode::HashScope::HashScope(std::vector<HashKind> kinds, bool hash_inputs, bool as_tuple) {
  OPSPEC_CHECK(!kinds.empty(), "DebugMode::log_tensor_hashes: give at least one hash function");
  tls.hash_scopes.push_back({std::move(kinds), hash_inputs, as_tuple});
}
DebugMode::HashScope::~HashScope() { tls.hash_scopes.pop_back(); }

DebugMode::HookScope::HookScope(DispatchHook record_hook, DispatchHook log_hook, DispatchHook pre_log_hook) {
  tls.hook_scopes.push_back({std::move(record_hook), std::move(log_hook), std::move(pre_log_hook)});
}
DebugMode::HookScope::~HookScope() { tls.hook_scopes.pop_back(); }

DispatchHook DebugMode::memory_hook(DeviceType device) {
  return [device](const OpCall&, const Stack*) {
    Allocator* alloc = get_allocator(device);
    const AllocatorStats s = alloc->stats();
    alloc->reset_peak_stats();
    constexpr double kMB = 1024.0 * 1024.0;
    return std::vector<std::pair<std::string, std::string>>{
        {"mem", absl::StrFormat("%.3f MB", static_cast<double>(s.bytes_in_use) / kMB)},
        {"peak", absl::StrFormat("%.3f MB", static_cast<double>(s.peak_bytes) / kMB)}};
  };
}

}  // namespace opspec
