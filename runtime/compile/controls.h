// controls.h: fine-grained control of what compile() captures: PyTorch's
// graph_break, disallow_in_graph, allow_in_graph, forbid_in_graph, disable
// and is_compiling. See Note [Lazy capture] in compile.h.
#pragma once

#include <source_location>
#include <string>
#include <string_view>

#include "runtime/trace/make_fx.h"

namespace opspec {

// graph_break: ends the graph being captured here; the ops before and after
// go to two graphs (torch._dynamo.graph_break()). No effect outside capture.
void graph_break(const std::source_location& loc = std::source_location::current());

// is_compiling: whether the calling code is being captured by compile();
// layers below compile ask internal::is_compiling_now() (See Note [Is compiling]).
bool is_compiling();

// disallow_in_graph: calls of op (e.g. "aten::sub.Tensor") break the graph and
// run eagerly between two graphs. Global, like PyTorch's; undo with allow_op_in_graph.
void disallow_in_graph(std::string_view op_name);
// allow_op_in_graph: undoes disallow_in_graph(op_name).
void allow_op_in_graph(std::string_view op_name);

// AllowedFunction: a function recorded as one opaque graph node (see allow_in_graph).
class AllowedFunction {
 public:
  AllowedFunction(std::string op_name, TracedFunction fn) : op_name_(std::move(op_name)), fn_(std::move(fn)) {}
  // operator(): calls the op "opspec_allowed::<name>", whose kernel runs fn.
  Tensor operator()(const std::vector<Tensor>& inputs) const;
  template <class... Ts>
    requires(std::is_convertible_v<const Ts&, const Tensor&> && ...)
  Tensor operator()(const Ts&... inputs) const {
    return (*this)(std::vector<Tensor>{inputs...});
  }
  // op_name: "opspec_allowed::<name>".
  const std::string& op_name() const { return op_name_; }

 private:
  std::string op_name_;
  TracedFunction fn_;
};

namespace internal {
AllowedFunction allow_in_graph_impl(std::string_view name, TracedFunction fn);
}  // namespace internal

// allow_in_graph: fn (tensors in, one tensor out) becomes the op
// opspec_allowed::<name>(Tensor[] args) -> Tensor: capture records it as one
// node without looking inside; eager and the eager backend run fn; aot_eager,
// which traces below the op, sees fn's ops (as AOT Autograd traces through
// PyTorch's allow_in_graph). name must be unique.
template <class Fn>
AllowedFunction allow_in_graph(std::string_view name, Fn fn) {
  return internal::allow_in_graph_impl(name, internal::as_traced_function(std::move(fn)));
}

namespace internal {
// check_not_forbidden: throws GraphBreakError when capturing (forbid_in_graph).
void check_not_forbidden(std::string_view name);
// DisabledScope: suspends capture (and, when recursive, nested compiled
// functions) for its lifetime, after breaking the pending graph.
class DisabledScope {
 public:
  DisabledScope(std::string_view name, bool recursive, const std::source_location& loc);
  ~DisabledScope();
  DisabledScope(const DisabledScope&) = delete;
  DisabledScope& operator=(const DisabledScope&) = delete;

 private:
  bool recursive_;
  void* suspended_;  // the capture session it suspended, if any
};
}  // namespace internal

// forbid_in_graph: wraps fn so that calling it while being captured is an
// error (GraphBreakError) rather than a break; outside capture it just runs.
template <class Fn>
auto forbid_in_graph(std::string name, Fn fn) {
  return [name = std::move(name), fn = std::move(fn)](auto&&... args) -> decltype(auto) {
    internal::check_not_forbidden(name);
    return fn(std::forward<decltype(args)>(args)...);
  };
}

// disable: wraps fn so that it never runs captured (torch.compiler.disable):
// a call during capture breaks the graph and runs fn eagerly. recursive (the
// default): compiled functions fn calls run eagerly too; otherwise they still
// compile, as Dynamo still compiles frames a non-recursively disabled frame calls.
// The break's user site is loc, where disable() was called: the wrapper takes
// any arguments, so it cannot default a location of its own caller.
template <class Fn>
auto disable(std::string name, Fn fn, bool recursive = true,
             const std::source_location& loc = std::source_location::current()) {
  return [name = std::move(name), fn = std::move(fn), recursive, loc](auto&&... args) -> decltype(auto) {
    internal::DisabledScope scope(name, recursive, loc);
    return fn(std::forward<decltype(args)>(args)...);
  };
}

}  // namespace opspec
