// ops_assertions.h: EXPECT_OPS / ASSERT_OPS / EXPECT_FUNCTION_OPS /
// ASSERT_FUNCTION_OPS: run a statement under an OpRecorder and match the
// recorded ops against a gMock matcher, with compact failure messages.
// See Note [EXPECT_OPS failure messages].
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/expect/op_log.h"
#include "harness/gtest/macro_args.h"
#include "harness/gtest/op_matchers.h"

// Note [EXPECT_OPS failure messages]
// A failure begins with "ops recorded by `STATEMENT` (aten level)" (or
// "function level") and then, by matcher:
// - ElementsAre(...) whose elements are all names or Op(...) matchers (also
//   ElementsAreArray, IsEmpty): "differ from the expected sequence: expected
//   3 ops, got 4" and a sequence_diff of the expected patterns against the
//   actual ops ("- [i]" missing, "+ [j]" unexpected; see Note [Sequence diff
//   format]); actual ops show their tensor types when an Op has WithShapes/WithDtypes.
//     ops recorded by `{ auto h = ops::relu(x); ops::mm(h, ops::t(x)); }` (aten level) differ from the
//     expected sequence: expected 3 ops, got 3
//       [0|0] aten::relu
//     - [1]   aten::addmm.*
//     + [1]   aten::t
//       [2|2] aten::mm
//   ("aten::addmm.*" is Op("aten::addmm"): any overload.)
// - OpsInOrder(...): "don't contain the expected ops in order:" and the
//   first op not found, with the recorded ops numbered and the matched ones
//   marked '*' (check_ops_contain's wording when all elements are names):
//     ops recorded by `ops::mm(ops::relu(x), x)` (aten level) don't contain the expected ops in order:
//     expected op 'aten::relu' (#2 of 2) not found after 'aten::mm' at index 1 (matching 'aten::mm')
//     (it was called earlier, at index 0)
//     recorded ops (2), '*' marks the matched ones:
//       [0] aten::relu
//     * [1] aten::mm  (#1)
// - NoOp(...): "include an excluded op" and where each excluded op was called.
// - any other matcher: "don't match MATCHER_TEXT", its description
//   ("Expected: ..."), gMock's explanation if any, and the recorded ops, one
//   per line, numbered, with tensor types (elided past 30 with a count):
//     ops recorded by `ops::mm(ops::relu(x), x)` (aten level) don't match Contains(Op("mm").WithShapes({{4, 1}}))
//     Expected: contains at least one element that is op aten::mm (any overload) with tensor shapes [[4, 1]]
//       Actual: 2 ops
//       [0] aten::relu(f32[4, 4])
//       [1] aten::mm(f32[4, 4], f32[4, 4])
// - a statement that throws: "the statement threw: WHAT" and the ops recorded until then.
// Strings inside gMock's ElementsAre/Contains compare the FULL op name
// (RecordedOp == string): "aten::add" does not match "aten::add.Tensor";
// use Op("aten::add") or OpsInOrder("aten::add") for an overload-free pattern.

// EXPECT_OPS(statement, matcher): runs statement (any statement or block;
// commas are fine, see Note [Statement arguments]) under an OpRecorder at
// the aten level (the Python key, like TorchDispatchMode) and matches the
// recorded std::vector<RecordedOp> against matcher (any gMock matcher over
// it, or opspec's Op/OpsInOrder/NoOp). Non-fatal; stream more text with <<.
//   EXPECT_OPS(ops::mm(ops::relu(x), y), ElementsAre("aten::relu", "aten::mm"));
//   EXPECT_OPS({ auto h = ops::relu(x); ops::mm(h, h); }, OpsInOrder("relu", Op("mm").WithShapes({{4, 4}, {4, 4}})));
//   EXPECT_OPS(ops::to(x, DType::kFloat32), NoOp("aten::_to_copy"));
//   EXPECT_OPS(f(x), Contains(Op("aten::add")));   EXPECT_OPS(f(x), SizeIs(3));
#define EXPECT_OPS(...) OPSPEC_GTEST_OPS_(::opspec::OpLevel::kAten, GTEST_NONFATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

// ASSERT_OPS(statement, matcher): EXPECT_OPS, fatal (returns from the test on failure).
#define ASSERT_OPS(...) OPSPEC_GTEST_OPS_(::opspec::OpLevel::kAten, GTEST_FATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

// EXPECT_FUNCTION_OPS(statement, matcher): EXPECT_OPS at the function level
// (the FunctionMode key, like TorchFunctionMode): composites appear as called.
//   EXPECT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre("aten::linear"));
#define EXPECT_FUNCTION_OPS(...) \
  OPSPEC_GTEST_OPS_(::opspec::OpLevel::kFunction, GTEST_NONFATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

// ASSERT_FUNCTION_OPS(statement, matcher): EXPECT_FUNCTION_OPS, fatal.
#define ASSERT_FUNCTION_OPS(...) \
  OPSPEC_GTEST_OPS_(::opspec::OpLevel::kFunction, GTEST_FATAL_FAILURE_, #__VA_ARGS__, __VA_ARGS__)

#define OPSPEC_GTEST_OPS_(level, on_failure, text, ...)                                                        \
  GTEST_ASSERT_(::opspec::internal::match_recorded_ops(                                                        \
                    text, level, [&]() { OPSPEC_GTEST_INIT_(__VA_ARGS__); }, OPSPEC_GTEST_LAST_(__VA_ARGS__)), \
                on_failure)

namespace opspec {
namespace internal {

// OpsMatcher: what EXPECT_OPS matches against.
using OpsMatcher = ::testing::Matcher<const std::vector<RecordedOp>&>;

// match_recorded_ops_impl: the body of EXPECT_OPS; text is the stringized
// macro arguments (statement, matcher). See Note [EXPECT_OPS failure messages].
::testing::AssertionResult match_recorded_ops_impl(const char* text, OpLevel level,
                                                   const std::function<void()>& statement, const OpsMatcher& matcher);

// match_recorded_ops: casts any gMock matcher (polymorphic ones like
// ElementsAre included) to an OpsMatcher and runs match_recorded_ops_impl.
template <class M>
::testing::AssertionResult match_recorded_ops(const char* text, OpLevel level, const std::function<void()>& statement,
                                              const M& matcher) {
  return match_recorded_ops_impl(text, level, statement,
                                 ::testing::MatcherCast<const std::vector<RecordedOp>&>(matcher));
}

// explain_ops_mismatch: the failure text (after the header) for ops that
// do not match matcher. Exposed for tests and for reuse (spec runner, tools).
std::string explain_ops_mismatch(const std::vector<RecordedOp>& ops, const OpsMatcher& matcher,
                                 const std::string& matcher_text);

// list_ops: the ops, one per line ("  [ 3] aten::add.Tensor(f32[2], f32[2])"),
// at most about kListOpsLimit lines (a head and a tail with "... N more ops ...").
inline constexpr size_t kListOpsLimit = 30;
std::string list_ops(const std::vector<RecordedOp>& ops, bool with_types = true);

}  // namespace internal
}  // namespace opspec
