// EXPECT_TENSOR_EQ / EXPECT_TENSOR_CLOSE / EXPECT_STRIDES: pass and fail paths
// of each macro, and the check library's tolerances and messages through them.
#include "harness/gtest/tensor_assertions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace tensor_assertions_test {

using ::testing::HasSubstr;
using testing_util::fatal_failure_of;
using testing_util::nonfatal_failure_of;

TEST(TensorAssertions, EqualTensorsPass) {
  const Tensor x = ops::arange(4.0);
  EXPECT_TENSOR_EQ(ops::add(x, 0.0), x);
  ASSERT_TENSOR_EQ(ops::mul(x, 1.0), x);
  EXPECT_TENSOR_CLOSE(ops::add(x, 1e-7), x);  // within f32's 1.3e-6 / 1e-5
  ASSERT_TENSOR_CLOSE(ops::add(x, 0.01), x, .rtol = 0.0, .atol = 0.02);
}

TEST(TensorAssertions, EqFailsOnAnyDifferenceAndNamesBothExpressions) {
  const Tensor x = ops::arange(4.0);
  const Tensor y = ops::add(x, 1e-7);
  const std::string msg = nonfatal_failure_of([&] { EXPECT_TENSOR_EQ(y, x); });
  EXPECT_THAT(msg, HasSubstr("`y` and `x` are not equal:\nTensor-likes are not equal!"));
  EXPECT_THAT(msg, HasSubstr("Mismatched elements: 2 / 4 (50.0%)"));  // 2 + 1e-7 and 3 + 1e-7 round back in f32
  EXPECT_THAT(fatal_failure_of([&] { ASSERT_TENSOR_EQ(y, x); }), HasSubstr("are not equal"));
  // NaN is not equal to NaN here, as in torch.testing.assert_close's default.
  const Tensor nan = ops::full({1}, std::nan(""));
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_TENSOR_EQ(nan, nan); }), HasSubstr("Mismatched elements: 1 / 1"));
}

TEST(TensorAssertions, CloseFailsOutsideTheTolerancesWithAssertClosesMessage) {
  const Tensor x = ops::tensor({1.0, 2.0, 2.0, 4.0}, {4});
  const Tensor y = ops::tensor({1.0, 2.0, 2.5, 4.0}, {4});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_TENSOR_CLOSE(y, x); });
  EXPECT_THAT(msg, HasSubstr("`y` and `x` are not close:\nTensor-likes are not close!"));
  EXPECT_THAT(msg, HasSubstr("Mismatched elements: 1 / 4 (25.0%)"));
  EXPECT_THAT(msg, HasSubstr("Greatest absolute difference: 0.5 at index (2,) (up to 1e-05 allowed)"));
  EXPECT_THAT(fatal_failure_of([&] { ASSERT_TENSOR_CLOSE(y, x, .rtol = 0.1, .atol = 0.0); }),
              HasSubstr("(up to 0.1 allowed)"));
  // Shape and dtype are compared first, as assert_close does.
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_TENSOR_CLOSE(ops::ones({2}), ops::ones({3})); }), HasSubstr("shape"));
  const Tensor f64 = ops::ones({2}, {.dtype = DType::kFloat64});
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_TENSOR_CLOSE(f64, ops::ones({2})); }), HasSubstr("dtype"));
}

TEST(TensorAssertions, AnExceptionIsTheAssertionsFailureNotTheTests) {
  // rtol without atol (torch.testing refuses it), and an op that throws in an
  // argument: the test goes on past each.
  const Tensor x = ops::ones({2});
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_TENSOR_CLOSE(x, x, .rtol = 1e-3); }),
              HasSubstr("comparing `x` and `x` threw: "));
  EXPECT_THAT(fatal_failure_of([&] { ASSERT_TENSOR_EQ(ops::mm(x, x), x); }),
              HasSubstr("comparing `ops::mm(x, x)` and `x` threw: "));
  // Structured bindings work as arguments (the macro holds no lambda that would capture them).
  auto [a, b] = std::pair{x, ops::mul(x, 2.0)};
  EXPECT_TENSOR_EQ(a, a) << "streams";
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_TENSOR_CLOSE(a, b); }), HasSubstr("`a` and `b` are not close"));
}

TEST(TensorAssertions, StridesPassOnPyTorchsValues) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_STRIDES(ops::relu(ops::t(x)), {1, 3});  // python3-torch 1.13: torch.relu(x.t()).stride() == (1, 3)
  const Tensor cl = ops::contiguous(ops::randn({2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  ASSERT_STRIDES(ops::add(cl, ops::randn({3, 1, 1})), {60, 1, 15, 3}) << "streams";
  const std::vector<int64_t> want = {60, 1, 15, 3};
  EXPECT_STRIDES(ops::clone(cl), want);
  EXPECT_STRIDES(ops::empty_like(cl), cl.strides());
}

TEST(TensorAssertions, StridesFailNamingTheExpressionAndBothValues) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_STRIDES(ops::relu(ops::t(x)), {3, 1}); }),
              HasSubstr("`ops::relu(ops::t(x))` has unexpected strides: expected strides [3, 1], got [1, 3] "
                        "(sizes [3, 2])"));
  EXPECT_THAT(fatal_failure_of([&] { ASSERT_STRIDES(x, {3}); }),
              HasSubstr("`x` has unexpected strides: expected strides [3], got [3, 1]: 2 dims, not 1"));
  // An op that throws in the argument fails the assertion, not the test.
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_STRIDES(ops::mm(x, x), {1}); }),
              HasSubstr("checking the strides of `ops::mm(x, x)` threw: "));
}

}  // namespace
}  // namespace opspec
