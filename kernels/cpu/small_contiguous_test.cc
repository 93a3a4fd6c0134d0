// small_contiguous_test.cc: small_contiguous_kernel (Note [Small contiguous
// fast path]) gives bit-identical results to the TensorIterator path it
// skips: binary arithmetic for every dtype, alpha and in place, scalar
// operands; unary ops.
#include <vector>

#include "gtest/gtest.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace small_contiguous_test {

// strided: a non-contiguous view holding the same values as t (every other
// element of a buffer twice as long), which forces the TensorIterator path.
Tensor strided(const Tensor& t) {
  Tensor wide = ops::zeros({t.numel(), 2}, {.dtype = t.dtype()});
  Tensor view = ops::select(wide, 1, 0);
  ops::copy_(view, t);
  EXPECT_FALSE(view.is_contiguous());
  return view;
}

class SmallContiguousTest : public ::testing::TestWithParam<DType> {};

TEST_P(SmallContiguousTest, MatchesTheIteratorPathBitForBit) {
  const DType dtype = GetParam();
  const bool floating = dtype != DType::kInt64 && dtype != DType::kInt32;
  const Tensor a = ops::to(floating ? ops::randn({37}) : ops::arange(-18, 19), dtype);
  const Tensor b = ops::to(floating ? ops::randn({37}) : ops::arange(1, 38), dtype);
  const Tensor sa = strided(a), sb = strided(b);
  EXPECT_TRUE(ops::equal(ops::add(a, b), ops::add(sa, sb)));
  EXPECT_TRUE(ops::equal(ops::add(a, b, 3), ops::add(sa, sb, 3)));
  EXPECT_TRUE(ops::equal(ops::sub(a, b, 2), ops::sub(sa, sb, 2)));
  EXPECT_TRUE(ops::equal(ops::mul(a, b), ops::mul(sa, sb)));
  if (floating) {
    EXPECT_TRUE(ops::equal(ops::div(a, b), ops::div(sa, sb)));
  }
  Tensor in_place = ops::clone(a);
  ops::add_(in_place, b, 2);
  EXPECT_TRUE(ops::equal(in_place, ops::add(sa, sb, 2)));
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, SmallContiguousTest,
                         ::testing::Values(DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                           DType::kInt64, DType::kInt32),
                         [](const auto& info) { return std::string(dtype_short_name(info.param)); });

TEST_P(SmallContiguousTest, UnaryOpsMatchTheIteratorPathBitForBit) {
  const DType dtype = GetParam();
  const bool floating = dtype != DType::kInt64 && dtype != DType::kInt32;
  const Tensor a = ops::to(floating ? ops::randn({37}) * 4 : ops::arange(-18, 19), dtype);
  const Tensor sa = strided(a);
  EXPECT_TRUE(ops::equal(ops::relu(a), ops::relu(sa)));
  EXPECT_TRUE(ops::equal(ops::abs(a), ops::abs(sa)));
  EXPECT_TRUE(ops::equal(ops::neg(a), ops::neg(sa)));
  EXPECT_TRUE(ops::equal(ops::sin(a), ops::sin(sa)));  // integers compute in f32 (a cast first)
  EXPECT_TRUE(ops::equal(ops::exp(a), ops::exp(sa)));
  EXPECT_TRUE(ops::equal(ops::tanh(a), ops::tanh(sa)));
}

TEST_P(SmallContiguousTest, ScalarOperandsMatchTheIteratorPathBitForBit) {
  // Wrapped C++ scalars are f64, i64 or bool tensors of one element, converted
  // on the fast path as the iterator path converts them (copy_into).
  const DType dtype = GetParam();
  const bool floating = dtype != DType::kInt64 && dtype != DType::kInt32;
  const Tensor a = ops::to(floating ? ops::randn({37}) * 3 : ops::arange(-18, 19), dtype);
  const Tensor sa = strided(a);
  EXPECT_TRUE(ops::equal(ops::mul(a, 3), ops::mul(sa, 3)));
  EXPECT_TRUE(ops::equal(ops::add(a, 7), ops::add(sa, 7)));
  EXPECT_TRUE(ops::equal(ops::add(a, true), ops::add(sa, true)));
  if (floating) {
    EXPECT_TRUE(ops::equal(ops::mul(a, 0.1), ops::mul(sa, 0.1)));  // 0.1 rounds to the dtype first
    EXPECT_TRUE(ops::equal(ops::div(a, 0.3), ops::div(sa, 0.3)));
    EXPECT_TRUE(ops::equal(ops::add(a, 1e-3, 2), ops::add(sa, 1e-3, 2)));
  }
  const Tensor one = ops::to(ops::full({1}, 2.5), dtype);  // a one-element tensor, left or right
  EXPECT_TRUE(ops::equal(ops::sub(one, a), ops::sub(one, sa)));
  EXPECT_TRUE(ops::equal(ops::mul(a, one), ops::mul(sa, one)));
}

TEST(SmallContiguousTest, MixedDtypesAndBroadcastsStillPromote) {
  const Tensor a = ops::arange(0, 4);  // i64
  const Tensor b = ops::full({4}, 0.5);
  EXPECT_EQ(ops::add(a, b).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::add(a, b).to_vector<float>(), std::vector<float>({0.5f, 1.5f, 2.5f, 3.5f}));
  EXPECT_EQ(ops::add(ops::ones({1}), ops::ones({3})).to_vector<float>(), std::vector<float>({2, 2, 2}));
}

}  // namespace
}  // namespace opspec
