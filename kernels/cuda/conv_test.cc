// The convolution, pooling and batch norm CUDA kernels (conv.cc, conv.cu)
// against the CPU kernels (skipped without a GPU): the CPU's bits for the
// pooling ops and their backward (the same adds in the same order, See Note
// [Deterministic max_pool2d backward]) and for batch norm's elementwise
// eval path; to rounding for convolution (direct sums against OpenBLAS
// gemms) and batch norm's statistics (block sums); repeat runs give the same
// bits; the CPU's error texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/core/memory_format.h"
#include "runtime/fake/fake_tensor.h"

namespace opspec {
namespace cuda_conv_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_close;
using testing::expect_same;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
constexpr std::array<bool, 3> kAllGrads = {true, true, true};
constexpr std::array<bool, 3> kMasks[] = {kAllGrads, {true, false, false}, {false, true, true}, {false, false, false}};

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

std::optional<Tensor> cuda_or_none(const std::optional<Tensor>& t) {
  return t ? std::optional<Tensor>(to_cuda(*t)) : std::nullopt;
}

// expect_grads: CUDA gradients against the CPU's, undefined exactly where the CPU's are.
void expect_grads(const std::tuple<Tensor, Tensor, Tensor>& got, const std::tuple<Tensor, Tensor, Tensor>& want,
                  const std::string& what, double scale, double floor) {
  const Tensor g[] = {std::get<0>(got), std::get<1>(got), std::get<2>(got)};
  const Tensor w[] = {std::get<0>(want), std::get<1>(want), std::get<2>(want)};
  for (int i = 0; i < 3; ++i) {
    const std::string name = str_cat(what, " grad ", i);
    ASSERT_EQ(g[i].defined(), w[i].defined()) << name;
    if (w[i].defined()) expect_close(g[i], w[i], name, scale, floor);
  }
}

// ---- Convolution ----

struct ConvCase {
  std::vector<int64_t> x, w, stride, padding, dilation;
  int64_t groups;
  bool bias;
};

const ConvCase kConvCases[] = {
    {{2, 4, 7, 6}, {6, 2, 3, 3}, {2, 1}, {1, 0}, {1, 2}, 2, true},  // groups, mixed parameters
    {{2, 4, 8, 8}, {5, 4, 1, 1}, {1, 1}, {0, 0}, {1, 1}, 1, false},  // pointwise
    {{1, 3, 9, 7}, {4, 3, 3, 2}, {2, 2}, {2, 1}, {2, 1}, 1, true},
    {{3, 6, 5, 5}, {6, 1, 3, 3}, {1, 1}, {1, 1}, {1, 1}, 6, true},  // depthwise
    {{2, 4, 11}, {3, 4, 3}, {2}, {1}, {2}, 1, true},                // conv1d
};

std::string conv_name(const ConvCase& c, DType dt) {
  return str_cat(dtype_short_name(dt), " x ", format_sizes(c.x), " w ", format_sizes(c.w), " groups ", c.groups);
}

TEST(CudaConvTest, ConvolutionAndItsBackwardMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    for (const ConvCase& c : kConvCases) {
      const std::string what = conv_name(c, dt);
      const Tensor x = input(c.x, dt, 1), w = input(c.w, dt, 2);
      const std::optional<Tensor> b = c.bias ? std::optional<Tensor>(input({c.w[0]}, dt, 3)) : std::nullopt;
      const Tensor want = ops::convolution(x, w, b, c.stride, c.padding, c.dilation, false, {0}, c.groups);
      const Tensor got = ops::convolution(to_cuda(x), to_cuda(w), cuda_or_none(b), c.stride, c.padding, c.dilation,
                                          false, {0}, c.groups);
      // Sums of signed products: the floor is their terms' magnitude.
      expect_close(got, want, "convolution " + what, 8, 4.0);
      const Tensor g = input(want.sizes(), dt, 4);
      const int64_t bias_size[] = {c.w[0]};
      for (const std::array<bool, 3>& mask : kMasks) {
        const OptionalIntArrayRef bias_sizes = c.bias ? OptionalIntArrayRef(bias_size) : std::nullopt;
        const std::string m = str_cat(what, " mask ", mask[0], mask[1], mask[2]);
        expect_grads(ops::convolution_backward(to_cuda(g), to_cuda(x), to_cuda(w), bias_sizes, c.stride, c.padding,
                                               c.dilation, false, {0}, c.groups, mask),
                     ops::convolution_backward(g, x, w, bias_sizes, c.stride, c.padding, c.dilation, false, {0},
                                               c.groups, mask),
                     "convolution_backward " + m, 16, 8.0);
      }
    }
  }
}

TEST(CudaConvTest, TransposedConvolutionAndItsBackwardMatchTheCpu) {
  // The regular kernels with roles swapped (See Note [Transposed convolution
  // geometry]): weight [C, C_out / groups, k...], output_padding below the
  // stride, or past it below the dilation.
  OPSPEC_SKIP_WITHOUT_CUDA();
  struct Case {
    std::vector<int64_t> x, w, stride, padding, output_padding, dilation;
    int64_t groups;
  };
  const Case cases[] = {
      {{2, 4, 5, 4}, {4, 3, 3, 2}, {2, 1}, {1, 0}, {1, 0}, {1, 2}, 2},
      {{1, 3, 4, 4}, {3, 2, 3, 3}, {1, 1}, {0, 0}, {1, 1}, {2, 2}, 1},
      {{2, 4, 6}, {4, 2, 3}, {2}, {1}, {1}, {1}, 1},  // conv_transpose1d
  };
  for (DType dt : kFloats) {
    for (const Case& c : cases) {
      const std::string what = str_cat(dtype_short_name(dt), " x ", format_sizes(c.x), " w ", format_sizes(c.w));
      const Tensor x = input(c.x, dt, 21), w = input(c.w, dt, 22), b = input({c.w[1] * c.groups}, dt, 23);
      const Tensor want = ops::convolution(x, w, b, c.stride, c.padding, c.dilation, true, c.output_padding, c.groups);
      expect_close(ops::convolution(to_cuda(x), to_cuda(w), to_cuda(b), c.stride, c.padding, c.dilation, true,
                                    c.output_padding, c.groups),
                   want, "conv_transpose " + what, 8, 4.0);
      const Tensor g = input(want.sizes(), dt, 24);
      const int64_t bias_size[] = {c.w[1] * c.groups};
      for (const std::array<bool, 3>& mask : kMasks) {
        expect_grads(ops::convolution_backward(to_cuda(g), to_cuda(x), to_cuda(w), IntArrayRef(bias_size), c.stride,
                                               c.padding, c.dilation, true, c.output_padding, c.groups, mask),
                     ops::convolution_backward(g, x, w, IntArrayRef(bias_size), c.stride, c.padding, c.dilation, true,
                                               c.output_padding, c.groups, mask),
                     str_cat("conv_transpose backward ", what, " mask ", mask[0], mask[1], mask[2]), 16, 8.0);
      }
    }
  }
}

TEST(CudaConvTest, ConvolutionOfStridedInputsAndOtherGradDtypes) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const ConvCase& c = kConvCases[0];
  // A channels-last input (not contiguous).
  const Tensor x = ops::permute(ops::contiguous(ops::permute(input(c.x, DType::kFloat32, 5), {0, 2, 3, 1})),
                                {0, 3, 1, 2});
  const Tensor w = input(c.w, DType::kFloat32, 6);
  expect_close(ops::convolution(to_cuda(x), to_cuda(w), std::nullopt, c.stride, c.padding, c.dilation, false, {0},
                                c.groups),
               ops::convolution(x, w, std::nullopt, c.stride, c.padding, c.dilation, false, {0}, c.groups),
               "channels-last input", 8, 4.0);
  // An f16 convolution with an f32 grad_output: the CPU computes in f32 throughout.
  const Tensor xh = ops::to(x, DType::kFloat16), wh = ops::to(w, DType::kFloat16);
  const Tensor y = ops::convolution(xh, wh, std::nullopt, c.stride, c.padding, c.dilation, false, {0}, c.groups);
  const Tensor g = input(y.sizes(), DType::kFloat32, 7);
  const int64_t bias_size[] = {c.w[0]};
  expect_grads(ops::convolution_backward(to_cuda(g), to_cuda(xh), to_cuda(wh), IntArrayRef(bias_size), c.stride,
                                         c.padding, c.dilation, false, {0}, c.groups, kAllGrads),
               ops::convolution_backward(g, xh, wh, IntArrayRef(bias_size), c.stride, c.padding, c.dilation, false,
                                         {0}, c.groups, kAllGrads),
               "f16 with an f32 grad", 16, 8.0);
}

TEST(CudaConvTest, LargerConvolutionIsCloseAndRepeatsBitForBit) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = input({8, 16, 20, 20}, DType::kFloat32, 8), w = input({32, 16, 3, 3}, DType::kFloat32, 9);
  const Tensor b = input({32}, DType::kFloat32, 10);
  const Tensor want = ops::conv2d(x, w, b, {1}, {1});
  const Tensor got = ops::conv2d(to_cuda(x), to_cuda(w), to_cuda(b), {1}, {1});
  expect_close(got, want, "conv2d 8x16x20x20", 16, 12.0);
  const Tensor g = input(want.sizes(), DType::kFloat32, 11);
  const int64_t bias_size[] = {32};
  auto run = [&] {
    return ops::convolution_backward(to_cuda(g), to_cuda(x), to_cuda(w), IntArrayRef(bias_size), {1, 1}, {1, 1},
                                     {1, 1}, false, {0}, 1, kAllGrads);
  };
  const auto first = run();
  expect_grads(first,
               ops::convolution_backward(g, x, w, IntArrayRef(bias_size), {1, 1}, {1, 1}, {1, 1}, false, {0}, 1,
                                         kAllGrads),
               "conv2d 8x16x20x20 backward", 64, 64.0);
  const auto second = run();
  expect_same(std::get<1>(second), to_cpu(std::get<1>(first)), "weight grad repeats");
  expect_same(std::get<2>(second), to_cpu(std::get<2>(first)), "bias grad repeats");
}

TEST(CudaConvTest, ConvolutionOfAnEmptyBatchHasZeroWeightAndBiasGrads) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(ops::zeros({0, 4, 5, 5})), w = to_cuda(input({3, 4, 3, 3}, DType::kFloat32, 12));
  const Tensor y = ops::conv2d(x, w);
  EXPECT_EQ(format_sizes(y.sizes()), "[0, 3, 3, 3]");
  const int64_t bias_size[] = {3};
  auto [dx, dw, db] = ops::convolution_backward(to_cuda(ops::zeros({0, 3, 3, 3})), x, w, IntArrayRef(bias_size),
                                                {1, 1}, {0, 0}, {1, 1}, false, {0}, 1, kAllGrads);
  EXPECT_EQ(format_sizes(dx.sizes()), "[0, 4, 5, 5]");
  expect_same(dw, ops::zeros({3, 4, 3, 3}), "empty batch weight grad");
  expect_same(db, ops::zeros({3}), "empty batch bias grad");
}

TEST(CudaConvTest, ConvolutionErrorsAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(ops::zeros({2, 4, 8, 8}));
  EXPECT_THAT([&] { ops::conv2d(x, to_cuda(ops::zeros({6, 3, 3, 3}))); },
              ThrowsMessage<Error>(HasSubstr("Given groups=1, weight of size [6, 3, 3, 3], expected input[2, 4, 8, 8] "
                                             "to have 3 channels, but got 4 channels instead")));
  EXPECT_THAT([&] { ops::conv2d(x, to_cuda(ops::zeros({6, 4, 3, 3}, {.dtype = DType::kFloat64}))); },
              ThrowsMessage<Error>(HasSubstr("Input type (Float) and weight type (Double) should be the same")));
  EXPECT_THAT([&] { ops::conv2d(x, ops::zeros({6, 4, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

// ---- Pooling ----

struct PoolCase {
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;
};

const PoolCase kPoolCases[] = {
    {{3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
    {{3, 3}, {1, 1}, {1, 1}, {1, 1}, false},  // overlapping windows: inputs in up to 9
    {{2, 3}, {1, 2}, {0, 1}, {2, 1}, true},
    {{3}, {}, {0}, {1}, true},  // stride = kernel_size
    {{2, 2}, {3, 3}, {1, 0}, {1, 1}, true},  // gaps between windows
};

std::string pool_name(const PoolCase& c, DType dt) {
  return str_cat(dtype_short_name(dt), " kernel ", format_sizes(c.kernel), " stride ", format_sizes(c.stride),
                 " padding ", format_sizes(c.padding), " dilation ", format_sizes(c.dilation), " ceil ", c.ceil_mode);
}

TEST(CudaConvTest, MaxPool2dAndItsBackwardAreTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    Tensor x = ops::mul(input({2, 3, 9, 8}, DType::kFloat64, 13), 2.0);
    x = ops::to(ops::masked_fill(x, ops::gt(x, 4.0), std::nan("")), dt);  // a few NaNs, which win
    for (const Tensor& t : {x, ops::select(x, 0, 1)}) {  // batched and unbatched
      for (const PoolCase& c : kPoolCases) {
        const std::string what = str_cat(pool_name(c, dt), " input ", format_sizes(t.sizes()));
        auto [out, idx] = ops::max_pool2d_with_indices(to_cuda(t), c.kernel, c.stride, c.padding, c.dilation,
                                                       c.ceil_mode);
        auto [rout, ridx] = ops::max_pool2d_with_indices(t, c.kernel, c.stride, c.padding, c.dilation, c.ceil_mode);
        expect_same(out, rout, "max_pool2d " + what);
        expect_same(idx, ridx, "max_pool2d indices " + what);
        const Tensor g = input(rout.sizes(), dt, 14);
        expect_same(ops::max_pool2d_with_indices_backward(to_cuda(g), to_cuda(t), c.kernel, c.stride, c.padding,
                                                          c.dilation, c.ceil_mode, idx),
                    ops::max_pool2d_with_indices_backward(g, t, c.kernel, c.stride, c.padding, c.dilation,
                                                          c.ceil_mode, ridx),
                    "max_pool2d backward " + what);
      }
    }
  }
}

TEST(CudaConvTest, MaxPool2dBackwardTakesAnyIndexInThePlane) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  // Indices outside their own window (every output names element 0, or its
  // mirror) take the per-plane path; their sums are still the CPU's bits.
  const Tensor x = input({2, 3, 8, 8}, DType::kFloat16, 15);
  const std::vector<int64_t> k = {2, 2}, s = {2, 2}, p = {0, 0}, d = {1, 1};
  const Tensor g = input({2, 3, 4, 4}, DType::kFloat16, 16);
  std::vector<double> v(96);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i % 3 == 0 ? 0 : static_cast<double>(63 - i % 16);
  const Tensor idx = ops::tensor(v, {2, 3, 4, 4}, DType::kInt64);
  expect_same(ops::max_pool2d_with_indices_backward(to_cuda(g), to_cuda(x), k, s, p, d, false, to_cuda(idx)),
              ops::max_pool2d_with_indices_backward(g, x, k, s, p, d, false, idx), "indices outside their windows");
  v[37] = 64;
  const Tensor bad = to_cuda(ops::tensor(v, {2, 3, 4, 4}, DType::kInt64));
  EXPECT_THAT([&] { ops::max_pool2d_with_indices_backward(to_cuda(g), to_cuda(x), k, s, p, d, false, bad); },
              ThrowsMessage<Error>(
                  HasSubstr("aten::max_pool2d_with_indices_backward: found an invalid max index 64")));
}

TEST(CudaConvTest, AvgPool2dAndItsBackwardAreTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = input({2, 3, 9, 8}, dt, 17);
    for (const PoolCase& c : kPoolCases) {
      if (c.dilation[0] != 1) continue;  // avg_pool2d has no dilation
      for (bool include_pad : {true, false}) {
        for (std::optional<int64_t> divisor : {std::optional<int64_t>(), std::optional<int64_t>(5)}) {
          const std::string what = str_cat(pool_name(c, dt), " count_include_pad ", include_pad, " divisor ",
                                           divisor.value_or(0));
          const Tensor want = ops::avg_pool2d(x, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, divisor);
          expect_same(ops::avg_pool2d(to_cuda(x), c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, divisor),
                      want, "avg_pool2d " + what);
          const Tensor g = input(want.sizes(), dt, 18);
          expect_same(ops::avg_pool2d_backward(to_cuda(g), to_cuda(x), c.kernel, c.stride, c.padding, c.ceil_mode,
                                               include_pad, divisor),
                      ops::avg_pool2d_backward(g, x, c.kernel, c.stride, c.padding, c.ceil_mode, include_pad, divisor),
                      "avg_pool2d backward " + what);
        }
      }
    }
  }
}

TEST(CudaConvTest, AdaptiveAvgPool2dAndItsBackwardAreTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = input({2, 3, 10, 7}, dt, 19);
    for (const Tensor& t : {x, ops::transpose(x, 2, 3), ops::select(x, 0, 0)}) {
      for (const std::vector<int64_t>& size :
           std::vector<std::vector<int64_t>>{{3, 4}, {1, 1}, {10, 7}, {4, 9}, {0, 3}}) {
        const std::string what = str_cat(dtype_short_name(dt), " input ", format_sizes(t.sizes()), " output_size ",
                                         format_sizes(size));
        const Tensor want = ops::_adaptive_avg_pool2d(t, size);
        expect_same(ops::_adaptive_avg_pool2d(to_cuda(t), size), want, "_adaptive_avg_pool2d " + what);
        const Tensor g = input(want.sizes(), dt, 20);
        if (want.numel() == 0) {  // PyTorch's backward refuses an empty grad_output, on both devices
          EXPECT_THAT([&] { ops::_adaptive_avg_pool2d_backward(to_cuda(g), to_cuda(t)); },
                      ThrowsMessage<Error>(HasSubstr("Expected grad_output and self to have non-zero size")));
          continue;
        }
        expect_same(ops::_adaptive_avg_pool2d_backward(to_cuda(g), to_cuda(t)),
                    ops::_adaptive_avg_pool2d_backward(g, t), "_adaptive_avg_pool2d_backward " + what);
      }
    }
  }
}

TEST(CudaConvTest, PoolingErrorsAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(ops::zeros({1, 2, 6, 6}));
  EXPECT_THAT([&] { ops::max_pool2d(x, {2}, {}, {2}); },
              ThrowsMessage<Error>(HasSubstr("pad should be at most half of effective kernel size")));
  EXPECT_THAT([&] { ops::avg_pool2d(x, {2}, {}, {0}, false, true, 0); },
              ThrowsMessage<Error>(HasSubstr("aten::avg_pool2d: divisor must be not zero")));
  EXPECT_THAT([&] { ops::_adaptive_avg_pool2d(to_cuda(ops::zeros({2, 0, 3})), {1, 1}); },
              ThrowsMessage<Error>(HasSubstr("Expected input to have non-zero size for non-batch dimensions")));
}

// ---- Batch norm ----

// bn_input: values around 2 with spread 3 (the two-pass variance matters), as dt.
Tensor bn_input(IntArrayRef sizes, DType dt, uint64_t seed) {
  return ops::to(ops::add(ops::mul(input(sizes, DType::kFloat64, seed), 3.0), 2.0), dt);
}

TEST(CudaConvTest, BatchNormTrainingMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    for (const std::vector<int64_t>& sizes : std::vector<std::vector<int64_t>>{{4, 3, 5, 6}, {16, 5}, {2, 3, 7}}) {
      const std::string what = str_cat(dtype_short_name(dt), " ", format_sizes(sizes));
      const int64_t c = sizes[1];
      const Tensor x = bn_input(sizes, dt, 21), w = input({c}, dt, 22), b = input({c}, dt, 23);
      const Tensor rm = input({c}, dt, 24), rv = ops::add(ops::abs(input({c}, dt, 25)), 0.5);
      Tensor rm_cpu = ops::clone(rm), rv_cpu = ops::clone(rv);
      Tensor rm_cuda = to_cuda(rm), rv_cuda = to_cuda(rv);
      auto [y, mean, invstd] = ops::native_batch_norm(to_cuda(x), to_cuda(w), to_cuda(b), rm_cuda, rv_cuda, true,
                                                      0.1, 1e-5);
      auto [ry, rmean, rinvstd] = ops::native_batch_norm(x, w, b, rm_cpu, rv_cpu, true, 0.1, 1e-5);
      expect_close(y, ry, "batch_norm " + what, 16, 4.0);
      expect_close(mean, rmean, "save_mean " + what, 8, 4.0);
      expect_close(invstd, rinvstd, "save_invstd " + what, 8);
      expect_close(rm_cuda, rm_cpu, "running_mean " + what, 8, 1.0);
      expect_close(rv_cuda, rv_cpu, "running_var " + what, 8, 1.0);
      // No affine parameters, no running stats.
      expect_close(std::get<0>(ops::native_batch_norm(to_cuda(x), std::nullopt, std::nullopt, std::nullopt,
                                                      std::nullopt, true, 0.1, 1e-5)),
                   std::get<0>(ops::native_batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, true,
                                                      0.1, 1e-5)),
                   "batch_norm without parameters " + what, 16, 4.0);
      // The backward from the CPU's saved statistics.
      const Tensor g = input(sizes, dt, 26);
      for (const std::array<bool, 3>& mask : kMasks) {
        const std::string m = str_cat(what, " mask ", mask[0], mask[1], mask[2]);
        expect_grads(ops::native_batch_norm_backward(to_cuda(g), to_cuda(x), to_cuda(w), to_cuda(rm), to_cuda(rv),
                                                     to_cuda(rmean), to_cuda(rinvstd), true, 1e-5, mask),
                     ops::native_batch_norm_backward(g, x, w, rm, rv, rmean, rinvstd, true, 1e-5, mask),
                     "batch_norm backward " + m, 16, 16.0);
      }
    }
  }
}

TEST(CudaConvTest, BatchNormEvalIsTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string what(dtype_short_name(dt));
    const Tensor x = bn_input({4, 3, 5, 6}, dt, 27), w = input({3}, dt, 28), b = input({3}, dt, 29);
    const Tensor rm = input({3}, dt, 30), rv = ops::add(ops::abs(input({3}, dt, 31)), 0.5);
    auto [y, mean, invstd] =
        ops::native_batch_norm(to_cuda(x), to_cuda(w), to_cuda(b), to_cuda(rm), to_cuda(rv), false, 0.1, 1e-5);
    auto [ry, rmean, rinvstd] = ops::native_batch_norm(x, w, b, rm, rv, false, 0.1, 1e-5);
    expect_same(y, ry, "batch_norm eval " + what);
    // The CPU's eval saves are empty; CUDA's hold running_mean and
    // 1 / sqrt(running_var + eps) in the compute type (Note [Batch norm on CUDA]).
    EXPECT_EQ(rmean.numel(), 0) << what;
    EXPECT_EQ(rinvstd.numel(), 0) << what;
    const DType stat = dt == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
    expect_same(mean, ops::to(rm, stat), "eval save_mean " + what);
    expect_close(invstd, ops::rsqrt(ops::add(ops::to(rv, stat), 1e-5)), "eval save_invstd " + what, 4);
    const Tensor g = input({4, 3, 5, 6}, dt, 32);
    auto [dx, dw, db] = ops::native_batch_norm_backward(to_cuda(g), to_cuda(x), to_cuda(w), to_cuda(rm), to_cuda(rv),
                                                        std::nullopt, std::nullopt, false, 1e-5, kAllGrads);
    auto [rdx, rdw, rdb] =
        ops::native_batch_norm_backward(g, x, w, rm, rv, std::nullopt, std::nullopt, false, 1e-5, kAllGrads);
    expect_same(dx, rdx, "batch_norm eval backward dx " + what);
    expect_close(dw, rdw, "batch_norm eval backward dw " + what, 16, 16.0);
    expect_close(db, rdb, "batch_norm eval backward db " + what, 16, 16.0);
    // Repeats are bit for bit.
    auto again = ops::native_batch_norm_backward(to_cuda(g), to_cuda(x), to_cuda(w), to_cuda(rm), to_cuda(rv),
                                                 std::nullopt, std::nullopt, false, 1e-5, kAllGrads);
    expect_same(std::get<1>(again), to_cpu(dw), "dw repeats " + what);
  }
}

// ---- Layouts (See Note [Model op layouts]) ----

// conv_like_cpu: expect_like_cpu for a convolution of input (one of args),
// except that a float64 one of a non-empty input is row-major on cuda, as
// PyTorch 2.x's cuDNN rule (cudnn_conv_suggest_memory_format), where the CPU
// keeps channels-last.
void conv_like_cpu(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                   const std::vector<Tensor>& args, const Tensor& input, double scale, double floor) {
  if (input.dtype() != DType::kFloat64 || input.numel() == 0) {
    return testing::expect_like_cpu(what, f, args, scale, floor);
  }
  std::vector<Tensor> on_cuda;
  for (const Tensor& a : args) on_cuda.push_back(testing::to_cuda_as_strided(a));
  const Tensor want = f(args), got = f(on_cuda);
  EXPECT_EQ(testing::strides_of(got), testing::strides_of(ops::contiguous(want))) << what << ": " << got.meta_str();
  expect_close(got, want, what, scale, floor);
}

// like_fake_cuda: f on cuda copies of args (to_cuda_as_strided) gives the
// strides f gives fake copies of them (Meta standing in for the CUDA kernels,
// Note [Meta kernels standing in for a device]) and the CPU's values.
void like_fake_cuda(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                    const std::vector<Tensor>& args, double scale, double floor) {
  std::vector<Tensor> on_cuda;
  for (const Tensor& a : args) on_cuda.push_back(testing::to_cuda_as_strided(a));
  const Tensor want = f(args), got = f(on_cuda);
  std::vector<int64_t> fake_strides;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    std::vector<Tensor> fakes;
    for (const Tensor& t : on_cuda) fakes.push_back(fake.from_real(t));
    fake_strides = testing::strides_of(f(fakes));
  }
  EXPECT_EQ(testing::strides_of(got), fake_strides) << what << ": " << got.meta_str();
  expect_close(got, want, what, scale, floor);
}

// Convolution, pooling and batch norm compute row-major on the device and copy
// into the CPU's layout (channels-last for a channels-last input or weight, an
// empty input's row-major or zeros_like; a float64 convolution stays
// row-major, as cuDNN's), with the CPU's values; batch norm into CUDA's
// layouts (Note [Batch norm on CUDA]), which fake cuda tensors answer too.
TEST(CudaConvTest, ResultsTakeTheCpusLayouts) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  const int64_t one[] = {1, 1}, zero[] = {0, 0}, bias[] = {4};
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kBFloat16}) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = input({2, 3, 8, 8}, dt, 40), w = input({4, 3, 3, 3}, dt, 41), g = input({2, 4, 6, 6}, dt, 42);
    const Tensor cl = ops::contiguous(x, MemoryFormat::kChannelsLast);
    const Tensor wcl = ops::contiguous(w, MemoryFormat::kChannelsLast);
    const Tensor empty_cl = ops::permute(input({0, 8, 8, 3}, dt, 43), {0, 3, 1, 2});  // (192, 1, 24, 3)
    auto conv = [&](const Args& a) {
      return ops::convolution(a[0], a[1], std::nullopt, one, zero, one, false, zero, 1);
    };
    for (const auto& [name, in, weight] : {std::tuple{"cl x", cl, w}, std::tuple{"x cl w", x, wcl},
                                            std::tuple{"transposed x", ops::transpose(x, 2, 3), w},
                                            std::tuple{"empty cl x", empty_cl, w}}) {
      const std::string what = std::string(name) + " " + n;
      conv_like_cpu("convolution " + what, conv, {in, weight}, in, 8, 4.0);
      const Tensor go = in.numel() == 0 ? input({0, 4, 6, 6}, dt, 44) : g;
      for (int k = 0; k < 3; ++k) {
        conv_like_cpu(str_cat("convolution_backward ", k, " ", what),
                      [&](const Args& a) {
                        const auto grads = ops::convolution_backward(a[0], a[1], a[2], bias, one, zero, one, false,
                                                                     zero, 1, {true, true, true});
                        return k == 0 ? std::get<0>(grads) : k == 1 ? std::get<1>(grads) : std::get<2>(grads);
                      },
                      {go, in, weight}, in, 16, 12.0);
      }
    }
    for (const Tensor& t : {cl, x, ops::transpose(x, 2, 3)}) {
      const std::string what = n + " " + t.meta_str();
      const Tensor idx = std::get<1>(ops::max_pool2d_with_indices(t, {3, 3}, {2, 2}, {1, 1}));
      const Tensor g4 = input({2, 3, 4, 4}, dt, 45);
      expect_like_cpu("max_pool2d " + what,
                      [](const Args& a) {
                        return std::get<0>(ops::max_pool2d_with_indices(a[0], {3, 3}, {2, 2}, {1, 1}));
                      },
                      {t});
      expect_like_cpu("max_pool2d indices " + what,
                      [](const Args& a) {
                        return std::get<1>(ops::max_pool2d_with_indices(a[0], {3, 3}, {2, 2}, {1, 1}));
                      },
                      {t});
      expect_like_cpu("max_pool2d_backward " + what,
                      [](const Args& a) {
                        return ops::max_pool2d_with_indices_backward(a[0], a[1], {3, 3}, {2, 2}, {1, 1}, {1, 1}, false,
                                                                     a[2]);
                      },
                      {g4, t, idx});
      expect_like_cpu("avg_pool2d " + what, [](const Args& a) { return ops::avg_pool2d(a[0], {2, 2}); }, {t});
      expect_like_cpu("avg_pool2d_backward " + what,
                      [](const Args& a) {
                        return ops::avg_pool2d_backward(a[0], a[1], {2, 2}, {2, 2}, {0, 0}, false, true, std::nullopt);
                      },
                      {g4, t});
      expect_like_cpu("_adaptive_avg_pool2d " + what,
                      [](const Args& a) { return ops::_adaptive_avg_pool2d(a[0], {3, 3}); }, {t});
      expect_like_cpu("_adaptive_avg_pool2d_backward " + what,
                      [](const Args& a) { return ops::_adaptive_avg_pool2d_backward(a[0], a[1]); },
                      {input({2, 3, 3, 3}, dt, 46), t});
      // [1, 1]: mean.dim, then as_strided_ to (C, 1, C, C) for a channels-last t.
      expect_like_cpu("adaptive_avg_pool2d [1, 1] " + what,
                      [](const Args& a) { return ops::adaptive_avg_pool2d(a[0], {1, 1}); }, {t}, 16, 4.0);
      for (bool training : {true, false}) {
        like_fake_cuda(str_cat("native_batch_norm ", training, " ", what),
                       [&](const Args& a) {
                         const Tensor rm = ops::zeros({3}, {.dtype = dt, .device = a[0].device()});
                         const Tensor rv = ops::ones({3}, {.dtype = dt, .device = a[0].device()});
                         return std::get<0>(ops::native_batch_norm(a[0], a[1], std::nullopt, rm, rv, training, 0.1,
                                                                   1e-5));
                       },
                       {t, input({3}, dt, 47)}, 16, 4.0);
        // The backward (in training from the device's own saved statistics).
        like_fake_cuda(str_cat("native_batch_norm_backward ", training, " ", what),
                       [&](const Args& a) {
                         const Tensor rm = ops::zeros({3}, {.dtype = dt, .device = a[0].device()});
                         const Tensor rv = ops::ones({3}, {.dtype = dt, .device = a[0].device()});
                         auto [y, mean, invstd] =
                             ops::native_batch_norm(a[1], std::nullopt, std::nullopt, rm, rv, training, 0.1, 1e-5);
                         return std::get<0>(ops::native_batch_norm_backward(a[0], a[1], std::nullopt, rm, rv, mean,
                                                                            invstd, training, 1e-5,
                                                                            {true, true, true}));
                       },
                       {input({2, 3, 8, 8}, dt, 48), t}, 16, 16.0);
      }
      // What those answers are: a transposed input's strides forward; backward
      // row-major but in training on a channels-last input.
      const Tensor on_cuda = testing::to_cuda_as_strided(t);
      const Tensor rm = ops::zeros({3}, {.dtype = dt, .device = testing::kCuda0});
      const Tensor rv = ops::ones({3}, {.dtype = dt, .device = testing::kCuda0});
      const bool cl_input = is_contiguous(t, MemoryFormat::kChannelsLast);
      EXPECT_EQ(testing::strides_of(std::get<0>(ops::native_batch_norm(on_cuda, std::nullopt, std::nullopt, rm, rv,
                                                                       false, 0.1, 1e-5))),
                testing::strides_of(t)) << what;
      const Tensor g = to_cuda(input({2, 3, 8, 8}, dt, 49));
      for (bool train : {true, false}) {
        const Tensor dx = std::get<0>(ops::native_batch_norm_backward(g, on_cuda, std::nullopt, rm, rv, rm, rv, train,
                                                                      1e-5, {true, false, false}));
        EXPECT_EQ(testing::strides_of(dx), testing::strides_of(train && cl_input ? t : ops::contiguous(t)))
            << "native_batch_norm_backward dx " << train << " " << what;
      }
    }
  }
}

TEST(CudaConvTest, BatchNormErrorsAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(ops::zeros({2, 3, 4}));
  EXPECT_THAT(
      [&] { ops::native_batch_norm(x, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false, 0.1, 1e-5); },
      ThrowsMessage<Error>(HasSubstr("aten::native_batch_norm: running_mean must be defined in evaluation mode")));
  EXPECT_THAT([&] { ops::native_batch_norm(x, to_cuda(ops::ones({4})), std::nullopt, std::nullopt, std::nullopt, true,
                                           0.1, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("aten::native_batch_norm: weight should contain 3 elements not 4")));
  EXPECT_THAT([&] { ops::native_batch_norm(x, ops::ones({3}), std::nullopt, std::nullopt, std::nullopt, true, 0.1,
                                           1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

}  // namespace
}  // namespace opspec
