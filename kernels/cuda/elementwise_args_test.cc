// make_args (elementwise launches) is host code: dims are dropped, ordered and
// coalesced, cpu scalars folded in, and the index width chosen, with no GPU.
#include "kernels/cuda/elementwise_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>
#include <utility>
#include <vector>

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

// Offsets: one operand's element offset per logical element.
using Offsets = std::vector<std::array<int64_t, kMaxOperands>>;

// launched: the element offsets a launch of a reaches, one row per linear
// index, computed as device_loops.cuh's offsets() does (its 64-bit form,
// which its 32-bit form equals whenever index32 holds), sorted.
Offsets launched(const ElementwiseArgs& a) {
  Offsets rows;
  for (int64_t i = 0; i < a.numel; ++i) {
    std::array<int64_t, kMaxOperands> off{};
    int64_t rest = i;
    for (int d = a.ndim - 1; d >= 0 && !a.contiguous; --d) {
      const int64_t idx = rest % a.sizes[d];
      rest /= a.sizes[d];
      for (int k = 0; k < a.ntensors; ++k) off[k] += idx * a.strides[k][d];
    }
    for (int k = 0; k < a.ntensors; ++k) {
      if (a.contiguous) off[k] = i;
      if (a.data[k] == nullptr) off[k] = 0;  // a scalar operand reads no memory
    }
    rows.push_back(off);
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// logical: the offsets each element of out and of the inputs (broadcast to
// out's shape) has by their own sizes and strides, sorted.
Offsets logical(const Tensor& out, const std::vector<Tensor>& inputs) {
  Offsets rows;
  std::vector<int64_t> idx(static_cast<size_t>(out.dim()), 0);
  for (int64_t i = 0; i < out.numel(); ++i) {
    std::array<int64_t, kMaxOperands> off{};
    for (int64_t d = 0; d < out.dim(); ++d) off[0] += idx[d] * out.strides()[d];
    for (size_t k = 0; k < inputs.size(); ++k) {
      const Tensor& t = inputs[k];
      const int64_t lead = out.dim() - t.dim();
      for (int64_t d = 0; d < t.dim(); ++d) off[k + 1] += (t.sizes()[d] == 1 ? 0 : idx[lead + d]) * t.strides()[d];
    }
    rows.push_back(off);
    for (int64_t d = out.dim() - 1; d >= 0; --d) {  // the next index, row-major
      if (++idx[d] < out.sizes()[d]) break;
      idx[d] = 0;
    }
  }
  std::sort(rows.begin(), rows.end());
  return rows;
}

// Strided outputs (results laid out as their inputs, See Note [Memory
// formats]): whatever the layouts, the launch pairs each output element with
// the same element of every input, and writes each output element once.
TEST(ElementwiseArgsTest, StridedOutputsReadTheMatchingInputElements) {
  auto view = [](IntArrayRef sizes, IntArrayRef strides) {
    int64_t extent = 1;
    for (size_t d = 0; d < sizes.size(); ++d) extent += (sizes[d] - 1) * strides[d];
    return claiming_cuda(ops::as_strided(ops::empty({std::max<int64_t>(extent, 1)}), sizes, strides));
  };
  const Tensor cl = view({2, 3, 4, 5}, {60, 1, 15, 3});      // channels-last
  const Tensor rm = view({2, 3, 4, 5}, {60, 20, 5, 1});      // row-major
  const Tensor perm = view({2, 3, 4, 5}, {60, 4, 1, 12});    // dims order N, W, C, H
  const Tensor sliced = view({2, 3, 4, 5}, {120, 40, 10, 2});  // every other element, not dense
  const Tensor row = view({5}, {1});                            // broadcast over N, C, H
  const Tensor col = view({3, 1, 1}, {1, 1, 1});                // broadcast over N, H, W
  const Tensor expanded = view({2, 3, 4, 5}, {0, 1, 0, 0});     // C only, stride 0 elsewhere
  const Tensor n111 = view({2, 1, 1, 1}, {1, 1, 1, 1});         // size-1 dims with odd strides
  const Tensor n111_out = view({2, 1, 1, 1}, {1, 2, 2, 2});
  const Tensor cpu_scalar = ops::scalar_tensor(2.0);
  struct Case {
    std::string name;
    Tensor out;
    std::vector<Tensor> inputs;
  };
  const std::vector<Case> cases = {
      {"cl <- cl", cl, {cl}},
      {"cl <- rm", cl, {rm}},
      {"cl <- rm, cl", cl, {rm, cl}},
      {"rm <- cl", rm, {cl}},
      {"perm <- cl, rm, row", perm, {cl, rm, row}},
      {"cl <- sliced, col", cl, {sliced, col}},
      {"sliced <- cl", sliced, {cl}},
      {"cl <- expanded, cpu scalar", cl, {expanded, cpu_scalar}},
      {"perm <- row, col", perm, {row, col}},
      {"n111 <- n111", n111_out, {n111}},
      {"0-dim <- 0-dim", view({}, {}), {view({}, {})}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<DType> storage(c.inputs.size(), DType::kFloat32);
    ElementwiseArgs a;
    switch (c.inputs.size()) {
      case 1: a = make_args(c.out, {c.inputs[0]}, {storage[0]}); break;
      case 2: a = make_args(c.out, {c.inputs[0], c.inputs[1]}, {storage[0], storage[1]}); break;
      default: a = make_args(c.out, {c.inputs[0], c.inputs[1], c.inputs[2]}, {storage[0], storage[1], storage[2]});
    }
    EXPECT_EQ(a.numel, c.out.numel());
    EXPECT_TRUE(a.index32);
    std::vector<Tensor> on_device;  // the cpu scalar reads no memory
    for (const Tensor& t : c.inputs) on_device.push_back(t.device().is_cpu() ? view({}, {}) : t);
    const Offsets got = launched(a);
    EXPECT_EQ(got, logical(c.out, on_device));
    // Each output element once.
    std::vector<int64_t> outs;
    for (const auto& row : got) outs.push_back(row[0]);
    std::sort(outs.begin(), outs.end());
    EXPECT_EQ(std::adjacent_find(outs.begin(), outs.end()), outs.end());
  }
  // Both channels-last: one dense dim, offsets shared (the fast path).
  const ElementwiseArgs both = make_args(cl, {cl}, {DType::kFloat32});
  EXPECT_EQ(both.ndim, 1);
  EXPECT_TRUE(both.contiguous);
  // A channels-last output over a row-major input: N, H*W and C, the output's stride-1 dim innermost.
  const ElementwiseArgs mixed = make_args(cl, {rm}, {DType::kFloat32});
  ASSERT_EQ(mixed.ndim, 3);
  EXPECT_FALSE(mixed.contiguous);
  EXPECT_THAT(std::vector<int64_t>(mixed.sizes, mixed.sizes + 3), ::testing::ElementsAre(2, 20, 3));
  EXPECT_THAT(std::vector<int64_t>(mixed.strides[0], mixed.strides[0] + 3), ::testing::ElementsAre(60, 3, 1));
  EXPECT_THAT(std::vector<int64_t>(mixed.strides[1], mixed.strides[1] + 3), ::testing::ElementsAre(60, 1, 20));
  // An empty output launches nothing.
  EXPECT_EQ(make_args(view({2, 0, 3}, {3, 3, 1}), {view({2, 0, 3}, {3, 3, 1})}, {DType::kFloat32}).numel, 0);
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
