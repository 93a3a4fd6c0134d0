// The torch._dynamo API around compile(): guard_fail_fn, guard_export_fn,
// run() (cache only), optimize(disable=True), mark_dynamic inside a compiled
// function, backend tags, the guards log, and the symbolic guards of
// dynamic dims (0/1 specialization, automatic dynamic, duck shaping).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/compile.h"
#include "runtime/compile/explain.h"
#include "runtime/compile/logging.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace dynamo_api_test {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::ThrowsMessage;

Tensor twice(const Tensor& x) { return ops::mul(x, 2); }

TEST(GuardFailFn, HearsEachMissWithPyTorchsReason) {
  std::vector<GuardFailure> failures;
  CompiledFunction* self = nullptr;
  int compiles_seen = -1;
  auto cf = compile(&twice, {.input_names = {"x"},
                             .name = "twice",
                             .guard_fail_fn = [&](const GuardFailure& f) {
                               failures.push_back(f);
                               compiles_seen = self->stats().compiles;  // the lock is not held
                             }});
  self = &cf;
  cf(ops::ones({3}));
  cf(ops::ones({3}));
  EXPECT_THAT(failures, IsEmpty());
  cf(ops::ones({5}));
  cf(ops::ones({5}, {.dtype = DType::kFloat64}));
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].reason, "tensor 'L['x']' size mismatch at index 0. expected 3, actual 5");
  EXPECT_EQ(failures[0].function, "twice");
  EXPECT_EQ(failures[0].graph, 0u);
  EXPECT_EQ(failures[1].reason, "tensor 'L['x']' dtype mismatch. expected Float, actual Double");
  EXPECT_EQ(compiles_seen, 3);  // called once the recompile is done, without the cache's lock
  EXPECT_EQ(cf.stats().compiles, 3);
}

TEST(GuardFailFn, IsCalledWhenErrorOnRecompileRefuses) {
  int calls = 0;
  auto cf = compile(&twice, {.error_on_recompile = true, .guard_fail_fn = [&](const GuardFailure&) { ++calls; }});
  cf(ops::ones({3}));
  EXPECT_THROW(cf(ops::ones({4})), RecompileError);
  EXPECT_EQ(calls, 1);
}

TEST(GuardExportFn, GetsTheGuardsOfEachCompile) {
  std::vector<std::vector<std::string>> exported;
  auto f = [](const Tensor& x, const Tensor& y) { return ops::add(x, y); };
  auto cf = compile(f, {.dynamic = true,
                        .input_names = {"x", "y"},
                        .guard_export_fn = [&](const GuardSet& g) { exported.push_back(g.code()); }});
  cf(ops::ones({4, 3}), ops::ones({4, 3}));
  cf(ops::ones({6, 5}), ops::ones({6, 5}));  // the same graph: nothing exported
  ASSERT_EQ(exported.size(), 1u);
  // Duck shaping: y's dims have x's sizes, so they are x's symbols, guarded equal.
  EXPECT_THAT(exported[0],
              ElementsAre("TENSOR_MATCH: check_tensor(L['x'], torch.float32, device=cpu, size=[None, None], "
                          "stride=[None, 1])",
                          "TENSOR_MATCH: check_tensor(L['y'], torch.float32, device=cpu, size=[None, None], "
                          "stride=[None, 1])",
                          "LAMBDA_GUARD: 2 <= L['x'].size()[0]", "LAMBDA_GUARD: L['y'].size()[0] == L['x'].size()[0]",
                          "LAMBDA_GUARD: 2 <= L['x'].size()[1]",
                          "LAMBDA_GUARD: L['y'].size()[1] == L['x'].size()[1]"));
}

TEST(Guards, SymbolsAreSharedByEqualSizesAndFailInPyTorchsWords) {
  const Tensor x = ops::ones({4, 3}), y = ops::ones({3});
  const GuardSet g = GuardSet::make(std::vector<Tensor>{x, y}, {"x", "y"}, {"L['x']", "L['y']"}, {0b11, 0b1});
  ASSERT_EQ(g.symbols.size(), 2u);
  EXPECT_EQ(*g.symbol_of(0, 0), "s0");
  EXPECT_EQ(*g.symbol_of(0, 1), "s1");
  EXPECT_EQ(*g.symbol_of(1, 0), "s1");  // y's dim has x's dim 1's size
  EXPECT_EQ(g.summary(), "tensor 'x': f32[s0, s1] contiguous cpu; tensor 'y': f32[s1] contiguous cpu");
  EXPECT_FALSE(g.first_failure(std::vector<Tensor>{ops::ones({9, 7}), ops::ones({7})}));
  EXPECT_EQ(g.first_failure(std::vector<Tensor>{ops::ones({9, 7}), ops::ones({6})}),
            "L['y'].size()[0] == L['x'].size()[1]");
  EXPECT_EQ(g.first_failure(std::vector<Tensor>{ops::ones({1, 7}), ops::ones({7})}), "2 <= L['x'].size()[0]");
  EXPECT_EQ(g.first_failure(std::vector<Tensor>{ops::ones({9, 7}, {.dtype = DType::kInt64}), ops::ones({7})}),
            "tensor 'L['x']' dtype mismatch. expected Float, actual Long");
  // 0/1 specialization: dims of size 0 or 1 are never symbols.
  const GuardSet small = GuardSet::make(std::vector<Tensor>{ops::ones({1, 0})}, {"x"}, {"L['x']"}, {0b11});
  EXPECT_FALSE(small.has_dynamic_dims());
  EXPECT_EQ(small.first_failure(std::vector<Tensor>{ops::ones({2, 0})}),
            "tensor 'L['x']' size mismatch at index 0. expected 1, actual 2");
}

TEST(Run, UsesOnlyWhatWasCompiled) {
  auto cf = compile(&twice, {.dynamic = false, .input_names = {"x"}});
  cf(ops::ones({3}));
  const CompiledFunction cached = run(cf);
  EXPECT_EQ(cached(ops::full({3}, 2.0))[0].to_vector<float>(), std::vector<float>(3, 4.0f));
  // A miss runs eagerly: right values, nothing compiled, no recompile counted.
  EXPECT_EQ(cached(ops::full({2}, 1.5))[0].to_vector<float>(), std::vector<float>(2, 3.0f));
  CompileStats stats = cf.stats();
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.recompiles, 0);
  EXPECT_EQ(stats.graphs_run, 3);
  cf(ops::ones({2}));  // the function itself still compiles
  EXPECT_EQ(cf.stats().compiles, 2);
}

TEST(Disable, CompilesNothing) {
  auto cf = compile(&twice, {.disable = true});
  EXPECT_EQ(cf(ops::ones({3}))[0].to_vector<float>(), std::vector<float>(3, 2.0f));
  EXPECT_EQ(cf.stats().calls, 1);
  EXPECT_EQ(cf.stats().compiles, 0);
  EXPECT_EQ(cf.stats().graphs_run, 0);
}

TEST(MarkDynamic, InsideACompiledFunctionThrows) {
  auto cf = compile([](const Tensor& x) {
    mark_dynamic(x, 0);
    return ops::neg(x);
  });
  EXPECT_THAT([&] { cf(ops::ones({3})); },
              ThrowsMessage<GraphBreakError>(HasSubstr("function `mark_dynamic` is marked forbid_in_graph")));
  // Outside, it marks the dim: new sizes of it reuse the graph.
  auto neg = compile([](const Tensor& x) { return ops::neg(x); }, {.dynamic = false});
  for (int64_t n : {3, 4, 9}) {
    const Tensor x = ops::ones({n});
    mark_dynamic(x, 0);
    neg(x);
  }
  EXPECT_EQ(neg.stats().compiles, 1);
}

TEST(Backends, TagsHideDebugBackendsAsPyTorchDoes) {
  EXPECT_THAT(list_backends(), Not(Contains("eager")));
  EXPECT_THAT(list_backends(), Not(Contains("aot_eager")));
  EXPECT_THAT(list_backends(), Contains("fused"));
  EXPECT_THAT(backend_tags("eager"), ElementsAre("debug"));
  register_backend("dynamo_api_test_experimental", &eager_backend, {"experimental"});
  EXPECT_THAT(list_backends(), Not(Contains("dynamo_api_test_experimental")));
  EXPECT_THAT(list_backends({.exclude_tags = {"debug"}}), Contains("dynamo_api_test_experimental"));
  EXPECT_THAT(list_backends({.exclude_tags = {}}), Contains("eager"));
  EXPECT_THAT([] { backend_tags("no_such_backend"); }, ThrowsMessage<Error>(HasSubstr("unknown backend")));
}

TEST(GuardsLog, ListsEveryGuardOfACompiledGraph) {
  auto cf = compile(&twice, {.input_names = {"x"}, .name = "twice"});
  const Tensor x = ops::ones({4, 3});
  mark_dynamic(x, 0);
  set_log_topics("guards");
  testing::internal::CaptureStderr();
  cf(x);
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_topics("");
  EXPECT_EQ(log,
            "[opspec:guards] GUARDS of graph 1 of twice:\n"
            "TENSOR_MATCH: check_tensor(L['x'], torch.float32, device=cpu, size=[None, 3], stride=[3, 1])\n"
            "LAMBDA_GUARD: 2 <= L['x'].size()[0]\n");
}

TEST(MarkDynamic, ADimTheGraphPinsViolatesTheConstraint) {
  const Tensor fixed = ops::ones({4});
  auto cf = compile([fixed](const Tensor& x) { return ops::add(x, fixed); }, {.input_names = {"x"}});
  const Tensor x = ops::ones({4});
  mark_dynamic(x, 0);
  EXPECT_THAT([&] { cf(x); }, ThrowsMessage<ConstraintViolationError>(HasSubstr(
                                  "Constraints violated (L['x'].size()[0])!\n  - Not all values of L['x'].size()[0] "
                                  "in the specified range are valid because L['x'].size()[0] was inferred to be a "
                                  "constant (4)")));
  EXPECT_EQ(cf.stats().compiles, 0);  // nothing was cached
  // Unmarked (dynamic = true), a pinned dim is specialized instead: its guard is its size.
  auto all = compile([](const Tensor& x) { return ops::reshape(x, {2, 2}); }, {.dynamic = true, .input_names = {"x"}});
  all(ops::ones({4}));
  EXPECT_EQ(all.stats().guards[0], "tensor 'x': f32[4] stride [1] cpu");
}

TEST(Explain, ListsTensorAndShapeGuardsAsPyTorch) {
  const Tensor x = ops::ones({4, 3});
  mark_dynamic(x, 0);
  const ExplainOutput e = explain(&twice, {.input_names = {"x"}})(x);
  ASSERT_EQ(e.out_guards.size(), 2u);
  EXPECT_EQ(e.out_guards[0].name, "L['x']");
  EXPECT_EQ(e.out_guards[0].create_function, "TENSOR_MATCH");
  EXPECT_THAT(e.str(), HasSubstr("  Guard 2:\n    Name: ''\n    Source: shape_env\n    Create Function: SHAPE_ENV\n"
                                 "    Code List: [\"2 <= L['x'].size()[0]\"]\n"));
}

}  // namespace dynamo_api_test
}  // namespace opspec
