// Tests of testing::make_tensor.
#include "harness/expect/make_tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec::testing {
namespace make_tensor_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(MakeTensor, ShapeDtypeAndDefaultRangesAsTorchTesting) {
  const Tensor f = make_tensor({40, 50}, DType::kFloat32);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(format_sizes(f.sizes()), "[40, 50]");
  EXPECT_TRUE(f.is_contiguous());
  const std::vector<double> fv = f.to_vector<double>();
  EXPECT_GE(*std::min_element(fv.begin(), fv.end()), -9.0);
  EXPECT_LT(*std::max_element(fv.begin(), fv.end()), 9.0);
  EXPECT_LT(*std::min_element(fv.begin(), fv.end()), -8.0);  // the range is used, not a corner of it
  const std::vector<int64_t> iv = make_tensor({2000}, DType::kInt64).to_vector<int64_t>();
  EXPECT_EQ(*std::min_element(iv.begin(), iv.end()), -9);
  EXPECT_EQ(*std::max_element(iv.begin(), iv.end()), 9);  // high is exclusive: [-9, 10)
  const std::vector<int64_t> bv = make_tensor({100}, DType::kBool).to_vector<int64_t>();
  EXPECT_TRUE(std::count(bv.begin(), bv.end(), 0) > 10 && std::count(bv.begin(), bv.end(), 1) > 10);
}

TEST(MakeTensor, LowHighAndTheSeed) {
  manual_seed(3);
  const std::vector<double> a = make_tensor({500}, DType::kFloat64, kCPU, {.low = 2, .high = 3}).to_vector<double>();
  for (double v : a) ASSERT_TRUE(v >= 2 && v < 3) << v;
  manual_seed(3);
  EXPECT_EQ(make_tensor({500}, DType::kFloat64, kCPU, {.low = 2, .high = 3}).to_vector<double>(), a);
  const std::vector<int64_t> small =
      make_tensor({200}, DType::kInt32, kCPU, {.low = 0, .high = 2}).to_vector<int64_t>();
  for (int64_t v : small) ASSERT_TRUE(v == 0 || v == 1) << v;
}

TEST(MakeTensor, NoncontiguousHasTheShapeAndIsStrided) {
  const Tensor t = make_tensor({3, 4}, DType::kFloat32, kCPU, {.noncontiguous = true});
  EXPECT_EQ(format_sizes(t.sizes()), "[3, 4]");
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_EQ(t.strides()[1], 2);
  // One element is contiguous whatever is asked, as in torch.testing.
  EXPECT_TRUE(make_tensor({1}, DType::kFloat32, kCPU, {.noncontiguous = true}).is_contiguous());
  EXPECT_EQ(make_tensor({}, DType::kFloat32).dim(), 0);
}

TEST(MakeTensor, BadArgumentsAreNamed) {
  EXPECT_THAT([] { make_tensor({2}, DType::kFloat32, kCPU, {.low = 1, .high = 1}); },
              ThrowsMessage<Error>(HasSubstr("make_tensor: low must be less than high, got low=1, high=1")));
  EXPECT_THAT([] { make_tensor({2}, DType::kInt64, kCPU, {.requires_grad = true}); },
              ThrowsMessage<Error>(HasSubstr("`requires_grad=True` is not supported for boolean and integral dtypes! (got i64)")));
}

}  // namespace
TEST(MakeTensor, RequiresGradGivesALeafThatBackwardFills) {
  for (const bool noncontiguous : {false, true}) {
    const Tensor t = make_tensor({2, 3}, DType::kFloat64, kCPU, {.noncontiguous = noncontiguous, .requires_grad = true});
    EXPECT_TRUE(t.requires_grad());
    EXPECT_TRUE(t.is_leaf());
    ops::sum(ops::mul(t, 2.0)).backward();
    ASSERT_TRUE(t.grad().defined()) << noncontiguous;
    EXPECT_EQ(t.grad().to_vector<double>(), std::vector<double>(6, 2.0));
  }
}

}  // namespace opspec::testing
