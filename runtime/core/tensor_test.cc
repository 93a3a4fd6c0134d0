#include "runtime/core/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/core/device_hooks.h"
#include "runtime/core/shape_utils.h"

namespace opspec {
namespace tensor_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(DTypeTest, NamesFollowPyTorch) {
  EXPECT_EQ(dtype_short_name(DType::kFloat32), "f32");
  EXPECT_EQ(dtype_short_name(DType::kBFloat16), "bf16");
  EXPECT_EQ(dtype_short_name(DType::kBool), "b8");
  EXPECT_EQ(dtype_torch_name(DType::kFloat64), "torch.float64");
  EXPECT_EQ(scalar_type_name(DType::kInt64), "Long");
  EXPECT_EQ(parse_dtype("torch.int32"), DType::kInt32);
  EXPECT_EQ(parse_dtype("i64"), DType::kInt64);
  EXPECT_EQ(parse_dtype("bfloat16"), DType::kBFloat16);
  EXPECT_EQ(parse_dtype("float"), DType::kFloat32);
  EXPECT_EQ(parse_dtype("f128"), std::nullopt);
  EXPECT_EQ(element_size(DType::kFloat16), 2);
}

TEST(DTypeTest, PromotionLattice) {
  EXPECT_EQ(promote_types(DType::kInt64, DType::kFloat32), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kInt32, DType::kInt64), DType::kInt64);
  EXPECT_EQ(promote_types(DType::kBool, DType::kInt32), DType::kInt32);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kBFloat16), DType::kFloat32);
  EXPECT_EQ(promote_types(DType::kFloat16, DType::kInt64), DType::kFloat16);
  EXPECT_EQ(promote_types(DType::kFloat32, DType::kFloat64), DType::kFloat64);
}

TEST(HalfTest, RoundTripsAndRoundsToNearestEven) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(static_cast<float>(Half(v)), v) << v;
  }
  EXPECT_EQ(Half(1.0f + 1.0f / 2048).bits, Half(1.0f).bits);       // tie rounds to even
  EXPECT_EQ(Half(1.0f + 3.0f / 2048).bits, Half(1.0f).bits + 2);   // tie rounds to even (up)
  EXPECT_TRUE(std::isinf(static_cast<float>(Half(70000.0f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Half(std::nanf("")))));
  EXPECT_EQ(static_cast<float>(BFloat16(1.0f)), 1.0f);
  EXPECT_EQ(static_cast<float>(BFloat16(3.140625f)), 3.140625f);
  EXPECT_EQ(BFloat16(1.00390625f).bits, BFloat16(1.0f).bits);      // tie to even
  EXPECT_TRUE(std::isnan(static_cast<float>(BFloat16(std::nanf("")))));
}

TEST(DeviceTest, ParsesAndPrints) {
  EXPECT_EQ(Device::parse("cpu"), kCPU);
  EXPECT_EQ(Device::parse("cuda:1").index, 1);
  EXPECT_EQ(Device::parse("cuda:1").str(), "cuda:1");
  EXPECT_EQ(Device::parse("meta").str(), "meta");
  EXPECT_THAT([] { Device::parse("tpu"); }, ThrowsMessage<Error>(HasSubstr("invalid device string 'tpu'")));
  EXPECT_THAT([] { Device::parse("cuda:x"); }, ThrowsMessage<Error>(HasSubstr("expected an index")));
  EXPECT_THAT([] { Device::parse("cuda:"); }, ThrowsMessage<Error>(HasSubstr("expected an index")));
  EXPECT_THAT([] { Device::parse("cuda:-1"); }, ThrowsMessage<Error>(HasSubstr("expected an index")));
  EXPECT_EQ(Device::parse("cuda:126").index, 126);
  // An index that is there but too large says so, with the limit.
  EXPECT_THAT([] { Device::parse("cuda:300"); },
              ThrowsMessage<Error>(HasSubstr("invalid device string 'cuda:300': device index 300 is out of range; "
                                             "indices go from 0 to 126")));
  EXPECT_THAT([] { Device::parse("cuda:99999999999999999999"); },
              ThrowsMessage<Error>(HasSubstr("is out of range; indices go from 0 to 126")));
}

// Metadata accessors on an undefined tensor throw, as PyTorch's, instead of
// dereferencing a null TensorImpl.
TEST(TensorTest, AccessorsOfAnUndefinedTensorThrow) {
  const Tensor u;
  const Tensor x = internal::make_tensor({2}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { u.sizes(); }, ThrowsMessage<Error>(HasSubstr("sizes() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.strides(); }, ThrowsMessage<Error>(HasSubstr("strides() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.dim(); }, ThrowsMessage<Error>(HasSubstr("dim() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.numel(); }, ThrowsMessage<Error>(HasSubstr("numel() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.dtype(); }, ThrowsMessage<Error>(HasSubstr("dtype() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.device(); }, ThrowsMessage<Error>(HasSubstr("device() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.size(0); }, ThrowsMessage<Error>(HasSubstr("called on an undefined Tensor")));
  EXPECT_THAT([&] { x.is_alias_of(u); }, ThrowsMessage<Error>(HasSubstr("is_alias_of() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.is_alias_of(x); }, ThrowsMessage<Error>(HasSubstr("is_alias_of() called on an undefined Tensor")));
  EXPECT_THAT([&] { u.data_ptr<float>(); }, ThrowsMessage<Error>(HasSubstr("tensor is undefined")));
  EXPECT_FALSE(u.defined());
  EXPECT_TRUE(u.is_same(Tensor()));
  EXPECT_EQ(u.meta_str(), "undefined");
}

TEST(ScalarTest, KindsAndPythonRepr) {
  EXPECT_TRUE(Scalar(1).is_integral());
  EXPECT_TRUE(Scalar(1.0).is_floating_point());
  EXPECT_TRUE(Scalar(true).is_bool());
  EXPECT_EQ(Scalar(1.0).str(), "1.0");
  EXPECT_EQ(Scalar(0.1).str(), "0.1");
  EXPECT_EQ(Scalar(1e-5).str(), "1e-05");
  EXPECT_EQ(Scalar(1e16).str(), "1e+16");
  EXPECT_EQ(Scalar(123456789.0).str(), "123456789.0");
  EXPECT_EQ(Scalar(std::numeric_limits<double>::infinity()).str(), "inf");
  EXPECT_EQ(Scalar(false).str(), "False");
  EXPECT_EQ(Scalar(int64_t{-3}).str(), "-3");
  EXPECT_EQ(format_double(101.96126069501042), "101.96126069501042");
}

// Python's repr writes a float in exponent form when its decimal exponent is
// below -4 or at least 16, whatever the digits (python3 -c 'print(repr(x))').
TEST(TensorTest, FormatDoubleSwitchesToExponentsWherePythonsReprDoes) {
  EXPECT_EQ(format_double(3.0000000817692676e16), "3.0000000817692676e+16");  // was 30000000817692676.0
  EXPECT_EQ(format_double(1.2345678901234568e16), "1.2345678901234568e+16");
  EXPECT_EQ(format_double(1e16), "1e+16");
  EXPECT_EQ(format_double(9.999999999999998e15), "9999999999999998.0");
  EXPECT_EQ(format_double(1e15), "1000000000000000.0");
  EXPECT_EQ(format_double(1e-4), "0.0001");
  EXPECT_EQ(format_double(0.00012345678901234567), "0.00012345678901234567");
  EXPECT_EQ(format_double(1e-5), "1e-05");
  EXPECT_EQ(format_double(-2.5e-7), "-2.5e-07");
  EXPECT_EQ(format_double(1.5e300), "1.5e+300");
  EXPECT_EQ(format_double(5e-324), "5e-324");
  EXPECT_EQ(format_double(-0.0), "-0.0");
  EXPECT_EQ(format_double(0.1 + 0.2), "0.30000000000000004");
}

TEST(TensorTest, GeometryAndContiguity) {
  Tensor t = internal::make_tensor({2, 3}, DType::kFloat32, kCPU);
  EXPECT_THAT(t.strides(), ElementsAre(3, 1));
  EXPECT_TRUE(t.is_contiguous());
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.size(-1), 3);
  Tensor tt = internal::make_view(t, {3, 2}, {1, 3}, 0);
  EXPECT_FALSE(tt.is_contiguous());
  EXPECT_TRUE(tt.is_alias_of(t));
  // Size-1 dims may have any stride and stay contiguous, as in PyTorch.
  EXPECT_TRUE(internal::make_view(t, {1, 3}, {99, 1}, 3).is_contiguous());
  EXPECT_THAT([&] { t.size(2); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  EXPECT_EQ(t.meta_str(), "f32[2, 3]");
}

TEST(TensorTest, ViewsShareStorage) {
  Tensor t = internal::make_tensor({4}, DType::kInt64, kCPU);
  for (int i = 0; i < 4; ++i) t.data_ptr<int64_t>()[i] = i;
  Tensor tail = internal::make_view(t, {2}, {1}, 2);
  tail.data_ptr<int64_t>()[0] = 42;
  EXPECT_EQ(t.to_vector<int64_t>(), std::vector<int64_t>({0, 1, 42, 3}));
  EXPECT_EQ(tail.to_vector<double>(), std::vector<double>({42, 3}));
  EXPECT_THAT([&] { t.data_ptr<float>(); }, ThrowsMessage<Error>(HasSubstr("tensor has dtype i64 but f32 was requested")));
}

TEST(TensorTest, MetaTensorsHaveNoData) {
  Tensor m = internal::make_tensor({1024, 1024}, DType::kFloat32, kMeta);
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_THAT([&] { m.to_vector<float>(); }, ThrowsMessage<Error>(HasSubstr("is a meta tensor and has no data")));
  EXPECT_EQ(get_allocator(DeviceType::kMeta)->stats().bytes_in_use, 0);
}

// See Note [Recycled tensors]: a tensor made from a dead one's objects must
// look new in every respect, and a tensor whose storage lives on is not reused.
TEST(RecycledTensorTest, ATensorMadeFromADeadOneStartsAnew) {
  const Tensor room = internal::make_tensor({1}, DType::kFloat32, kCPU);  // the thread's list is not full
  const TensorImpl* dead_impl = nullptr;
  uint64_t dead_uid = 0;
  {
    Tensor dead = internal::make_tensor({2, 3, 4}, DType::kFloat64, kCPU);
    dead.impl()->set_wrapped_number(true);
    dead.impl()->bump_version();
    dead.impl()->set_dim_marks(0b10, 0b01);
    dead.impl()->trace_owner().store(12345);
    dead_uid = dead.impl()->uid();
    dead_impl = dead.impl();
  }
  Tensor fresh = internal::make_tensor({5}, DType::kInt32, kCPU);
  EXPECT_EQ(fresh.impl(), dead_impl) << "the dead tensor's objects were not reused";
  EXPECT_THAT(fresh.sizes(), ElementsAre(5));
  EXPECT_THAT(fresh.strides(), ElementsAre(1));
  EXPECT_EQ(fresh.numel(), 5);
  EXPECT_EQ(fresh.dtype(), DType::kInt32);
  EXPECT_TRUE(fresh.is_contiguous());
  EXPECT_EQ(fresh.storage_offset(), 0);
  EXPECT_FALSE(fresh.is_wrapped_number());
  EXPECT_EQ(fresh.impl()->version(), 0u);
  EXPECT_EQ(fresh.impl()->dynamic_dims(), 0u);
  EXPECT_EQ(fresh.impl()->static_dims(), 0u);
  EXPECT_EQ(fresh.impl()->trace_owner().load(), 0u);
  EXPECT_NE(fresh.impl()->uid(), dead_uid);
  EXPECT_EQ(fresh.key_set(), DispatchKeySet(DispatchKey::kCPU));
  EXPECT_EQ(fresh.impl()->storage()->nbytes(), 20u);
  EXPECT_EQ(fresh.impl()->storage()->use_count(), 1);
  for (int i = 0; i < 5; ++i) fresh.data_ptr<int32_t>()[i] = i;
  EXPECT_EQ(fresh.to_vector<int32_t>(), std::vector<int32_t>({0, 1, 2, 3, 4}));

  // A meta tensor may reuse a CPU tensor's objects, and the other way round.
  const TensorImpl* cpu_impl = fresh.impl();
  fresh = Tensor();
  Tensor meta = internal::make_tensor({3, 3}, DType::kFloat32, kMeta);
  EXPECT_EQ(meta.impl(), cpu_impl);
  EXPECT_TRUE(meta.device().is_meta());
  EXPECT_EQ(meta.impl()->storage()->data(), nullptr);
  EXPECT_EQ(meta.key_set(), DispatchKeySet(DispatchKey::kMeta));
}

TEST(RecycledTensorTest, ATensorWhoseStorageLivesOnIsNotReused) {
  Tensor view;
  {
    Tensor base = internal::make_tensor({4}, DType::kInt64, kCPU);
    for (int i = 0; i < 4; ++i) base.data_ptr<int64_t>()[i] = 10 + i;
    view = internal::make_view(base, {2}, {1}, 2);
  }
  Tensor other = internal::make_tensor({4}, DType::kInt64, kCPU);
  EXPECT_FALSE(other.is_alias_of(view));
  for (int i = 0; i < 4; ++i) other.data_ptr<int64_t>()[i] = -1;
  EXPECT_EQ(view.to_vector<int64_t>(), std::vector<int64_t>({12, 13}));  // the base's data is intact
}

TEST(RecycledTensorTest, ADeadViewIsReusedAndItsBasesDataStaysIntact) {
  Tensor view;
  {
    Tensor base = internal::make_tensor({4}, DType::kInt64, kCPU);
    for (int i = 0; i < 4; ++i) base.data_ptr<int64_t>()[i] = 10 + i;
    view = internal::make_alias_view(base, {2}, {1}, 2);
    const Tensor sibling = internal::make_alias_view(base, {4}, {1}, 0);
  }
  // The base lives on in the view: new tensors do not take its storage.
  Tensor other = internal::make_tensor({4}, DType::kInt64, kCPU);
  for (int i = 0; i < 4; ++i) other.data_ptr<int64_t>()[i] = -1;
  EXPECT_EQ(view.to_vector<int64_t>(), std::vector<int64_t>({12, 13}));
  // A dead view lets go of its base first, and is kept in the base's stead.
  TensorImpl* dead = view.impl();
  view = Tensor();
  const Tensor fresh = internal::make_tensor({2}, DType::kInt64, kCPU);
  EXPECT_EQ(fresh.impl(), dead);
  EXPECT_EQ(fresh.impl()->view_base(), nullptr);
  EXPECT_EQ(fresh.storage_offset(), 0);
}

TEST(RecycledTensorTest, AllocatorCountsStayExact) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  cpu->reset_stats();
  const AllocatorStats before = cpu->stats();
  for (int i = 0; i < 10; ++i) {
    Tensor t = internal::make_tensor({64}, DType::kFloat32, kCPU);  // 256 bytes, reusing the previous one's objects
    EXPECT_EQ(cpu->stats().bytes_in_use - before.bytes_in_use, 256);
  }
  const AllocatorStats after = cpu->stats();
  EXPECT_EQ(after.allocation_count, 10);
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_EQ(after.active_allocations, before.active_allocations);
  EXPECT_EQ(after.peak_bytes, before.bytes_in_use + 256);
}

TEST(AllocatorTest, CountsBytesPeakAndAllocationsAndResets) {
  Allocator* cpu = get_allocator(DeviceType::kCPU);
  cpu->reset_stats();
  const AllocatorStats before = cpu->stats();
  EXPECT_EQ(before.allocation_count, 0);
  {
    Tensor a = internal::make_tensor({256}, DType::kFloat32, kCPU);  // 1 KiB
    Tensor b = internal::make_tensor({512}, DType::kFloat32, kCPU);  // 2 KiB
    const AllocatorStats during = cpu->stats();
    EXPECT_EQ(during.bytes_in_use - before.bytes_in_use, 3072);
    EXPECT_EQ(during.allocation_count, 2);
    EXPECT_EQ(during.active_allocations - before.active_allocations, 2);
    EXPECT_GE(during.peak_bytes, during.bytes_in_use);
  }
  const AllocatorStats after = cpu->stats();
  EXPECT_EQ(after.bytes_in_use, before.bytes_in_use);
  EXPECT_GE(after.peak_bytes, before.bytes_in_use + 3072);
  cpu->reset_peak_stats();
  EXPECT_EQ(cpu->stats().peak_bytes, after.bytes_in_use);
  EXPECT_THAT([] { internal::make_tensor({-1, 2}, DType::kFloat32, kCPU); },
              ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -1: [-1, 2]")));
}

TEST(AllocatorTest, CudaWithoutABackendOrADeviceIsAClearError) {
  const DeviceHooks& cuda = get_device_hooks(DeviceType::kCUDA);
  if (cuda.is_available()) GTEST_SKIP() << "a CUDA device is available";
  EXPECT_THAT([] { internal::make_tensor({2}, DType::kFloat32, Device(DeviceType::kCUDA)); },
              ThrowsMessage<Error>(HasSubstr(std::string(cuda.is_built() ? kNoCudaDeviceMessage : kNoCudaBackendMessage))));
  if (!cuda.is_built()) {
    EXPECT_THAT([] { internal::make_tensor({2}, DType::kFloat32, Device(DeviceType::kCUDA)); },
                ::testing::Throws<NotImplementedError>());
  }
}

TEST(ShapeUtilsTest, BroadcastAndTypePromotion) {
  EXPECT_THAT(broadcast_shapes({3, 1}, {1, 4}, "op"), ElementsAre(3, 4));
  EXPECT_THAT(broadcast_shapes({2, 3}, {3}, "op"), ElementsAre(2, 3));
  EXPECT_THAT([] { broadcast_shapes({2, 3}, {4}, "aten::add.Tensor"); },
              ThrowsMessage<Error>(HasSubstr("aten::add.Tensor: The size of tensor a (3) must match the size of tensor b (4) at non-singleton dimension 1")));
  const Tensor i64 = internal::make_tensor({2}, DType::kInt64, kCPU);
  const Tensor f16 = internal::make_tensor({2}, DType::kFloat16, kCPU);
  const Tensor f64_0d = internal::make_tensor({}, DType::kFloat64, kCPU);
  const Tensor f32 = internal::make_tensor({2}, DType::kFloat32, kCPU);
  EXPECT_EQ(result_type(i64, Scalar(2.5)), DType::kFloat32);   // int tensor + python float
  EXPECT_EQ(result_type(f16, Scalar(2.5)), DType::kFloat16);   // float tensor keeps its dtype
  EXPECT_EQ(result_type(i64, Scalar(2)), DType::kInt64);
  const Tensor pair[] = {f32, f64_0d};
  EXPECT_EQ(result_type(pair), DType::kFloat32);                 // 0-dim does not upgrade same category
  const Tensor pair2[] = {i64, f64_0d};
  EXPECT_EQ(result_type(pair2), DType::kFloat64);                // higher category wins
}

TEST(ShapeUtilsTest, ViewStridesAndInferSize) {
  EXPECT_THAT(*compute_view_strides({2, 3}, {3, 1}, {6}), ElementsAre(1));
  EXPECT_THAT(*compute_view_strides({2, 3}, {3, 1}, {3, 2}), ElementsAre(2, 1));
  EXPECT_FALSE(compute_view_strides({2, 3}, {1, 2}, {6}).has_value());  // transposed
  EXPECT_THAT(infer_size({-1, 4}, 8, "view"), ElementsAre(2, 4));
  EXPECT_THAT([] { infer_size({-1, 3}, 8, "aten::view"); },
              ThrowsMessage<Error>(HasSubstr("shape '[-1, 3]' is invalid for input of size 8")));
  EXPECT_THAT([] { infer_size({-1, -1}, 8, "aten::view"); },
              ThrowsMessage<Error>(HasSubstr("only one dimension can be inferred")));
}

// str() prints each dtype as PyTorch does: int64 exactly (past 2^53 too),
// bools as True/False, not through double (issue 22.7).
TEST(TensorTest, StrPrintsIntegersExactlyAndBoolsAsWords) {
  Tensor big = internal::make_tensor({2}, DType::kInt64, kCPU);
  big.data_ptr<int64_t>()[0] = (int64_t{1} << 53) + 1;
  big.data_ptr<int64_t>()[1] = -7;
  EXPECT_EQ(big.str(), "tensor(i64[2], [9007199254740993, -7])");
  Tensor flags = internal::make_tensor({2}, DType::kBool, kCPU);
  flags.data_ptr<bool>()[0] = true;
  flags.data_ptr<bool>()[1] = false;
  EXPECT_EQ(flags.str(), "tensor(b8[2], [True, False])");
}

}  // namespace
}  // namespace opspec
