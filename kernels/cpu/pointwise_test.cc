// Tests of the elementwise ops with parameters or rounding modes (CPU and
// Meta): clamp, clamp_min, clamp_max, hardtanh, leaky_relu, elu, softplus,
// isnan, isinf, nan_to_num, remainder, fmod, div with rounding_mode,
// round.decimals, atan2, the bitwise ops, logical_xor, pow.Scalar and the
// activations' backward ops, against hand-computed values and PyTorch's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <numbers>

#include "runtime/ops/ops.h"

namespace opspec {
namespace pointwise_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor f64(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  return ops::tensor(std::move(v), {n}, DType::kFloat64);
}
Tensor i64(std::vector<double> v) {
  const auto n = static_cast<int64_t>(v.size());
  return ops::tensor(std::move(v), {n}, DType::kInt64);
}

TEST(PointwiseTest, ClampWithScalarBounds) {
  const Tensor x = f64({-2, -0.5, 0, 0.7, 3, kNaN});
  EXPECT_THAT(values(ops::clamp(x, -1.0, 1.0)), ElementsAre(-1, -0.5, 0, 0.7, 1, ::testing::IsNan()));
  EXPECT_THAT(values(ops::clamp(x, std::nullopt, 0.5)), ElementsAre(-2, -0.5, 0, 0.5, 0.5, ::testing::IsNan()));
  EXPECT_THAT(values(ops::clamp(x, 0.0)), ElementsAre(0, 0, 0, 0.7, 3, ::testing::IsNan()));
  // min > max gives max everywhere; a NaN bound gives NaN.
  EXPECT_THAT(values(ops::clamp(f64({-5, 5}), 2.0, 1.0)), ElementsAre(1, 1));
  EXPECT_TRUE(std::isnan(values(ops::clamp(f64({1}), kNaN))[0]));
  // An integer tensor with a float bound promotes; a float tensor keeps its dtype.
  EXPECT_EQ(ops::clamp(i64({1, 5}), 1.5).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::clamp(i64({1, 5}), 1.5)), ElementsAre(1.5, 5));
  EXPECT_EQ(ops::clamp(i64({1, 5}), 0, 3).dtype(), DType::kInt64);
  EXPECT_EQ(ops::clamp(ops::ones({2}, {.dtype = DType::kFloat16}), 0.0, 2.0).dtype(), DType::kFloat16);
  EXPECT_THAT([&] { ops::clamp(x, std::optional<Scalar>(), std::optional<Scalar>()); },
              ThrowsMessage<Error>(HasSubstr("At least one of 'min' or 'max' must not be None")));
  // A b8 tensor with int bounds promotes to i64; with bool bounds it stays b8, which clamp rejects.
  EXPECT_EQ(ops::clamp(ops::ones({2}, {.dtype = DType::kBool}), 0, 1).dtype(), DType::kInt64);
  EXPECT_THAT([&] { ops::clamp(ops::ones({2}, {.dtype = DType::kBool}), Scalar(false), Scalar(true)); },
              ThrowsMessage<Error>(HasSubstr("\"clamp_scalar_cpu\" not implemented for 'Bool'")));
}

// clamp with number bounds is clamp_min then clamp_max (See Note [clamp with
// number bounds]): x stays where it ties a bound, as torch 1.13 and 2.x's CPU
// kernels give (clamp(-0.0, min=0.) is -0.0, signbit set); hardtanh (and so
// relu6) too. clamp.Tensor is maximum: a -0.0 meeting a 0 bound gives +0.0, as
// Vectorized's maximum gives in torch 1.13 (the scalar tail keeps -0.0).
TEST(PointwiseTest, ClampWithNumberBoundsKeepsAnElementThatTiesABound) {
  auto signbits = [](const Tensor& t) {
    std::vector<bool> out;
    for (double v : t.to_vector<double>()) out.push_back(std::signbit(v));
    return out;
  };
  const Tensor z = f64({-0.0, 0.0});
  EXPECT_THAT(signbits(ops::clamp(z, 0.0)), ElementsAre(true, false));
  EXPECT_THAT(signbits(ops::clamp(z, -0.0, 1.0)), ElementsAre(true, false));
  EXPECT_THAT(signbits(ops::clamp(z, std::nullopt, -0.0)), ElementsAre(true, false));
  EXPECT_THAT(signbits(ops::clamp(z, -1.0, 0.0)), ElementsAre(true, false));
  EXPECT_THAT(signbits(ops::hardtanh(z, 0, 6)), ElementsAre(true, false));  // relu6
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    Tensor c = ops::to(z, dt);
    EXPECT_THAT(signbits(ops::clamp(c, 0.0, 6.0)), ElementsAre(true, false)) << dtype_short_name(dt);
    EXPECT_THAT(signbits(ops::clamp_(c, 0.0)), ElementsAre(true, false)) << dtype_short_name(dt);
    EXPECT_THAT(signbits(ops::hardtanh_(c, 0, 6)), ElementsAre(true, false)) << dtype_short_name(dt);
  }
  EXPECT_THAT(signbits(ops::clamp(z, std::optional<Tensor>(ops::zeros({}, {.dtype = DType::kFloat64})), std::nullopt)),
              ElementsAre(false, false));
  // NaN in x stays; a NaN bound, either one, fills the result.
  EXPECT_THAT(values(ops::clamp(f64({kNaN, 2}), 0.0, 1.0)), ElementsAre(::testing::IsNan(), 1));
  EXPECT_THAT(values(ops::clamp(f64({-1, 2}), 0.0, kNaN)), ::testing::Each(::testing::IsNan()));
  EXPECT_THAT(values(ops::hardtanh(f64({-1, 2}), kNaN, 1)), ::testing::Each(::testing::IsNan()));
}

// An i32 self with a bound outside i32, as PyTorch main's clamp_out runs
// prepare_clamp_bound on each (torch 1.13 refused every such bound: "value
// cannot be converted to type int without overflow"): dropped where it cannot
// change an element, refused where it would change all; a tensor bound is
// cast, wrapping (-2^40 is 0 in i32; torch 1.13 gives [0, 0, 7] too).
TEST(PointwiseTest, ClampDropsOrRefusesAnInt32BoundOutsideInt32) {
  const Tensor x = ops::tensor({-5, 0, 7}, {3}, DType::kInt32);
  const Scalar huge = int64_t{1} << 40, tiny = -(int64_t{1} << 40);
  const Tensor copies[] = {ops::clamp(x, tiny), ops::clamp(x, std::nullopt, huge), ops::clamp(x, tiny, huge),
                           ops::hardtanh(x, tiny, huge)};
  for (const Tensor& r : copies) {
    EXPECT_EQ(r.dtype(), DType::kInt32);
    EXPECT_THAT(values(r), ElementsAre(-5, 0, 7));
  }
  EXPECT_THAT(values(ops::clamp(x, tiny, 3)), ElementsAre(-5, 0, 3));
  EXPECT_THAT(values(ops::clamp(x, -2, huge)), ElementsAre(-2, 0, 7));
  EXPECT_THAT(values(ops::hardtanh(x, -2, huge)), ElementsAre(-2, 0, 7));
  Tensor c = ops::clone(x);
  EXPECT_THAT(values(ops::clamp_(c, tiny, 3)), ElementsAre(-5, 0, 3));
  EXPECT_THAT(values(ops::hardtanh_(c, -1, huge)), ElementsAre(-1, 0, 3));
  // The min bound is judged first.
  for (auto call : {+[](const Tensor& t, const Scalar& h, const Scalar& l) { return ops::clamp(t, h, l); },
                    +[](const Tensor& t, const Scalar& h, const Scalar& l) { return ops::hardtanh(t, h, l); }}) {
    EXPECT_THAT([&] { call(x, huge, tiny); },
                ThrowsMessage<Error>(HasSubstr("Clamp min value 1.09951e+12 is outside the representable range")));
    EXPECT_THAT([&] { call(x, 0, tiny); },
                ThrowsMessage<Error>(HasSubstr("Clamp max value -1.09951e+12 is outside the representable range")));
  }
  EXPECT_THAT([&] { ops::clamp(x, huge); }, ThrowsMessage<Error>(HasSubstr("aten::clamp: Clamp min value")));
  EXPECT_THAT([&] { ops::clamp_(c, std::nullopt, tiny); },
              ThrowsMessage<Error>(HasSubstr("aten::clamp_: Clamp max value -1.09951e+12 is outside the representable "
                                             "range of Int")));
  EXPECT_THAT(values(c), ElementsAre(-1, 0, 3));  // refused before it writes
  // A value rule: Meta tensors, like PyTorch's meta functions, do not check it.
  EXPECT_EQ(ops::clamp(ops::empty({2}, {.dtype = DType::kInt32, .device = kMeta}), huge).dtype(), DType::kInt32);
  EXPECT_THAT(values(ops::clamp(x, std::optional<Tensor>(ops::full({}, tiny, {.dtype = DType::kInt64})), std::optional<Tensor>())),
              ElementsAre(0, 0, 7));
  // hardtanh on an integral self truncates its bounds to int64 first
  // (Scalar::toLong), refusing what int64 cannot hold, as torch 1.13 does.
  EXPECT_THAT(values(ops::hardtanh(x, -2.7, 2.7)), ElementsAre(-2, 0, 2));
  for (double bad : {1e30, kNaN, -kInf}) {
    EXPECT_THAT([&] { ops::hardtanh(i64({1}), bad, 1); },
                ThrowsMessage<Error>(HasSubstr("hardtanh: value cannot be converted to type int64_t without overflow")));
  }
}

TEST(PointwiseTest, ClampWithTensorBoundsBroadcasts) {
  const Tensor x = ops::tensor({-3, 0, 3, -3, 0, 3}, {2, 3}, DType::kFloat64);
  const Tensor lo = ops::tensor({-1, 1}, {2, 1}, DType::kFloat64);
  const Tensor hi = f64({2, 2, 2});
  EXPECT_THAT(values(ops::clamp(x, lo, hi)), ElementsAre(-1, 0, 2, 1, 1, 2));
  EXPECT_THAT(values(ops::clamp(x, std::optional<Tensor>(), hi)), ElementsAre(-3, 0, 2, -3, 0, 2));
  EXPECT_THAT(ops::clamp(ops::empty({4, 1}, {.device = kMeta}), std::optional<Tensor>(ops::empty({3}, {.device = kMeta})),
                         std::optional<Tensor>())
                  .sizes(),
              ElementsAre(4, 3));
}

// clamp_min / clamp_max (See Note [clamp_min and clamp_max]); values and
// errors from torch 1.13, the bound-range rule from 2.x main (prepare_clamp_bound).
TEST(PointwiseTest, ClampMinAndClampMaxWithANumber) {
  const Tensor x = f64({-2, -0.0, 0.5, 3, kNaN});
  const std::vector<double> lo = values(ops::clamp_min(x, 0.0));
  EXPECT_THAT(lo, ElementsAre(0, 0, 0.5, 3, ::testing::IsNan()));
  EXPECT_TRUE(std::signbit(lo[1])) << "std::max(-0.0, 0.0) keeps x";
  const std::vector<double> hi = values(ops::clamp_max(x, 0.5));
  EXPECT_THAT(hi, ElementsAre(-2, 0, 0.5, 0.5, ::testing::IsNan()));
  EXPECT_TRUE(std::signbit(hi[1]));
  EXPECT_FALSE(std::signbit(values(ops::clamp_max(f64({0.0}), -0.0))[0]));
  for (const Tensor& all_nan : {ops::clamp_min(x, kNaN), ops::clamp_max(x, kNaN), ops::clamp_min(i64({1, 2}), kNaN)}) {
    EXPECT_THAT(values(all_nan), ::testing::Each(::testing::IsNan()));
  }
  // Integers stay integers with an int bound and promote with a float one; f16 keeps its dtype.
  EXPECT_EQ(ops::clamp_min(i64({1, -2, 3}), 0).dtype(), DType::kInt64);
  EXPECT_THAT(values(ops::clamp_min(i64({1, -2, 3}), 0)), ElementsAre(1, 0, 3));
  EXPECT_EQ(ops::clamp_min(i64({1, -2, 3}), 0.5).dtype(), DType::kFloat32);
  EXPECT_THAT(values(ops::clamp_max(i64({1, -2, 3}), 0.5)), ElementsAre(0.5, -2, 0.5));
  const Tensor half = ops::clamp_min(ops::ones({2}, {.dtype = DType::kFloat16}), 2.5);
  EXPECT_EQ(half.dtype(), DType::kFloat16);
  EXPECT_THAT(values(half), ElementsAre(2.5, 2.5));
  // b8 promotes to i64 with an int bound; with a bool bound it stays b8, which the kernels refuse.
  const Tensor bools = ops::gt(f64({1, -1}), 0.0);
  EXPECT_EQ(ops::clamp_min(bools, 0).dtype(), DType::kInt64);
  EXPECT_THAT([&] { ops::clamp_min(bools, true); },
              ThrowsMessage<Error>(HasSubstr("aten::clamp_min: \"clamp_min_scalar_cpu\" not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::clamp_max(bools, true); },
              ThrowsMessage<Error>(HasSubstr("\"clamp_max_scalar_cpu\" not implemented for 'Bool'")));
  // An int32 bound outside int32: dropped where it cannot change an element, refused where it changes all.
  const Tensor i32 = ops::tensor({1, 2}, {2}, DType::kInt32);
  const Scalar huge = int64_t{1} << 40, tiny = -(int64_t{1} << 40);
  EXPECT_THAT(values(ops::clamp_min(i32, tiny)), ElementsAre(1, 2));
  EXPECT_EQ(ops::clamp_min(i32, tiny).dtype(), DType::kInt32);
  EXPECT_THAT(values(ops::clamp_max(i32, huge)), ElementsAre(1, 2));
  EXPECT_THAT([&] { ops::clamp_min(i32, huge); },
              ThrowsMessage<Error>(HasSubstr(
                  "aten::clamp_min: Clamp min value 1.09951e+12 is outside the representable range of Int")));
  EXPECT_THAT([&] { ops::clamp_max(i32, tiny); },
              ThrowsMessage<Error>(
                  HasSubstr("Clamp max value -1.09951e+12 is outside the representable range of Int")));
  // A value rule: Meta tensors, like PyTorch's meta functions, do not check it.
  EXPECT_EQ(ops::clamp_min(ops::empty({2}, {.dtype = DType::kInt32, .device = kMeta}), huge).dtype(), DType::kInt32);
  EXPECT_THAT([&] { ops::clamp_min(ops::empty({2}, {.dtype = DType::kBool, .device = kMeta}), true); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Bool'")));
  // A transposed self keeps its layout, as unary ops do.
  const Tensor t = ops::t(ops::tensor({-1, 2, -3, 4, -5, 6}, {2, 3}));
  EXPECT_EQ(format_sizes(ops::clamp_min(t, 0.0).strides()), format_sizes(t.strides()));
}

// clamp_min.Tensor / clamp_max.Tensor: maximum / minimum (binary promotion,
// broadcasting, b8 allowed, NaN from either side).
TEST(PointwiseTest, ClampMinAndClampMaxWithATensor) {
  const Tensor x = ops::tensor({-3, 0, 2, 1, 5, -1}, {2, 3});
  const Tensor lo = ops::tensor({-1, 1, 0}, {3});
  EXPECT_THAT(values(ops::clamp_min(x, lo)), ElementsAre(-1, 1, 2, 1, 5, 0));
  EXPECT_THAT(values(ops::clamp_max(x, lo)), ElementsAre(-3, 0, 0, -1, 1, -1));
  EXPECT_THAT(values(ops::clamp_min(ops::tensor({1, 2}, {2, 1}), lo)), ElementsAre(1, 1, 1, 2, 2, 2));
  const Tensor ints = i64({1, -2, 3});
  const Tensor promoted = ops::clamp_min(ints, ops::tensor({0.5}, {1}));
  EXPECT_EQ(promoted.dtype(), DType::kFloat32);
  EXPECT_THAT(values(promoted), ElementsAre(1, 0.5, 3));
  EXPECT_EQ(ops::clamp_max(ops::ones({3}, {.dtype = DType::kFloat16}), ops::full({}, 0.5, {.dtype = DType::kFloat64}))
                .dtype(),
            DType::kFloat16);  // a 0-dim bound of the same category does not promote
  const Tensor bools = ops::gt(f64({1, -1}), 0.0);
  EXPECT_THAT(values(ops::clamp_max(bools, ops::gt(f64({-1}), 0.0))), ElementsAre(0, 0));
  EXPECT_EQ(ops::clamp_min(bools, bools).dtype(), DType::kBool);
  EXPECT_THAT(values(ops::clamp_max(f64({1, kNaN}), f64({kNaN, 2}))), ::testing::Each(::testing::IsNan()));
  EXPECT_THAT([&] { ops::clamp_min(ops::ones({2, 3}), ops::ones({4})); },
              ThrowsMessage<Error>(HasSubstr("The size of tensor a (3) must match the size of tensor b (4) at "
                                             "non-singleton dimension 1")));
  EXPECT_EQ(format_sizes(ops::clamp_min(ops::empty({4, 1}, {.device = kMeta}), ops::empty({3}, {.device = kMeta}))
                             .sizes()),
            "[4, 3]");
}

TEST(PointwiseTest, ClampMinAndClampMaxInPlace) {
  auto in_place = [](const Tensor& t, auto fn) {
    Tensor c = ops::clone(t);
    const uint64_t version = c.impl()->version();
    EXPECT_TRUE(fn(c).is_same(c));
    EXPECT_GT(c.impl()->version(), version);
    return c;
  };
  const Tensor x = ops::tensor({-1, 0.5, 2}, {3});
  EXPECT_THAT(values(in_place(x, [](Tensor& t) -> Tensor& { return ops::clamp_min_(t, 0.0); })),
              ElementsAre(0, 0.5, 2));
  EXPECT_THAT(values(in_place(x, [](Tensor& t) -> Tensor& { return ops::clamp_max_(t, 1); })), ElementsAre(-1, 0.5, 1));
  const Tensor bound = ops::tensor({0, 1, 1}, {3});
  EXPECT_THAT(values(in_place(x, [&](Tensor& t) -> Tensor& { return ops::clamp_min_(t, bound); })),
              ElementsAre(0, 1, 2));
  EXPECT_THAT(values(in_place(x, [&](Tensor& t) -> Tensor& { return ops::clamp_max_(t, bound); })),
              ElementsAre(-1, 0.5, 1));
  // An integral self: an i64 0-dim bound casts back; a float one is refused (TypeMeta name for a number).
  const Tensor ints = i64({1, 2, 3});
  const Tensor two = ops::full({}, 2, {.dtype = DType::kInt64});
  const Tensor c = in_place(ints, [&](Tensor& t) -> Tensor& { return ops::clamp_max_(t, two); });
  EXPECT_EQ(c.dtype(), DType::kInt64);
  EXPECT_THAT(values(c), ElementsAre(1, 2, 2));
  EXPECT_THAT(values(in_place(ops::tensor({1, 2}, {2}, DType::kInt32),
                              [](Tensor& t) -> Tensor& { return ops::clamp_min_(t, -(int64_t{1} << 40)); })),
              ElementsAre(1, 2));
  auto fails = [](auto fn, const std::string& text) { EXPECT_THAT(fn, ThrowsMessage<Error>(HasSubstr(text))); };
  fails([&] { Tensor t = ops::clone(ints); ops::clamp_min_(t, 0.5); },
        "aten::clamp_min_: result type Float can't be cast to the desired output type long int");
  fails([&] { Tensor t = ops::clone(ints); ops::clamp_max_(t, ops::tensor({0.5}, {1})); },
        "aten::clamp_max_: result type Float can't be cast to the desired output type Long");
  fails([&] { Tensor t = ops::gt(f64({1, -1}), 0.0); ops::clamp_min_(t, 0); },
        "result type Long can't be cast to the desired output type bool");
  fails([&] { Tensor t = ops::ones({2}); ops::clamp_min_(t, ops::ones({2, 1})); },
        "output with shape [2] doesn't match the broadcast shape [2, 2]");
  fails([&] { Tensor t = ops::expand(ops::ones({3}), {2, 3}); ops::clamp_min_(t, 0.0); },
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location");
  fails([&] { Tensor t = ops::expand(ops::ones({1, 3}), {2, 3}); ops::clamp_max_(t, ops::zeros({2, 3})); },
        "unsupported operation: more than one element of the written-to tensor refers to a single memory location");
  Tensor m = ops::empty({3}, {.dtype = DType::kInt64, .device = kMeta});
  fails([&] { ops::clamp_min_(m, 0.5); }, "can't be cast to the desired output type long int");
  EXPECT_TRUE(ops::clamp_max_(m, 1).device().is_meta());
}

TEST(PointwiseTest, HardtanhKeepsTheDtype) {
  EXPECT_THAT(values(ops::hardtanh(f64({-3, -0.25, 0.5, 4}))), ElementsAre(-1, -0.25, 0.5, 1));
  EXPECT_THAT(values(ops::hardtanh(f64({-3, 1, 7}), 0, 6)), ElementsAre(0, 1, 6));  // relu6
  const Tensor ints = ops::hardtanh(i64({5, -3, 0}));
  EXPECT_EQ(ints.dtype(), DType::kInt64);
  EXPECT_THAT(values(ints), ElementsAre(1, -1, 0));
  EXPECT_THAT([] { ops::hardtanh(ops::ones({1}, {.dtype = DType::kBool})); },
              ThrowsMessage<Error>(HasSubstr("Bool inputs not supported for hardtanh")));
}

TEST(PointwiseTest, ActivationsMatchTheirFormulas) {
  const Tensor x = f64({-2, -0.5, 0, 0.5, 30});
  EXPECT_THAT(values(ops::leaky_relu(x, 0.1)), ElementsAre(-0.2, -0.05, 0, 0.5, 30));
  // elu: x * scale above 0, expm1(x * input_scale) * alpha * scale below.
  const std::vector<double> e = values(ops::elu(x, 2.0, 1.5, 0.5));
  EXPECT_DOUBLE_EQ(e[0], std::expm1(-1.0) * 3.0);
  EXPECT_DOUBLE_EQ(e[1], std::expm1(-0.25) * 3.0);
  EXPECT_EQ(e[2], 0.0);
  EXPECT_DOUBLE_EQ(e[3], 0.75);
  // softplus: log1p(exp(beta x)) / beta, x itself past the threshold (beta x = 60 > 20).
  const std::vector<double> sp = values(ops::softplus(x, 2.0));
  EXPECT_DOUBLE_EQ(sp[0], std::log1p(std::exp(-4.0)) / 2);
  EXPECT_DOUBLE_EQ(sp[2], std::log(2.0) / 2);
  EXPECT_EQ(sp[4], 30.0);
  EXPECT_THAT([] { ops::leaky_relu(i64({1})); },
              ThrowsMessage<Error>(HasSubstr("\"leaky_relu_cpu\" not implemented for 'Long'")));
  EXPECT_THAT([] { ops::elu(i64({1})); }, ThrowsMessage<Error>(HasSubstr("\"elu_cpu\" not implemented for 'Long'")));
  // f16 computes in float and rounds once: leaky_relu(-1) with slope 0.1 is f16(-0.1).
  const Tensor h = ops::leaky_relu(ops::full({1}, -1.0, {.dtype = DType::kFloat16}), 0.1);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_NEAR(values(h)[0], -0.1, 5e-5);
}

TEST(PointwiseTest, NanAndInfinityTests) {
  const Tensor x = f64({1, kNaN, kInf, -kInf, -0.0});
  EXPECT_THAT(values(ops::isnan(x)), ElementsAre(0, 1, 0, 0, 0));
  EXPECT_THAT(values(ops::isinf(x)), ElementsAre(0, 0, 1, 1, 0));
  EXPECT_EQ(ops::isnan(x).dtype(), DType::kBool);
  EXPECT_THAT(values(ops::isinf(i64({1, 2}))), ElementsAre(0, 0));
  EXPECT_THAT(values(ops::nan_to_num(x)),
              ElementsAre(1, 0, std::numeric_limits<double>::max(), std::numeric_limits<double>::lowest(), 0));
  EXPECT_THAT(values(ops::nan_to_num(x, 2.0, 3.0, -4.0)), ElementsAre(1, 2, 3, -4, 0));
  // f16's largest finite value, and integers copied unchanged.
  const Tensor h = ops::nan_to_num(ops::full({1}, kInf, {.dtype = DType::kFloat16}));
  EXPECT_EQ(values(h)[0], 65504.0);
  EXPECT_THAT(values(ops::nan_to_num(i64({7, -7}))), ElementsAre(7, -7));
}

TEST(PointwiseTest, RemainderAndFmodTakeTheDivisorsAndDividendsSign) {
  const Tensor a = f64({5, -5, 5, -5, 5.5}), b = f64({3, 3, -3, -3, 2});
  EXPECT_THAT(values(ops::remainder(a, b)), ElementsAre(2, 1, -1, -2, 1.5));
  EXPECT_THAT(values(ops::fmod(a, b)), ElementsAre(2, -2, 2, -2, 1.5));
  EXPECT_THAT(values(ops::remainder(i64({5, -5, 5, -5}), i64({3, 3, -3, -3}))), ElementsAre(2, 1, -1, -2));
  EXPECT_THAT(values(ops::fmod(i64({5, -5}), 3)), ElementsAre(2, -2));
  EXPECT_EQ(ops::remainder(i64({5}), 2).dtype(), DType::kInt64);
  EXPECT_TRUE(std::isnan(values(ops::remainder(f64({1}), 0.0))[0]));
  EXPECT_THAT([] { ops::remainder(i64({1, 2}), i64({1, 0})); }, ThrowsMessage<Error>(HasSubstr("ZeroDivisionError")));
  EXPECT_THAT([] { ops::fmod(i64({1}), 0); }, ThrowsMessage<Error>(HasSubstr("ZeroDivisionError")));
}

TEST(PointwiseTest, DivisionRoundingModes) {
  const Tensor a = f64({7, -7, 7, -7, 1}), b = f64({2, 2, -2, -2, 0});
  EXPECT_THAT(values(ops::div(a, b, "trunc")), ElementsAre(3, -3, -3, 3, kInf));
  EXPECT_THAT(values(ops::div(a, b, "floor")), ElementsAre(3, -4, -4, 3, kInf));
  EXPECT_THAT(values(ops::div(a, b, std::nullopt)), ElementsAre(3.5, -3.5, -3.5, 3.5, kInf));
  // Integers stay integers when rounding, and true division gives floats.
  const Tensor i = ops::div(i64({7, -7}), 2, "floor");
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(values(i), ElementsAre(3, -4));
  EXPECT_THAT(values(ops::div(i64({7, -7}), 2, "trunc")), ElementsAre(3, -3));
  EXPECT_EQ(ops::div(i64({7}), 2, std::nullopt).dtype(), DType::kFloat32);
  // floor of an exact quotient keeps the sign of zero: -0.0 / 5 is -0.0.
  EXPECT_TRUE(std::signbit(values(ops::div(f64({-0.0}), 5.0, "floor"))[0]));
  EXPECT_THAT([] { ops::div(f64({1}), 2.0, "round"); },
              ThrowsMessage<Error>(HasSubstr("div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                                             "found 'round'")));
  EXPECT_THAT([] { ops::div(i64({1}), i64({0}), "floor"); }, ThrowsMessage<Error>(HasSubstr("ZeroDivisionError")));
}

TEST(PointwiseTest, Atan2BitwiseAndLogicalXor) {
  const std::vector<double> t = values(ops::atan2(f64({1, 1, -1, 0}), f64({1, -1, 0, -1})));
  EXPECT_DOUBLE_EQ(t[0], std::numbers::pi / 4);
  EXPECT_DOUBLE_EQ(t[1], 3 * std::numbers::pi / 4);
  EXPECT_DOUBLE_EQ(t[2], -std::numbers::pi / 2);
  EXPECT_DOUBLE_EQ(t[3], std::numbers::pi);
  EXPECT_EQ(ops::atan2(i64({1}), i64({1})).dtype(), DType::kFloat32);
  const Tensor a = i64({12, 10, -1}), b = i64({10, 6, 5});
  EXPECT_THAT(values(ops::bitwise_and(a, b)), ElementsAre(8, 2, 5));
  EXPECT_THAT(values(ops::bitwise_or(a, b)), ElementsAre(14, 14, -1));
  EXPECT_THAT(values(ops::bitwise_xor(a, b)), ElementsAre(6, 12, -6));
  EXPECT_THAT(values(ops::bitwise_and(a, 3)), ElementsAre(0, 2, 3));
  const Tensor m = ops::gt(f64({1, -1, 1}), 0.0), n = ops::gt(f64({1, 1, -1}), 0.0);
  EXPECT_THAT(values(ops::bitwise_xor(m, n)), ElementsAre(0, 1, 1));
  EXPECT_EQ(ops::bitwise_or(m, n).dtype(), DType::kBool);
  EXPECT_THAT(values(ops::logical_xor(f64({0, 2, 0, -1}), f64({0, 0, 3, 1}))), ElementsAre(0, 1, 1, 0));
  EXPECT_THAT([] { ops::bitwise_and(f64({1}), f64({1})); },
              ThrowsMessage<Error>(HasSubstr("\"bitwise_and_cpu\" not implemented for 'Double'")));
}

TEST(PointwiseTest, PowWithAScalarBase) {
  EXPECT_THAT(values(ops::pow(2.0, f64({0, 3, -1, 0.5}))), ElementsAre(1, 8, 0.5, std::sqrt(2.0)));
  const Tensor i = ops::pow(3, i64({0, 2}));
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(values(i), ElementsAre(1, 9));
  EXPECT_EQ(ops::pow(2.5, i64({1})).dtype(), DType::kFloat32);
}

TEST(PointwiseTest, ActivationBackwardOps) {
  const Tensor g = f64({1, 1, 1, 1}), x = f64({-2, -1, 0.5, 1});
  EXPECT_THAT(values(ops::hardtanh_backward(g, x, -1, 1)), ElementsAre(0, 0, 1, 0));
  EXPECT_THAT(values(ops::leaky_relu_backward(g, x, 0.25, false)), ElementsAre(0.25, 0.25, 1, 1));
  const std::vector<double> e = values(ops::elu_backward(g, 2.0, 1.0, 1.0, false, x));
  EXPECT_DOUBLE_EQ(e[0], 2.0 * std::exp(-2.0));
  EXPECT_EQ(e[2], 1.0);
  // is_result: the saved tensor is elu's output y, and the slope is y + alpha * scale.
  const std::vector<double> er = values(ops::elu_backward(g, 2.0, 1.0, 1.0, true, f64({-0.5})));
  EXPECT_DOUBLE_EQ(er[0], 1.5);
  const std::vector<double> sp = values(ops::softplus_backward(g, x, 1.0, 20.0));
  EXPECT_DOUBLE_EQ(sp[0], std::exp(-2.0) / (std::exp(-2.0) + 1));
  EXPECT_THAT([&] { ops::leaky_relu_backward(g, x, -0.5, true); },
              ThrowsMessage<Error>(HasSubstr("In-place leakyReLu backward calculation is triggered with a negative slope")));
  EXPECT_THAT([&] { ops::elu_backward(g, -1.0, 1.0, 1.0, true, x); },
              ThrowsMessage<Error>(HasSubstr("aten::elu_backward: In-place elu backward calculation is triggered")));
  // The Meta kernels refuse them too, as PyTorch's meta functions do (fake tensors see the error).
  const Tensor gm = ops::empty({4}, {.dtype = DType::kFloat64, .device = kMeta});
  EXPECT_THAT([&] { ops::leaky_relu_backward(gm, gm, -0.5, true); },
              ThrowsMessage<Error>(HasSubstr("aten::leaky_relu_backward: In-place leakyReLu backward")));
  EXPECT_THAT([&] { ops::elu_backward(gm, -1.0, 1.0, 1.0, true, gm); },
              ThrowsMessage<Error>(HasSubstr("aten::elu_backward: In-place elu backward")));
  EXPECT_EQ(ops::elu_backward(gm, -1.0, 1.0, 1.0, false, gm).sizes(), gm.sizes());
}

TEST(PointwiseTest, InPlaceReluAndLogicalOps) {
  Tensor x = f64({-2, 0, 0.5, -0.25});
  const uint64_t version = x.impl()->version();
  Tensor& r = ops::relu_(x);
  EXPECT_EQ(&r, &x);
  EXPECT_GT(x.impl()->version(), version);
  EXPECT_THAT(values(x), ElementsAre(0, 0, 0.5, 0));
  Tensor ints = i64({-3, 4});
  ops::relu_(ints);
  EXPECT_THAT(values(ints), ElementsAre(0, 4));
  Tensor a = f64({0, 2, 0, -1});
  ops::logical_and_(a, f64({0, 0, 3, 1}));
  EXPECT_EQ(a.dtype(), DType::kFloat64);
  EXPECT_THAT(values(a), ElementsAre(0, 0, 0, 1));
  Tensor m = ops::gt(f64({1, -1, 1}), 0.0);
  ops::logical_or_(m, ops::gt(f64({-1, 1, -1}), 0.0));
  EXPECT_THAT(values(m), ElementsAre(1, 1, 1));
  // other broadcasts to self; self cannot grow.
  Tensor row = ops::ones({2, 3}, {.dtype = DType::kInt64});
  ops::logical_and_(row, ops::tensor({1, 0, 1}, {3}, DType::kFloat32));
  EXPECT_THAT(values(row), ElementsAre(1, 0, 1, 1, 0, 1));
  EXPECT_THAT([] { Tensor s = f64({1, 0}); ops::logical_and_(s, ops::ones({2, 2})); },
              ThrowsMessage<Error>(HasSubstr("doesn't match the broadcast shape [2, 2]")));
  EXPECT_THAT([] { Tensor b = ops::ones({2}, {.dtype = DType::kBool}); ops::relu_(b); },
              ThrowsMessage<Error>(HasSubstr("Boolean inputs not supported for relu")));
}

// The in-place forms of clamp, hardtanh, leaky_relu, elu and pow (See Note
// [In-place pointwise ops]): the functional op's values written into self,
// and PyTorch's refusals of a result dtype other than self's (texts and
// values from torch 1.13; clamp_'s TypeMeta name "long int" is 2.x's too).
TEST(PointwiseTest, InPlaceFormsWriteTheFunctionalValuesIntoSelf) {
  const Tensor x = ops::tensor({-1, 0.5, 2}, {3});
  auto in_place = [](const Tensor& t, auto fn) {
    Tensor c = ops::clone(t);
    const uint64_t version = c.impl()->version();
    Tensor& r = fn(c);
    EXPECT_TRUE(r.is_same(c));
    EXPECT_GT(c.impl()->version(), version);
    return c;
  };
  EXPECT_THAT(values(in_place(x, [](Tensor& t) -> Tensor& { return ops::hardtanh_(t, -0.5, 0.5); })),
              ElementsAre(-0.5, 0.5, 0.5));
  EXPECT_THAT(values(in_place(x, [](Tensor& t) -> Tensor& { return ops::leaky_relu_(t, 0.2); })),
              ElementsAre(DoubleNear(-0.2, 1e-7), 0.5, 2));
  EXPECT_THAT(values(in_place(x, [](Tensor& t) -> Tensor& { return ops::elu_(t, 0.5); })),
              ElementsAre(DoubleNear(-0.3161, 1e-4), 0.5, 2));
  const Tensor big = ops::mul(ops::randn({70, 300}), 3.0), bt = ops::t(big);
  for (const Tensor& t : {x, big, bt}) {
    auto same = [&](const Tensor& got, const Tensor& want) {  // NaN where want has NaN (pow 1.5 of a negative)
      const std::vector<double> g = got.to_vector<double>(), w = want.to_vector<double>();
      ASSERT_EQ(g.size(), w.size());
      for (size_t i = 0; i < g.size(); ++i) {
        EXPECT_TRUE(g[i] == w[i] || (std::isnan(g[i]) && std::isnan(w[i]))) << i << ": " << g[i] << " vs " << w[i];
      }
      EXPECT_EQ(format_sizes(got.strides()), format_sizes(t.strides()));
    };
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::clamp_(c, -0.5, 0.5); }), ops::clamp(t, -0.5, 0.5));
    const std::optional<Tensor> lo = ops::full({t.size(-1)}, -0.25), hi = ops::full({}, 0.75);
    same(in_place(t, [&](Tensor& c) -> Tensor& { return ops::clamp_(c, lo, hi); }), ops::clamp(t, lo, hi));
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::hardtanh_(c); }), ops::hardtanh(t));
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::leaky_relu_(c, 0.3); }), ops::leaky_relu(t, 0.3));
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::elu_(c, 0.7, 1.5, 2.0); }), ops::elu(t, 0.7, 1.5, 2.0));
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::pow_(c, 3); }), ops::pow(t, 3));
    same(in_place(t, [](Tensor& c) -> Tensor& { return ops::pow_(c, 1.5); }), ops::pow(t, 1.5));
    const Tensor e = ops::full({t.size(-1)}, 2.0);
    same(in_place(t, [&](Tensor& c) -> Tensor& { return ops::pow_(c, e); }), ops::pow(t, e));
  }
  // Integers: bounds truncate as the functional ops'; a promoted dtype that casts back is computed and cast.
  EXPECT_THAT(values(in_place(i64({-3, 0, 4}), [](Tensor& t) -> Tensor& { return ops::clamp_(t, -1, 2); })),
              ElementsAre(-1, 0, 2));
  EXPECT_THAT(values(in_place(i64({-3, 0, 4}), [](Tensor& t) -> Tensor& { return ops::hardtanh_(t, -1.5, 2.5); })),
              ElementsAre(-1, 0, 2));
  const Tensor i32 = ops::tensor({1, 5}, {2}, DType::kInt32), two = ops::tensor({2, 3}, {2}, DType::kInt64);
  const Tensor c32 = in_place(i32, [&](Tensor& t) -> Tensor& { return ops::clamp_(t, two, std::nullopt); });
  EXPECT_EQ(c32.dtype(), DType::kInt32);
  EXPECT_THAT(values(c32), ElementsAre(2, 5));
  EXPECT_THAT(values(in_place(i32, [&](Tensor& t) -> Tensor& { return ops::pow_(t, two); })), ElementsAre(1, 125));
  EXPECT_THAT(values(in_place(i64({1, 2, 3}), [](Tensor& t) -> Tensor& { return ops::pow_(t, 2); })),
              ElementsAre(1, 4, 9));
}

TEST(PointwiseTest, InPlaceFormsRefuseWhatPyTorchRefuses) {
  auto fails = [](auto fn, const std::string& text) {
    EXPECT_THAT(fn, ThrowsMessage<Error>(HasSubstr(text)));
  };
  const Tensor ints = i64({1, 2, 3});
  const Tensor bools = ops::gt(f64({1, -1}), 0.0);
  fails([&] { Tensor t = ops::clone(ints); ops::clamp_(t, 0.5, 1.5); },
        "aten::clamp_: result type Float can't be cast to the desired output type long int");
  fails([&] { Tensor t = ops::clone(bools); ops::clamp_(t, 0, 1); },
        "result type Long can't be cast to the desired output type bool");
  fails([&] { Tensor t = ops::clone(bools); ops::clamp_(t, true, true); }, "\"clamp_scalar_cpu\" not implemented for 'Bool'");
  fails([&] { Tensor t = ops::clone(ints); ops::clamp_(t, std::nullopt, std::optional<Scalar>()); },
        "torch.clamp: At least one of 'min' or 'max' must not be None");
  fails([&] { Tensor t = ops::clone(ints); ops::clamp_(t, std::optional<Tensor>(ops::full({}, 1.5)), std::nullopt); },
        "result type Float can't be cast to the desired output type Long");
  fails([&] { Tensor t = ops::zeros({3}); ops::clamp_(t, std::optional<Tensor>(ops::zeros({2, 3})), std::nullopt); },
        "output with shape [3] doesn't match the broadcast shape [2, 3]");
  fails([&] { Tensor t = ops::clone(ints); ops::pow_(t, 0.5); }, "aten::pow_: Found dtype Long but expected Float");
  fails([&] { Tensor t = ops::clone(bools); ops::pow_(t, 2); }, "Found dtype Bool but expected Long");
  fails([&] { Tensor t = ops::clone(ints); ops::pow_(t, -1); }, "Integers to negative integer powers are not allowed.");
  fails([&] { Tensor t = ops::clone(ints); ops::pow_(t, ops::full({}, 0.5)); },
        "result type Float can't be cast to the desired output type Long");
  fails([&] { Tensor t = ops::zeros({3}); ops::pow_(t, ops::ones({2, 3})); },
        "output with shape [3] doesn't match the broadcast shape [2, 3]");
  fails([&] { Tensor t = ops::clone(ints); ops::leaky_relu_(t); }, "aten::leaky_relu_: \"leaky_relu_cpu\" not implemented for 'Long'");
  fails([&] { Tensor t = ops::clone(ints); ops::elu_(t); }, "\"elu_cpu\" not implemented for 'Long'");
  fails([&] { Tensor t = ops::clone(bools); ops::hardtanh_(t); }, "aten::hardtanh_: Bool inputs not supported for hardtanh");
  // Meta tensors take the same rules.
  Tensor m = ops::empty({3}, {.dtype = DType::kInt64, .device = kMeta});
  fails([&] { ops::pow_(m, 0.5); }, "Found dtype Long but expected Float");
  fails([&] { ops::clamp_(m, 0.5, 1.5); }, "can't be cast to the desired output type long int");
  EXPECT_TRUE(ops::clamp_(m, 0, 1).device().is_meta());
}

// round.decimals: values from torch 1.13 (f32 and f64 of the same f32
// inputs): x * 10^d rounded half to even in self's dtype, then divided; a
// negative decimals divides first; 10^40 is inf in f32, so every value is NaN.
TEST(PointwiseTest, RoundWithDecimalsRoundsAsATen) {
  const Tensor x = ops::tensor({2.675, -2.675, 0.5, 2.5, 1234.5678, 25, -35, kNaN, kInf, 0.125, 1e30}, {11});
  EXPECT_THAT(values(ops::round(x, 2)),
              ElementsAre(2.680000066757202, -2.680000066757202, 0.5, 2.5, 1234.5699462890625, 25, -35,
                          ::testing::IsNan(), kInf, 0.11999999731779099, 1.0000000150474662e+30));
  EXPECT_THAT(values(ops::round(x, -2)), ElementsAre(0, 0, 0, 0, 1200, 0, 0, ::testing::IsNan(), kInf, 0,
                                                     1.00000009060533e+30));
  EXPECT_TRUE(std::signbit(values(ops::round(x, -1))[1]));  // -2.675 rounds to -0.0
  EXPECT_THAT(values(ops::round(x, 0)), ElementsAre(3, -3, 0, 2, 1235, 25, -35, ::testing::IsNan(), kInf, 0, 1e30f));
  for (double v : values(ops::round(x, 40))) EXPECT_TRUE(std::isnan(v));
  const Tensor d = ops::to(x, DType::kFloat64);
  EXPECT_THAT(values(ops::round(d, 2)), ElementsAre(2.67, -2.67, 0.5, 2.5, 1234.57, 25, -35, ::testing::IsNan(), kInf,
                                                    0.12, 1.0000000150474662e+30));
  EXPECT_THAT(values(ops::round(d, -1)), ElementsAre(0, 0, 0, 0, 1230, 20, -40, ::testing::IsNan(), kInf, 0,
                                                     1.0000000150474662e+30));
  EXPECT_THAT(values(ops::round(d, -40)), ElementsAre(0, 0, 0, 0, 0, 0, 0, ::testing::IsNan(), kInf, 0, 0));
  // No overflow at the ends of int64: 10^|decimals| is inf.
  for (int64_t dec : {std::numeric_limits<int64_t>::max(), std::numeric_limits<int64_t>::min()}) {
    EXPECT_TRUE(std::isnan(values(ops::round(d, dec))[0]));
  }
  // bf16 computes in f32 as ATen 2.x (1.13 rounded in bf16: 0.35 -> 0.4).
  EXPECT_THAT(values(ops::round(ops::tensor({0.35, 2.675, 1.25}, {3}, DType::kBFloat16), 1)),
              ElementsAre(0.30078125, 2.703125, 1.203125));
  const Tensor t = ops::t(ops::tensor({0.1234, 5.6789, -9.8765, 0.5}, {2, 2}));
  const Tensor r = ops::round(t, 2);
  EXPECT_THAT(values(ops::contiguous(r)), ElementsAre(0.11999999731779099, -9.880000114440918, 5.679999828338623, 0.5));
  EXPECT_THAT(r.strides(), ElementsAre(1, 2));  // elementwise: a transposed self gives a transposed result
  EXPECT_THAT([&] { ops::round(i64({1, 2}), 1); },
              ThrowsMessage<Error>(HasSubstr("aten::round: \"round_cpu\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::round(i64({1, 2}), 0); },
              ThrowsMessage<Error>(HasSubstr("\"round_vml_cpu\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::round(ops::tensor({1}, {1}, DType::kBool), 1); },
              ThrowsMessage<Error>(HasSubstr("\"round_cpu\" not implemented for 'Bool'")));
}

TEST(PointwiseTest, RoundInPlaceWithDecimals) {
  Tensor x = ops::tensor({1.26, 2.35}, {2});
  Tensor& same = ops::round_(x, 1);
  EXPECT_EQ(&same, &x);
  EXPECT_THAT(values(x), ElementsAre(1.2999999523162842, 2.4000000953674316));
  Tensor e = ops::expand(ops::zeros({3}), {2, 3});
  EXPECT_THAT([&] { ops::round_(e, 1); },
              ThrowsMessage<Error>(HasSubstr("aten::round_: unsupported operation: more than one element of the "
                                             "written-to tensor refers to a single memory location.")));
  Tensor l = i64({1});
  EXPECT_THAT([&] { ops::round_(l, 1); }, ThrowsMessage<Error>(HasSubstr("\"round_cpu\" not implemented for 'Long'")));
  Tensor m = ops::empty({2, 3}, {.device = kMeta});
  EXPECT_EQ(&ops::round_(m, -1), &m);
  EXPECT_EQ(ops::round(m, 3).sizes(), m.sizes());
  EXPECT_THAT([&] { ops::round(ops::empty({2}, {.dtype = DType::kInt64, .device = kMeta}), 2); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Long'")));
}

TEST(PointwiseTest, MetaTensorsFollowTheSameRules) {
  const Tensor m = ops::empty({2, 3}, {.dtype = DType::kInt64, .device = kMeta});
  EXPECT_EQ(ops::div(m, 2, "floor").dtype(), DType::kInt64);
  EXPECT_EQ(ops::atan2(m, m).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::isnan(m).dtype(), DType::kBool);
  EXPECT_EQ(ops::clamp(m, 0.5).dtype(), DType::kFloat32);
  EXPECT_THAT([&] { ops::leaky_relu(m); }, ThrowsMessage<Error>(HasSubstr("not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::bitwise_or(ops::empty({2, 3}, {.device = kMeta}), m); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Float'")));
}

}  // namespace
}  // namespace opspec
