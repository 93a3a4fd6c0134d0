#include "kernels/common/views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/ops/ops.h"

namespace opspec {
namespace views_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

// iota: a contiguous f32 tensor 0, 1, 2, ... of the given shape.
Tensor iota(IntArrayRef shape) {
  return ops::view(ops::arange(compute_numel(shape), {.dtype = DType::kFloat32}), shape);
}

TEST(ViewsTest, ViewSharesStorageAndWritesThrough) {
  Tensor base = iota({2, 3});
  Tensor v = ops::view(base, {3, 2});
  EXPECT_TRUE(v.is_alias_of(base));
  EXPECT_FALSE(v.is_same(base));
  EXPECT_THAT(vec(v.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(v.strides()), ElementsAre(2, 1));
  Tensor row = ops::select(v, 0, 1);  // elements 2 and 3 of base
  ops::fill_(row, 9);
  EXPECT_THAT(base.to_vector<float>(), ElementsAre(0, 1, 9, 9, 4, 5));
}

TEST(ViewsTest, ViewInfersOneDim) {
  Tensor base = iota({2, 3, 4});
  Tensor v = ops::view(base, {-1, 4});
  EXPECT_THAT(vec(v.sizes()), ElementsAre(6, 4));
  EXPECT_THAT(vec(v.strides()), ElementsAre(4, 1));
  EXPECT_THAT(vec(ops::view(base, {24}).sizes()), ElementsAre(24));
  EXPECT_EQ(ops::view(iota({1, 1}), {}).dim(), 0);
}

TEST(ViewsTest, ViewKeepsStorageOffsetAndUsesStrides) {
  Tensor base = iota({4, 6});
  Tensor s = ops::slice(base, 0, 1, 3);  // rows 1..2, offset 6, contiguous
  Tensor v = ops::view(s, {3, 4});
  EXPECT_EQ(v.storage_offset(), 6);
  EXPECT_THAT(vec(v.strides()), ElementsAre(4, 1));
  EXPECT_THAT(v.to_vector<float>(), ElementsAre(6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17));
  // Splitting a dim of a transposed tensor is fine: no dim spans two subspaces.
  Tensor t = ops::t(iota({4, 6}));  // [6, 4] strides [1, 6]
  Tensor split = ops::view(t, {2, 3, 4});
  EXPECT_THAT(vec(split.strides()), ElementsAre(3, 1, 6));
}

TEST(ViewsTest, ViewOfTransposedThrows) {
  Tensor t = ops::t(iota({2, 3}));
  EXPECT_THAT([&] { ops::view(t, {6}); },
              ThrowsMessage<Error>(HasSubstr("view size is not compatible with input tensor's size and stride (at "
                                             "least one dimension spans across two contiguous subspaces). Use "
                                             ".reshape(...) instead.")));
  EXPECT_THAT([&] { ops::_unsafe_view(t, {6}); }, ThrowsMessage<Error>(HasSubstr("Use .reshape(...) instead.")));
  EXPECT_THAT([&] { ops::view(iota({2, 3}), {4, -1}); },
              ThrowsMessage<Error>(HasSubstr("shape '[4, -1]' is invalid for input of size 6")));
  EXPECT_THAT([&] { ops::view(iota({2, 3}), {-1, -1}); },
              ThrowsMessage<Error>(HasSubstr("only one dimension can be inferred")));
}

TEST(ViewsTest, UnsafeView) {
  Tensor base = iota({2, 3});
  Tensor v = ops::_unsafe_view(base, {6});
  EXPECT_TRUE(v.is_alias_of(base));
  EXPECT_THAT(vec(v.sizes()), ElementsAre(6));
  EXPECT_THAT(vec(v.strides()), ElementsAre(1));
}

TEST(ViewsTest, AsStrided) {
  Tensor base = iota({10});
  Tensor v = ops::as_strided(base, {3, 2}, {3, 1}, 1);
  EXPECT_EQ(v.storage_offset(), 1);
  EXPECT_THAT(v.to_vector<float>(), ElementsAre(1, 2, 4, 5, 7, 8));
  // Without an offset the view keeps self's.
  Tensor s = ops::slice(base, 0, 4);
  EXPECT_EQ(ops::as_strided(s, {2}, {2}).storage_offset(), 4);
  EXPECT_THAT(ops::as_strided(s, {2}, {2}).to_vector<float>(), ElementsAre(4, 6));
  // Overlapping windows (stride smaller than the window) are allowed.
  EXPECT_THAT(ops::as_strided(base, {3, 3}, {1, 1}).to_vector<float>(), ElementsAre(0, 1, 2, 1, 2, 3, 2, 3, 4));
}

TEST(ViewsTest, AsStridedOutOfBounds) {
  Tensor base = iota({10});
  EXPECT_NO_THROW(ops::as_strided(base, {4}, {3}, 0));  // last element 9
  EXPECT_THAT([&] { ops::as_strided(base, {4}, {3}, 1); },
              ThrowsMessage<Error>(HasSubstr("requiring a storage size of 44 are out of bounds for storage of size "
                                             "40")));
  EXPECT_THAT([&] { ops::as_strided(base, {2}, {-1}, 1); },
              ThrowsMessage<Error>(HasSubstr("Negative strides are not supported")));
  EXPECT_THAT([&] { ops::as_strided(base, {2, 2}, {1}, 0); },
              ThrowsMessage<Error>(HasSubstr("mismatch in length of strides and shape")));
  EXPECT_THAT([&] { ops::as_strided(base, {2}, {1}, -1); },
              ThrowsMessage<Error>(HasSubstr("invalid storage offset -1")));
  EXPECT_NO_THROW(ops::as_strided(base, {0}, {1}, 10));  // empty views read nothing
}

// t_, transpose_, unsqueeze_: self restrided as the functional views (strides from torch 1.13), data and version kept.
TEST(ViewsTest, TransposeAndUnsqueezeInPlaceRestrideSelf) {
  Tensor x = iota({2, 3});
  const uint64_t version = x.impl()->version();
  Tensor& r = ops::t_(x);
  EXPECT_EQ(&r, &x);
  EXPECT_THAT(vec(x.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(x.strides()), ElementsAre(1, 3));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(0, 3, 1, 4, 2, 5));
  ops::transpose_(x, 0, -1);
  EXPECT_THAT(vec(x.strides()), ElementsAre(3, 1));
  ops::unsqueeze_(x, 1);
  EXPECT_THAT(vec(x.sizes()), ElementsAre(2, 1, 3));
  EXPECT_THAT(vec(x.strides()), ElementsAre(3, 3, 1));
  EXPECT_EQ(x.impl()->version(), version);
  Tensor v = ops::zeros({3});
  ops::t_(v);  // <= 2 dims: unchanged
  EXPECT_THAT(vec(v.sizes()), ElementsAre(3));
  EXPECT_THAT([&] { ops::t_(x); },
              ThrowsMessage<Error>(HasSubstr("aten::t_: t_() expects a tensor with <= 2 dimensions, but self is 3D")));
  EXPECT_THAT([&] { ops::unsqueeze_(v, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_THAT([&] { ops::transpose_(v, 0, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-1, 0], but got 2)")));
  Tensor m = ops::empty({2, 3}, {.device = kMeta});
  ops::t_(m);
  EXPECT_THAT(vec(m.strides()), ElementsAre(1, 3));
}

TEST(ViewsTest, AsStridedInPlaceRestridesSelf) {
  Tensor base = iota({10});
  Tensor x = ops::slice(base, 0, 2);
  const uint64_t version = x.impl()->version();
  Tensor& r = ops::as_strided_(x, {2, 2}, {1, 3});
  EXPECT_EQ(&r, &x);
  EXPECT_TRUE(x.is_alias_of(base));
  EXPECT_EQ(x.storage_offset(), 2);  // without an offset self's stays
  EXPECT_THAT(vec(x.strides()), ElementsAre(1, 3));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(2, 5, 3, 6));
  EXPECT_EQ(x.impl()->version(), version);  // metadata only
  ops::as_strided_(x, {3}, {2}, 1);
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(1, 3, 5));
  // as_strided's checks, named by the in-place op; a refused call leaves self alone.
  EXPECT_THAT([&] { ops::as_strided_(x, {4}, {3}, 1); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::as_strided_"),
                                         HasSubstr("requiring a storage size of 44 are out of bounds"))));
  EXPECT_THAT([&] { ops::as_strided_(x, {2, 2}, {1}); },
              ThrowsMessage<Error>(HasSubstr("mismatch in length of strides and shape")));
  EXPECT_THAT(x.to_vector<float>(), ElementsAre(1, 3, 5));
}

TEST(ViewsTest, Permute) {
  Tensor base = iota({2, 3, 4});
  Tensor p = ops::permute(base, {2, 0, 1});
  EXPECT_THAT(vec(p.sizes()), ElementsAre(4, 2, 3));
  EXPECT_THAT(vec(p.strides()), ElementsAre(1, 12, 4));
  EXPECT_TRUE(p.is_alias_of(base));
  EXPECT_THAT(vec(ops::permute(base, {-1, 1, 0}).strides()), ElementsAre(1, 4, 12));
  EXPECT_FLOAT_EQ(static_cast<float>(internal::read_element_as_double(p, 1 * 6 + 1 * 3 + 2)), 1 * 12 + 2 * 4 + 1);
}

TEST(ViewsTest, PermuteErrors) {
  Tensor base = iota({2, 3});
  EXPECT_THAT([&] { ops::permute(base, {0, 1, 2}); },
              ThrowsMessage<Error>(HasSubstr("number of dimensions in the tensor input does not match the length of "
                                             "the desired ordering of dimensions i.e. input.dim() = 2 is not equal "
                                             "to len(dims) = 3")));
  EXPECT_THAT([&] { ops::permute(base, {1, 1}); },
              ThrowsMessage<Error>(HasSubstr("permute: duplicate dims are not allowed.")));
  EXPECT_THAT([&] { ops::permute(base, {1, -1}); }, ThrowsMessage<Error>(HasSubstr("duplicate dims")));
  EXPECT_THAT([&] { ops::permute(base, {0, 2}); },
              ThrowsMessage<Error>(HasSubstr("expected to be in range of [-2, 1], but got 2")));
}

TEST(ViewsTest, TAndTranspose) {
  Tensor base = iota({2, 3});
  Tensor tt = ops::t(base);
  EXPECT_THAT(vec(tt.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(tt.strides()), ElementsAre(1, 3));
  EXPECT_THAT(tt.to_vector<float>(), ElementsAre(0, 3, 1, 4, 2, 5));
  Tensor one = iota({4});
  EXPECT_THAT(vec(ops::t(one).sizes()), ElementsAre(4));
  EXPECT_TRUE(ops::t(one).is_alias_of(one));
  EXPECT_EQ(ops::t(ops::scalar_tensor(2.0)).dim(), 0);
  EXPECT_THAT([&] { ops::t(iota({2, 3, 4})); },
              ThrowsMessage<Error>(HasSubstr("t() expects a tensor with <= 2 dimensions, but self is 3D")));

  Tensor base3 = iota({2, 3, 4});
  Tensor tr = ops::transpose(base3, 0, -1);
  EXPECT_THAT(vec(tr.sizes()), ElementsAre(4, 3, 2));
  EXPECT_THAT(vec(tr.strides()), ElementsAre(1, 4, 12));
  EXPECT_THAT(vec(ops::transpose(base3, 1, 1).strides()), ElementsAre(12, 4, 1));
  EXPECT_EQ(ops::transpose(ops::scalar_tensor(1.0), 0, -1).dim(), 0);
  EXPECT_THAT([&] { ops::transpose(base3, 0, 3); },
              ThrowsMessage<Error>(HasSubstr("aten::transpose.int: Dimension out of range (expected to be in range "
                                             "of [-3, 2], but got 3)")));
}

TEST(ViewsTest, Expand) {
  Tensor base = iota({3, 1});
  Tensor e = ops::expand(base, {2, 3, 4});
  EXPECT_THAT(vec(e.sizes()), ElementsAre(2, 3, 4));
  EXPECT_THAT(vec(e.strides()), ElementsAre(0, 1, 0));
  EXPECT_THAT(ops::expand(iota({3}), {2, 3}).to_vector<float>(), ElementsAre(0, 1, 2, 0, 1, 2));
  Tensor keep = ops::expand(base, {-1, 5});
  EXPECT_THAT(vec(keep.sizes()), ElementsAre(3, 5));
  EXPECT_THAT(vec(keep.strides()), ElementsAre(1, 0));
  // A new leading dim of size 1 steps over the rest (PyTorch's rule).
  EXPECT_THAT(vec(ops::expand(iota({2, 3}), {1, 2, 3}).strides()), ElementsAre(6, 3, 1));
  EXPECT_TRUE(e.is_alias_of(base));
}

TEST(ViewsTest, ExpandErrors) {
  Tensor base = iota({2, 3});
  EXPECT_THAT([&] { ops::expand(base, {2, 4}); },
              ThrowsMessage<Error>(HasSubstr("The expanded size of the tensor (4) must match the existing size (3) "
                                             "at non-singleton dimension 1.  Target sizes: [2, 4].  Tensor sizes: "
                                             "[2, 3]")));
  EXPECT_THAT([&] { ops::expand(base, {3}); },
              ThrowsMessage<Error>(HasSubstr("the number of sizes provided (1) must be greater or equal to the "
                                             "number of dimensions in the tensor (2)")));
  EXPECT_THAT([&] { ops::expand(base, {-1, 2, 3}); },
              ThrowsMessage<Error>(HasSubstr("isn't allowed in a leading, non-existing dimension 0")));
  EXPECT_THAT([&] { ops::expand(iota({1}), {-2}); }, ThrowsMessage<Error>(HasSubstr("must be non-negative")));
}

TEST(ViewsTest, Unsqueeze) {
  Tensor base = iota({2, 3});
  Tensor u0 = ops::unsqueeze(base, 0);
  EXPECT_THAT(vec(u0.sizes()), ElementsAre(1, 2, 3));
  EXPECT_THAT(vec(u0.strides()), ElementsAre(6, 3, 1));
  Tensor u1 = ops::unsqueeze(base, 1);
  EXPECT_THAT(vec(u1.sizes()), ElementsAre(2, 1, 3));
  EXPECT_THAT(vec(u1.strides()), ElementsAre(3, 3, 1));
  Tensor ulast = ops::unsqueeze(base, -1);
  EXPECT_THAT(vec(ulast.sizes()), ElementsAre(2, 3, 1));
  EXPECT_THAT(vec(ulast.strides()), ElementsAre(3, 1, 1));
  EXPECT_THAT(vec(ops::unsqueeze(ops::scalar_tensor(1.0), 0).sizes()), ElementsAre(1));
  EXPECT_THAT([&] { ops::unsqueeze(base, 3); },
              ThrowsMessage<Error>(HasSubstr("expected to be in range of [-3, 2], but got 3")));
  EXPECT_THAT([&] { ops::unsqueeze(base, -4); }, ThrowsMessage<Error>(HasSubstr("but got -4")));
}

TEST(ViewsTest, Squeeze) {
  Tensor base = iota({1, 3, 1, 2});
  Tensor s = ops::squeeze(base);
  EXPECT_THAT(vec(s.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(s.strides()), ElementsAre(2, 1));
  Tensor s2 = ops::squeeze(base, 2);
  EXPECT_THAT(vec(s2.sizes()), ElementsAre(1, 3, 2));
  EXPECT_THAT(vec(s2.strides()), ElementsAre(6, 2, 1));
  Tensor same = ops::squeeze(base, 1);  // size 3: unchanged
  EXPECT_THAT(vec(same.sizes()), ElementsAre(1, 3, 1, 2));
  EXPECT_TRUE(same.is_alias_of(base));
  EXPECT_THAT(vec(ops::squeeze(base, -4).sizes()), ElementsAre(3, 1, 2));
  EXPECT_EQ(ops::squeeze(ops::scalar_tensor(1.0), 0).dim(), 0);
  EXPECT_THAT([&] { ops::squeeze(base, 4); }, ThrowsMessage<Error>(HasSubstr("aten::squeeze.dim: Dimension out")));
}

TEST(ViewsTest, SqueezeInPlace) {
  Tensor base = iota({2, 1, 3});
  Tensor alias = base;
  TensorImpl* impl = base.impl();
  const uint64_t version = base.impl()->version();
  Tensor& r = ops::squeeze_(base, 1);
  EXPECT_EQ(&r, &base);
  EXPECT_EQ(base.impl(), impl);
  EXPECT_THAT(vec(alias.sizes()), ElementsAre(2, 3)) << "the TensorImpl itself changed";
  EXPECT_THAT(vec(alias.strides()), ElementsAre(3, 1));
  EXPECT_EQ(base.impl()->version(), version) << "metadata only";
  ops::squeeze_(base, 0);  // size 2: no change
  EXPECT_THAT(vec(base.sizes()), ElementsAre(2, 3));
}

TEST(ViewsTest, Slice) {
  Tensor base = iota({10});
  Tensor s = ops::slice(base, 0, 2, 8, 3);
  EXPECT_THAT(vec(s.sizes()), ElementsAre(2));
  EXPECT_THAT(vec(s.strides()), ElementsAre(3));
  EXPECT_EQ(s.storage_offset(), 2);
  EXPECT_THAT(s.to_vector<float>(), ElementsAre(2, 5));
  EXPECT_THAT(ops::slice(base, 0, -3).to_vector<float>(), ElementsAre(7, 8, 9));
  EXPECT_THAT(ops::slice(base, 0, std::nullopt, -8).to_vector<float>(), ElementsAre(0, 1));
  EXPECT_THAT(ops::slice(base, 0, -100, 100, 4).to_vector<float>(), ElementsAre(0, 4, 8));
  Tensor empty = ops::slice(base, 0, 7, 3);
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.storage_offset(), 7);
  EXPECT_EQ(ops::slice(base, 0, 20, 30).storage_offset(), 10);

  Tensor m = iota({3, 4});
  Tensor cols = ops::slice(m, -1, 1, std::nullopt, 2);
  EXPECT_THAT(vec(cols.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(cols.strides()), ElementsAre(4, 2));
  EXPECT_EQ(cols.storage_offset(), 1);
  ops::fill_(cols, -1);
  EXPECT_THAT(m.to_vector<float>(), ElementsAre(0, -1, 2, -1, 4, -1, 6, -1, 8, -1, 10, -1));
}

TEST(ViewsTest, SliceErrors) {
  Tensor base = iota({10});
  EXPECT_THAT([&] { ops::slice(base, 0, 0, 5, 0); }, ThrowsMessage<Error>(HasSubstr("slice step must be positive")));
  EXPECT_THAT([&] { ops::slice(base, 0, 0, 5, -1); }, ThrowsMessage<Error>(HasSubstr("slice step must be positive")));
  EXPECT_THAT([&] { ops::slice(base, 1); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([&] { ops::slice(ops::scalar_tensor(1.0), 0); },
              ThrowsMessage<Error>(HasSubstr("slice() cannot be applied to a 0-dim tensor.")));
}

TEST(ViewsTest, Select) {
  Tensor m = iota({3, 4});
  Tensor row = ops::select(m, 0, -1);
  EXPECT_THAT(vec(row.sizes()), ElementsAre(4));
  EXPECT_EQ(row.storage_offset(), 8);
  EXPECT_THAT(row.to_vector<float>(), ElementsAre(8, 9, 10, 11));
  Tensor col = ops::select(m, 1, 2);
  EXPECT_THAT(vec(col.strides()), ElementsAre(4));
  EXPECT_EQ(col.storage_offset(), 2);
  EXPECT_THAT(col.to_vector<float>(), ElementsAre(2, 6, 10));
  Tensor scalar = ops::select(ops::select(m, 0, 1), 0, 3);
  EXPECT_EQ(scalar.dim(), 0);
  EXPECT_FLOAT_EQ(scalar.item<float>(), 7);
  EXPECT_THAT([&] { ops::select(iota({3}), 0, 5); },
              ThrowsMessage<Error>(HasSubstr("select(): index 5 out of range for tensor of size [3] at dimension 0")));
  EXPECT_THAT([&] { ops::select(iota({3}), 0, -4); }, ThrowsMessage<Error>(HasSubstr("index -4 out of range")));
  EXPECT_THAT([&] { ops::select(ops::scalar_tensor(1.0), 0, 0); },
              ThrowsMessage<Error>(HasSubstr("select() cannot be applied to a 0-dim tensor.")));
}

TEST(ViewsTest, Alias) {
  Tensor base = ops::t(iota({2, 3}));
  Tensor a = ops::alias(base);
  EXPECT_FALSE(a.is_same(base));
  EXPECT_TRUE(a.is_alias_of(base));
  EXPECT_THAT(vec(a.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(vec(a.strides()), ElementsAre(1, 3));
}

TEST(ViewsTest, MetaTensorsUseTheSameKernels) {
  Tensor m = ops::empty({2, 3, 4}, {.device = kMeta});
  Tensor p = ops::permute(m, {2, 0, 1});
  EXPECT_TRUE(p.device().is_meta());
  EXPECT_THAT(vec(p.strides()), ElementsAre(1, 12, 4));
  EXPECT_THAT(vec(ops::view(m, {6, 4}).sizes()), ElementsAre(6, 4));
  EXPECT_THAT(vec(ops::expand(ops::select(m, 2, 0), {5, 2, 3}).strides()), ElementsAre(0, 12, 4));
  EXPECT_EQ(ops::slice(m, 1, 1).storage_offset(), 4);
  EXPECT_THAT([&] { ops::view(ops::transpose(m, 0, 2), {24}); },
              ThrowsMessage<Error>(HasSubstr("Use .reshape(...) instead.")));
  EXPECT_THAT([&] { ops::as_strided(m, {25}, {1}); }, ThrowsMessage<Error>(HasSubstr("out of bounds")));
}

TEST(ViewBaseTest, AViewOpsResultRemembersItsRootBase) {
  const Tensor base = ops::arange(0.0, 6.0);
  const Tensor v = ops::view(base, {2, 3});
  const Tensor row = ops::select(ops::t(v), 0, 1);
  EXPECT_EQ(v.impl()->view_base(), base.impl());
  EXPECT_EQ(row.impl()->view_base(), base.impl());  // the root, not the intermediate view
  EXPECT_EQ(base.impl()->view_base(), nullptr);
  // detach and _unsafe_view share storage but are not views (their schemas alias nothing).
  EXPECT_EQ(ops::detach(v).impl()->view_base(), nullptr);
  EXPECT_EQ(ops::_unsafe_view(base, {3, 2}).impl()->view_base(), nullptr);
  // storage_unshared: a view that alone keeps its base alive counts as unshared.
  Tensor lone = ops::view(ops::arange(0.0, 4.0), {2, 2});
  EXPECT_TRUE(lone.impl()->storage_unshared());
  const Tensor sibling = ops::slice(lone, 0, 0, 1);
  EXPECT_FALSE(lone.impl()->storage_unshared());
  EXPECT_FALSE(v.impl()->storage_unshared());  // base is alive
}

}  // namespace
}  // namespace opspec
