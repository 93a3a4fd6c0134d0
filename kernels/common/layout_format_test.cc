// The model ops lay their results out as PyTorch's kernels allocate them
// (See Note [Model op layouts] in layout_format.h), on the CPU and on Meta
// alike, with the values of the row-major computation (the CPU convolution's
// to within rounding: it sums in NHWC order). Strides below were
// printed by python3-torch 1.13 (torch.ops.aten.* on
// randn(2, 3, 8, 8).contiguous(memory_format=torch.channels_last) unless said).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

using ::testing::ElementsAre;

SizeVec strides_of(const Tensor& t) { return SizeVec(t.strides().begin(), t.strides().end()); }

// A tensor of sizes on device (random on the CPU).
Tensor make(IntArrayRef sizes, Device device) {
  return device.is_meta() ? ops::empty(sizes, {.device = device}) : ops::randn(sizes);
}

// channels_last: [N, C, H, W] laid out NHWC (a permuted NHWC tensor).
Tensor channels_last(IntArrayRef nchw, Device device) {
  return ops::permute(make({nchw[0], nchw[2], nchw[3], nchw[1]}, device), {0, 3, 1, 2});
}

class ModelLayoutTest : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { manual_seed(5); }
  Device dev() const { return GetParam(); }
};

TEST_P(ModelLayoutTest, ConvolutionIsChannelsLastWhenItsInputOrWeightIs) {
  const Tensor c = channels_last({2, 3, 8, 8}, dev()), x = make({2, 3, 8, 8}, dev());
  const Tensor w = make({4, 3, 3, 3}, dev());
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  auto conv = [&](const Tensor& in, const Tensor& weight) {
    return ops::convolution(in, weight, std::nullopt, one, zero, one, false, zero, 1);
  };
  EXPECT_THAT(strides_of(conv(c, w)), ElementsAre(144, 1, 24, 4));
  EXPECT_THAT(strides_of(conv(x, channels_last({4, 3, 3, 3}, dev()))), ElementsAre(144, 1, 24, 4));
  EXPECT_THAT(strides_of(conv(x, w)), ElementsAre(144, 36, 6, 1));
  EXPECT_THAT(strides_of(conv(ops::transpose(x, 2, 3), w)), ElementsAre(144, 36, 6, 1));
  // A [4, 3, 1, 1] weight with strides [3, 1, 1, 1] is NCHW (c10's ambiguous case).
  const Tensor w11 = ops::as_strided(make({12}, dev()), {4, 3, 1, 1}, {3, 1, 1, 1});
  EXPECT_THAT(strides_of(conv(x, w11)), ElementsAre(256, 64, 8, 1));
  // Padding, groups and a transposed convolution (2.x's slow_conv_transpose2d; 1.13 gave (1156, 289, 17, 1)).
  const int64_t two[] = {2, 2};
  EXPECT_THAT(strides_of(ops::convolution(c, make({4, 3, 3, 3}, dev()), std::nullopt, one, one, one, false,
                                          zero, 1)),
              ElementsAre(256, 1, 32, 4));
  const Tensor t = ops::convolution(c, make({3, 4, 3, 3}, dev()), std::nullopt, two, zero, one, true, zero, 1);
  EXPECT_THAT(strides_of(t), ElementsAre(1156, 1, 68, 4));
  // An empty input takes PyTorch's Empty backend: contiguous.
  EXPECT_THAT(strides_of(conv(channels_last({0, 3, 8, 8}, dev()), w)), ElementsAre(144, 36, 6, 1));
}

TEST_P(ModelLayoutTest, ConvolutionGradientsTakeTheForwardsLayout) {
  const Tensor c = channels_last({2, 3, 8, 8}, dev()), x = make({2, 3, 8, 8}, dev());
  const Tensor w = make({4, 3, 3, 3}, dev()), go = make({2, 4, 6, 6}, dev());
  const int64_t one[] = {1, 1}, zero[] = {0, 0}, bias[] = {4};
  auto grads = [&](const Tensor& g, const Tensor& in, const Tensor& weight) {
    return ops::convolution_backward(g, in, weight, bias, one, zero, one, false, zero, 1, {true, true, true});
  };
  // grad_output's layout does not matter; input's or weight's does.
  for (const Tensor& g : {go, channels_last({2, 4, 6, 6}, dev())}) {
    auto [gx, gw, gb] = grads(g, c, w);
    EXPECT_THAT(strides_of(gx), ElementsAre(192, 1, 24, 3));
    EXPECT_THAT(strides_of(gw), ElementsAre(27, 1, 9, 3));
    EXPECT_THAT(strides_of(gb), ElementsAre(1));
    auto [hx, hw, hb] = grads(g, x, w);
    EXPECT_THAT(strides_of(hx), ElementsAre(192, 64, 8, 1));
    EXPECT_THAT(strides_of(hw), ElementsAre(27, 9, 3, 1));
  }
  auto [gx, gw, gb] = grads(go, x, channels_last({4, 3, 3, 3}, dev()));
  EXPECT_THAT(strides_of(gx), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(gw), ElementsAre(27, 1, 9, 3));
  // An empty input's gradients are zeros_like (preserve) in PyTorch's Empty backend.
  auto [ex, ew, eb] = grads(make({0, 4, 6, 6}, dev()), channels_last({0, 3, 8, 8}, dev()), w);
  EXPECT_THAT(strides_of(ex), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(ew), ElementsAre(27, 9, 3, 1));
}

TEST_P(ModelLayoutTest, PoolingFollowsSelfsSuggestedFormat) {
  const Tensor c = channels_last({2, 3, 8, 8}, dev());
  auto [out, idx] = ops::max_pool2d_with_indices(c, {2, 2}, {2, 2});
  EXPECT_THAT(strides_of(out), ElementsAre(48, 1, 12, 3));
  EXPECT_THAT(strides_of(idx), ElementsAre(48, 1, 12, 3));
  EXPECT_THAT(strides_of(ops::avg_pool2d(c, {2, 2}, {2, 2})), ElementsAre(48, 1, 12, 3));
  EXPECT_THAT(strides_of(ops::_adaptive_avg_pool2d(c, {3, 3})), ElementsAre(27, 1, 9, 3));
  EXPECT_THAT(strides_of(ops::_adaptive_avg_pool2d(c, {1, 1})), ElementsAre(3, 1, 3, 3));
  // adaptive_avg_pool2d's [1, 1] path: mean.dim, then as_strided_ to (C, 1, C, C) (torch 1.13).
  EXPECT_THAT(strides_of(ops::adaptive_avg_pool2d(c, {1, 1})), ElementsAre(3, 1, 3, 3));
  EXPECT_THAT(strides_of(ops::adaptive_avg_pool2d(make({2, 3, 8, 8}, dev()), {1, 1})), ElementsAre(3, 1, 1, 1));
  if (dev().is_cpu()) {
    EXPECT_TRUE(ops::equal(ops::adaptive_avg_pool2d(c, {1, 1}), ops::mean(c, {-1, -2}, true)));
  }
  // transpose(2, 3) is not channels-last: contiguous.
  const Tensor tr = ops::transpose(make({2, 3, 8, 8}, dev()), 2, 3);
  EXPECT_THAT(strides_of(std::get<1>(ops::max_pool2d_with_indices(tr, {2, 2}, {2, 2}))), ElementsAre(48, 16, 4, 1));
  // A 3-D input never suggests channels-last.
  const Tensor hwc = ops::permute(make({8, 8, 3}, dev()), {2, 0, 1});
  EXPECT_THAT(strides_of(ops::_adaptive_avg_pool2d(hwc, {3, 3})), ElementsAre(9, 3, 1));
  // Backward: self's format decides; grad_output's does not.
  const Tensor g4 = make({2, 3, 4, 4}, dev()), g4_cl = channels_last({2, 3, 4, 4}, dev());
  const Tensor x = make({2, 3, 8, 8}, dev());
  for (const Tensor& g : {g4, g4_cl}) {
    EXPECT_THAT(strides_of(ops::max_pool2d_with_indices_backward(g, c, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false, idx)),
                ElementsAre(192, 1, 24, 3));
    EXPECT_THAT(strides_of(ops::avg_pool2d_backward(g, c, {2, 2}, {2, 2}, {0, 0}, false, true, std::nullopt)),
                ElementsAre(192, 1, 24, 3));
  }
  EXPECT_THAT(strides_of(ops::avg_pool2d_backward(g4_cl, x, {2, 2}, {2, 2}, {0, 0}, false, true, std::nullopt)),
              ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::_adaptive_avg_pool2d_backward(make({2, 3, 3, 3}, dev()), c)),
              ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(ops::_adaptive_avg_pool2d_backward(channels_last({2, 3, 3, 3}, dev()), x)),
              ElementsAre(192, 64, 8, 1));
}

TEST_P(ModelLayoutTest, NormsFollowTheInputsSuggestedFormat) {
  const Tensor c = channels_last({2, 3, 8, 8}, dev());
  const Tensor w = make({3}, dev()), b = make({3}, dev());
  for (bool training : {true, false}) {
    const Tensor rm = ops::zeros({3}, {.device = dev()}), rv = ops::ones({3}, {.device = dev()});
    auto [y, m, s] = ops::native_batch_norm(c, w, b, rm, rv, training, 0.1, 1e-5);
    EXPECT_THAT(strides_of(y), ElementsAre(192, 1, 24, 3)) << training;
  }
  // Not channels-last: contiguous (a transposed [5, 3], a permuted [2, 3, 4], transpose(2, 3)).
  auto bn = [](const Tensor& in) {
    return std::get<0>(ops::native_batch_norm(in, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                                              1e-5));
  };
  EXPECT_THAT(strides_of(bn(ops::t(make({3, 5}, dev())))), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(bn(ops::transpose(make({2, 4, 3}, dev()), 1, 2))), ElementsAre(12, 4, 1));
  EXPECT_THAT(strides_of(bn(ops::transpose(make({2, 3, 8, 8}, dev()), 2, 3))), ElementsAre(192, 64, 8, 1));
  // A 5-D channels_last_3d input: channels_last_3d.
  const Tensor c3 = ops::permute(make({2, 2, 4, 4, 3}, dev()), {0, 4, 1, 2, 3});
  EXPECT_THAT(strides_of(bn(c3)), ElementsAre(96, 1, 48, 12, 3));
  // Backward: input's format decides.
  const Tensor mean = make({3}, dev()), invstd = ops::ones({3}, {.device = dev()});
  const Tensor x = make({2, 3, 8, 8}, dev()), g = make({2, 3, 8, 8}, dev());
  auto [gx, gw, gb] = ops::native_batch_norm_backward(g, c, w, std::nullopt, std::nullopt, mean, invstd, true, 1e-5,
                                                      {true, true, true});
  EXPECT_THAT(strides_of(gx), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(gw), ElementsAre(1));
  auto [hx, hw, hb] = ops::native_batch_norm_backward(channels_last({2, 3, 8, 8}, dev()), x, w, std::nullopt,
                                                      std::nullopt, mean, invstd, true, 1e-5, {true, true, true});
  EXPECT_THAT(strides_of(hx), ElementsAre(192, 64, 8, 1));
  // Group norm: channels-last forward; its backward's dX takes X's format (PyTorch 2.x's CPU;
  // Meta answers as the CPU; CUDA's is contiguous, as 2.x's, checked in kernels/cuda/).
  auto [gy, gm, gr] = ops::native_group_norm(c, w, b, 2, 3, 64, 1, 1e-5);
  EXPECT_THAT(strides_of(gy), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(gm), ElementsAre(1, 1));
  auto [dx, dw, db] = ops::native_group_norm_backward(g, c, gm, gr, w, 2, 3, 64, 1, {true, true, true});
  EXPECT_THAT(strides_of(dx), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(dw), ElementsAre(1));
  // A row-major X: a row-major dX, whatever grad's layout.
  auto [ex, ew, eb] = ops::native_group_norm_backward(channels_last({2, 3, 8, 8}, dev()), x, gm, gr, w, 2, 3, 64, 1,
                                                      {true, false, false});
  EXPECT_THAT(strides_of(ex), ElementsAre(192, 64, 8, 1));
}

TEST_P(ModelLayoutTest, UpsampleAndPadFollowTheInputsSuggestedFormat) {
  const Tensor c = channels_last({2, 3, 8, 8}, dev());
  EXPECT_THAT(strides_of(ops::upsample_nearest2d(c, {16, 16})), ElementsAre(768, 1, 48, 3));
  EXPECT_THAT(strides_of(ops::upsample_nearest2d(c, {16, 16}, 2.0, 2.0)), ElementsAre(768, 1, 48, 3));
  // Upsample's backward follows grad_output (it has no self).
  EXPECT_THAT(strides_of(ops::upsample_nearest2d_backward(channels_last({2, 3, 16, 16}, dev()), {16, 16},
                                                          {2, 3, 8, 8})),
              ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(ops::upsample_nearest2d_backward(make({2, 3, 16, 16}, dev()), {16, 16}, {2, 3, 8, 8})),
              ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(c, {1, 1, 1, 1})), ElementsAre(300, 1, 30, 3));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(c, {-1, 1})), ElementsAre(192, 1, 24, 3));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(ops::transpose(make({2, 3, 8, 8}, dev()), 2, 3), {1, 1})),
              ElementsAre(240, 80, 10, 1));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(ops::t(make({3, 4}, dev())), {1, 1})), ElementsAre(5, 1));
  const Tensor c3 = ops::permute(make({2, 2, 4, 4, 3}, dev()), {0, 4, 1, 2, 3});
  EXPECT_THAT(strides_of(ops::constant_pad_nd(c3, {1, 1})), ElementsAre(144, 1, 72, 18, 3));
  // Only crops: PyTorch clones the cropped view (preserve_format).
  EXPECT_THAT(strides_of(ops::constant_pad_nd(c, {-1, 0, -1, 0})), ElementsAre(147, 1, 21, 3));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(c, {0, 0, 0, 0, -1, 0})), ElementsAre(128, 1, 16, 2));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(ops::t(make({3, 4}, dev())), {-1, 0})), ElementsAre(1, 4));
  const Tensor p = ops::permute(make({2, 3, 4}, dev()), {2, 0, 1});  // [4, 2, 3], strides [1, 12, 4]
  EXPECT_THAT(strides_of(ops::constant_pad_nd(p, {-1, 0})), ElementsAre(1, 8, 4));
  EXPECT_THAT(strides_of(ops::constant_pad_nd(ops::slice(make({4, 6}, dev()), 1, 0, 6, 2), {-1, 0})),
              ElementsAre(2, 1));
}

TEST_P(ModelLayoutTest, FlipKeepsTheInputsLayout) {
  // x = randn(2, 3, 4).permute(2, 0, 1): flip(x, [0]).stride() == (1, 12, 4) (empty_like(self)).
  const Tensor p = ops::permute(make({2, 3, 4}, dev()), {2, 0, 1});
  EXPECT_THAT(strides_of(ops::flip(p, {0})), ElementsAre(1, 12, 4));
  EXPECT_THAT(strides_of(ops::flip(channels_last({2, 3, 8, 8}, dev()), {1})), ElementsAre(192, 1, 24, 3));
  // Not dense: dense strides in the input's dim order.
  EXPECT_THAT(strides_of(ops::flip(ops::slice(make({4, 6}, dev()), 1, 0, 6, 2), {0})), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(ops::flip(ops::slice(ops::t(make({6, 4}, dev())), 1, 0, 6, 2), {1})), ElementsAre(1, 4));
}

TEST_P(ModelLayoutTest, NativeDropoutKeepsTheInputsLayout) {
  // Output and mask alike, in training, eval and at p = 1 (See Note [Dropout
  // layout]; torch 1.13: randn(4, 3).t() gives (1, 3), randn(4, 6)[:, ::2] (3, 1)).
  const Tensor t = ops::t(make({4, 3}, dev())), c = channels_last({2, 3, 4, 5}, dev());
  const Tensor p = ops::permute(make({2, 3, 4}, dev()), {2, 0, 1});
  const Tensor sliced = ops::slice(make({4, 6}, dev()), 1, 0, 6, 2);
  for (const auto& [prob, train] : {std::pair{0.5, true}, std::pair{0.0, false}, std::pair{1.0, true}}) {
    SCOPED_TRACE(testing::Message() << "p " << prob << " train " << train);
    for (const auto& [in, want] : {std::pair{t, SizeVec{1, 3}}, std::pair{c, SizeVec{60, 1, 15, 3}},
                                   std::pair{p, SizeVec{1, 12, 4}}, std::pair{sliced, SizeVec{3, 1}}}) {
      auto [out, mask] = ops::native_dropout(in, prob, train);
      EXPECT_EQ(strides_of(out), want) << in.meta_str();
      EXPECT_EQ(strides_of(mask), want) << in.meta_str();
    }
  }
  if (dev().is_cpu()) {  // drawn by logical index: the values of the row-major input's call
    manual_seed(7);
    auto [out, mask] = ops::native_dropout(c, 0.5, true);
    manual_seed(7);
    auto [row_out, row_mask] = ops::native_dropout(ops::contiguous(c), 0.5, true);
    EXPECT_TRUE(ops::equal(out, row_out));
    EXPECT_TRUE(ops::equal(mask, row_mask));
  }
}

TEST_P(ModelLayoutTest, TheseStayContiguous) {
  // PyTorch's kernels allocate these row-major whatever the input's layout.
  const Tensor p = ops::permute(make({2, 3, 4}, dev()), {2, 0, 1});  // [4, 2, 3]
  const Tensor c = channels_last({2, 3, 8, 8}, dev());
  EXPECT_THAT(strides_of(ops::roll(p, {1}, {0})), ElementsAre(6, 3, 1));
  EXPECT_THAT(strides_of(ops::cat({p, p}, 0)), ElementsAre(6, 3, 1));
  EXPECT_THAT(strides_of(ops::repeat(p, {1, 1, 1})), ElementsAre(6, 3, 1));
  EXPECT_THAT(strides_of(ops::repeat(c, {1, 1, 1, 1})), ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::tril(ops::t(make({3, 4}, dev())))), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(ops::softmax(c, 1)), ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::softmax(p, 0)), ElementsAre(6, 3, 1));
  EXPECT_THAT(strides_of(ops::_softmax(p, 0, false)), ElementsAre(6, 3, 1));
  auto [ln, ln_mean, ln_rstd] = ops::native_layer_norm(c, {8}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT(strides_of(ln), ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::sum(c, {1}, true)), ElementsAre(64, 64, 8, 1));
  EXPECT_THAT(strides_of(ops::sum(p, {0})), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(ops::sum(c, {2, 3}, true)), ElementsAre(3, 1, 1, 1));
  EXPECT_THAT(strides_of(ops::mean(c, {1})), ElementsAre(64, 8, 1));
  EXPECT_THAT(strides_of(ops::mm(ops::t(make({4, 3}, dev())), make({4, 5}, dev()))), ElementsAre(5, 1));
}

TEST_P(ModelLayoutTest, CatKeepsAFormatEveryInputSuggests) {
  // PyTorch's cat_compute_output_memory_format: one channels-last format
  // suggested by every input is kept; any mix is row-major (torch 1.13 on
  // [2, 3, 4, 5]: cat([c, c], 1) (120, 1, 30, 6), cat([c, x], 1) (120, 20, 5, 1)).
  const Tensor c = channels_last({2, 3, 4, 5}, dev()), x = make({2, 3, 4, 5}, dev());
  EXPECT_THAT(strides_of(ops::cat({c, c}, 1)), ElementsAre(120, 1, 30, 6));
  EXPECT_THAT(strides_of(ops::cat({c, c}, 0)), ElementsAre(60, 1, 15, 3));
  EXPECT_THAT(strides_of(ops::cat({c, x}, 1)), ElementsAre(120, 20, 5, 1));
  EXPECT_THAT(strides_of(ops::cat({x, c}, 0)), ElementsAre(60, 20, 5, 1));
  EXPECT_THAT(strides_of(ops::cat({c, make({0}, dev())}, 1)), ElementsAre(60, 20, 5, 1));
  if (dev().is_cpu()) {
    EXPECT_TRUE(ops::equal(ops::cat({c, c}, 1), ops::cat({ops::contiguous(c), ops::contiguous(c)}, 1)));
  }
}

TEST_P(ModelLayoutTest, StackIsCatViewedBelowTheLastDim) {
  // PyTorch's stack: cat(tensors, dim).view(...) for dim < ndim, so channels-last
  // inputs stack into cat's layout viewed; at dim == ndim, cat of the unsqueezed
  // inputs (torch 1.13 on [2, 3, 4, 5]).
  const Tensor c = channels_last({2, 3, 4, 5}, dev());
  EXPECT_THAT(strides_of(ops::stack({c, c}, 0)), ElementsAre(120, 60, 1, 15, 3));
  EXPECT_THAT(strides_of(ops::stack({c, c}, 1)), ElementsAre(120, 3, 1, 30, 6));
  EXPECT_THAT(strides_of(ops::stack({c, c}, 2)), ElementsAre(120, 1, 60, 15, 3));
  EXPECT_THAT(strides_of(ops::stack({c, c}, 3)), ElementsAre(120, 1, 30, 15, 3));
  EXPECT_THAT(strides_of(ops::stack({c, c}, 4)), ElementsAre(120, 40, 10, 2, 1));
  const Tensor x = ops::t(make({3, 4}, dev()));
  EXPECT_THAT(strides_of(ops::stack({x, x}, 0)), ElementsAre(12, 3, 1));
  if (dev().is_cpu()) {
    const Tensor cc = ops::contiguous(c);
    for (int64_t d = 0; d <= 4; ++d) EXPECT_TRUE(ops::equal(ops::stack({c, c}, d), ops::stack({cc, cc}, d))) << d;
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, ModelLayoutTest, ::testing::Values(kCPU, kMeta),
                         [](const auto& info) { return std::string(info.param.is_cpu() ? "cpu" : "meta"); });

// Fake tensors on cuda take PyTorch's CUDA batch norm layouts (Note [Batch
// norm on CUDA]; the CUDA kernels share the rules, conv_test.cc checks them on
// a GPU against these answers); fake cpu tensors keep the CPU's.
TEST(ModelLayout, BatchNormOnFakeCudaTensorsTakesCudasLayouts) {
  const Device cuda{DeviceType::kCUDA, 0};
  FakeTensorMode fake;
  std::optional<ModeGuard> guard(std::in_place, fake);
  for (Device dev : {cuda, kCPU}) {
    const bool on_cuda = dev.is_cuda();
    const std::string what = dev.str();
    const Tensor x = ops::empty({2, 3, 8, 8}, {.device = dev}), w = ops::ones({3}, {.device = dev});
    const Tensor cl = ops::permute(ops::empty({2, 8, 8, 3}, {.device = dev}), {0, 3, 1, 2});
    const Tensor rm = ops::zeros({3}, {.device = dev}), rv = ops::ones({3}, {.device = dev});
    auto bn = [&](const Tensor& in, bool training) {
      return ops::native_batch_norm(in, w, std::nullopt, rm, rv, training, 0.1, 1e-5);
    };
    for (bool training : {true, false}) {
      const std::string t = str_cat(what, " training ", training);
      // empty_like(self) on cuda: a transposed input's strides; the CPU's suggest_memory_format: contiguous.
      EXPECT_THAT(strides_of(std::get<0>(bn(ops::transpose(x, 2, 3), training))),
                  on_cuda ? ElementsAre(192, 64, 1, 8) : ElementsAre(192, 64, 8, 1)) << t;
      EXPECT_THAT(strides_of(std::get<0>(bn(ops::t(ops::empty({3, 5}, {.device = dev})), training))),
                  on_cuda ? ElementsAre(1, 5) : ElementsAre(3, 1)) << t;
      // Not dense: the input's dims' order (infer_dense_strides) on cuda.
      const Tensor sliced = ops::slice(ops::transpose(x, 2, 3), 3, 0, 8, 2);  // [2, 3, 8, 4], (192, 64, 1, 16)
      EXPECT_THAT(strides_of(std::get<0>(bn(sliced, training))),
                  on_cuda ? ElementsAre(96, 32, 1, 8) : ElementsAre(96, 32, 4, 1)) << t;
      EXPECT_THAT(strides_of(std::get<0>(bn(cl, training))), ElementsAre(192, 1, 24, 3)) << t;
      // save_mean and save_invstd: C elements on cuda in eval too (the CPU's are empty).
      auto [y, mean, invstd] = bn(x, training);
      EXPECT_THAT(mean.sizes(), ElementsAre(training || on_cuda ? 3 : 0)) << t;
      EXPECT_THAT(invstd.sizes(), ElementsAre(training || on_cuda ? 3 : 0)) << t;
      EXPECT_EQ(mean.dtype(), DType::kFloat32) << t;
      EXPECT_EQ(mean.device(), dev) << t;
    }
    // grad_input on cuda: row-major but in training on a channels-last input.
    const Tensor mean = ops::zeros({3}, {.device = dev}), invstd = ops::ones({3}, {.device = dev});
    auto dx = [&](const Tensor& g, const Tensor& in, bool train) {
      return std::get<0>(ops::native_batch_norm_backward(g, in, w, rm, rv, mean, invstd, train, 1e-5,
                                                         {true, true, true}));
    };
    EXPECT_THAT(strides_of(dx(x, cl, true)), ElementsAre(192, 1, 24, 3)) << what;
    EXPECT_THAT(strides_of(dx(x, cl, false)),
                on_cuda ? ElementsAre(192, 64, 8, 1) : ElementsAre(192, 1, 24, 3)) << what;
    EXPECT_THAT(strides_of(dx(x, ops::transpose(x, 2, 3), true)), ElementsAre(192, 64, 8, 1)) << what;
    const Tensor cl3 = ops::permute(ops::empty({2, 2, 4, 4, 3}, {.device = dev}), {0, 4, 1, 2, 3});
    const Tensor g3 = ops::empty({2, 3, 2, 4, 4}, {.device = dev});
    EXPECT_THAT(strides_of(dx(g3, cl3, true)),
                on_cuda ? ElementsAre(96, 32, 16, 4, 1) : ElementsAre(96, 1, 48, 12, 3)) << what;
  }
  // Plain meta tensors answer as the CPU (the op crossref holds them to it).
  guard.reset();
  const Tensor m = ops::empty({2, 3, 8, 8}, {.device = kMeta});
  const Tensor mrm = ops::zeros({3}, {.device = kMeta}), mrv = ops::ones({3}, {.device = kMeta});
  auto [my, mmean, minvstd] = ops::native_batch_norm(ops::transpose(m, 2, 3), std::nullopt, std::nullopt, mrm, mrv,
                                                     false, 0.1, 1e-5);
  EXPECT_THAT(strides_of(my), ElementsAre(192, 64, 8, 1));
  EXPECT_THAT(mmean.sizes(), ElementsAre(0));
}

// The other ops whose CUDA kernels lay out otherwise than the CPU's answer as
// them on fake cuda tensors: group norm's Y and dX, roll and
// native_dropout_backward are row-major or grad's suggested format there.
TEST(ModelLayout, OtherCudaLayoutsOnFakeCudaTensors) {
  FakeTensorMode fake;
  ModeGuard guard(fake);
  for (Device dev : {Device(DeviceType::kCUDA, 0), kCPU}) {
    const bool on_cuda = dev.is_cuda();
    const std::string what = dev.str();
    const Tensor cl = ops::permute(ops::empty({2, 8, 8, 3}, {.device = dev}), {0, 3, 1, 2});
    const Tensor x = ops::empty({2, 3, 8, 8}, {.device = dev});
    auto [y, mean, rstd] = ops::native_group_norm(cl, std::nullopt, std::nullopt, 2, 3, 64, 1, 1e-5);
    EXPECT_THAT(strides_of(y), on_cuda ? ElementsAre(192, 64, 8, 1) : ElementsAre(192, 1, 24, 3)) << what;
    auto [dx, dw, db] = ops::native_group_norm_backward(x, cl, mean, rstd, std::nullopt, 2, 3, 64, 1,
                                                        {true, false, false});
    EXPECT_THAT(strides_of(dx), on_cuda ? ElementsAre(192, 64, 8, 1) : ElementsAre(192, 1, 24, 3)) << what;
    // roll of channels-last: the CPU's cat keeps channels-last, roll_cuda is row-major.
    EXPECT_THAT(strides_of(ops::roll(cl, {1}, {2})),
                on_cuda ? ElementsAre(192, 64, 8, 1) : ElementsAre(192, 1, 24, 3)) << what;
    // native_dropout_backward of a transposed grad: TensorIterator's (transposed) on
    // the CPU, grad's suggested format (row-major) on cuda.
    const Tensor g = ops::transpose(x, 2, 3), mask = ops::ones({2, 3, 8, 8}, {.dtype = DType::kBool, .device = dev});
    EXPECT_THAT(strides_of(ops::native_dropout_backward(g, ops::transpose(mask, 2, 3), 2.0)),
                on_cuda ? ElementsAre(192, 64, 8, 1) : ElementsAre(192, 64, 1, 8)) << what;
  }
}

TEST(ModelLayout, ValuesAreThoseOfTheRowMajorComputation) {
  manual_seed(6);
  const Tensor c = channels_last({2, 3, 8, 8}, kCPU), x = ops::contiguous(c);
  const Tensor w = ops::randn({4, 3, 3, 3});
  const int64_t one[] = {1, 1}, zero[] = {0, 0};
  auto same = [](const Tensor& a, const Tensor& b) { return ops::equal(a, b); };
  // The CPU convolution computes channels-last in NHWC, summing the same
  // products in another order (See Note [Channels-last convolution]): two
  // orders of n f32 terms differ by at most 2 (n - 1) 2^-24 sum |terms|,
  // 5e-5 for y's 27 products of randn (sum |terms| ~ 17), 1.2e-3 for dw's 128.
  auto close = [](const Tensor& a, const Tensor& b) { return ops::allclose(a, b, 0.0, 1e-4); };
  EXPECT_TRUE(close(ops::convolution(c, w, std::nullopt, one, one, one, false, zero, 1),
                    ops::convolution(x, w, std::nullopt, one, one, one, false, zero, 1)));
  EXPECT_TRUE(same(std::get<0>(ops::max_pool2d_with_indices(c, {3, 3}, {2, 2}, {1, 1})),
                   std::get<0>(ops::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}))));
  EXPECT_TRUE(same(std::get<1>(ops::max_pool2d_with_indices(c, {3, 3}, {2, 2}, {1, 1})),
                   std::get<1>(ops::max_pool2d_with_indices(x, {3, 3}, {2, 2}, {1, 1}))));
  EXPECT_TRUE(same(ops::avg_pool2d(c, {2, 2}), ops::avg_pool2d(x, {2, 2})));
  EXPECT_TRUE(same(ops::_adaptive_avg_pool2d(c, {3, 3}), ops::_adaptive_avg_pool2d(x, {3, 3})));
  auto bn = [](const Tensor& in) {
    return std::get<0>(ops::native_batch_norm(in, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                                              1e-5));
  };
  EXPECT_TRUE(same(bn(c), bn(x)));
  EXPECT_TRUE(same(std::get<0>(ops::native_group_norm(c, std::nullopt, std::nullopt, 2, 3, 64, 3, 1e-5)),
                   std::get<0>(ops::native_group_norm(x, std::nullopt, std::nullopt, 2, 3, 64, 3, 1e-5))));
  EXPECT_TRUE(same(ops::upsample_nearest2d(c, {16, 16}), ops::upsample_nearest2d(x, {16, 16})));
  EXPECT_TRUE(same(ops::constant_pad_nd(c, {1, 2, 3, 4}, 0.5), ops::constant_pad_nd(x, {1, 2, 3, 4}, 0.5)));
  EXPECT_TRUE(same(ops::flip(c, {1, 3}), ops::flip(x, {1, 3})));
  const Tensor go = ops::randn({2, 4, 8, 8});
  const int64_t bias[] = {4};
  auto [gx, gw, gb] = ops::convolution_backward(go, c, w, bias, one, one, one, false, zero, 1, {true, true, true});
  auto [hx, hw, hb] = ops::convolution_backward(go, x, w, bias, one, one, one, false, zero, 1, {true, true, true});
  EXPECT_TRUE(close(gx, hx));
  EXPECT_TRUE(ops::allclose(gw, hw, 0.0, 2e-3));
  EXPECT_TRUE(same(gb, hb));
}

}  // namespace
}  // namespace opspec
