// boxing.h: conversions between typed C++ kernel signatures and the boxed
// Stack, so a kernel written as a plain function can be called either way.
// See Note [Boxed and unboxed calls].
#pragma once

#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"
#include "runtime/dispatch/value.h"

namespace opspec {

// Note [Boxed and unboxed calls]
// Every kernel is reachable boxed (a Stack of Values), which is what modes,
// fallbacks and tracers see. Kernels registered from typed functions also keep
// their function pointer: a plain eager call whose chosen kernel has the exact
// signature the caller used calls it directly with no Stack at all. A signature
// mismatch is not an error; the call just takes the boxed path. A typed call
// that reaches a boxed kernel (a mode's fallback) boxes its arguments for it,
// borrowing its tensors (See Note [Borrowed arguments] in value.h).

// Note [Typed fallback entries]
// A fallback serves every op, so it is boxed: it cannot know argument types
// at compile time. One that runs on hot paths (the Autograd key's, recording
// history for every op on a tensor that requires grad) may also register
// typed entries for the common signatures (KernelFunction::add_typed): a
// typed call whose resolved kernel is that fallback calls the entry with the
// op, the key set and its arguments as they are, so the call below it can
// stay unboxed too. An entry must behave as the boxed fallback does; any
// other signature takes the boxed path.

// OptionalIntArrayRef: the unboxed type of "int[]?".
using OptionalIntArrayRef = std::optional<IntArrayRef>;

namespace internal {

// Unbox<T>: reads an argument of C++ type T from a Value that lives on the
// stack for the whole call (so spans into it stay valid).
template <class T> struct Unbox;
template <> struct Unbox<const Tensor&> {  // reads only: the graph runner unboxes from const values
  static const Tensor& get(const Value& v) { return v.to_tensor(); }
};
// Copies read through the const accessor: a borrowed argument is copied
// once, not first made owned in place (See Note [Borrowed arguments]).
template <> struct Unbox<Tensor> {
  static Tensor get(const Value& v) { return v.to_tensor(); }
};
template <> struct Unbox<const std::optional<Tensor>&> {
  static std::optional<Tensor> get(const Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.to_tensor();
  }
};
template <> struct Unbox<const Scalar&> {
  static Scalar get(const Value& v) { return v.to_scalar(); }
};
template <> struct Unbox<const std::optional<Scalar>&> {
  static std::optional<Scalar> get(Value& v) {
    if (v.is_none()) return std::nullopt;
    return v.to_scalar();
  }
};
template <> struct Unbox<int64_t> {
  static int64_t get(Value& v) { return v.to_int(); }
};
template <> struct Unbox<double> {
  static double get(Value& v) { return v.to_double(); }
};
template <> struct Unbox<bool> {
  static bool get(Value& v) { return v.to_bool(); }
};
template <> struct Unbox<IntArrayRef> {
  static IntArrayRef get(Value& v) { return v.to_int_list(); }
};
template <> struct Unbox<OptionalIntArrayRef> {
  static OptionalIntArrayRef get(Value& v) {
    if (v.is_none()) return std::nullopt;
    return IntArrayRef(v.to_int_list());
  }
};
template <> struct Unbox<std::array<bool, 3>> {  // bool[3] (native_layer_norm_backward's output_mask)
  static std::array<bool, 3> get(Value& v) {
    const std::vector<bool>& l = v.to_bool_list();
    OPSPEC_CHECK(l.size() == 3, "expected a bool[3] but got ", v.repr());
    return {l[0], l[1], l[2]};
  }
};
template <> struct Unbox<TensorList> {
  static TensorList get(Value& v) { return v.to_tensor_list(); }
};
template <> struct Unbox<OptionalTensorList> {  // Tensor?[]: See Note [Optional tensor lists]
  static OptionalTensorList get(Value& v) { return {v.to_tensor_list()}; }
};
template <> struct Unbox<std::string_view> {
  static std::string_view get(Value& v) { return v.to_string(); }
};
template <> struct Unbox<DType> {
  static DType get(Value& v) { return v.to_dtype(); }
};
template <> struct Unbox<Device> {
  static Device get(Value& v) { return v.to_device(); }
};
template <class T> struct Unbox<std::optional<T>> {
  static std::optional<T> get(Value& v) {
    if (v.is_none()) return std::nullopt;
    return Unbox<T>::get(v);
  }
};

// BoxReturn<R>: pushes a kernel's result onto the stack.
template <class R> struct BoxReturn {
  static void push(Stack& s, R&& r) { s.emplace_back(std::move(r)); }
};
template <class... Ts> struct BoxReturn<std::tuple<Ts...>> {
  static void push(Stack& s, std::tuple<Ts...>&& r) {
    std::apply([&](auto&&... xs) { (s.emplace_back(std::move(xs)), ...); }, std::move(r));
  }
};

// UnboxReturn<R>: pops a boxed call's result(s) back into R.
template <class R> struct UnboxReturn;
template <> struct UnboxReturn<Tensor> {
  static Tensor pop(Stack& s) { return std::move(s.at(0).to_tensor()); }
};
template <> struct UnboxReturn<Scalar> {
  static Scalar pop(Stack& s) { return s.at(0).to_scalar(); }
};
template <> struct UnboxReturn<std::vector<Tensor>> {
  static std::vector<Tensor> pop(Stack& s) { return std::move(s.at(0).to_tensor_list()); }
};
template <> struct UnboxReturn<void> {
  static void pop(Stack&) {}
};
template <class... Ts> struct UnboxReturn<std::tuple<Ts...>> {
  static std::tuple<Ts...> pop(Stack& s) {
    return pop_impl(s, std::index_sequence_for<Ts...>{});
  }
  template <size_t... I>
  static std::tuple<Ts...> pop_impl(Stack& s, std::index_sequence<I...>) {
    return std::tuple<Ts...>(std::move(s.at(I).to_tensor())...);
  }
};

// call_unboxed_from_stack: runs fn(args unboxed from stack), replacing the
// stack with its boxed result(s).
template <class Ret, class... Args, size_t... I>
void call_unboxed_from_stack(Ret (*fn)(Args...), Stack& stack, std::index_sequence<I...>) {
  if constexpr (std::is_void_v<Ret>) {
    fn(Unbox<Args>::get(stack[I])...);
    stack.clear();
  } else {
    Ret r = fn(Unbox<Args>::get(stack[I])...);
    stack.clear();
    BoxReturn<Ret>::push(stack, std::move(r));
  }
}

// box_arg: puts one argument on s; a Tensor is borrowed (See Note [Borrowed arguments]).
inline void box_arg(Stack& s, const Tensor& t) { s.emplace_back(Value::kBorrow, t); }
inline void box_arg(Stack& s, const std::optional<Tensor>& t) {
  if (t) {
    s.emplace_back(Value::kBorrow, *t);
  } else {
    s.emplace_back();  // None
  }
}
template <class T>
void box_arg(Stack& s, const T& arg) {
  s.emplace_back(arg);
}

// box_args: the Stack for a typed call's arguments, which must outlive it:
// it borrows their tensors when they fit inline (See Note [Borrowed arguments]).
template <class... Args>
Stack box_args(const Args&... args) {
  Stack s;
  if constexpr (sizeof...(Args) > kStackInline) {
    s.reserve(sizeof...(Args));
    (s.emplace_back(args), ...);
  } else {
    (box_arg(s, args), ...);
  }
  return s;
}

// kUndefinedTensorMark: not a dispatch key (no key has bit 15): what an
// undefined Tensor or Tensor[] element contributes to keys_of, so the
// dispatcher refuses it before any kernel runs (Note [Undefined tensor arguments]).
inline constexpr DispatchKeySet kUndefinedTensorMark = DispatchKeySet::from_bits(uint16_t{1} << 15);
static_assert(kNumDispatchKeys < 15, "kUndefinedTensorMark needs a bit no key uses");

// keys_of: the union of the dispatch keys of every tensor among args. None of
// a Tensor? or Tensor?[] contributes nothing; an undefined Tensor the mark.
inline DispatchKeySet keys_of_one(const Tensor& t) {
  return t.defined() ? t.impl()->dispatch_keys() : kUndefinedTensorMark;
}
inline DispatchKeySet keys_of_one(const std::optional<Tensor>& t) {
  return t && t->defined() ? t->impl()->dispatch_keys() : DispatchKeySet();
}
inline DispatchKeySet keys_of_one(TensorList ts) {
  DispatchKeySet k;
  for (const Tensor& t : ts) k = k | keys_of_one(t);
  return k;
}
inline DispatchKeySet keys_of_one(OptionalTensorList ts) { return keys_of_one(ts.tensors) - kUndefinedTensorMark; }
template <class T> DispatchKeySet keys_of_one(const T&) { return {}; }
template <class... Args>
DispatchKeySet keys_of(const Args&... args) {
  return (DispatchKeySet() | ... | keys_of_one(args));
}

}  // namespace internal
}  // namespace opspec
