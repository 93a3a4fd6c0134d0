// cuda_test_util.h: helpers of the CUDA backend's tests: the skip for tests
// that need a GPU, copies to and from the device, and cuda-claiming tensors
// for host-only tests of the checks kernels run before touching data.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/device_hooks.h"
#include "runtime/ops/ops.h"

namespace opspec::testing {

// kNoCudaDeviceSkip: the message tests that need a GPU skip with.
inline constexpr char kNoCudaDeviceSkip[] = "no CUDA device available";

// cuda_skip_reason: kNoCudaDeviceSkip where no CUDA device is usable, "" where one is.
inline std::string cuda_skip_reason() {
  return get_device_hooks(DeviceType::kCUDA).is_available() ? "" : kNoCudaDeviceSkip;
}

// OPSPEC_SKIP_WITHOUT_CUDA(): skips the test, with kNoCudaDeviceSkip, without a GPU.
#define OPSPEC_SKIP_WITHOUT_CUDA()                                                              \
  do {                                                                                          \
    if (const std::string reason = ::opspec::testing::cuda_skip_reason(); !reason.empty()) {    \
      GTEST_SKIP() << reason;                                                                   \
    }                                                                                           \
  } while (0)

// kFloatDTypes: the floating dtypes every CUDA kernel family is checked in.
inline constexpr DType kFloatDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

// seeded_input: randn(sizes) drawn in f64 from seed, then converted to dt (so
// every dtype sees the same values, rounded).
inline Tensor seeded_input(IntArrayRef sizes, DType dt, uint64_t seed) {
  manual_seed(seed);
  return ops::to(ops::randn(sizes, {.dtype = DType::kFloat64}), dt);
}

// kCuda0: cuda:0.
inline constexpr Device kCuda0{DeviceType::kCUDA, 0};

// to_cuda / to_cpu: copies through aten::to.
inline Tensor to_cuda(const Tensor& t) { return ops::to(t, kCuda0); }
inline Tensor to_cpu(const Tensor& t) { return ops::to(t, kCPU); }

// to_cuda_as_strided: t's whole storage copied to cuda:0 and viewed with t's
// sizes, strides and offset: the same geometry, non-dense and expanded included
// (to_cuda would lay a non-dense t out densely).
inline Tensor to_cuda_as_strided(const Tensor& t) {
  const int64_t storage_numel = static_cast<int64_t>(t.impl()->storage()->nbytes()) / t.element_size();
  const Tensor storage = to_cuda(ops::as_strided(t, {storage_numel}, {1}, 0));
  return ops::as_strided(storage, t.sizes(), t.strides(), t.storage_offset());
}

// claiming_cuda: a tensor over t's (cpu) storage whose device says cuda:0,
// so it dispatches to the CUDA kernels; only for checks that fail before
// any data is read (device and shape errors), which then need no GPU.
inline Tensor claiming_cuda(const Tensor& t) {
  return Tensor(IntrusivePtr<TensorImpl>::make(t.impl()->storage(), t.sizes(), t.strides(), t.storage_offset(),
                                               t.dtype(), kCuda0));
}

// same_value: equal, or both NaN.
inline bool same_value(double a, double b) { return a == b || (a != a && b != b); }

// expect_same: got (cuda) has want's (cpu) dtype, sizes and values exactly
// (compared as doubles: NaN matches NaN, and -0.0 matches 0.0).
inline void expect_same(const Tensor& got, const Tensor& want, const std::string& what = "") {
  ASSERT_TRUE(got.device().is_cuda()) << what << ": " << got.meta_str();
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes())) << what;
  const std::vector<double> g = to_cpu(got).to_vector<double>(), w = want.to_vector<double>();
  int64_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    if (!same_value(g[i], w[i]) && bad++ < 5) ADD_FAILURE() << what << ": element " << i << ": cuda " << g[i] << ", cpu " << w[i];
  }
  EXPECT_EQ(bad, 0) << what << ": elements that differ";
}

// relative_tolerance: a few units in the last place of dtype (the CPU's and
// CUDA's transcendental functions are different implementations).
inline double relative_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kFloat64: return 1e-14;
    case DType::kFloat16: return 2e-3;
    case DType::kBFloat16: return 1.6e-2;
    default: return 2e-6;
  }
}

// expect_close: as expect_same, to relative_tolerance(dtype) * scale of
// max(floor, |want|). Ops that cancel (a sum of signed values, x - logsumexp,
// 1 + erf(x) in gelu, x - mean) err in proportion to their inputs, not their
// output: pass the inputs' magnitude as floor.
inline void expect_close(const Tensor& got, const Tensor& want, const std::string& what = "", double scale = 1,
                         double floor = 1e-3) {
  ASSERT_TRUE(got.device().is_cuda()) << what << ": " << got.meta_str();
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes())) << what;
  const std::vector<double> g = to_cpu(got).to_vector<double>(), w = want.to_vector<double>();
  const double rtol = relative_tolerance(want.dtype()) * scale;
  int64_t bad = 0;
  for (size_t i = 0; i < g.size(); ++i) {
    const bool ok = same_value(g[i], w[i]) || std::abs(g[i] - w[i]) <= rtol * std::max(floor, std::abs(w[i]));
    if (!ok && bad++ < 5) ADD_FAILURE() << what << ": element " << i << ": cuda " << g[i] << ", cpu " << w[i];
  }
  EXPECT_EQ(bad, 0) << what << ": elements out of tolerance";
}

// strides_of: t's strides as a vector (gtest prints it).
inline std::vector<int64_t> strides_of(const Tensor& t) { return {t.strides().begin(), t.strides().end()}; }

// expect_like_cpu: f on cuda copies of args (each with its cpu tensor's
// geometry, to_cuda_as_strided) gives f(args)'s strides, as the CUDA kernels
// lay results out as the CPU's (See Note [Memory formats]), and its values:
// exactly when scale is 0, else to expect_close's tolerance times scale.
inline void expect_like_cpu(const std::string& what, const std::function<Tensor(const std::vector<Tensor>&)>& f,
                            const std::vector<Tensor>& args, double scale = 0, double floor = 1e-3) {
  std::vector<Tensor> on_cuda;
  for (const Tensor& a : args) on_cuda.push_back(to_cuda_as_strided(a));
  const Tensor want = f(args), got = f(on_cuda);
  EXPECT_EQ(strides_of(got), strides_of(want)) << what << ": cuda " << got.meta_str() << ", cpu " << want.meta_str();
  if (scale == 0) {
    expect_same(got, want, what);
  } else {
    expect_close(got, want, what, scale, floor);
  }
}

}  // namespace opspec::testing
