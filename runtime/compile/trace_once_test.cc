// CompileOptions::trace_once (Note [Trace once]): warm calls skip fn exactly
// when that cannot change what the call computes or who sees it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace trace_once_test {

using ::testing::ElementsAre;

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

// counted: fn with a C++ side effect that shows whether it ran.
auto counted(int* runs) {
  return [runs](const Tensor& x, const Tensor& w) {
    ++*runs;
    return ops::add(ops::relu(ops::mm(x, w)), x);
  };
}

TEST(TraceOnce, WarmCallsRunTheGraphWithoutRunningFn) {
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    int runs = 0;
    auto cf = compile(counted(&runs), {.backend = backend, .trace_once = true});
    manual_seed(0);
    const Tensor x = ops::randn({4, 4}), w = ops::randn({4, 4});
    for (int i = 0; i < 3; ++i) expect_same(cf(x, w)[0], ops::add(ops::relu(ops::mm(x, w)), x));
    // New data, same metadata: the plan computes on the new values.
    const Tensor x2 = ops::randn({4, 4});
    expect_same(cf(x2, w)[0], ops::add(ops::relu(ops::mm(x2, w)), x2));
    EXPECT_EQ(runs, 1) << backend;
    const CompileStats stats = cf.stats();
    EXPECT_EQ(stats.calls, 4);
    EXPECT_EQ(stats.traced_calls, 3);
    EXPECT_EQ(stats.graphs_run, 4);
    EXPECT_EQ(stats.compiles, 1);
  }
}

TEST(TraceOnce, IsOffByDefault) {
  int runs = 0;
  auto cf = compile(counted(&runs));
  const Tensor x = ops::ones({2, 2});
  cf(x, x);
  cf(x, x);
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(cf.stats().traced_calls, 0);
}

TEST(TraceOnce, OtherMetadataRunsFnAndGetsItsOwnPlan) {
  int runs = 0;
  auto cf = compile(counted(&runs), {.trace_once = true});
  const Tensor a = ops::ones({2, 2}), b = ops::ones({3, 3});
  cf(a, a);
  cf(b, b);  // new sizes: traced again
  cf(ops::ones({2, 2}, {.dtype = DType::kFloat64}), ops::ones({2, 2}, {.dtype = DType::kFloat64}));
  cf(ops::t(ops::ones({2, 2})), a);  // same sizes, other strides
  EXPECT_EQ(runs, 4);
  cf(a, a);
  cf(b, b);
  EXPECT_EQ(runs, 4);
  EXPECT_EQ(cf.stats().traced_calls, 2);
}

TEST(TraceOnce, WhichInputsAreTheSameTensorIsPartOfThePlan) {
  int runs = 0;
  auto f = [&](const Tensor& x, const Tensor& y) {
    ++runs;
    return ops::sub(x, y);
  };
  auto cf = compile(f, {.trace_once = true});
  const Tensor x = ops::full({3}, 5.0), y = ops::full({3}, 2.0);
  expect_same(cf(x, x)[0], ops::zeros({3}));  // one placeholder for both
  expect_same(cf(x, y)[0], ops::full({3}, 3.0));  // must not reuse that graph
  EXPECT_EQ(runs, 2);
  expect_same(cf(y, y)[0], ops::zeros({3}));
  expect_same(cf(y, x)[0], ops::full({3}, -3.0));
  EXPECT_EQ(runs, 2);
}

TEST(TraceOnce, AGraphBreakOrADataReadMeansFnRunsEveryTime) {
  int runs = 0;
  auto with_break = compile(
      [&](const Tensor& x) {
        ++runs;
        const Tensor y = ops::relu(x);
        graph_break();
        return ops::neg(y);
      },
      {.trace_once = true});
  const Tensor x = ops::ones({3});
  for (int i = 0; i < 3; ++i) with_break(x);
  EXPECT_EQ(runs, 3);

  // Reading an input before any op is pending breaks no graph, but fn's ops
  // depend on the value, so skipping fn would be wrong.
  auto branchy = compile(
      [](const Tensor& x) { return x.item<double>() > 0 ? std::vector{ops::exp(x)} : std::vector{ops::neg(x)}; },
      {.trace_once = true});
  const Tensor pos = ops::ones({1}), neg = ops::neg(ops::ones({1}));
  for (int i = 0; i < 2; ++i) {
    expect_same(branchy(pos)[0], ops::exp(pos));
    expect_same(branchy(neg)[0], ops::neg(neg));
  }
  EXPECT_EQ(branchy.stats().traced_calls, 0);
  EXPECT_EQ(with_break.stats().traced_calls, 0);
}

TEST(TraceOnce, OutputsMayBeInputsOrUndefinedAndInPlaceOpsStillHappen) {
  auto f = [](const Tensor& x, const Tensor& y) {
    ops::add_(const_cast<Tensor&>(x), y);  // mutates the caller's x
    return std::vector<Tensor>{x, Tensor(), ops::mul(x, 2.0)};
  };
  auto cf = compile(f, {.trace_once = true});
  Tensor x = ops::zeros({2});
  const Tensor y = ops::ones({2});
  for (int i = 1; i <= 3; ++i) {
    const std::vector<Tensor> out = cf(x, y);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(out[0].is_same(x));
    EXPECT_FALSE(out[1].defined());
    expect_same(x, ops::full({2}, static_cast<double>(i)));
    expect_same(out[2], ops::full({2}, 2.0 * i));
  }
  EXPECT_EQ(cf.stats().traced_calls, 2);
}

TEST(TraceOnce, AClosedOverTensorIsKeptByReference) {
  Tensor bias = ops::ones({3});
  auto cf = compile([&](const Tensor& x) { return ops::add(x, bias); }, {.trace_once = true});
  const Tensor x = ops::zeros({3});
  expect_same(cf(x)[0], ops::ones({3}));
  ops::fill_(bias, 5.0);  // an in-place update is seen by the plan
  expect_same(cf(x)[0], ops::full({3}, 5.0));
  EXPECT_EQ(cf.stats().traced_calls, 1);
}

TEST(TraceOnce, ATensorThatEscapesFnMakesNoPlan) {
  Tensor stored;
  int runs = 0;
  auto cf = compile(
      [&](const Tensor& x) {
        ++runs;
        const Tensor y = ops::exp(x);
        stored = ops::neg(y);  // a side effect the graph cannot replay
        return y;
      },
      {.trace_once = true});
  const Tensor a = ops::zeros({2}), b = ops::ones({2});
  cf(a);
  cf(b);
  EXPECT_EQ(runs, 2);
  expect_same(stored, ops::neg(ops::exp(b)));
}

// A mode that only counts the ops it sees.
class CountingMode : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    ops.push_back(std::string(call.op().name()));
    call.proceed();
    return true;
  }
  std::vector<std::string> ops;
};

TEST(TraceOnce, UnderAModeFnRunsAsWithoutTraceOnce) {
  int runs = 0;
  auto traced = compile(counted(&runs), {.trace_once = true});
  int plain_runs = 0;
  auto plain = compile(counted(&plain_runs));
  const Tensor x = ops::ones({2, 2});
  traced(x, x);  // makes a plan
  auto seen = [&](const CompiledFunction& cf) {
    auto mode = std::make_shared<CountingMode>();
    ModeGuard guard(mode);
    cf(x, x);
    return mode->ops;
  };
  plain(x, x);
  EXPECT_EQ(seen(traced), seen(plain));
  EXPECT_EQ(runs, 2);
  EXPECT_EQ(traced.stats().traced_calls, 0);
}

TEST(TraceOnce, ResetForgetsThePlans) {
  int runs = 0;
  auto cf = compile(counted(&runs), {.trace_once = true});
  const Tensor x = ops::ones({2, 2});
  cf(x, x);
  cf(x, x);
  cf.reset();
  cf(x, x);
  EXPECT_EQ(runs, 2);
  cf(x, x);
  EXPECT_EQ(runs, 2);
  reset();
  cf(x, x);
  EXPECT_EQ(runs, 3);
}

TEST(TraceOnce, AFunctionWithoutOpsReturnsItsInputs) {
  auto cf = compile([](const Tensor& x) { return x; }, {.trace_once = true});
  const Tensor x = ops::ones({2});
  EXPECT_TRUE(cf(x)[0].is_same(x));
  EXPECT_TRUE(cf(x)[0].is_same(x));
  EXPECT_EQ(cf.stats().traced_calls, 1);
  EXPECT_EQ(cf.stats().graphs_run, 0);
}

// Past the limit a miss runs fn uncompiled each time, while inputs that match
// the cached graph still replay its plan (See Note [Cache size limit per graph]).
TEST(TraceOnce, PastTheCacheSizeLimitAMissRunsFnEagerly) {
  int runs = 0;
  auto cf = compile(counted(&runs), {.dynamic = false, .cache_size_limit = 1, .trace_once = true});
  const Tensor a = ops::ones({2, 2}), b = ops::ones({3, 3});
  testing::internal::CaptureStderr();
  cf(a, a);
  cf(b, b);  // over the limit: b runs eagerly
  cf(a, a);  // the cached plan
  cf(b, b);
  testing::internal::GetCapturedStderr();
  EXPECT_EQ(runs, 3);
  EXPECT_EQ(cf.stats().compiles, 1);
  EXPECT_TRUE(cf.stats().fell_back_to_eager);
}

}  // namespace
}  // namespace opspec
