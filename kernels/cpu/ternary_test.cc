// addcmul, addcdiv and lerp on the CPU and Meta: values (hand-computed and
// python3-torch 1.13's bits), dtype rules and error texts, broadcasting, the
// in-place forms. See Note [Ternary pointwise ops].
#include <bit>
#include <cmath>
#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/ops/ops.h"

namespace opspec {
namespace ternary_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor t(std::vector<double> v, DType d = DType::kFloat32) {
  const auto n = static_cast<int64_t>(v.size());
  return ops::tensor(std::move(v), {n}, d);
}
uint32_t bits(const Tensor& x, int64_t i) { return std::bit_cast<uint32_t>(x.to_vector<float>().at(i)); }

// The inputs of the 1.13 comparison: 67 elements (a vector body and a tail),
// made as the Python script made them (math.sin / math.cos in double, rounded to f32).
template <class F>
Tensor wave(const F& f) {
  std::vector<double> v;
  for (int k = 0; k < 67; ++k) v.push_back(static_cast<float>(f(k)));
  return t(v);
}

TEST(TernaryTest, AddcmulAndAddcdivHandComputed) {
  const Tensor s = t({1, 2, 3}), a = t({4, 5, 6}), b = t({2, 4, 8});
  EXPECT_THAT(values(ops::addcmul(s, a, b, 0.5)), ElementsAre(5, 12, 27));
  EXPECT_THAT(values(ops::addcdiv(s, a, b, 0.5)), ElementsAre(2, 2.625, 3.375));
  EXPECT_THAT(values(ops::addcmul(s, a, b)), ElementsAre(9, 22, 51));  // value defaults to 1
  // Integers: value is converted to the dtype first (0.5 -> 0), as Scalar.to<int64_t>().
  const Tensor i = t({1, 2, 3}, DType::kInt64);
  EXPECT_THAT(values(ops::addcmul(i, i, i, 2)), ElementsAre(3, 10, 21));
  EXPECT_THAT(values(ops::addcmul(i, i, i, 0.5)), ElementsAre(1, 2, 3));
}

TEST(TernaryTest, LerpHandComputed) {
  const Tensor s = t({0, 10, -4}), e = t({10, 20, 4});
  EXPECT_THAT(values(ops::lerp(s, e, 0.25)), ElementsAre(2.5, 12.5, -2));
  EXPECT_THAT(values(ops::lerp(s, e, 0.75)), ElementsAre(7.5, 17.5, 2));
  EXPECT_THAT(values(ops::lerp(s, e, t({0, 1, 0.5}))), ElementsAre(0, 20, 0));
}

// PyTorch's bits, where the unfused formulas round differently (elements
// found by the script, its results printed as f32 bits).
TEST(TernaryTest, KeepsPyTorchBits) {
  const Tensor s = wave([](int k) { return std::sin(k * 0.37) * 3; });
  const Tensor a = wave([](int k) { return std::cos(k * 0.53) * 2; });
  const Tensor b = wave([](int k) { return std::sin(k * 0.71 + 1) * 1.5; });
  const Tensor m = ops::addcmul(s, a, b, 0.1);
  EXPECT_EQ(bits(m, 17), 0xbde58091u);
  EXPECT_EQ(bits(m, 26), 0xbf059695u);
  EXPECT_EQ(bits(m, 40), 0x402386f7u);
  const Tensor d = ops::addcdiv(s, a, b, 0.1);
  EXPECT_EQ(bits(d, 0), 0x3e22416cu);
  EXPECT_EQ(bits(d, 1), 0x3f99babau);
  EXPECT_EQ(bits(d, 66), 0xbfe3ead8u);  // the tail
  const Tensor l7 = ops::lerp(s, a, 0.7);
  EXPECT_EQ(bits(l7, 4), 0x3e2973f6u);
  EXPECT_EQ(bits(l7, 5), 0xbebcf667u);
  EXPECT_EQ(bits(l7, 9), 0xbdb4216eu);
  const Tensor l3 = ops::lerp(s, a, 0.3);
  EXPECT_EQ(bits(l3, 8), 0x3dd99607u);
  EXPECT_EQ(bits(l3, 9), 0xbeb7b0dfu);
  EXPECT_EQ(bits(l3, 16), 0xbf8c7db5u);
  const Tensor lt = ops::lerp(s, a, wave([](int k) { return std::fabs(std::sin(k * 0.13)); }));
  EXPECT_EQ(bits(lt, 0), 0u);
  EXPECT_EQ(bits(lt, 5), 0x3d927e83u);
  EXPECT_EQ(bits(lt, 66), 0xbfedee99u);
}

TEST(TernaryTest, BroadcastsAndPromotes) {
  const Tensor s = ops::zeros({2, 3}), a = t({1, 2, 3}), b = ops::tensor({2, 3}, {2, 1});
  const Tensor r = ops::addcmul(s, a, b);
  EXPECT_THAT(r.sizes(), ElementsAre(2, 3));
  EXPECT_THAT(values(r), ElementsAre(2, 4, 6, 3, 6, 9));
  // i64 self with f32 tensors computes in f32; f64 tensor1 makes it f64.
  EXPECT_EQ(ops::addcmul(t({1}, DType::kInt64), t({2}), t({3})).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::addcmul(t({1}), t({2}, DType::kFloat64), t({3})).dtype(), DType::kFloat64);
  EXPECT_EQ(ops::addcdiv(t({1}, DType::kInt64), t({2}), t({4}, DType::kInt64)).dtype(), DType::kFloat32);
  // f16 computes in float with value as a float: 1e-8 rounded to f16 first would be 0.
  const Tensor k = t({1000}, DType::kFloat16);
  const Tensor h = ops::addcmul(t({0}, DType::kFloat16), k, k, 1e-8);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_NEAR(values(h)[0], 0.01, 1e-5);
  EXPECT_NEAR(values(ops::lerp(t({0}, DType::kFloat16), k, 1e-6))[0], 1e-3, 1e-5);
  EXPECT_THAT(ops::lerp(ops::zeros({2, 1}), ops::ones({3}), 0.5).sizes(), ElementsAre(2, 3));
}

TEST(TernaryTest, InPlaceFormsWriteSelfAndCastTheCommonDtype) {
  Tensor s = t({1, 2, 3});
  Tensor& r = ops::addcmul_(s, t({1, 1, 1}), t({2, 2, 2}), 0.5);
  EXPECT_EQ(&r, &s);
  EXPECT_THAT(values(s), ElementsAre(2, 3, 4));
  ops::addcdiv_(s, t({1, 1, 1}), t({2, 2, 2}), -2);
  EXPECT_THAT(values(s), ElementsAre(1, 2, 3));
  // A double tensor1 computes in f64 and casts into f32 self, as PyTorch 2.x's
  // TensorIterator does (1.13 hit an internal assert here).
  ops::addcmul_(s, t({1, 1, 1}, DType::kFloat64), t({1, 1, 1}));
  EXPECT_EQ(s.dtype(), DType::kFloat32);
  EXPECT_THAT(values(s), ElementsAre(2, 3, 4));
  ops::lerp_(s, t({4, 4, 4}), 0.5);
  EXPECT_THAT(values(s), ElementsAre(3, 3.5, 4));
  ops::lerp_(s, t({5, 5, 5}), t({1, 0, 0.5}));
  EXPECT_THAT(values(s), ElementsAre(5, 3.5, 4.5));
  // The same tensor as self and an operand reads each element before writing it.
  Tensor x = t({1, 2, 3});
  ops::addcmul_(x, x, x, 1);
  EXPECT_THAT(values(x), ElementsAre(2, 6, 12));
}

TEST(TernaryTest, RefusesWhatPyTorchRefuses) {
  const Tensor i = t({1, 2}, DType::kInt64), f = t({1, 2});
  EXPECT_THAT([&] { ops::addcdiv(f, i, i); },
              ThrowsMessage<Error>(HasSubstr("Integer division with addcdiv is no longer supported, and in a future  "
                                             "release addcdiv will perform a true division of tensor1 and tensor2.")));
  const Tensor bo = ops::tensor({1, 0}, {2}, DType::kBool);
  EXPECT_THAT([&] { ops::addcmul(bo, bo, bo); },
              ThrowsMessage<Error>(HasSubstr("\"addcmul_cpu_out\" not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::lerp(f, t({1, 2}, DType::kFloat64), 0.3); },
              ThrowsMessage<Error>(HasSubstr("expected dtype float for `end` but got dtype double")));
  EXPECT_THAT([&] { ops::lerp(f, f, t({1, 2}, DType::kFloat64)); },
              ThrowsMessage<Error>(HasSubstr("expected dtype float for `weight` but got dtype double")));
  EXPECT_THAT([&] { ops::lerp(i, i, 0.3); },
              ThrowsMessage<Error>(HasSubstr("\"lerp_kernel_scalar\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::lerp(i, i, i); },
              ThrowsMessage<Error>(HasSubstr("\"lerp_kernel_tensor\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::addcmul(f, t({1, 2, 3}), f); },
              ThrowsMessage<Error>(HasSubstr("The size of tensor a (2) must match the size of tensor b (3)")));
  Tensor one = t({1});
  EXPECT_THAT([&] { ops::addcmul_(one, f, f); },
              ThrowsMessage<Error>(HasSubstr("output with shape [1] doesn't match the broadcast shape [2]")));
  Tensor li = t({1, 2}, DType::kInt64);
  EXPECT_THAT([&] { ops::addcmul_(li, f, f); },
              ThrowsMessage<Error>(HasSubstr("result type Float can't be cast to the desired output type Long")));
  Tensor ex = ops::expand(t({1}), {2});
  EXPECT_THAT([&] { ops::lerp_(ex, f, 0.5); },
              ThrowsMessage<Error>(HasSubstr("more than one element of the written-to tensor refers to a single")));
}

TEST(TernaryTest, MetaAnswersAsTheCpu) {
  const Tensor m = internal::make_tensor({2, 1}, DType::kFloat32, kMeta);
  const Tensor n = internal::make_tensor({3}, DType::kFloat64, kMeta);
  const Tensor r = ops::addcmul(m, n, m);
  EXPECT_EQ(r.device(), kMeta);
  EXPECT_EQ(r.dtype(), DType::kFloat64);
  EXPECT_THAT(r.sizes(), ElementsAre(2, 3));
  EXPECT_THAT([&] { ops::lerp(m, n, 0.5); }, ThrowsMessage<Error>(HasSubstr("for `end` but got dtype double")));
  Tensor self = internal::make_tensor({3}, DType::kFloat32, kMeta);
  const uint64_t v = self.impl()->version();
  ops::lerp_(self, internal::make_tensor({3}, DType::kFloat32, kMeta), 0.5);
  EXPECT_EQ(self.impl()->version(), v + 1);
}

}  // namespace ternary_test
}  // namespace opspec
