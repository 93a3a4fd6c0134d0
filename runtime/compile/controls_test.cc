// Graph breaks and their controls: graph_break, disallow_in_graph, data reads,
// disable, missing meta kernels, allow_in_graph, forbid_in_graph,
// is_compiling, fullgraph, and explain().
#include "runtime/compile/controls.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/compile.h"
#include "runtime/compile/explain.h"
#include "runtime/compile/logging.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace controls_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::StartsWith;
using ::testing::ThrowsMessage;

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

TEST(GraphBreaks, GraphBreakSplitsTheGraphAndRecordsWhere) {
  auto f = [](const Tensor& x) {
    const Tensor y = ops::relu(x);
    graph_break();
    return ops::neg(y);
  };
  auto cf = compile(f);
  const Tensor x = ops::arange(-2.0, 2.0);
  expect_same(cf(x)[0], f(x));
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.graphs_run, 2);
  EXPECT_THAT(stats.ops_per_graph, ElementsAre(ElementsAre("aten::relu"), ElementsAre("aten::neg")));
  ASSERT_EQ(stats.breaks.size(), 1u);
  EXPECT_EQ(stats.breaks[0].reason, "Call to `opspec::graph_break()`");
  EXPECT_THAT(stats.breaks[0].user_site, StartsWith("controls_test.cc:"));
  EXPECT_THAT(stats.breaks[0].user_site, HasSubstr(" in TestBody"));
  EXPECT_THAT(stats.guards, ElementsAre("tensor 'x0': f32[4] stride [1] cpu", "tensor 'tmp0': f32[4] stride [1] cpu"));
}

// Dynamo counts a break when it traces: a call served by the cache finds
// none, a recompile of the graph before it finds it again, and a break that
// ends an empty graph counts once (See Note [Breaks are counted when traced]).
TEST(GraphBreaks, BreaksAreCountedWhenTracedNotOnEveryCall) {
  auto cf = compile(
      [](const Tensor& x) {
        graph_break();  // at once: the graph before it is empty
        const Tensor y = ops::relu(x);
        graph_break();
        return ops::neg(y);
      },
      {.dynamic = false});
  cf(ops::ones({4}));
  EXPECT_EQ(cf.stats().breaks.size(), 2u);
  cf(ops::ones({4}));
  cf(ops::ones({4}));
  EXPECT_EQ(cf.stats().breaks.size(), 2u);  // cache hits: it read 6
  cf(ops::ones({5}));                       // a recompile of relu's graph traces its break again
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.recompiles, 2);
  ASSERT_EQ(stats.breaks.size(), 3u);
  EXPECT_EQ(stats.breaks[2].user_site, stats.breaks[1].user_site);
  EXPECT_EQ(cf.counters().breaks, 3);
}

TEST(GraphBreaks, DisallowedOpRunsEagerlyBetweenTwoGraphs) {
  // The reference's example: add, sub, add with sub disallowed gives two
  // graphs with one add each.
  disallow_in_graph("aten::sub.Tensor");
  auto f = [](const Tensor& a) {
    Tensor x = ops::add(a, 1);
    x = ops::sub(x, 1);
    return ops::add(x, 1);
  };
  const ExplainOutput e = explain(f)(ops::ones({3}));
  allow_op_in_graph("aten::sub.Tensor");
  EXPECT_EQ(e.graph_count, 2);
  EXPECT_EQ(e.graph_break_count, 1);
  EXPECT_EQ(e.op_count, 2);
  EXPECT_THAT(e.ops_per_graph, ElementsAre(ElementsAre("aten::add.Tensor"), ElementsAre("aten::add.Tensor")));
  expect_same(e.outputs[0], ops::full({3}, 2.0));
  EXPECT_THAT(e.str(), StartsWith("Graph Count: 2\n"
                                  "Graph Break Count: 1\n"
                                  "Op Count: 2\n"
                                  "Break Reasons:\n"
                                  "  Break Reason 1:\n"
                                  "    Reason: Call to op `aten::sub.Tensor`, which is marked disallow_in_graph\n"
                                  "    User Stack:\n"
                                  "      controls_test.cc:"));
  EXPECT_THAT(e.str(), HasSubstr("Ops per Graph:\n"
                                 "  Ops 1:\n"
                                 "    aten::add.Tensor\n"
                                 "  Ops 2:\n"
                                 "    aten::add.Tensor\n"
                                 "Out Guards:\n"
                                 "  Guard 1:\n"
                                 "    Name: 'L['x0']'\n"
                                 "    Source: local\n"
                                 "    Create Function: TENSOR_MATCH\n"
                                 "    Code List: [\"check_tensor(L['x0'], torch.float32, device=cpu, size=[3], "
                                 "stride=[1])\"]\n"
                                 "  Guard 2:\n"
                                 "    Name: 'tmp0'\n"
                                 "    Source: graph\n"
                                 "    Create Function: TENSOR_MATCH\n"
                                 "    Code List: [\"check_tensor(tmp0, torch.float32, device=cpu, size=[3], "
                                 "stride=[1])\"]\n"));
  // Allowed again: one graph.
  EXPECT_EQ(explain(f)(ops::ones({3})).graph_count, 1);
}

TEST(GraphBreaks, DataReadsBreakAndSeeComputedValues) {
  auto f = [](const Tensor& x) {
    const Tensor y = ops::mul(x, 2.0);
    const std::vector<float> values = y.to_vector<float>();  // a read: the graph so far runs
    const double first = ops::sum(y).item<double>();          // another read
    return ops::add(y, values[0] + first);
  };
  const Tensor x = ops::arange(1.0, 4.0);
  const ExplainOutput e = explain(f)(x);
  expect_same(e.outputs[0], f(x));
  EXPECT_EQ(e.graph_count, 3);
  ASSERT_EQ(e.break_reasons.size(), 2u);
  EXPECT_EQ(e.break_reasons[0].reason, "Data-dependent read: Tensor::to_vector");
  EXPECT_EQ(e.break_reasons[1].reason, "Data-dependent read: aten::_local_scalar_dense (Tensor.item())");
  EXPECT_THAT(e.break_reasons[1].user_site, StartsWith("controls_test.cc:"));
}

TEST(GraphBreaks, DisabledFunctionsRunEagerlyAndUncaptured) {
  auto helper = disable("helper", [](const Tensor& t) { return ops::exp(ops::neg(t)); });
  auto f = [&](const Tensor& x) {
    EXPECT_TRUE(is_compiling());
    const Tensor y = helper(ops::relu(x));
    return ops::sin(y);
  };
  const Tensor x = ops::arange(-1.0, 2.0);
  const ExplainOutput e = explain(f)(x);
  expect_same(e.outputs[0], ops::sin(ops::exp(ops::neg(ops::relu(x)))));
  EXPECT_THAT(e.ops_per_graph, ElementsAre(ElementsAre("aten::relu"), ElementsAre("aten::sin")));
  ASSERT_EQ(e.break_reasons.size(), 1u);
  EXPECT_EQ(e.break_reasons[0].reason, "Call to function `helper`, which is wrapped with disable()");
  EXPECT_FALSE(is_compiling());
}

// The break a disable()d function causes names a user site, as every other
// break does: where disable() was called (it was "<unknown>": the location was
// taken inside the wrapper, in controls.h, and then dropped).
TEST(GraphBreaks, ADisabledFunctionsBreakNamesTheUserSite) {
  const int line = __LINE__ + 1;
  auto helper = disable("helper", [](const Tensor& t) { return ops::exp(t); });
  auto f = [&](const Tensor& x) { return ops::sin(helper(ops::relu(x))); };
  const ExplainOutput e = explain(f)(ops::ones({2}));
  ASSERT_EQ(e.break_reasons.size(), 1u);
  EXPECT_EQ(e.break_reasons[0].user_site, str_cat("controls_test.cc:", line, " in TestBody"));
  EXPECT_THAT(e.str(), AllOf(HasSubstr(str_cat("controls_test.cc:", line)), Not(HasSubstr("<unknown>"))));
  auto cf = compile(f, {.fullgraph = true, .name = "f"});
  EXPECT_THAT([&] { cf(ops::ones({2})); },
              ThrowsMessage<GraphBreakError>(HasSubstr(str_cat("  User site: controls_test.cc:", line, " in TestBody"))));
}

TEST(GraphBreaks, RecursiveDisableAlsoStopsNestedCompiledFunctions) {
  auto inner = compile([](const Tensor& t) { return ops::cos(t); });
  auto recursive = disable("recursive", [&](const Tensor& t) { return inner(t)[0]; });
  auto shallow = disable("shallow", [&](const Tensor& t) { return inner(t)[0]; }, /*recursive=*/false);
  compile([&](const Tensor& x) { return recursive(x); })(ops::ones({2}));
  EXPECT_EQ(inner.stats().compiles, 0);  // ran eagerly
  compile([&](const Tensor& x) { return shallow(x); })(ops::ones({2}));
  EXPECT_EQ(inner.stats().compiles, 1);  // compiled as its own function
  // Called directly, a compiled function inside another's capture joins it.
  auto outer = compile([&](const Tensor& x) { return ops::neg(inner(x)[0]); });
  outer(ops::ones({2}));
  EXPECT_THAT(outer.stats().ops_per_graph, ElementsAre(ElementsAre("aten::cos", "aten::neg")));
}

TEST(GraphBreaks, AnOpWithoutAMetaKernelBreaksAndRunsEagerly) {
  static const bool registered = [] {
    Library lib("controls_test");
    lib.def("double_it(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("double_it", DispatchKey::kCPU, [](const Tensor& x) { return ops::add(x, x); });
    return true;
  }();
  (void)registered;
  const OperatorHandle& op = Dispatcher::singleton().get("controls_test::double_it");
  auto f = [&](const Tensor& x) { return ops::relu(op.call<Tensor>(ops::neg(x))); };
  const Tensor x = ops::arange(-2.0, 2.0);
  const ExplainOutput e = explain(f)(x);
  expect_same(e.outputs[0], f(x));
  EXPECT_THAT(e.ops_per_graph, ElementsAre(ElementsAre("aten::neg"), ElementsAre("aten::relu")));
  ASSERT_EQ(e.break_reasons.size(), 1u);
  EXPECT_EQ(e.break_reasons[0].reason, "Op `controls_test::double_it` has no meta kernel");
}

TEST(GraphControls, AllowInGraphRecordsOneOpaqueNode) {
  static const AllowedFunction scale_shift =
      allow_in_graph("scale_shift", [](const Tensor& x, const Tensor& s) { return ops::add(ops::mul(x, s), 1.0); });
  auto f = [](const Tensor& x, const Tensor& s) { return ops::relu(scale_shift(x, s)); };
  const Tensor x = ops::arange(-2.0, 2.0), s = ops::full({4}, 3.0);
  CompileCounter counter;
  auto cf = compile(f, {.backend_fn = counter.backend(), .input_names = {"x", "s"}});
  expect_same(cf(x, s)[0], f(x, s));
  ASSERT_EQ(counter.graphs().size(), 1u);
  EXPECT_EQ(counter.graphs()[0],
            "%x = placeholder : f32[4]\n"
            "%s = placeholder : f32[4]\n"
            "%scale_shift = opspec_allowed::scale_shift([%x, %s]) : f32[4]\n"
            "%relu = aten::relu(%scale_shift) : f32[4]\n"
            "return %relu\n");
  // aot_eager traces through it, as AOT Autograd does.
  set_log_topics("graph_code");
  testing::internal::CaptureStderr();
  expect_same(compile(f, {.backend = "aot_eager"})(x, s)[0], f(x, s));
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_topics("");
  EXPECT_THAT(log, HasSubstr("aot_eager graph:"));
  EXPECT_THAT(log, HasSubstr("= aten::mul.Tensor(%arg0_1, %arg1_1)"));
  EXPECT_THAT([] { allow_in_graph("scale_shift", [](const Tensor& x) { return x; }); },
              ThrowsMessage<Error>(HasSubstr("a function named 'scale_shift' was already allowed")));
}

TEST(GraphControls, ForbiddenFunctionsFailWhenCaptured) {
  auto risky = forbid_in_graph("risky", [](const Tensor& t) { return ops::abs(t); });
  expect_same(risky(ops::full({2}, -1.0)), ops::ones({2}));  // fine outside
  auto cf = compile([&](const Tensor& x) { return risky(x); });
  EXPECT_THAT([&] { cf(ops::ones({2})); },
              ThrowsMessage<GraphBreakError>(HasSubstr("function `risky` is marked forbid_in_graph")));
}

TEST(GraphControls, FullgraphTurnsBreaksIntoErrors) {
  auto f = [](const Tensor& x) {
    const Tensor y = ops::relu(x);
    graph_break();
    return ops::neg(y);
  };
  auto cf = compile(f, {.fullgraph = true, .name = "f"});
  EXPECT_THAT([&] { cf(ops::ones({2})); },
              ThrowsMessage<GraphBreakError>(AllOf(
                  StartsWith("compile(f, fullgraph=true): graph break: Call to `opspec::graph_break()`\n"
                             "  Explanation: User-inserted graph break.\n"
                             "  Hint: Remove the `opspec::graph_break()` call. Or compile with fullgraph = false to "
                             "let the graph split here.\n"
                             "  User site: controls_test.cc:"),
                  HasSubstr(" in TestBody"))));
  auto reads = compile([](const Tensor& x) { return ops::add(x, ops::sum(x).item<double>()); }, {.fullgraph = true});
  EXPECT_THAT([&] { reads(ops::ones({2})); },
              ThrowsMessage<GraphBreakError>(HasSubstr("Data-dependent read: aten::_local_scalar_dense")));
  // Without breaks fullgraph is just compile.
  auto clean = compile([](const Tensor& x) { return ops::relu(x); }, {.fullgraph = true});
  expect_same(clean(ops::ones({2}))[0], ops::ones({2}));
  EXPECT_THAT(clean.stats().breaks, IsEmpty());
}

TEST(GraphControls, BreaksAreLoggedWhenAsked) {
  set_log_topics("graph_breaks");
  testing::internal::CaptureStderr();
  auto cf = compile(
      [](const Tensor& x) {
        graph_break();
        return ops::relu(x);
      },
      {.name = "logged"});
  cf(ops::ones({1}));
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_topics("");
  EXPECT_THAT(log, StartsWith("[opspec:graph_breaks] Graph break in logged: Call to `opspec::graph_break()` "
                              "(controls_test.cc:"));
}

}  // namespace
}  // namespace opspec
