// make_fx.h: make_fx, which traces a C++ function of tensors into a Graph of
// aten ops without running it (PyTorch's torch.fx.experimental.proxy_tensor.make_fx).
#pragma once

#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/graph.h"
#include "runtime/trace/decomposition_table.h"

namespace opspec {

// TracingMode: what the traced function's tensors are backed by.
enum class TracingMode : uint8_t {
  kFake,  // fake tensors: no compute, no data (the default here)
  kReal,  // the real inputs: every op also runs, as PyTorch's tracing_mode="real"
};

// MakeFxOptions: how make_fx traces.
struct MakeFxOptions {
  TracingMode tracing_mode = TracingMode::kFake;
  // pre_dispatch: capture at the top of the dispatcher, so composite ops such
  // as linear and matmul appear whole (make_fx(f, pre_dispatch=True)).
  bool pre_dispatch = false;
  // decomposition_table: ops to replace by their decompositions while tracing
  // (null: none). Must outlive the call. See Note [Decomposition tables].
  const DecompositionTable* decomposition_table = nullptr;
  // input_names: placeholder names; missing ones are "arg0_1", "arg1_1", ...
  std::vector<std::string> input_names;
  // fake_mode: the FakeTensorMode to trace under (e.g. the one a model was
  // built in); null: a fresh one per trace. Only with TracingMode::kFake.
  FakeTensorMode* fake_mode = nullptr;
};

// TracedFunction: the form make_fx traces: tensors in, tensors out.
using TracedFunction = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

// Tracer: what make_fx returns; call it with example inputs to get the graph.
class Tracer {
 public:
  Tracer(TracedFunction fn, MakeFxOptions options) : fn_(std::move(fn)), options_(std::move(options)) {}
  // operator(): traces fn on inputs (converted to fake ones in fake mode) and
  // returns the graph: one placeholder per input, one node per recorded op,
  // constants for tensors fn closed over, and fn's results as the output.
  // If fn throws, the mode stack and thread-local dispatch state are restored
  // and the exception propagates; an op's error names the op being traced.
  Graph operator()(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  Graph operator()(const Ts&... inputs) const {
    return (*this)(std::vector<Tensor>{inputs...});
  }

 private:
  TracedFunction fn_;
  MakeFxOptions options_;
};

namespace internal {
// to_tensor_vector: a traced function's result as a list of tensors.
inline std::vector<Tensor> to_tensor_vector(Tensor t) { return {std::move(t)}; }
inline std::vector<Tensor> to_tensor_vector(std::vector<Tensor> v) { return v; }
template <class... Ts>
std::vector<Tensor> to_tensor_vector(const std::tuple<Ts...>& t) {
  return std::apply([](const auto&... xs) { return std::vector<Tensor>{Tensor(xs)...}; }, t);
}
template <class A, class B>
std::vector<Tensor> to_tensor_vector(const std::pair<A, B>& p) { return {Tensor(p.first), Tensor(p.second)}; }

// TensorRef<I>: const Tensor&, for expanding an index pack into parameters.
template <size_t>
using TensorRef = const Tensor&;

// invoke_with_tensors: calls fn with the N inputs as separate arguments.
template <class Fn, size_t... I>
std::vector<Tensor> invoke_with_tensors(Fn& fn, const std::vector<Tensor>& in, std::index_sequence<I...>) {
  OPSPEC_CHECK(in.size() == sizeof...(I), "make_fx: the traced function takes ", sizeof...(I), " tensors but ",
               in.size(), " inputs were given");
  if constexpr (std::is_void_v<std::invoke_result_t<Fn&, TensorRef<I>...>>) {
    fn(in[I]...);
    return {};
  } else {
    return to_tensor_vector(fn(in[I]...));
  }
}

template <class Fn, size_t... I>
constexpr bool takes_tensors(std::index_sequence<I...>) {
  return std::is_invocable_v<Fn&, TensorRef<I>...>;
}

// tensor_arity: how many `const Tensor&` arguments fn takes (9 if none of 0..8 fit).
template <class Fn, size_t N = 0>
constexpr size_t tensor_arity() {
  if constexpr (N > 8) {
    return N;
  } else if constexpr (takes_tensors<Fn>(std::make_index_sequence<N>{})) {
    return N;
  } else {
    return tensor_arity<Fn, N + 1>();
  }
}

// as_traced_function: adapts a callable taking a std::vector<Tensor> or up to
// eight tensors, returning a Tensor, a vector, a tuple/pair of tensors, or void.
template <class Fn>
TracedFunction as_traced_function(Fn fn) {
  if constexpr (std::is_invocable_v<Fn&, const std::vector<Tensor>&>) {
    return [fn = std::move(fn)](const std::vector<Tensor>& in) mutable -> std::vector<Tensor> {
      if constexpr (std::is_void_v<std::invoke_result_t<Fn&, const std::vector<Tensor>&>>) {
        fn(in);
        return {};
      } else {
        return to_tensor_vector(fn(in));
      }
    };
  } else {
    constexpr size_t kArity = tensor_arity<Fn>();
    static_assert(kArity < 9, "make_fx: fn must take std::vector<Tensor> or up to eight const Tensor& arguments");
    return [fn = std::move(fn)](const std::vector<Tensor>& in) mutable {
      return invoke_with_tensors(fn, in, std::make_index_sequence<kArity>{});
    };
  }
}
}  // namespace internal

// make_fx: `Graph g = make_fx(f)(x, w);` traces f(x, w) into a graph of aten
// ops. By default the tensors are fake (no compute, no data) and ops are
// captured after decomposition; see MakeFxOptions. The override layer is
// enabled while tracing (as PyTorch's make_fx enables the Python dispatcher),
// so registered overrides apply. See Note [Proxy tracing].
template <class Fn>
Tracer make_fx(Fn fn, MakeFxOptions options = {}) {
  return Tracer(internal::as_traced_function(std::move(fn)), std::move(options));
}

}  // namespace opspec
