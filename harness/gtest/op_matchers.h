// op_matchers.h: gMock matchers over recorded ops (harness/expect/op_log.h):
// Op("aten::add") for one RecordedOp, OpsInOrder(...) and NoOp(...) for a
// whole std::vector<RecordedOp>. They work with EXPECT_OPS (ops_assertions.h)
// and with plain EXPECT_THAT(record_ops(...), ...).
#pragma once

#include <initializer_list>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gmock/gmock.h>

#include "harness/expect/op_log.h"

namespace opspec {

// OpPattern: what one expected op must be: a name pattern (see Note [Op name
// patterns] in op_log.h: "aten::add" matches any overload, "add" means
// "aten::add") and, optionally, the shapes and dtypes of its tensor
// arguments in argument order (all of them: the counts must agree too).
struct OpPattern {
  std::string name;                            // normalised: always "ns::op[.overload]"
  std::optional<std::vector<SizeVec>> shapes;  // WithShapes
  std::optional<std::vector<DType>> dtypes;    // WithDtypes

  // any_overload: the name has no overload, so it matches the overload packet.
  bool any_overload() const;
  // constrains_tensors: shapes or dtypes were given.
  bool constrains_tensors() const { return shapes.has_value() || dtypes.has_value(); }
  // matches: op's name matches, and its tensor shapes/dtypes when given.
  bool matches(const RecordedOp& op) const;
  // str: compact form used in diffs, in RecordedOp::str()'s layout:
  // "aten::add.*" (any overload), "aten::mm", "aten::add.*([2, 3], [3])",
  // "aten::mm(f32[2, 3], f32[3, 4])", "aten::relu(f16)".
  std::string str() const;
  // describe: gMock description: "is op aten::add (any overload) with tensor
  // shapes [[2, 3], [3]] and dtypes [f32, f32]".
  std::string describe() const;
  // mismatch: why op does not match ("" when it does): "name is aten::mul.Tensor",
  // "tensor shapes are [[2, 3], [3]]", ...
  std::string mismatch(const RecordedOp& op) const;
};

// make_op_pattern: the pattern for a name as written by a user ("add",
// "aten::add.Tensor", "myns::op").
OpPattern make_op_pattern(std::string_view name);

// OpMatcher: the gMock matcher Op() returns; matches one RecordedOp. Builder
// methods return a refined copy. It converts to Matcher<const RecordedOp&>
// (and Matcher<RecordedOp>), so it nests in ElementsAre, Contains, Each, ...
//   EXPECT_OPS(ops::add(x, y), Contains(Op("aten::add").WithShapes({{2, 3}, {2, 3}})));
class OpMatcher {
 public:
  explicit OpMatcher(OpPattern pattern);

  // WithShapes: the tensor arguments' sizes, in argument order ({} for a 0-dim tensor).
  OpMatcher WithShapes(std::vector<std::vector<int64_t>> shapes) const;
  // WithDtypes: the tensor arguments' dtypes, in argument order.
  OpMatcher WithDtypes(std::vector<DType> dtypes) const;

  const OpPattern& pattern() const { return pattern_; }

  operator ::testing::Matcher<const RecordedOp&>() const;  // NOLINT: implicit on purpose (gMock casts)
  operator ::testing::Matcher<RecordedOp>() const;         // NOLINT

 private:
  OpPattern pattern_;
};

// Op: a matcher for one recorded op by name pattern; see OpMatcher.
//   Op("aten::add")            any overload of aten::add
//   Op("aten::add.Tensor")     exactly that overload
//   Op("mm").WithShapes({{2, 3}, {3, 4}}).WithDtypes({DType::kFloat32, DType::kFloat32})
OpMatcher Op(std::string_view name);

namespace internal {

// OpElement: one element of OpsInOrder/NoOp: a name pattern (string) or an OpMatcher.
OpPattern to_op_pattern(std::string_view name);
OpPattern to_op_pattern(const OpMatcher& matcher);

// lookup_described_op: the OpPattern whose describe() is description, if an
// Op() with that description was created in this process. EXPECT_OPS uses it
// to recognise Op elements inside an ElementsAre from the matcher's description.
std::optional<OpPattern> lookup_described_op(const std::string& description);

// OpsInOrderImpl / NoOpImpl: the matcher implementations over a std::vector<RecordedOp>.
class OpsInOrderImpl : public ::testing::MatcherInterface<const std::vector<RecordedOp>&> {
 public:
  explicit OpsInOrderImpl(std::vector<OpPattern> patterns) : patterns_(std::move(patterns)) {}
  bool MatchAndExplain(const std::vector<RecordedOp>& ops, ::testing::MatchResultListener* listener) const override;
  void DescribeTo(std::ostream* os) const override;
  void DescribeNegationTo(std::ostream* os) const override;
  const std::vector<OpPattern>& patterns() const { return patterns_; }

 private:
  std::vector<OpPattern> patterns_;
};

class NoOpImpl : public ::testing::MatcherInterface<const std::vector<RecordedOp>&> {
 public:
  explicit NoOpImpl(std::vector<OpPattern> patterns) : patterns_(std::move(patterns)) {}
  bool MatchAndExplain(const std::vector<RecordedOp>& ops, ::testing::MatchResultListener* listener) const override;
  void DescribeTo(std::ostream* os) const override;
  void DescribeNegationTo(std::ostream* os) const override;
  const std::vector<OpPattern>& patterns() const { return patterns_; }

 private:
  std::vector<OpPattern> patterns_;
};

// first_in_order_mismatch: matches patterns greedily as an ordered
// subsequence of ops; returns the index of the first pattern not found (or
// patterns.size()) and fills matched_at with the op index of each pattern found.
size_t first_in_order_mismatch(const std::vector<OpPattern>& patterns, const std::vector<RecordedOp>& ops,
                               std::vector<size_t>* matched_at);

template <class T>
concept OpElementLike = std::is_convertible_v<const T&, std::string_view> || std::is_same_v<T, OpMatcher>;

}  // namespace internal

// OpsSequenceMatcher: what OpsInOrder returns; a Matcher<const std::vector<RecordedOp>&>.
using OpsSequenceMatcher = ::testing::Matcher<const std::vector<RecordedOp>&>;

// OpsInOrder: the elements (name patterns or Op matchers) occur in the
// recorded ops as an ordered subsequence (other ops may come between).
// Strings are patterns here (op_name_matches), unlike gMock's ElementsAre
// where a string compares the full name exactly.
//   EXPECT_OPS(f(x), OpsInOrder("aten::relu", Op("aten::mm").WithShapes({{4, 4}, {4, 4}})));
template <internal::OpElementLike... Ts>
OpsSequenceMatcher OpsInOrder(const Ts&... elements) {
  return ::testing::MakeMatcher(new internal::OpsInOrderImpl({internal::to_op_pattern(elements)...}));
}
// OpsInOrder (list): the same from a vector of name patterns (e.g. read from a file).
OpsSequenceMatcher OpsInOrder(const std::vector<std::string>& names);

// NoOp: no recorded op matches any of the patterns. A pattern that names no
// registered op fails it (the op could never be called), so misspell nothing
// under Not(NoOp(...)), where that failure would read as a pass.
//   EXPECT_OPS(ops::to(x, DType::kFloat32), NoOp("aten::_to_copy"));
template <internal::OpElementLike... Ts>
OpsSequenceMatcher NoOp(const Ts&... elements) {
  return ::testing::MakeMatcher(new internal::NoOpImpl({internal::to_op_pattern(elements)...}));
}

}  // namespace opspec
