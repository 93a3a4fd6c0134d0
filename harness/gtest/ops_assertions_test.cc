#include "harness/gtest/ops_assertions.h"

#include <stdexcept>

#include <gmock/gmock.h>
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace ops_assertions_test {

using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::IsSubsetOf;
using ::testing::Not;
using ::testing::SizeIs;
using testing_util::fatal_failure_of;
using testing_util::nonfatal_failure_of;

// ---- EXPECT_OPS with gMock's container matchers ----

TEST(ExpectOpsTest, ElementsAreOfNamesPasses) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::mm"));
  ASSERT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::mm"));
  // PyTorch's spelling of the unnamed overload matches too, as programs accept it (issue 22).
  EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu.default", "aten::mm.default"));
}

TEST(ExpectOpsTest, ElementsAreFailureIsASequenceDiff) {
  Tensor x = ops::randn({4, 4});
  EXPECT_NONFATAL_FAILURE(
      EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::add.Tensor", "aten::mm")),
      "- [1]   aten::add.Tensor");
  const std::string msg = nonfatal_failure_of(
      [&] { EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::add.Tensor", "aten::mm")); });
  EXPECT_THAT(msg, HasSubstr("ops recorded by `ops::mm(ops::relu(x), x)` (aten level) differ from the expected "
                             "sequence: expected 3 ops, got 2\n"));
  EXPECT_THAT(msg, HasSubstr("  [0|0] aten::relu\n"));
  EXPECT_THAT(msg, HasSubstr("  [2|1] aten::mm"));
  // Compact: no gMock dump of the whole vector.
  EXPECT_THAT(msg, Not(HasSubstr("element #")));
}

TEST(ExpectOpsTest, UnexpectedOpShowsAsPlusLine) {
  Tensor x = ops::randn({3});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_OPS(ops::relu(ops::sin(x)), ElementsAre("aten::relu")); });
  EXPECT_THAT(msg, HasSubstr("expected 1 op, got 2"));
  EXPECT_THAT(msg, HasSubstr("+ [0]   aten::sin"));
}

TEST(ExpectOpsTest, MixedElementsAndElementsAreArrayAreDiffed) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", Op("mm")));
  const std::string msg = nonfatal_failure_of(
      [&] { EXPECT_OPS(ops::add(ops::relu(x), x), ElementsAre("aten::relu", Op("mm"), Op("aten::sin"))); });
  EXPECT_THAT(msg, HasSubstr("expected 3 ops, got 2\n  [0|0] aten::relu\n- [1]   aten::mm.*\n- [2]   aten::sin.*\n"
                             "+ [1]   aten::add.Tensor"));
  const std::vector<std::string> expected = {"aten::relu", "aten::sin"};
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::mm(ops::relu(x), x), ::testing::ElementsAreArray(expected)),
                          "+ [1]   aten::mm");
}

TEST(ExpectOpsTest, IsEmptyFailureIsADiffToo) {
  Tensor x = ops::randn({3});
  EXPECT_OPS(x.sizes(), IsEmpty());
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::relu(x), IsEmpty()), "expected 0 ops, got 1");
}

TEST(ExpectOpsTest, StatementMayBeABlockWithCommas) {
  Tensor x = ops::randn({6});
  EXPECT_OPS(
      {
        std::vector<int64_t> shape{2, 3};
        Tensor y = ops::relu(ops::reshape(x, shape));
        ops::add(y, y);
      },
      OpsInOrder("aten::relu", "aten::add"));
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_OPS(
        {
          std::vector<int64_t> shape{2, 3};
          ops::relu(ops::reshape(x, shape));
        },
        ElementsAre("aten::mm"));
  });
  EXPECT_THAT(msg,
              HasSubstr("ops recorded by `{ std::vector<int64_t> shape{2, 3}; ops::relu(ops::reshape(x, shape)); }`"));
}

TEST(ExpectOpsTest, ContainsAndIsSubsetOf) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::relu(x), x), Contains("aten::mm"));
  EXPECT_OPS(ops::mm(ops::relu(x), x), IsSubsetOf({"aten::relu", "aten::mm", "aten::sin"}));
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::mm(ops::relu(x), x), Contains("aten::sin")),
                          "don't match Contains(\"aten::sin\")");
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_OPS(ops::mm(ops::relu(x), x), IsSubsetOf({"aten::relu", "aten::sin"}));
  });
  EXPECT_THAT(msg, HasSubstr("Expected: an injection from elements to requirements exists such that:"));
  EXPECT_THAT(msg, HasSubstr("  Actual: 2 ops"));
  EXPECT_THAT(msg, HasSubstr("  [0] aten::relu(f32[4, 4])\n  [1] aten::mm(f32[4, 4], f32[4, 4])"));
}

TEST(ExpectOpsTest, SizeIsFailureExplainsAndListsOps) {
  Tensor x = ops::randn({2});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_OPS(ops::relu(ops::relu(x)), SizeIs(3)); });
  EXPECT_THAT(msg, HasSubstr("don't match SizeIs(3)\nExpected: size is equal to 3\n"
                             "  Actual: 2 ops, whose size 2 doesn't match\n  [0] aten::relu(f32[2])"));
}

TEST(ExpectOpsTest, LongSequencesAreElided) {
  Tensor x = ops::randn({2});
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_OPS(
        {
          Tensor y = x;
          for (int i = 0; i < 50; ++i) y = ops::relu(y);
        },
        SizeIs(3));
  });
  EXPECT_THAT(msg, HasSubstr("  [19] aten::relu(f32[2])\n  ... 22 more ops ...\n  [42] aten::relu(f32[2])"));
  EXPECT_THAT(msg, Not(HasSubstr("[20]")));
}

TEST(ExpectOpsTest, ThrowingStatementFailsWithTheError) {
  Tensor a = ops::randn({2, 3});
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_OPS(
        {
          ops::relu(a);
          throw std::runtime_error("boom");
        },
        IsEmpty());
  });
  EXPECT_THAT(msg,
              HasSubstr("(aten level): the statement threw: boom\nops recorded until then (1):\n  [0] aten::relu"));
}

TEST(ExpectOpsTest, AssertOpsIsFatal) {
  EXPECT_FATAL_FAILURE(
      {
        Tensor x = ops::randn({2});
        ASSERT_OPS(ops::relu(x), ElementsAre("aten::sin"));
      },
      "- [0] aten::sin");
}

TEST(ExpectOpsTest, StreamedTextIsAppended) {
  Tensor x = ops::randn({2});
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::relu(x), IsEmpty()) << "while testing relu", "while testing relu");
}

// ---- Op ----

TEST(OpMatcherTest, NameWithoutOverloadMatchesAnyOverload) {
  Tensor x = ops::randn({2, 3});
  EXPECT_OPS(ops::add(x, x), ElementsAre(Op("aten::add")));
  EXPECT_OPS(ops::add(x, x), ElementsAre(Op("add")));
  EXPECT_OPS(ops::add(x, x), ElementsAre(Op("aten::add.Tensor")));
  // A plain string inside ElementsAre is the exact full name.
  EXPECT_OPS(ops::add(x, x), ElementsAre("aten::add.Tensor"));
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::add(x, x), ElementsAre("aten::add")), "- [0] aten::add\n");
  const std::string msg = nonfatal_failure_of([&] { EXPECT_OPS(ops::add(x, x), ElementsAre(Op("aten::add.Scalar"))); });
  EXPECT_THAT(msg, HasSubstr("- [0] aten::add.Scalar\n"));
  EXPECT_THAT(msg, HasSubstr("+ [0] aten::add.Tensor"));
}

TEST(OpMatcherTest, OverloadFreePatternShowsAsStar) {
  Tensor x = ops::randn({2, 3});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_OPS(ops::relu(x), ElementsAre(Op("aten::sub"))); });
  EXPECT_THAT(msg, HasSubstr("- [0] aten::sub.*"));
}

TEST(OpMatcherTest, WithShapes) {
  Tensor a = ops::randn({2, 3}), b = ops::randn({3, 4});
  EXPECT_OPS(ops::mm(a, b), ElementsAre(Op("aten::mm").WithShapes({{2, 3}, {3, 4}})));
  EXPECT_OPS(ops::mm(a, b), Contains(Op("mm").WithShapes({{2, 3}, {3, 4}})));
  // In an ElementsAre diff, actual ops show their tensor types.
  const std::string msg = nonfatal_failure_of([&] {
    EXPECT_OPS(ops::mm(a, b), ElementsAre(Op("aten::mm").WithShapes({{3, 3}, {3, 4}})));
  });
  EXPECT_THAT(msg, HasSubstr("- [0] aten::mm.*([3, 3], [3, 4])\n"));
  EXPECT_THAT(msg, HasSubstr("+ [0] aten::mm(f32[2, 3], f32[3, 4])"));
  // Elsewhere the description and the explanation say what differs.
  const std::string contains = nonfatal_failure_of([&] {
    EXPECT_OPS(ops::mm(a, b), Contains(Op("aten::mm").WithShapes({{3, 3}, {3, 4}})));
  });
  EXPECT_THAT(contains, HasSubstr("Expected: contains at least one element that is op aten::mm (any overload) with "
                                  "tensor shapes [[3, 3], [3, 4]]"));
  EXPECT_THAT(contains, HasSubstr("[0] aten::mm(f32[2, 3], f32[3, 4])"));
}

TEST(OpMatcherTest, WithDtypes) {
  Tensor a = ops::randn({2}, {.dtype = DType::kFloat64});
  EXPECT_OPS(ops::relu(a), ElementsAre(Op("relu").WithDtypes({DType::kFloat64})));
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::relu(a), ElementsAre(Op("relu").WithDtypes({DType::kFloat32}))),
                          "- [0] aten::relu.*(f32)");
}

TEST(OpMatcherTest, ExplainsMismatchOnASingleOp) {
  RecordedOp op{"aten::mm", {{2, 3}, {3, 4}}, {DType::kFloat32, DType::kFloat32}};
  ::testing::Matcher<const RecordedOp&> m = Op("aten::mm").WithShapes({{2, 3}});
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(m.MatchAndExplain(op, &listener));
  EXPECT_EQ(listener.str(), "tensor shapes are [[2, 3], [3, 4]]");
  EXPECT_EQ(::testing::DescribeMatcher<const RecordedOp&>(Op("aten::mm"), /*negation=*/true),
            "isn't op aten::mm (any overload)");
  EXPECT_THAT(op, Op("mm"));
  EXPECT_THAT(op, Not(Op("aten::mm.out")));
}

// ---- OpsInOrder ----

TEST(OpsInOrderTest, SubsequencePassesAndFails) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::sin(ops::relu(x)), x), OpsInOrder("aten::relu", "aten::mm"));
  EXPECT_OPS(ops::mm(ops::sin(ops::relu(x)), x), OpsInOrder("relu", Op("mm").WithShapes({{4, 4}, {4, 4}})));
  const std::string msg = nonfatal_failure_of(
      [&] { EXPECT_OPS(ops::mm(ops::sin(ops::relu(x)), x), OpsInOrder("aten::mm", "aten::relu")); });
  EXPECT_THAT(msg, HasSubstr("(aten level) don't contain the expected ops in order:\n"
                             "expected op 'aten::relu' (#2 of 2) not found after 'aten::mm' at index 2"));
  EXPECT_THAT(msg, HasSubstr("* [2] aten::mm  (#1)"));
}

TEST(OpsInOrderTest, ShapedPatternFailureListsTypedOps) {
  Tensor x = ops::randn({4, 4});
  EXPECT_NONFATAL_FAILURE(
      EXPECT_OPS(ops::mm(ops::relu(x), x), OpsInOrder("relu", Op("mm").WithShapes({{4, 1}, {4, 4}}))),
      "expected op aten::mm.*([4, 1], [4, 4]) (#2 of 2) not found after aten::relu(f32[4, 4]) at index 0");
  const std::string msg = nonfatal_failure_of(
      [&] { EXPECT_OPS(ops::mm(ops::relu(x), x), OpsInOrder(Op("mm").WithDtypes({DType::kFloat16}))); });
  EXPECT_THAT(msg, HasSubstr("not found in the 2 recorded ops"));
  EXPECT_THAT(msg, HasSubstr("recorded ops (2):\n  [0] aten::relu(f32[4, 4])\n  [1] aten::mm(f32[4, 4], f32[4, 4])"));
}

TEST(OpsInOrderTest, WorksWithExpectThat) {
  Tensor x = ops::randn({2});
  std::vector<RecordedOp> ops = record_ops([&] { ops::relu(ops::sin(x)); });
  EXPECT_THAT(ops, OpsInOrder("sin", "relu"));
  EXPECT_THAT(ops, Not(OpsInOrder("relu", "sin")));
  EXPECT_THAT(ops, OpsInOrder(std::vector<std::string>{"aten::sin"}));
}

// ---- NoOp ----

TEST(NoOpTest, PassesAndFails) {
  Tensor x = ops::randn({2}, {.dtype = DType::kFloat32});
  EXPECT_OPS(ops::to(x, DType::kFloat32), NoOp("aten::_to_copy"));
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::to(x, DType::kFloat64), NoOp("aten::_to_copy")),
                          "(aten level) include an excluded op:\nexcluded op 'aten::_to_copy' was called: "
                          "aten::_to_copy at index 0");
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::relu(x), NoOp(Op("relu").WithShapes({{2}}))),
                          "excluded op aten::relu.*([2]) was called: aten::relu(f32[2]) at index 0");
  EXPECT_OPS(ops::relu(x), NoOp(Op("relu").WithShapes({{3}})));
  // A misspelt name fails: it could never be called, so NoOp would pass whatever ran.
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::to(x, DType::kFloat64), NoOp("aten::_to_cpy")),
                          "'aten::_to_cpy' names no registered op; did you mean 'aten::_to_copy'?");
  EXPECT_NONFATAL_FAILURE(EXPECT_OPS(ops::relu(x), NoOp(Op("aten::rleu").WithShapes({{3}}))),
                          "'aten::rleu' names no registered op");
}

// ---- the function level ----

TEST(ExpectFunctionOpsTest, SeesLinearWhereAtenSeesItsDecomposition) {
  Tensor x = ops::randn({2, 3}), w = ops::randn({4, 3}), b = ops::randn({4});
  EXPECT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre("aten::linear"));
  ASSERT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre(Op("linear").WithShapes({{2, 3}, {4, 3}, {4}})));
  EXPECT_OPS(ops::linear(x, w, b), AllOf(NoOp("aten::linear"), Contains(Op("aten::addmm"))));
  EXPECT_NONFATAL_FAILURE(EXPECT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre("aten::addmm")),
                          "ops recorded by `ops::linear(x, w, b)` (function level) differ");
  EXPECT_FATAL_FAILURE(
      {
        Tensor x2 = ops::randn({2, 3});
        Tensor w2 = ops::randn({4, 3});
        ASSERT_FUNCTION_OPS(ops::linear(x2, w2), IsEmpty());
      },
      "+ [0] aten::linear");
}

// ---- the text helpers ----

TEST(MacroArgsTest, SplitsAtTopLevelCommasOnly) {
  EXPECT_THAT(internal::split_macro_args("{ int a, b; f(a, b); }, ElementsAre(\"x, y\", 'c'), [](int p, int q) {}"),
              ElementsAre("{ int a, b; f(a, b); }", "ElementsAre(\"x, y\", 'c')", "[](int p, int q) {}"));
  EXPECT_THAT(internal::split_macro_args("R\"(a, \"b)\", 1'000, c"), ElementsAre("R\"(a, \"b)\"", "1'000", "c"));
  EXPECT_EQ(internal::abbreviate("a\n   b", 100), "a b");
  EXPECT_EQ(internal::abbreviate(std::string(200, 'x'), 20).size(), 20u);
}

}  // namespace
}  // namespace opspec
