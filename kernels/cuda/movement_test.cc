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
