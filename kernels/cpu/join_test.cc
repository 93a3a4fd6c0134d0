#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/common/factory_meta.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace join_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

Tensor iota(IntArrayRef shape, DType dtype = DType::kFloat32, double start = 0) {
  return ops::view(ops::arange(start, start + static_cast<double>(compute_numel(shape)), 1, {.dtype = dtype}),
                   shape);
}

TEST(CatTest, AlongEachDim) {
  Tensor a = iota({2, 2});
  Tensor b = iota({1, 2}, DType::kFloat32, 10);
  Tensor c0 = ops::cat(std::vector<Tensor>{a, b}, 0);
  EXPECT_THAT(vec(c0.sizes()), ElementsAre(3, 2));
  EXPECT_THAT(c0.to_vector<float>(), ElementsAre(0, 1, 2, 3, 10, 11));
  Tensor d = iota({2, 3}, DType::kFloat32, 10);
  Tensor c1 = ops::cat(std::vector<Tensor>{a, d}, -1);
  EXPECT_THAT(vec(c1.sizes()), ElementsAre(2, 5));
  EXPECT_THAT(c1.to_vector<float>(), ElementsAre(0, 1, 10, 11, 12, 2, 3, 13, 14, 15));
  EXPECT_FALSE(c1.is_alias_of(a));
  // A single input is copied.
  Tensor one = ops::cat(std::vector<Tensor>{a});
  EXPECT_FALSE(one.is_alias_of(a));
  EXPECT_THAT(one.to_vector<float>(), ElementsAre(0, 1, 2, 3));
}

TEST(CatTest, MiddleDimOf3D) {
  Tensor a = iota({2, 1, 2});
  Tensor b = iota({2, 2, 2}, DType::kFloat32, 100);
  Tensor c = ops::cat(std::vector<Tensor>{a, b, a}, 1);
  EXPECT_THAT(vec(c.sizes()), ElementsAre(2, 4, 2));
  EXPECT_THAT(c.to_vector<float>(),
              ElementsAre(0, 1, 100, 101, 102, 103, 0, 1, 2, 3, 104, 105, 106, 107, 2, 3));
}

TEST(CatTest, TypePromotion) {
  Tensor i = iota({2}, DType::kInt32);
  Tensor f = iota({2}, DType::kFloat16, 0.5);
  Tensor c = ops::cat(std::vector<Tensor>{i, f});
  EXPECT_EQ(c.dtype(), DType::kFloat16);
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0, 1, 0.5, 1.5));
  Tensor b = ops::full({2}, true);
  Tensor l = iota({1}, DType::kInt64, 7);
  Tensor c2 = ops::cat(std::vector<Tensor>{b, l});
  EXPECT_EQ(c2.dtype(), DType::kInt64);
  EXPECT_THAT(c2.to_vector<int64_t>(), ElementsAre(1, 1, 7));
  Tensor c3 = ops::cat(std::vector<Tensor>{iota({1}, DType::kFloat32), iota({1}, DType::kFloat64, 2)});
  EXPECT_EQ(c3.dtype(), DType::kFloat64);
}

TEST(CatTest, NonContiguousInputs) {
  Tensor t = ops::t(iota({3, 2}));                                  // [2, 3]: 0 2 4 / 1 3 5
  Tensor s = ops::slice(iota({2, 6}, DType::kFloat32, 10), 1, 0, std::nullopt, 2);  // [2, 3] stride 2
  Tensor e = ops::expand(iota({1, 3}, DType::kFloat32, 50), {2, 3});
  Tensor c = ops::cat(std::vector<Tensor>{t, s, e}, 1);
  EXPECT_THAT(vec(c.sizes()), ElementsAre(2, 9));
  EXPECT_THAT(c.to_vector<float>(),
              ElementsAre(0, 2, 4, 10, 12, 14, 50, 51, 52, 1, 3, 5, 16, 18, 20, 50, 51, 52));
  Tensor c0 = ops::cat(std::vector<Tensor>{t, s}, 0);
  EXPECT_THAT(c0.to_vector<float>(), ElementsAre(0, 2, 4, 1, 3, 5, 10, 12, 14, 16, 18, 20));
}

TEST(CatTest, LargeParallelCopy) {
  Tensor a = iota({300, 200});
  Tensor b = iota({300, 100}, DType::kFloat32, 1e6);
  Tensor c = ops::cat(std::vector<Tensor>{a, b}, 1);
  const std::vector<float> v = c.to_vector<float>();
  for (int64_t r = 0; r < 300; r += 37) {
    EXPECT_EQ(v[r * 300 + 5], r * 200 + 5);
    EXPECT_EQ(v[r * 300 + 250], 1e6f + r * 100 + 50);
  }
}

TEST(CatTest, LegacyEmptyTensorsAreSkipped) {
  Tensor a = iota({2, 2});
  Tensor empty = ops::empty({0});
  Tensor c = ops::cat(std::vector<Tensor>{empty, a, empty}, 1);
  EXPECT_THAT(vec(c.sizes()), ElementsAre(2, 2));
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(0, 1, 2, 3));
  // Only empty tensors: the result is empty.
  EXPECT_THAT(vec(ops::cat(std::vector<Tensor>{empty, empty}).sizes()), ElementsAre(0));
  // A [0, 2] tensor is not legacy: it must match and contributes zero rows.
  Tensor c2 = ops::cat(std::vector<Tensor>{ops::empty({0, 2}), a});
  EXPECT_THAT(vec(c2.sizes()), ElementsAre(2, 2));
}

TEST(CatTest, Errors) {
  Tensor a = iota({2, 3});
  // An empty list has no tensor to choose a backend, so the dispatcher may
  // refuse it before the kernel; the shared shape rule words it like PyTorch.
  EXPECT_THROW(ops::cat(std::vector<Tensor>{}), Error);
  EXPECT_THAT([] { internal::cat_geometry({}, 0, "aten::cat"); },
              ThrowsMessage<Error>(HasSubstr("torch.cat(): expected a non-empty list of Tensors")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, iota({2, 4})}, 0); },
              ThrowsMessage<Error>(HasSubstr("Sizes of tensors must match except in dimension 0. Expected size 3 "
                                             "but got size 4 for tensor number 1 in the list.")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{iota({3, 3}), iota({3, 3}), iota({4, 3})}, 1); },
              ThrowsMessage<Error>(HasSubstr("Sizes of tensors must match except in dimension 1. Expected size 3 "
                                             "but got size 4 for tensor number 2 in the list.")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, iota({6})}); },
              ThrowsMessage<Error>(HasSubstr("Tensors must have same number of dimensions: got 2 and 1")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, ops::scalar_tensor(1.0)}); },
              ThrowsMessage<Error>(HasSubstr("zero-dimensional tensor (at position 1) cannot be concatenated")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, a}, 2); },
              ThrowsMessage<Error>(HasSubstr("aten::cat: Dimension out of range (expected to be in range of [-2, "
                                             "1], but got 2)")));
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, ops::empty({2, 3}, {.device = kMeta})}); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

TEST(CatTest, Meta) {
  Tensor a = ops::empty({2, 3}, {.dtype = DType::kInt32, .device = kMeta});
  Tensor b = ops::empty({2, 5}, {.dtype = DType::kFloat16, .device = kMeta});
  Tensor c = ops::cat(std::vector<Tensor>{a, b}, 1);
  EXPECT_TRUE(c.device().is_meta());
  EXPECT_THAT(vec(c.sizes()), ElementsAre(2, 8));
  EXPECT_EQ(c.dtype(), DType::kFloat16);
  EXPECT_THAT([&] { ops::cat(std::vector<Tensor>{a, b}, 0); },
              ThrowsMessage<Error>(HasSubstr("Expected size 3 but got size 5 for tensor number 1 in the list.")));
}

TEST(StackTest, Dims) {
  Tensor a = iota({2, 3});
  Tensor b = iota({2, 3}, DType::kFloat32, 10);
  Tensor s0 = ops::stack(std::vector<Tensor>{a, b}, 0);
  EXPECT_THAT(vec(s0.sizes()), ElementsAre(2, 2, 3));
  EXPECT_THAT(s0.to_vector<float>(), ElementsAre(0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15));
  Tensor s1 = ops::stack(std::vector<Tensor>{a, b}, 1);
  EXPECT_THAT(vec(s1.sizes()), ElementsAre(2, 2, 3));
  EXPECT_THAT(s1.to_vector<float>(), ElementsAre(0, 1, 2, 10, 11, 12, 3, 4, 5, 13, 14, 15));
  Tensor s2 = ops::stack(std::vector<Tensor>{a, b}, 2);
  EXPECT_THAT(vec(s2.sizes()), ElementsAre(2, 3, 2));
  EXPECT_THAT(s2.to_vector<float>(), ElementsAre(0, 10, 1, 11, 2, 12, 3, 13, 4, 14, 5, 15));
  Tensor sm = ops::stack(std::vector<Tensor>{a, b}, -1);
  EXPECT_TRUE(ops::equal(sm, s2));
  EXPECT_TRUE(ops::equal(ops::stack(std::vector<Tensor>{a, b}, -3), s0));
}

TEST(StackTest, ScalarsPromotionAndStrides) {
  Tensor s = ops::stack(std::vector<Tensor>{ops::scalar_tensor(1.0), ops::scalar_tensor(2.0)});
  EXPECT_THAT(vec(s.sizes()), ElementsAre(2));
  EXPECT_THAT(s.to_vector<float>(), ElementsAre(1, 2));
  Tensor i = iota({2}, DType::kInt64);
  Tensor d = iota({2}, DType::kFloat64, 5);
  Tensor p = ops::stack(std::vector<Tensor>{i, d}, 1);
  EXPECT_EQ(p.dtype(), DType::kFloat64);
  EXPECT_THAT(p.to_vector<double>(), ElementsAre(0, 5, 1, 6));
  Tensor t = ops::t(iota({3, 2}));
  Tensor st = ops::stack(std::vector<Tensor>{t, t}, 0);
  EXPECT_THAT(st.to_vector<float>(), ElementsAre(0, 2, 4, 1, 3, 5, 0, 2, 4, 1, 3, 5));
}

TEST(StackTest, Errors) {
  EXPECT_THAT([] { ops::stack(std::vector<Tensor>{iota({2}), iota({3})}); },
              ThrowsMessage<Error>(HasSubstr("stack expects each tensor to be equal size, but got [2] at entry 0 and "
                                             "[3] at entry 1")));
  EXPECT_THROW(ops::stack(std::vector<Tensor>{}), Error);
  EXPECT_THAT([] { internal::stack_inputs({}, 0, "aten::stack"); },
              ThrowsMessage<Error>(HasSubstr("stack expects a non-empty TensorList")));
  EXPECT_THAT([] { ops::stack(std::vector<Tensor>{iota({2}), iota({2})}, 2); },
              ThrowsMessage<Error>(HasSubstr("expected to be in range of [-2, 1], but got 2")));
  EXPECT_THAT([] { ops::stack(std::vector<Tensor>{iota({2}), iota({2})}, -3); },
              ThrowsMessage<Error>(HasSubstr("but got -3")));
  Tensor m = ops::stack(std::vector<Tensor>{ops::empty({2, 3}, {.device = kMeta}), ops::empty({2, 3}, {.device = kMeta})}, 1);
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_THAT(vec(m.sizes()), ElementsAre(2, 2, 3));
}

TEST(LocalScalarDenseTest, Values) {
  Scalar f = ops::item(ops::scalar_tensor(2.5));
  EXPECT_TRUE(f.is_floating_point());
  EXPECT_EQ(f.to_double(), 2.5);
  const int64_t big = (int64_t{1} << 53) + 1;
  Scalar i = ops::item(ops::full({1}, big));
  EXPECT_TRUE(i.is_integral());
  EXPECT_EQ(i.to_int(), big);
  Scalar b = ops::item(ops::full({1, 1}, true));
  EXPECT_TRUE(b.is_bool());
  EXPECT_TRUE(b.to_bool());
  EXPECT_EQ(ops::item(ops::full({1}, 0.1, {.dtype = DType::kFloat64})).to_double(), 0.1);
  EXPECT_EQ(ops::item(ops::full({1}, 0.1, {.dtype = DType::kFloat16})).to_double(),
            static_cast<double>(static_cast<float>(Half(0.1f))));
  EXPECT_EQ(ops::item(ops::full({1}, -3, {.dtype = DType::kInt32})).to_int(), -3);
  // A one-element view at an offset reads the right element.
  Tensor v = ops::select(iota({4}), 0, 3);
  EXPECT_EQ(ops::item(v).to_double(), 3.0);
  EXPECT_EQ(v.item<int>(), 3);
}

TEST(LocalScalarDenseTest, Errors) {
  EXPECT_THAT([] { ops::item(ops::zeros({2, 3})); },
              ThrowsMessage<Error>(HasSubstr("a Tensor with 6 elements cannot be converted to Scalar")));
  EXPECT_THAT([] { ops::item(ops::zeros({0})); },
              ThrowsMessage<Error>(HasSubstr("a Tensor with 0 elements cannot be converted to Scalar")));
  EXPECT_THAT([] { ops::item(ops::zeros({1}, {.device = kMeta})); },
              ThrowsMessage<Error>(HasSubstr("Tensor.item() cannot be called on meta tensors")));
}

}  // namespace
}  // namespace opspec
