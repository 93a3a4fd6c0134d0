// observe_compile and the compile checks: graph breaks (graph_break,
// disallow_in_graph), graphs, recompiles on a new shape, fused kernels.
#include "harness/expect/compile_observer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/controls.h"
#include "runtime/compile/explain.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace compile_observer_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::vector<Tensor> relu_break_neg(const std::vector<Tensor>& in) {
  const Tensor y = ops::relu(in[0]);
  graph_break();
  return {ops::neg(y)};
}

// DisallowGuard: disallow_in_graph for one test only (the setting is global).
struct DisallowGuard {
  explicit DisallowGuard(std::string op) : op_(std::move(op)) { disallow_in_graph(op_); }
  ~DisallowGuard() { allow_op_in_graph(op_); }
  std::string op_;
};

TEST(ObserveCompile, GraphBreakGivesTwoGraphsAndTheChecksSayWhy) {
  const Tensor x = ops::arange(-2.0, 2.0);
  const CompileObservation obs = observe_compile(&relu_break_neg, {{x}}, {});
  ASSERT_EQ(obs.outputs.size(), 1u);
  EXPECT_EQ(obs.outputs[0][0].to_vector<float>(), (std::vector<float>{-0.0f, -0.0f, -0.0f, -1.0f}));
  EXPECT_EQ(obs.graphs_first_call, 2);
  ASSERT_EQ(obs.graphs.size(), 2u);
  EXPECT_THAT(obs.graphs[0], HasSubstr("aten::relu(%x0)"));
  EXPECT_THAT(obs.graphs[1], HasSubstr("aten::neg(%tmp0)"));
  EXPECT_THAT(obs.debug_string, HasSubstr("aten::relu("));
  EXPECT_THAT(obs.debug_string, HasSubstr("aten::neg("));
  EXPECT_THAT(obs.explain, StartsWith("Graph Count: 2\nGraph Break Count: 1\nOp Count: 2\nBreak Reasons:\n"
                                      "  Break Reason 1:\n    Reason: Call to `opspec::graph_break()`\n"));

  EXPECT_TRUE(check_graph_breaks(obs.stats, 1).ok);
  const CheckResult none = check_graph_breaks(obs.stats, 0);
  EXPECT_FALSE(none.ok);
  EXPECT_THAT(none.message, StartsWith("expected 0 graph breaks, got 1:\n"
                                       "  break 1: Call to `opspec::graph_break()` at compile_observer_test.cc:"));
  EXPECT_TRUE(check_graph_breaks(obs.stats, std::vector<std::string>{"graph_break()"}).ok);
  EXPECT_THAT(check_graph_breaks(obs.stats, std::vector<std::string>{"disallow"}).message,
              StartsWith("graph break 1's reason does not contain 'disallow':\n"
                         "  break 1: Call to `opspec::graph_break()` at "));
  EXPECT_THAT(check_graph_breaks(obs.stats, std::vector<std::string>{"a", "b"}).message,
              StartsWith("expected 2 graph breaks (reasons containing 'a', 'b'), got 1:\n  break 1: "));

  EXPECT_TRUE(check_graphs(obs, 2).ok);
  const CheckResult one = check_graphs(obs, 1);
  EXPECT_THAT(one.message, StartsWith("expected 1 graph, got 2 (in the first call)\ngraph breaks:\n  break 1: "));
  EXPECT_THAT(one.message, HasSubstr("--- graph 1 of 2 compiled ---\n" + obs.graphs[0]));
  EXPECT_THAT(one.message, HasSubstr("--- graph 2 of 2 compiled ---\n" + obs.graphs[1]));
}

TEST(ObserveCompile, NoBreakMessages) {
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0])}; };
  const CompileObservation obs = observe_compile(f, {{ops::ones({2})}}, {});
  EXPECT_TRUE(check_graph_breaks(obs.stats, 0).ok);
  EXPECT_EQ(check_graph_breaks(obs.stats, 1).message, "expected 1 graph break, got 0");
  EXPECT_TRUE(check_graphs(obs, 1).ok);
  EXPECT_THAT(check_graphs(obs, 3).message, StartsWith("expected 3 graphs, got 1 (in the first call)\n--- graph 1 of 1"));
}

TEST(ObserveCompile, DisallowedOpBreaksTheGraph) {
  DisallowGuard disallow("aten::sub.Tensor");
  auto f = [](const std::vector<Tensor>& in) {
    Tensor x = ops::add(in[0], 1);
    x = ops::sub(x, 1);
    return std::vector<Tensor>{ops::add(x, 1)};
  };
  const CompileObservation obs = observe_compile(f, {{ops::ones({3})}}, {.backend = "aot_eager"});
  EXPECT_EQ(obs.graphs_first_call, 2);
  EXPECT_TRUE(check_graph_breaks(obs.stats, std::vector<std::string>{"disallow_in_graph"}).ok);
  EXPECT_THAT(check_graph_breaks(obs.stats, 2).message,
              HasSubstr("break 1: Call to op `aten::sub.Tensor`, which is marked disallow_in_graph at "));
  EXPECT_EQ(obs.outputs[0][0].to_vector<float>(), (std::vector<float>{2, 2, 2}));
}

TEST(ObserveCompile, RecompileOnANewShape) {
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0])}; };
  CompileOptions options;
  options.input_names = {"x"};
  const CompileObservation obs = observe_compile(f, {{ops::ones({3})}, {ops::ones({5})}, {ops::ones({3})}}, options);
  ASSERT_EQ(obs.counts_per_call.size(), 3u);
  EXPECT_EQ(obs.counts_per_call[0].recompiles, 0);
  EXPECT_EQ(obs.counts_per_call[1].recompiles, 1);
  EXPECT_EQ(obs.stats.recompiles, 1);
  EXPECT_EQ(obs.graphs.size(), 2u);  // the third call hits the cache
  ASSERT_EQ(obs.outputs.size(), 3u);
  EXPECT_EQ(obs.outputs[1][0].numel(), 5);
  EXPECT_TRUE(check_recompiles(obs.stats, 1).ok);
  EXPECT_EQ(check_recompiles(obs.stats, 0).message,
            "expected 0 recompiles, got 1:\n"
            "  recompile 1: tensor 'L['x']' size mismatch at index 0. expected 3, actual 5\n");
  EXPECT_EQ(check_recompiles(obs.first_call_stats, 2).message, "expected 2 recompiles, got 0");
}

TEST(ObserveCompile, FusedKernelsAreCountedFromTheFirstCall) {
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::relu(in[0] * 2.0 + 1.0)}; };
  const Tensor x = ops::arange(-2.0, 2.0);
  const CompileObservation fused = observe_compile(f, {{x}, {x}}, {.backend = "fused"}, {}, HashKind::kNorm);
  EXPECT_EQ(fused.fused_kernels, 1);
  ASSERT_EQ(fused.kernel_names.size(), 1u);
  EXPECT_THAT(fused.kernel_names[0], StartsWith("[fused] fused_"));
  EXPECT_THAT(fused.debug_string, HasSubstr("[fused] fused_"));
  EXPECT_THAT(fused.debug_string, HasSubstr("# post-kernel hashes:"));
  EXPECT_TRUE(check_fused_kernels(fused, 1).ok);
  EXPECT_EQ(check_fused_kernels(fused, 2).message,
            "expected 2 fused kernels, got 1 (in the first call); kernels launched:\n  " + fused.kernel_names[0] + "\n");
  EXPECT_EQ(fused.outputs[1][0].to_vector<float>(), (std::vector<float>{0, 0, 1, 3}));

  const CompileObservation eager = observe_compile(f, {{x}}, {.backend = "eager"});
  EXPECT_EQ(eager.fused_kernels, 0);
  EXPECT_EQ(check_fused_kernels(eager, 1).message,
            "expected 1 fused kernel, got 0 (in the first call); no kernel was launched outside the dispatcher");
}

TEST(ObserveCompile, CustomBackendIsWrappedAndEachObservationHasItsOwnCache) {
  CompileCounter counter;
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::neg(in[0])}; };
  CompileOptions options;
  options.backend_fn = counter.backend();
  const CompileObservation a = observe_compile(f, {{ops::ones({2})}}, options);
  const CompileObservation b = observe_compile(f, {{ops::ones({2})}}, options);
  EXPECT_EQ(counter.frame_count(), 2);  // one compile per observation: no shared cache
  EXPECT_EQ(a.graphs, std::vector<std::string>{counter.graphs()[0]});
  EXPECT_EQ(b.stats.compiles, 1);
  // The debug options are honoured.
  const CompileObservation ids = observe_compile(f, {{ops::ones({2})}}, {}, {.record_ids = true});
  EXPECT_THAT(ids.debug_string, HasSubstr("t$0"));
}

TEST(ObserveCompile, UnknownBackendThrows) {
  auto f = [](const std::vector<Tensor>& in) { return in; };
  EXPECT_THROW(observe_compile(f, {{ops::ones({1})}}, {.backend = "no_such_backend"}), Error);
}

// Many calls, each with a graph break: the observation keeps counters per
// call, not a CompileStats copy holding every break so far (20,000 calls once
// peaked at 5.4 GB), and no call's inputs or outputs outlive it (issue 21.6).
TEST(ObserveCompile, MemoryStaysFlatInTheNumberOfCalls) {
  constexpr size_t kCalls = 400;
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  std::vector<int64_t> in_use;  // tensor bytes alive when each call's inputs are made
  const auto make_call = [&](size_t i) {
    in_use.push_back(cpu->stats().bytes_in_use);
    return std::vector<Tensor>{ops::full({256}, static_cast<double>(i))};
  };
  const CompileObservation obs =
      observe_compile(&relu_break_neg, kCalls, make_call, {}, ObserveOptions{.keep_outputs = false});
  ASSERT_EQ(in_use.size(), kCalls);
  EXPECT_EQ(in_use[kCalls - 1], in_use[10]);  // nothing accumulates from call to call
  EXPECT_TRUE(obs.outputs.empty());
  ASSERT_EQ(obs.counts_per_call.size(), kCalls);
  EXPECT_EQ(obs.counts_per_call[0].breaks, 1);
  // The break is found when the first call traces; the cached calls find none
  // (See Note [Breaks are counted when traced]).
  EXPECT_EQ(obs.counts_per_call[kCalls - 1].breaks, 1);
  EXPECT_EQ(obs.first_call_stats.breaks.size(), 1u);
  EXPECT_EQ(obs.stats.breaks.size(), 1u);
  EXPECT_EQ(obs.graphs_first_call, 2);
}

}  // namespace
}  // namespace opspec
