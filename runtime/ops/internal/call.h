// call.h: call<Sig>(id, args...), how the ops:: entry points (ops*.cc)
// dispatch a builtin op. Not installed.
#pragma once

#include <utility>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal {

// Caller<Sig>: unpacks a function type so call() can name the kernel
// signature explicitly (it must match the one derived from the schema).
template <class Sig> struct Caller;
template <class Ret, class... Args>
struct Caller<Ret(Args...)> {
  static Ret call(OpId id, Args... args) {
    const Dispatcher& d = Dispatcher::singleton();  // made on first use, which fills builtin_handles
    return d.call<Ret, Args...>(*builtin_handles[static_cast<int>(id)], args...);
  }
};

// call<Sig>(id, args...): dispatches builtin op `id` with C++ signature Sig.
template <class Sig, class... Args>
auto call(OpId id, Args&&... args) {
  return Caller<Sig>::call(id, std::forward<Args>(args)...);
}

// wrap: a Scalar operand as the 0-dim wrapped-number tensor PyTorch's
// Tensor-Scalar overloads pass on (mul(x, 2) logs mul.Tensor).
inline Tensor wrap(const Scalar& s) { return make_wrapped_number(s); }

}  // namespace opspec::internal
