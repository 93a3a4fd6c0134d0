// The CUDA kernels of the parametrized elementwise ops (pointwise.cc,
// pointwise.cu and the new rows of elementwise.cc) against the CPU kernels
// (skipped without a GPU): selections, rounding division, remainder, fmod and
// the bitwise ops are exact; the activations agree to rounding (CUDA's exp,
// expm1 and log1p are libdevice's); errors are the CPU's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_pointwise_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_close;
using testing::expect_same;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

using Unary = std::function<Tensor(const Tensor&)>;
using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;

TEST(CudaPointwiseTest, ClampAndHardtanhMatchTheCpuExactly) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, Unary>> cases = {
      {"clamp", [](const Tensor& x) { return ops::clamp(x, -0.5, 0.75); }},
      {"clamp_max", [](const Tensor& x) { return ops::clamp(x, std::nullopt, 0.3); }},
      {"hardtanh", [](const Tensor& x) { return ops::hardtanh(x); }},
      // NaN (x < 0), -inf (0 < x < 0.25), +inf (0.25 < x < 0.5), finite above, all
      // from correctly rounded ops (a log differs from the CPU's in the last place).
      {"nan_to_num",
       [](const Tensor& x) {
         const Tensor inf = ops::div(ops::sub(x, 0.25), ops::trunc(ops::mul(x, 2.0)));
         return ops::nan_to_num(ops::add(inf, ops::sqrt(x)), 0.5, std::nullopt, -3.0);
       }},
      {"isnan", [](const Tensor& x) { return ops::isnan(ops::log(x)); }},
      {"isinf", [](const Tensor& x) { return ops::isinf(ops::reciprocal(ops::trunc(x))); }},
  };
  for (DType dt : kFloats) {
    const Tensor x = input({37, 19}, dt, 3);
    for (const auto& [name, f] : cases) expect_same(f(to_cuda(x)), f(x), name + " " + std::string(dtype_short_name(dt)));
  }
  const Tensor i = ops::to(ops::mul(input({50}, DType::kFloat32, 4), 10.0), DType::kInt64);
  expect_same(ops::clamp(to_cuda(i), -3, 4), ops::clamp(i, -3, 4), "clamp i64");
  expect_same(ops::hardtanh(to_cuda(i), -2.5, 2.5), ops::hardtanh(i, -2.5, 2.5), "hardtanh i64");
  const Tensor lo = input({19}, DType::kFloat32, 5), hi = ops::add(input({37, 1}, DType::kFloat32, 6), 1.0);
  const Tensor x = input({37, 19}, DType::kFloat32, 7);
  expect_same(ops::clamp(to_cuda(x), to_cuda(lo), to_cuda(hi)), ops::clamp(x, lo, hi), "clamp.Tensor");
  // Number bounds (See Note [clamp with number bounds]): -0.0 tying a 0 bound
  // stays -0.0 (expect_same does not see the sign: signbit does), a NaN bound
  // fills, and an i32 bound past i32 is dropped or refused as on the CPU.
  for (DType dt : kFloats) {
    const Tensor z = ops::to(ops::tensor({-0.0, 0.0, -1.0, 2.0}, {4}), dt);
    for (const Tensor& r : {ops::clamp(to_cuda(z), 0.0, 1.0), ops::hardtanh(to_cuda(z), 0, 6)}) {
      const std::vector<double> v = to_cpu(r).to_vector<double>();
      EXPECT_TRUE(std::signbit(v[0]) && !std::signbit(v[1])) << dtype_short_name(dt);
    }
    expect_same(ops::clamp(to_cuda(z), -1.0, std::nan("")), ops::clamp(z, -1.0, std::nan("")), "clamp NaN bound");
  }
  const Tensor i32 = ops::to(i, DType::kInt32);
  const Scalar tiny = -(int64_t{1} << 40), huge = int64_t{1} << 40;
  expect_same(ops::clamp(to_cuda(i32), tiny, 3), ops::clamp(i32, tiny, 3), "clamp i32, min dropped");
  expect_same(ops::hardtanh(to_cuda(i32), tiny, huge), i32, "hardtanh i32, both dropped");
  EXPECT_THAT([&] { ops::clamp(to_cuda(i32), huge); },
              ThrowsMessage<Error>(HasSubstr("Clamp min value 1.09951e+12 is outside the representable range of Int")));
}

// The parametrized ops lay results out as the CPU's (their inputs' layout,
// See Note [Memory formats]) and write them strided: clamp (both forms),
// the NaN tests (b8), nan_to_num (an integer self is copied), activations and
// their backward ops.
TEST(CudaPointwiseTest, ResultsKeepTheInputsLayoutAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = ops::contiguous(input({2, 3, 4, 5}, dt, 20), MemoryFormat::kChannelsLast);
    const Tensor g = ops::transpose(input({2, 5, 4, 3}, dt, 21), 1, 3);  // [2, 3, 4, 5], permuted
    for (const Tensor& t : {x, g, ops::slice(x, 3, 0, 5, 2)}) {
      const std::string what = n + " " + t.meta_str();
      expect_like_cpu("clamp " + what, [](const Args& a) { return ops::clamp(a[0], -0.5, 0.75); }, {t});
      expect_like_cpu("clamp.Tensor " + what, [](const Args& a) { return ops::clamp(a[0], a[1], std::nullopt); },
                      {t, input({t.sizes().back()}, dt, 22)});
      expect_like_cpu("isnan " + what, [](const Args& a) { return ops::isnan(ops::log(a[0])); }, {t});
      expect_like_cpu("isinf " + what, [](const Args& a) { return ops::isinf(ops::reciprocal(ops::trunc(a[0]))); },
                      {t});
      expect_like_cpu("nan_to_num " + what,
                      [](const Args& a) { return ops::nan_to_num(ops::reciprocal(ops::trunc(a[0])), 0.5); }, {t});
      expect_like_cpu("leaky_relu " + what, [](const Args& a) { return ops::leaky_relu(a[0], 0.2); }, {t}, 1);
      expect_like_cpu("hardtanh_backward " + what,
                      [](const Args& a) { return ops::hardtanh_backward(a[0], a[0], -0.5, 0.5); }, {t});
    }
    // grad's layout decides over the saved input's.
    expect_like_cpu("hardtanh_backward g, x " + n,
                    [](const Args& a) { return ops::hardtanh_backward(a[0], a[1], -0.5, 0.5); }, {g, x});
  }
  const Tensor i = ops::transpose(ops::to(ops::mul(input({4, 6}, DType::kFloat32, 23), 10.0), DType::kInt64), 0, 1);
  expect_like_cpu("nan_to_num i64", [](const Args& a) { return ops::nan_to_num(a[0]); }, {i});
  expect_like_cpu("isnan i64", [](const Args& a) { return ops::isnan(a[0]); }, {i});
  expect_like_cpu("clamp i64", [](const Args& a) { return ops::clamp(a[0], -3, 4); }, {i});
}

TEST(CudaPointwiseTest, ActivationsMatchTheCpuToRounding) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, Unary>> cases = {
      {"leaky_relu", [](const Tensor& x) { return ops::leaky_relu(x, 0.2); }},
      {"elu", [](const Tensor& x) { return ops::elu(x, 1.3, 0.7, 1.1); }},
      {"softplus", [](const Tensor& x) { return ops::softplus(x, 2.0, 1.0); }},
  };
  for (DType dt : kFloats) {
    const Tensor x = input({41, 13}, dt, 8), g = input({41, 13}, dt, 9);
    for (const auto& [name, f] : cases) expect_close(f(to_cuda(x)), f(x), name + " " + std::string(dtype_short_name(dt)));
    const std::vector<std::pair<std::string, Binary>> backward = {
        {"hardtanh_backward", [](const Tensor& g, const Tensor& x) { return ops::hardtanh_backward(g, x, -0.5, 0.5); }},
        {"leaky_relu_backward", [](const Tensor& g, const Tensor& x) { return ops::leaky_relu_backward(g, x, 0.1, false); }},
        {"elu_backward", [](const Tensor& g, const Tensor& x) { return ops::elu_backward(g, 1.0, 1.0, 1.0, false, x); }},
        {"softplus_backward", [](const Tensor& g, const Tensor& x) { return ops::softplus_backward(g, x, 1.0, 20.0); }},
    };
    for (const auto& [name, f] : backward) {
      expect_close(f(to_cuda(g), to_cuda(x)), f(g, x), name + " " + std::string(dtype_short_name(dt)));
    }
  }
  // The CPU's check of an in-place forward's negative slope.
  const Tensor g = to_cuda(input({4}, DType::kFloat32, 10));
  EXPECT_THAT([&] { ops::leaky_relu_backward(g, g, -0.5, true); },
              ThrowsMessage<Error>(HasSubstr("aten::leaky_relu_backward: In-place leakyReLu backward")));
  EXPECT_THAT([&] { ops::elu_backward(g, -1.0, 1.0, 1.0, true, g); },
              ThrowsMessage<Error>(HasSubstr("aten::elu_backward: In-place elu backward")));
}

TEST(CudaPointwiseTest, RoundingDivisionRemainderAndBitwiseAreExact) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, Binary>> cases = {
      {"remainder", [](const Tensor& a, const Tensor& b) { return ops::remainder(a, b); }},
      {"fmod", [](const Tensor& a, const Tensor& b) { return ops::fmod(a, b); }},
      {"div_floor", [](const Tensor& a, const Tensor& b) { return ops::div(a, b, "floor"); }},
      {"div_trunc", [](const Tensor& a, const Tensor& b) { return ops::div(a, b, "trunc"); }},
      {"logical_xor", [](const Tensor& a, const Tensor& b) { return ops::logical_xor(a, b); }},
  };
  for (DType dt : kFloats) {
    const Tensor a = ops::mul(input({29, 7}, dt, 10), 5.0), b = input({7}, dt, 11);
    for (const auto& [name, f] : cases) {
      expect_same(f(to_cuda(a), to_cuda(b)), f(a, b), name + " " + std::string(dtype_short_name(dt)));
    }
    expect_close(ops::atan2(to_cuda(a), to_cuda(b)), ops::atan2(a, b), "atan2");
  }
  const Tensor i = ops::to(ops::mul(input({64}, DType::kFloat32, 12), 100.0), DType::kInt64);
  const Tensor j = ops::add(ops::abs(ops::to(ops::mul(input({64}, DType::kFloat32, 13), 9.0), DType::kInt64)), 1);
  for (const auto& [name, f] : cases) expect_same(f(to_cuda(i), to_cuda(j)), f(i, j), name + " i64");
  expect_same(ops::bitwise_and(to_cuda(i), to_cuda(j)), ops::bitwise_and(i, j), "bitwise_and");
  expect_same(ops::bitwise_or(to_cuda(i), 6), ops::bitwise_or(i, 6), "bitwise_or");
  expect_same(ops::bitwise_xor(to_cuda(i), to_cuda(j)), ops::bitwise_xor(i, j), "bitwise_xor");
  expect_same(ops::pow(2, to_cuda(j)), ops::pow(2, j), "pow.Scalar");
  const Tensor f = to_cuda(input({3}, DType::kFloat32, 14));
  EXPECT_THAT([&] { ops::bitwise_and(f, f); },
              ThrowsMessage<Error>(HasSubstr("\"bitwise_and_cuda\" not implemented for 'Float'")));
}

TEST(CudaPointwiseTest, InPlaceReluAndLogicalOpsMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    Tensor x = input({33, 5}, dt, 15);
    Tensor xc = to_cuda(x);
    ops::relu_(xc);
    ops::relu_(x);
    expect_same(xc, x, "relu_ " + std::string(dtype_short_name(dt)));
    Tensor a = input({33, 5}, dt, 16), b = input({5}, dt, 17);
    Tensor ac = to_cuda(a);
    ops::logical_and_(ac, to_cuda(b));
    ops::logical_and_(a, b);
    expect_same(ac, a, "logical_and_");
    ops::logical_or_(ac, to_cuda(b));
    ops::logical_or_(a, b);
    expect_same(ac, a, "logical_or_");
  }
}

}  // namespace
}  // namespace opspec
