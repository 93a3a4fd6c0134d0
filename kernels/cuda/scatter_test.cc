// The scatter, gather and indexing ops' CUDA kernels (scatter.cc,
// scatter.cu) against the CPU kernels (skipped without a GPU): exact, since
// both walk the same lines in the same order (See Note [Scatter lines]),
// for every dtype and reduction, strided inputs, and the CPU's error texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_scatter_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_same;
using testing::to_cuda;

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) {
  return ops::to(ops::mul(testing::seeded_input(sizes, DType::kFloat32, seed), 10.0), dt);
}

Tensor random_index(int64_t n, int64_t hi, uint64_t seed, IntArrayRef shape) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> dist(0, hi - 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<double>(dist(gen));
  return ops::tensor(std::move(v), shape, DType::kInt64);
}

TEST(CudaScatterTest, GatherAndScattersMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAllDTypes) {
    const std::string n(dtype_short_name(dt));
    const Tensor self = input({5, 7}, dt, 1), src = input({6, 7}, dt, 2);
    const Tensor idx = random_index(42, 5, 3, {6, 7});  // many duplicates along dim 0
    expect_same(ops::gather(to_cuda(self), 0, to_cuda(idx)), ops::gather(self, 0, idx), "gather " + n);
    expect_same(ops::gather(to_cuda(ops::t(self)), 1, to_cuda(ops::t(idx))), ops::gather(ops::t(self), 1, ops::t(idx)),
                "gather transposed " + n);
    expect_same(ops::scatter(to_cuda(self), 0, to_cuda(idx), to_cuda(src)), ops::scatter(self, 0, idx, src),
                "scatter " + n);
    expect_same(ops::scatter(to_cuda(self), 0, to_cuda(idx), Scalar(int64_t{1})),
                ops::scatter(self, 0, idx, Scalar(int64_t{1})), "scatter.value " + n);
    if (dt != DType::kBool) {
      expect_same(ops::scatter_add(to_cuda(self), 0, to_cuda(idx), to_cuda(src)), ops::scatter_add(self, 0, idx, src),
                  "scatter_add " + n);
      for (const char* r : {"sum", "prod", "mean", "amax", "amin"}) {
        for (bool inc : {true, false}) {
          expect_same(ops::scatter_reduce(to_cuda(self), 0, to_cuda(idx), to_cuda(src), r, inc),
                      ops::scatter_reduce(self, 0, idx, src, r, inc),
                      "scatter_reduce " + std::string(r) + (inc ? " include_self " : " ") + n);
        }
      }
    }
    // In place on a transposed view.
    Tensor base = input({7, 5}, dt, 4), cbase = to_cuda(base);
    Tensor view = ops::t(base), cview = ops::t(cbase);
    ops::scatter_(view, 0, idx, src);
    ops::scatter_(cview, 0, to_cuda(idx), to_cuda(src));
    expect_same(cbase, base, "scatter_ transposed " + n);
  }
}

TEST(CudaScatterTest, IndexAndIndexPutMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAllDTypes) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = input({4, 5, 6}, dt, 5);
    const Tensor i = random_index(6, 4, 6, {2, 3}), j = random_index(3, 6, 7, {3});
    const std::vector<std::vector<std::optional<Tensor>>> cases = {
        {i}, {std::nullopt, ops::sub(random_index(3, 5, 8, {3}), 5)}, {i, std::nullopt, j}, {std::nullopt, i, j}};
    for (size_t c = 0; c < cases.size(); ++c) {
      std::vector<std::optional<Tensor>> on_gpu;
      for (const auto& t : cases[c]) on_gpu.push_back(t ? std::optional<Tensor>(to_cuda(*t)) : std::nullopt);
      const Tensor want = ops::index(x, cases[c]);
      expect_same(ops::index(to_cuda(x), on_gpu), want, "index case " + std::to_string(c) + " " + n);
      const Tensor values = input(want.sizes(), dt, 9);
      for (bool acc : {false, true}) {
        if (acc && dt == DType::kBool) continue;
        expect_same(ops::index_put(to_cuda(x), on_gpu, to_cuda(values), acc), ops::index_put(x, cases[c], values, acc),
                    "index_put case " + std::to_string(c) + (acc ? " accumulate " : " ") + n);
      }
    }
    const Tensor mask = ops::gt(testing::seeded_input({4, 5}, DType::kFloat32, 10), 0.0);
    expect_same(ops::index(to_cuda(x), {to_cuda(mask)}), ops::index(x, {mask}), "bool mask " + n);
    expect_same(ops::masked_select(to_cuda(x), to_cuda(ops::view(mask, {4, 5, 1}))),
                ops::masked_select(x, ops::view(mask, {4, 5, 1})), "masked_select " + n);
    expect_same(ops::nonzero(to_cuda(x)), ops::nonzero(x), "nonzero " + n);
  }
}

TEST(CudaScatterTest, CopiesAndFillsMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = input({4, 6}, DType::kFloat32, 11);
  const Tensor mask = ops::gt(testing::seeded_input({6}, DType::kFloat32, 12), 0.0);
  const Tensor v = ops::scalar_tensor(2.5);
  expect_same(ops::masked_fill(to_cuda(x), to_cuda(mask), to_cuda(v)), ops::masked_fill(x, mask, v), "masked_fill");
  expect_same(ops::masked_fill(to_cuda(x), to_cuda(mask), v), ops::masked_fill(x, mask, v), "cpu scalar value");
  // An f64 value on the device fills exactly (0.1 is not a float).
  const Tensor x64 = ops::to(x, DType::kFloat64), v64 = ops::scalar_tensor(0.1, {.dtype = DType::kFloat64});
  expect_same(ops::masked_fill(to_cuda(x64), to_cuda(mask), to_cuda(v64)), ops::masked_fill(x64, mask, v64),
              "masked_fill f64 value");
  expect_same(ops::select_scatter(to_cuda(x), to_cuda(ops::ones({6})), 0, 2),
              ops::select_scatter(x, ops::ones({6}), 0, 2), "select_scatter");
  expect_same(ops::slice_scatter(to_cuda(x), to_cuda(ops::ones({4, 2})), 1, 1, 5, 2),
              ops::slice_scatter(x, ops::ones({4, 2}), 1, 1, 5, 2), "slice_scatter");
  expect_same(ops::diagonal(to_cuda(x), 1), ops::diagonal(x, 1), "diagonal");
  expect_same(ops::diagonal_backward(to_cuda(ops::ones({3})), {4, 6}, -1, 0, 1),
              ops::diagonal_backward(ops::ones({3}), {4, 6}, -1, 0, 1), "diagonal_backward");
  expect_same(ops::diagonal_backward(to_cuda(ops::ones({0})), {0, 6}, 0, 0, 1),
              ops::diagonal_backward(ops::ones({0}), {0, 6}, 0, 0, 1), "empty diagonal_backward");
}

TEST(CudaScatterTest, BadIndicesRaiseTheCpuErrors) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(ops::zeros({2, 2}));
  const Tensor bad = to_cuda(ops::tensor({0, 2, 1, 0}, {2, 2}, DType::kInt64));
  EXPECT_THAT([&] { ops::gather(x, 1, bad); },
              ThrowsMessage<Error>(HasSubstr("aten::gather: index 2 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::scatter_add(x, 1, bad, x); },
              ThrowsMessage<Error>(HasSubstr("index 2 is out of bounds for dimension 1 with size 2")));
  EXPECT_THAT([&] { ops::index(x, {to_cuda(ops::tensor({5}, {1}, DType::kInt64))}); },
              ThrowsMessage<Error>(HasSubstr("index 5 is out of bounds for dimension 0 with size 2")));
}

}  // namespace
}  // namespace opspec
