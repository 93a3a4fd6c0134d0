// mode_handlers_test.cc: what a handler may do to the mode stack before it
// proceeds (See Note [Handlers see the live mode stack]), a guard ending inside
// its own mode's handler (Note [A guard ending inside its own handler]), and
// dispatch_mode_enabled under an exclusion.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace mode_handlers_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// Tagged: logs "tag:op" into a shared log; before proceeding runs `before`.
class Tagged : public DispatchMode {
 public:
  Tagged(std::string tag, std::vector<std::string>* log) : tag_(std::move(tag)), log_(log) {}
  bool dispatch(OpCall& call) override {
    log_->push_back(tag_ + ":" + call.name());
    if (before) {
      std::function<void(OpCall&)> f = std::move(before);  // once
      f(call);
      return true;
    }
    call.proceed();
    return true;
  }
  std::function<void(OpCall&)> before;  // does the proceeding when set

 private:
  std::string tag_;
  std::vector<std::string>* log_;
};

// PyTorch's handler calls func(*args), which goes through the stack as it is
// then: a mode the handler pushed sees the call first, then the outer one.
// The chain listed at entry asserted ("stack_->back() == mode").
TEST(HandlersSeeTheLiveStack, AModePushedInAHandlerSeesTheCallItProceeds) {
  const Tensor x = ops::ones({2});
  std::vector<std::string> log;
  Tagged outer("A", &log), inner("B", &log), pushed("C", &log);
  inner.before = [&](OpCall& call) {
    ModeGuard g(pushed);
    call.proceed();
  };
  {
    ModeGuard a(outer), b(inner);
    ops::relu(x);
  }
  EXPECT_THAT(log, ElementsAre("B:aten::relu", "C:aten::relu", "A:aten::relu"));
  // Alone at its key too (the path that builds no chain).
  log.clear();
  inner.before = [&](OpCall& call) {
    ModeGuard g(pushed);
    call.proceed();
  };
  {
    ModeGuard b(inner);
    ops::relu(x);
  }
  EXPECT_THAT(log, ElementsAre("B:aten::relu", "C:aten::relu"));
}

// A fake-kind mode that logs: infra modes live in a slot, read when their turn comes.
class TaggedFake : public Tagged {
 public:
  using Tagged::Tagged;
  ModeKind kind() const override { return ModeKind::kFake; }
};

// With a user mode and a fake mode (the path that lists the handlers after the
// user modes), a handler that replaces or ends the fake mode's guard before it
// proceeds: the fake mode in the slot then handles the call, or none.
TEST(HandlersSeeTheLiveStack, TheInfraSlotIsReadWhenItsTurnComes) {
  const Tensor x = ops::ones({2});
  std::vector<std::string> log;
  Tagged user("U", &log);
  TaggedFake f1("F1", &log), f2("F2", &log);
  user.before = [&](OpCall& call) {
    ModeGuard replaced(f2);
    call.proceed();
  };
  {
    ModeGuard a(f1), b(user);
    ops::relu(x);
    ops::neg(x);
  }
  EXPECT_THAT(log, ElementsAre("U:aten::relu", "F2:aten::relu", "U:aten::neg", "F1:aten::neg"));
  log.clear();
  std::optional<ModeGuard> fake;
  user.before = [&](OpCall& call) {
    fake.reset();  // the fake mode's guard ends: it must not handle what follows
    call.proceed();
  };
  fake.emplace(f1);
  {
    ModeGuard b(user);
    ops::relu(x);
  }
  EXPECT_THAT(log, ElementsAre("U:aten::relu"));
  EXPECT_FALSE(has_infra_mode(ModeKind::kFake));
}

TEST(HandlersSeeTheLiveStack, HiddenOrExcludedModesDoNotSeeWhatTheHandlerProceeds) {
  const Tensor x = ops::ones({2});
  std::vector<std::string> log;
  Tagged outer("A", &log), inner("B", &log);
  inner.before = [](OpCall& call) {
    HideUserModesGuard hide;
    call.proceed();
  };
  {
    ModeGuard a(outer), b(inner);
    ops::relu(x);
  }
  EXPECT_THAT(log, ElementsAre("B:aten::relu"));
  log.clear();
  inner.before = [](OpCall& call) {
    ExcludeModesGuard exclude;
    call.proceed();
  };
  {
    ModeGuard a(outer), b(inner);
    ops::relu(x);
    ops::neg(x);  // afterwards both see calls again
  }
  EXPECT_THAT(log, ElementsAre("B:aten::relu", "B:aten::neg", "A:aten::neg"));
}

// A guard reset inside its own mode's handler: the mode was put back after
// the handler, seeing the next op, and, being gone, crashed the one after.
TEST(GuardEndingInItsHandler, TheModeDoesNotComeBack) {
  const Tensor x = ops::ones({2});
  std::vector<std::string> log;
  auto mode = std::make_unique<Tagged>("M", &log);
  std::optional<ModeGuard> guard;
  mode->before = [&](OpCall& call) {
    guard.reset();
    call.proceed();
  };
  guard.emplace(*mode);
  ops::relu(x);
  EXPECT_TRUE(mode_stack().empty());
  EXPECT_FALSE(dispatch_mode_enabled());
  ops::neg(x);
  mode.reset();
  EXPECT_EQ(ops::exp(x).to_vector<float>().size(), 2u);  // no mode left to call: it read freed memory
  EXPECT_THAT(log, ElementsAre("M:aten::relu"));
}

// A mode that pushes itself again in its handler recursed until the C++ stack
// overflowed (a segfault); Python raises RecursionError.
TEST(HandlerRecursion, IsAnErrorNotAStackOverflow) {
  struct Again : DispatchMode {
    bool dispatch(OpCall& call) override {
      ModeGuard again(*this);
      ops::neg(call.arg(0).to_tensor());  // comes back here, forever
      call.proceed();
      return true;
    }
    std::string_view name() const override { return "Again"; }
  } mode;
  const Tensor x = ops::ones({2});
  {
    ModeGuard g(mode);
    EXPECT_THAT([&] { ops::relu(x); },
                ::testing::ThrowsMessage<Error>(::testing::HasSubstr(
                    "maximum recursion depth exceeded: 256 mode handlers nested, the innermost Again")));
  }
  EXPECT_TRUE(mode_stack().empty());  // every level unwound
  EXPECT_EQ(ops::relu(x).to_vector<float>(), std::vector<float>(2, 1.0f));
}

// PyTorch's dispatch_mode_enabled is false while the Python key is excluded,
// so a composite decomposes as with no mode (linear's bias add_ in place).
TEST(DispatchModeEnabled, FalseWhileThePythonKeyIsExcluded) {
  std::vector<std::string> log;
  Tagged m("M", &log);
  ModeGuard g(m);
  EXPECT_TRUE(dispatch_mode_enabled());
  {
    ExcludeModesGuard exclude;
    EXPECT_FALSE(dispatch_mode_enabled());
  }
  EXPECT_TRUE(dispatch_mode_enabled());
}

}  // namespace mode_handlers_test
}  // namespace opspec
