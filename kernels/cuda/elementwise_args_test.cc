// make_args (elementwise launches) is host code: dims are dropped, ordered and
// coalesced, cpu scalars folded in, and the index width chosen, with no GPU.
#include "kernels/cuda/elementwise_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec::internal::cuda {
namespace cuda_elementwise_args_test {

using testing::claiming_cuda;

TEST(ElementwiseArgsTest, ContiguousOperandsAreOneDim) {
  const Tensor out = claiming_cuda(ops::empty({4, 5, 6}));
  const Tensor a = claiming_cuda(ops::ones({4, 5, 6}));
  const ElementwiseArgs args = make_args(out, {a}, {DType::kFloat32});
  EXPECT_EQ(args.ntensors, 2);
  EXPECT_EQ(args.numel, 120);
  EXPECT_EQ(args.ndim, 1);
  EXPECT_TRUE(args.contiguous);
  EXPECT_TRUE(args.index32);
  EXPECT_EQ(args.data[0], out.raw_data());
  EXPECT_EQ(args.data[1], a.raw_data());
  EXPECT_EQ(args.code[1], kF32);
}

TEST(ElementwiseArgsTest, BroadcastAndTransposedInputsKeepTheirStrides) {
  const Tensor out = claiming_cuda(ops::empty({4, 5}));
  const Tensor row = claiming_cuda(ops::ones({5}, {.dtype = DType::kInt32}));
  const Tensor transposed = claiming_cuda(ops::t(ops::ones({5, 4})));
  const ElementwiseArgs args = make_args(out, {row, transposed}, {DType::kFloat32, DType::kFloat32});
  ASSERT_EQ(args.ndim, 2);
  EXPECT_FALSE(args.contiguous);
  EXPECT_EQ(args.sizes[0], 4);
  EXPECT_EQ(args.sizes[1], 5);
  EXPECT_EQ(args.strides[0][0], 5);  // output, row-major
  EXPECT_EQ(args.strides[0][1], 1);
  EXPECT_EQ(args.strides[1][0], 0);  // row broadcast over dim 0
  EXPECT_EQ(args.strides[1][1], 1);
  EXPECT_EQ(args.strides[2][0], 1);  // transposed
  EXPECT_EQ(args.strides[2][1], 4);
  EXPECT_EQ(args.code[1], kI32);  // converted on load, not here
}

TEST(ElementwiseArgsTest, OutputDimsAreOrderedByStride) {
  // An in-place op on a transposed tensor walks memory in order.
  const Tensor out = claiming_cuda(ops::t(ops::empty({3, 7})));
  const Tensor other = claiming_cuda(ops::ones({7, 3}));
  const ElementwiseArgs args = make_args(out, {other}, {DType::kFloat32});
  ASSERT_EQ(args.ndim, 2);
  EXPECT_EQ(args.sizes[1], 7);  // innermost: the output's stride-1 dim
  EXPECT_EQ(args.strides[0][1], 1);
  EXPECT_EQ(args.strides[1][1], 3);
}

TEST(ElementwiseArgsTest, CpuScalarsBecomeLaunchValuesInTheStorageType) {
  const Tensor out = claiming_cuda(ops::empty({8}, {.dtype = DType::kFloat16}));
  const Tensor x = claiming_cuda(ops::ones({8}, {.dtype = DType::kFloat16}));
  const ElementwiseArgs args = make_args(out, {x, ops::scalar_tensor(0.1, {.dtype = DType::kFloat64})},
                                         {DType::kFloat16, DType::kFloat16});
  EXPECT_EQ(args.data[2], nullptr);
  EXPECT_EQ(args.code[2], kF16);
  EXPECT_EQ(args.scalar[2], Half(static_cast<float>(0.1)).bits);
  EXPECT_TRUE(args.contiguous);  // scalars do not take part in the layout
  EXPECT_EQ(scalar_bits(ops::scalar_tensor(-3, {.dtype = DType::kInt64}), DType::kFloat32),
            std::bit_cast<uint32_t>(-3.0f));
}

TEST(ElementwiseArgsTest, LargeExtentsUse64BitIndexing) {
  // A [2, 2^31] view needs more than 32-bit offsets (no memory is touched).
  const Tensor base = claiming_cuda(ops::empty({1}));
  const Tensor big = internal::make_view(base, {2, int64_t{1} << 31}, {int64_t{1} << 31, 1}, 0);
  const Tensor small = internal::make_view(base, {2, 3}, {0, 0}, 0);
  EXPECT_FALSE(make_args(big, {}, {}).index32);
  EXPECT_TRUE(make_args(small, {}, {}).index32);
}

TEST(ElementwiseArgsTest, TooManyDimsAfterCoalescingIsNotImplemented) {
  // Every other element of a 2^9 cube in 9 dims: nothing coalesces.
  const Tensor base = claiming_cuda(ops::empty({1}));
  SizeVec sizes(9, 2), strides(9);
  for (int d = 0; d < 9; ++d) strides[d] = int64_t{1} << (2 * (9 - d));
  const Tensor out = internal::make_view(base, sizes, strides, 0);
  EXPECT_THROW(make_args(out, {}, {}), NotImplementedError);
}

}  // namespace
}  // namespace opspec::internal::cuda
