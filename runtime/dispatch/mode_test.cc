// Modes that answer a call without running any op (Note [Answers that run no
// op]) and the mode census.
#include "runtime/dispatch/mode.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace mode_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Sevens: answers relu with a tensor of sevens made without any op, and
// records what it saw; every other op goes to dispatch(), which proceeds.
class Sevens : public DispatchMode {
 public:
  bool answer_without_ops(const OperatorHandle& op, Stack& stack) override {
    census_when_answering = mode_census().python;
    if (op.name() != "aten::relu") return false;
    const Tensor x = stack[0].to_tensor();
    Tensor out = internal::make_tensor(x.sizes(), DType::kFloat32, kCPU);
    for (int64_t i = 0; i < out.numel(); ++i) out.data_ptr<float>()[i] = 7;
    stack.clear();
    stack.emplace_back(std::move(out));
    ++answered;
    return true;
  }
  bool dispatch(OpCall& call) override {
    census_when_dispatching = mode_census().python;
    ++dispatched;
    call.proceed();
    return true;
  }
  int answered = 0, dispatched = 0;
  size_t census_when_answering = 99, census_when_dispatching = 99;
};

TEST(AnswerWithoutOps, AnsweredCallsSkipDispatchAndTheModeStaysOnItsStack) {
  const Tensor x = ops::arange(-2.0, 2.0);
  Sevens mode;
  Tensor relu, neg;
  {
    ModeGuard guard(mode);
    relu = ops::relu(x);
    EXPECT_EQ(mode.census_when_answering, 1u);  // itself, not taken off for the answer
    neg = ops::neg(x);                           // declined: dispatch() runs, the mode popped
  }
  EXPECT_EQ(relu.to_vector<double>(), std::vector<double>(4, 7.0));
  EXPECT_EQ(neg.to_vector<double>(), ops::neg(x).to_vector<double>());
  EXPECT_EQ(mode.answered, 1);
  EXPECT_EQ(mode.dispatched, 1);
  EXPECT_EQ(mode.census_when_dispatching, 0u);
}

// Counting: a user mode that counts and proceeds.
class Counting : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    ++calls;
    call.proceed();
    return true;
  }
  int calls = 0;
};

TEST(AnswerWithoutOps, OnlyAModeAloneAtItsKeyIsAsked) {
  const Tensor x = ops::arange(-2.0, 2.0);
  Sevens inner;
  Counting outer;
  Tensor relu;
  {
    ModeGuard o(outer);
    ModeGuard i(inner);
    relu = ops::relu(x);  // a chain of two: every handler runs off its stack, through dispatch()
  }
  EXPECT_EQ(inner.answered, 0);
  EXPECT_EQ(inner.dispatched, 1);
  EXPECT_EQ(outer.calls, 1);
  EXPECT_EQ(relu.to_vector<double>(), ops::relu(x).to_vector<double>());
}

// At: a user mode at a given key; Infra: a proxy-kind mode, which takes the Python key's proxy slot.
class At : public Counting {
 public:
  explicit At(DispatchKey key) : key_(key) {}
  DispatchKey key() const override { return key_; }

 private:
  DispatchKey key_;
};
class Infra : public Counting {
 public:
  ModeKind kind() const override { return ModeKind::kProxy; }
};

TEST(ModeCensus, CountsEveryStackAndSlot) {
  const ModeCensus none = mode_census();
  EXPECT_EQ(none.python + none.function + none.pre_dispatch, 0u);
  EXPECT_FALSE(none.proxy || none.fake);
  At py1(DispatchKey::kPython), py2(DispatchKey::kPython), fn(DispatchKey::kFunctionMode),
      pre(DispatchKey::kPreDispatch);
  Infra proxy;
  {
    ModeGuard a(py1), b(py2), c(fn), d(pre), e(proxy);
    const ModeCensus c5 = mode_census();
    EXPECT_EQ(c5.python, 2u);
    EXPECT_EQ(c5.function, 1u);
    EXPECT_EQ(c5.pre_dispatch, 1u);
    EXPECT_TRUE(c5.proxy);
    EXPECT_FALSE(c5.fake);
  }
  const ModeCensus after = mode_census();
  EXPECT_EQ(after.python + after.function + after.pre_dispatch, 0u);
  EXPECT_FALSE(after.proxy);
}

// Snap: records the census and the mode keys its handler runs with.
class Snap : public DispatchMode {
 public:
  Snap(DispatchKey key, ModeKind kind) : key_(key), kind_(kind) {}
  bool dispatch(OpCall& call) override {
    census = mode_census();
    keys = local_dispatch_key_set().modes;
    call.proceed();
    return true;
  }
  DispatchKey key() const override { return key_; }
  ModeKind kind() const override { return kind_; }
  ModeCensus census;
  DispatchKeySet keys;

 private:
  DispatchKey key_;
  ModeKind kind_;
};

// A handler runs with its own mode off its stack (or slot) and the rest as
// they are: the census and the mode keys say so at each step (a handler's
// pop and push-back refresh only its own key).
TEST(ModeCensus, EachHandlerSeesItsOwnModeOffAndTheRestAsTheyAre) {
  Snap outer(DispatchKey::kPython, ModeKind::kUser), inner(DispatchKey::kPython, ModeKind::kUser),
      fn(DispatchKey::kFunctionMode, ModeKind::kUser), proxy(DispatchKey::kPython, ModeKind::kProxy);
  const Tensor x = ops::ones({2});
  {
    ModeGuard a(outer), b(inner), c(fn), d(proxy);
    ops::relu(x);
    const DispatchKeySet both({DispatchKey::kPython, DispatchKey::kFunctionMode});
    EXPECT_EQ(fn.census.function, 0u);
    EXPECT_EQ(fn.census.python, 2u);
    EXPECT_EQ(fn.keys, DispatchKeySet(DispatchKey::kPython));
    EXPECT_EQ(inner.census.python, 1u);
    EXPECT_EQ(inner.census.function, 0u);  // fn's handler, which proceeded, is still running
    EXPECT_TRUE(inner.census.proxy);
    EXPECT_EQ(inner.keys, DispatchKeySet(DispatchKey::kPython));
    EXPECT_EQ(outer.census.python, 0u);
    EXPECT_EQ(outer.keys, DispatchKeySet(DispatchKey::kPython));  // the proxy slot keeps the key on
    EXPECT_EQ(proxy.census.python, 0u);
    EXPECT_FALSE(proxy.census.proxy);
    EXPECT_EQ(proxy.keys, DispatchKeySet());
    // All back after the call.
    const ModeCensus after = mode_census();
    EXPECT_EQ(after.python, 2u);
    EXPECT_EQ(after.function, 1u);
    EXPECT_TRUE(after.proxy);
    EXPECT_EQ(local_dispatch_key_set().modes, both);
  }
  EXPECT_EQ(local_dispatch_key_set().modes, DispatchKeySet());
}

// Guards ended out of order: See Note [Out-of-order guard release].
TEST(ModeGuardOrder, InfraModeGuardsEndedOutOfOrderLeaveNoDanglingMode) {
  auto f1 = std::make_unique<FakeTensorMode>(), f2 = std::make_unique<FakeTensorMode>();
  std::optional<ModeGuard> g1, g2;
  g1.emplace(*f1);
  g2.emplace(*f2);
  g1.reset();
  EXPECT_EQ(infra_mode(ModeKind::kFake).get(), f2.get());  // the later guard's mode stays
  g2.reset();
  f1.reset();
  f2.reset();
  EXPECT_FALSE(has_infra_mode(ModeKind::kFake));  // it put back f1 before, used after free
  EXPECT_EQ(ops::ones({2}).to_vector<float>(), std::vector<float>(2, 1.0f));
}

TEST(ModeGuardOrder, AMiddleInfraGuardHandsItsSlotToTheNextOne) {
  Infra a, b, c;
  const Tensor one = ops::ones({1});
  std::optional<ModeGuard> ga, gb, gc;
  ga.emplace(a);
  gb.emplace(b);
  gc.emplace(c);
  gb.reset();
  EXPECT_EQ(infra_mode(ModeKind::kProxy).get(), &c);
  gc.reset();  // puts back what b replaced: a
  EXPECT_EQ(infra_mode(ModeKind::kProxy).get(), &a);
  ops::neg(one);
  EXPECT_EQ(a.calls, 1);
  ga.reset();
  EXPECT_FALSE(has_infra_mode(ModeKind::kProxy));
  // In order, as always.
  {
    ModeGuard outer(a);
    { ModeGuard inner(b); }
    EXPECT_EQ(infra_mode(ModeKind::kProxy).get(), &a);
  }
  EXPECT_FALSE(has_infra_mode(ModeKind::kProxy));
}

// PreDispatchProxy: a non-user mode on the PreDispatch stack, which HideUserModesGuard leaves in place.
class PreDispatchProxy : public Counting {
 public:
  DispatchKey key() const override { return DispatchKey::kPreDispatch; }
  ModeKind kind() const override { return ModeKind::kProxy; }
};

TEST(ModeGuardOrder, HideUserModesGuardBringsBackOnlyModesStillAlive) {
  // A hidden user mode whose guard ends while hidden stays gone.
  auto user = std::make_unique<Counting>();
  std::optional<ModeGuard> g;
  std::optional<HideUserModesGuard> hide;
  g.emplace(*user);
  hide.emplace();
  EXPECT_EQ(mode_census().python, 0u);
  g.reset();
  user.reset();
  hide.reset();
  EXPECT_EQ(mode_census().python, 0u);
  // So does a mode it left on its stack whose guard ends in its scope.
  auto pre = std::make_unique<PreDispatchProxy>();
  g.emplace(*pre);
  hide.emplace();
  EXPECT_EQ(mode_census().pre_dispatch, 1u);
  g.reset();
  pre.reset();
  hide.reset();
  EXPECT_EQ(mode_census().pre_dispatch, 0u);
  // A mode pushed in its scope whose guard outlives it stays until that guard ends.
  Counting later;
  hide.emplace();
  g.emplace(later);
  hide.reset();
  EXPECT_EQ(innermost_mode(), &later);
  g.reset();
  EXPECT_EQ(mode_census().python, 0u);
  // In order: a plain restore.
  Counting kept;
  {
    ModeGuard guard(kept);
    {
      HideUserModesGuard h;
      EXPECT_EQ(innermost_mode(), nullptr);
    }
    EXPECT_EQ(innermost_mode(), &kept);
  }
  EXPECT_EQ(ops::ones({1}).numel(), 1);
}

// Forgetful: says it handled every call but leaves the arguments where the results belong.
class Forgetful : public DispatchMode {
 public:
  bool dispatch(OpCall&) override { return true; }
  std::string_view name() const override { return "Forgetful"; }
};

TEST(HandledCalls, AHandlerThatLeavesNoResultsIsNamed) {
  Forgetful forgetful;
  {
    ModeGuard guard(forgetful);
    EXPECT_THAT([] { ops::ones({2}); },
                ThrowsMessage<Error>(HasSubstr("mode Forgetful handled aten::ones but left 5 values on the stack, "
                                               "the schema returns 1")));
  }
  Counting outer;  // two modes: the chain's path
  {
    ModeGuard o(outer);
    ModeGuard i(forgetful);
    EXPECT_THAT([] { ops::relu(ops::ones({2})); },
                ThrowsMessage<Error>(HasSubstr("mode Forgetful handled aten::ones but left 5 values")));
  }
  EXPECT_EQ(ops::relu(ops::ones({2})).numel(), 2);
}

}  // namespace
}  // namespace opspec
