// Replaying a recorded capture (See Note [Replaying a capture] in
// capture.cc): warm calls skip graph building and meta kernels, yet every
// result, graph and statistic is that of a fresh capture.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <limits>

#include "runtime/compile/internal/capture.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/explain.h"
#include "runtime/dispatch/library.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace capture_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

void expect_same(const Tensor& a, const Tensor& b) {
  ASSERT_EQ(a.sizes(), b.sizes());
  EXPECT_EQ(a.to_vector<double>(), b.to_vector<double>());
}

// capture_test::triple: x * 3, with a Meta kernel that counts its runs.
std::atomic<int> triple_meta_runs{0};

const OperatorHandle& triple_op() {
  static const bool registered = [] {
    Library lib("capture_test");
    lib.def("triple(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("triple", DispatchKey::kCPU, [](const Tensor& x) { return ops::mul(x, 3); })
        .impl("triple", DispatchKey::kMeta, [](const Tensor& x) {
          ++triple_meta_runs;
          return internal::make_tensor(x.sizes(), x.dtype(), kMeta);
        });
    return true;
  }();
  (void)registered;
  return Dispatcher::singleton().get("capture_test::triple");
}

Tensor triple_plus_one(const Tensor& x) { return ops::add(triple_op().call<Tensor>(x), 1); }

// CallCounter: a user mode counting the calls of one op it sees.
class CallCounter : public DispatchMode {
 public:
  explicit CallCounter(std::string op) : op_(std::move(op)) {}
  bool dispatch(OpCall& call) override {
    if (call.name() == op_) ++calls;
    call.proceed();
    return true;
  }
  int calls = 0;

 private:
  std::string op_;
};

TEST(Replay, ArgumentsMatchByValueAndTensorsByIdentity) {
  using internal::same_value;
  EXPECT_TRUE(same_value(Value(1.5), Value(1.5)));
  EXPECT_FALSE(same_value(Value(0.0), Value(-0.0)));  // bitwise, as the structural hash
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(same_value(Value(nan), Value(nan)));
  EXPECT_FALSE(same_value(Value(int64_t{1}), Value(1.0)));
  EXPECT_TRUE(same_value(Value(std::vector<int64_t>{2, 3}), Value(std::vector<int64_t>{2, 3})));
  const auto wrapped = [](Scalar s) { return Value(internal::make_wrapped_number(s)); };
  EXPECT_TRUE(same_value(wrapped(0.5), wrapped(0.5)));  // two tensors, one number
  EXPECT_FALSE(same_value(wrapped(0.5), wrapped(0.25)));
  EXPECT_FALSE(same_value(wrapped(0.5), wrapped(int64_t{0})));
  const Tensor a = ops::ones({2}), b = ops::ones({2});
  EXPECT_TRUE(same_value(Value(a), Value(a)));
  EXPECT_FALSE(same_value(Value(a), Value(b)));  // equal values, different tensors
  EXPECT_TRUE(same_value(Value(Tensor()), Value(Tensor())));
}

TEST(Replay, WarmCallsSkipMetaKernelsAndGraphBuilding) {
  const Tensor x = ops::arange(0.0, 4.0);
  CompileCounter counter;
  auto cf = compile(&triple_plus_one, {.backend_fn = counter.backend()});
  const int before = triple_meta_runs.load();
  for (int i = 0; i < 3; ++i) expect_same(cf(x)[0], triple_plus_one(x));
  EXPECT_EQ(triple_meta_runs.load() - before, 1);  // the first call's capture only
  EXPECT_EQ(counter.frame_count(), 1);
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.calls, 3);
  EXPECT_EQ(stats.graphs_run, 3);
  EXPECT_EQ(stats.compiles, 1);
  EXPECT_EQ(stats.recompiles, 0);
}

// Placeholders named by CompileOptions::input_names match their inputs on warm calls too.
TEST(Replay, NamedAndUnnamedInputsMatchTheirPlaceholders) {
  const Tensor x = ops::arange(0.0, 4.0);
  auto two = [](const Tensor& a, const Tensor& b) {  // each input first seen by a triple
    const Tensor tb = triple_op().call<Tensor>(b);
    return ops::add(tb, triple_op().call<Tensor>(a));
  };
  auto named = compile(two, {.input_names = {"first"}});  // the second input is x1
  const int before = triple_meta_runs.load();
  for (int i = 0; i < 3; ++i) expect_same(named(x, x * 2)[0], two(x, x * 2));
  EXPECT_EQ(triple_meta_runs.load() - before, 2);  // the first call's capture only
  EXPECT_EQ(named.stats().compiles, 1);
}

TEST(Replay, AModeAroundTheCallSeesTheGraphsOpsAndReplayGoesOn) {
  const Tensor x = ops::arange(0.0, 4.0);
  auto cf = compile(&triple_plus_one);
  CallCounter seen("capture_test::triple");
  const int before = triple_meta_runs.load();
  {
    ModeGuard guard(seen);
    for (int i = 0; i < 2; ++i) expect_same(cf(x)[0], triple_plus_one(x));
  }
  // Each call: the graph's real op, never the capture's fake one (See Note
  // [Modes around a compiled call]), so the second call replays its capture.
  EXPECT_EQ(seen.calls, 2 * 1 + 2);  // + the two eager reference calls
  EXPECT_EQ(triple_meta_runs.load() - before, 1);
  EXPECT_EQ(cf.stats().compiles, 1);
}

// PassThrough: a tensor subclass that lets every op through.
class PassThrough : public TensorSubclass {
 public:
  bool dispatch(OpCall& call) override {
    call.proceed();
    return true;
  }
  std::string_view name() const override { return "PassThrough"; }
};

// A subclass could see a meta kernel run, also once its tensor is tracked (its second use).
TEST(Replay, OpsOnSubclassedTensorsStillRunTheirMetaKernels) {
  const Tensor x = with_subclass(ops::arange(0.0, 4.0), std::make_shared<PassThrough>());
  auto twice = [](const Tensor& t) { return ops::add(triple_op().call<Tensor>(t), triple_op().call<Tensor>(t)); };
  auto cf = compile(twice);
  cf(x);
  const int before = triple_meta_runs.load();
  for (int i = 0; i < 2; ++i) expect_same(cf(x)[0], twice(x));
  EXPECT_EQ(triple_meta_runs.load() - before, 2 * 2);
  EXPECT_EQ(cf.stats().compiles, 1);
}

TEST(Replay, ChangedNumbersAreNotReplayed) {
  double k = 2.0;
  auto f = [&k](const Tensor& x) { return ops::add(ops::mul(x, k), 1.0); };
  auto cf = compile(f);
  const Tensor x = ops::arange(0.0, 4.0);
  expect_same(cf(x)[0], f(x));
  k = 3.0;
  expect_same(cf(x)[0], f(x));
  k = -0.0;  // differs from 0.0 bitwise, and so does its program
  expect_same(cf(x)[0], f(x));
  k = 0.0;
  expect_same(cf(x)[0], f(x));
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.compiles, 4);
  // Not values read with item(): each number stays specialized (See Note [Values read with item()]).
  EXPECT_THAT(stats.recompile_reasons,
              ElementsAre("a number in the program changed: argument 1 of aten::mul.Tensor was 2.0, now 3.0",
                          "a number in the program changed: argument 1 of aten::mul.Tensor was 3.0, now -0.0",
                          "a number in the program changed: argument 1 of aten::mul.Tensor was -0.0, now 0.0"));
  k = 3.0;  // an earlier program: replayed from its recording, no compile
  expect_same(cf(x)[0], f(x));
  EXPECT_EQ(cf.stats().compiles, 4);
}

// The same, for numbers of ops whose tensors are all tracked (compared
// against the recording's copy of their bits): a wrapped number, an int and
// a double alpha, a bool, and a number whose dtype changes but not its bytes.
TEST(Replay, ChangedNumbersOfTrackedOpsAreNotReplayed) {
  Scalar k = 2.0;
  Scalar alpha = 1;
  bool keepdim = false;
  auto f = [&](const Tensor& x) {
    const Tensor r = ops::mul(ops::relu(x), k);
    return ops::sum(ops::add(r, r, alpha), {0}, keepdim);
  };
  auto cf = compile(f);
  const Tensor x = ops::arange(0.0, 4.0);
  int compiles = 0;
  auto expect_compiles = [&](int added) {
    expect_same(cf(x)[0], f(x));
    compiles += added;
    EXPECT_EQ(cf.stats().compiles, compiles);
  };
  expect_compiles(1);
  expect_compiles(0);  // unchanged: replayed
  k = 3.0;
  expect_compiles(1);
  alpha = 2;
  expect_compiles(1);
  alpha = 2.5;
  expect_compiles(1);
  alpha = 1.5;
  expect_compiles(1);
  keepdim = true;
  expect_compiles(1);
  k = 0.0;
  expect_compiles(1);
  k = int64_t{0};  // the same bytes as 0.0, another dtype
  expect_compiles(1);
  k = 3.0;  // back to an earlier program
  expect_compiles(0);
}

TEST(Replay, ClosedOverTensorsAreBoundAnewOnEveryCall) {
  Tensor w = ops::ones({4});
  auto f = [&w](const Tensor& x) { return ops::add(x, w); };
  auto cf = compile(f);
  const Tensor x = ops::arange(0.0, 4.0);
  expect_same(cf(x)[0], f(x));
  w = ops::full({4}, 2.5);  // another tensor with the same metadata: same graph, new value
  expect_same(cf(x)[0], f(x));
  w = ops::full({2, 2}, 1.0);  // other metadata: a new placeholder, a recompile
  expect_same(cf(ops::ones({2, 2}))[0], f(ops::ones({2, 2})));
  EXPECT_EQ(cf.stats().compiles, 2);
}

TEST(Replay, ADifferentOpSequenceGivesTheGraphAFreshCaptureGives) {
  bool negate = false;
  auto f = [&negate](const Tensor& x) {
    const Tensor a = ops::relu(x);
    const Tensor b = negate ? ops::neg(a) : ops::exp(a);
    return ops::add(b, x);
  };
  const Tensor x = ops::arange(-2.0, 2.0);
  CompileCounter counter;
  auto cf = compile(f, {.backend_fn = counter.backend(), .input_names = {"x"}});
  for (int i = 0; i < 4; ++i) {
    negate = i % 2 == 1;
    expect_same(cf(x)[0], f(x));
  }
  EXPECT_EQ(cf.stats().compiles, 2);  // the alternation replays both recordings
  ASSERT_EQ(counter.graphs().size(), 2u);
  CompileCounter fresh;
  negate = true;
  compile(f, {.backend_fn = fresh.backend(), .input_names = {"x"}})(x);
  EXPECT_EQ(counter.graphs()[1], fresh.graphs()[0]);
}

TEST(Capture, PlaceholdersAreNamedAfterFnInputs) {
  auto f = [](const Tensor& a, const Tensor& b, const Tensor& c) { return ops::add(ops::mul(a, b), c); };
  const Tensor x = ops::ones({2}), y = ops::ones({2});
  CompileCounter named;
  compile(f, {.backend_fn = named.backend(), .input_names = {"p", "q"}})(x, y, y);
  ASSERT_EQ(named.graphs().size(), 1u);
  // p by its name; y, passed twice, by its last position (x2: a default name).
  EXPECT_THAT(named.graphs()[0], HasSubstr("%p = placeholder"));
  EXPECT_THAT(named.graphs()[0], HasSubstr("%x2 = placeholder"));
  EXPECT_THAT(named.graphs()[0], Not(HasSubstr("%q = placeholder")));
  CompileCounter unnamed;
  compile(f, {.backend_fn = unnamed.backend()})(x, y, x);
  ASSERT_EQ(unnamed.graphs().size(), 1u);
  EXPECT_THAT(unnamed.graphs()[0], HasSubstr("%x2 = placeholder"));
  EXPECT_THAT(unnamed.graphs()[0], HasSubstr("%x1 = placeholder"));
  EXPECT_THAT(unnamed.graphs()[0], Not(HasSubstr("%x0 = placeholder")));
}

TEST(Replay, ViewsInPlaceAndMultiOutputOps) {
  auto f = [](const Tensor& x, const Tensor& w) {
    Tensor y = ops::mm(x, ops::t(w));
    ops::add_(y, ops::ones({3}));
    auto [out, mean, rstd] = ops::native_layer_norm(y, {3}, std::nullopt, std::nullopt, 1e-5);
    return std::vector<Tensor>{out, mean, ops::transpose(y, 0, 1)};
  };
  const Tensor x = ops::randn({2, 4}), w = ops::randn({3, 4});
  auto cf = compile(f);
  for (int i = 0; i < 3; ++i) {
    const std::vector<Tensor> got = cf(x, w), want = f(x, w);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) expect_same(got[k], want[k]);
    EXPECT_EQ(got[2].strides(), want[2].strides());
  }
  EXPECT_EQ(cf.stats().compiles, 1);
}

// An in-place op returns its input, so the capture remembers a tensor once per
// op that mutates it; it is a graph output only when the program holds it.
TEST(Replay, ATensorMutatedSeveralTimesIsAnOutputOnlyWhenHeld) {
  bool keep = false;
  Tensor kept;
  auto f = [&](const Tensor& x) {
    Tensor y = ops::mul(x, 2);
    ops::add_(y, ops::ones({3}));
    ops::add_(y, ops::ones({3}));
    ops::mul_(y, ops::full({3}, 3.0));
    if (keep) kept = y;
    return ops::relu(y);
  };
  auto last_line = [](const std::string& graph) {
    const std::string body = graph.substr(0, graph.size() - 1);
    return body.substr(body.rfind('\n') + 1);
  };
  const Tensor x = ops::arange(-1.0, 2.0);
  CompileCounter counter;
  auto cf = compile(f, {.backend_fn = counter.backend(), .input_names = {"x"}});
  for (int i = 0; i < 2; ++i) expect_same(cf(x)[0], f(x));
  ASSERT_EQ(counter.graphs().size(), 1u);
  EXPECT_EQ(last_line(counter.graphs()[0]), "return %relu");  // y dies inside the call
  keep = true;
  for (int i = 0; i < 2; ++i) {
    kept = Tensor();
    const Tensor got = cf(x)[0];
    ASSERT_TRUE(kept.defined());
    const Tensor held = kept;
    keep = false;
    const Tensor want = f(x);
    keep = true;
    expect_same(got, want);
    expect_same(held, ops::mul(ops::add(ops::mul(x, 2), 2.0), 3.0));  // filled with real values
  }
  ASSERT_EQ(counter.graphs().size(), 2u);
  EXPECT_THAT(last_line(counter.graphs()[1]), ::testing::HasSubstr("return ("));
  EXPECT_EQ(cf.stats().compiles, 2);
}

TEST(Replay, EveryGraphOfABrokenProgramReplays) {
  auto f = [](const Tensor& x) {
    const Tensor a = ops::exp(x);
    graph_break();
    return ops::add(a, ops::sum(a));
  };
  const Tensor x = ops::arange(0.0, 3.0);
  auto cf = compile(f);
  for (int i = 0; i < 3; ++i) expect_same(cf(x)[0], f(x));
  const CompileStats stats = cf.stats();
  EXPECT_EQ(stats.compiles, 2);
  EXPECT_EQ(stats.graphs_run, 6);
  EXPECT_EQ(stats.breaks.size(), 1u);  // found when traced; replays find none (Note [Breaks are counted when traced])
}

TEST(Replay, DeadOpsReplayAndNewlyHeldValuesRecompile) {
  std::vector<Tensor> kept;
  bool keep = false;
  auto f = [&](const Tensor& x) {
    const Tensor a = ops::relu(x);
    ops::exp(x);  // dead: not part of the compiled graph, but of the recording
    if (keep) kept.push_back(ops::neg(a));
    return ops::mul(a, 2);
  };
  const Tensor x = ops::arange(-2.0, 2.0);
  auto cf = compile(f);
  expect_same(cf(x)[0], f(x));
  expect_same(cf(x)[0], f(x));
  EXPECT_EQ(cf.stats().compiles, 1);
  keep = true;  // a value the program now keeps is one more graph output
  expect_same(cf(x)[0], f(x));
  ASSERT_EQ(kept.size(), 2u);
  expect_same(kept[0], kept[1]);  // the compiled one was filled in with its real value
  EXPECT_EQ(cf.stats().compiles, 2);
}

TEST(Replay, SuspendedCaptureLeavesThePreDispatchStack) {
  bool empty_inside = false;
  auto eager_part = disable("eager_part", [&](const Tensor& x) {
    empty_inside = mode_stack(DispatchKey::kPreDispatch).empty();
    return ops::neg(x);
  });
  auto cf = compile([&](const Tensor& x) { return ops::exp(eager_part(ops::relu(x))); });
  const Tensor x = ops::arange(-1.0, 2.0);
  expect_same(cf(x)[0], ops::exp(ops::neg(ops::relu(x))));
  EXPECT_TRUE(empty_inside);
  EXPECT_THAT(mode_stack(DispatchKey::kPreDispatch), IsEmpty());
}

// capture_test::probe: a copy of x whose CPU kernel records whether the
// PreDispatch key was on when it ran (the kernel runs in the graph, not in capture).
bool probe_saw_pre_dispatch = false;

const OperatorHandle& probe_op() {
  static const bool registered = [] {
    Library lib("capture_test");
    lib.def("probe(Tensor x) -> Tensor", OpKind::kUnary)
        .impl("probe", DispatchKey::kCPU,
              [](const Tensor& x) {
                probe_saw_pre_dispatch = local_dispatch_key_set().included.has(DispatchKey::kPreDispatch);
                return ops::clone(x);
              })
        .impl("probe", DispatchKey::kMeta,
              [](const Tensor& x) { return internal::make_tensor(x.sizes(), x.dtype(), kMeta); });
    return true;
  }();
  (void)registered;
  return Dispatcher::singleton().get("capture_test::probe");
}

// While a graph runs (and inside disable()), ops run as in eager code: the
// PreDispatch key the capture turned on is off, and back on for fn afterwards;
// a key the caller turned on stays on.
// A graph's inputs are tracked anew by every call: each graph gives their trace slots back.
TEST(Replay, InputsLeaveTheirTraceSlotsFree) {
  const Tensor x = ops::arange(0.0, 4.0);
  auto cf = compile(&triple_plus_one);
  for (int i = 0; i < 2; ++i) {
    expect_same(cf(x)[0], triple_plus_one(x));
    EXPECT_EQ(x.impl()->trace_owner().load(), 0u);
  }
}

TEST(Replay, SuspendedCaptureLiftsThePreDispatchKeyItTurnedOn) {
  bool on_inside_disable = true, on_after_disable = false;
  auto eager_part = disable("eager_part", [&](const Tensor& x) {
    on_inside_disable = local_dispatch_key_set().included.has(DispatchKey::kPreDispatch);
    return ops::neg(x);
  });
  auto fn = [&](const Tensor& x) {
    const Tensor y = eager_part(ops::relu(x));
    on_after_disable = local_dispatch_key_set().included.has(DispatchKey::kPreDispatch);
    return probe_op().call<Tensor>(ops::exp(y));
  };
  auto cf = compile(fn);
  const Tensor x = ops::arange(-1.0, 2.0);
  for (int call = 0; call < 2; ++call) {  // capture, then replay
    SCOPED_TRACE(call);
    probe_saw_pre_dispatch = true;
    expect_same(cf(x)[0], ops::exp(ops::neg(ops::relu(x))));
    EXPECT_FALSE(probe_saw_pre_dispatch);
    EXPECT_FALSE(on_inside_disable);
    EXPECT_TRUE(on_after_disable);
  }
  EXPECT_FALSE(local_dispatch_key_set().included.has(DispatchKey::kPreDispatch));
  {
    EnablePreDispatchGuard caller;
    expect_same(cf(x)[0], ops::exp(ops::neg(ops::relu(x))));
    EXPECT_TRUE(probe_saw_pre_dispatch);
    EXPECT_TRUE(on_inside_disable);
  }
  EXPECT_FALSE(local_dispatch_key_set().included.has(DispatchKey::kPreDispatch));
}

}  // namespace
}  // namespace opspec
