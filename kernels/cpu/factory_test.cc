#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "kernels/common/factory_meta.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace factory_test {

using ::testing::ElementsAre;
using ::testing::Each;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

TEST(FactoryTest, ZerosOnesFullEveryDtype) {
  for (DType t : kAllDTypes) {
    SCOPED_TRACE(dtype_short_name(t));
    Tensor z = ops::zeros({2, 3}, {.dtype = t});
    EXPECT_EQ(z.dtype(), t);
    EXPECT_TRUE(z.device().is_cpu());
    EXPECT_THAT(vec(z.sizes()), ElementsAre(2, 3));
    EXPECT_TRUE(z.is_contiguous());
    EXPECT_THAT(z.to_vector<double>(), Each(0.0));
    EXPECT_THAT(ops::ones({4}, {.dtype = t}).to_vector<double>(), Each(1.0));
    EXPECT_THAT(ops::full({3}, 1, {.dtype = t}).to_vector<double>(), Each(1.0));
  }
  EXPECT_THAT(ops::full({2}, 2.5, {.dtype = DType::kFloat16}).to_vector<double>(), Each(2.5));
  EXPECT_THAT(ops::full({2}, 2.5, {.dtype = DType::kInt32}).to_vector<double>(), Each(2.0));
  EXPECT_THAT(ops::full({2}, -7, {.dtype = DType::kFloat64}).to_vector<double>(), Each(-7.0));
  EXPECT_THAT(ops::full({2}, 0.1, {.dtype = DType::kBFloat16}).to_vector<double>(),
              Each(static_cast<double>(static_cast<float>(BFloat16(0.1f)))));
  EXPECT_THAT(ops::full({2}, 3, {.dtype = DType::kBool}).to_vector<double>(), Each(1.0));
  const int64_t big = (int64_t{1} << 53) + 1;  // not representable in double: must not pass through one
  EXPECT_THAT(ops::full({2}, big).to_vector<int64_t>(), Each(big));
}

TEST(FactoryTest, DefaultDtypes) {
  EXPECT_EQ(ops::zeros({1}).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::ones({1}).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::empty({1}).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::full({1}, true).dtype(), DType::kBool);
  EXPECT_EQ(ops::full({1}, 3).dtype(), DType::kInt64);
  EXPECT_EQ(ops::full({1}, 3.0).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::full({1}, 3, {.dtype = DType::kFloat64}).dtype(), DType::kFloat64);
  EXPECT_EQ(ops::scalar_tensor(3).dtype(), DType::kFloat32);  // torch.scalar_tensor uses the default dtype
}

TEST(FactoryTest, LargeFillsUseEveryElement) {
  const int64_t n = 100003;  // above the parallel threshold, not a multiple of anything
  EXPECT_THAT(ops::full({n}, 4.0).to_vector<float>(), Each(4.0f));
  EXPECT_THAT(ops::zeros({n}, {.dtype = DType::kFloat16}).to_vector<float>(), Each(0.0f));
}

TEST(FactoryTest, ScalarTensor) {
  Tensor s = ops::scalar_tensor(2.5);
  EXPECT_EQ(s.dim(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_FALSE(s.is_wrapped_number());
  EXPECT_DOUBLE_EQ(s.item<double>(), 2.5);
  EXPECT_EQ(ops::scalar_tensor(7, {.dtype = DType::kInt64}).item<int64_t>(), 7);
  EXPECT_TRUE(ops::scalar_tensor(true, {.dtype = DType::kBool}).item<bool>());
}

TEST(FactoryTest, EmptyAndEmptyStrided) {
  Tensor e = ops::empty({2, 3}, {.dtype = DType::kInt32});
  EXPECT_THAT(vec(e.sizes()), ElementsAre(2, 3));
  EXPECT_EQ(e.dtype(), DType::kInt32);
  EXPECT_GE(e.impl()->storage()->nbytes(), 24u);
  Tensor s = ops::empty_strided({2, 3}, {1, 2}, {.dtype = DType::kFloat64});
  EXPECT_THAT(vec(s.strides()), ElementsAre(1, 2));
  EXPECT_FALSE(s.is_contiguous());
  EXPECT_EQ(s.impl()->storage()->nbytes(), 6u * 8);  // 1 + 1*1 + 2*2 elements
  Tensor gap = ops::empty_strided({2, 2}, {10, 1});
  EXPECT_EQ(gap.impl()->storage()->nbytes(), 12u * 4);
  EXPECT_EQ(ops::empty_strided({0, 3}, {3, 1}).numel(), 0);
  EXPECT_EQ(ops::empty({0}).numel(), 0);
}

TEST(FactoryTest, NegativeSizes) {
  EXPECT_THAT([] { ops::zeros({-1, 2}); },
              ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -1: [-1, 2]")));
  EXPECT_THAT([] { ops::empty({2, -3}); }, ThrowsMessage<Error>(HasSubstr("negative dimension -3: [2, -3]")));
  EXPECT_THAT([] { ops::full({-1}, 1.0); }, ThrowsMessage<Error>(HasSubstr("aten::full: Trying to create")));
  EXPECT_THAT([] { ops::ones({-1, 2}, {.device = kMeta}); },
              ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -1: [-1, 2]")));
}

TEST(FactoryTest, Arange) {
  Tensor a = ops::arange(5);
  EXPECT_EQ(a.dtype(), DType::kInt64);
  EXPECT_THAT(a.to_vector<int64_t>(), ElementsAre(0, 1, 2, 3, 4));
  EXPECT_THAT(ops::arange(1, 10, 3).to_vector<int64_t>(), ElementsAre(1, 4, 7));
  EXPECT_THAT(ops::arange(10, 0, -3).to_vector<int64_t>(), ElementsAre(10, 7, 4, 1));
  EXPECT_THAT(ops::arange(-3, 3).to_vector<int64_t>(), ElementsAre(-3, -2, -1, 0, 1, 2));
  EXPECT_EQ(ops::arange(3, 3).numel(), 0);

  Tensor f = ops::arange(0, 2.5);
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_THAT(f.to_vector<float>(), ElementsAre(0, 1, 2));
  Tensor tenth = ops::arange(0, 1, 0.1);
  EXPECT_EQ(tenth.dtype(), DType::kFloat32);
  ASSERT_EQ(tenth.numel(), 10);
  for (int64_t i = 0; i < 10; ++i) {
    EXPECT_FLOAT_EQ(tenth.to_vector<float>()[i], static_cast<float>(0.1 * i));
  }
  EXPECT_EQ(ops::arange(0, 1, 0.3).numel(), 4);     // 0, .3, .6, .9
  EXPECT_EQ(ops::arange(1, 0, -0.25).numel(), 4);   // 1, .75, .5, .25
  EXPECT_EQ(ops::arange(0.5, 3).numel(), 3);        // ceil(2.5)
  EXPECT_THAT(ops::arange(0, 5, 2, {.dtype = DType::kFloat64}).to_vector<double>(), ElementsAre(0, 2, 4));
  EXPECT_THAT(ops::arange(4, {.dtype = DType::kFloat16}).to_vector<float>(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(ops::arange(4, {.dtype = DType::kBFloat16}).to_vector<float>(), ElementsAre(0, 1, 2, 3));
  EXPECT_THAT(ops::arange(0, 3, 1, {.dtype = DType::kInt32}).to_vector<int32_t>(), ElementsAre(0, 1, 2));
  // A float step with an integral dtype is converted first, as PyTorch does.
  EXPECT_THAT(ops::arange(0, 5, 2.5, {.dtype = DType::kInt64}).to_vector<int64_t>(), ElementsAre(0, 2, 4));
}

TEST(FactoryTest, ArangeLarge) {
  const int64_t n = 100000;
  Tensor a = ops::arange(n);
  const std::vector<int64_t> v = a.to_vector<int64_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(v[i], i);
  Tensor f = ops::arange(0.0, 1000.0, 0.01, {.dtype = DType::kFloat64});
  EXPECT_EQ(f.numel(), 100000);
  EXPECT_DOUBLE_EQ(f.to_vector<double>()[12345], 0.01 * 12345);
}

TEST(FactoryTest, ArangeErrors) {
  EXPECT_THAT([] { ops::arange(0, 5, 0); }, ThrowsMessage<Error>(HasSubstr("step must be nonzero")));
  EXPECT_THAT([] { ops::arange(0, 1, 0.0); }, ThrowsMessage<Error>(HasSubstr("step must be nonzero")));
  EXPECT_THAT([] { ops::arange(0, 5, 0.5, {.dtype = DType::kInt64}); },
              ThrowsMessage<Error>(HasSubstr("step must be nonzero")));
  EXPECT_THAT([] { ops::arange(0, 5, -1); },
              ThrowsMessage<Error>(HasSubstr("upper bound and larger bound inconsistent with step sign")));
  EXPECT_THAT([] { ops::arange(5, 0, 1.5); },
              ThrowsMessage<Error>(HasSubstr("upper bound and larger bound inconsistent with step sign")));
  EXPECT_THAT([] { ops::arange(-1); },
              ThrowsMessage<Error>(HasSubstr("upper bound and larger bound inconsistent with step sign")));
  EXPECT_THAT([] { ops::arange(0, std::numeric_limits<double>::infinity()); },
              ThrowsMessage<Error>(HasSubstr("unsupported range: 0 -> inf")));
  EXPECT_THAT([] { ops::arange(3, {.dtype = DType::kBool}); },
              ThrowsMessage<Error>(HasSubstr("\"arange_cpu\" not implemented for 'Bool'")));
  EXPECT_THAT([] { ops::arange(0, 1e300, 1e-300); },
              ThrowsMessage<Error>(HasSubstr("invalid size, possible overflow?")));
}

TEST(FactoryTest, LikeOps) {
  Tensor base = ops::t(ops::zeros({3, 2}, {.dtype = DType::kInt32}));  // non-contiguous
  Tensor z = ops::zeros_like(base);
  EXPECT_THAT(vec(z.sizes()), ElementsAre(2, 3));
  EXPECT_EQ(z.dtype(), DType::kInt32);
  EXPECT_THAT(vec(z.strides()), ElementsAre(1, 2));  // preserve_format: torch keeps base's (1, 2)
  EXPECT_FALSE(z.is_alias_of(base));
  EXPECT_THAT(z.to_vector<int32_t>(), Each(0));
  Tensor o = ops::ones_like(base, {.dtype = DType::kFloat16});
  EXPECT_EQ(o.dtype(), DType::kFloat16);
  EXPECT_THAT(o.to_vector<float>(), Each(1.0f));
  Tensor f = ops::full_like(base, 2.75);  // self's dtype, not the value's
  EXPECT_EQ(f.dtype(), DType::kInt32);
  EXPECT_THAT(f.to_vector<int32_t>(), Each(2));
  EXPECT_THAT(ops::full_like(base, 2.75, {.dtype = DType::kFloat64}).to_vector<double>(), Each(2.75));
  Tensor e = ops::empty_like(base, {.dtype = DType::kBool});
  EXPECT_THAT(vec(e.sizes()), ElementsAre(2, 3));
  EXPECT_EQ(e.dtype(), DType::kBool);
}

TEST(FactoryTest, LikeOpsAcrossDevices) {
  Tensor cpu = ops::ones({2, 3}, {.dtype = DType::kFloat64});
  const AllocatorStats before = get_allocator(DeviceType::kCPU)->stats();
  Tensor m = ops::zeros_like(cpu, {.device = kMeta});
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_EQ(m.dtype(), DType::kFloat64);
  EXPECT_THAT(vec(m.sizes()), ElementsAre(2, 3));
  EXPECT_TRUE(ops::full_like(cpu, 3, {.device = kMeta}).device().is_meta());
  EXPECT_EQ(get_allocator(DeviceType::kCPU)->stats().allocation_count, before.allocation_count);

  Tensor meta_self = ops::empty({4}, {.dtype = DType::kInt32, .device = kMeta});
  EXPECT_TRUE(ops::ones_like(meta_self).device().is_meta());
  Tensor back = ops::full_like(meta_self, 5, {.device = kCPU});
  EXPECT_TRUE(back.device().is_cpu());
  EXPECT_EQ(back.dtype(), DType::kInt32);
  EXPECT_THAT(back.to_vector<int32_t>(), ElementsAre(5, 5, 5, 5));
  EXPECT_THAT(ops::zeros_like(meta_self, {.device = kCPU}).to_vector<int32_t>(), Each(0));
  EXPECT_TRUE(ops::empty_like(meta_self, {.device = kCPU}).device().is_cpu());
}

TEST(FactoryTest, MetaFactoriesAllocateNothing) {
  const AllocatorStats before = get_allocator(DeviceType::kCPU)->stats();
  Tensor z = ops::zeros({1000, 1000}, {.device = kMeta});
  Tensor f = ops::full({3}, true, {.device = kMeta});
  Tensor a = ops::arange(0, 1, 0.1, {.device = kMeta});
  Tensor s = ops::empty_strided({2, 3}, {1, 2}, {.device = kMeta});
  Tensor st = ops::scalar_tensor(1, {.device = kMeta});
  EXPECT_EQ(get_allocator(DeviceType::kCPU)->stats().allocation_count, before.allocation_count);
  EXPECT_TRUE(z.device().is_meta());
  EXPECT_EQ(z.dtype(), DType::kFloat32);
  EXPECT_EQ(f.dtype(), DType::kBool);
  EXPECT_EQ(a.numel(), 10);
  EXPECT_EQ(a.dtype(), DType::kFloat32);
  EXPECT_THAT(vec(s.strides()), ElementsAre(1, 2));
  EXPECT_EQ(st.dim(), 0);
  EXPECT_THAT([&] { z.to_vector<float>(); }, ThrowsMessage<Error>(HasSubstr("meta")));
  EXPECT_THAT([] { ops::arange(0, 5, 0, {.device = kMeta}); }, ThrowsMessage<Error>(HasSubstr("step must be nonzero")));
}

TEST(FactoryTest, FillContiguousAndStrided) {
  Tensor x = ops::zeros({2, 3});
  const uint64_t v0 = x.impl()->version();
  Tensor& r = ops::fill_(x, 1.5);
  EXPECT_EQ(&r, &x);
  EXPECT_THAT(x.to_vector<float>(), Each(1.5f));
  EXPECT_GT(x.impl()->version(), v0);

  // Through a transposed view and a strided column slice: only those elements change.
  Tensor base = ops::zeros({3, 4}, {.dtype = DType::kInt64});
  Tensor col = ops::slice(base, 1, 1, std::nullopt, 2);  // columns 1 and 3
  ops::fill_(col, 7);
  EXPECT_THAT(base.to_vector<int64_t>(), ElementsAre(0, 7, 0, 7, 0, 7, 0, 7, 0, 7, 0, 7));
  Tensor tr = ops::t(base);
  ops::zero_(tr);
  EXPECT_THAT(base.to_vector<int64_t>(), Each(0));
  // An expanded (overlapping) tensor can be filled: every element gets the value.
  Tensor small = ops::zeros({3});
  Tensor ex = ops::expand(small, {4, 3});
  ops::fill_(ex, 2);
  EXPECT_THAT(small.to_vector<float>(), Each(2.0f));
  // 0-dim.
  Tensor s = ops::scalar_tensor(0.0, {.dtype = DType::kFloat64});
  ops::fill_(s, -3.25);
  EXPECT_DOUBLE_EQ(s.item<double>(), -3.25);
}

TEST(FactoryTest, FillConvertsToSelfDtype) {
  Tensor i = ops::zeros({2}, {.dtype = DType::kInt32});
  ops::fill_(i, 2.9);
  EXPECT_THAT(i.to_vector<int32_t>(), Each(2));
  ops::fill_(i, -2.9);
  EXPECT_THAT(i.to_vector<int32_t>(), Each(-2));
  Tensor b = ops::zeros({2}, {.dtype = DType::kBool});
  ops::fill_(b, 0.5);
  EXPECT_THAT(b.to_vector<int>(), Each(1));
  Tensor h = ops::zeros({2}, {.dtype = DType::kFloat16});
  ops::fill_(h, std::numeric_limits<double>::infinity());
  EXPECT_THAT(h.to_vector<float>(), Each(std::numeric_limits<float>::infinity()));
  ops::fill_(h, std::nan(""));
  EXPECT_TRUE(std::isnan(h.to_vector<float>()[0]));
  Tensor f = ops::zeros({2}, {.dtype = DType::kFloat32});
  ops::fill_(f, true);
  EXPECT_THAT(f.to_vector<float>(), Each(1.0f));
}

TEST(FactoryTest, FillOverflowErrors) {
  Tensor i = ops::zeros({2}, {.dtype = DType::kInt32});
  EXPECT_THAT([&] { ops::fill_(i, int64_t{1} << 40); },
              ThrowsMessage<Error>(HasSubstr("value cannot be converted to type int32_t without overflow")));
  EXPECT_THAT([&] { ops::fill_(i, 1e10); }, ThrowsMessage<Error>(HasSubstr("without overflow")));
  Tensor l = ops::zeros({2}, {.dtype = DType::kInt64});
  EXPECT_THAT([&] { ops::fill_(l, std::nan("")); },
              ThrowsMessage<Error>(HasSubstr("value cannot be converted to type int64_t without overflow")));
  EXPECT_THAT([&] { ops::fill_(l, 9.3e18); }, ThrowsMessage<Error>(HasSubstr("without overflow")));
  Tensor h = ops::zeros({2}, {.dtype = DType::kFloat16});
  EXPECT_THAT([&] { ops::fill_(h, 1e5); }, ThrowsMessage<Error>(HasSubstr("c10::Half without overflow")));
  EXPECT_THAT([] { ops::full({2}, 300000, {.dtype = DType::kFloat16}); },
              ThrowsMessage<Error>(HasSubstr("aten::full: value cannot be converted")));
  EXPECT_THAT(i.to_vector<int32_t>(), Each(0)) << "a failed fill leaves self unchanged";
}

TEST(FactoryTest, FillAndZeroOnMeta) {
  Tensor m = ops::empty({2, 3}, {.device = kMeta});
  const uint64_t v0 = m.impl()->version();
  Tensor& r = ops::fill_(m, 1);
  EXPECT_EQ(&r, &m);
  ops::zero_(m);
  EXPECT_EQ(m.impl()->version(), v0 + 2);
}

// fill_.Tensor: a 0-dim value's item() (converted as fill_.Scalar converts it:
// 2.7 into i64 is 2, as torch 1.13); PyTorch's text for a value with dims.
TEST(FactoryTest, FillWithAZeroDimTensor) {
  Tensor x = ops::zeros({2, 3});
  Tensor& r = ops::fill_(x, ops::full({}, 1.5));
  EXPECT_EQ(&r, &x);
  EXPECT_THAT(x.to_vector<float>(), Each(1.5f));
  Tensor l = ops::zeros({3}, {.dtype = DType::kInt64});
  ops::fill_(l, ops::full({}, 2.7));
  EXPECT_THAT(l.to_vector<double>(), Each(2.0));
  Tensor col = ops::slice(x, 1, 1, 2);
  ops::fill_(col, ops::select(ops::select(x, 0, 0), 0, 0));  // a value aliasing self: read first
  EXPECT_THAT(x.to_vector<float>(), Each(1.5f));
  EXPECT_THAT([&] { ops::fill_(x, ops::ones({1})); },
              ThrowsMessage<Error>(HasSubstr("fill_ only supports 0-dimension value tensor but got tensor with 1 dimensions.")));
  Tensor m = ops::empty({2}, {.device = kMeta});
  const uint64_t v0 = m.impl()->version();
  ops::fill_(m, ops::full({}, 3.0));
  EXPECT_EQ(m.impl()->version(), v0 + 1);
  EXPECT_THAT([&] { ops::fill_(m, ops::ones({2, 2})); },
              ThrowsMessage<Error>(HasSubstr("but got tensor with 2 dimensions.")));
  EXPECT_THAT([&] { ops::fill_(x, ops::full({}, 1.0, {.device = kMeta})); },
              ThrowsMessage<Error>(HasSubstr("but value is on meta")));
}

TEST(FactoryTest, ZeroLargeNonContiguous) {
  Tensor base = ops::ones({300, 400});
  Tensor tr = ops::t(base);
  ops::zero_(tr);
  EXPECT_THAT(base.to_vector<float>(), Each(0.0f));
  Tensor big = ops::ones({200000}, {.dtype = DType::kFloat64});
  ops::zero_(big);
  EXPECT_THAT(big.to_vector<double>(), Each(0.0));
}

TEST(FactoryTest, ArangeGeometryMatchesPyTorchSizes) {
  using internal::arange_geometry;
  EXPECT_EQ(arange_geometry(0, 10, 3, std::nullopt, "t").numel, 4);
  EXPECT_EQ(arange_geometry(0, -10, -3, std::nullopt, "t").numel, 4);
  EXPECT_EQ(arange_geometry(0, 1, 0.1, std::nullopt, "t").numel, 10);
  EXPECT_EQ(arange_geometry(0, 10, 3, DType::kFloat64, "t").numel, 4);
  EXPECT_EQ(arange_geometry(0.0, 1.0, 0.1, DType::kFloat64, "t").dtype, DType::kFloat64);
  EXPECT_EQ(arange_geometry(int64_t{-4611686018427387904}, int64_t{4611686018427387904}, int64_t{1} << 61,
                            std::nullopt, "t")
                .numel,
            4);
}

}  // namespace
}  // namespace opspec
