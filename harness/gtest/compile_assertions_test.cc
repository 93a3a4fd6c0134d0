#include "harness/gtest/compile_assertions.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/compile/controls.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace compile_assertions_test {

using ::testing::_;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_util::nonfatal_failure_of;

Tensor add_mul(const Tensor& a, const Tensor& b) { return ops::mul(ops::add(a, b), b); }

Tensor with_break(const Tensor& x) {
  Tensor y = ops::relu(x);
  graph_break();
  return ops::sin(y);
}

Tensor with_two_breaks(const Tensor& x) {
  Tensor y = ops::relu(x);
  graph_break();
  y = ops::sin(y);
  graph_break();
  return ops::cos(y);
}

Tensor elementwise_chain(const Tensor& x) { return ops::sin(ops::relu(ops::add(x, x))); }

// off_by_one_backend: the eager backend with 1 added to every output, so
// compiled results differ from eager ones.
CompileOptions off_by_one_backend() {
  CompileOptions options;
  options.backend_fn = [](const Graph& graph, const std::vector<Tensor>& example) -> CompiledGraph {
    CompiledGraph inner = lookup_backend("eager")(graph, example);
    return [inner](const std::vector<Tensor>& inputs) {
      std::vector<Tensor> out = inner(inputs);
      for (Tensor& t : out) t = ops::add(t, ops::ones_like(t));
      return out;
    };
  };
  return options;
}

// ---- EXPECT_EAGER_COMPILED_EQUIVALENT ----

TEST(EagerCompiledEquivalentTest, PassesForEveryOptionsForm) {
  Tensor x = ops::randn({3, 4}), y = ops::randn({3, 4});
  EXPECT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y});
  EXPECT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y}, {.compile = {.backend = "fused"}});
  EXPECT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y}, {.backend = "aot_eager"});
  EXPECT_EAGER_COMPILED_EQUIVALENT([&](const Tensor& a) { return ops::relu(ops::mul(a, y)); }, {x},
                                   CompileOptions{.backend = "fused"});
  ASSERT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y}, {.compile = {.backend = "eager"}, .close = {.bitwise = true}});
}

TEST(EagerCompiledEquivalentTest, FailurePrintsTheComparison) {
  Tensor x = ops::randn({3, 4}), y = ops::randn({3, 4});
  EXPECT_NONFATAL_FAILURE(EXPECT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y}, off_by_one_backend()), "results differ");
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, y}, off_by_one_backend());
  });
  EXPECT_THAT(
      msg,
      StartsWith("eager vs compiled `add_mul` on `{x, y}`:\neager and compiled (a custom backend) results differ\n"));
  EXPECT_THAT(msg, HasSubstr("Mismatched elements: 12 / 12 (100.0%)"));
  EXPECT_THAT(msg, HasSubstr("Greatest absolute difference: 1"));
}

TEST(EagerCompiledEquivalentTest, AssertFormIsFatalAndThrowsAreFailures) {
  EXPECT_FATAL_FAILURE(
      {
        Tensor x = ops::randn({2});
        ASSERT_EAGER_COMPILED_EQUIVALENT(add_mul, {x, x}, off_by_one_backend());
      },
      "results differ");
  EXPECT_NONFATAL_FAILURE(EXPECT_EAGER_COMPILED_EQUIVALENT(
                              [](const Tensor&) -> Tensor { throw std::runtime_error("kaboom"); }, {ops::randn({2})}),
                          "threw: kaboom");
}

// ---- EXPECT_GRAPH_BREAKS ----

TEST(GraphBreaksTest, CountsAndReasons) {
  Tensor x = ops::randn({4});
  EXPECT_GRAPH_BREAKS(add_mul, {x, x}, 0);
  EXPECT_GRAPH_BREAKS(with_break, {x}, 1);
  EXPECT_GRAPH_BREAKS(with_break, {x}, 1, HasSubstr("graph_break()"));
  EXPECT_GRAPH_BREAKS(with_break, {x}, 1, "graph_break()");  // a string means HasSubstr
  EXPECT_GRAPH_BREAKS(with_two_breaks, {x}, 2, _, "graph_break", CompileOptions{.backend = "aot_eager"});
  EXPECT_GRAPH_BREAKS(with_two_breaks, {x}, 2, {.backend = "fused"});
  ASSERT_GRAPH_BREAKS(with_two_breaks, {x}, 2, HasSubstr("opspec::graph_break()"));
}

TEST(GraphBreaksTest, DisallowedOpBreaks) {
  Tensor x = ops::randn({4});
  disallow_in_graph("aten::sub.Tensor");
  EXPECT_GRAPH_BREAKS([](const Tensor& a) { return ops::add(ops::sub(ops::add(a, a), a), a); }, {x}, 1,
                      HasSubstr("disallow_in_graph"));
  allow_op_in_graph("aten::sub.Tensor");
}

TEST(GraphBreaksTest, CountFailureListsTheBreaks) {
  Tensor x = ops::randn({4});
  EXPECT_NONFATAL_FAILURE(EXPECT_GRAPH_BREAKS(with_break, {x}, 0), "expected 0 graph breaks, got 1");
  const std::string msg = nonfatal_failure_of([&] { EXPECT_GRAPH_BREAKS(with_two_breaks, {x}, 1); });
  EXPECT_THAT(msg,
              StartsWith("graph breaks of `with_two_breaks` (backend 'eager'):\nexpected 1 graph break, got 2:\n"));
  EXPECT_THAT(msg, HasSubstr("graph_break()"));
}

TEST(GraphBreaksTest, ReasonFailureShowsMatcherAndReason) {
  Tensor x = ops::randn({4});
  EXPECT_NONFATAL_FAILURE(EXPECT_GRAPH_BREAKS(with_two_breaks, {x}, 2, _, HasSubstr("disallow")),
                          "break 2's reason doesn't match\n  expected: has substring \"disallow\"\n    actual: \"");
  const std::string msg = nonfatal_failure_of([&] { EXPECT_GRAPH_BREAKS(with_break, {x}, 1, "nope"); });
  EXPECT_THAT(msg, HasSubstr("all breaks:\n  break 1: "));
  EXPECT_NONFATAL_FAILURE(EXPECT_GRAPH_BREAKS(with_break, {x}, 1, _, _),
                          "2 reason matchers given for 1 expected graph breaks");
  EXPECT_FATAL_FAILURE(
      {
        Tensor x2 = ops::randn({4});
        ASSERT_GRAPH_BREAKS(with_break, {x2}, 3);
      },
      "expected 3 graph breaks, got 1");
}

// ---- EXPECT_GRAPHS ----

TEST(GraphsTest, PassesAndFails) {
  Tensor x = ops::randn({4});
  EXPECT_GRAPHS(add_mul, {x, x}, 1);
  EXPECT_GRAPHS(with_break, {x}, 2);
  ASSERT_GRAPHS(with_two_breaks, {x}, 3, {.backend = "aot_eager"});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_GRAPHS(with_break, {x}, 1); });
  EXPECT_THAT(msg,
              StartsWith("graphs of `with_break` (backend 'eager'):\nexpected 1 graph, got 2 (in the first call)"));
  EXPECT_THAT(msg, HasSubstr("--- graph 1 of 2 compiled ---"));
  EXPECT_FATAL_FAILURE(
      {
        Tensor x2 = ops::randn({4});
        ASSERT_GRAPHS(add_mul, {x2, x2}, 0);
      },
      "expected 0 graphs, got 1");
}

// ---- EXPECT_RECOMPILES ----

TEST(RecompilesTest, PassesAndFails) {
  Tensor a = ops::randn({2}), b = ops::randn({3});
  EXPECT_RECOMPILES(elementwise_chain, {{a}, {a}}, 0);
  EXPECT_RECOMPILES(elementwise_chain, {{a}, {b}}, 1);
  EXPECT_RECOMPILES(elementwise_chain, {{a}, {b}}, 0, {.dynamic = true});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_RECOMPILES(elementwise_chain, {{a}, {b}}, 0); });
  EXPECT_THAT(msg, StartsWith("recompiles of `elementwise_chain` (backend 'eager'):\nexpected 0 recompiles, got 1:\n"
                              "  recompile 1: "));
  EXPECT_FATAL_FAILURE(
      {
        Tensor a2 = ops::randn({2});
        ASSERT_RECOMPILES(elementwise_chain, {{a2}, {a2}}, 2);
      },
      "expected 2 recompiles, got 0");
}

// ---- EXPECT_FUSED_KERNELS ----

TEST(FusedKernelsTest, PassesAndFails) {
  Tensor x = ops::randn({8});
  EXPECT_FUSED_KERNELS(elementwise_chain, {x}, 1);
  EXPECT_FUSED_KERNELS(elementwise_chain, {x}, 0, {.backend = "eager"});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_FUSED_KERNELS(elementwise_chain, {x}, 2); });
  EXPECT_THAT(msg, StartsWith("fused kernels of `elementwise_chain` (backend 'fused'):\nexpected 2 fused kernels, "
                              "got 1 (in the first call); kernels launched:\n  [fused]"));
  EXPECT_NONFATAL_FAILURE(EXPECT_FUSED_KERNELS(elementwise_chain, {x}, 1, {.backend = "eager"}),
                          "no kernel was launched outside the dispatcher");
  EXPECT_FATAL_FAILURE(
      {
        Tensor x2 = ops::randn({8});
        ASSERT_FUSED_KERNELS(elementwise_chain, {x2}, 3);
      },
      "expected 3 fused kernels, got 1");
}

TEST(CompileAssertionsTest, ExceptionsFromFnAreFailures) {
  Tensor x = ops::randn({2});
  EXPECT_NONFATAL_FAILURE(
      EXPECT_GRAPHS([](const Tensor&) -> Tensor { throw std::runtime_error("no graphs today"); }, {x}, 1),
      "fn threw: no graphs today");
  EXPECT_NONFATAL_FAILURE(EXPECT_GRAPH_BREAKS(with_break, {x}, 0, {.fullgraph = true}), "fn threw: ");
}

}  // namespace
}  // namespace opspec
