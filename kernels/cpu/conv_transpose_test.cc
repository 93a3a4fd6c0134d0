// Tests of transposed convolution (aten::convolution with transposed=True,
// conv_transpose2d / conv_transpose1d) on the CPU and Meta: the definition in
// double, the adjoint identity with conv2d, PyTorch 1.13's values on a
// hand-checkable case, the backward, and PyTorch's error texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "runtime/ops/ops.h"

namespace opspec {
namespace conv_transpose_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

// Params: one stride, padding, output_padding and dilation per spatial dim.
struct Params {
  std::vector<int64_t> stride, padding, output_padding, dilation;
  int64_t groups = 1;
};

// reference_conv_transpose2d: the definition in double: every input element
// scatters x * w into the output positions its kernel taps reach.
std::vector<double> reference_conv_transpose2d(const Tensor& x, const Tensor& w, const Tensor* b, const Params& p,
                                               std::vector<int64_t>* out_sizes) {
  const std::vector<double> xv = values(x), wv = values(w), bv = b != nullptr ? values(*b) : std::vector<double>();
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t og = w.size(1), kh = w.size(2), kw = w.size(3), cg = C / p.groups, O = og * p.groups;
  const int64_t oh = (H - 1) * p.stride[0] - 2 * p.padding[0] + p.dilation[0] * (kh - 1) + p.output_padding[0] + 1;
  const int64_t ow = (W - 1) * p.stride[1] - 2 * p.padding[1] + p.dilation[1] * (kw - 1) + p.output_padding[1] + 1;
  *out_sizes = {N, O, oh, ow};
  std::vector<double> out(static_cast<size_t>(N * O * oh * ow));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < oh * ow; ++i) out[static_cast<size_t>((n * O + o) * oh * ow + i)] = bv.empty() ? 0 : bv[o];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t y = 0; y < H; ++y)
        for (int64_t xx = 0; xx < W; ++xx)
          for (int64_t o = 0; o < og; ++o)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) {
                const int64_t ty = y * p.stride[0] - p.padding[0] + i * p.dilation[0];
                const int64_t tx = xx * p.stride[1] - p.padding[1] + j * p.dilation[1];
                if (ty < 0 || ty >= oh || tx < 0 || tx >= ow) continue;
                const int64_t oc = (c / cg) * og + o;
                out[static_cast<size_t>(((n * O + oc) * oh + ty) * ow + tx)] +=
                    xv[static_cast<size_t>(((n * C + c) * H + y) * W + xx)] *
                    wv[static_cast<size_t>(((c * og + o) * kh + i) * kw + j)];
              }
  return out;
}

TEST(ConvTransposeTest, MatchesTheDefinition) {
  manual_seed(4);
  const std::vector<std::tuple<Params, std::vector<int64_t>, std::vector<int64_t>>> cases = {
      // params, input sizes, weight sizes
      {{{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, {2, 3, 4, 5}, {3, 2, 3, 3}},
      {{{2, 2}, {1, 1}, {1, 1}, {1, 1}, 1}, {1, 2, 4, 3}, {2, 3, 3, 3}},
      {{{2, 1}, {1, 0}, {1, 0}, {1, 2}, 2}, {2, 4, 5, 4}, {4, 3, 2, 3}},
      {{{3, 2}, {2, 1}, {2, 1}, {1, 1}, 1}, {1, 1, 3, 3}, {1, 2, 4, 2}},
      // output_padding past the stride but below the dilation: extra rows get only the bias.
      {{{1, 1}, {0, 0}, {1, 1}, {2, 2}, 1}, {1, 2, 3, 3}, {2, 2, 2, 2}},
      // 1x1 kernel, stride 1: the pointwise gemm.
      {{{1, 1}, {0, 0}, {0, 0}, {1, 1}, 1}, {2, 4, 3, 3}, {4, 5, 1, 1}},
      // padding past the kernel's reach: rows of the output read nothing at the edges.
      {{{1, 2}, {2, 2}, {0, 1}, {1, 1}, 1}, {1, 2, 6, 5}, {2, 2, 3, 3}},
  };
  for (const auto& [p, in, ws] : cases) {
    SCOPED_TRACE(testing::Message() << "input " << format_sizes(in) << " weight " << format_sizes(ws) << " stride "
                                    << format_sizes(p.stride) << " output_padding " << format_sizes(p.output_padding));
    for (const DType dt : {DType::kFloat32, DType::kFloat64}) {
      const Tensor x = ops::randn(in, {.dtype = dt}), w = ops::randn(ws, {.dtype = dt});
      const Tensor b = ops::randn({ws[1] * p.groups}, {.dtype = dt});
      std::vector<int64_t> sizes;
      const std::vector<double> want = reference_conv_transpose2d(x, w, &b, p, &sizes);
      const Tensor y = ops::conv_transpose2d(x, w, b, p.stride, p.padding, p.output_padding, p.groups, p.dilation);
      EXPECT_EQ(y.sizes(), IntArrayRef(sizes));
      expect_near(values(y), want, dt == DType::kFloat32 ? 1e-4 : 1e-12);
      // Meta answers the same shape.
      const Tensor m = ops::conv_transpose2d(ops::empty(in, {.dtype = dt, .device = kMeta}),
                                             ops::empty(ws, {.dtype = dt, .device = kMeta}), std::nullopt, p.stride,
                                             p.padding, p.output_padding, p.groups, p.dilation);
      EXPECT_EQ(m.sizes(), IntArrayRef(sizes));
    }
  }
}

TEST(ConvTransposeTest, OneDimensionalUnbatchedAndHalfPrecision) {
  manual_seed(5);
  const Tensor x = ops::randn({2, 3, 6}), w = ops::randn({3, 4, 3});
  const Tensor y = ops::conv_transpose1d(x, w, std::nullopt, {2}, {1}, {1});
  EXPECT_THAT(y.sizes(), ElementsAre(2, 4, 12));  // (6 - 1) 2 - 2 + 2 + 1 + 1
  std::vector<int64_t> sizes;
  const Params p{{1, 2}, {0, 1}, {0, 1}, {1, 1}, 1};
  expect_near(values(y),
              reference_conv_transpose2d(ops::unsqueeze(x, 2), ops::unsqueeze(w, 2), nullptr, p, &sizes), 1e-4);
  // Unbatched: unsqueeze, convolution, squeeze.
  EXPECT_THAT(ops::conv_transpose2d(ops::randn({3, 4, 4}), ops::randn({3, 2, 3, 3})).sizes(), ElementsAre(2, 6, 6));
  // bf16 computes in f32 and rounds once.
  const Tensor xb = ops::to(x, DType::kBFloat16), wb = ops::to(w, DType::kBFloat16);
  const Tensor yb = ops::conv_transpose1d(xb, wb, std::nullopt, {2}, {1}, {1});
  EXPECT_EQ(yb.dtype(), DType::kBFloat16);
  EXPECT_TRUE(ops::equal(yb, ops::to(ops::conv_transpose1d(ops::to(xb, DType::kFloat32), ops::to(wb, DType::kFloat32),
                                                            std::nullopt, {2}, {1}, {1}),
                                     DType::kBFloat16)));
}

TEST(ConvTransposeTest, PyTorchValuesOnASmallCase) {
  // torch.nn.functional.conv_transpose2d(torch.arange(4.).view(1, 1, 2, 2),
  //     torch.tensor([[[[1., 2.], [3., 4.]]]]), stride=2) in PyTorch 1.13:
  // each input element stamps the kernel times itself into its own 2x2 block.
  const Tensor x = ops::tensor({0, 1, 2, 3}, {1, 1, 2, 2}), w = ops::tensor({1, 2, 3, 4}, {1, 1, 2, 2});
  EXPECT_THAT(values(ops::conv_transpose2d(x, w, std::nullopt, {2})),
              ElementsAre(0, 0, 1, 2, 0, 0, 3, 4, 2, 4, 3, 6, 6, 8, 9, 12));
  // stride 1 overlaps the stamps: [[0, 1, 2], [2, 10, 10], [6, 17, 12]] + bias 0.5.
  EXPECT_THAT(values(ops::conv_transpose2d(x, w, ops::tensor({0.5}, {1}))),
              ElementsAre(0.5, 1.5, 2.5, 2.5, 10.5, 10.5, 6.5, 17.5, 12.5));
}

TEST(ConvTransposeTest, IsTheAdjointOfConvolution) {
  // <conv2d(x, w), y> = <x, conv_transpose2d(y, w)> for the same stride,
  // padding, dilation and groups (output_padding picks x's size back).
  manual_seed(6);
  const Tensor x = ops::randn({2, 4, 7, 6}, {.dtype = DType::kFloat64});
  const Tensor w = ops::randn({6, 2, 3, 2}, {.dtype = DType::kFloat64});
  const Tensor cx = ops::conv2d(x, w, std::nullopt, {2}, {1}, {1, 2}, 2);
  const Tensor y = ops::randn(cx.sizes(), {.dtype = DType::kFloat64});
  const Tensor ty = ops::conv_transpose2d(y, w, std::nullopt, {2}, {1}, {0, 1}, 2, {1, 2});
  ASSERT_EQ(ty.sizes(), x.sizes());
  EXPECT_NEAR(ops::sum(ops::mul(cx, y)).item<double>(), ops::sum(ops::mul(x, ty)).item<double>(), 1e-9);
}

TEST(ConvTransposeTest, BackwardIsTheAdjointAndBiasGradSumsChannels) {
  manual_seed(7);
  const Tensor x = ops::randn({2, 4, 3, 4}, {.dtype = DType::kFloat64});
  const Tensor w = ops::randn({4, 3, 3, 2}, {.dtype = DType::kFloat64});
  const std::vector<int64_t> stride{2, 1}, padding{1, 0}, dilation{1, 2}, output_padding{1, 0};
  const Tensor y = ops::convolution(x, w, std::nullopt, stride, padding, dilation, true, output_padding, 2);
  EXPECT_THAT(y.sizes(), ElementsAre(2, 6, 6, 6));
  const Tensor g = ops::randn(y.sizes(), {.dtype = DType::kFloat64});
  auto [dx, dw, db] = ops::convolution_backward(g, x, w, SizeVec{6}, stride, padding, dilation, true, output_padding,
                                                2, {true, true, true});
  // Linear in x and in w: <y, g> = <x, dx> = <w, dw>.
  const double yg = ops::sum(ops::mul(y, g)).item<double>();
  EXPECT_NEAR(ops::sum(ops::mul(x, dx)).item<double>(), yg, 1e-9);
  EXPECT_NEAR(ops::sum(ops::mul(w, dw)).item<double>(), yg, 1e-9);
  expect_near(values(db), values(ops::sum(g, {0, 2, 3})), 1e-12);
  // Meta: the same shapes.
  auto [mx, mw, mb] = ops::convolution_backward(
      ops::empty(g.sizes(), {.device = kMeta}), ops::empty(x.sizes(), {.device = kMeta}),
      ops::empty(w.sizes(), {.device = kMeta}), SizeVec{6}, stride, padding, dilation, true, output_padding, 2,
      {true, true, true});
  EXPECT_EQ(mx.sizes(), x.sizes());
  EXPECT_EQ(mw.sizes(), w.sizes());
  EXPECT_THAT(mb.sizes(), ElementsAre(6));
}

TEST(ConvTransposeTest, EmptyInputs) {
  // An empty batch gives an empty result, no input channels the bias (a
  // weight [C=0, ...] is refused first, as PyTorch's "at least groups");
  // any other empty dim is refused, as PyTorch's backend choice does.
  EXPECT_THAT(ops::conv_transpose2d(ops::randn({0, 2, 2, 2}), ops::randn({2, 3, 2, 2})).sizes(),
              ElementsAre(0, 3, 3, 3));
  EXPECT_THAT([] { ops::conv_transpose2d(ops::randn({1, 0, 2, 2}), ops::randn({0, 2, 2, 2})); },
              ThrowsMessage<Error>(HasSubstr("Given groups=1, expected weight to be at least 1 at dimension 0, but got "
                                             "weight of size [0, 2, 2, 2] instead")));
  EXPECT_THAT([] { ops::conv_transpose2d(ops::randn({1, 2, 0, 2}), ops::randn({2, 2, 2, 2})); },
              ThrowsMessage<Error>(HasSubstr("Only zero batch or zero channel inputs are supported, but got input "
                                             "shape: [1, 2, 0, 2]")));
  EXPECT_THAT([] { ops::conv2d(ops::randn({1, 2, 0, 2}), ops::randn({2, 2, 1, 1}), std::nullopt, {1}, {1}); },
              ThrowsMessage<Error>(HasSubstr("Only zero batch or zero channel inputs are supported")));
}

TEST(ConvTransposeTest, ErrorsArePyTorchs) {
  const Tensor x = ops::randn({1, 4, 3, 3});
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({3, 2, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Given transposed=1, weight of size [3, 2, 3, 3], expected input[1, 4, 3, "
                                             "3] to have 3 channels, but got 4 channels instead")));
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({4, 2, 3, 3}), ops::randn({3}), {1}, {0}, {0}, 2); },
              ThrowsMessage<Error>(HasSubstr("Given transposed=1, weight of size [4, 2, 3, 3], expected bias to be "
                                             "1-dimensional with 4 elements, but got bias of size [3] instead")));
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({4, 2, 3, 3}), std::nullopt, {1}, {0}, {0}, 3); },
              ThrowsMessage<Error>(HasSubstr("Given groups=3, expected weight to be divisible by 3 at dimension 0")));
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({4, 2, 3, 3}), std::nullopt, {2}, {0}, {2}); },
              ThrowsMessage<Error>(HasSubstr("output padding must be smaller than either stride or dilation, but got "
                                             "output_padding_height: 2 output_padding_width: 2 stride_height: 2 "
                                             "stride_width: 2 dilation_height: 1 dilation_width: 1")));
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({4, 2, 1, 1}), std::nullopt, {1}, {2}); },
              ThrowsMessage<Error>(HasSubstr("Given input size per channel: (3 x 3). Calculated output size per "
                                             "channel: (-1 x -1). Output size is too small")));
  EXPECT_THAT([&] { ops::conv_transpose2d(x, ops::randn({4, 2, 3, 3}), std::nullopt, {1}, {0}, {-1}); },
              ThrowsMessage<Error>(HasSubstr("negative output_padding is not supported")));
  EXPECT_THAT([&] { ops::conv_transpose1d(x, ops::randn({4, 2, 3})); },
              ThrowsMessage<Error>(HasSubstr("Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but "
                                             "got input of size: [1, 4, 3, 3]")));
  // Sizes near INT64_MAX fail cleanly, not by signed overflow.
  EXPECT_THAT([&] { ops::conv_transpose1d(ops::randn({1, 1, 3}), ops::randn({1, 1, 2}), std::nullopt, {INT64_MAX}); },
              ThrowsMessage<Error>(HasSubstr("overflow int64")));
}

}  // namespace conv_transpose_test
}  // namespace opspec
