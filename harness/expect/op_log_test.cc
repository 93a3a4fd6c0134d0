// OpRecorder levels, RecordedOp printing and op-name patterns.
#include "harness/expect/op_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "runtime/compile/compile.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace op_log_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(OpRecorder, RecordsAtenOpsIncludingFactories) {
  OpRecorder rec;
  const Tensor x = ops::ones({2, 3});
  ops::relu(ops::add(x, x));
  EXPECT_THAT(rec.names(), ElementsAre("aten::ones", "aten::add.Tensor", "aten::relu"));
  // gMock matchers compare RecordedOp with names directly.
  EXPECT_THAT(rec.ops(), ElementsAre("aten::ones", "aten::add.Tensor", "aten::relu"));
  ASSERT_EQ(rec.ops().size(), 3u);
  EXPECT_EQ(rec.ops()[1].str(), "aten::add.Tensor(f32[2, 3], f32[2, 3])");
  EXPECT_EQ(rec.ops()[0].str(), "aten::ones()");
}

TEST(OpRecorder, WrappedNumbersAreScalarsAndListsAreFlattened) {
  const Tensor x = ops::ones({2});
  const Tensor y = ops::ones({3}, {.dtype = DType::kFloat64});
  const auto ops_seen = record_ops([&] {
    ops::add(x, 1.0);
    ops::cat({x, ops::ones({0})}, 0);
    ops::add(y, ops::scalar_tensor(2.0, {.dtype = DType::kFloat64}));
  });
  ASSERT_EQ(ops_seen.size(), 5u) << ::testing::PrintToString(ops_seen);
  EXPECT_EQ(ops_seen[0].str(), "aten::add.Tensor(f32[2])");
  EXPECT_EQ(ops_seen[2].str(), "aten::cat(f32[2], f32[0])");
  EXPECT_EQ(ops_seen[4].str(), "aten::add.Tensor(f64[3], f64[])");
  EXPECT_EQ(ops_seen[4].dtypes, (std::vector<DType>{DType::kFloat64, DType::kFloat64}));
  EXPECT_EQ(ops_seen[4].shapes[0], SizeVec{3});
}

TEST(OpRecorder, FunctionLevelSeesCompositesAsCalled) {
  const Tensor x = ops::ones({2, 3});
  const Tensor w = ops::ones({4, 3});
  const auto fn_ops = record_ops([&] { ops::linear(x, w); }, OpLevel::kFunction);
  const auto aten_ops = record_ops([&] { ops::linear(x, w); }, OpLevel::kAten);
  EXPECT_THAT(fn_ops, ElementsAre("aten::linear"));
  EXPECT_THAT(aten_ops, ::testing::Not(::testing::Contains("aten::linear")));
  EXPECT_FALSE(aten_ops.empty());
}

TEST(OpRecorder, RecordsOnlyWhileAliveAndNests) {
  const Tensor x = ops::ones({2});
  std::vector<std::string> outer_names, inner_names;
  {
    OpRecorder outer;
    ops::neg(x);
    {
      OpRecorder inner;
      ops::relu(x);
      inner_names = inner.names();
    }
    ops::exp(x);
    outer_names = outer.names();
  }
  EXPECT_THAT(inner_names, ElementsAre("aten::relu"));
  // The inner mode handles relu and proceeds without itself: the outer one sees it too.
  EXPECT_THAT(outer_names, ElementsAre("aten::neg", "aten::relu", "aten::exp"));
  EXPECT_THAT(mode_stack(DispatchKey::kPython), IsEmpty());
}

TEST(OpRecorder, HiddenAndFakeOpsAreSkippedUnlessAsked) {
  const Tensor x = ops::ones({2});
  const auto hidden = record_ops([&] {
    HideUserModesGuard hide;
    ops::neg(x);
  });
  EXPECT_THAT(hidden, IsEmpty());
  FakeTensorMode fake_mode;
  const auto real_only = record_ops([&] {
    ModeGuard g(fake_mode);
    ops::neg(ops::ones({2}));
  });
  EXPECT_THAT(real_only, IsEmpty());
  const auto with_fake = record_ops(
      [&] {
        ModeGuard g(fake_mode);
        ops::neg(ops::ones({2}));
      },
      OpLevel::kAten, /*include_fake=*/true);
  EXPECT_THAT(with_fake, ElementsAre("aten::ones", "aten::neg"));
}

TEST(OpRecorder, CompiledFunctionsShowTheOpsTheBackendRuns) {
  // Capture runs on fake tensors and is skipped; the graph's real ops are recorded.
  auto cf = compile([](const Tensor& x) { return ops::neg(ops::relu(x)); });
  const Tensor x = ops::ones({3});
  EXPECT_THAT(record_ops([&] { cf(x); }), ElementsAre("aten::relu", "aten::neg"));
  // Fake ops included or not: a mode around a compiled call never sees the
  // capture (See Note [Modes around a compiled call]).
  auto cf2 = compile([](const Tensor& x) { return ops::neg(ops::relu(x)); });
  EXPECT_THAT(record_ops([&] { cf2(x); }, OpLevel::kAten, /*include_fake=*/true),
              ElementsAre("aten::relu", "aten::neg"));
}

TEST(OpRecorder, ExceptionsPropagateAndTheModeIsPopped) {
  EXPECT_THROW(record_ops([] {
                 ops::neg(ops::ones({2}));
                 throw Error("boom");
               }),
               Error);
  EXPECT_THAT(mode_stack(DispatchKey::kPython), IsEmpty());
}

TEST(RecordedOp, PrintsForGtest) {
  RecordedOp op{"aten::mm", {{2, 3}, {3, 4}}, {DType::kFloat32, DType::kBFloat16}};
  EXPECT_EQ(::testing::PrintToString(op), "aten::mm(f32[2, 3], bf16[3, 4])");
  std::ostringstream os;
  os << op;
  EXPECT_EQ(os.str(), "aten::mm(f32[2, 3], bf16[3, 4])");
  EXPECT_TRUE(op == "aten::mm");
  EXPECT_TRUE(op == "aten::mm.default");  // PyTorch's name of the unnamed overload
  EXPECT_FALSE(op == "aten::mm.out");
  EXPECT_TRUE("aten::mm" == op);
}

struct PatternCase {
  const char* pattern;
  const char* name;
  bool match;
};

TEST(OpNameMatches, Table) {
  const PatternCase cases[] = {
      {"aten::add.Tensor", "aten::add.Tensor", true},
      {"aten::add.Tensor", "aten::add.Scalar", false},
      {"aten::add.Tensor", "aten::add", false},
      {"aten::add", "aten::add", true},
      {"aten::add", "aten::add.Tensor", true},
      {"aten::add", "aten::add.Scalar", true},
      {"aten::add", "aten::add_.Tensor", false},
      {"aten::add", "aten::addmm", false},
      {"aten::add", "aten::addmm.default", false},
      {"add", "aten::add.Tensor", true},
      {"add", "aten::add", true},
      {"add.Tensor", "aten::add.Tensor", true},
      {"add.Tensor", "aten::add.Scalar", false},
      {"add", "myns::add", false},
      {"myns::op", "myns::op", true},
      {"myns::op", "myns::op.overload", true},
      {"myns::op", "aten::op", false},
      {"myns::op.x", "myns::op.x", true},
      {"aten::relu", "aten::Relu", false},
      {"aten::add", "aten::add.", false},
      {"", "aten::add", false},
      {"aten::_to_copy", "aten::_to_copy", true},
      // `.default` is PyTorch's name of the unnamed overload: that one only.
      {"aten::relu.default", "aten::relu", true},
      {"relu.default", "aten::relu", true},
      {"aten::add.default", "aten::add.Tensor", false},
  };
  for (const PatternCase& c : cases) {
    EXPECT_EQ(op_name_matches(c.pattern, c.name), c.match) << c.pattern << " vs " << c.name;
  }
}

}  // namespace
}  // namespace opspec
