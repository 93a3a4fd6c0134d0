// Copies between host and device and on the device (skipped without a GPU):
// to/_to_copy/copy_/clone convert dtypes exactly as the CPU casts do, through
// any strides and broadcasts, and keep device indices explicit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/ops/layout_cases_test_util.h"

namespace opspec {
namespace cuda_conversion_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_same;
using testing::kCuda0;
using testing::to_cpu;
using testing::to_cuda;
using testing::to_cuda_as_strided;

constexpr DType kAll[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt64,   DType::kInt32,   DType::kBool};

Tensor values() {
  const double inf = std::numeric_limits<double>::infinity();
  manual_seed(11);
  const Tensor special = ops::tensor({0.0, -0.0, 0.5, -1.5, 2.5, 65504.0, 70000.0, 3e9, -3e9, 1e-8, inf, -inf,
                                      std::nan(""), 127.9, -128.2, 1.0 / 3},
                                     {16}, DType::kFloat64);
  return ops::cat({special, ops::mul(ops::randn({84}, {.dtype = DType::kFloat64}), 1000.0)});
}

TEST(CudaConversionTest, RoundTripsAndDeviceIndex) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    const Tensor x = ops::to(values(), dt);
    const Tensor dev = ops::to(x, Device(DeviceType::kCUDA));
    EXPECT_EQ(dev.device(), kCuda0);
    EXPECT_EQ(dev.device().index, 0);  // "cuda" becomes cuda:0, as in PyTorch
    EXPECT_EQ(dev.device().str(), "cuda:0");
    expect_same(dev, x, std::string(dtype_short_name(dt)));
    EXPECT_TRUE(ops::to(dev, kCuda0).is_same(dev));  // nothing to do
  }
}

TEST(CudaConversionTest, DtypeConversionsOnTheDeviceMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType from : kAll) {
    const Tensor x = ops::to(values(), from);
    const Tensor dev = to_cuda(x);
    for (DType to : kAll) {
      const std::string what = str_cat(dtype_short_name(from), " -> ", dtype_short_name(to));
      expect_same(ops::to(dev, to), ops::to(x, to), what);
      // cpu -> cuda with a conversion converts on the host; cuda -> cpu on the device.
      expect_same(ops::_to_copy(x, {.dtype = to, .device = kCuda0}), ops::to(x, to), what + " (from cpu)");
      const Tensor back = ops::_to_copy(dev, {.dtype = to, .device = kCPU});
      EXPECT_TRUE(back.device().is_cpu());
      expect_same(to_cuda(back), ops::to(x, to), what + " (to cpu)");
    }
  }
}

TEST(CudaConversionTest, CopyIntoStridedViewsInEveryDirection) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor src = ops::view(ops::to(ops::slice(values(), 0, 0, 96), DType::kFloat32), {8, 12});
  // cuda <- cpu, into a transposed cuda view, with a conversion.
  Tensor dst_cpu = ops::zeros({12, 8}, {.dtype = DType::kFloat16});
  Tensor dst_dev = to_cuda(dst_cpu);
  Tensor view_cpu = ops::t(dst_cpu), view_dev = ops::t(dst_dev);
  ops::copy_(view_cpu, src);
  ops::copy_(view_dev, src);
  expect_same(dst_dev, dst_cpu, "cuda <- cpu, strided");
  // cpu <- cuda, into a strided cpu view, broadcasting a row.
  Tensor host = ops::zeros({8, 24}, {.dtype = DType::kFloat64});
  Tensor host_ref = ops::clone(host);
  Tensor every_other = ops::slice(host, 1, 0, 24, 2), every_other_ref = ops::slice(host_ref, 1, 0, 24, 2);
  ops::copy_(every_other, to_cuda(ops::select(src, 0, 3)));
  ops::copy_(every_other_ref, ops::select(src, 0, 3));
  EXPECT_TRUE(ops::equal(host, host_ref));
  // cuda <- cuda, broadcast and a cpu scalar.
  Tensor d = ops::empty({8, 12}, {.dtype = DType::kInt32, .device = kCuda0});
  ops::copy_(d, to_cuda(ops::select(src, 0, 1)));
  expect_same(d, ops::to(ops::expand(ops::select(src, 0, 1), {8, 12}), DType::kInt32), "cuda <- cuda broadcast");
  ops::copy_(d, ops::scalar_tensor(7));
  expect_same(d, ops::full({8, 12}, 7, {.dtype = DType::kInt32}), "cuda <- cpu scalar");
  // clone and contiguous of a cuda view.
  const Tensor tv = ops::t(to_cuda(src));
  const Tensor c = ops::contiguous(tv);
  EXPECT_TRUE(c.is_contiguous());
  expect_same(c, ops::contiguous(ops::t(src)), "contiguous");
  expect_same(ops::clone(tv), ops::clone(ops::t(src)), "clone");
}

TEST(CudaConversionTest, CopiesBetweenDevices) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  if (get_device_hooks(DeviceType::kCUDA).device_count() < 2) GTEST_SKIP() << "needs two CUDA devices";
  const Device cuda1(DeviceType::kCUDA, 1);
  const Tensor x = ops::to(values(), DType::kFloat32);
  const Tensor on1 = ops::to(to_cuda(x), cuda1, DType::kFloat16);
  EXPECT_EQ(on1.device(), cuda1);
  EXPECT_TRUE(ops::equal(to_cpu(on1), ops::to(x, DType::kFloat16)));
  Tensor back = ops::zeros({50}, {.device = kCuda0});
  ops::copy_(back, ops::slice(on1, 0, 0, 100, 2));
  EXPECT_TRUE(ops::equal(to_cpu(back), ops::to(ops::to(ops::slice(x, 0, 0, 100, 2), DType::kFloat16), DType::kFloat32)));
  EXPECT_THAT([&] { ops::add(to_cuda(x), on1); },
              ThrowsMessage<Error>(HasSubstr("found at least two devices, cuda:0 and cuda:1!")));
}

TEST(CudaConversionTest, MixingDevicesNamesBoth) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = ops::ones({3}, {.device = kCuda0});
  EXPECT_THAT([&] { ops::add(x, ops::ones({3})); },
              ThrowsMessage<Error>(HasSubstr(
                  "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")));
  expect_same(ops::add(x, ops::scalar_tensor(2.0)), ops::full({3}, 3.0), "cpu scalar tensor");
  EXPECT_THAT([&] { x.to_vector<float>(); }, ThrowsMessage<Error>(HasSubstr("copy it to cpu first")));
}

// clone and _to_copy on cuda (and to and from it) lay results out as on the
// CPU: PyTorch's strides for every layout class (runtime/ops/layout_cases_test_util.h),
// with the same values. See Note [Memory formats].
TEST(CudaConversionTest, CopiesKeepLayoutsAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  auto strides_of = [](const Tensor& t) { return std::vector<int64_t>(t.strides().begin(), t.strides().end()); };
  for (const layout_cases::LayoutCase& c : layout_cases::cases()) {
    SCOPED_TRACE(layout_cases::case_name(c));
    const Tensor host = layout_cases::input(c.input);
    const Tensor dev = to_cuda_as_strided(host);
    ASSERT_EQ(dev.strides(), host.strides());
    const std::optional<int64_t> format =
        c.format ? std::optional<int64_t>(static_cast<int64_t>(*c.format)) : std::nullopt;
    if (!c.like.error.empty()) {
      const std::string error(c.like.error);
      EXPECT_THAT([&] { ops::clone(dev, format); }, ThrowsMessage<Error>(HasSubstr(error)));
      EXPECT_THAT([&] { ops::_to_copy(dev, {.device = kCPU, .memory_format = c.format}); },
                  ThrowsMessage<Error>(HasSubstr(error)));
      EXPECT_THAT([&] { ops::_to_copy(host, {.device = kCuda0, .memory_format = c.format}); },
                  ThrowsMessage<Error>(HasSubstr(error)));
      continue;
    }
    const Tensor cloned = ops::clone(dev, format);
    EXPECT_EQ(strides_of(cloned), c.like.strides);
    expect_same(cloned, host, "clone");
    const Tensor wide = ops::_to_copy(dev, {.dtype = DType::kFloat64, .memory_format = c.format});
    EXPECT_EQ(strides_of(wide), c.like.strides);
    expect_same(wide, ops::to(host, DType::kFloat64), "_to_copy f64");
    const Tensor up = ops::_to_copy(host, {.dtype = DType::kFloat16, .device = kCuda0, .memory_format = c.format});
    EXPECT_EQ(strides_of(up), c.like.strides);
    expect_same(up, ops::to(host, DType::kFloat16), "_to_copy to cuda");
    const Tensor down = ops::_to_copy(dev, {.device = kCPU, .memory_format = c.format});
    EXPECT_EQ(strides_of(down), c.like.strides);
    EXPECT_EQ(down.to_vector<float>(), host.to_vector<float>());
    EXPECT_EQ(strides_of(ops::_to_copy(dev, {.device = kMeta, .memory_format = c.format})), c.like.strides);
  }
}

}  // namespace
}  // namespace opspec
