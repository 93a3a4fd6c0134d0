// The CPU model kernels computed in the channels-last layout itself (Notes
// [Channels-last convolution], [Channels-last batch norm] and [Channels-last
// max pooling]): their values against the row-major path's on the same
// values laid out contiguously (bit for bit where the operations are the
// same, to a bound on rounding where the convolution sums in another order),
// in every floating dtype, with the geometry's edge cases.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace channels_last_kernels_test {

using ::testing::ElementsAreArray;

SizeVec strides_of(const Tensor& t) { return SizeVec(t.strides().begin(), t.strides().end()); }

Tensor cl(const Tensor& t) { return ops::contiguous(t, MemoryFormat::kChannelsLast); }

// expect_same: the same values, bit for bit (NaN where NaN), and the strides PyTorch gives a channels-last result.
void expect_same(const Tensor& got, const Tensor& want, const SizeVec& strides) {
  EXPECT_EQ(strides_of(got), strides);
  EXPECT_TRUE(ops::equal(ops::isnan(got), ops::isnan(want)));
  EXPECT_TRUE(ops::equal(ops::nan_to_num(got, 0.0), ops::nan_to_num(want, 0.0)));
}

// expect_close: got within rtol of want, relative to the largest |sum term|
// scale (|want| and 1): the channels-last convolution adds the same products
// in another order (See Note [Channels-last convolution]).
void expect_close(const Tensor& got, const Tensor& want, double rtol) {
  ASSERT_EQ(got.sizes(), want.sizes());
  const std::vector<double> g = ops::contiguous(got).to_vector<double>(), w = ops::contiguous(want).to_vector<double>();
  int bad = 0;
  for (size_t i = 0; i < g.size() && bad < 5; ++i) {
    if (std::abs(g[i] - w[i]) > rtol * std::max(1.0, std::abs(w[i]))) {
      ++bad;
      ADD_FAILURE() << "element " << i << ": got " << g[i] << ", want " << w[i];
    }
  }
}

// tolerance: relative to max(1, |want|). Two orders of up to 576 products of
// randn differ by tens of ulp of the sum in f32 and f64 (a wrong tap or
// channel is off by O(1)); f16 and bf16 compute in f32 and round once, so
// they may round to the neighbouring value: one ulp of their own.
double tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 1e-12;
    case DType::kFloat32: return 1e-4;
    case DType::kFloat16: return 2e-3;
    default: return 1.6e-2;
  }
}

struct ConvCase {
  SizeVec x, w;
  int64_t stride, padding, dilation, groups;
  bool bias;
};

TEST(ChannelsLastConvolution, MatchesTheRowMajorPathInEveryDtype) {
  const ConvCase cases[] = {
      {{2, 8, 9, 7}, {6, 8, 3, 3}, 1, 1, 1, 1, true},    // ResNet's 3x3
      {{2, 4, 7, 6}, {6, 2, 3, 3}, 2, 1, 2, 2, true},    // stride, dilation, groups
      {{1, 6, 5, 5}, {4, 6, 1, 1}, 1, 0, 1, 1, false},   // pointwise: the input's rows as they are
      {{2, 6, 5, 4}, {6, 2, 1, 1}, 1, 0, 1, 3, true},    // pointwise in groups
      {{1, 3, 6, 6}, {5, 3, 1, 1}, 2, 0, 1, 1, false},   // 1x1 of stride 2: through im2col
      {{2, 3, 4, 5}, {4, 3, 5, 5}, 1, 2, 1, 1, false},   // windows wider than the input
      {{1, 64, 40, 40}, {8, 64, 3, 3}, 1, 1, 1, 1, false},  // several pixel blocks per image
  };
  for (DType dtype : {DType::kFloat64, DType::kFloat32, DType::kFloat16, DType::kBFloat16}) {
    for (const ConvCase& c : cases) {
      SCOPED_TRACE(std::string(dtype_short_name(dtype)) + " x " + format_sizes(c.x) + " w " + format_sizes(c.w));
      manual_seed(3);
      const Tensor x = ops::to(ops::randn(c.x), dtype), w = ops::to(ops::randn(c.w), dtype);
      std::optional<Tensor> b;
      if (c.bias) b = ops::to(ops::randn({c.w[0]}), dtype);
      const int64_t s[] = {c.stride, c.stride}, p[] = {c.padding, c.padding}, d[] = {c.dilation, c.dilation};
      const int64_t zero[] = {0, 0};
      auto conv = [&](const Tensor& in, const Tensor& weight) {
        return ops::convolution(in, weight, b, s, p, d, false, zero, c.groups);
      };
      const Tensor want = conv(x, w);
      const Tensor got = conv(cl(x), w);
      EXPECT_EQ(strides_of(got), strides_for(want.sizes(), MemoryFormat::kChannelsLast, "test"));
      expect_close(got, want, tolerance(dtype));
      // A row-major input with a channels-last weight: channels-last too, the input copied to NHWC
      // (a 1x1 weight's strides are both layouts' and suggest contiguous, as in PyTorch).
      expect_close(conv(x, cl(w)), want, tolerance(dtype));
      if (c.w[2] > 1) {
        EXPECT_EQ(strides_of(conv(x, cl(w))), strides_of(got));
      }
    }
  }
}

TEST(ChannelsLastConvolution, BackwardMatchesTheRowMajorPath) {
  const ConvCase cases[] = {
      {{2, 8, 9, 7}, {6, 8, 3, 3}, 1, 1, 1, 1, true},
      {{2, 4, 7, 6}, {6, 2, 3, 3}, 2, 1, 2, 2, true},
      {{2, 6, 5, 4}, {6, 2, 1, 1}, 1, 0, 1, 3, true},
  };
  for (DType dtype : {DType::kFloat64, DType::kFloat32, DType::kBFloat16}) {
    for (const ConvCase& c : cases) {
      SCOPED_TRACE(std::string(dtype_short_name(dtype)) + " x " + format_sizes(c.x) + " w " + format_sizes(c.w));
      manual_seed(4);
      const Tensor x = ops::to(ops::randn(c.x), dtype), w = ops::to(ops::randn(c.w), dtype);
      const int64_t s[] = {c.stride, c.stride}, p[] = {c.padding, c.padding}, d[] = {c.dilation, c.dilation};
      const int64_t zero[] = {0, 0}, bias[] = {c.w[0]};
      const Tensor y = ops::convolution(x, w, std::nullopt, s, p, d, false, zero, c.groups);
      const Tensor go = ops::to(ops::randn(y.sizes()), dtype);
      auto grads = [&](const Tensor& g, const Tensor& in) {
        return ops::convolution_backward(g, in, w, bias, s, p, d, false, zero, c.groups, {true, true, true});
      };
      auto [hx, hw, hb] = grads(go, x);
      auto [gx, gw, gb] = grads(cl(go), cl(x));
      EXPECT_EQ(strides_of(gx), strides_for(x.sizes(), MemoryFormat::kChannelsLast, "test"));
      EXPECT_EQ(strides_of(gw), strides_for(w.sizes(), MemoryFormat::kChannelsLast, "test"));
      expect_close(gx, hx, tolerance(dtype));
      expect_close(gw, hw, 4 * tolerance(dtype));  // sums over every pixel of the batch
      // The bias gradient adds each channel in the row-major order: the same bits.
      EXPECT_TRUE(ops::equal(gb, hb));
      // Only some gradients, and a row-major grad_output.
      auto [ox, ow, ob] =
          ops::convolution_backward(go, cl(x), w, bias, s, p, d, false, zero, c.groups, {false, true, false});
      EXPECT_FALSE(ox.defined());
      EXPECT_FALSE(ob.defined());
      EXPECT_TRUE(ops::equal(ow, gw));
    }
  }
}

Tensor with_specials(const Tensor& t) {
  // NaN, infinities and ties (a repeated maximum) where windows see them.
  Tensor v = ops::clone(t);
  const std::vector<double> specials = {std::nan(""), std::numeric_limits<double>::infinity(),
                                        -std::numeric_limits<double>::infinity(), 3.0, 3.0};
  std::vector<double> all = ops::contiguous(v).to_vector<double>();
  for (size_t i = 0; i < all.size(); i += 7) all[i] = specials[(i / 7) % specials.size()];
  return ops::tensor(all, t.sizes(), t.dtype());
}

TEST(ChannelsLastMaxPool, ValuesAndIndicesAreTheRowMajorPathsBitForBit) {
  struct Case {
    SizeVec x;
    int64_t k, s, p, d;
    bool ceil;
  };
  const Case cases[] = {{{2, 64, 13, 11}, 3, 2, 1, 1, false}, {{2, 5, 8, 9}, 2, 2, 0, 1, true},
                        {{1, 19, 9, 9}, 3, 1, 1, 2, false},  {{3, 3, 7, 6}, 3, 3, 1, 1, true}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(dtype_short_name(dtype)) + " " + format_sizes(c.x));
      manual_seed(5);
      const Tensor x = with_specials(ops::to(ops::randn(c.x), dtype));
      const int64_t k[] = {c.k, c.k}, s[] = {c.s, c.s}, p[] = {c.p, c.p}, d[] = {c.d, c.d};
      auto [want, want_idx] = ops::max_pool2d_with_indices(x, k, s, p, d, c.ceil);
      auto [got, got_idx] = ops::max_pool2d_with_indices(cl(x), k, s, p, d, c.ceil);
      const SizeVec strides = strides_for(want.sizes(), MemoryFormat::kChannelsLast, "test");
      expect_same(got, want, strides);
      expect_same(got_idx, want_idx, strides);
      // The backward adds each input's gradients in the row-major order.
      const Tensor go = ops::to(ops::randn(want.sizes()), dtype);
      const Tensor hx = ops::max_pool2d_with_indices_backward(go, x, k, s, p, d, c.ceil, want_idx);
      const Tensor gx = ops::max_pool2d_with_indices_backward(cl(go), cl(x), k, s, p, d, c.ceil, got_idx);
      expect_same(gx, hx, strides_for(x.sizes(), MemoryFormat::kChannelsLast, "test"));
    }
  }
}

TEST(ChannelsLastMaxPool, AnIndexOutsideThePlaneIsAnError) {
  const Tensor x = cl(ops::randn({1, 2, 4, 4}));
  const int64_t k[] = {2, 2}, s[] = {2, 2}, p[] = {0, 0}, d[] = {1, 1};
  auto [y, idx] = ops::max_pool2d_with_indices(x, k, s, p, d, false);
  const Tensor bad = cl(ops::full(idx.sizes(), 16, {.dtype = DType::kInt64}));
  EXPECT_THAT([&] { ops::max_pool2d_with_indices_backward(ops::ones_like(y), x, k, s, p, d, false, bad); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("found an invalid max index 16")));
}

TEST(ChannelsLastBatchNorm, TrainEvalAndBackwardAreTheRowMajorPathsBitForBit) {
  // Channel counts around the 16-lane split (See Note [Channels-last batch norm]), and a 5-D channels_last_3d.
  const SizeVec shapes[] = {{4, 64, 7, 9}, {2, 19, 5, 6}, {3, 3, 4, 4}, {2, 40, 3, 4, 5}};
  for (DType dtype : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    for (const SizeVec& shape : shapes) {
      SCOPED_TRACE(std::string(dtype_short_name(dtype)) + " " + format_sizes(shape));
      const MemoryFormat f = shape.size() == 5 ? MemoryFormat::kChannelsLast3d : MemoryFormat::kChannelsLast;
      manual_seed(6);
      const int64_t C = shape[1];
      const Tensor x = ops::add(ops::mul(ops::to(ops::randn(shape), dtype), 3.0), 1.5);
      const Tensor xc = ops::contiguous(x, f);
      const Tensor w = ops::to(ops::randn({C}), dtype), b = ops::to(ops::randn({C}), dtype);
      const SizeVec strides = strides_for(x.sizes(), f, "test");
      for (bool training : {true, false}) {
        SCOPED_TRACE(training ? "training" : "eval");
        const Tensor rm1 = ops::randn({C}), rv1 = ops::add(ops::rand({C}), 0.5);
        const Tensor rm2 = ops::clone(rm1), rv2 = ops::clone(rv1);
        auto [want, want_mean, want_invstd] = ops::native_batch_norm(x, w, b, rm1, rv1, training, 0.1, 1e-5);
        auto [got, got_mean, got_invstd] = ops::native_batch_norm(xc, w, b, rm2, rv2, training, 0.1, 1e-5);
        expect_same(got, want, strides);
        EXPECT_TRUE(ops::equal(got_mean, want_mean));
        EXPECT_TRUE(ops::equal(got_invstd, want_invstd));
        EXPECT_TRUE(ops::equal(rm2, rm1));
        EXPECT_TRUE(ops::equal(rv2, rv1));
        const Tensor go = ops::to(ops::randn(shape), dtype);
        auto [hx, hw, hb] = ops::native_batch_norm_backward(go, x, w, rm1, rv1, want_mean, want_invstd, training,
                                                            1e-5, {true, true, true});
        auto [gx, gw, gb] = ops::native_batch_norm_backward(ops::contiguous(go, f), xc, w, rm1, rv1, got_mean,
                                                            got_invstd, training, 1e-5, {true, true, true});
        expect_same(gx, hx, strides);
        EXPECT_TRUE(ops::equal(gw, hw));
        EXPECT_TRUE(ops::equal(gb, hb));
      }
    }
  }
}

}  // namespace channels_last_kernels_test
}  // namespace opspec
