// The sorting, scan and value-selecting reduction CUDA kernels (sort.cc,
// sort.cu) against the CPU kernels (skipped without a GPU): every result is
// the CPU's bits, as each row runs the CPU's loop in its order (See Note
// [CUDA sort rows] in sort.cu); and the CPU's error texts, which need no GPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_sort_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::claiming_cuda;
using testing::expect_same;
using testing::to_cuda;

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

// input: seeded values with ties (rounded to halves) and, for floats, a NaN.
Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) {
  Tensor t = ops::div(ops::round(ops::mul(testing::seeded_input(sizes, DType::kFloat64, seed), 2.0)), 2.0);
  if (is_floating(dt) && t.numel() > 3) {
    std::vector<double> v = t.to_vector<double>();
    v[2] = std::nan("");
    t = ops::tensor(v, sizes, DType::kFloat64);
  }
  return ops::to(t, dt);
}

void expect_pair(const std::tuple<Tensor, Tensor>& got, const std::tuple<Tensor, Tensor>& want,
                 const std::string& what) {
  expect_same(std::get<0>(got), std::get<0>(want), what + " values");
  expect_same(std::get<1>(got), std::get<1>(want), what + " indices");
}

TEST(CudaSortTest, ReductionsMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (const DType dt : kAllDTypes) {
    const std::string name(dtype_short_name(dt));
    const Tensor x = input({4, 7, 3}, dt, 1), d = to_cuda(x);
    expect_same(ops::max(d), ops::max(x), name + " max");
    expect_same(ops::min(d), ops::min(x), name + " min");
    for (const int64_t dim : {0, 1, -1}) {
      const std::string what = name + " dim " + std::to_string(dim);
      expect_pair(ops::max(d, dim), ops::max(x, dim), what + " max");
      expect_pair(ops::min(d, dim, true), ops::min(x, dim, true), what + " min");
      if (dt != DType::kFloat16 && dt != DType::kBFloat16) {  // a product of 84 halves overflows alike, but why test it
        expect_same(ops::prod(d, dim), ops::prod(x, dim), what + " prod");
      }
    }
    expect_same(ops::prod(to_cuda(input({5}, dt, 2))), ops::prod(input({5}, dt, 2)), name + " prod all");
  }
  // Empty products are 1; an empty kept dim gives empty results.
  expect_same(ops::prod(to_cuda(ops::empty({2, 0})), 1), ops::prod(ops::empty({2, 0}), 1), "empty prod");
  expect_pair(ops::max(to_cuda(ops::empty({0, 3})), 1), ops::max(ops::empty({0, 3}), 1), "empty max");
}

TEST(CudaSortTest, ScansMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (const DType dt : kAllDTypes) {
    const std::string name(dtype_short_name(dt));
    const Tensor x = input({3, 5, 4}, dt, 3), d = to_cuda(x);
    for (const int64_t dim : {0, 1, 2}) {
      const std::string what = name + " dim " + std::to_string(dim);
      expect_same(ops::cumsum(d, dim), ops::cumsum(x, dim), what + " cumsum");
      expect_same(ops::cumprod(d, dim), ops::cumprod(x, dim), what + " cumprod");
    }
  }
  const Tensor f = input({6}, DType::kFloat32, 4);
  expect_same(ops::cumsum(to_cuda(f), 0, DType::kInt64), ops::cumsum(f, 0, DType::kInt64), "cumsum dtype");
}

TEST(CudaSortTest, SortAndTopkMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (const DType dt : kAllDTypes) {
    const std::string name(dtype_short_name(dt));
    for (const int64_t len : {1, 5, 37, 300}) {
      const Tensor x = input({3, len, 2}, dt, 5 + len), d = to_cuda(x);
      const std::string what = name + " len " + std::to_string(len);
      expect_pair(ops::sort(d, 1), ops::sort(x, 1), what + " sort");
      expect_pair(ops::sort(d, true, 1, true), ops::sort(x, true, 1, true), what + " stable descending");
      expect_pair(ops::sort(d, -1), ops::sort(x, -1), what + " sort last");
      if (dt != DType::kBool) {
        const int64_t k = len < 3 ? len : 3;
        expect_pair(ops::topk(d, k, 1), ops::topk(x, k, 1), what + " topk");
        expect_pair(ops::topk(d, k, 1, false), ops::topk(x, k, 1, false), what + " topk smallest");
      }
    }
  }
  expect_pair(ops::sort(to_cuda(ops::full({}, 2.0))), ops::sort(ops::full({}, 2.0)), "0-D sort");
  expect_pair(ops::topk(to_cuda(ops::empty({2, 0})), 0), ops::topk(ops::empty({2, 0}), 0), "empty topk");
}

// sort's values and indices take self's layout on cuda as on the CPU (a dense
// self's strides, else its dims' order; See Note [Memory formats]): sorted
// row-major on the device, then copied into that layout.
TEST(CudaSortTest, SortResultsTakeSelfsLayoutAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  for (const DType dt : kAllDTypes) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = input({2, 3, 4, 5}, dt, 30);
    for (const Tensor& t : {ops::contiguous(x, MemoryFormat::kChannelsLast), ops::permute(x, {2, 0, 3, 1}),
                            ops::slice(x, 3, 0, 5, 2), ops::select(x, 1, 1)}) {
      for (int64_t dim : {1, -1}) {
        const std::string what = str_cat(n, " ", t.meta_str(), " dim ", dim);
        expect_like_cpu("sort values " + what, [&](const Args& a) { return std::get<0>(ops::sort(a[0], dim)); }, {t});
        expect_like_cpu("sort indices " + what,
                        [&](const Args& a) { return std::get<1>(ops::sort(a[0], true, dim, true)); }, {t});
      }
    }
  }
}

// The checks run before any data is read, so they need no GPU.
TEST(CudaSortTest, ErrorsAreTheCpus) {
  const Tensor x = claiming_cuda(ops::randn({2, 3}));
  EXPECT_THAT([&] { ops::sort(x, 2); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([&] { ops::topk(x, 4); }, ThrowsMessage<Error>(HasSubstr("selected index k out of range")));
  EXPECT_THAT([&] { ops::topk(claiming_cuda(ops::ones({3}, {.dtype = DType::kBool})), 1); },
              ThrowsMessage<Error>(HasSubstr("\"topk_out_cuda\" not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::max(claiming_cuda(ops::empty({2, 0})), 1); },
              ThrowsMessage<Error>(HasSubstr("max(): Expected reduction dim 1 to have non-zero size.")));
  EXPECT_THAT([&] { ops::min(claiming_cuda(ops::empty({0}))); },
              ThrowsMessage<Error>(HasSubstr("min(): Expected reduction dim to be specified")));
  EXPECT_THAT([&] { ops::cumsum(x, -3); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
  EXPECT_THAT([&] { ops::prod(x, 5); }, ThrowsMessage<Error>(HasSubstr("Dimension out of range")));
}

}  // namespace
}  // namespace opspec
