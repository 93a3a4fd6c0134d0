// compile(): results equal eager, caching, guards and recompiles, dynamic
// dims, cache limits, reset, failures mid-capture, threads, backends.
#include "runtime/compile/compile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "runtime/compile/aot_eager.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/explain.h"
#include "runtime/compile/logging.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace compile_test {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;

Tensor mlp(const Tensor& x, const Tensor& w) {
  const Tensor h = ops::relu(ops::linear(x, w));
  const Tensor half = ops::mul(h, 0.5);
  return ops::add(half, ops::softmax(h, -1));
}

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

TEST(Compile, MatchesEagerBitForBitAndCachesTheGraph) {
  manual_seed(0);
  const Tensor x = ops::randn({4, 3}), w = ops::randn({5, 3});
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    CompileCounter counter(lookup_backend(backend));
    auto cf = compile(&mlp, {.backend_fn = counter.backend(), .input_names = {"x", "w"}});
    expect_same(cf(x, w)[0], mlp(x, w));
    expect_same(cf(x, w)[0], mlp(x, w));
    const CompileStats stats = cf.stats();
    EXPECT_EQ(stats.calls, 2);
    EXPECT_EQ(stats.graphs_run, 2);
    EXPECT_EQ(stats.compiles, 1);
    EXPECT_EQ(stats.recompiles, 0);
    EXPECT_THAT(stats.breaks, IsEmpty());
    EXPECT_EQ(counter.frame_count(), 1);
    // Capture sees torch-level ops, as Dynamo does: linear and softmax whole.
    EXPECT_THAT(stats.ops_per_graph, ElementsAre(ElementsAre("aten::linear", "aten::relu", "aten::mul.Tensor",
                                                             "aten::softmax.int", "aten::add.Tensor")));
    EXPECT_EQ(stats.guards[0], "tensor 'x': f32[4, 3] stride [3, 1] cpu; tensor 'w': f32[5, 3] stride [3, 1] cpu");
  }
}

TEST(Compile, GuardFailuresRecompileWithPyTorchsMessages) {
  auto cf = compile([](const Tensor& x) { return ops::relu(x); }, {.input_names = {"x"}});
  cf(ops::ones({3, 4}));
  cf(ops::ones({5, 4}));
  cf(ops::ones({5, 4}, {.dtype = DType::kFloat64}));
  cf(ops::t(ops::ones({4, 5})));
  cf(ops::ones({5}));
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.compiles, 5);
  EXPECT_EQ(stats.recompiles, 4);
  EXPECT_THAT(stats.recompile_reasons,
              ElementsAre("tensor 'L['x']' size mismatch at index 0. expected 3, actual 5",
                          "tensor 'L['x']' dtype mismatch. expected Float, actual Double",
                          "tensor 'L['x']' dtype mismatch. expected Double, actual Float",  // vs the latest entry
                          "tensor 'L['x']' rank mismatch. expected 2, actual 1"));
  auto strided = compile([](const Tensor& x) { return ops::relu(x); }, {.input_names = {"x"}});
  strided(ops::ones({5, 4}));
  strided(ops::t(ops::ones({4, 5})));
  EXPECT_THAT(strided.stats().recompile_reasons,
              ElementsAre("tensor 'L['x']' stride mismatch at index 0. expected 4, actual 1"));
  // Earlier entries still serve their inputs.
  cf(ops::ones({3, 4}));
  EXPECT_EQ(cf.stats().compiles, 5);
}

TEST(Compile, RecompilesAreLoggedWhenAsked) {
  auto cf = compile([](const Tensor& x) { return ops::neg(x); }, {.input_names = {"x"}, .name = "negate"});
  cf(ops::ones({3}));
  set_log_topics("recompiles");
  testing::internal::CaptureStderr();
  cf(ops::ones({4}));
  const std::string log = testing::internal::GetCapturedStderr();
  set_log_topics("");
  EXPECT_EQ(log, "[opspec:recompiles] Recompiling function negate (graph 1)\n"
                 "    triggered by the following guard failure(s):\n"
                 "    - tensor 'L['x']' size mismatch at index 0. expected 3, actual 4\n");
}

TEST(Compile, ErrorOnRecompile) {
  auto cf = compile([](const Tensor& x) { return ops::neg(x); }, {.error_on_recompile = true});
  cf(ops::ones({3}));
  EXPECT_THAT([&] { cf(ops::ones({4})); },
              ThrowsMessage<RecompileError>(HasSubstr("tensor 'L['x0']' size mismatch at index 0. expected 3, actual 4")));
}

TEST(Compile, CacheSizeLimitFallsBackToEagerWithOneWarning) {
  // dynamic = false: each size is its own graph (automatic dynamic would serve sizes 2-5 with one).
  auto compiled_runs = std::make_shared<int>(0);
  Backend counting = [compiled_runs](const Graph& g, const std::vector<Tensor>& examples) {
    CompiledGraph run = eager_backend(g, examples);
    return CompiledGraph([run, compiled_runs](const std::vector<Tensor>& in) {
      ++*compiled_runs;
      return run(in);
    });
  };
  auto cf = compile([](const Tensor& x) { return ops::exp(x); },
                    {.backend_fn = counting, .dynamic = false, .cache_size_limit = 2});
  testing::internal::CaptureStderr();
  for (int64_t n = 1; n <= 5; ++n) expect_same(cf(ops::ones({n}))[0], ops::exp(ops::ones({n})));
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_THAT(warnings, HasSubstr("cache_size_limit reached (2 graphs) for graph 1; inputs that match none of its "
                                  "graphs run that part eagerly from now on"));
  EXPECT_EQ(warnings.find("cache_size_limit"), warnings.rfind("cache_size_limit"));  // once
  const CompileStats stats = cf.stats();
  EXPECT_TRUE(stats.fell_back_to_eager);
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.calls, 5);
  EXPECT_EQ(*compiled_runs, 2);  // sizes 1 and 2; 3 to 5 ran eagerly
  // Past the limit the cached graphs still run (Dynamo's RUN_ONLY), and nothing compiles.
  cf(ops::ones({2}));
  EXPECT_EQ(*compiled_runs, 3);
  EXPECT_EQ(cf.stats().compiles, 2);
}

// Each part a break makes has a cache and a limit of its own, as Dynamo's
// resume functions do: one shared count left the second graph uncompiled on
// the first call under cache_size_limit 1.
TEST(Compile, CacheSizeLimitCountsEachGraphOfTheFunctionApart) {
  auto cf = compile(
      [](const Tensor& x) {
        const Tensor a = ops::sin(x);
        graph_break();
        return ops::cos(a);
      },
      {.dynamic = false, .cache_size_limit = 1});
  testing::internal::CaptureStderr();
  cf(ops::ones({3}));
  EXPECT_EQ(testing::internal::GetCapturedStderr(), "");
  CompileStats stats = cf.stats();
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_FALSE(stats.fell_back_to_eager);
  testing::internal::CaptureStderr();
  cf(ops::ones({4}));  // both parts miss: both run eagerly, each warns once
  const std::string warnings = testing::internal::GetCapturedStderr();
  EXPECT_THAT(warnings, HasSubstr("for graph 1;"));
  EXPECT_THAT(warnings, HasSubstr("for graph 2;"));
  EXPECT_EQ(cf.stats().compiles, 2);
  EXPECT_TRUE(cf.stats().fell_back_to_eager);
}

TEST(Compile, DynamicDimsServeEverySize) {
  auto f = [](const Tensor& x, const Tensor& w) { return ops::relu(ops::matmul(x, w)); };
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    auto cf = compile(f, {.backend = backend, .input_names = {"x", "w"}});
    const Tensor w = ops::randn({3, 2});
    for (int64_t n : {4, 7, 2, 1}) {
      const Tensor x = ops::randn({n, 3});
      mark_dynamic(x, 0);
      expect_same(cf(x, w)[0], f(x, w));
    }
    const CompileStats stats = cf.stats();
    // Sizes 2 and up share the first graph; size 1 is specialized (Note [Guards]).
    EXPECT_EQ(stats.compiles, 2) << backend;
    EXPECT_THAT(stats.recompile_reasons, ElementsAre("2 <= L['x'].size()[0]"));
    EXPECT_EQ(stats.guards[0], "tensor 'x': f32[s0, 3] contiguous cpu; tensor 'w': f32[3, 2] stride [2, 1] cpu");
    EXPECT_EQ(stats.guards[1], "tensor 'x': f32[1, 3] stride [3, 1] cpu; tensor 'w': f32[3, 2] stride [2, 1] cpu");
  }
  // dynamic = true makes every dim dynamic except those marked static.
  auto cf = compile([](const Tensor& x) { return ops::sum(x, {1}); }, {.dynamic = true, .input_names = {"x"}});
  Tensor a = ops::ones({2, 3});
  mark_static(a, 1);
  cf(a);
  Tensor b = ops::ones({5, 3});
  mark_static(b, 1);
  cf(b);
  EXPECT_EQ(cf.stats().compiles, 1);
  Tensor c = ops::ones({5, 4});
  mark_static(c, 1);
  cf(c);
  EXPECT_THAT(cf.stats().recompile_reasons, ElementsAre("tensor 'L['x']' size mismatch at index 1. expected 3, actual 4"));
}

TEST(Compile, ResetClearsEveryCache) {
  auto cf = compile([](const Tensor& x) { return ops::sin(x); });
  cf(ops::ones({2}));
  cf(ops::ones({2}));
  EXPECT_EQ(cf.stats().compiles, 1);
  reset();
  EXPECT_EQ(cf.stats().compiles, 0);
  cf(ops::ones({2}));
  EXPECT_EQ(cf.stats().compiles, 1);
  cf.reset();
  EXPECT_EQ(cf.stats().calls, 0);
}

TEST(Compile, AThrowingFunctionLeavesNoCacheEntryAndNoState) {
  const LocalDispatchKeySet before = local_dispatch_key_set();
  bool fail = true;
  auto cf = compile([&fail](const Tensor& x) {
    const Tensor y = ops::relu(x);
    if (fail) throw std::runtime_error("boom");
    return ops::neg(y);
  });
  EXPECT_THROW(cf(ops::ones({3})), std::runtime_error);
  EXPECT_EQ(cf.stats().compiles, 0);
  EXPECT_EQ(local_dispatch_key_set().included, before.included);
  EXPECT_EQ(local_dispatch_key_set().modes, before.modes);
  EXPECT_THAT(mode_stack(DispatchKey::kPreDispatch), IsEmpty());
  EXPECT_EQ(infra_mode(ModeKind::kFake), nullptr);
  EXPECT_EQ(internal::tls_data_access_hook, nullptr);
  fail = false;
  expect_same(cf(ops::ones({3}))[0], ops::neg(ops::ones({3})));
  EXPECT_EQ(cf.stats().compiles, 1);
  // An op error during capture names the op.
  auto bad = compile([](const Tensor& a) { return ops::mm(a, a); });
  EXPECT_THAT([&] { bad(ops::ones({2, 3})); },
              ThrowsMessage<Error>(HasSubstr("compile: while tracing aten::mm (called from compile_test.cc:")));
}

// Misused inputs are named at the call: an undefined tensor (guards and fakes
// read every input's metadata; it crashed there) and input_names with more
// names than inputs (silently accepted before).
TEST(Compile, UndefinedInputsAndSurplusInputNamesAreNamed) {
  auto plus = compile([](const Tensor& x, const Tensor& y) { return ops::add(x, y); },
                      {.input_names = {"x", "y"}, .name = "plus"});
  EXPECT_THAT([&] { plus(ops::ones({2}), Tensor()); },
              ThrowsMessage<Error>(HasSubstr("compile: input 1 ('y') of plus is an undefined Tensor")));
  auto relu = compile([](const Tensor& x) { return ops::relu(x); });
  EXPECT_THAT([&] { relu(Tensor()); }, ThrowsMessage<Error>(HasSubstr("compile: input 0 of fn is an undefined Tensor")));
  auto surplus = compile([](const Tensor& x) { return ops::relu(x); }, {.input_names = {"x", "y", "z"}, .name = "g"});
  EXPECT_THAT([&] { surplus(ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("compile: g was called with 1 input but CompileOptions::input_names has "
                                             "3 names (x, y, z)")));
  EXPECT_EQ(surplus.stats().compiles, 0);
  // Defined inputs, and fewer names than inputs, are fine.
  EXPECT_EQ(plus(ops::ones({2}), ops::ones({2}))[0].to_vector<float>(), std::vector<float>(2, 2.0f));
  auto one_name = compile([](const Tensor& x, const Tensor& y) { return ops::mul(x, y); }, {.input_names = {"x"}});
  EXPECT_EQ(one_name(ops::ones({2}), ops::ones({2}))[0].numel(), 2);
}

TEST(Compile, ControlFlowOnValuesIsRightOnEveryCall) {
  auto f = [](const Tensor& x) {
    const Tensor s = ops::sum(x);
    return s.item<double>() > 0 ? ops::exp(x) : ops::neg(x);
  };
  auto cf = compile(f);
  const Tensor pos = ops::ones({3}), neg = ops::neg(ops::ones({3}));
  for (int i = 0; i < 2; ++i) {
    expect_same(cf(pos)[0], f(pos));
    expect_same(cf(neg)[0], f(neg));
  }
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.graphs_run, 8);  // sum, then exp or neg, on each of 4 calls
  EXPECT_EQ(stats.compiles, 3);    // sum once; exp and neg are two programs at graph 1
  EXPECT_THAT(stats.recompile_reasons, ElementsAre("the program changed (a different sequence of ops)"));
}

TEST(Compile, InPlaceOpsAndRandomNumbersMatchEager) {
  auto f = [](const Tensor& x) {
    Tensor y = ops::clone(x);
    ops::add_(y, ops::randn({4}));
    const Tensor z = ops::mul(y, ops::rand({4}));
    ops::mul_(const_cast<Tensor&>(x), ops::full({4}, 2.0));  // mutates the caller's tensor
    return z;
  };
  Tensor a = ops::ones({4}), b = ops::ones({4});
  manual_seed(3);
  const Tensor eager = f(a);
  manual_seed(3);
  const Tensor compiled = compile(f)(b)[0];
  expect_same(compiled, eager);
  expect_same(b, a);  // the in-place op on the input happened
}

TEST(Compile, OneFunctionOnManyThreads) {
  manual_seed(1);
  const Tensor w = ops::randn({5, 3});
  auto cf = compile(&mlp, {.dynamic = false});  // one graph per batch size
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) {
        const Tensor x = ops::full({2 + (t + i) % 3, 3}, 0.25 * (t + 1));
        if (cf(x, w)[0].to_vector<float>() != mlp(x, w).to_vector<float>()) ++mismatches;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(mismatches.load(), 0);
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.calls, 40);
  EXPECT_EQ(stats.graphs_run, 40);
  EXPECT_EQ(stats.compiles, 3);  // one per batch size
}

TEST(Backends, RegistryListsAndRejects) {
  EXPECT_THAT(list_backends({.exclude_tags = {}}), Contains("eager"));
  EXPECT_THAT(list_backends({.exclude_tags = {}}), Contains("aot_eager"));
  EXPECT_THAT(list_backends(), Contains("fused"));
  EXPECT_THAT([] { compile([](const Tensor& x) { return x; }, {.backend = "inductor"}); },
              ThrowsMessage<Error>(HasSubstr("unknown backend 'inductor'; registered backends: ")));
  int compiled = 0;
  register_backend("counting_test_backend", [&compiled](const Graph& g, const std::vector<Tensor>& ex) {
    ++compiled;
    EXPECT_EQ(ex.size(), g.placeholders().size());
    for (const Tensor& e : ex) EXPECT_TRUE(is_fake(e));
    return eager_backend(g, ex);
  });
  auto cf = compile([](const Tensor& x) { return ops::abs(x); }, {.backend = "counting_test_backend"});
  expect_same(cf(ops::full({2}, -3.0))[0], ops::full({2}, 3.0));
  EXPECT_EQ(compiled, 1);
}

TEST(Backends, AotEagerAppliesAUserDecompositionTable) {
  DecompositionTable wrong;
  wrong.add("aten::cos", [](const Tensor& t) { return ops::sin(t); });
  auto f = [](const Tensor& x) { return ops::cos(x); };
  const Tensor x = ops::arange(0.0, 1.0, 0.25);
  expect_same(compile(f, {.backend_fn = make_aot_eager_backend()})(x)[0], f(x));
  expect_same(compile(f, {.backend_fn = make_aot_eager_backend(&wrong)})(x)[0], ops::sin(x));
}

// An unknown log topic is an error naming the known ones, not silence (issue 22).
TEST(Logging, UnknownTopicsAreNamed) {
  EXPECT_THAT([] { set_log_topics("recompiles,graph_brekas"); },
              ThrowsMessage<Error>(AllOf(HasSubstr("unknown log topic 'graph_brekas'; did you mean 'graph_breaks'?"),
                                         HasSubstr("(topics: all, fusion, graph_breaks, graph_code, guards, recompiles)"))));
  EXPECT_FALSE(log_enabled("recompiles"));  // nothing was set
  set_log_topics("graph_code,fusion");
  EXPECT_TRUE(log_enabled("fusion"));
  set_log_topics("");
}

}  // namespace
}  // namespace opspec
