// value_test.cc: the tensors a typed call boxes for a mode are borrowed
// (Note [Borrowed arguments]): handlers read them as any tensor, and every
// copy, move or mutable access owns its tensor, so counts stay right.
#include "runtime/dispatch/value.h"

#include <gtest/gtest.h>

#include <functional>
#include <optional>
#include <utility>

#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace value_test {

// Probe: runs `before` on each call, then proceeds unless it did, or unless
// `before` answered the call itself (returned true, the results on the stack).
class Probe : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    if (before && before(call)) return true;
    if (!call.proceeded()) call.proceed();
    return true;
  }
  std::function<bool(OpCall&)> before;
};

int64_t count(const Tensor& t) { return t.impl()->use_count(); }

TEST(BorrowedArguments, AHandlerSeesTheCallersTensorsWithoutACountOfTheirOwn) {
  const Tensor a = ops::ones({2}), b = ops::ones({2});
  Probe probe;
  int64_t during = 0;
  probe.before = [&](OpCall& call) {
    during = count(call.arg(0).to_tensor());
    return false;
  };
  Tensor sum;
  {
    ModeGuard guard(probe);
    sum = ops::add(a, b);
  }
  EXPECT_EQ(during, 1);  // only the caller's `a`, as an unboxed call passes it
  EXPECT_EQ(count(a), 1);
  EXPECT_EQ(count(b), 1);
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(2, 2.0f));
}

TEST(BorrowedArguments, TheyReadAsAnyTensorValue) {
  const Tensor a = ops::ones({2});
  Probe probe;
  probe.before = [&](OpCall& call) {
    const Value& self = call.arg(0);
    EXPECT_TRUE(self.is_tensor());
    EXPECT_EQ(self.type_name(), "Tensor");
    EXPECT_TRUE(self.to_tensor().is_same(a));
    EXPECT_TRUE(self == Value(a));
    EXPECT_TRUE(Value(a) == self);
    EXPECT_EQ(self.repr(), Value(a).repr());
    // The Scalar operand, passed on as a wrapped-number tensor.
    const Value& other = call.arg(1);
    EXPECT_TRUE(other.is_tensor());
    EXPECT_EQ(other.to_scalar().to_double(), 2.5);
    EXPECT_EQ(other.repr(), Value(other.to_tensor()).repr());
    return false;
  };
  ModeGuard guard(probe);
  EXPECT_EQ(ops::add(a, 2.5).to_vector<float>(), std::vector<float>(2, 3.5f));
}

TEST(BorrowedArguments, CopiesAndMovesOwnTheirTensor) {
  const Tensor a = ops::ones({2}), b = ops::ones({2});
  std::optional<Value> kept_copy, kept_move;
  Probe probe;
  int64_t a_after_copy = 0, b_after_move = 0;
  probe.before = [&](OpCall& call) {
    kept_copy.emplace(call.arg(0));
    a_after_copy = count(a);
    kept_move.emplace(std::move(call.stack()[1]));  // the slot still reads as b
    b_after_move = count(b);
    Stack copied = call.stack();  // a whole stack, copied: owned too
    EXPECT_EQ(count(a), 3);
    return false;
  };
  Tensor sum;
  {
    ModeGuard guard(probe);
    sum = ops::add(a, b);
  }
  EXPECT_EQ(a_after_copy, 2);
  EXPECT_EQ(b_after_move, 2);
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(2, 2.0f));
  // The kept values outlive the call, holding their tensors.
  EXPECT_EQ(count(a), 2);
  EXPECT_TRUE(kept_copy->to_tensor().is_same(a));
  EXPECT_TRUE(kept_move->to_tensor().is_same(b));
  kept_copy.reset();
  kept_move.reset();
  EXPECT_EQ(count(a), 1);
  EXPECT_EQ(count(b), 1);
}

TEST(BorrowedArguments, AMutableTensorIsOwnedSoStealingOrReplacingItIsSafe) {
  const Tensor a = ops::ones({2}), b = ops::ones({2}), c = ops::full({2}, 5.0);
  Probe probe;
  int64_t a_while_stolen = 0;
  probe.before = [&](OpCall& call) {
    Tensor stolen = std::move(call.stack()[0].to_tensor());
    a_while_stolen = count(a);
    call.stack()[0] = Value(stolen);
    call.stack()[1] = Value(c);  // proceeds with a + c
    return false;
  };
  Tensor sum;
  {
    ModeGuard guard(probe);
    sum = ops::add(a, b);
  }
  EXPECT_EQ(a_while_stolen, 2);  // a, and the handler's owned copy
  EXPECT_EQ(sum.to_vector<float>(), std::vector<float>(2, 6.0f));
  EXPECT_EQ(count(a), 1);
  EXPECT_EQ(count(b), 1);
  EXPECT_EQ(count(c), 1);
}

TEST(BorrowedArguments, ALeftInArgumentReturnedAsTheResultIsOwned) {
  Tensor a = ops::ones({2});
  Probe probe;
  probe.before = [&](OpCall& call) {
    return call.name() == "aten::relu";  // relu of ones: its input, left on the stack as the result
  };
  Tensor out;
  {
    ModeGuard guard(probe);
    out = ops::relu(a);
  }
  EXPECT_TRUE(out.is_same(a));
  EXPECT_EQ(count(a), 2);
  a = Tensor();
  EXPECT_EQ(out.to_vector<float>(), std::vector<float>(2, 1.0f));  // still alive: out owns it
}

TEST(BorrowedArguments, ArgumentsBeyondTheInlineStackAreOwned) {
  const Tensor a = ops::ones({2});
  Probe probe;
  int64_t during = 0;
  probe.before = [&](OpCall& call) {
    if (call.name() != "aten::full_like") return false;
    EXPECT_GT(call.num_args(), kStackInline);  // self, fill_value and five options
    during = count(call.arg(0).to_tensor());
    return false;
  };
  {
    ModeGuard guard(probe);
    EXPECT_EQ(ops::full_like(a, 3.0).to_vector<float>(), std::vector<float>(2, 3.0f));
  }
  EXPECT_EQ(during, 2);  // a heap-allocated stack could be moved off whole: See Note [Borrowed arguments]
  EXPECT_EQ(count(a), 1);
}

}  // namespace value_test
}  // namespace opspec
