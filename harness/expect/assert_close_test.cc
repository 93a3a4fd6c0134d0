// assert_close: PyTorch's tolerances, closeness rule and messages on every
// dtype, NaN/inf, strided tensors, attribute mismatches and bitwise mode.
#include "harness/expect/assert_close.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "harness/expect/op_log.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace assert_close_test {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor t1(std::vector<double> v, DType dt = DType::kFloat32) {
  const int64_t n = static_cast<int64_t>(v.size());
  return ops::tensor(std::move(v), {n}, dt);
}

TEST(DefaultTolerances, PyTorchTable) {
  auto eq = [](Tolerances t, double rtol, double atol) { return t.rtol == rtol && t.atol == atol; };
  EXPECT_TRUE(eq(default_tolerances(DType::kFloat32), 1.3e-6, 1e-5));
  EXPECT_TRUE(eq(default_tolerances(DType::kFloat64), 1e-7, 1e-7));
  EXPECT_TRUE(eq(default_tolerances(DType::kFloat16), 1e-3, 1e-5));
  EXPECT_TRUE(eq(default_tolerances(DType::kBFloat16), 1.6e-2, 1e-5));
  for (DType dt : {DType::kInt64, DType::kInt32, DType::kBool}) EXPECT_TRUE(eq(default_tolerances(dt), 0, 0));
}

TEST(AssertClose, PyTorchMessageForFloat32) {
  const Tensor expected = ops::full({4, 4}, 2.0);
  Tensor actual = ops::clone(expected);
  float* p = actual.data_ptr<float>();
  p[1 * 4 + 2] = 2.5f;  // abs 0.5, rel 0.25
  p[0] = 2.125f;
  p[15] = 2.25f;
  const CheckResult r = assert_close(actual, expected);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.message,
            "Tensor-likes are not close!\n\n"
            "Mismatched elements: 3 / 16 (18.8%)\n"
            "Greatest absolute difference: 0.5 at index (1, 2) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.25 at index (1, 2) (up to 1.3e-06 allowed)");
  EXPECT_TRUE(assert_close(expected, expected).ok);
}

TEST(AssertClose, DefaultTolerancesDecide) {
  EXPECT_TRUE(assert_close(t1({1.0 + 5e-6}), t1({1.0})).ok);
  EXPECT_FALSE(assert_close(t1({1.0 + 2e-5}), t1({1.0})).ok);
  EXPECT_TRUE(assert_close(t1({1.0 + 5e-8}, DType::kFloat64), t1({1.0}, DType::kFloat64)).ok);
  EXPECT_THAT(assert_close(t1({1.0 + 1e-6}, DType::kFloat64), t1({1.0}, DType::kFloat64)).message,
              HasSubstr("(up to 1e-07 allowed)"));
  // f16: one ulp at 1.0 (2^-10) is within 1e-5 + 1e-3; two are not.
  EXPECT_TRUE(assert_close(t1({1.0009765625}, DType::kFloat16), t1({1.0}, DType::kFloat16)).ok);
  EXPECT_EQ(assert_close(t1({1.001953125}, DType::kFloat16), t1({1.0}, DType::kFloat16)).message,
            "Tensor-likes are not close!\n\n"
            "Mismatched elements: 1 / 1 (100.0%)\n"
            "Greatest absolute difference: 0.001953125 at index (0,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.001953125 at index (0,) (up to 0.001 allowed)");
  // bf16: one ulp at 1.0 (2^-7) passes with rtol 1.6e-2; four do not.
  EXPECT_TRUE(assert_close(t1({1.0078125}, DType::kBFloat16), t1({1.0}, DType::kBFloat16)).ok);
  EXPECT_THAT(assert_close(t1({1.03125}, DType::kBFloat16), t1({1.0}, DType::kBFloat16)).message,
              HasSubstr("Greatest absolute difference: 0.03125 at index (0,) (up to 1e-05 allowed)\n"
                        "Greatest relative difference: 0.03125 at index (0,) (up to 0.016 allowed)"));
}

TEST(AssertClose, ExplicitTolerancesAndEqualityWording) {
  EXPECT_TRUE(assert_close(t1({1.5}), t1({1.0}), {.rtol = 0.0, .atol = 0.5}).ok);
  EXPECT_TRUE(assert_close(t1({1.5}), t1({1.0}), {.rtol = 0.5, .atol = 0.0}).ok);
  // rtol = atol = 0: "equal", and no "(up to ...)".
  EXPECT_EQ(assert_close(t1({1.5, 1.0}), t1({1.0, 1.0}), {.rtol = 0.0, .atol = 0.0}).message,
            "Tensor-likes are not equal!\n\n"
            "Mismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 0.5 at index (0,)\n"
            "Greatest relative difference: 0.5 at index (0,)");
}

TEST(AssertClose, GivingOnlyOneToleranceThrows) {
  EXPECT_THAT([] { assert_close(t1({1}), t1({1}), {.rtol = 1e-3}); },
              ThrowsMessage<Error>("assert_close: give both rtol and atol, or neither (got rtol only)"));
  EXPECT_THAT([] { assert_close(std::vector<Tensor>{}, std::vector<Tensor>{}, {.atol = 1e-3}); },
              ThrowsMessage<Error>("assert_close: give both rtol and atol, or neither (got atol only)"));
}

TEST(AssertClose, IntegersAndBoolMustBeEqual) {
  EXPECT_TRUE(assert_close(t1({1, 2, 3}, DType::kInt64), t1({1, 2, 3}, DType::kInt64)).ok);
  EXPECT_EQ(assert_close(t1({1, 2, 3}, DType::kInt64), t1({1, 5, 3}, DType::kInt64)).message,
            "Tensor-likes are not equal!\n\n"
            "Mismatched elements: 1 / 3 (33.3%)\n"
            "Greatest absolute difference: 3 at index (1,)\n"
            "Greatest relative difference: 0.6000000238418579 at index (1,)");
  EXPECT_THAT(assert_close(t1({7, 0}, DType::kInt32), t1({7, 9}, DType::kInt32)).message,
              HasSubstr("Greatest absolute difference: 9 at index (1,)"));
  EXPECT_EQ(assert_close(t1({1, 0}, DType::kBool), t1({1, 1}, DType::kBool)).message,
            "Tensor-likes are not equal!\n\n"
            "Mismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: 1 at index (1,)\n"
            "Greatest relative difference: 1.0 at index (1,)");
  // Large int64 values compare exactly (not through double).
  const Tensor big_a = ops::full({1}, int64_t{(1LL << 60) + 1});
  const Tensor big_b = ops::full({1}, int64_t{1LL << 60});
  ASSERT_EQ(big_a.dtype(), DType::kInt64);
  ASSERT_EQ(big_a.data_ptr<int64_t>()[0] - big_b.data_ptr<int64_t>()[0], 1);
  EXPECT_THAT(assert_close(big_a, big_b).message, HasSubstr("Greatest absolute difference: 1 at index (0,)"));
}

TEST(AssertClose, NaNAndInfinity) {
  const CheckResult nan = assert_close(t1({kNaN, 1.0}), t1({kNaN, 1.0}));
  EXPECT_EQ(nan.message,
            "Tensor-likes are not close!\n\n"
            "Mismatched elements: 1 / 2 (50.0%)\n"
            "Greatest absolute difference: nan at index (0,) (up to 1e-05 allowed)\n"
            "Greatest relative difference: nan at index (0,) (up to 1.3e-06 allowed)");
  EXPECT_TRUE(assert_close(t1({kNaN, 1.0}), t1({kNaN, 1.0}), {.equal_nan = true}).ok);
  EXPECT_FALSE(assert_close(t1({kNaN}), t1({1.0}), {.equal_nan = true}).ok);
  EXPECT_TRUE(assert_close(t1({kInf, -kInf}), t1({kInf, -kInf})).ok);
  EXPECT_THAT(assert_close(t1({kInf}), t1({-kInf})).message,
              HasSubstr("Greatest absolute difference: inf at index (0,)"));
  EXPECT_FALSE(assert_close(t1({kInf}), t1({1e30})).ok);
  // Expected 0: relative difference inf.
  EXPECT_THAT(assert_close(t1({1.0}), t1({0.0})).message,
              HasSubstr("Greatest relative difference: inf at index (0,)"));
}

TEST(AssertClose, NonContiguousAndZeroDimTensors) {
  const Tensor a = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor at = ops::t(a);  // [[1, 4], [2, 5], [3, 6]], strides (1, 3)
  ASSERT_FALSE(at.is_contiguous());
  EXPECT_TRUE(assert_close(at, ops::tensor({1, 4, 2, 5, 3, 6}, {3, 2})).ok);
  EXPECT_THAT(assert_close(at, ops::tensor({1, 4, 2, 5, 3, 7}, {3, 2})).message,
              HasSubstr("Mismatched elements: 1 / 6 (16.7%)\nGreatest absolute difference: 1.0 at index (2, 1)"));
  // Both strided, and broadcast (stride 0) views.
  EXPECT_TRUE(assert_close(ops::expand(ops::tensor({3}, {1}), {4}), t1({3, 3, 3, 3})).ok);
  EXPECT_TRUE(assert_close(ops::slice(t1({0, 1, 2, 3, 4}), 0, 1, 5, 2), t1({1, 3})).ok);
  EXPECT_EQ(assert_close(ops::scalar_tensor(1.0), ops::scalar_tensor(2.0)).message,
            "Tensor-likes are not close!\n\n"
            "Mismatched elements: 1 / 1 (100.0%)\n"
            "Greatest absolute difference: 1.0 at index () (up to 1e-05 allowed)\n"
            "Greatest relative difference: 0.5 at index () (up to 1.3e-06 allowed)");
  EXPECT_TRUE(assert_close(ops::zeros({0, 3}), ops::zeros({0, 3})).ok);
}

TEST(AssertClose, AttributeMismatches) {
  EXPECT_EQ(assert_close(ops::zeros({2, 3}), ops::zeros({3, 2})).message,
            "The values for attribute 'shape' do not match: [2, 3] != [3, 2].");
  EXPECT_EQ(assert_close(ops::zeros({2}), ops::zeros({2}, {.dtype = DType::kFloat64})).message,
            "The values for attribute 'dtype' do not match: f32 != f64.");
  EXPECT_TRUE(assert_close(ops::zeros({2}), ops::zeros({2}, {.dtype = DType::kFloat64}), {.check_dtype = false}).ok);
  EXPECT_FALSE(assert_close(t1({1}), t1({2}, DType::kInt64), {.check_dtype = false}).ok);
  const Tensor meta = ops::zeros({2}, {.device = Device(DeviceType::kMeta)});
  EXPECT_EQ(assert_close(ops::zeros({2}), meta).message,
            "The values for attribute 'device' do not match: cpu != meta.");
  // Meta tensors have no values: metadata only.
  EXPECT_TRUE(assert_close(meta, ops::ones({2}, {.device = Device(DeviceType::kMeta)})).ok);
  EXPECT_EQ(assert_close(Tensor(), ops::zeros({1})).message,
            "The values for attribute 'defined' do not match: False != True.");
  EXPECT_TRUE(assert_close(Tensor(), Tensor()).ok);
}

TEST(AssertClose, Bitwise) {
  const CloseOptions bitwise{.bitwise = true};
  EXPECT_TRUE(assert_close(t1({1.0, kNaN}), t1({1.0, kNaN}), bitwise).ok);
  EXPECT_EQ(assert_close(t1({1.0, 1.00000011920928955}), t1({1.0, 1.0}), bitwise).message,
            "Tensors are not bitwise equal!\n\n"
            "Mismatched elements: 1 / 2 (50.0%)\n"
            "First mismatch at index (1,): 1.0000001 vs 1 (bits 0x3f800001 vs 0x3f800000)");
  // -0 == 0 numerically but not bitwise.
  EXPECT_TRUE(assert_close(t1({-0.0}), t1({0.0})).ok);
  EXPECT_THAT(assert_close(t1({-0.0}), t1({0.0}), bitwise).message,
              HasSubstr("First mismatch at index (0,): -0 vs 0 (bits 0x80000000 vs 0x00000000)"));
  EXPECT_THAT(assert_close(t1({0.1}, DType::kFloat64), t1({0.2}, DType::kFloat64), bitwise).message,
              HasSubstr("0.1 vs 0.2 (bits 0x3fb999999999999a vs 0x3fc999999999999a)"));
  EXPECT_THAT(assert_close(t1({1.0009765625}, DType::kFloat16), t1({1.0}, DType::kFloat16), bitwise).message,
              HasSubstr("1.001 vs 1 (bits 0x3c01 vs 0x3c00)"));
  EXPECT_THAT(assert_close(t1({1.0078125}, DType::kBFloat16), t1({1.0}, DType::kBFloat16), bitwise).message,
              HasSubstr("1.01 vs 1 (bits 0x3f81 vs 0x3f80)"));
  EXPECT_THAT(assert_close(t1({5}, DType::kInt32), t1({6}, DType::kInt32), bitwise).message,
              HasSubstr("5 vs 6 (bits 0x00000005 vs 0x00000006)"));
  EXPECT_THAT(assert_close(t1({-1}, DType::kInt64), t1({1}, DType::kInt64), bitwise).message,
              HasSubstr("-1 vs 1 (bits 0xffffffffffffffff vs 0x0000000000000001)"));
  EXPECT_THAT(assert_close(t1({1}, DType::kBool), t1({0}, DType::kBool), bitwise).message,
              HasSubstr("True vs False (bits 0x01 vs 0x00)"));
  // Strided: compared in logical order.
  EXPECT_TRUE(assert_close(ops::t(ops::tensor({1, 2, 3, 4}, {2, 2})), ops::tensor({1, 3, 2, 4}, {2, 2}), bitwise).ok);
  // A dtype mismatch cannot be compared bitwise, whatever check_dtype says.
  EXPECT_THAT(assert_close(t1({1}), t1({1}, DType::kFloat64), {.bitwise = true, .check_dtype = false}).message,
              HasSubstr("attribute 'dtype'"));
}

TEST(AssertClose, Lists) {
  EXPECT_TRUE(assert_close(std::vector<Tensor>{t1({1}), t1({2})}, std::vector<Tensor>{t1({1}), t1({2})}).ok);
  EXPECT_EQ(assert_close(std::vector<Tensor>{t1({1})}, std::vector<Tensor>{t1({1}), t1({2})}).message,
            "The number of outputs does not match: 1 != 2.");
  EXPECT_THAT(assert_close(std::vector<Tensor>{t1({1}), t1({3})}, std::vector<Tensor>{t1({1}), t1({2})}).message,
              ::testing::StartsWith("output 1: Tensor-likes are not close!\n\nMismatched elements: 1 / 1 (100.0%)"));
}

TEST(AssertClose, DispatchesNothing) {
  const Tensor a = ops::t(ops::tensor({1, 2, 3, 4}, {2, 2}));
  const Tensor b = ops::tensor({1, 3, 2, 5}, {2, 2});
  const auto seen = record_ops([&] {
    assert_close(a, b);
    assert_close(a, b, {.bitwise = true});
  });
  EXPECT_THAT(seen, IsEmpty());
}

}  // namespace
}  // namespace opspec
