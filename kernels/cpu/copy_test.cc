#include "kernels/cpu/copy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>

#include "kernels/cpu/loops.h"

namespace opspec::internal {
namespace copy_test {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// filled: a contiguous cpu tensor holding values (converted to dtype).
Tensor filled(std::vector<double> values, IntArrayRef shape, DType dtype = DType::kFloat64) {
  Tensor src = make_tensor({static_cast<int64_t>(values.size())}, DType::kFloat64, kCPU);
  std::copy(values.begin(), values.end(), src.data_ptr<double>());
  Tensor out = make_tensor(shape, dtype, kCPU);
  copy_into(out, make_view(src, shape, contiguous_strides(shape), 0));
  return out;
}

std::vector<double> iota(int64_t n) {
  std::vector<double> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

TEST(CopyTest, ContiguousSameDtype) {
  Tensor a = filled({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kFloat32);
  Tensor b = make_tensor({2, 3}, DType::kFloat32, kCPU);
  copy_into(b, a);
  EXPECT_THAT(b.to_vector<float>(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(CopyTest, TransposedSourceAndDestination) {
  Tensor a = filled({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kInt64);
  Tensor at = make_view(a, {3, 2}, {1, 3}, 0);  // a.t()
  Tensor b = make_tensor({3, 2}, DType::kInt32, kCPU);
  copy_into(b, at);
  EXPECT_THAT(b.to_vector<int>(), ElementsAre(1, 4, 2, 5, 3, 6));
  // Write into a transposed view of a fresh [2, 3] tensor.
  Tensor c = make_tensor({2, 3}, DType::kFloat32, kCPU);
  copy_into(make_view(c, {3, 2}, {1, 3}, 0), b);
  EXPECT_THAT(c.to_vector<float>(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(CopyTest, SlicedAndSteppedViews) {
  Tensor a = filled(iota(20), {4, 5}, DType::kFloat64);
  // a[1:3, ::2] -> [[5, 7, 9], [10, 12, 14]]
  Tensor v = make_view(a, {2, 3}, {5, 2}, 5);
  Tensor out = make_tensor({2, 3}, DType::kBFloat16, kCPU);
  copy_into(out, v);
  EXPECT_THAT(out.to_vector<double>(), ElementsAre(5, 7, 9, 10, 12, 14));
}

TEST(CopyTest, BroadcastsSourceToDestination) {
  Tensor row = filled({1, 2, 3}, {3}, DType::kInt64);
  Tensor out = make_tensor({2, 3}, DType::kFloat16, kCPU);
  copy_into(out, row);
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(1, 2, 3, 1, 2, 3));
  Tensor col = filled({7, 8}, {2, 1}, DType::kInt32);
  copy_into(out, col);
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(7, 7, 7, 8, 8, 8));
  Tensor scalar = filled({9}, {}, DType::kFloat64);
  copy_into(out, scalar);
  EXPECT_THAT(out.to_vector<float>(), ElementsAre(9, 9, 9, 9, 9, 9));
}

TEST(CopyTest, RejectsNonBroadcastableSource) {
  Tensor a = filled({1, 2, 3}, {3});
  Tensor out = make_tensor({2, 2}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { copy_into(out, a); }, ThrowsMessage<Error>(HasSubstr("must match the size")));
  Tensor small = make_tensor({1}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { copy_into(small, a); }, ThrowsMessage<Error>(HasSubstr("doesn't match the broadcast shape")));
}

TEST(CopyTest, DtypeConversionsFollowPyTorch) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor f = filled({-2.7, -0.5, 0.0, 0.5, 2.7, 1e30, nan, inf}, {8}, DType::kFloat64);
  Tensor i64 = make_tensor({8}, DType::kInt64, kCPU);
  copy_into(i64, f);
  const int64_t kMin64 = std::numeric_limits<int64_t>::min();
  EXPECT_THAT(i64.to_vector<int64_t>(), ElementsAre(-2, 0, 0, 0, 2, kMin64, kMin64, kMin64));
  Tensor i32 = make_tensor({8}, DType::kInt32, kCPU);
  copy_into(i32, f);
  const int32_t kMin32 = std::numeric_limits<int32_t>::min();
  EXPECT_THAT(i32.to_vector<int32_t>(), ElementsAre(-2, 0, 0, 0, 2, kMin32, kMin32, kMin32));
  Tensor b = make_tensor({8}, DType::kBool, kCPU);
  copy_into(b, f);
  EXPECT_THAT(b.to_vector<int>(), ElementsAre(1, 1, 0, 1, 1, 1, 1, 1));
  // f64 -> f16 rounds to nearest even and overflows to inf.
  Tensor h = make_tensor({3}, DType::kFloat16, kCPU);
  copy_into(h, filled({1.0 + 1.0 / 4096, 70000, -1.0 / 3}, {3}));
  const std::vector<float> hv = h.to_vector<float>();
  EXPECT_EQ(hv[0], 1.0f);
  EXPECT_EQ(hv[1], std::numeric_limits<float>::infinity());
  EXPECT_EQ(hv[2], -0.333251953125f);
  // bool and int sources.
  Tensor from_bool = make_tensor({3}, DType::kFloat32, kCPU);
  copy_into(from_bool, filled({1, 0, 1}, {3}, DType::kBool));
  EXPECT_THAT(from_bool.to_vector<float>(), ElementsAre(1, 0, 1));
  Tensor narrow = make_tensor({1}, DType::kInt32, kCPU);
  copy_into(narrow, filled({4294967297.0}, {1}, DType::kInt64));  // 2^32 + 1 wraps to 1
  EXPECT_THAT(narrow.to_vector<int>(), ElementsAre(1));
}

TEST(CopyTest, EveryDtypePairRoundTripsSmallIntegers) {
  const DType all[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                       DType::kInt64,   DType::kInt32,   DType::kBool};
  for (DType from : all) {
    for (DType to : all) {
      const bool boolish = from == DType::kBool || to == DType::kBool;
      std::vector<double> vals = boolish ? std::vector<double>{0, 1, 1, 0} : std::vector<double>{0, 1, -3, 100};
      Tensor src = filled(vals, {2, 2}, from);
      Tensor dst = make_tensor({2, 2}, to, kCPU);
      copy_into(make_view(dst, {2, 2}, {1, 2}, 0), make_view(src, {2, 2}, {1, 2}, 0));
      EXPECT_THAT(dst.to_vector<double>(), ElementsAreArray(vals))
          << dtype_short_name(from) << " -> " << dtype_short_name(to);
    }
  }
}

TEST(CopyTest, OverlappingSourceIsReadBeforeWriting) {
  Tensor a = filled({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  copy_into(a, make_view(a, {2, 2}, {1, 2}, 0));  // a.copy_(a.t())
  EXPECT_THAT(a.to_vector<float>(), ElementsAre(1, 3, 2, 4));
  Tensor b = filled({1, 2, 3, 4, 5}, {5}, DType::kInt64);
  copy_into(make_view(b, {4}, {1}, 1), make_view(b, {4}, {1}, 0));  // shift right by one
  EXPECT_THAT(b.to_vector<int64_t>(), ElementsAre(1, 1, 2, 3, 4));
  copy_into(b, b);
  EXPECT_THAT(b.to_vector<int64_t>(), ElementsAre(1, 1, 2, 3, 4));
}

TEST(CopyTest, EmptyAndZeroDim) {
  Tensor e = make_tensor({0, 3}, DType::kFloat32, kCPU);
  copy_into(e, filled({1, 2, 3}, {3}));
  EXPECT_EQ(e.numel(), 0);
  Tensor z = make_tensor({}, DType::kInt32, kCPU);
  copy_into(z, filled({5.9}, {}));
  EXPECT_THAT(z.to_vector<int>(), ElementsAre(5));
}

TEST(CopyTest, LargeStridedCopyIsParallelAndCorrect) {
  const int64_t n = 300, m = 257;  // > kGrainSize elements, odd inner size
  Tensor a = filled(iota(n * m), {n, m}, DType::kFloat32);
  Tensor out = make_tensor({m, n}, DType::kFloat64, kCPU);
  copy_into(out, make_view(a, {m, n}, {1, m}, 0));
  const std::vector<double> v = out.to_vector<double>();
  bool ok = true;
  for (int64_t i = 0; i < m && ok; ++i) {
    for (int64_t j = 0; j < n && ok; ++j) ok = v[i * n + j] == static_cast<double>(j * m + i);
  }
  EXPECT_TRUE(ok);
}

TEST(CopyTest, PermutedThreeDimSourceUsesTilesCorrectly) {
  // [3, 37, 45] viewed as [3, 45, 37] (last two dims swapped): partial tiles
  // on both axes, several matrices, and enough elements to run in parallel
  // when repeated over a bigger leading dim.
  for (int64_t lead : {3, 21}) {
    const int64_t r = 37, c = 45;
    Tensor a = filled(iota(lead * r * c), {lead, r, c}, DType::kInt32);
    Tensor out = make_tensor({lead, c, r}, DType::kFloat32, kCPU);
    copy_into(out, make_view(a, {lead, c, r}, {r * c, 1, c}, 0));
    const std::vector<float> v = out.to_vector<float>();
    bool ok = true;
    for (int64_t m = 0; m < lead && ok; ++m) {
      for (int64_t i = 0; i < c && ok; ++i) {
        for (int64_t j = 0; j < r && ok; ++j) ok = v[(m * c + i) * r + j] == static_cast<float>(m * r * c + j * c + i);
      }
    }
    EXPECT_TRUE(ok) << "lead " << lead;
  }
}

TEST(CopyTest, ParallelChunksMayStartMidRow) {
  // Rows of 257 out of 260: not coalescable, not tiled, > kGrainSize elements.
  const int64_t n = 300, m = 257, ld = 260;
  Tensor a = filled(iota(n * ld), {n, ld}, DType::kFloat32);
  Tensor out = make_tensor({n, m}, DType::kFloat64, kCPU);
  copy_into(out, make_view(a, {n, m}, {ld, 1}, 0));
  const std::vector<double> v = out.to_vector<double>();
  bool ok = true;
  for (int64_t i = 0; i < n && ok; ++i) {
    for (int64_t j = 0; j < m && ok; ++j) ok = v[i * m + j] == static_cast<double>(i * ld + j);
  }
  EXPECT_TRUE(ok);
  // Short rows come in blocks: [40000, 3] sliced from [40000, 4].
  Tensor b = filled(iota(40000 * 4), {40000, 4}, DType::kInt64);
  Tensor out2 = make_tensor({40000, 3}, DType::kInt64, kCPU);
  copy_into(out2, make_view(b, {40000, 3}, {4, 1}, 1));
  const std::vector<int64_t> w = out2.to_vector<int64_t>();
  for (int64_t i = 0; i < 40000 && ok; ++i) {
    for (int64_t j = 0; j < 3 && ok; ++j) ok = w[i * 3 + j] == i * 4 + j + 1;
  }
  EXPECT_TRUE(ok);
}

TEST(CopyTest, ContiguousCpuReturnsSelfOrCopy) {
  Tensor a = filled({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  EXPECT_TRUE(contiguous_cpu(a).is_same(a));
  Tensor c = contiguous_cpu(a, DType::kFloat64);
  EXPECT_EQ(c.dtype(), DType::kFloat64);
  Tensor t = contiguous_cpu(make_view(a, {2, 2}, {1, 2}, 0));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_FALSE(t.is_alias_of(a));
  EXPECT_THAT(t.to_vector<float>(), ElementsAre(1, 3, 2, 4));
}

TEST(CopyTest, CastForComputeKeepsBroadcastDimsCheap) {
  Tensor s = filled({2.5}, {1}, DType::kFloat32);
  Tensor expanded = make_view(s, {1000, 1000}, {0, 0}, 0);
  Tensor c = cast_for_compute(expanded, DType::kFloat64);
  EXPECT_EQ(c.dtype(), DType::kFloat64);
  EXPECT_THAT(c.strides(), ElementsAre(0, 0));
  EXPECT_EQ(c.impl()->storage()->nbytes(), 8u);
  EXPECT_EQ(read_element_as_double(c, 999999), 2.5);
}

TEST(CopyTest, BranchlessHalfConversionsAreBitIdenticalToHalf) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float want = Half::to_float(static_cast<uint16_t>(h));
    ASSERT_EQ(std::bit_cast<uint32_t>(half_bits_to_float(static_cast<uint16_t>(h))), std::bit_cast<uint32_t>(want))
        << "half bits " << h;
  }
  // Every float pattern takes ~10 s; check a dense stride plus the edges of
  // every half-precision rounding boundary (checked exhaustively offline).
  auto check = [](uint32_t u) {
    const float f = std::bit_cast<float>(u);
    ASSERT_EQ(float_to_half_bits(f), Half::from_float(f)) << "float bits " << u;
  };
  for (uint64_t u = 0; u <= 0xffffffffull; u += 4099) check(static_cast<uint32_t>(u));
  for (uint32_t h = 0; h < 65536; ++h) {
    const uint32_t center = std::bit_cast<uint32_t>(Half::to_float(static_cast<uint16_t>(h)));
    for (uint32_t d = 0; d < 8; ++d) {
      check(center + (1u << 12) + d - 4);  // around the half-way point to the next half
      check(center - d);
    }
  }
}

}  // namespace
}  // namespace opspec::internal
