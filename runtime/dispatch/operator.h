// operator.h: OperatorHandle (one registered op: schema, kind, kernels per
// key) and KernelFunction (a kernel callable boxed and maybe unboxed).
#pragma once

#include <array>
#include <functional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

#include "runtime/core/dispatch_key.h"
#include "runtime/dispatch/boxing.h"
#include "runtime/dispatch/schema.h"

namespace opspec {

class OperatorHandle;

// OpKind: what an op is, for tools that treat ops by family (the compiler's
// fuser, spec generators). Declared once in the op table.
enum class OpKind : uint8_t {
  kFactory,
  kUnary,
  kBinary,
  kTernary,
  kReduction,
  kView,
  kOther,
};

// OpTag: properties PyTorch records as torch.Tag, which passes consult.
enum class OpTag : uint8_t {
  // Consumes random numbers: removing or reordering a call changes later results.
  kNondeterministicSeeded = 1,
  // Its output's shape depends on its input's data (nonzero): fake tensors and graphs cannot hold it.
  kDynamicOutputShape = 2,
};

// op_kind_name: "factory", "unary", "binary", "ternary", "reduction", "view", "other".
std::string_view op_kind_name(OpKind k);

// BoxedKernel: a kernel that takes its arguments from the stack and leaves its
// results there. ks is the key set the call was dispatched with.
using BoxedKernel = std::function<void(const OperatorHandle& op, DispatchKeySet ks, Stack& stack)>;

// KernelFunction: a boxed kernel, plus the typed function pointer when the
// kernel was registered from a typed function. See Note [Boxed and unboxed calls].
struct KernelFunction {
  BoxedKernel boxed;
  void* unboxed = nullptr;
  const std::type_info* signature = nullptr;
  std::string debug_name;  // shown by dump_dispatch_table
  // TypedEntry: a fallback's typed entry point for one signature: called as
  // Ret(const OperatorHandle&, DispatchKeySet, Args...) for Ret(Args...) calls.
  struct TypedEntry {
    const std::type_info* signature;
    void* fn;
  };
  // typed: a fallback's typed entries (See Note [Typed fallback entries]); empty for kernels.
  std::vector<TypedEntry> typed;

  bool valid() const { return static_cast<bool>(boxed); }

  // add_typed: gives a boxed fallback a typed entry for Ret(Args...) calls.
  template <class Ret, class... Args>
  void add_typed(Ret (*fn)(const OperatorHandle&, DispatchKeySet, Args...)) {
    typed.push_back({&typeid(Ret(Args...)), reinterpret_cast<void*>(fn)});
  }
  // typed_entry: the typed entry for signature sig, or null.
  void* typed_entry(const std::type_info* sig) const {
    for (const TypedEntry& e : typed) {
      if (e.signature == sig) return e.fn;
    }
    return nullptr;
  }

  // from_function: wraps a typed kernel such as `Tensor relu(const Tensor&)`.
  template <class Ret, class... Args>
  static KernelFunction from_function(Ret (*fn)(Args...), std::string debug_name = "") {
    KernelFunction k;
    k.boxed = [fn](const OperatorHandle&, DispatchKeySet, Stack& stack) {
      internal::call_unboxed_from_stack(fn, stack, std::index_sequence_for<Args...>{});
    };
    k.unboxed = reinterpret_cast<void*>(fn);
    k.signature = &typeid(Ret(Args...));
    k.debug_name = std::move(debug_name);
    return k;
  }
  // from_boxed: wraps a boxed kernel.
  static KernelFunction from_boxed(BoxedKernel fn, std::string debug_name = "") {
    KernelFunction k;
    k.boxed = std::move(fn);
    k.debug_name = std::move(debug_name);
    return k;
  }
};

// MetaFunction / DecompositionFunction hooks are plain kernels registered at
// the Meta and CompositeImplicit keys; see library.h.

// OperatorHandle: the registry's record of one op. Its address is stable for
// the life of the process, so callers may cache a reference.
class OperatorHandle {
 public:
  OperatorHandle(FunctionSchema schema, OpKind kind, bool composite, int id);

  const FunctionSchema& schema() const { return schema_; }
  // name: "aten::add.Tensor".
  const std::string& name() const { return schema_.qualified_name(); }
  OpKind kind() const { return kind_; }
  // is_composite: decomposes at CompositeImplicit, so modes below see its parts.
  bool is_composite() const { return composite_; }
  // has_tag: whether the op carries tag (see Dispatcher::add_tag).
  bool has_tag(OpTag tag) const { return (tags_ & static_cast<uint8_t>(tag)) != 0; }
  // id: dense index in registration order.
  int id() const { return id_; }

  // kernel: the kernel registered for key (may be invalid).
  const KernelFunction& kernel(DispatchKey key) const { return kernels_[static_cast<int>(key)]; }
  bool has_kernel(DispatchKey key) const { return kernel_mask_.has(key); }
  // override_kernel: the override for key (see Dispatcher::register_override; may be invalid).
  const KernelFunction& override_kernel(DispatchKey key) const { return overrides_[static_cast<int>(key)]; }
  // override_keys: keys with an override registered for this op.
  DispatchKeySet override_keys() const { return override_mask_; }

  // call: the unboxed entry point; see Dispatcher::call.
  template <class Ret, class... Args>
  Ret call(const Args&... args) const;
  // call_boxed: checks the stack against the schema, then dispatches it
  // (build the stack with FunctionSchema::bind).
  void call_boxed(Stack& stack) const;

 private:
  friend class Dispatcher;
  FunctionSchema schema_;
  OpKind kind_;
  bool composite_;
  int id_;
  uint8_t tags_ = 0;
  DispatchKeySet kernel_mask_;
  DispatchKeySet override_mask_;
  std::array<KernelFunction, kNumDispatchKeys> kernels_;
  std::array<KernelFunction, kNumDispatchKeys> overrides_;
};

}  // namespace opspec
