// Tests of the scatter, gather and indexing ops' CPU and Meta kernels
// (kernels/cpu/scatter.cc, kernels/common/scatter_meta.cc) against
// hand-computed values (checked with PyTorch), and their errors in PyTorch's words.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "runtime/dispatch/schema.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace scatter_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor ints(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kInt64); }
Tensor floats(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kFloat32); }
Tensor bools(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kBool); }
Tensor meta(IntArrayRef shape, DType dtype = DType::kFloat32) {
  return ops::empty(shape, {.dtype = dtype, .device = kMeta});
}

TEST(IndexSchemaTest, TensorOptionalListParsesAndPrints) {
  const FunctionSchema s = FunctionSchema::parse("index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  const ArgType& t = s.arguments()[1].type;
  EXPECT_TRUE(t.is_list);
  EXPECT_TRUE(t.element_optional);
  EXPECT_FALSE(t.is_optional);
  EXPECT_EQ(s.str(), "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor");
  // A list with a None (an undefined tensor) fits it and prints the None.
  const Value v(std::vector<Tensor>{Tensor(), ops::zeros({2}, {.dtype = DType::kInt64})});
  EXPECT_TRUE(FunctionSchema::value_matches(t, v));
  EXPECT_EQ(v.repr(), "[None, i64[2]]");
}

TEST(ScatterGatherTest, GatherPicksAlongDim) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(values(ops::gather(x, 1, ints({0, 0, 1, 0}, {2, 2}))), ElementsAre(1, 1, 4, 3));
  // index may be longer than self along dim, and shorter elsewhere.
  EXPECT_THAT(values(ops::gather(x, 1, ints({1, 0, 1}, {1, 3}))), ElementsAre(2, 1, 2));
  // A transposed self and a transposed index.
  const Tensor xt = ops::t(x);  // [[1, 3], [2, 4]]
  EXPECT_THAT(values(ops::gather(xt, 0, ops::t(ints({1, 0, 0, 1}, {2, 2})))), ElementsAre(2, 3, 1, 4));
  EXPECT_THAT(ops::gather(x, 0, ints({}, {0, 2})).sizes(), ElementsAre(0, 2));
  EXPECT_THAT(ops::gather(meta({2, 3}), -1, meta({2, 5}, DType::kInt64)).sizes(), ElementsAre(2, 5));
  EXPECT_EQ(ops::gather(ops::tensor({1, 2, 3}, {3}, DType::kInt32), 0, ints({2}, {1})).to_vector<double>()[0], 3);
  // int32 indices, as PyTorch 2.x (1.13 wanted int64), strided too.
  const Tensor i32 = ops::t(ops::tensor({1, 0, 0, 1}, {2, 2}, DType::kInt32));
  EXPECT_THAT(values(ops::gather(xt, 0, i32)), ElementsAre(2, 3, 1, 4));
}

TEST(ScatterGatherTest, GatherErrors) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT([&] { ops::gather(x, 1, ints({0, 2, 1, 0}, {2, 2})); },
              ThrowsMessage<Error>(HasSubstr("aten::gather: index 2 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::gather(x, 1, ints({-1, 0, 1, 0}, {2, 2})); },
              ThrowsMessage<Error>(HasSubstr("index -1 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::gather(x, 1, ops::tensor({0, 0}, {2, 1}, DType::kBool)); },
              ThrowsMessage<Error>(HasSubstr("gather(): Expected dtype int32/int64 for index")));
  EXPECT_THAT([&] { ops::gather(x, 1, ops::tensor({0, 2}, {2, 1}, DType::kInt32)); },
              ThrowsMessage<Error>(HasSubstr("index 2 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::gather(x, 1, ints({0, 0, 0, 0}, {4, 1})); },
              ThrowsMessage<Error>(HasSubstr("Size does not match at dimension 0 expected index [4, 1] to be no "
                                             "larger than self [2, 2] apart from dimension 1")));
  EXPECT_THAT([&] { ops::gather(x, 1, ints({0, 0}, {2})); },
              ThrowsMessage<Error>(HasSubstr("Index tensor must have the same number of dimensions as input tensor")));
  EXPECT_THAT([&] { ops::gather(x, 2, ints({0}, {1, 1})); },
              ThrowsMessage<Error>(
                  HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

TEST(ScatterGatherTest, AnEmptyIndexSkipsGathersShapeChecks) {
  // As PyTorch's gather meta (and scatter's): an empty index of any rank and
  // sizes gives an empty result. scatter_add's backward gathers with its
  // index, so an empty index larger than self failed there (the gradcheck
  // sweep found it).
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(ops::gather(x, 1, ops::zeros({3, 0, 2}, {.dtype = DType::kInt64})).sizes(), ElementsAre(3, 0, 2));
  const Tensor self = ops::randn({2, 4, 2}).requires_grad_(), src = ops::zeros({3, 0, 2}).requires_grad_();
  ops::sum(ops::scatter_add(self, 2, ops::zeros({3, 0, 2}, {.dtype = DType::kInt64}), src)).backward();
  EXPECT_THAT(src.grad().sizes(), ElementsAre(3, 0, 2));
  EXPECT_TRUE(ops::equal(self.grad(), ops::ones({2, 4, 2})));
}

TEST(ScatterGatherTest, ScatterSrcValueAndAdd) {
  const Tensor src = ops::reshape(ops::arange(1.0, 11.0), {2, 5});
  const Tensor idx = ints({0, 1, 2, 0, 0, 2, 0, 0, 1, 2}, {2, 5});
  EXPECT_THAT(values(ops::scatter(ops::zeros({3, 5}), 0, idx, src)),
              ElementsAre(1, 7, 8, 4, 5, 0, 2, 0, 9, 0, 6, 0, 3, 0, 10));
  EXPECT_THAT(values(ops::scatter_add(ops::ones({3, 5}), 0, idx, src)),
              ElementsAre(2, 8, 9, 5, 6, 1, 3, 1, 10, 1, 7, 1, 4, 1, 11));
  EXPECT_THAT(values(ops::scatter(ops::zeros({2, 5}), 1, ints({1, 3}, {2, 1}), Scalar(2.5))),
              ElementsAre(0, 2.5, 0, 0, 0, 0, 0, 0, 2.5, 0));
  // Duplicates: the last write wins (index order), as PyTorch's CPU kernel.
  EXPECT_THAT(values(ops::scatter(ops::zeros({2}), 0, ints({1, 1, 1}, {3}), floats({5, 6, 7}, {3}))),
              ElementsAre(0, 7));
  // In place, on a transposed self: the values land where the view says.
  Tensor base = ops::zeros({2, 3});
  Tensor view = ops::t(base);  // [3, 2]
  ops::scatter_add_(view, 0, ints({2, 0}, {1, 2}), floats({5, 6}, {1, 2}));
  EXPECT_THAT(values(base), ElementsAre(0, 0, 5, 6, 0, 0));
  Tensor y = ops::zeros({3});
  ops::scatter_(y, 0, ints({2}, {1}), Scalar(int64_t{4}));
  EXPECT_THAT(values(y), ElementsAre(0, 0, 4));
  // Integer self; an empty index changes nothing.
  EXPECT_THAT(values(ops::scatter_add(ops::zeros({3}, {.dtype = DType::kInt64}), 0, ints({0, 0}, {2}),
                                      ints({2, 3}, {2}))),
              ElementsAre(5, 0, 0));
  EXPECT_THAT(values(ops::scatter(floats({1, 2}, {2}), 0, ints({}, {0}), floats({}, {0}))), ElementsAre(1, 2));
  // int32 indices give int64's results, out of place and in place.
  const Tensor idx32 = ops::to(idx, DType::kInt32);
  EXPECT_THAT(values(ops::scatter_add(ops::ones({3, 5}), 0, idx32, src)),
              ElementsAre(2, 8, 9, 5, 6, 1, 3, 1, 10, 1, 7, 1, 4, 1, 11));
  Tensor z = ops::zeros({3, 5});
  ops::scatter_reduce_(z, 0, idx32, src, "amax", false);
  EXPECT_THAT(values(z), ElementsAre(1, 7, 8, 4, 5, 0, 2, 0, 9, 0, 6, 0, 3, 0, 10));
}

TEST(ScatterGatherTest, ScatterReduceEveryReduction) {
  const Tensor self = floats({1, 2, 3, 4}, {4});
  const Tensor src = floats({5, 6, 7, 8, 9, 10}, {6});
  const Tensor ix = ints({0, 1, 0, 1, 2, 1}, {6});
  auto run = [&](std::string_view r, bool inc) { return values(ops::scatter_reduce(self, 0, ix, src, r, inc)); };
  EXPECT_THAT(run("sum", true), ElementsAre(13, 26, 12, 4));
  EXPECT_THAT(run("sum", false), ElementsAre(12, 24, 9, 4));
  EXPECT_THAT(run("prod", true), ElementsAre(35, 960, 27, 4));
  EXPECT_THAT(run("prod", false), ElementsAre(35, 480, 9, 4));
  EXPECT_THAT(run("mean", true), ElementsAre(static_cast<double>(13.0f / 3.0f), 6.5, 6, 4));
  EXPECT_THAT(run("mean", false), ElementsAre(6, 8, 9, 4));
  EXPECT_THAT(run("amax", true), ElementsAre(7, 10, 9, 4));
  EXPECT_THAT(run("amax", false), ElementsAre(7, 10, 9, 4));
  EXPECT_THAT(run("amin", true), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(run("amin", false), ElementsAre(5, 6, 9, 4));
  // Integer mean floor-divides (PyTorch's div_(count, "floor")).
  EXPECT_THAT(values(ops::scatter_reduce(ints({1, 2, 3, 4}, {4}), 0, ix, ints({5, -6, 7, 8, 9, 10}, {6}), "mean")),
              ElementsAre(4, 3, 6, 4));
  EXPECT_THAT(values(ops::scatter_reduce(ints({1, -2, 3, 4}, {4}), 0, ints({1, 1}, {2}), ints({-6, 0}, {2}), "mean")),
              ElementsAre(1, -3, 3, 4));
  // NaN wins amax.
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(std::isnan(values(ops::scatter_reduce(floats({1}, {1}), 0, ints({0, 0}, {2}), floats({nan, 3}, {2}),
                                                    "amax"))[0]));
  Tensor inplace = floats({1, 2, 3, 4}, {4});
  ops::scatter_reduce_(inplace, 0, ix, src, "prod", true);
  EXPECT_THAT(values(inplace), ElementsAre(35, 960, 27, 4));
}

TEST(ScatterGatherTest, ScatterErrors) {
  const Tensor x = floats({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT([&] { ops::scatter(x, 1, ints({0, 2, 1, 0}, {2, 2}), x); },
              ThrowsMessage<Error>(HasSubstr("aten::scatter: index 2 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::scatter(x, 1, ints({0, 1, 0, 1, 0, 1}, {2, 3}), ops::ones({2, 2})); },
              ThrowsMessage<Error>(HasSubstr("Expected index [2, 3] to be no larger than self [2, 2] apart from "
                                             "dimension 1 and to be no larger size than src [2, 2]")));
  EXPECT_THAT([&] { ops::scatter(x, 1, ints({0, 1, 1, 0}, {2, 2}), ops::ones({2, 2}, {.dtype = DType::kFloat64})); },
              ThrowsMessage<Error>(HasSubstr("scatter(): Expected self.dtype to be equal to src.dtype")));
  EXPECT_THAT([&] { ops::scatter_add(x, 1, ops::tensor({0, 1, 1, 0}, {2, 2}, DType::kFloat32), x); },
              ThrowsMessage<Error>(HasSubstr("scatter_add(): Expected dtype int32/int64 for index")));
  EXPECT_THAT([&] { ops::scatter_reduce(x, 1, ints({0, 1, 1, 0}, {2, 2}), x, "max"); },
              ThrowsMessage<Error>(HasSubstr("reduce argument must be either sum, prod, mean, amax or amin, got max")));
  EXPECT_THAT([&] { ops::scatter_add(x, 0, ints({0, 1}, {2}), ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("Index tensor must have the same number of dimensions as self tensor")));
  // Meta checks the same and returns self's shape.
  EXPECT_THAT(ops::scatter_reduce(meta({3, 4}), 0, meta({2, 4}, DType::kInt64), meta({2, 4}), "mean").sizes(),
              ElementsAre(3, 4));
  EXPECT_THAT([&] { ops::scatter(meta({3, 4}), 0, meta({2, 5}, DType::kInt64), meta({2, 4})); },
              ThrowsMessage<Error>(HasSubstr("to be no larger than self [3, 4]")));
}

TEST(MaskedFillTensorTest, FillsWithAZeroDimValue) {
  const Tensor mask = bools({1, 0, 0, 1}, {2, 2});
  EXPECT_THAT(values(ops::masked_fill(ops::zeros({2, 2}), mask, ops::scalar_tensor(3.0))), ElementsAre(3, 0, 0, 3));
  // self broadcasts with mask in the out-of-place op.
  EXPECT_THAT(values(ops::masked_fill(floats({1, 2}, {2}), mask, ops::scalar_tensor(-1.0))),
              ElementsAre(-1, 2, 1, -1));
  Tensor y = ops::zeros({2, 2}, {.dtype = DType::kInt64});
  ops::masked_fill_(y, mask, ops::scalar_tensor(int64_t{7}, {.dtype = DType::kInt64}));
  EXPECT_THAT(values(y), ElementsAre(7, 0, 0, 7));
  EXPECT_THAT([&] { ops::masked_fill(ops::zeros({2, 2}), mask, floats({3}, {1})); },
              ThrowsMessage<Error>(HasSubstr("masked_fill_ only supports a 0-dimensional value tensor, but got tensor "
                                             "with 1 dimension(s).")));
  EXPECT_THAT([&] { ops::masked_fill(ops::zeros({2, 2}), floats({1, 0, 0, 1}, {2, 2}), ops::scalar_tensor(1.0)); },
              ThrowsMessage<Error>(HasSubstr("only supports boolean masks")));
  EXPECT_THAT(ops::masked_fill(meta({2, 3}), meta({3}, DType::kBool), meta({})).sizes(), ElementsAre(2, 3));
}

TEST(MaskedSelectTest, SelectsInRowMajorOrder) {
  const Tensor x = ops::reshape(ops::arange(12.0), {3, 4});
  EXPECT_THAT(values(ops::masked_select(x, ops::gt(x, 6.0))), ElementsAre(7, 8, 9, 10, 11));
  // The mask broadcasts over self's rows.
  EXPECT_THAT(values(ops::masked_select(x, bools({1, 0, 0, 1}, {4}))), ElementsAre(0, 3, 4, 7, 8, 11));
  EXPECT_THAT([&] { ops::masked_select(x, ints({1, 0, 0, 1}, {4})); },
              ThrowsMessage<Error>(HasSubstr("masked_select: expected BoolTensor for mask")));
  EXPECT_THROW(ops::masked_select(meta({3}), meta({3}, DType::kBool)), DataDependentOutputError);
}

TEST(SelectSliceScatterTest, ReplacesTheSlice) {
  EXPECT_THAT(values(ops::select_scatter(ops::zeros({2, 3}), ops::ones({3}), 0, 1)), ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(values(ops::select_scatter(ops::zeros({2, 3}), floats({4, 5}, {2}), -1, -1)),
              ElementsAre(0, 0, 4, 0, 0, 5));
  EXPECT_THAT(values(ops::slice_scatter(ops::zeros({4, 2}), ops::ones({2, 2}), 0, 1, std::nullopt, 2)),
              ElementsAre(0, 0, 1, 1, 0, 0, 1, 1));
  EXPECT_THAT([&] { ops::select_scatter(ops::zeros({2, 3}), ops::ones({2}), 0, 1); },
              ThrowsMessage<Error>(HasSubstr("expected src to have a size equal to the slice of self. src size = [2], "
                                             "slice size = [3]")));
  EXPECT_THAT([&] { ops::select_scatter(ops::zeros({2, 3}), ops::ones({3}), 0, 5); },
              ThrowsMessage<Error>(
                  HasSubstr("select(): index 5 out of range for tensor of size [2, 3] at dimension 0")));
  EXPECT_THAT([&] { ops::slice_scatter(ops::zeros({2, 3}), ops::ones({2, 2}), 1, 0, 3); },
              ThrowsMessage<Error>(HasSubstr("slice size = [2, 3]")));
  EXPECT_THAT(ops::slice_scatter(meta({4, 6}), meta({4, 2}), 1, 2, 4).sizes(), ElementsAre(4, 6));
}

TEST(DiagonalTest, IsAViewWithSummedStrides) {
  const Tensor x = ops::reshape(ops::arange(12.0), {3, 4});
  EXPECT_THAT(values(ops::diagonal(x, 1)), ElementsAre(1, 6, 11));
  EXPECT_THAT(values(ops::diagonal(x, -1)), ElementsAre(4, 9));
  EXPECT_THAT(values(ops::diagonal(x, 5)), ElementsAre());
  const Tensor y = ops::reshape(ops::arange(24.0), {2, 3, 4});
  const Tensor d = ops::diagonal(y, 0, 0, 2);
  EXPECT_THAT(d.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(d.strides(), ElementsAre(4, 13));
  EXPECT_THAT(values(d), ElementsAre(0, 13, 4, 17, 8, 21));
  // A view: writes through it reach the base.
  Tensor z = ops::zeros({2, 2});
  Tensor dz = ops::diagonal(z);
  ops::fill_(dz, 5.0);
  EXPECT_THAT(values(z), ElementsAre(5, 0, 0, 5));
  EXPECT_THAT([&] { ops::diagonal(x, 0, 1, 1); },
              ThrowsMessage<Error>(HasSubstr("diagonal dimensions cannot be identical 1, 1")));
  EXPECT_THAT(values(ops::diagonal_backward(floats({1, 2}, {2}), {2, 3}, 1, 0, 1)), ElementsAre(0, 1, 0, 0, 0, 2));
}

TEST(IndexTest, AdvancedIndexingLikePyTorch) {
  const Tensor a = ops::reshape(ops::arange(12.0), {3, 4});
  EXPECT_THAT(values(ops::index(a, {ints({2, 0}, {2})})), ElementsAre(8, 9, 10, 11, 0, 1, 2, 3));
  const Tensor cols = ops::index(a, {std::nullopt, ints({3, 1}, {2})});
  EXPECT_THAT(cols.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(values(cols), ElementsAre(3, 1, 7, 5, 11, 9));
  EXPECT_THAT(values(ops::index(a, {ints({0, 2}, {2}), ints({1, 3}, {2})})), ElementsAre(1, 11));
  EXPECT_THAT(values(ops::index(a, {ops::gt(a, 6.0)})), ElementsAre(7, 8, 9, 10, 11));
  // Negative indices count from the end; int32 indices work.
  EXPECT_THAT(values(ops::index(a, {ops::tensor({-1}, {1}, DType::kInt32)})), ElementsAre(8, 9, 10, 11));
  // Indices separated by a None go first; adjacent ones stay in place and broadcast.
  const Tensor b = ops::reshape(ops::arange(24.0), {2, 3, 4});
  const Tensor nonadj = ops::index(b, {ints({1, 0}, {2}), std::nullopt, ints({0, 3}, {2})});
  EXPECT_THAT(nonadj.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(values(nonadj), ElementsAre(12, 16, 20, 3, 7, 11));
  EXPECT_THAT(ops::index(b, {std::nullopt, ints({0, 2}, {1, 2}), ints({1}, {1})}).sizes(), ElementsAre(2, 1, 2));
  EXPECT_THAT(ops::index(ops::t(a), {ints({1}, {1})}).to_vector<double>(), ElementsAre(1, 5, 9));
  EXPECT_THAT(ops::index(meta({3, 4}), {std::nullopt, meta({2, 5}, DType::kInt64)}).sizes(), ElementsAre(3, 2, 5));
  EXPECT_THROW(ops::index(meta({3, 4}), {meta({3, 4}, DType::kBool)}), DataDependentOutputError);
}

TEST(IndexTest, Errors) {
  const Tensor a = ops::reshape(ops::arange(12.0), {3, 4});
  EXPECT_THAT([&] { ops::index(a, {ints({5}, {1})}); },
              ThrowsMessage<Error>(HasSubstr("index 5 is out of bounds for dimension 0 with size 3")));
  EXPECT_THAT([&] { ops::index(a, {ints({-4}, {1})}); },
              ThrowsMessage<Error>(HasSubstr("index -4 is out of bounds for dimension 0 with size 3")));
  EXPECT_THAT([&] { ops::index(a, {floats({1}, {1})}); },
              ThrowsMessage<Error>(HasSubstr("tensors used as indices must be long, int, byte or bool tensors")));
  EXPECT_THAT([&] { ops::index(a, {bools({1, 0}, {2})}); },
              ThrowsMessage<Error>(HasSubstr("The shape of the mask [2] at index 0 does not match the shape of the "
                                             "indexed tensor [3, 4] at index 0")));
  EXPECT_THAT([&] { ops::index(a, {ints({0, 1}, {2}), ints({0, 1, 2}, {3})}); },
              ThrowsMessage<Error>(HasSubstr("shape mismatch: indexing tensors could not be broadcast together with "
                                             "shapes [2], [3]")));
  EXPECT_THAT([&] { ops::index(a, {ints({0}, {1}), ints({0}, {1}), ints({0}, {1})}); },
              ThrowsMessage<Error>(HasSubstr("too many indices for tensor of dimension 2 (got 3)")));
}

TEST(IndexPutTest, WritesAndAccumulatesInIndexOrder) {
  const Tensor z = ops::zeros({3, 4});
  EXPECT_THAT(values(ops::index_put(z, {ints({0, 0, 2}, {3})}, floats({1, 2, 3, 4}, {4}), true)),
              ElementsAre(2, 4, 6, 8, 0, 0, 0, 0, 1, 2, 3, 4));
  EXPECT_THAT(values(ops::index_put(z, {ints({0, 0}, {2}), ints({1, 1}, {2})}, floats({1, 2}, {2}))),
              ElementsAre(0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  EXPECT_THAT(values(z), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));  // functional
  Tensor y = ops::zeros({2, 3});
  ops::index_put_(y, {bools({0, 1}, {2})}, ops::scalar_tensor(5.0));
  EXPECT_THAT(values(y), ElementsAre(0, 0, 0, 5, 5, 5));
  Tensor w = ops::zeros({4});
  ops::_index_put_impl_(w, {ints({1, 1, 3}, {3})}, floats({1, 2, 3}, {3}), true, true);
  EXPECT_THAT(values(w), ElementsAre(0, 3, 0, 3));
  EXPECT_THAT([&] { ops::index_put_(y, {ints({0, 1}, {2})}, ops::ones({3, 3})); },
              ThrowsMessage<Error>(HasSubstr("shape mismatch: value tensor of shape [3, 3] cannot be broadcast to "
                                             "indexing result of shape [2, 3]")));
  EXPECT_THAT([&] { ops::index_put_(y, {ints({0, 1}, {2})}, ops::ones({2, 3}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("Index put requires the source and destination dtypes match, got Float "
                                             "for the destination and Long for the source.")));
}

TEST(IndexPutTest, StridedSelfHalfRoundingAndEmptyIndices) {
  // A transposed self is written through its strides.
  Tensor base = ops::zeros({2, 3});
  Tensor view = ops::t(base);  // [3, 2]
  ops::index_put_(view, {ints({2, 0}, {2})}, floats({1, 2, 3, 4}, {2, 2}));
  EXPECT_THAT(values(base), ElementsAre(3, 0, 1, 4, 0, 2));
  // f16 accumulates one value at a time, rounding each step as PyTorch's CPU
  // kernel does: 2048 + 1 rounds back to 2048 every time.
  const Tensor h = ops::full({1}, 2048.0, {.dtype = DType::kFloat16});
  const Tensor ones = ops::ones({2}, {.dtype = DType::kFloat16});
  EXPECT_THAT(values(ops::index_put(h, {ints({0, 0}, {2})}, ones, true)), ElementsAre(2048));
  EXPECT_THAT(values(ops::scatter_add(h, 0, ints({0, 0}, {2}), ones)), ElementsAre(2048));
  // An empty index selects nothing; a 2-D index makes 2-D rows.
  const Tensor a = ops::reshape(ops::arange(12.0), {3, 4});
  EXPECT_THAT(ops::index(a, {ints({}, {0})}).sizes(), ElementsAre(0, 4));
  const Tensor rows = ops::index(a, {ints({0, 2, 1, 1}, {2, 2})});
  EXPECT_THAT(rows.sizes(), ElementsAre(2, 2, 4));
  EXPECT_THAT(values(ops::select(ops::select(rows, 0, 1), 0, 0)), ElementsAre(4, 5, 6, 7));
  EXPECT_THAT(values(ops::index_put(a, {ints({}, {0})}, ops::ones({}), false)),
              ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
}

TEST(NonzeroTest, RowMajorCoordinates) {
  const Tensor nz = ops::nonzero(floats({0, 1.5, 2, 0}, {2, 2}));
  EXPECT_THAT(nz.sizes(), ElementsAre(2, 2));
  EXPECT_EQ(nz.dtype(), DType::kInt64);
  EXPECT_THAT(values(nz), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT(ops::nonzero(ops::zeros({3})).sizes(), ElementsAre(0, 1));
  EXPECT_THAT(ops::nonzero(ops::scalar_tensor(2.0)).sizes(), ElementsAre(1, 0));
  EXPECT_THAT(values(ops::nonzero(bools({0, 1, 1}, {3}))), ElementsAre(1, 2));
  EXPECT_THAT([&] { ops::nonzero(meta({3})); }, ThrowsMessage<DataDependentOutputError>(HasSubstr("aten::nonzero")));
}

}  // namespace
}  // namespace opspec
