// dispatcher.h: Dispatcher, the registry of ops and the router that sends every
// call to the kernel of its highest-priority dispatch key.
// See Note [Dispatch key order] and Note [Boxed and unboxed calls].
#pragma once

#include <array>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/operator.h"

namespace opspec {

// Note [Override layer]
// PyTorch's Python dispatcher (py_impl + _EnablePythonDispatcher) lets core
// code replace the kernel of any (op, key) pair at run time, e.g. a different
// matmul decomposition while compiling. Here register_override stores such a
// kernel beside the built-in one, and resolve() picks it, at every dispatch
// and redispatch, only while the calling thread has the override layer
// enabled (EnablePythonDispatcherGuard; the PythonDispatcher key is that
// switch and has no kernels). An override may also sit at a key where the op
// has no kernel (a Meta kernel for a user op, a decomposition at
// CompositeImplicit). Outside the guard, and on other threads, nothing
// changes; the cost when no override exists for the op is one mask test.

// Note [Undefined tensor arguments]
// A default-constructed Tensor has no TensorImpl: no kernel, mode or meta
// function may see one where the schema wants a Tensor. As PyTorch (whose
// undefined tensors reach "Expected a proper Tensor but got None"), the call
// is refused at entry, before any key is chosen: keys_of gives an undefined
// Tensor (or Tensor[] element) kUndefinedTensorMark, and call/call_boxed check
// the schema only when that bit is set, so defined arguments cost one
// predictable branch. None of a Tensor? or Tensor?[] argument is legitimate and
// passes (an undefined Tensor given for a Tensor? is None too). Redispatches
// pass the checked arguments on and are not checked again.

// Dispatcher: process-wide registry and router. Registration is thread-safe;
// register kernels before calling the op concurrently from several threads.
class Dispatcher {
 public:
  // singleton: the dispatcher, with every builtin op and kernel registered.
  // Inline: every op call asks for it, mode calls twice; once made, one load.
  static Dispatcher& singleton() {
    if (Dispatcher* d = instance_.load(std::memory_order_acquire)) [[likely]] return *d;
    return make_singleton();
  }

  // def: registers an op from its schema (the namespace defaults to "aten").
  // Throws if an op of that name exists.
  OperatorHandle& def(std::string_view schema, OpKind kind, bool composite = false,
                      std::string_view default_namespace = "aten");
  // find: looks an op up by "aten::add.Tensor", "add.Tensor" (aten assumed),
  // or a name without overload when that name has only the default overload.
  const OperatorHandle* find(std::string_view name) const;
  // get: find, throwing "unknown op 'aten::foo'" (with close names) when absent.
  const OperatorHandle& get(std::string_view name) const;
  // ops: every registered op, in registration order.
  std::vector<const OperatorHandle*> ops() const;

  // register_kernel: sets op's kernel for key (replacing any previous one).
  // A kernel at CompositeImplicit makes the op composite.
  void register_kernel(const OperatorHandle& op, DispatchKey key, KernelFunction kernel);
  // add_tag: marks op with tag (builtins from op_table.def, user ops from Library).
  void add_tag(const OperatorHandle& op, OpTag tag);
  // register_override: a kernel that replaces op's kernel at key on threads
  // where the override layer is enabled (replacing any previous override).
  // See Note [Override layer].
  void register_override(const OperatorHandle& op, DispatchKey key, KernelFunction kernel);
  // remove_override: drops op's override at key, if any.
  void remove_override(const OperatorHandle& op, DispatchKey key);
  // call_builtin_kernel: runs op's own kernel or the fallback at key, never an
  // override; an override calls it to defer to the kernel it replaces.
  void call_builtin_kernel(const OperatorHandle& op, DispatchKey key, DispatchKeySet ks, Stack& stack) const;
  // register_fallback: the boxed kernel for key used by every op without its own
  // (with typed entries for some signatures, See Note [Typed fallback entries]).
  void register_fallback(DispatchKey key, KernelFunction kernel);
  // fallback: the fallback registered for key (invalid when none is).
  const KernelFunction& fallback(DispatchKey key) const { return fallbacks_[static_cast<int>(key)]; }

  // ResolvedKernel: the key a call goes to and its kernel.
  struct ResolvedKernel {
    DispatchKey key;
    const KernelFunction* kernel;
    bool is_fallback;
  };
  // resolve: the kernel a call with key set ks would run; throws if none.
  ResolvedKernel resolve(const OperatorHandle& op, DispatchKeySet ks) const;

  // call_boxed: full dispatch of a complete stack (see FunctionSchema::bind);
  // the stack holds the results afterwards.
  void call_boxed(const OperatorHandle& op, Stack& stack) const;
  // redispatch_boxed: dispatch with an explicit key set (kernels pass their
  // own set minus the keys at and above themselves).
  void redispatch_boxed(const OperatorHandle& op, DispatchKeySet ks, Stack& stack) const {
    const ResolvedKernel r = resolve(op, ks);
    r.kernel->boxed(op, ks, stack);
  }

  // call: typed dispatch; takes the unboxed path when the kernel has this exact signature.
  template <class Ret, class... Args>
  Ret call(const OperatorHandle& op, Args... args) const {
    DispatchKeySet tensor_keys = internal::keys_of(args...);
    if (!(tensor_keys & internal::kUndefinedTensorMark).empty()) [[unlikely]] {  // Note [Undefined tensor arguments]
      tensor_keys = checked_keys<Args...>(op, tensor_keys, args...);
    }
    return redispatch<Ret, Args...>(op, compute_dispatch_key_set(tensor_keys), args...);
  }
  // redispatch: typed dispatch with an explicit key set.
  template <class Ret, class... Args>
  Ret redispatch(const OperatorHandle& op, DispatchKeySet ks, Args... args) const {
    const ResolvedKernel r = resolve(op, ks);
    if (r.kernel->unboxed != nullptr && r.kernel->signature == &typeid(Ret(Args...))) {
      return reinterpret_cast<Ret (*)(Args...)>(r.kernel->unboxed)(args...);
    }
    if (!r.kernel->typed.empty()) {  // See Note [Typed fallback entries]
      if (void* fn = r.kernel->typed_entry(&typeid(Ret(Args...)))) {
        return reinterpret_cast<Ret (*)(const OperatorHandle&, DispatchKeySet, Args...)>(fn)(op, ks, args...);
      }
    }
    Stack stack = internal::box_args(args...);
    r.kernel->boxed(op, ks, stack);
    return internal::UnboxReturn<Ret>::pop(stack);
  }

  // dump_dispatch_table: one line per key saying which kernel a call at that
  // key runs ("kernel", "fallback", "fallthrough"), highest priority first.
  std::string dump_dispatch_table(const OperatorHandle& op) const;

 private:
  Dispatcher() = default;
  // make_singleton: makes the dispatcher on first use (registering the
  // builtins) and publishes it in instance_.
  [[gnu::cold, gnu::noinline]] static Dispatcher& make_singleton();
  static inline constinit std::atomic<Dispatcher*> instance_{nullptr};
  [[noreturn]] void throw_no_kernel(const OperatorHandle& op, DispatchKeySet ks) const;
  // check_defined_tensors: throws, in PyTorch's words, when stack holds an
  // undefined tensor for a Tensor or Tensor[] argument (cold: See Note
  // [Undefined tensor arguments]).
  void check_defined_tensors(const OperatorHandle& op, const Stack& stack) const;
  // checked_keys: check_defined_tensors on a typed call's arguments, then its
  // keys without the mark; out of line, so call() stays small enough to inline.
  template <class... Args>
  [[gnu::noinline, gnu::cold]] DispatchKeySet checked_keys(const OperatorHandle& op, DispatchKeySet keys,
                                                           Args... args) const {
    check_defined_tensors(op, internal::box_args(args...));
    return keys - internal::kUndefinedTensorMark;
  }

  mutable std::mutex mu_;
  std::deque<OperatorHandle> ops_;
  absl::flat_hash_map<std::string, OperatorHandle*> by_name_;
  std::array<KernelFunction, kNumDispatchKeys> fallbacks_;
  DispatchKeySet fallback_mask_;
};

template <class Ret, class... Args>
Ret OperatorHandle::call(const Args&... args) const {
  return Dispatcher::singleton().call<Ret, const Args&...>(*this, args...);
}

// TypedOp<Ret(Args...)>: a cached op handle with a typed call operator, as the
// public op API uses: `static TypedOp<Tensor(const Tensor&)> relu("aten::relu");`.
template <class Sig> class TypedOp;
template <class Ret, class... Args>
class TypedOp<Ret(Args...)> {
 public:
  explicit TypedOp(const OperatorHandle& op) : op_(&op) {}
  explicit TypedOp(std::string_view name) : op_(&Dispatcher::singleton().get(name)) {}
  Ret operator()(Args... args) const { return Dispatcher::singleton().call<Ret, Args...>(*op_, args...); }
  const OperatorHandle& handle() const { return *op_; }

 private:
  const OperatorHandle* op_;
};

}  // namespace opspec
