#include "runtime/dispatch/dispatcher.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "runtime/core/error.h"

namespace opspec {

namespace internal {
// Defined in runtime/ops/register_builtins.cc. See Note [Builtin registration].
void register_builtins(Dispatcher& d);
}  // namespace internal

namespace {
// Factories with no tensor argument pick their backend from `device`
// (registered for every such op by Dispatcher::def, builtin or not).
void backend_select(const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  const int device_index = op.schema().argument_index("device");
  Device device = kCPU;
  if (device_index >= 0 && !stack[device_index].is_none()) device = stack[device_index].to_device();
  const DispatchKeySet next = (ks & DispatchKeySet::below(DispatchKey::kBackendSelect)) - kBackendKeys;
  Dispatcher::singleton().redispatch_boxed(op, next.add(backend_key(device.type)), stack);
}
}  // namespace

std::string_view op_kind_name(OpKind k) {
  static constexpr std::string_view kNames[] = {"factory", "unary", "binary", "ternary",
                                                "reduction", "view", "other"};
  return kNames[static_cast<int>(k)];
}

OperatorHandle::OperatorHandle(FunctionSchema schema, OpKind kind, bool composite, int id)
    : schema_(std::move(schema)), kind_(kind), composite_(composite), id_(id) {}

void OperatorHandle::call_boxed(Stack& stack) const {
  // The user-facing boxed entry validates; the dispatcher's own path does not.
  schema_.check_stack(stack);
  Dispatcher::singleton().call_boxed(*this, stack);
}

Dispatcher& Dispatcher::make_singleton() {
  static Dispatcher* instance = [] {
    auto* d = new Dispatcher();  // never destroyed: kernels may run during static destruction
    internal::register_builtins(*d);
    return d;
  }();
  instance_.store(instance, std::memory_order_release);
  return *instance;
}

OperatorHandle& Dispatcher::def(std::string_view schema_text, OpKind kind, bool composite,
                                std::string_view default_namespace) {
  FunctionSchema schema = FunctionSchema::parse(schema_text, default_namespace);
  std::lock_guard<std::mutex> lock(mu_);
  const std::string name = schema.qualified_name();
  OPSPEC_CHECK(!by_name_.contains(name), "op ", name, " is already registered (", schema_text, ")");
  OperatorHandle& op = ops_.emplace_back(std::move(schema), kind, composite, static_cast<int>(ops_.size()));
  by_name_[name] = &op;
  bool has_tensor_arg = false;
  for (const Argument& a : op.schema().arguments()) has_tensor_arg |= a.type.kind == TypeKind::kTensor;
  if (kind == OpKind::kFactory && !has_tensor_arg) {
    op.kernels_[static_cast<int>(DispatchKey::kBackendSelect)] =
        KernelFunction::from_boxed(&backend_select, "backend_select");
    op.kernel_mask_ = op.kernel_mask_.add(DispatchKey::kBackendSelect);
  }
  return op;
}

const OperatorHandle* Dispatcher::find(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mu_);
  std::string key(name);
  if (key.find("::") == std::string::npos) key = "aten::" + key;
  if (auto it = by_name_.find(key); it != by_name_.end()) return it->second;
  return nullptr;
}

const OperatorHandle& Dispatcher::get(std::string_view name) const {
  if (const OperatorHandle* op = find(name)) return *op;
  // Offer the overloads of the same base name: "aten::add" -> aten::add.Tensor, aten::add.Scalar.
  std::string base(name);
  if (base.find("::") == std::string::npos) base = "aten::" + base;
  if (auto dot = base.find('.', base.find("::")); dot != std::string::npos) base.resize(dot);
  std::vector<std::string> close;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const OperatorHandle& op : ops_) {
      if (op.schema().base_name() == base) close.push_back(op.name());
    }
  }
  std::sort(close.begin(), close.end());
  if (close.empty()) OPSPEC_FAIL("unknown op '", shorten(name), "'");
  OPSPEC_FAIL("unknown op '", shorten(name), "'; did you mean one of: ", absl::StrJoin(close, ", "), "?");
}

std::vector<const OperatorHandle*> Dispatcher::ops() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<const OperatorHandle*> out;
  out.reserve(ops_.size());
  for (const OperatorHandle& op : ops_) out.push_back(&op);
  return out;
}

void Dispatcher::register_kernel(const OperatorHandle& op_const, DispatchKey key, KernelFunction kernel) {
  OPSPEC_CHECK(kernel.valid(), "register_kernel: empty kernel for ", op_const.name(), " at ",
               dispatch_key_name(key));
  std::lock_guard<std::mutex> lock(mu_);
  auto& op = const_cast<OperatorHandle&>(op_const);  // handles are owned here
  if (kernel.debug_name.empty()) kernel.debug_name = str_cat(op.name(), "/", dispatch_key_name(key));
  op.kernels_[static_cast<int>(key)] = std::move(kernel);
  op.kernel_mask_ = op.kernel_mask_.add(key);
  if (key == DispatchKey::kCompositeImplicit) op.composite_ = true;
}

void Dispatcher::add_tag(const OperatorHandle& op, OpTag tag) {
  std::lock_guard<std::mutex> lock(mu_);
  const_cast<OperatorHandle&>(op).tags_ |= static_cast<uint8_t>(tag);
}

void Dispatcher::register_fallback(DispatchKey key, KernelFunction kernel) {
  OPSPEC_CHECK(kernel.valid(), "register_fallback: empty kernel at ", dispatch_key_name(key));
  std::lock_guard<std::mutex> lock(mu_);
  fallbacks_[static_cast<int>(key)] = std::move(kernel);
  fallback_mask_ = fallback_mask_.add(key);
}

Dispatcher::ResolvedKernel Dispatcher::resolve(const OperatorHandle& op, DispatchKeySet ks) const {
  DispatchKeySet candidates = op.kernel_mask_ | fallback_mask_;
  const bool overrides = !op.override_mask_.empty() && override_layer_enabled();  // Note [Override layer]
  if (overrides) candidates = candidates | op.override_mask_;
  const DispatchKeySet available = ks & candidates;
  if (available.empty()) throw_no_kernel(op, ks);
  const DispatchKey key = available.highest();
  if (overrides && op.override_mask_.has(key)) return {key, &op.overrides_[static_cast<int>(key)], false};
  const KernelFunction& own = op.kernels_[static_cast<int>(key)];
  if (own.valid()) return {key, &own, false};
  return {key, &fallbacks_[static_cast<int>(key)], true};
}

void Dispatcher::register_override(const OperatorHandle& op_const, DispatchKey key, KernelFunction kernel) {
  OPSPEC_CHECK(kernel.valid(), "register_override: empty kernel for ", op_const.name(), " at ",
               dispatch_key_name(key));
  OPSPEC_CHECK(key != DispatchKey::kPythonDispatcher, "register_override: ", op_const.name(),
               ": PythonDispatcher is the switch of the override layer; override a key below it");
  std::lock_guard<std::mutex> lock(mu_);
  auto& op = const_cast<OperatorHandle&>(op_const);
  if (kernel.debug_name.empty()) kernel.debug_name = str_cat(op.name(), "/", dispatch_key_name(key), "/override");
  op.overrides_[static_cast<int>(key)] = std::move(kernel);
  op.override_mask_ = op.override_mask_.add(key);
}

void Dispatcher::remove_override(const OperatorHandle& op_const, DispatchKey key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& op = const_cast<OperatorHandle&>(op_const);
  op.override_mask_ = op.override_mask_.remove(key);
  op.overrides_[static_cast<int>(key)] = KernelFunction();
}

void Dispatcher::call_builtin_kernel(const OperatorHandle& op, DispatchKey key, DispatchKeySet ks,
                                     Stack& stack) const {
  const KernelFunction& own = op.kernels_[static_cast<int>(key)];
  if (own.valid()) return own.boxed(op, ks, stack);
  OPSPEC_CHECK(fallback_mask_.has(key), op.name(), ": no built-in kernel at ", dispatch_key_name(key),
               " to defer to (only an override)");
  fallbacks_[static_cast<int>(key)].boxed(op, ks, stack);
}

void Dispatcher::throw_no_kernel(const OperatorHandle& op, DispatchKeySet ks) const {
  const DispatchKeySet backends = ks & kBackendKeys;
  if (backends == DispatchKeySet(DispatchKey::kMeta)) {
    throw NoMetaKernelError(str_cat(op.name(), " has no meta kernel, so it cannot run on meta or fake tensors; ",
                                    "register one with Library::impl(\"", op.schema().name(),
                                    op.schema().overload().empty() ? "" : ".", op.schema().overload(),
                                    "\", DispatchKey::kMeta, ...)",
                                    op.override_mask_.has(DispatchKey::kMeta)
                                        ? " (it has a Meta override, but the override layer is not enabled on this "
                                          "thread: use EnablePythonDispatcherGuard)"
                                        : ""));
  }
  std::string hint;
  if (backends.has(DispatchKey::kCUDA)) {
    hint = " This build of opspec has no CUDA kernel for it (was it built with OPSPEC_CUDA?).";
  }
  if (backends.empty()) {
    hint = " No tensor argument or device chose a backend.";
  }
  // Default-on keys are in every call; naming them would only distract.
  internal::throw_not_implemented(str_cat(op.name(), ": no kernel for dispatch keys ", (ks - kDefaultOnKeys).str(),
                                          "; it has kernels for ", op.kernel_mask_.str(), ".", hint));
}

void Dispatcher::check_defined_tensors(const OperatorHandle& op, const Stack& stack) const {
  const std::vector<Argument>& args = op.schema().arguments();
  for (size_t i = 0; i < args.size() && i < stack.size(); ++i) {
    const ArgType& type = args[i].type;
    if (type.kind != TypeKind::kTensor || type.is_optional || type.element_optional) continue;
    const Value& v = stack[i];
    if (v.is_tensor() && !v.to_tensor().defined()) {
      OPSPEC_FAIL(op.name(), ": Expected a proper Tensor but got None (or an undefined Tensor in C++) for argument #",
                  i, " '", args[i].name, "'");
    }
    if (!v.is_tensor_list()) continue;
    const std::vector<Tensor>& list = v.to_tensor_list();
    for (size_t k = 0; k < list.size(); ++k) {
      OPSPEC_CHECK(list[k].defined(), op.name(), ": Expected a proper Tensor but got None (or an undefined Tensor in ",
                   "C++) for sequence element ", k, " in sequence argument at position #", i, " '", args[i].name, "'");
    }
  }
}

void Dispatcher::call_boxed(const OperatorHandle& op, Stack& stack) const {
  DispatchKeySet tensor_keys;
  for (const Value& v : stack) {
    if (v.is_tensor()) {
      tensor_keys = tensor_keys | internal::keys_of_one(v.to_tensor());
    } else if (v.is_tensor_list()) {
      tensor_keys = tensor_keys | internal::keys_of_one(TensorList(v.to_tensor_list()));
    }
  }
  // A Tensor?[] with a None entry marks too: the schema check lets it pass.
  if (!(tensor_keys & internal::kUndefinedTensorMark).empty()) [[unlikely]] {  // Note [Undefined tensor arguments]
    check_defined_tensors(op, stack);
    tensor_keys = tensor_keys - internal::kUndefinedTensorMark;
  }
  redispatch_boxed(op, compute_dispatch_key_set(tensor_keys), stack);
}

std::string Dispatcher::dump_dispatch_table(const OperatorHandle& op) const {
  std::string out = str_cat(op.name(), " (", op_kind_name(op.kind()), op.is_composite() ? ", composite" : "",
                                 ")\nschema: ", op.schema().str(), "\n");
  for (int k = kNumDispatchKeys - 1; k >= 0; --k) {
    const auto key = static_cast<DispatchKey>(k);
    const KernelFunction& own = op.kernels_[k];
    std::string what;
    if (own.valid()) {
      what = str_cat("kernel [", own.debug_name, own.unboxed ? ", unboxed" : ", boxed", "]");
    } else if (fallback_mask_.has(key)) {
      const size_t typed = fallbacks_[k].typed.size();
      what = str_cat("fallback [", fallbacks_[k].debug_name, typed > 0 ? str_cat(", ", typed, " typed entries") : "", "]");
    } else {
      what = "fallthrough";
    }
    if (op.override_mask_.has(key)) {
      str_append(&what, " + override [", op.overrides_[k].debug_name, "] when the override layer is enabled");
    }
    str_append(&out, "  ", dispatch_key_name(key), ": ", what, "\n");
  }
  return out;
}

}  // namespace opspec
