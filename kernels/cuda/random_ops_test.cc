// CUDA randint, uniform_, normal_, bernoulli and bernoulli.p against the CPU
// (same seed, same values: Note [Random draws per dtype]), and the
// list-returning views split/split_with_sizes/unbind/chunk on a CUDA tensor
// (skipped without a GPU, except the host-side checks).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/core/generator.h"

namespace opspec {
namespace cuda_random_ops_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_same;
using testing::kCuda0;
using testing::to_cpu;
using testing::to_cuda;

TEST(CudaRandomOpsTest, RandintIsTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::kInt64, DType::kInt32, DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBool}) {
    const int64_t high = dt == DType::kBool ? 2 : (dt == DType::kFloat16 ? 1000 : 100000);
    manual_seed(21);
    const Tensor d = ops::randint(-1 * (dt != DType::kBool), high, {3001}, {.dtype = dt, .device = kCuda0});
    const uint64_t after = default_generator_state().offset;
    manual_seed(21);
    const Tensor h = ops::randint(-1 * (dt != DType::kBool), high, {3001}, {.dtype = dt});
    EXPECT_EQ(default_generator_state().offset, after);
    expect_same(d, h, "randint " + std::string(dtype_short_name(dt)));
  }
}

TEST(CudaRandomOpsTest, UniformAndNormalAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : testing::kFloatDTypes) {
    const std::string n(dtype_short_name(dt));
    Tensor d = ops::zeros({40, 30}, {.dtype = dt, .device = kCuda0}), h = ops::zeros({40, 30}, {.dtype = dt});
    Tensor dv = ops::t(d), hv = ops::t(h);  // strided: logical order
    manual_seed(5);
    ops::uniform_(dv, -3, 7);
    manual_seed(5);
    ops::uniform_(hv, -3, 7);
    expect_same(d, h, "uniform_ " + n);
    manual_seed(6);
    ops::normal_(dv, 1, 2);
    manual_seed(6);
    ops::normal_(hv, 1, 2);
    if (dt != DType::kFloat64) {
      expect_same(d, h, "normal_ " + n);
    } else {  // libdevice's log and cos: a few ulps apart at most
      const std::vector<double> g = to_cpu(d).to_vector<double>(), w = h.to_vector<double>();
      for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 1e-14 * std::max(1.0, std::abs(w[i]))) << i;
    }
  }
}

TEST(CudaRandomOpsTest, BernoulliIsTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : testing::kFloatDTypes) {
    manual_seed(1);
    const Tensor p = ops::to(ops::rand({50, 20}), dt);
    manual_seed(2);
    const Tensor d = ops::bernoulli(ops::t(to_cuda(p)));
    manual_seed(2);
    const Tensor h = ops::bernoulli(ops::t(p));
    expect_same(d, h, "bernoulli " + std::string(dtype_short_name(dt)));
  }
  for (DType dt : {DType::kFloat32, DType::kInt64, DType::kBool}) {
    manual_seed(3);
    const Tensor d = ops::bernoulli(ops::zeros({999}, {.dtype = dt, .device = kCuda0}), 0.3);
    manual_seed(3);
    const Tensor h = ops::bernoulli(ops::zeros({999}, {.dtype = dt}), 0.3);
    expect_same(d, h, "bernoulli.p " + std::string(dtype_short_name(dt)));
  }
  EXPECT_THAT([] { ops::bernoulli(to_cuda(ops::full({4}, 1.5))); },
              ThrowsMessage<Error>(HasSubstr("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")));
  Tensor z = ops::zeros({2}, {.device = kCuda0});
  EXPECT_THAT([&] { ops::normal_(z, 0, -1); }, ThrowsMessage<Error>(HasSubstr("normal expects std >= 0.0")));
}

TEST(CudaRandomOpsTest, ListViewsOnCuda) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(4);
  const Tensor h = ops::randn({5, 4});
  const Tensor d = to_cuda(h);
  const std::vector<Tensor> ds = ops::split(d, 2), hs = ops::split(h, 2);
  ASSERT_EQ(ds.size(), 3u);
  for (size_t i = 0; i < ds.size(); ++i) {
    EXPECT_TRUE(ds[i].device().is_cuda());
    EXPECT_TRUE(ds[i].is_alias_of(d));
    expect_same(ds[i], hs[i], "split");
  }
  const std::vector<Tensor> du = ops::unbind(d, 1), hu = ops::unbind(h, 1);
  for (size_t i = 0; i < du.size(); ++i) expect_same(du[i], hu[i], "unbind");
  const std::vector<Tensor> dc = ops::chunk(d, 2, 1), hc = ops::chunk(h, 2, 1);
  for (size_t i = 0; i < dc.size(); ++i) expect_same(dc[i], hc[i], "chunk");
  const std::vector<Tensor> dw = ops::split_with_sizes(d, {1, 4}), hw = ops::split_with_sizes(h, {1, 4});
  expect_same(dw[1], hw[1], "split_with_sizes");
}

}  // namespace
}  // namespace opspec
