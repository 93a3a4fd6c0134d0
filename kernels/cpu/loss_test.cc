// Tests of nll_loss2d (CPU and Meta) and of the bits both nll_loss kernels
// share with PyTorch's (See Note [Cascade sum of nll_loss] in loss.cc):
// values PyTorch 1.13 prints for the same inputs, the 2-D loss against the
// 1-D loss of the same items, and PyTorch's error texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "runtime/ops/ops.h"

namespace opspec {
namespace loss_test {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor ints(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kInt64); }

// The [2, 2, 3] log-probabilities and [2, 3] targets of the PyTorch run quoted below.
Tensor small_input() { return ops::tensor({0.5, -1, 2, 1.5, 0.25, -0.5, -2, 1, 0, 0.75, -0.25, 3}, {2, 2, 3}); }
Tensor small_target() { return ints({0, 1, 1, 1, -100, 0}, {2, 3}); }

TEST(NllLoss2dTest, ThreeDimensionalLossesArePyTorchs) {
  // F.nll_loss(x, t, reduction=...) in PyTorch 1.13 for the input above.
  const Tensor x = small_input(), t = small_target();
  EXPECT_THAT(values(ops::nll_loss_nd(x, t, std::nullopt, ops::Reduction::kNone)),
              ElementsAre(-0.5, -0.25, 0.5, -0.75, 0, 0));
  EXPECT_FLOAT_EQ(ops::nll_loss_nd(x, t).item<float>(), -0.2F);
  EXPECT_EQ(ops::nll_loss_nd(x, t, std::nullopt, ops::Reduction::kSum).item<float>(), -1.0F);
  const Tensor w = ops::tensor({0.25, 2}, {2});
  EXPECT_EQ(ops::nll_loss_nd(x, t, w).item<float>(), -0.17307692766189575F);
  EXPECT_THAT(values(ops::nll_loss_nd(x, t, w, ops::Reduction::kNone)), ElementsAre(-0.125, -0.5, 1, -1.5, 0, 0));
  // The same as a [N, C, H, W] input (nll_loss2d directly) and as a 5-D one.
  EXPECT_FLOAT_EQ(ops::nll_loss_nd(ops::view(x, {2, 2, 3, 1}), ops::view(t, {2, 3, 1})).item<float>(), -0.2F);
  const Tensor x5 = ops::div(ops::arange(24.0), 10.0);
  const Tensor none5 = ops::nll_loss_nd(ops::view(x5, {2, 3, 2, 2, 1}), ints({0, 1, 2, 1, 0, 2, 2, 1}, {2, 2, 2, 1}),
                                        std::nullopt, ops::Reduction::kNone);
  EXPECT_THAT(none5.sizes(), ElementsAre(2, 2, 2, 1));
  EXPECT_THAT(none5.to_vector<float>(), ElementsAre(FloatEq(0), FloatEq(-0.5), FloatEq(-1), FloatEq(-0.7), FloatEq(-1.2),
                                         FloatEq(-2.1), FloatEq(-2.2), FloatEq(-1.9)));
  // cross_entropy over [N, C, L]: log_softmax over dim 1, then the same path.
  EXPECT_FLOAT_EQ(ops::cross_entropy(x, t).item<float>(), 1.4509270191192627F);
}

// long_input: 300 items of 5 classes, k / 16 for k in [-50, 50] (exact in
// bf16), and targets (7 i) mod 5: long enough for the cascade's levels.
Tensor long_input(DType dt) {
  std::vector<double> v(300 * 5);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(static_cast<int64_t>(i * 37 % 101) - 50) / 16;
  return ops::tensor(std::move(v), {300, 5}, dt);
}
Tensor long_target() {
  std::vector<double> t(300);
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<double>(i * 7 % 5);
  return ints(std::move(t), {300});
}

TEST(NllLossBitsTest, SumsRoundInTheInputsDtypeAsPyTorchs) {
  // PyTorch sums bf16 losses in bf16 (every partial sum rounds): 4.5625 and
  // a mean of 0.01519775390625 where f32 gives 0.015208333730697632.
  const Tensor w = ops::tensor({0.5, 1.25, 2, 0.75, 1.5}, {5});
  const Tensor xb = long_input(DType::kBFloat16), xf = long_input(DType::kFloat32), t = long_target();
  EXPECT_EQ(ops::nll_loss(xb, t, std::nullopt, ops::Reduction::kSum).item<double>(), 4.5625);
  EXPECT_EQ(ops::nll_loss(xb, t).item<double>(), 0.01519775390625);
  EXPECT_EQ(ops::nll_loss(xb, t, ops::to(w, DType::kBFloat16)).item<double>(), -0.00408935546875);
  EXPECT_EQ(ops::nll_loss(xf, t, std::nullopt, ops::Reduction::kSum).item<float>(), 4.5625F);
  EXPECT_EQ(ops::nll_loss(xf, t).item<float>(), 0.015208333730697632F);
  EXPECT_EQ(ops::nll_loss(xf, t, w).item<float>(), -0.003993055783212185F);
  // A loss of zero is +0 (PyTorch subtracts each term from +0).
  EXPECT_FALSE(std::signbit(ops::nll_loss(ops::zeros({2, 3}), ints({0, 1}, {2}), std::nullopt,
                                          ops::Reduction::kSum).item<double>()));
}

TEST(NllLoss2dTest, IsTheOneDimensionalLossOfTheSameItems) {
  // [3, 5, 10, 10] holding the long input's items at (n, :, h, w): every
  // reduction, loss and gradient has the 1-D loss's bits.
  for (const DType dt : {DType::kFloat32, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(dt));
    const Tensor x1 = long_input(dt), t1 = long_target();
    const Tensor x2 = ops::contiguous(ops::permute(ops::view(x1, {3, 10, 10, 5}), {0, 3, 1, 2}));
    const Tensor t2 = ops::view(t1, {3, 10, 10});
    const Tensor w = ops::to(ops::tensor({0.5, 1.25, 2, 0.75, 1.5}, {5}), dt);
    for (const auto reduction : {ops::Reduction::kNone, ops::Reduction::kMean, ops::Reduction::kSum}) {
      auto [l1, tw1] = ops::nll_loss_forward(x1, t1, w, reduction, 2);
      auto [l2, tw2] = ops::nll_loss2d_forward(x2, t2, w, reduction, 2);
      EXPECT_TRUE(ops::equal(ops::reshape(l2, l1.sizes()), l1));
      if (reduction != ops::Reduction::kNone) {
        EXPECT_TRUE(ops::equal(tw2, tw1));
      }
      const Tensor g1 = ops::mul(ops::ones_like(l1), 0.75), g2 = ops::mul(ops::ones_like(l2), 0.75);
      const Tensor d1 = ops::nll_loss_backward(g1, x1, t1, w, reduction, 2, tw1);
      const Tensor d2 = ops::nll_loss2d_backward(g2, x2, t2, w, reduction, 2, tw2);
      EXPECT_TRUE(ops::equal(ops::contiguous(ops::permute(d2, {0, 2, 3, 1})), ops::view(d1, {3, 10, 10, 5})));
      // Meta: the same shapes.
      auto [m, mt] = ops::nll_loss2d_forward(ops::empty(x2.sizes(), {.dtype = dt, .device = kMeta}),
                                             ops::empty(t2.sizes(), {.dtype = DType::kInt64, .device = kMeta}),
                                             std::nullopt, reduction, -100);
      EXPECT_EQ(m.sizes(), l2.sizes());
    }
  }
}

TEST(NllLoss2dTest, EmptyTargetsAndErrors) {
  // An empty batch: mean is NaN, sum 0, none empty.
  const Tensor x = ops::zeros({0, 3, 2, 2}), t = ops::zeros({0, 2, 2}, {.dtype = DType::kInt64});
  EXPECT_TRUE(std::isnan(ops::nll_loss2d(x, t).item<double>()));
  EXPECT_EQ(ops::nll_loss2d(x, t, std::nullopt, ops::Reduction::kSum).item<double>(), 0);
  EXPECT_THAT(ops::nll_loss2d(x, t, std::nullopt, ops::Reduction::kNone).sizes(), ElementsAre(0, 2, 2));
  EXPECT_THAT([] { ops::nll_loss_nd(ops::randn({2, 3, 4}), ops::zeros({2, 5}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("Expected target size [2, 4], got [2, 5]")));
  EXPECT_THAT(
      [] { ops::nll_loss2d(ops::randn({2, 3, 4, 4}), ops::zeros({2, 4, 5}, {.dtype = DType::kInt64})); },
      ThrowsMessage<Error>(HasSubstr("size mismatch (got input: [2, 3, 4, 4] , target: [2, 4, 5]")));
  EXPECT_THAT([] { ops::nll_loss2d(ops::randn({2, 3, 4}), ops::zeros({2, 4, 5}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("only batches of spatial inputs supported (4D tensors), but got input of "
                                             "dimension: 3")));
  EXPECT_THAT([] { ops::nll_loss2d(ops::randn({2, 3, 4, 4}), ops::full({2, 4, 4}, 3, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("Target 3 is out of bounds.")));
  EXPECT_THAT([] { ops::nll_loss2d(ops::randn({2, 3, 4, 4}), ops::zeros({2, 4, 4}, {.dtype = DType::kInt64}),
                                   ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("weight tensor should be defined either for all or no classes")));
  const Tensor x2 = ops::randn({1, 2, 2, 2}), t2 = ops::zeros({1, 2, 2}, {.dtype = DType::kInt64});
  auto [l, tw] = ops::nll_loss2d_forward(x2, t2, std::nullopt, ops::Reduction::kNone, -100);
  EXPECT_THAT([&] { ops::nll_loss2d_backward(ops::ones({4}), x2, t2, std::nullopt, ops::Reduction::kNone, -100, tw); },
              ThrowsMessage<Error>(HasSubstr("Expected a tensor of dimension 3 and tensor.size[0] == 1 but got: "
                                             "dimension 1 and tensor.size[0] == 4")));
}

}  // namespace loss_test
}  // namespace opspec
