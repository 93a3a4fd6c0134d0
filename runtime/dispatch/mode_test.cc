// Modes that answer a call without running any op (Note [Answers that run no
// op]) and the mode census.
#include "runtime/dispatch/mode.h"

#include <gtest/gtest.h>

#include <string>

#include "runtime/ops/ops.h"

namespace opspec {
namespace mode_test {

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

}  // namespace
}  // namespace opspec
