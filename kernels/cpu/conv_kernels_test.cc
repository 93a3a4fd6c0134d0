// Tests of convolution, pooling and batch norm (CPU and Meta) against naive
// double-precision references and hand-computed cases, and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <utility>

#include "runtime/ops/ops.h"

namespace opspec {
namespace conv_kernels_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// reference_conv2d: the definition, in double.
std::vector<double> reference_conv2d(const Tensor& x, const Tensor& w, const Tensor* b, int64_t s, int64_t p,
                                     int64_t d, int64_t groups) {
  const std::vector<double> xv = values(x), wv = values(w), bv = b != nullptr ? values(*b) : std::vector<double>();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), cg = w.size(1), kh = w.size(2), kw = w.size(3), og = O / groups;
  const int64_t oh = (H + 2 * p - d * (kh - 1) - 1) / s + 1, ow = (W + 2 * p - d * (kw - 1) - 1) / s + 1;
  std::vector<double> out(static_cast<size_t>(N * O * oh * ow));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double acc = bv.empty() ? 0 : bv[static_cast<size_t>(o)];
          const int64_t g = o / og;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t iy = y * s - p + i * d, ix = xx * s - p + j * d;
                if (iy < 0 || iy >= H || ix < 0 || ix >= W) continue;
                acc += xv[static_cast<size_t>(((n * C + g * cg + c) * H + iy) * W + ix)] *
                       wv[static_cast<size_t>(((o * cg + c) * kh + i) * kw + j)];
              }
          out[static_cast<size_t>(((n * O + o) * oh + y) * ow + xx)] = acc;
        }
  return out;
}

TEST(ConvolutionTest, MatchesTheDefinitionWithStridePaddingDilationAndGroups) {
  manual_seed(1);
  const Tensor x = ops::randn({2, 4, 7, 6}), w = ops::randn({6, 2, 3, 3}), b = ops::randn({6});
  const Tensor y = ops::convolution(x, w, b, {2, 1}, {1, 0}, {1, 2}, false, {0, 0}, 2);
  EXPECT_THAT(y.sizes(), ElementsAre(2, 6, 4, 2));
  // The reference takes one stride/padding/dilation: compare the symmetric case too.
  const Tensor y2 = ops::conv2d(x, w, b, {1}, {1}, {1}, 2);
  expect_near(values(y2), reference_conv2d(x, w, &b, 1, 1, 1, 2), 1e-4);
  const Tensor w1 = ops::randn({5, 4, 1, 1});
  expect_near(values(ops::conv2d(x, w1)), reference_conv2d(x, w1, nullptr, 1, 0, 1, 1), 1e-4);
  const Tensor w3 = ops::randn({3, 4, 3, 3});
  expect_near(values(ops::conv2d(x, w3, std::nullopt, {2}, {2}, {2})), reference_conv2d(x, w3, nullptr, 2, 2, 2, 1),
              1e-4);
  // Unbatched input: unsqueeze, convolution, squeeze.
  EXPECT_THAT(ops::conv2d(ops::randn({4, 7, 6}), w3, std::nullopt, {1}, {1}).sizes(), ElementsAre(3, 7, 6));
  // conv1d is a 2-D convolution of height 1.
  const Tensor x1 = ops::randn({2, 4, 9}), k1 = ops::randn({3, 4, 3});
  EXPECT_THAT(ops::conv1d(x1, k1, std::nullopt, {1}, {1}).sizes(), ElementsAre(2, 3, 9));
  const Tensor y1 = ops::conv1d(x1, k1);
  EXPECT_THAT(y1.sizes(), ElementsAre(2, 3, 7));
  expect_near(values(y1), reference_conv2d(ops::unsqueeze(x1, 2), ops::unsqueeze(k1, 2), nullptr, 1, 0, 1, 1), 1e-4);
}

TEST(ConvolutionTest, ImagesInSeveralRowBlocksAndEdgeWindows) {
  // 70 output rows of 60 make several im2col blocks (See Note [CPU
  // convolution]); paddings wider than the stride and kernels reaching past
  // both edges give rows whose valid columns are partial or empty.
  manual_seed(3);
  const Tensor x = ops::randn({2, 8, 70, 60}), w = ops::randn({4, 8, 3, 3}), b = ops::randn({4});
  expect_near(values(ops::conv2d(x, w, b, {1}, {1})), reference_conv2d(x, w, &b, 1, 1, 1, 1), 1e-4);
  const Tensor narrow = ops::randn({1, 3, 9, 4}), w5 = ops::randn({2, 3, 5, 5});
  for (const auto& [s, p, d] : {std::tuple<int64_t, int64_t, int64_t>{1, 4, 1}, {2, 3, 1}, {3, 4, 2}, {2, 4, 2}}) {
    SCOPED_TRACE(testing::Message() << "stride " << s << " padding " << p << " dilation " << d);
    expect_near(values(ops::conv2d(narrow, w5, std::nullopt, {s}, {p}, {d})),
                reference_conv2d(narrow, w5, nullptr, s, p, d, 1), 1e-4);
  }
}

TEST(ConvolutionTest, Errors) {
  const Tensor x = ops::randn({2, 4, 8, 8});
  EXPECT_THAT([&] { ops::conv2d(x, ops::randn({6, 3, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 8, 8] "
                                             "to have 3 channels, but got 4 channels instead")));
  EXPECT_THAT([&] { ops::conv2d(x, ops::randn({6, 4, 3, 3}), ops::randn({5})); },
              ThrowsMessage<Error>(HasSubstr("expected bias to be 1-dimensional with 6 elements, but got bias of size "
                                             "[5] instead")));
  EXPECT_THAT([&] { ops::conv2d(ops::randn({1, 4, 2, 2}), ops::randn({6, 4, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Calculated padded input size per channel: (2 x 2). Kernel size: (3 x 3). "
                                             "Kernel size can't be greater than actual input size")));
  EXPECT_THAT([&] { ops::conv2d(ops::randn({1, 2, 4, 8, 8}), ops::randn({6, 4, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input "
                                             "of size: [1, 2, 4, 8, 8]")));
  EXPECT_THAT([&] { ops::conv2d(x, ops::randn({6, 4, 3, 3}), std::nullopt, {1}, {-1}); },
              ThrowsMessage<Error>(HasSubstr("negative padding is not supported")));
}

TEST(ConvolutionTest, BackwardIsTheAdjoint) {
  // <conv(x), g> = <x, dx> = <w, dw> for a linear map: check dx and dw by the adjoint identity.
  manual_seed(2);
  const Tensor x = ops::randn({2, 4, 6, 5}, {.dtype = DType::kFloat64}),
               w = ops::randn({6, 2, 3, 3}, {.dtype = DType::kFloat64});
  const Tensor y = ops::convolution(x, w, std::nullopt, {2, 1}, {1, 1}, {1, 2}, false, {0, 0}, 2);
  const Tensor g = ops::randn(y.sizes(), {.dtype = DType::kFloat64});
  auto [dx, dw, db] = ops::convolution_backward(g, x, w, SizeVec{6}, {2, 1}, {1, 1}, {1, 2}, false, {0, 0}, 2,
                                                {true, true, true});
  const double yg = ops::sum(ops::mul(y, g)).item<double>();
  EXPECT_NEAR(ops::sum(ops::mul(x, dx)).item<double>(), yg, 1e-9);
  EXPECT_NEAR(ops::sum(ops::mul(w, dw)).item<double>(), yg, 1e-9);
  expect_near(values(db), values(ops::sum(g, {0, 2, 3})), 1e-12);
  auto [nx, nw, nb] = ops::convolution_backward(g, x, w, std::nullopt, {2, 1}, {1, 1}, {1, 2}, false, {0, 0}, 2,
                                                {false, true, false});
  EXPECT_FALSE(nx.defined());
  EXPECT_FALSE(nb.defined());
  EXPECT_TRUE(ops::equal(nw, dw));
}

TEST(PoolingTest, MaxPoolPicksTheFirstMaxAndItsIndex) {
  const Tensor x = ops::tensor({1, 5, 2, 5, 0, 3, 7, 1, 2, 9, 4, 4, 6, 6, 8, 0}, {1, 1, 4, 4});
  auto [y, idx] = ops::max_pool2d_with_indices(x, {2});
  EXPECT_THAT(values(y), ElementsAre(5, 7, 9, 8));
  EXPECT_THAT(values(idx), ElementsAre(1, 6, 9, 14));
  // k3 s2 p1 on 4x4: windows clipped by the padding; ceil_mode adds nothing here.
  auto [yp, ip] = ops::max_pool2d_with_indices(x, {3}, {2}, {1});
  EXPECT_THAT(values(yp), ElementsAre(5, 7, 9, 9));
  EXPECT_THAT(values(ip), ElementsAre(1, 6, 9, 9));
  EXPECT_THAT(ops::max_pool2d(ops::randn({2, 3, 7, 7}), {2}, {2}, {0}, {1}, true).sizes(), ElementsAre(2, 3, 4, 4));
  const Tensor g = ops::max_pool2d_with_indices_backward(ops::ones({1, 1, 2, 2}), x, {2, 2}, {2, 2}, {0, 0}, {1, 1},
                                                         false, idx);
  EXPECT_THAT(values(g), ElementsAre(0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 1, 0));
  EXPECT_THAT([&] { ops::max_pool2d(x, {3}, {1}, {2}); },
              ThrowsMessage<Error>(HasSubstr("pad should be at most half of effective kernel size, but got pad=2, "
                                             "kernel_size=3 and dilation=1")));
  EXPECT_THAT([&] { ops::max_pool2d(ops::randn({2, 2}), {2}); },
              ThrowsMessage<Error>(HasSubstr("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for "
                                             "input, but got:[2, 2]")));
}

// reference_max_pool2d: PyTorch's per-output loop over one [H, W] plane
// per (n, c), in double: (values, indices), the first maximum, NaN wins.
std::pair<std::vector<double>, std::vector<double>> reference_max_pool2d(const Tensor& x, int64_t k, int64_t s,
                                                                         int64_t p, int64_t d, bool ceil_mode) {
  const std::vector<double> xv = values(x);
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  auto out_size = [&](int64_t in) {
    const int64_t span = in + 2 * p - d * (k - 1) - 1;
    int64_t o = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    if (ceil_mode && (o - 1) * s >= in + p) --o;
    return o;
  };
  const int64_t oh = out_size(H), ow = out_size(W);
  std::vector<double> val, idx;
  for (int64_t pl = 0; pl < planes; ++pl) {
    for (int64_t oy = 0; oy < oh; ++oy) {
      for (int64_t ox = 0; ox < ow; ++ox) {
        int64_t h0 = oy * s - p, w0 = ox * s - p;
        const int64_t h1 = std::min(h0 + (k - 1) * d + 1, H), w1 = std::min(w0 + (k - 1) * d + 1, W);
        while (h0 < 0) h0 += d;
        while (w0 < 0) w0 += d;
        double best = -kInf;
        int64_t at = h0 * W + w0;
        for (int64_t y = h0; y < h1; y += d) {
          for (int64_t xx = w0; xx < w1; xx += d) {
            const double v = xv[static_cast<size_t>(pl * H * W + y * W + xx)];
            if (v > best || std::isnan(v)) {
              best = v;
              at = y * W + xx;
            }
          }
        }
        val.push_back(best);
        idx.push_back(static_cast<double>(at));
      }
    }
  }
  return {val, idx};
}

TEST(PoolingTest, MaxPoolRowsMatchThePerOutputLoop) {
  // Rows long enough for the vector loop over inner windows (See Note [Max
  // pooling rows]) at strides 1, 2 and 3 and with dilation, ties (rounded
  // values) and NaNs, in f32, f64 and bf16: values and indices exact.
  manual_seed(4);
  Tensor x = ops::round(ops::mul(ops::randn({2, 3, 19, 41}), 2.0));
  x = ops::masked_fill(x, ops::lt(ops::rand({2, 3, 19, 41}), 0.02), std::nan(""));
  for (const DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    const Tensor xd = ops::to(x, dtype);
    for (const auto& [k, s, p, d, ceil] : {std::tuple<int64_t, int64_t, int64_t, int64_t, bool>{3, 2, 1, 1, false},
                                           {3, 1, 1, 1, false}, {2, 2, 0, 1, true}, {3, 3, 1, 2, true},
                                           {4, 2, 2, 1, false}}) {
      SCOPED_TRACE(testing::Message() << dtype_short_name(dtype) << " k" << k << " s" << s << " p" << p << " d" << d
                                      << (ceil ? " ceil" : ""));
      auto [y, idx] = ops::max_pool2d_with_indices(xd, {k}, {s}, {p}, {d}, ceil);
      const auto [want, want_idx] = reference_max_pool2d(xd, k, s, p, d, ceil);
      const std::vector<double> got = values(y);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
          EXPECT_TRUE(std::isnan(got[i])) << "element " << i;
        } else {
          EXPECT_EQ(got[i], want[i]) << "element " << i;
        }
      }
      EXPECT_EQ(values(idx), want_idx);
    }
  }
}

TEST(PoolingTest, AverageAndAdaptivePools) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {1, 1, 4, 4});
  EXPECT_THAT(values(ops::avg_pool2d(x, {2})), ElementsAre(3.5, 5.5, 11.5, 13.5));
  // Padding counted (k3 s2 p1: the corner window holds 4 inputs of 9 places) or not.
  EXPECT_NEAR(values(ops::avg_pool2d(x, {3}, {2}, {1}))[0], 14.0 / 9, 1e-6);
  EXPECT_THAT(values(ops::avg_pool2d(x, {3}, {2}, {1}, false, false))[0], ::testing::DoubleEq(3.5));
  EXPECT_THAT(values(ops::avg_pool2d(x, {2}, {2}, {0}, false, true, 1))[0], ::testing::DoubleEq(14));
  EXPECT_THAT(values(ops::_adaptive_avg_pool2d(x, {2, 2})), ElementsAre(3.5, 5.5, 11.5, 13.5));
  // 4 -> 3 windows overlap: [0, 2), [1, 3), [2, 4).
  EXPECT_THAT(values(ops::_adaptive_avg_pool2d(x, {1, 3})), ElementsAre(7.5, 8.5, 9.5));
  const Tensor ga = ops::_adaptive_avg_pool2d_backward(ops::ones({1, 1, 1, 3}), x);
  EXPECT_THAT(values(ga), ElementsAre(0.125, 0.25, 0.25, 0.125, 0.125, 0.25, 0.25, 0.125, 0.125, 0.25, 0.25, 0.125,
                                      0.125, 0.25, 0.25, 0.125));
  const Tensor gp = ops::avg_pool2d_backward(ops::ones({1, 1, 2, 2}), x, {2, 2}, {2, 2}, {0, 0}, false, true,
                                             std::nullopt);
  EXPECT_THAT(values(gp), ::testing::Each(0.25));
}

TEST(BatchNormTest, TrainingNormalisesByTheBatchAndUpdatesRunningStats) {
  // Channel 0 holds 1, 2, 3, 4 (mean 2.5, biased var 1.25, unbiased 5/3); channel 1 is constant 2.
  const Tensor x = ops::tensor({1, 2, 2, 2, 3, 4, 2, 2}, {2, 2, 2, 1});
  Tensor rm = ops::zeros({2}), rv = ops::ones({2});
  auto [y, mean, invstd] = ops::native_batch_norm(x, std::nullopt, std::nullopt, rm, rv, true, 0.1, 1e-5);
  const double inv = 1 / std::sqrt(1.25 + 1e-5);
  expect_near(values(y), {-1.5 * inv, -0.5 * inv, 0, 0, 0.5 * inv, 1.5 * inv, 0, 0}, 1e-6);
  expect_near(values(mean), {2.5, 2}, 1e-7);
  expect_near(values(invstd), {inv, 1 / std::sqrt(1e-5)}, 1e-2);
  expect_near(values(rm), {0.25, 0.2}, 1e-7);
  expect_near(values(rv), {0.9 + 0.1 * 5.0 / 3, 0.9}, 1e-6);
  // Eval: the running statistics; the saves are empty.
  auto [ye, me, ie] = ops::native_batch_norm(x, ops::tensor({2, 1}, {2}), ops::tensor({0, 1}, {2}), rm, rv, false,
                                             0.1, 1e-5);
  EXPECT_EQ(me.numel(), 0);
  EXPECT_NEAR(values(ye)[0], 2 * (1 - 0.25) / std::sqrt(values(rv)[0] + 1e-5), 1e-6);
  EXPECT_THAT([&] { ops::native_batch_norm(x, std::nullopt, std::nullopt, ops::zeros({3}), rv, true, 0.1, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("running_mean should contain 2 elements not 3")));
  EXPECT_THAT([&] { ops::batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false); },
              ThrowsMessage<Error>(HasSubstr("running_mean must be defined in evaluation mode")));
}

TEST(BatchNormTest, StatisticsAreSequentialSumsPerChannel) {
  // PyTorch's order per channel, whichever lane block it falls in (See Note
  // [Batch statistics by lanes]): 11 channels are a block of 8 and 3 alone.
  manual_seed(5);
  const Tensor x = ops::randn({3, 11, 5, 7});
  auto [y, mean, invstd] = ops::native_batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true,
                                                  0.1, 1e-5);
  const std::vector<float> xv = x.to_vector<float>(), mv = mean.to_vector<float>(), iv = invstd.to_vector<float>();
  const std::vector<float> yv = y.to_vector<float>();
  for (int64_t c = 0; c < 11; ++c) {
    float sum = 0;
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t k = 0; k < 35; ++k) sum += xv[static_cast<size_t>((n * 11 + c) * 35 + k)];
    }
    const float m = sum / 105.0f;
    float vs = 0;
    for (int64_t n = 0; n < 3; ++n) {
      for (int64_t k = 0; k < 35; ++k) {
        const float d = xv[static_cast<size_t>((n * 11 + c) * 35 + k)] - m;
        vs += d * d;
      }
    }
    const float inv = 1.0f / std::sqrt(vs / 105.0f + 1e-5f);
    EXPECT_EQ(mv[static_cast<size_t>(c)], m) << "channel " << c;
    EXPECT_EQ(iv[static_cast<size_t>(c)], inv) << "channel " << c;
    const float beta = 0.0f - m * inv;
    EXPECT_EQ(yv[static_cast<size_t>((2 * 11 + c) * 35 + 34)], xv[static_cast<size_t>((2 * 11 + c) * 35 + 34)] * inv + beta)
        << "channel " << c;
  }
}

}  // namespace
}  // namespace opspec
