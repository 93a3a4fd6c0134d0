// library.h: Library, the registration API for ops and kernels (PyTorch's
// TORCH_LIBRARY / TORCH_LIBRARY_IMPL), used by builtins and users alike.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "runtime/core/live_guards.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/signature.h"

namespace opspec {

namespace internal {
// make_typed_kernel: a KernelFunction from a function pointer or captureless
// lambda, its C++ signature checked against op's schema.
template <class Fn>
KernelFunction make_typed_kernel(const OperatorHandle& op, DispatchKey key, Fn& fn, std::string_view suffix) {
  auto* ptr = +fn;  // function pointer, also from a captureless lambda
  check_kernel_signature(op.schema(), ptr, dispatch_key_name(key));
  return KernelFunction::from_function(ptr, str_cat(op.name(), "/", dispatch_key_name(key), suffix));
}
// make_kernel: a boxed kernel (anything callable as BoxedKernel, capturing or
// not) or a typed one (see make_typed_kernel).
template <class Fn>
KernelFunction make_kernel(const OperatorHandle& op, DispatchKey key, Fn&& fn, std::string_view suffix) {
  if constexpr (std::is_invocable_v<Fn&, const OperatorHandle&, DispatchKeySet, Stack&>) {
    return KernelFunction::from_boxed(BoxedKernel(std::forward<Fn>(fn)),
                                      str_cat(op.name(), "/", dispatch_key_name(key), suffix, " (boxed)"));
  } else {
    return make_typed_kernel(op, key, fn, suffix);
  }
}
}  // namespace internal

// Library: declares ops in one namespace and registers their kernels.
//   Library lib("myops");
//   lib.def("scale(Tensor x, float s) -> Tensor", OpKind::kUnary)
//      .impl("scale", DispatchKey::kCPU, &scale_cpu)
//      .impl("scale", DispatchKey::kMeta, &scale_meta);
// A kernel at CompositeImplicit is a decomposition: the op becomes composite
// and modes see the ops it calls instead of it.
class Library {
 public:
  explicit Library(std::string ns, Dispatcher& dispatcher = Dispatcher::singleton())
      : ns_(std::move(ns)), dispatcher_(dispatcher) {}

  // def: declares an op; its name gets this library's namespace.
  Library& def(std::string_view schema, OpKind kind = OpKind::kOther);
  // def: declares an op with tags (e.g. {OpTag::kNondeterministicSeeded}).
  Library& def(std::string_view schema, OpKind kind, std::initializer_list<OpTag> tags);

  // impl: registers a typed kernel (function pointer or captureless lambda) for
  // (op, key). The C++ signature is checked against the schema.
  template <class Fn>
  Library& impl(std::string_view op_name, DispatchKey key, Fn&& fn) {
    const OperatorHandle& op = lookup(op_name);
    dispatcher_.register_kernel(op, key, internal::make_typed_kernel(op, key, fn, ""));
    return *this;
  }
  // impl_override: PyTorch's py_impl: a typed or boxed kernel for (op, key)
  // used instead of the built-in one while the override layer is enabled.
  // See Note [Override layer].
  template <class Fn>
  Library& impl_override(std::string_view op_name, DispatchKey key, Fn&& fn) {
    const OperatorHandle& op = lookup(op_name);
    dispatcher_.register_override(op, key, internal::make_kernel(op, key, std::forward<Fn>(fn), "/override"));
    return *this;
  }
  // impl_boxed: registers a boxed kernel for (op, key).
  Library& impl_boxed(std::string_view op_name, DispatchKey key, BoxedKernel fn);
  // fallback: a boxed kernel for key used by every op without its own.
  Library& fallback(DispatchKey key, BoxedKernel fn);

  const std::string& ns() const { return ns_; }

 private:
  const OperatorHandle& lookup(std::string_view op_name) const;
  std::string ns_;
  Dispatcher& dispatcher_;
};

// ScopedOverride: an override (see Library::impl_override) for its lifetime;
// the previous override of (op, key), if any, comes back when it ends. As with
// kernels, create and destroy it while no other thread is calling that op.
// Overrides of one (op, key) may end in any order: one that ends while an
// override made after it is alive leaves that one in place (See Note
// [Out-of-order guard release] in runtime/core/live_guards.h).
//   ScopedOverride cos_is_sin("aten::cos", DispatchKey::kCPU, [](const Tensor& x) { return ops::sin(x); });
//   { EnablePythonDispatcherGuard on; ops::cos(x); }  // runs the override
class ScopedOverride {
 public:
  template <class Fn>
  ScopedOverride(std::string_view op_name, DispatchKey key, Fn&& fn)
      : ScopedOverride(Dispatcher::singleton().get(op_name), key, std::forward<Fn>(fn), 0) {}
  ~ScopedOverride();
  ScopedOverride(const ScopedOverride&) = delete;
  ScopedOverride& operator=(const ScopedOverride&) = delete;

 private:
  template <class Fn>
  ScopedOverride(const OperatorHandle& op, DispatchKey key, Fn&& fn, int)
      : ScopedOverride(op, key, internal::make_kernel(op, key, std::forward<Fn>(fn), "/override")) {}
  ScopedOverride(const OperatorHandle& op, DispatchKey key, KernelFunction kernel);
  const OperatorHandle& op_;
  DispatchKey key_;
  KernelFunction previous_;
  std::optional<internal::LiveLink<ScopedOverride>> link_;  // among the live overrides of (op, key)
};

}  // namespace opspec

// OPSPEC_LIBRARY(ns, lib): defines a function run once at start-up with a
// Library for namespace ns, like TORCH_LIBRARY. Put it in the user's own
// executable (static initializers in static libraries may be dropped).
#define OPSPEC_LIBRARY(ns, lib)                                               \
  static void opspec_library_init_##ns(::opspec::Library& lib);               \
  static const int opspec_library_registrar_##ns = [] {                       \
    ::opspec::Library l(#ns);                                                 \
    opspec_library_init_##ns(l);                                              \
    return 0;                                                                 \
  }();                                                                        \
  static void opspec_library_init_##ns(::opspec::Library& lib)
