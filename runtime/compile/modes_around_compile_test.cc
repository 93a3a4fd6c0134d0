// A user's modes around a compiled call see the ops that run, never the
// capture (See Note [Modes around a compiled call] in capture.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace modes_around_compile_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// OpNames: records each op's name, and whether any tensor argument was fake.
template <class Base>
class OpNames : public Base {
 public:
  bool dispatch(OpCall& call) override {
    names.push_back(call.name());
    for (size_t i = 0; i < call.num_args(); ++i) {
      if (call.arg(i).is_tensor() && is_fake(call.arg(i).to_tensor())) saw_fake = true;
    }
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
  bool saw_fake = false;
};

class FunctionNames : public OpNames<FunctionMode> {};
using DispatchNames = OpNames<DispatchMode>;

std::vector<Tensor> three_ops(const std::vector<Tensor>& in) {
  return {ops::add(ops::cos(ops::relu(in[0])), 1.0)};
}

TEST(ModesAroundCompile, ACountingModeSeesEachOpOnceOnEveryCall) {
  // Issue 22.4: it counted 6 ops for 3 (3 fake ones during capture).
  const Tensor x = ops::randn({4});
  for (const char* backend : {"eager", "aot_eager"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(&three_ops, {.backend = backend});
    for (int call = 0; call < 2; ++call) {  // capture, then the cached graph
      DispatchNames mode;
      {
        ModeGuard g(mode);
        cf({x});
      }
      EXPECT_THAT(mode.names, ElementsAre("aten::relu", "aten::cos", "aten::add.Tensor")) << "call " << call;
      EXPECT_FALSE(mode.saw_fake);
    }
  }
}

TEST(ModesAroundCompile, FunctionModesSeeTheGraphsOpsToo) {
  const Tensor x = ops::randn({4});
  auto cf = compile(&three_ops);
  auto mode = std::make_shared<FunctionNames>();
  {
    ModeGuard g(mode);
    cf({x});
  }
  EXPECT_THAT(mode->names, ElementsAre("aten::relu", "aten::cos", "aten::add.Tensor"));
  EXPECT_FALSE(mode->saw_fake);
}

TEST(ModesAroundCompile, AroundABreakTheySeeBothGraphsAndTheEagerOpBetween) {
  const Tensor x = ops::randn({4});
  auto cf = compile([](const std::vector<Tensor>& in) {
    const Tensor a = ops::relu(in[0]);
    graph_break();
    return std::vector<Tensor>{ops::add(ops::cos(a), 1.0)};
  });
  DispatchNames mode;
  {
    ModeGuard g(mode);
    cf({x});
  }
  EXPECT_THAT(mode.names, ElementsAre("aten::relu", "aten::cos", "aten::add.Tensor"));
  EXPECT_FALSE(mode.saw_fake);
  EXPECT_EQ(cf.stats().breaks.size(), 1u);
}

TEST(ModesAroundCompile, FusedKernelsAreNotOpsSoTheModeSeesNoneOfThem) {
  const Tensor x = ops::randn({4});
  auto cf = compile(&three_ops, {.backend = "fused"});
  DispatchNames mode;
  {
    ModeGuard g(mode);
    cf({x});
  }
  EXPECT_FALSE(mode.saw_fake);
  EXPECT_THAT(mode.names, IsEmpty());
}

TEST(ModesAroundCompile, TheModesAreBackAfterTheCallAndAfterAThrow) {
  const Tensor x = ops::randn({4});
  auto cf = compile([](const std::vector<Tensor>& in) -> std::vector<Tensor> {
    ops::relu(in[0]);
    throw std::runtime_error("boom");
  });
  DispatchNames mode;
  ModeGuard g(mode);
  EXPECT_THROW(cf({x}), std::runtime_error);
  EXPECT_EQ(mode_stack().size(), 1u);
  ops::neg(x);
  EXPECT_THAT(mode.names, ElementsAre("aten::neg"));
}

// A mode whose guard ends inside the compiled function (hidden from capture
// then) used to come back when the call returned: on the stack with no guard,
// and for a mode that lived on the stack, a pointer to a dead object.
TEST(ModesAroundCompile, AModeWhoseGuardEndsDuringTheCallDoesNotComeBack) {
  const Tensor x = ops::randn({4});
  DispatchNames mode;
  std::optional<ModeGuard> guard(std::in_place, mode);
  auto cf = compile([&](const std::vector<Tensor>& in) {
    const Tensor y = ops::relu(in[0]);
    guard.reset();
    return std::vector<Tensor>{y};
  });
  cf({x});
  EXPECT_TRUE(mode_stack().empty());
  ops::neg(x);
  // The graph runs when fn returns, after the guard ended; and neg after the call.
  EXPECT_THAT(mode.names, IsEmpty());
}

}  // namespace
}  // namespace opspec
