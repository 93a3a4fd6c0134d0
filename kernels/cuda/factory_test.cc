// CUDA factories, fills, random ops, joins and item() against the CPU
// (skipped without a GPU). Random numbers are the CPU generator's: the same
// seed gives the same values on both devices (See Note [Same random numbers
// on every device] in runtime/core/philox.h).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/ops/layout_cases_test_util.h"

namespace opspec {
namespace cuda_factory_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_same;
using testing::kCuda0;
using testing::to_cpu;
using testing::to_cuda;
using testing::to_cuda_as_strided;

constexpr auto& kFloats = testing::kFloatDTypes;
constexpr DType kAll[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt64,   DType::kInt32,   DType::kBool};

TEST(CudaFactoryTest, ConstantFactoriesAndFills) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const TensorOptions on_cuda{.device = kCuda0};
  for (DType dt : kAll) {
    const TensorOptions o{.dtype = dt, .device = kCuda0}, c{.dtype = dt};
    const std::string n(dtype_short_name(dt));
    expect_same(ops::zeros({3, 4}, o), ops::zeros({3, 4}, c), "zeros " + n);
    expect_same(ops::ones({3, 4}, o), ops::ones({3, 4}, c), "ones " + n);
    expect_same(ops::full({5}, 1.7, o), ops::full({5}, 1.7, c), "full " + n);
    expect_same(ops::scalar_tensor(-2.5, o), ops::scalar_tensor(-2.5, c), "scalar_tensor " + n);
    Tensor d = ops::zeros({4, 6}, o), h = ops::zeros({4, 6}, c);
    Tensor dv = ops::slice(d, 1, 1, 6, 2), hv = ops::slice(h, 1, 1, 6, 2);
    ops::fill_(dv, 3);
    ops::fill_(hv, 3);
    expect_same(d, h, "fill_ strided " + n);
    ops::zero_(dv);
    ops::zero_(hv);
    expect_same(d, h, "zero_ strided " + n);
  }
  EXPECT_EQ(ops::empty({2, 3}, on_cuda).device(), kCuda0);
  const Tensor s = ops::empty_strided({2, 3}, {1, 2}, on_cuda);
  EXPECT_EQ(s.strides()[1], 2);
  EXPECT_TRUE(s.device().is_cuda());
  // The CPU's value checks and messages.
  EXPECT_THAT([] { ops::full({2}, 1e10, {.dtype = DType::kInt32, .device = kCuda0}); },
              ThrowsMessage<Error>(HasSubstr("aten::full: value cannot be converted to type int32_t without overflow")));
}

TEST(CudaFactoryTest, LikeFactoriesFollowSelfOrTheRequestedDevice) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor d = ops::ones({2, 3}, {.dtype = DType::kFloat16, .device = kCuda0});
  EXPECT_EQ(ops::zeros_like(d).device(), kCuda0);
  expect_same(ops::full_like(d, 4), ops::full({2, 3}, 4, {.dtype = DType::kFloat16}), "full_like");
  expect_same(ops::ones_like(d, {.dtype = DType::kInt32}), ops::ones({2, 3}, {.dtype = DType::kInt32}), "ones_like");
  const Tensor on_cpu = ops::zeros_like(d, {.device = kCPU});
  EXPECT_TRUE(on_cpu.device().is_cpu());
  EXPECT_EQ(ops::empty_like(ops::ones({2}), {.device = kCuda0}).device(), kCuda0);
}

TEST(CudaFactoryTest, ArangeMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    if (dt == DType::kBool) continue;
    const TensorOptions o{.dtype = dt, .device = kCuda0}, c{.dtype = dt};
    expect_same(ops::arange(0, 50, 3, o), ops::arange(0, 50, 3, c), "arange int step");
    if (is_floating(dt)) expect_same(ops::arange(-1.5, 2.25, 0.1, o), ops::arange(-1.5, 2.25, 0.1, c), "arange float step");
  }
  expect_same(ops::arange(1000000, {.device = kCuda0}), ops::arange(1000000), "arange default");
}

TEST(CudaFactoryTest, RandomNumbersAreTheCpuGenerators) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    manual_seed(42);
    const Tensor r = ops::rand({100001}, {.dtype = dt, .device = kCuda0});
    const Tensor rn = ops::randn({5000}, {.dtype = dt, .device = kCuda0});
    const GeneratorState after_cuda = default_generator_state();
    manual_seed(42);
    const Tensor rc = ops::rand({100001}, {.dtype = dt});
    const Tensor rnc = ops::randn({5000}, {.dtype = dt});
    EXPECT_EQ(default_generator_state().offset, after_cuda.offset);
    expect_same(r, rc, "rand " + n);
    if (dt != DType::kFloat64) {
      expect_same(rn, rnc, "randn " + n);
    } else {
      // Box-Muller's log and cos are libdevice's on the device: a few ulps apart at most.
      const std::vector<double> g = to_cpu(rn).to_vector<double>(), w = rnc.to_vector<double>();
      for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-15 * std::max(1.0, std::abs(w[i]))) << i;
    }
  }
  manual_seed(7);
  const Tensor like = ops::rand_like(ops::zeros({3, 3}, {.device = kCuda0}));
  manual_seed(7);
  expect_same(like, ops::rand({3, 3}), "rand_like");
}

TEST(CudaFactoryTest, BernoulliAndDropoutMasksAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt32, DType::kBool}) {
    Tensor d = ops::zeros({30, 40}, {.dtype = dt, .device = kCuda0}), h = ops::zeros({30, 40}, {.dtype = dt});
    Tensor dv = ops::t(d), hv = ops::t(h);  // strided: drawn in logical order
    manual_seed(3);
    ops::bernoulli_(dv, 0.3);
    manual_seed(3);
    ops::bernoulli_(hv, 0.3);
    expect_same(d, h, "bernoulli_ " + std::string(dtype_short_name(dt)));
  }
  for (DType dt : kFloats) {
    manual_seed(5);
    const Tensor x = ops::randn({64, 33}, {.dtype = dt});
    manual_seed(9);
    auto [y, mask] = ops::native_dropout(to_cuda(x), 0.25, true);
    manual_seed(9);
    auto [ry, rmask] = ops::native_dropout(x, 0.25, true);
    expect_same(mask, rmask, "dropout mask");
    expect_same(y, ry, "dropout output");
    auto [ey, emask] = ops::native_dropout(to_cuda(x), 0.25, false);
    expect_same(ey, x, "dropout eval");
    expect_same(emask, ops::ones({64, 33}, {.dtype = DType::kBool}), "dropout eval mask");
  }
}

// native_dropout lays output and mask out as its input on cuda as on the CPU
// (See Note [Dropout layout]), drawing the CPU's values; so does dropout,
// which on cuda is native_dropout and on the CPU input * noise.
TEST(CudaFactoryTest, DropoutKeepsTheInputsLayoutAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  manual_seed(4);
  const Tensor x = ops::randn({2, 3, 4, 5});
  for (const Tensor& t : {ops::contiguous(x, MemoryFormat::kChannelsLast), ops::transpose(x, 1, 3),
                          ops::slice(x, 3, 0, 5, 2)}) {
    for (const auto& [p, train] : {std::pair{0.25, true}, std::pair{0.25, false}, std::pair{1.0, true}}) {
      const std::string what = str_cat(t.meta_str(), " p ", p, " train ", train);
      for (int k = 0; k < 2; ++k) {
        expect_like_cpu(str_cat("native_dropout ", k, " ", what),
                        [&](const Args& a) {
                          manual_seed(9);
                          auto [out, mask] = ops::native_dropout(a[0], p, train);
                          return k == 0 ? out : mask;
                        },
                        {t});
      }
    }
    const Tensor got = ops::dropout(testing::to_cuda_as_strided(t), 0.25, true);
    EXPECT_EQ(testing::strides_of(got), testing::strides_of(ops::dropout(t, 0.25, true))) << "dropout " << t.meta_str();
  }
}

// native_dropout(p=1) in training on cuda is zeros_like(input) and an
// all-false mask, as PyTorch's CUDA kernel: NaN and inf give 0, where the
// CPU's input * mask * 0 keeps NaN. It still takes the CPU's draws, so the
// next draw is the CPU's (Note [Same random numbers on every device]).
TEST(CudaFactoryTest, NativeDropoutWithPOneIsZerosOnCuda) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType dt : kFloats) {
    const Tensor x = ops::to(ops::tensor({NAN, inf, -inf, -1.5, 2.0, 0.0}, {2, 3}), dt);
    for (const Tensor& t : {x, ops::t(x)}) {
      const std::string what = str_cat(dtype_short_name(dt), " ", t.meta_str());
      manual_seed(9);
      auto [y, mask] = ops::native_dropout(testing::to_cuda_as_strided(t), 1.0, true);
      const Tensor after_cuda = ops::rand({4});
      manual_seed(9);
      auto [cy, cmask] = ops::native_dropout(t, 1.0, true);
      const Tensor after_cpu = ops::rand({4});
      expect_same(y, ops::zeros(t.sizes(), {.dtype = dt}), "native_dropout p=1 " + what);
      for (double v : to_cpu(y).to_vector<double>()) EXPECT_FALSE(std::signbit(v)) << what;  // zeros_like: +0
      expect_same(mask, ops::zeros(t.sizes(), {.dtype = DType::kBool}), "native_dropout p=1 mask " + what);
      EXPECT_EQ(testing::strides_of(y), testing::strides_of(t)) << what;
      EXPECT_EQ(testing::strides_of(mask), testing::strides_of(t)) << what;
      EXPECT_TRUE(std::isnan(ops::select(ops::select(cy, 0, 0), 0, 0).item<double>())) << "the CPU keeps NaN " << what;
      EXPECT_TRUE(ops::equal(after_cuda, after_cpu)) << "the draws after " << what;
      // The composite on cuda never reaches native_dropout's p == 1 path: NaN * 0 as on the CPU.
      const Tensor d = ops::dropout(to_cuda(x), 1.0, true);
      EXPECT_TRUE(std::isnan(to_cpu(d).to_vector<double>()[0])) << what;
    }
  }
}

TEST(CudaFactoryTest, CatStackAndItem) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(1);
  const Tensor a = ops::randn({2, 3}), b = ops::to(ops::randn({4, 3}), DType::kFloat16);
  const Tensor c = ops::t(ops::randn({3, 2}));
  expect_same(ops::cat({to_cuda(a), to_cuda(b), to_cuda(c)}), ops::cat({a, b, c}), "cat dim 0");
  expect_same(ops::cat({to_cuda(a), to_cuda(ops::zeros({0}))}), ops::cat({a, ops::zeros({0})}), "cat skips [0]");
  expect_same(ops::cat({to_cuda(a), to_cuda(c)}, 1), ops::cat({a, c}, 1), "cat dim 1");
  expect_same(ops::stack({to_cuda(a), to_cuda(c)}, 1), ops::stack({a, c}, 1), "stack");
  for (DType dt : kAll) {
    const Tensor x = ops::to(ops::tensor({0.0, -3.75, 2.0}, {3}), dt);
    const Tensor d = to_cuda(x);
    for (int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(ops::select(d, 0, i).item<double>(), ops::select(x, 0, i).item<double>()) << dtype_short_name(dt);
    }
  }
  EXPECT_THAT([&] { to_cuda(a).item(); }, ThrowsMessage<Error>(HasSubstr("a Tensor with 6 elements cannot be converted")));
}

// cat keeps the channels-last format every input suggests and stack is cat
// viewed below the last dim, on cuda as on the CPU: the pieces are copied into
// views of a channels-last result.
TEST(CudaFactoryTest, CatAndStackKeepLayoutsAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  manual_seed(2);
  const Tensor x = ops::randn({2, 3, 4, 5}), y = ops::to(ops::randn({2, 3, 4, 5}), DType::kFloat16);
  const Tensor c = ops::contiguous(x, MemoryFormat::kChannelsLast), d = ops::contiguous(y, MemoryFormat::kChannelsLast);
  const Tensor c3 = ops::permute(ops::randn({2, 2, 4, 4, 3}), {0, 4, 1, 2, 3});  // channels_last_3d
  for (int64_t dim = 0; dim < 4; ++dim) {
    expect_like_cpu(str_cat("cat cl, cl dim ", dim), [&](const Args& a) { return ops::cat({a[0], a[1]}, dim); },
                    {c, d});
    expect_like_cpu(str_cat("cat cl, x dim ", dim), [&](const Args& a) { return ops::cat({a[0], a[1]}, dim); }, {c, y});
  }
  expect_like_cpu("cat cl, [0]", [](const Args& a) { return ops::cat({a[0], a[1]}, 1); }, {c, ops::zeros({0})});
  expect_like_cpu("cat cl3d", [](const Args& a) { return ops::cat({a[0], a[0]}, 1); }, {c3});
  for (int64_t dim = 0; dim <= 4; ++dim) {
    expect_like_cpu(str_cat("stack cl, cl dim ", dim), [&](const Args& a) { return ops::stack({a[0], a[1]}, dim); },
                    {c, d});
    expect_like_cpu(str_cat("stack cl, x dim ", dim), [&](const Args& a) { return ops::stack({a[0], a[1]}, dim); },
                    {c, x});
  }
}

// empty(memory_format) and the *_like factories on cuda lay results out as on
// the CPU (PyTorch's strides, runtime/ops/layout_cases_test_util.h) and fill
// every element; rand_like draws the CPU's values by logical index.
TEST(CudaFactoryTest, LikeFactoriesKeepLayoutsAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  auto strides_of = [](const Tensor& t) { return std::vector<int64_t>(t.strides().begin(), t.strides().end()); };
  const Tensor e = ops::empty({2, 3, 4, 5}, {.device = kCuda0, .memory_format = MemoryFormat::kChannelsLast});
  EXPECT_EQ(strides_of(e), (std::vector<int64_t>{60, 1, 15, 3}));
  EXPECT_THAT([] { ops::empty({2, 3}, {.device = kCuda0, .memory_format = MemoryFormat::kPreserve}); },
              ThrowsMessage<Error>(HasSubstr("unsupported memory format Preserve")));
  for (const layout_cases::LayoutCase& c : layout_cases::cases()) {
    SCOPED_TRACE(layout_cases::case_name(c));
    const Tensor host = layout_cases::input(c.input);
    const Tensor dev = to_cuda_as_strided(host);
    const TensorOptions o{.memory_format = c.format};
    if (!c.like.error.empty()) {
      EXPECT_THAT([&] { ops::zeros_like(dev, o); }, ThrowsMessage<Error>(HasSubstr(std::string(c.like.error))));
      continue;
    }
    for (const Tensor& t : {ops::empty_like(dev, o), ops::zeros_like(dev, o), ops::ones_like(dev, o),
                            ops::full_like(dev, 7, o), ops::rand_like(dev, o), ops::randn_like(dev, o),
                            ops::zeros_like(host, {.device = kCuda0, .memory_format = c.format}),
                            ops::ones_like(dev, {.device = kCPU, .memory_format = c.format})}) {
      EXPECT_EQ(strides_of(t), c.like.strides) << t.meta_str();
    }
    expect_same(ops::zeros_like(dev, o), ops::zeros_like(host, o), "zeros_like");
    expect_same(ops::ones_like(dev, o), ops::ones_like(host, o), "ones_like");
    expect_same(ops::full_like(dev, 7, o), ops::full_like(host, 7, o), "full_like");
    manual_seed(5);
    const Tensor r = ops::rand_like(dev, o);
    manual_seed(5);
    expect_same(r, ops::rand_like(host, o), "rand_like");
  }
}

}  // namespace
}  // namespace opspec
