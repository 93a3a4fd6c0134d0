// The movement ops' CUDA kernels (movement.cc, movement.cu) against the CPU
// kernels (skipped without a GPU): exact for the gathers (constant_pad_nd,
// flip, roll, repeat, upsample_nearest2d) and upsample_nearest2d_backward
// (the same summation order), to rounding for group norm; and the CPU's
// error texts, which need no GPU (claiming_cuda tensors).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <tuple>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_movement_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_close;
using testing::expect_same;
using testing::to_cuda;

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) {
  const Tensor x = testing::seeded_input(sizes, DType::kFloat64, seed);
  return dt == DType::kBool || dt == DType::kInt64 || dt == DType::kInt32 ? ops::to(ops::mul(x, 10.0), dt)
                                                                          : ops::to(x, dt);
}

TEST(CudaMovementTest, GathersMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAllDTypes) {
    const std::string n = std::string(dtype_short_name(dt));
    const Tensor x = input({3, 4, 5}, dt, 1);
    const Tensor xt = ops::transpose(x, 0, 2);  // strided
    const Tensor cx = to_cuda(x), cxt = ops::transpose(cx, 0, 2);
    expect_same(ops::constant_pad_nd(cx, {1, -2, 0, 3}, 1), ops::constant_pad_nd(x, {1, -2, 0, 3}, 1), "pad " + n);
    expect_same(ops::constant_pad_nd(cxt, {2, 2}), ops::constant_pad_nd(xt, {2, 2}), "pad strided " + n);
    expect_same(ops::flip(cxt, {0, -1}), ops::flip(xt, {0, -1}), "flip " + n);
    expect_same(ops::roll(cxt, {2, -7}, {1, 0}), ops::roll(xt, {2, -7}, {1, 0}), "roll " + n);
    expect_same(ops::roll(cxt, {9}), ops::roll(xt, {9}), "roll flat " + n);
    expect_same(ops::repeat(cxt, {2, 1, 3, 2}), ops::repeat(xt, {2, 1, 3, 2}), "repeat " + n);
  }
  for (DType dt : testing::kFloatDTypes) {
    const std::string n = std::string(dtype_short_name(dt));
    const Tensor x = input({2, 3, 5, 7}, dt, 2);
    expect_same(ops::upsample_nearest2d(to_cuda(x), {8, 11}), ops::upsample_nearest2d(x, {8, 11}), "up " + n);
    expect_same(ops::upsample_nearest2d(to_cuda(x), {3, 14}, 0.7, 2.0), ops::upsample_nearest2d(x, {3, 14}, 0.7, 2.0),
                "up scales " + n);
    const Tensor g = input({2, 3, 8, 11}, dt, 3);
    expect_same(ops::upsample_nearest2d_backward(to_cuda(g), {8, 11}, {2, 3, 5, 7}),
                ops::upsample_nearest2d_backward(g, {8, 11}, {2, 3, 5, 7}), "up backward " + n);
  }
}

// Pads, flips, upsampling and group norm gather row-major on the device, then
// copy into the CPU's layout (the input's suggested format, a crop's or a
// flip's preserved strides; See Note [Model op layouts]), with the CPU's
// values. roll is row-major on CUDA, as PyTorch's CUDA kernel.
TEST(CudaMovementTest, ResultsTakeTheCpusLayouts) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  for (DType dt : kAllDTypes) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = input({2, 3, 6, 5}, dt, 8);
    const Tensor cl = ops::contiguous(x, MemoryFormat::kChannelsLast);
    const Tensor perm = ops::permute(input({2, 3, 4}, dt, 9), {2, 0, 1});  // [4, 2, 3] (1, 12, 4)
    const Tensor sliced = ops::slice(ops::t(input({6, 4}, dt, 10)), 1, 0, 6, 2);  // not dense
    const Tensor cl3 = ops::permute(input({2, 2, 4, 4, 3}, dt, 11), {0, 4, 1, 2, 3});  // channels_last_3d
    for (const Tensor& t : {cl, perm, sliced, cl3, x}) {
      const std::string what = n + " " + t.meta_str();
      expect_like_cpu("pad " + what, [](const Args& a) { return ops::constant_pad_nd(a[0], {1, 2}, 1); }, {t});
      expect_like_cpu("crop " + what, [](const Args& a) { return ops::constant_pad_nd(a[0], {-1, 0}); }, {t});
      expect_like_cpu("flip " + what, [](const Args& a) { return ops::flip(a[0], {0, -1}); }, {t});
      const Tensor want = ops::roll(t, {1, -2}, {0, -1});
      const Tensor got = ops::roll(testing::to_cuda_as_strided(t), {1, -2}, {0, -1});
      EXPECT_EQ(testing::strides_of(got), testing::strides_of(ops::contiguous(t))) << "roll " << what;
      expect_same(got, want, "roll " + what);
    }
    expect_like_cpu("pad 4-d crop and pad " + n,
                    [](const Args& a) { return ops::constant_pad_nd(a[0], {1, -1, 2, 0}, 3); }, {cl});
    if (dt == DType::kBool || dt == DType::kInt64 || dt == DType::kInt32) continue;
    const Tensor tr = ops::transpose(input({2, 3, 5, 6}, dt, 13), 2, 3);  // [2, 3, 6, 5], H and W swapped
    for (const Tensor& t : {cl, x, tr}) {
      const std::string what = n + " " + t.meta_str();
      expect_like_cpu("upsample " + what, [](const Args& a) { return ops::upsample_nearest2d(a[0], {9, 11}); }, {t});
      // The backward follows grad_output's layout.
      expect_like_cpu("upsample backward " + what,
                      [](const Args& a) {
                        return ops::upsample_nearest2d_backward(a[0], {6, 5}, {2, 3, 3, 2});
                      },
                      {t});
      // Group norm: the CPU's values, row-major whatever the input's layout (PyTorch 2.x's CUDA Y).
      const Tensor w = input({3}, dt, 12);
      const Tensor want = std::get<0>(ops::native_group_norm(t, w, std::nullopt, 2, 3, 30, 3, 1e-5));
      const Tensor got = std::get<0>(ops::native_group_norm(testing::to_cuda_as_strided(t), testing::to_cuda(w),
                                                            std::nullopt, 2, 3, 30, 3, 1e-5));
      EXPECT_EQ(testing::strides_of(got), testing::strides_of(ops::contiguous(want))) << "group_norm " << what;
      expect_close(got, want, "group_norm " + what, 8, 1);
    }
  }
}

TEST(CudaMovementTest, GroupNormMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : testing::kFloatDTypes) {
    const std::string n = std::string(dtype_short_name(dt));
    const Tensor x = input({3, 6, 40}, dt, 4), w = input({6}, dt, 5), b = input({6}, dt, 6);
    auto [y, mean, rstd] = ops::native_group_norm(x, w, b, 3, 6, 40, 3, 1e-5);
    auto [cy, cmean, crstd] = ops::native_group_norm(to_cuda(x), to_cuda(w), to_cuda(b), 3, 6, 40, 3, 1e-5);
    expect_close(cy, y, "group_norm y " + n, 8, 1);
    expect_close(cmean, mean, "group_norm mean " + n, 8, 1);
    expect_close(crstd, rstd, "group_norm rstd " + n, 8, 1);
    const Tensor g = input({3, 6, 40}, dt, 7);
    auto [dx, dw, db] = ops::native_group_norm_backward(g, x, mean, rstd, w, 3, 6, 40, 3, {true, true, true});
    auto [cdx, cdw, cdb] = ops::native_group_norm_backward(to_cuda(g), to_cuda(x), to_cuda(mean), to_cuda(rstd),
                                                           to_cuda(w), 3, 6, 40, 3, {true, true, true});
    expect_close(cdx, dx, "group_norm dx " + n, 64, 1);
    expect_close(cdw, dw, "group_norm dw " + n, 64, 10);
    expect_close(cdb, db, "group_norm db " + n, 64, 10);
  }
  // Empty input: zero mean and NaN rstd, as the CPU.
  auto [ey, em, er] = ops::native_group_norm(to_cuda(ops::empty({2, 4, 0})), std::nullopt, std::nullopt, 2, 4, 0, 2,
                                             1e-5);
  auto [hy, hm, hr] = ops::native_group_norm(ops::empty({2, 4, 0}), std::nullopt, std::nullopt, 2, 4, 0, 2, 1e-5);
  expect_same(em, hm, "empty mean");
  expect_same(er, hr, "empty rstd");
}

TEST(CudaMovementTest, ErrorsAreTheCpus) {
  // These fail before reading data, so they need no GPU.
  const Tensor x = testing::claiming_cuda(ops::empty({2, 3}));
  EXPECT_THAT([&] { ops::constant_pad_nd(x, {1}); },
              ThrowsMessage<Error>(HasSubstr("Length of pad must be even but instead it equals 1")));
  EXPECT_THAT([&] { ops::flip(x, {0, 0}); },
              ThrowsMessage<Error>(HasSubstr("dim 0 appears multiple times in the list of dims")));
  EXPECT_THAT([&] { ops::roll(x, {1, 2}, {0}); },
              ThrowsMessage<Error>(HasSubstr("shifts and dimensions must align. shifts: 2, dims:1")));
  EXPECT_THAT([&] { ops::repeat(x, {2}); },
              ThrowsMessage<Error>(HasSubstr("Number of dimensions of repeat dims can not be smaller")));
  EXPECT_THAT([&] { ops::upsample_nearest2d(x, {2, 2}); },
              ThrowsMessage<Error>(HasSubstr("It is expected input_size equals to 4, but got size 2")));
  const Tensor g = testing::claiming_cuda(ops::empty({1, 2, 4, 4}));
  EXPECT_THAT([&] { ops::upsample_nearest2d_backward(g, {4, 5}, {1, 2, 3, 3}); },
              ThrowsMessage<Error>(HasSubstr("Expected grad_output to have the same shape as output")));
  const Tensor gn = testing::claiming_cuda(ops::empty({2, 4, 3}));
  EXPECT_THAT([&] { ops::native_group_norm(gn, std::nullopt, std::nullopt, 2, 4, 3, 3, 1e-5); },
              ThrowsMessage<Error>(HasSubstr("Expected number of channels in input to be divisible by num_groups")));
}

}  // namespace
}  // namespace opspec
