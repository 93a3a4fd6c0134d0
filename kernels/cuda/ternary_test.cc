// The CUDA kernels of addcmul, addcdiv and lerp (ternary.cc, ternary.cu)
// against the CPU's (skipped without a GPU): the same functors with explicit
// fma, so every dtype agrees bit for bit (See Note [Ternary pointwise ops]);
// in-place forms, broadcasting, a cpu 0-dim operand and the CPU's errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_ternary_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_same;
using testing::to_cuda;

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

TEST(CudaTernaryTest, MatchTheCpuBitForBit) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : testing::kFloatDTypes) {
    const Tensor s = input({5, 67}, dt, 1), a = input({5, 67}, dt, 2), b = ops::add(input({67}, dt, 3), 3.0);
    const Tensor w = ops::to(ops::rand({5, 1}), dt);
    const std::string what(dtype_short_name(dt));
    expect_same(ops::addcmul(to_cuda(s), to_cuda(a), to_cuda(b), 0.1), ops::addcmul(s, a, b, 0.1), "addcmul " + what);
    expect_same(ops::addcdiv(to_cuda(s), to_cuda(a), to_cuda(b), -0.5), ops::addcdiv(s, a, b, -0.5), "addcdiv " + what);
    expect_same(ops::lerp(to_cuda(s), to_cuda(a), 0.3), ops::lerp(s, a, 0.3), "lerp 0.3 " + what);
    expect_same(ops::lerp(to_cuda(s), to_cuda(a), 0.7), ops::lerp(s, a, 0.7), "lerp 0.7 " + what);
    expect_same(ops::lerp(to_cuda(s), to_cuda(a), to_cuda(w)), ops::lerp(s, a, w), "lerp.Tensor " + what);
  }
  const Tensor i = ops::randint(-5, 5, {4, 3}), j = ops::randint(-5, 5, {3});
  expect_same(ops::addcmul(to_cuda(i), to_cuda(i), to_cuda(j), 3), ops::addcmul(i, i, j, 3), "addcmul i64");
}

TEST(CudaTernaryTest, InPlaceFormsAndCpuScalars) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor s = input({4, 6}, DType::kFloat32, 4), g = input({4, 6}, DType::kFloat32, 5);
  Tensor cpu = ops::clone(s), dev = to_cuda(s);
  ops::lerp_(cpu, g, 0.1);
  ops::lerp_(dev, to_cuda(g), 0.1);
  expect_same(dev, cpu, "lerp_");
  ops::addcmul_(ops::mul_(cpu, 0.999), g, g, 0.001);
  ops::addcmul_(ops::mul_(dev, 0.999), to_cuda(g), to_cuda(g), 0.001);
  expect_same(dev, cpu, "mul_ + addcmul_");
  // A wider tensor1 (f64) computes in f64 and is written back into f32 self.
  const Tensor wide = ops::to(g, DType::kFloat64);
  ops::addcdiv_(cpu, wide, ops::add(ops::abs(g), 1.0), -0.25);
  ops::addcdiv_(dev, to_cuda(wide), to_cuda(ops::add(ops::abs(g), 1.0)), -0.25);
  expect_same(dev, cpu, "addcdiv_ f64 operand");
  // A cpu 0-dim weight goes with cuda tensors (lerp.Tensor's allow_cpu_scalars).
  const Tensor half = ops::full({}, 0.5);
  expect_same(ops::lerp(to_cuda(s), to_cuda(g), half), ops::lerp(s, g, half), "lerp with a cpu 0-dim weight");
}

TEST(CudaTernaryTest, ErrorsAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor f = to_cuda(ops::ones({2})), i = to_cuda(ops::ones({2}, {.dtype = DType::kInt64}));
  EXPECT_THAT([&] { ops::addcdiv(f, i, i); }, ThrowsMessage<Error>(HasSubstr("Integer division with addcdiv")));
  EXPECT_THAT([&] { ops::lerp(i, i, 0.5); },
              ThrowsMessage<Error>(HasSubstr("\"lerp_cuda\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::addcmul(f, ops::ones({2}), f); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

}  // namespace cuda_ternary_test
}  // namespace opspec
