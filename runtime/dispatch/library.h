// library.h: Library, the registration API for ops and kernels (PyTorch's
// TORCH_LIBRARY / TORCH_LIBRARY_IMPL), used by builtins and users alike.
#pragma once

#include <string>
#include <string_view>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/signature.h"

namespace opspec {

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

  // impl: registers a typed kernel (function pointer or captureless lambda) for
  // (op, key). The C++ signature is checked against the schema.
  template <class Fn>
  Library& impl(std::string_view op_name, DispatchKey key, Fn&& fn) {
    auto* ptr = +fn;  // function pointer, also from a captureless lambda
    const OperatorHandle& op = lookup(op_name);
    internal::check_kernel_signature(op.schema(), ptr, dispatch_key_name(key));
    dispatcher_.register_kernel(op, key, KernelFunction::from_function(ptr, str_cat(op.name(), "/", dispatch_key_name(key))));
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
