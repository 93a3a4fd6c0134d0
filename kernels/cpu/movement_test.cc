// Tests of the movement ops' CPU and Meta kernels (movement.cc, group_norm.cc):
// constant_pad_nd, upsample_nearest2d (+ backward), native_group_norm (+
// backward), flip, roll and repeat against hand-computed values (PyTorch's
// results for the same calls), every dtype, strided inputs, and PyTorch's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "runtime/ops/ops.h"

namespace opspec {
namespace movement_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Pointwise;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor floats(std::vector<double> v, IntArrayRef shape, DType dt = DType::kFloat32) {
  return ops::tensor(std::move(v), shape, dt);
}
Tensor arange(int64_t n, IntArrayRef shape, DType dt = DType::kFloat32) {
  return ops::view(ops::arange(n, {.dtype = dt}), shape);
}
Tensor meta(IntArrayRef shape, DType dt = DType::kFloat32) { return ops::empty(shape, {.dtype = dt, .device = kMeta}); }

// ---- constant_pad_nd ----

TEST(ConstantPadNdTest, PadsAndCropsLastDimsFirst) {
  // [[0, 1, 2], [3, 4, 5]] with pad (1, -1) on dim 1 and (0, 1) on dim 0, value 7.
  const Tensor out = ops::constant_pad_nd(arange(6, {2, 3}), {1, -1, 0, 1}, 7);
  EXPECT_THAT(out.sizes(), ElementsAre(3, 3));
  EXPECT_THAT(values(out), ElementsAre(7, 0, 1, 7, 3, 4, 7, 7, 7));
  // Only crops: the kept block, a fresh tensor.
  const Tensor x = arange(6, {2, 3});
  const Tensor crop = ops::constant_pad_nd(x, {-1, 0});
  EXPECT_THAT(values(crop), ElementsAre(1, 2, 4, 5));
  EXPECT_FALSE(crop.is_alias_of(x));
  // Zero-size results (2.x allows them) and empty inputs.
  EXPECT_THAT(ops::constant_pad_nd(x, {-3, 0}).sizes(), ElementsAre(2, 0));
  EXPECT_THAT(values(ops::constant_pad_nd(ops::empty({0}), {1, 1}, 2)), ElementsAre(2, 2));
  // Hostile sizes: an empty result builds no index tables; an overflowing one is an error.
  EXPECT_THAT(ops::constant_pad_nd(ops::empty({0, 3}), {1000000000000, 0}).sizes(), ElementsAre(0, 1000000000003));
  EXPECT_THAT(ops::repeat(ops::empty({0}), {1000000000000, 1}).sizes(), ElementsAre(1000000000000, 0));
  EXPECT_THAT([&] { ops::constant_pad_nd(ops::empty({1}), {4000000000000000000, 0}); },
              ThrowsMessage<Error>(HasSubstr("overflowed")));
}

TEST(ConstantPadNdTest, EveryDtypeAndStridedInputs) {
  for (DType dt : {DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64, DType::kInt32}) {
    const Tensor out = ops::constant_pad_nd(arange(3, {3}, dt), {2, 1}, 9);
    EXPECT_EQ(out.dtype(), dt);
    EXPECT_THAT(values(out), ElementsAre(9, 9, 0, 1, 2, 9)) << dtype_short_name(dt);
  }
  const Tensor b = ops::constant_pad_nd(floats({1, 0}, {2}, DType::kBool), {1, 0}, true);
  EXPECT_THAT(values(b), ElementsAre(1, 1, 0));
  // A transposed input: [[0, 3], [1, 4], [2, 5]] padded on the left.
  EXPECT_THAT(values(ops::constant_pad_nd(ops::t(arange(6, {2, 3})), {1, 0})),
              ElementsAre(0, 0, 3, 0, 1, 4, 0, 2, 5));
  EXPECT_THAT(ops::constant_pad_nd(meta({2, 3}), {1, 2, 3, 4}).sizes(), ElementsAre(9, 6));
}

TEST(ConstantPadNdTest, PyTorchErrors) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_THAT([&] { ops::constant_pad_nd(x, {1}); },
              ThrowsMessage<Error>(HasSubstr("Length of pad must be even but instead it equals 1")));
  EXPECT_THAT([&] { ops::constant_pad_nd(x, {1, 1, 1, 1, 1, 1}); },
              ThrowsMessage<Error>(HasSubstr("Length of pad should be no more than twice the number of dimensions of "
                                             "the input. Pad length is 6while the input has 2dimensions.")));
  EXPECT_THAT([&] { ops::constant_pad_nd(x, {-2, -2}); },
              ThrowsMessage<Error>(HasSubstr("narrow(): length must be non-negative.")));
  EXPECT_THAT([&] { ops::constant_pad_nd(x, {-2, -2, 1, 0}); },
              ThrowsMessage<Error>(HasSubstr("narrow(): length must be non-negative.")));
  EXPECT_THAT([&] { ops::constant_pad_nd(ops::empty({2, 1}), {-3, 1}); },
              ThrowsMessage<Error>(HasSubstr("narrow(): length must be non-negative.")));
  EXPECT_THAT([&] { ops::constant_pad_nd(ops::empty({2, 3}, {.dtype = DType::kInt32}), {1, 1}, 1e10); },
              ThrowsMessage<Error>(HasSubstr("value cannot be converted to type int32_t without overflow")));
}

// ---- upsample_nearest2d ----

TEST(UpsampleNearest2dTest, PyTorchNearestIndices) {
  const Tensor x = arange(6, {1, 1, 2, 3});
  // Sizes only: scale = in / out (rows 2 -> 3: 0, 0, 1; cols 3 -> 5: 0, 0, 1, 1, 2).
  EXPECT_THAT(values(ops::upsample_nearest2d(x, {3, 5})),
              ElementsAre(0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5));
  // Given scales: 1 / scale (cols: floor(o / 1.2) = 0, 0, 1, 2, 2).
  EXPECT_THAT(values(ops::upsample_nearest2d(x, {3, 5}, 1.7, 1.2)),
              ElementsAre(0, 0, 1, 2, 2, 0, 0, 1, 2, 2, 3, 3, 4, 5, 5));
  // Twice the size is o >> 1; the same size copies.
  EXPECT_THAT(values(ops::upsample_nearest2d(arange(2, {1, 1, 1, 2}), {1, 4})), ElementsAre(0, 0, 1, 1));
  EXPECT_THAT(values(ops::upsample_nearest2d(x, {2, 3})), ElementsAreArray(values(x)));
  // Downsampling skips; a channels-last-like strided input; f64 and bf16.
  EXPECT_THAT(values(ops::upsample_nearest2d(arange(16, {1, 1, 4, 4}), {2, 2})), ElementsAre(0, 2, 8, 10));
  const Tensor strided = ops::permute(arange(12, {1, 2, 3, 2}), {0, 3, 1, 2});  // [1, 2, 2, 3]
  EXPECT_THAT(values(ops::upsample_nearest2d(strided, {2, 6})),
              ElementsAreArray(values(ops::upsample_nearest2d(ops::contiguous(strided), {2, 6}))));
  for (DType dt : {DType::kFloat64, DType::kBFloat16, DType::kFloat16}) {
    EXPECT_THAT(values(ops::upsample_nearest2d(arange(6, {1, 1, 2, 3}, dt), {3, 5})),
                ElementsAre(0, 0, 1, 1, 2, 0, 0, 1, 1, 2, 3, 3, 4, 4, 5));
  }
  EXPECT_THAT(ops::upsample_nearest2d(meta({2, 3, 4, 5}), {7, 9}).sizes(), ElementsAre(2, 3, 7, 9));
  EXPECT_THAT(ops::upsample_nearest2d(ops::empty({0, 2, 3, 3}), {4, 4}).sizes(), ElementsAre(0, 2, 4, 4));
}

TEST(UpsampleNearest2dTest, VecSizesFromScaleFactors) {
  const Tensor x = arange(6, {1, 1, 2, 3});
  // Factors (1.7, 1.2): output floor(2 * 1.7) = 3, floor(3 * 1.2) = 3, indices by 1 / factor.
  const Tensor out = ops::upsample_nearest2d_vec(x, std::nullopt, std::vector<double>{1.7, 1.2});
  EXPECT_THAT(out.sizes(), ElementsAre(1, 1, 3, 3));
  EXPECT_THAT(values(out), ElementsAre(0, 1, 2, 0, 1, 2, 3, 4, 5));
  const std::vector<int64_t> size = {4, 6};
  EXPECT_THAT(values(ops::upsample_nearest2d_vec(x, IntArrayRef(size), std::nullopt)),
              ElementsAreArray(values(ops::upsample_nearest2d(x, {4, 6}))));
  EXPECT_THAT([&] { ops::upsample_nearest2d_vec(x, IntArrayRef(size), std::vector<double>{2, 2}); },
              ThrowsMessage<Error>(HasSubstr("Must specify exactly one of output_size and scale_factors")));
  EXPECT_THAT([&] { ops::upsample_nearest2d_vec(x, std::nullopt, std::nullopt); },
              ThrowsMessage<Error>(HasSubstr("Must specify exactly one of output_size and scale_factors")));
  EXPECT_THAT([&] { ops::upsample_nearest2d_vec(x, std::nullopt, std::vector<double>{2}); },
              ThrowsMessage<Error>(HasSubstr("scale_factors->size()) == spatial_dimensions to be true")));
}

TEST(UpsampleNearest2dTest, PyTorchErrors) {
  const Tensor x = ops::randn({1, 2, 3, 3});
  EXPECT_THAT([&] { ops::upsample_nearest2d(x, {0, 2}); },
              ThrowsMessage<Error>(HasSubstr("Input and output sizes should be greater than 0, but got input (H: 3, "
                                             "W: 3) output (H: 0, W: 2)")));
  EXPECT_THAT([&] { ops::upsample_nearest2d(ops::randn({2, 3}), {2, 2}); },
              ThrowsMessage<Error>(HasSubstr("It is expected input_size equals to 4, but got size 2")));
  EXPECT_THAT([&] { ops::upsample_nearest2d(x, {2}); },
              ThrowsMessage<Error>(HasSubstr("It is expected output_size equals to 2, but got size 1")));
  EXPECT_THAT([&] { ops::upsample_nearest2d(ops::empty({1, 0, 3, 3}), {2, 2}); },
              ThrowsMessage<Error>(HasSubstr("Non-empty 4D data tensor expected but got a tensor with sizes [1, 0, 3, 3]")));
  EXPECT_THAT([&] { ops::upsample_nearest2d(ops::empty({1, 1, 3, 3}, {.dtype = DType::kInt64}), {2, 2}); },
              ThrowsMessage<Error>(HasSubstr("\"upsample_nearest2d\" not implemented for 'Long'")));
}

TEST(UpsampleNearest2dBackwardTest, SumsTheCopiedPixels) {
  // Rows 2 -> 3 map (0, 0, 1), cols 3 -> 5 map (0, 0, 1, 1, 2): counts [[4, 4, 2], [2, 2, 1]].
  const Tensor g = ops::ones({1, 1, 3, 5});
  EXPECT_THAT(values(ops::upsample_nearest2d_backward(g, {3, 5}, {1, 1, 2, 3})), ElementsAre(4, 4, 2, 2, 2, 1));
  // Distinct values: input (0, 0) gets outputs (0, 0), (0, 1), (1, 0), (1, 1).
  const Tensor a = arange(15, {1, 1, 3, 5});
  EXPECT_THAT(values(ops::upsample_nearest2d_backward(a, {3, 5}, {1, 1, 2, 3})),
              ElementsAre(0 + 1 + 5 + 6, 2 + 3 + 7 + 8, 4 + 9, 10 + 11, 12 + 13, 14));
  // Downsampling: skipped inputs get zero; given scales; a transposed grad.
  EXPECT_THAT(values(ops::upsample_nearest2d_backward(ops::ones({1, 1, 1, 2}), {1, 2}, {1, 1, 1, 4})),
              ElementsAre(1, 0, 1, 0));
  EXPECT_THAT(values(ops::upsample_nearest2d_backward(ops::ones({1, 1, 1, 5}), {1, 5}, {1, 1, 1, 3}, 1.0, 1.2)),
              ElementsAre(2, 1, 2));
  const Tensor gt = ops::transpose(arange(15, {1, 1, 5, 3}), 2, 3);
  EXPECT_THAT(values(ops::upsample_nearest2d_backward(gt, {3, 5}, {1, 1, 2, 3})),
              ElementsAreArray(values(ops::upsample_nearest2d_backward(ops::contiguous(gt), {3, 5}, {1, 1, 2, 3}))));
  EXPECT_EQ(ops::upsample_nearest2d_backward(meta({1, 1, 3, 5}, DType::kFloat64), {3, 5}, {1, 1, 2, 3}).dtype(),
            DType::kFloat64);
  EXPECT_THAT([&] { ops::upsample_nearest2d_backward(ops::ones({1, 2, 4, 4}), {4, 5}, {1, 2, 3, 3}); },
              ThrowsMessage<Error>(HasSubstr("Expected grad_output to have the same shape as output; output.size(3) = "
                                             "5 but got grad_output.size(3) = 4")));
  EXPECT_THAT([&] { ops::upsample_nearest2d_backward(ops::ones({1, 2, 4}), {4, 5}, {1, 2, 3, 3}); },
              ThrowsMessage<Error>(HasSubstr("Expected grad_output to be a tensor of dimension 4 but got: dimension 3")));
}

// ---- native_group_norm ----

TEST(NativeGroupNormTest, NormalizesEachGroup) {
  // N = 1, C = 2, HxW = 2, one group: x = [1, 3, 5, 7], mean 4, var 5.
  const Tensor x = floats({1, 3, 5, 7}, {1, 2, 2}, DType::kFloat64);
  const Tensor w = floats({2, 3}, {2}, DType::kFloat64), b = floats({0.5, -1}, {2}, DType::kFloat64);
  auto [y, mean, rstd] = ops::native_group_norm(x, w, b, 1, 2, 2, 1, 1e-5);
  const double r = 1 / std::sqrt(5 + 1e-5);
  EXPECT_THAT(mean.sizes(), ElementsAre(1, 1));
  EXPECT_THAT(values(mean), ElementsAre(DoubleNear(4, 1e-12)));
  EXPECT_THAT(values(rstd), ElementsAre(DoubleNear(r, 1e-12)));
  EXPECT_THAT(values(y), Pointwise(DoubleNear(1e-12), std::vector<double>{-3 * r * 2 + 0.5, -1 * r * 2 + 0.5,
                                                                          1 * r * 3 - 1, 3 * r * 3 - 1}));
  // Two groups of one channel each, no affine: each channel normalized alone.
  auto [y2, mean2, rstd2] = ops::native_group_norm(x, std::nullopt, std::nullopt, 1, 2, 2, 2, 0);
  EXPECT_THAT(values(mean2), ElementsAre(DoubleNear(2, 1e-12), DoubleNear(6, 1e-12)));
  EXPECT_THAT(values(y2), Pointwise(DoubleNear(1e-12), std::vector<double>{-1, 1, -1, 1}));
  // f32 and a strided input give the same; half keeps half statistics, float parameters make them float.
  const Tensor xs = ops::permute(ops::randn({2, 6, 4}), {0, 2, 1});  // [2, 4, 6], not contiguous
  auto [ya, ma, ra] = ops::native_group_norm(xs, std::nullopt, std::nullopt, 2, 4, 6, 2, 1e-5);
  auto [yb, mb, rb] = ops::native_group_norm(ops::contiguous(xs), std::nullopt, std::nullopt, 2, 4, 6, 2, 1e-5);
  EXPECT_TRUE(ops::allclose(ya, yb, 0, 0));
  const Tensor h = ops::to(xs, DType::kFloat16);
  EXPECT_EQ(std::get<1>(ops::native_group_norm(h, std::nullopt, std::nullopt, 2, 4, 6, 2, 1e-5)).dtype(),
            DType::kFloat16);
  EXPECT_EQ(std::get<2>(ops::native_group_norm(h, ops::ones({4}), std::nullopt, 2, 4, 6, 2, 1e-5)).dtype(),
            DType::kFloat32);
  // Empty input: zeros and NaN statistics.
  auto [ye, me, re] = ops::native_group_norm(ops::empty({0, 4, 3}), std::nullopt, std::nullopt, 0, 4, 3, 2, 1e-5);
  EXPECT_THAT(me.sizes(), ElementsAre(0, 2));
  auto [yz, mz, rz] = ops::native_group_norm(ops::empty({2, 4, 0}), std::nullopt, std::nullopt, 2, 4, 0, 2, 1e-5);
  EXPECT_THAT(values(mz), ElementsAre(0, 0, 0, 0));
  EXPECT_TRUE(std::isnan(values(rz)[0]));
  auto [ym, mm, rm] = ops::native_group_norm(meta({2, 4, 3}), std::nullopt, std::nullopt, 2, 4, 3, 2, 1e-5);
  EXPECT_THAT(rm.sizes(), ElementsAre(2, 2));
}

TEST(NativeGroupNormTest, PyTorchErrors) {
  const Tensor x = ops::randn({2, 4, 3});
  EXPECT_THAT([&] { ops::group_norm(x, 3); },
              ThrowsMessage<Error>(HasSubstr("Expected number of channels in input to be divisible by num_groups, but "
                                             "got input of shape [2, 4, 3] and num_groups=3")));
  EXPECT_THAT([&] { ops::native_group_norm(x, std::nullopt, std::nullopt, 2, 4, 3, 0, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected num groups to be greater than 0, got 0")));
  EXPECT_THAT([&] { ops::group_norm(x, 2, ops::randn({3})); },
              ThrowsMessage<Error>(HasSubstr("Expected weight to be a vector of size equal to the number of channels "
                                             "in input, but got weight of shape [3] and input of shape [2, 4, 3]")));
  EXPECT_THAT([&] { ops::group_norm(x, 2, std::nullopt, ops::randn({3})); },
              ThrowsMessage<Error>(HasSubstr("Expected bias to be a vector of size equal to the number of channels in "
                                             "input, but got bias of shape [0] and input of shape [2, 4, 3]")));
  EXPECT_THAT([&] { ops::group_norm(ops::randn({4}), 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-1, 0], but got 1)")));
  EXPECT_THAT([&] { ops::group_norm(ops::to(x, DType::kInt32), 2); },
              ThrowsMessage<Error>(HasSubstr("\"GroupNormKernelImpl\" not implemented for 'Int'")));
  EXPECT_THAT([&] { ops::native_group_norm(x, std::nullopt, std::nullopt, 2, 4, 4, 2, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected X.numel() == N * C * HxW to be true")));
  const auto stats = ops::native_group_norm(x, std::nullopt, std::nullopt, 2, 4, 3, 2, 1e-5);
  // Plain variables: clang 14 rejects lambdas capturing structured bindings.
  const Tensor mean = std::get<1>(stats), rstd = std::get<2>(stats);
  EXPECT_THAT(
      [&] {
        ops::native_group_norm_backward(ops::to(x, DType::kFloat64), x, mean, rstd, std::nullopt, 2, 4, 3, 2,
                                        {true, true, true});
      },
      ThrowsMessage<Error>(HasSubstr("Expected scalar types of X and dY are same.")));
}

// group_norm_loss: sum(native_group_norm(x, w, b) * g) in double, for central differences.
double group_norm_loss(const Tensor& x, const Tensor& w, const Tensor& b, const Tensor& g, int64_t group) {
  const Tensor y = std::get<0>(ops::native_group_norm(x, w, b, x.size(0), x.size(1), x.size(2), group, 1e-5));
  return ops::sum(ops::mul(y, g)).item<double>();
}

// perturbed: t with element i moved by h (a new tensor).
Tensor perturbed(const Tensor& t, int64_t i, double h) {
  std::vector<double> v = values(t);
  v[static_cast<size_t>(i)] += h;
  return ops::tensor(v, t.sizes(), t.dtype());
}

TEST(NativeGroupNormBackwardTest, MatchesCentralDifferences) {
  manual_seed(3);
  const auto f64 = TensorOptions{.dtype = DType::kFloat64};
  const Tensor x = ops::randn({2, 6, 3}, f64), w = ops::randn({6}, f64), b = ops::randn({6}, f64);
  const Tensor g = ops::randn({2, 6, 3}, f64);
  constexpr int64_t kGroup = 3;
  auto [y, mean, rstd] = ops::native_group_norm(x, w, b, 2, 6, 3, kGroup, 1e-5);
  auto [dx, dw, db] = ops::native_group_norm_backward(g, x, mean, rstd, w, 2, 6, 3, kGroup, {true, true, true});
  constexpr double kH = 1e-6;
  for (int64_t i = 0; i < x.numel(); ++i) {
    const double num = (group_norm_loss(perturbed(x, i, kH), w, b, g, kGroup) -
                        group_norm_loss(perturbed(x, i, -kH), w, b, g, kGroup)) / (2 * kH);
    EXPECT_NEAR(values(dx)[static_cast<size_t>(i)], num, 1e-6) << "dx " << i;
  }
  for (int64_t i = 0; i < w.numel(); ++i) {
    const double nw = (group_norm_loss(x, perturbed(w, i, kH), b, g, kGroup) -
                       group_norm_loss(x, perturbed(w, i, -kH), b, g, kGroup)) / (2 * kH);
    const double nb = (group_norm_loss(x, w, perturbed(b, i, kH), g, kGroup) -
                       group_norm_loss(x, w, perturbed(b, i, -kH), g, kGroup)) / (2 * kH);
    EXPECT_NEAR(values(dw)[static_cast<size_t>(i)], nw, 1e-6) << "dw " << i;
    EXPECT_NEAR(values(db)[static_cast<size_t>(i)], nb, 1e-6) << "db " << i;
  }
  // The mask leaves outputs undefined; an f32 run agrees with f64; empty input gives zeros.
  auto [mx, mw, mb] = ops::native_group_norm_backward(g, x, mean, rstd, w, 2, 6, 3, kGroup, {true, false, false});
  EXPECT_TRUE(mx.defined());
  EXPECT_FALSE(mw.defined());
  EXPECT_FALSE(mb.defined());
  const auto to32 = [](const Tensor& t) { return ops::to(t, DType::kFloat32); };
  auto [fx, fw, fb] = ops::native_group_norm_backward(to32(g), to32(x), to32(mean), to32(rstd), to32(w), 2, 6, 3,
                                                      kGroup, {true, true, true});
  EXPECT_TRUE(ops::allclose(ops::to(fx, DType::kFloat64), dx, 1e-4, 1e-4));
  EXPECT_TRUE(ops::allclose(ops::to(fw, DType::kFloat64), dw, 1e-4, 1e-4));
  auto [ex, ew, eb] = ops::native_group_norm_backward(ops::empty({0, 6, 3}), ops::empty({0, 6, 3}),
                                                      ops::empty({0, 3}), ops::empty({0, 3}), std::nullopt, 0, 6, 3,
                                                      kGroup, {true, true, true});
  EXPECT_THAT(values(ew), ElementsAre(0, 0, 0, 0, 0, 0));
}

// ---- flip, roll, repeat ----

TEST(FlipTest, ReversesEachDim) {
  const Tensor x = arange(6, {2, 3});
  EXPECT_THAT(values(ops::flip(x, {-1})), ElementsAre(2, 1, 0, 5, 4, 3));
  EXPECT_THAT(values(ops::flip(x, {0, 1})), ElementsAre(5, 4, 3, 2, 1, 0));
  EXPECT_THAT(values(ops::flip(x, {})), ElementsAreArray(values(x)));
  EXPECT_THAT(values(ops::flip(ops::t(x), {0})), ElementsAre(2, 5, 1, 4, 0, 3));
  EXPECT_THAT(values(ops::flip(floats({1, 0}, {2}, DType::kBool), {0})), ElementsAre(0, 1));
  EXPECT_EQ(ops::flip(arange(6, {2, 3}, DType::kInt32), {1}).dtype(), DType::kInt32);
  EXPECT_THAT(values(ops::flip(ops::scalar_tensor(3), {0})), ElementsAre(3));
  EXPECT_THAT([&] { ops::flip(x, {0, -2}); },
              ThrowsMessage<Error>(HasSubstr("dim 0 appears multiple times in the list of dims")));
  EXPECT_THAT([&] { ops::flip(x, {2}); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_THAT(ops::flip(meta({2, 3}), {0}).sizes(), ElementsAre(2, 3));
}

TEST(RollTest, ShiftsAndWraps) {
  const Tensor x = arange(6, {2, 3}, DType::kInt64);
  EXPECT_THAT(values(ops::roll(x, {1, 1}, {0, 1})), ElementsAre(5, 3, 4, 2, 0, 1));
  // dims=[]: the flattened tensor rolls, in x's shape.
  EXPECT_THAT(values(ops::roll(x, {1})), ElementsAre(5, 0, 1, 2, 3, 4));
  EXPECT_THAT(values(ops::roll(ops::t(x), {-1})), ElementsAre(3, 1, 4, 2, 5, 0));
  // Negative and large shifts wrap; a repeated dim adds up.
  EXPECT_THAT(values(ops::roll(x, {-4}, {1})), ElementsAre(1, 2, 0, 4, 5, 3));
  EXPECT_THAT(values(ops::roll(x, {1, 1}, {1, 1})), ElementsAre(1, 2, 0, 4, 5, 3));
  EXPECT_THAT(values(ops::roll(ops::t(x), {1}, {0})), ElementsAre(2, 5, 0, 3, 1, 4));
  EXPECT_THAT(ops::roll(ops::empty({0, 3}), {1}, {0}).sizes(), ElementsAre(0, 3));
  EXPECT_THAT([&] { ops::roll(x, {1, 2}, {0}); },
              ThrowsMessage<Error>(HasSubstr("shifts and dimensions must align. shifts: 2, dims:1")));
  EXPECT_THAT([&] { ops::roll(x, {}, {}); }, ThrowsMessage<Error>(HasSubstr("`shifts` required")));
  EXPECT_THAT([&] { ops::roll(x, {1, 2}, {}); },
              ThrowsMessage<Error>(HasSubstr("shifts and dimensions must align. shifts: 2, dims:0")));
  EXPECT_THAT([&] { ops::roll(ops::scalar_tensor(1.0), {1}, {0}); },
              ThrowsMessage<Error>(HasSubstr("Dimension specified as 0 but tensor has no dimensions")));
  EXPECT_THAT(values(ops::roll(ops::scalar_tensor(1.0), {1})), ElementsAre(1));  // flattened: fine
  EXPECT_THAT([&] { ops::roll(x, {1}, {3}); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 3)")));
}

// PyTorch's CPU roll is narrow + cat per dim, so a channels-last input stays
// channels-last unless a piece is empty (a shift by a multiple of the size).
// Strides printed by torch 1.13 (its CUDA roll and 2.x's meta are row-major).
TEST(RollTest, KeepsTheLayoutCatGives) {
  const Tensor x = ops::contiguous(arange(120, {2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  auto strides = [](const Tensor& t) { return std::vector<int64_t>(t.strides().begin(), t.strides().end()); };
  const std::vector<int64_t> cl = {60, 1, 15, 3}, row = {60, 20, 5, 1};
  EXPECT_EQ(strides(ops::roll(x, {1}, {2})), cl);
  EXPECT_EQ(strides(ops::roll(x, {4}, {2})), row);
  EXPECT_EQ(strides(ops::roll(x, {0}, {1})), row);
  EXPECT_EQ(strides(ops::roll(x, {3}, {1})), row);
  EXPECT_EQ(strides(ops::roll(x, {1, 2}, {2, 3})), cl);
  EXPECT_EQ(strides(ops::roll(x, {4, 1}, {2, 3})), row);
  EXPECT_EQ(strides(ops::roll(x, {2}, {-1})), cl);
  EXPECT_EQ(strides(ops::roll(x, {1, 1}, {1, 0})), cl);
  EXPECT_EQ(strides(ops::roll(x, {1})), row);  // no dims: flatten, roll, view
  EXPECT_THAT(strides(ops::roll(ops::transpose(arange(24, {2, 3, 4}), 1, 2), {1}, {1})), ElementsAre(12, 3, 1));
  const Tensor z = ops::clone(arange(6, {2, 3, 1, 1}), MemoryFormat::kChannelsLast);
  EXPECT_THAT(strides(ops::roll(z, {1}, {1})), ElementsAre(3, 1, 3, 3));
  EXPECT_THAT(strides(ops::roll(arange(6, {2, 3, 1, 1}), {1}, {1})), ElementsAre(3, 1, 1, 1));
  const Tensor e = ops::contiguous(ops::empty({0, 3, 4, 5}), MemoryFormat::kChannelsLast);
  EXPECT_EQ(strides(ops::roll(e, {1}, {1})), std::vector<int64_t>(e.strides().begin(), e.strides().end()));
  // Meta answers as the CPU, so fake cpu tensors have the real strides.
  EXPECT_EQ(strides(ops::roll(ops::empty_like(x, {.device = kMeta}), {1, 2}, {2, 3})), cl);
  EXPECT_EQ(strides(ops::roll(ops::empty_like(x, {.device = kMeta}), {4}, {2})), row);
  // The values do not depend on the layout.
  EXPECT_EQ(values(ops::roll(x, {1, 2}, {2, 3})), values(ops::roll(ops::contiguous(x), {1, 2}, {2, 3})));
}

TEST(RepeatTest, TilesAndAddsLeadingDims) {
  const Tensor x = arange(2, {2});
  EXPECT_THAT(values(ops::repeat(x, {3})), ElementsAre(0, 1, 0, 1, 0, 1));
  const Tensor r = ops::repeat(x, {2, 2});
  EXPECT_THAT(r.sizes(), ElementsAre(2, 4));
  EXPECT_THAT(values(r), ElementsAre(0, 1, 0, 1, 0, 1, 0, 1));
  EXPECT_THAT(values(ops::repeat(ops::t(arange(4, {2, 2})), {1, 2})), ElementsAre(0, 2, 0, 2, 1, 3, 1, 3));
  EXPECT_THAT(ops::repeat(x, {0, 2}).sizes(), ElementsAre(0, 4));
  EXPECT_THAT(values(ops::repeat(ops::scalar_tensor(7), {2})), ElementsAre(7, 7));
  EXPECT_EQ(ops::repeat(floats({1}, {1}, DType::kBFloat16), {2}).dtype(), DType::kBFloat16);
  EXPECT_THAT(ops::repeat(meta({2, 3}), {2, 1, 2}).sizes(), ElementsAre(2, 2, 6));
  EXPECT_THAT([&] { ops::repeat(ops::randn({2, 3}), {2}); },
              ThrowsMessage<Error>(HasSubstr("Number of dimensions of repeat dims can not be smaller than number of "
                                             "dimensions of tensor")));
  EXPECT_THAT([&] { ops::repeat(ops::randn({2, 3}), {-1, 2}); },
              ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -2: [-2, 6]")));
}

}  // namespace
}  // namespace opspec
