// compile_assertions.h: gtest macros over what the compiler does with a
// function: EXPECT_EAGER_COMPILED_EQUIVALENT, EXPECT_GRAPH_BREAKS,
// EXPECT_GRAPHS, EXPECT_RECOMPILES, EXPECT_FUSED_KERNELS (and ASSERT_ forms).
// Thin glue over harness/expect/equivalence.h and compile_observer.h, whose
// messages they print. See Note [Compile assertion arguments].
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/expect/compile_observer.h"
#include "harness/expect/equivalence.h"
#include "harness/gtest/macro_args.h"
#include "runtime/compile/compile.h"

// Note [Compile assertion arguments]
// These macros forward their arguments to ordinary C++ functions, so
// lambdas with captures, braced input lists `{x, y}` and designated
// initializers `{.backend = "fused"}` all work unparenthesized (see Note
// [Statement arguments]). fn is anything compile() accepts: a callable taking
// std::vector<Tensor> or up to eight tensors, returning a Tensor, tensors or
// void. Each check compiles fn afresh (its own cache), so checks don't
// interfere. Options are an optional LAST argument: a CompileOptions (or,
// for EXPECT_EAGER_COMPILED_EQUIVALENT, an EquivalenceOptions); a braced list
// works where it is unambiguous. Defaults: CompileOptions{} (backend
// "eager"), except EXPECT_FUSED_KERNELS, whose default backend is "fused".
// Every failure starts with a line naming the check, `FN` and the backend
// ("graph breaks of `f` (backend 'eager'):"), then the message of the
// harness/expect check. An exception from fn or the compiler
// is a failure ("... threw: WHAT"), not a crash of the test.

// EXPECT_EAGER_COMPILED_EQUIVALENT(fn, inputs [, options]): runs fn eagerly
// and compiled on copies of inputs and compares the outputs
// (check_eager_compiled_equivalent: per-dtype assert_close tolerances, or
// bitwise); a failure prints mismatch counts, greatest differences and the
// first op where the two DebugMode logs diverge:
//   eager vs compiled `f` on `{x, y}`:
//   eager and compiled (backend 'fused') results differ
//   output 0: Tensor-likes are not close!
//   Mismatched elements: 12 / 12 (100.0%) ...
// options: EquivalenceOptions or CompileOptions.
//   EXPECT_EAGER_COMPILED_EQUIVALENT(f, {x, y});
//   EXPECT_EAGER_COMPILED_EQUIVALENT(f, {x, y}, {.compile = {.backend = "fused"}, .close = {.bitwise = true}});
//   EXPECT_EAGER_COMPILED_EQUIVALENT(f, {x}, CompileOptions{.backend = "aot_eager"});
#define EXPECT_EAGER_COMPILED_EQUIVALENT(...) \
  GTEST_ASSERT_(::opspec::internal::eager_compiled_equivalent(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_EAGER_COMPILED_EQUIVALENT: fatal form.
#define ASSERT_EAGER_COMPILED_EQUIVALENT(...) \
  GTEST_ASSERT_(::opspec::internal::eager_compiled_equivalent(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

// EXPECT_GRAPH_BREAKS(fn, inputs, n [, reason...] [, options]): one call of
// fn compiled breaks its graph exactly n times; each `reason` (a gMock string
// matcher, or a string meaning HasSubstr(string)) matches the reason of the
// break at its position (the first reason the first break, ...; fewer
// reasons than n leave the later breaks unchecked).
//   EXPECT_GRAPH_BREAKS(f, {x}, 0);
//   EXPECT_GRAPH_BREAKS(f, {x}, 1, HasSubstr("disallow_in_graph"));
//   EXPECT_GRAPH_BREAKS(f, {x}, 2, "graph_break()", _, CompileOptions{.backend = "aot_eager"});
// Failure: "graph breaks of `f` (backend 'eager'):\nexpected 1 graph break, got 2:\n  break 1: ..."
// or "break 1's reason doesn't match: expected: has substring ...".
#define EXPECT_GRAPH_BREAKS(...) \
  GTEST_ASSERT_(::opspec::internal::graph_breaks(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_GRAPH_BREAKS: fatal form.
#define ASSERT_GRAPH_BREAKS(...) \
  GTEST_ASSERT_(::opspec::internal::graph_breaks(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

// EXPECT_GRAPHS(fn, inputs, n [, options]): one call of fn compiled runs n graphs.
//   EXPECT_GRAPHS(f, {x}, 2);
#define EXPECT_GRAPHS(...) GTEST_ASSERT_(::opspec::internal::graphs(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_GRAPHS: fatal form.
#define ASSERT_GRAPHS(...) GTEST_ASSERT_(::opspec::internal::graphs(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

// EXPECT_RECOMPILES(fn, calls, n [, options]): calling fn compiled once per
// entry of calls (each a list of inputs) recompiles exactly n times; a
// failure lists the recompile reasons (the guards that failed).
//   EXPECT_RECOMPILES(f, {{ops::randn({2})}, {ops::randn({3})}}, 1);
#define EXPECT_RECOMPILES(...) \
  GTEST_ASSERT_(::opspec::internal::recompiles(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_RECOMPILES: fatal form.
#define ASSERT_RECOMPILES(...) \
  GTEST_ASSERT_(::opspec::internal::recompiles(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

// EXPECT_FUSED_KERNELS(fn, inputs, n [, options]): one call of fn compiled
// (backend "fused" unless options say otherwise) launches n fused kernels;
// a failure lists the kernels launched.
//   EXPECT_FUSED_KERNELS(f, {x}, 1);
#define EXPECT_FUSED_KERNELS(...) \
  GTEST_ASSERT_(::opspec::internal::fused_kernels(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_FUSED_KERNELS: fatal form.
#define ASSERT_FUSED_KERNELS(...) \
  GTEST_ASSERT_(::opspec::internal::fused_kernels(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

namespace opspec::internal {

using ReasonMatcher = ::testing::Matcher<const std::string&>;

// Non-template bodies of the macros; text is the stringized macro arguments.
::testing::AssertionResult eager_compiled_equivalent_impl(const char* text, const TracedFunction& fn,
                                                          const std::vector<Tensor>& inputs,
                                                          const EquivalenceOptions& options);
::testing::AssertionResult graph_breaks_impl(const char* text, const TracedFunction& fn,
                                             const std::vector<Tensor>& inputs, int expected,
                                             const std::vector<ReasonMatcher>& reasons, const CompileOptions& options);
::testing::AssertionResult graphs_impl(const char* text, const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                       int expected, const CompileOptions& options);
::testing::AssertionResult recompiles_impl(const char* text, const TracedFunction& fn,
                                           const std::vector<std::vector<Tensor>>& calls, int expected,
                                           const CompileOptions& options);
::testing::AssertionResult fused_kernels_impl(const char* text, const TracedFunction& fn,
                                              const std::vector<Tensor>& inputs, int expected,
                                              const CompileOptions& options);

// fused_defaults: CompileOptions{} with backend "fused".
CompileOptions fused_defaults();

template <class Fn>
::testing::AssertionResult eager_compiled_equivalent(const char* text, Fn fn, const std::vector<Tensor>& inputs,
                                                     const EquivalenceOptions& options = {}) {
  return eager_compiled_equivalent_impl(text, as_traced_function(std::move(fn)), inputs, options);
}
template <class Fn>
::testing::AssertionResult eager_compiled_equivalent(const char* text, Fn fn, const std::vector<Tensor>& inputs,
                                                     const CompileOptions& compile) {
  EquivalenceOptions options;
  options.compile = compile;
  return eager_compiled_equivalent_impl(text, as_traced_function(std::move(fn)), inputs, options);
}

// add_break_arg: sorts one trailing argument of EXPECT_GRAPH_BREAKS into
// the reason matchers or the options.
inline void add_break_arg(std::vector<ReasonMatcher>*, CompileOptions* options, const CompileOptions& o) {
  *options = o;
}
template <class M>
void add_break_arg(std::vector<ReasonMatcher>* reasons, CompileOptions*, const M& m) {
  if constexpr (std::is_convertible_v<const M&, std::string_view>) {
    reasons->push_back(::testing::HasSubstr(std::string(std::string_view(m))));
  } else {
    reasons->push_back(::testing::MatcherCast<const std::string&>(m));
  }
}

template <class Fn, class... Args>
::testing::AssertionResult graph_breaks(const char* text, Fn fn, const std::vector<Tensor>& inputs, int expected,
                                        const Args&... args) {
  std::vector<ReasonMatcher> reasons;
  CompileOptions options;
  (add_break_arg(&reasons, &options, args), ...);
  return graph_breaks_impl(text, as_traced_function(std::move(fn)), inputs, expected, reasons, options);
}
template <class Fn>
::testing::AssertionResult graph_breaks(const char* text, Fn fn, const std::vector<Tensor>& inputs, int expected,
                                        const CompileOptions& options) {
  return graph_breaks_impl(text, as_traced_function(std::move(fn)), inputs, expected, {}, options);
}

template <class Fn>
::testing::AssertionResult graphs(const char* text, Fn fn, const std::vector<Tensor>& inputs, int expected,
                                  const CompileOptions& options = {}) {
  return graphs_impl(text, as_traced_function(std::move(fn)), inputs, expected, options);
}

template <class Fn>
::testing::AssertionResult recompiles(const char* text, Fn fn, const std::vector<std::vector<Tensor>>& calls,
                                      int expected, const CompileOptions& options = {}) {
  return recompiles_impl(text, as_traced_function(std::move(fn)), calls, expected, options);
}

template <class Fn>
::testing::AssertionResult fused_kernels(const char* text, Fn fn, const std::vector<Tensor>& inputs, int expected,
                                         const CompileOptions& options = fused_defaults()) {
  return fused_kernels_impl(text, as_traced_function(std::move(fn)), inputs, expected, options);
}

}  // namespace opspec::internal
