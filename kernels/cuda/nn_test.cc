// The model ops' CUDA kernels (nn.cc, nn.cu) against the CPU kernels
// (skipped without a GPU): exact for gathers, triangles, arg-reductions,
// embedding_dense_backward and nll_loss (the same summation order), to
// rounding for _safe_softmax and attention; the CPU's error texts for bad
// indices and targets.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_nn_test {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_close;
using testing::expect_same;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

// random_ints: n values in [lo, hi) from seed, as a tensor of dtype.
Tensor random_ints(int64_t n, int64_t lo, int64_t hi, uint64_t seed, IntArrayRef shape, DType dtype = DType::kInt64) {
  std::mt19937_64 gen(seed);
  std::uniform_int_distribution<int64_t> dist(lo, hi - 1);
  std::vector<double> v(static_cast<size_t>(n));
  for (double& x : v) x = static_cast<double>(dist(gen));
  return ops::tensor(std::move(v), shape, dtype);
}

// as_dtype: x * 10 converted to dt (integers and bools see distinct values too).
Tensor as_dtype(const Tensor& x, DType dt) { return ops::to(ops::mul(x, 10.0), dt); }

TEST(CudaNnTest, IndexSelectAndEmbeddingMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAllDTypes) {
    const Tensor x = as_dtype(input({5, 7, 3}, DType::kFloat64, 1), dt);
    const Tensor xt = ops::permute(x, {2, 0, 1});
    const std::string n(dtype_short_name(dt));
    for (DType it : {DType::kInt64, DType::kInt32}) {
      for (int64_t dim : {0, 1, 2, -1}) {
        const Tensor idx = random_ints(9, 0, x.size(dim), 2, {9}, it);
        expect_same(ops::index_select(to_cuda(x), dim, to_cuda(idx)), ops::index_select(x, dim, idx),
                    "index_select " + n);
        const Tensor idt = random_ints(9, 0, xt.size(dim), 3, {9}, it);
        expect_same(ops::index_select(to_cuda(xt), dim, to_cuda(idt)), ops::index_select(xt, dim, idt),
                    "index_select permuted " + n);
      }
      const Tensor w = ops::select(x, 2, 1);  // [5, 7]
      const Tensor ids = random_ints(12, 0, 5, 3, {3, 4}, it);
      expect_same(ops::embedding(to_cuda(w), to_cuda(ids)), ops::embedding(w, ids), "embedding " + n);
    }
  }
  // A 0-D index, a 0-D self, and an index as a cpu scalar.
  const Tensor x = input({4, 3}, DType::kFloat32, 4);
  const Tensor i0 = ops::tensor({2}, {}, DType::kInt64);
  expect_same(ops::index_select(to_cuda(x), 0, to_cuda(i0)), ops::index_select(x, 0, i0), "0-D index");
  expect_same(ops::index_select(to_cuda(x), 1, i0), ops::index_select(x, 1, i0), "cpu scalar index");
  const Tensor s = ops::tensor({3.5}, {});
  expect_same(ops::index_select(to_cuda(s), 0, to_cuda(ops::tensor({0}, {1}, DType::kInt64))),
              ops::index_select(s, 0, ops::tensor({0}, {1}, DType::kInt64)), "0-D self");
  // Empty results still check their indices.
  const Tensor e = ops::zeros({3, 0});
  expect_same(ops::index_select(to_cuda(e), 0, to_cuda(ops::tensor({2, 0}, {2}, DType::kInt64))),
              ops::index_select(e, 0, ops::tensor({2, 0}, {2}, DType::kInt64)), "empty rows");
}

TEST(CudaNnTest, BadIndicesGiveTheCpusMessages) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = to_cuda(input({5, 2}, DType::kFloat32, 5));
  const Tensor bad = to_cuda(ops::tensor({1, 7, -2, 9}, {4}, DType::kInt64));
  EXPECT_THAT([&] { ops::index_select(x, 0, bad); },
              ThrowsMessage<Error>(HasSubstr("aten::index_select: index out of range in self (index 7, size 5)")));
  EXPECT_THAT([&] { ops::embedding(x, ops::to(bad, DType::kInt32)); },
              ThrowsMessage<Error>(HasSubstr("aten::embedding: index out of range in self (index 7, size 5)")));
  EXPECT_THAT([&] { ops::index_select(ops::zeros({3, 0}, {.device = testing::kCuda0}), 0, bad); },
              ThrowsMessage<Error>(HasSubstr("index out of range in self (index 7, size 3)")));
  EXPECT_THAT([&] { ops::embedding_dense_backward(to_cuda(ops::ones({4, 2})), bad, 5, -1, false); },
              ThrowsMessage<Error>(HasSubstr("aten::embedding_dense_backward: index out of range in self (index 7")));
  EXPECT_THAT([&] { ops::argmax(to_cuda(ops::ones({2}, {.dtype = DType::kBool}))); },
              ThrowsMessage<Error>(HasSubstr("aten::argmax: \"argmax_cuda\" not implemented for 'Bool'")));
}

TEST(CudaNnTest, EmbeddingDenseBackwardIsTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor ids = random_ints(300, 0, 20, 6, {30, 10});  // many repeats per row
    const Tensor g = input({30, 10, 16}, dt, 7);
    const std::string n(dtype_short_name(dt));
    for (int64_t padding : {-1, 3}) {
      for (bool freq : {false, true}) {
        expect_same(ops::embedding_dense_backward(to_cuda(g), to_cuda(ids), 24, padding, freq),
                    ops::embedding_dense_backward(g, ids, 24, padding, freq),
                    str_cat("embedding_dense_backward ", n, " padding ", padding, " freq ", freq));
      }
    }
    const Tensor i32 = ops::to(ids, DType::kInt32);
    expect_same(ops::embedding_dense_backward(to_cuda(g), to_cuda(i32), 20, -1, false),
                ops::embedding_dense_backward(g, i32, 20, -1, false), "i32 indices " + n);
  }
}

TEST(CudaNnTest, TrilAndTriuMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAllDTypes) {
    const Tensor x = as_dtype(input({2, 4, 6}, DType::kFloat64, 8), dt);
    for (const Tensor& t : {x, ops::transpose(x, 1, 2)}) {
      for (int64_t d : {-7, -2, -1, 0, 1, 3, 8}) {
        const std::string what = str_cat(dtype_short_name(dt), " diagonal ", d);
        expect_same(ops::tril(to_cuda(t), d), ops::tril(t, d), "tril " + what);
        expect_same(ops::triu(to_cuda(t), d), ops::triu(t, d), "triu " + what);
      }
    }
  }
}

// bitwise_not: self's layout as on the CPU. A self laid out as the result is
// inverted flat (contiguous, channels-last, permuted dense); any other (sliced,
// expanded) is first copied into the result's layout.
TEST(CudaNnTest, BitwiseNotKeepsLayoutsAndMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  for (DType dt : {DType::kInt64, DType::kInt32, DType::kBool}) {
    const Tensor x = as_dtype(input({2, 3, 4, 5}, DType::kFloat64, 40), dt);
    for (const Tensor& t : {x, ops::contiguous(x, MemoryFormat::kChannelsLast), ops::permute(x, {3, 1, 0, 2}),
                            ops::slice(x, 3, 1, 5, 2), ops::expand(ops::select(x, 0, 1), {2, 2, 3, 4, 5}),
                            ops::select(ops::select(ops::select(ops::select(x, 0, 1), 0, 2), 0, 3), 0, 4),
                            ops::slice(x, 0, 0, 0)}) {
      expect_like_cpu(str_cat("bitwise_not ", dtype_short_name(dt), " ", t.meta_str()),
                      [](const Args& a) { return ops::bitwise_not(a[0]); }, {t});
    }
  }
}

// The dtype check runs before any data is read, so it needs no GPU.
TEST(CudaNnTest, BitwiseNotRefusesFloatsNamingTheCudaKernel) {
  EXPECT_THAT([] { ops::bitwise_not(testing::claiming_cuda(ops::ones({2}))); },
              ThrowsMessage<Error>(HasSubstr("\"bitwise_not_cuda\" not implemented for 'Float'")));
}

TEST(CudaNnTest, ArgmaxAndArgminMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64,
                   DType::kInt32}) {
    // Rounded values tie often; the long rows take the block kernel.
    const Tensor x = ops::to(ops::mul(input({6, 300, 5}, DType::kFloat64, 9), 3.0), dt);
    const Tensor d = to_cuda(x);
    const std::string n(dtype_short_name(dt));
    expect_same(ops::argmax(d), ops::argmax(x), "argmax all " + n);
    expect_same(ops::argmin(d, std::nullopt, true), ops::argmin(x, std::nullopt, true), "argmin all " + n);
    for (int64_t dim : {0, 1, 2, -1}) {
      for (bool keep : {false, true}) {
        const std::string what = str_cat(n, " dim ", dim, " keepdim ", keep);
        expect_same(ops::argmax(d, dim, keep), ops::argmax(x, dim, keep), "argmax " + what);
        expect_same(ops::argmin(d, dim, keep), ops::argmin(x, dim, keep), "argmin " + what);
      }
    }
    const Tensor rows = ops::contiguous(ops::transpose(x, 1, 2));  // [6, 5, 300]: one block per row
    expect_same(ops::argmax(to_cuda(rows), -1), ops::argmax(rows, -1), "argmax rows " + n);
  }
  // Ties keep the first index, NaN beats everything and the first NaN stays.
  const double nan = std::nan("");
  std::vector<double> v(2000, 1.0);
  v[700] = nan;
  v[1500] = nan;
  v[5] = 2.0;
  v[1999] = -1.0;
  for (DType dt : kFloats) {
    const Tensor x = ops::tensor(v, {2000}, dt);
    expect_same(ops::argmax(to_cuda(x)), ops::argmax(x), "argmax nan");
    expect_same(ops::argmin(to_cuda(x)), ops::argmin(x), "argmin nan");
    const Tensor ties = ops::ones({1000}, {.dtype = dt});
    expect_same(ops::argmax(to_cuda(ties)), ops::argmax(ties), "argmax ties");
  }
  const Tensor s = ops::tensor({4}, {});
  expect_same(ops::argmax(to_cuda(s), 0), ops::argmax(s, 0), "0-D");
}

TEST(CudaNnTest, NllLossIsTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    for (int64_t batch : {1, 7, 1000}) {
      const Tensor logp = ops::log_softmax(input({batch, 11}, dt, 10), 1);
      // Every fifth target is 4, the ignore_index of the second pass.
      std::vector<double> tv = random_ints(batch, 0, 11, 11, {batch}).to_vector<double>();
      for (size_t i = 0; i < tv.size(); i += 5) tv[i] = 4;
      const Tensor target = ops::tensor(tv, {batch}, DType::kInt64);
      const Tensor w = ops::abs(input({11}, dt, 12));
      const Tensor d = to_cuda(logp), dtg = to_cuda(target), dw = to_cuda(w);
      for (ops::Reduction r : {ops::Reduction::kNone, ops::Reduction::kMean, ops::Reduction::kSum}) {
        for (const std::optional<Tensor>& wt : {std::optional<Tensor>(), std::optional<Tensor>(w)}) {
          const std::optional<Tensor> dwt = wt ? std::optional<Tensor>(dw) : std::nullopt;
          for (int64_t ignore : {-100, 4}) {
            const std::string what = str_cat(n, " batch ", batch, " reduction ", static_cast<int>(r), " weight ",
                                             wt.has_value(), " ignore ", ignore);
            auto [loss, total] = ops::nll_loss_forward(d, dtg, dwt, r, ignore);
            auto [rloss, rtotal] = ops::nll_loss_forward(logp, target, wt, r, ignore);
            expect_same(loss, rloss, "nll_loss " + what);
            expect_same(total, rtotal, "total_weight " + what);
            const Tensor grad = r == ops::Reduction::kNone ? input({batch}, dt, 13) : ops::full({}, 0.75, {.dtype = dt});
            expect_same(ops::nll_loss_backward(to_cuda(grad), d, dtg, dwt, r, ignore, total),
                        ops::nll_loss_backward(grad, logp, target, wt, r, ignore, rtotal), "backward " + what);
          }
        }
      }
    }
  }
  // 1-D input; a grad_output as a cpu scalar; a target out of bounds.
  const Tensor x = ops::log_softmax(input({6}, DType::kFloat32, 14), 0);
  const Tensor t = ops::tensor({2}, {}, DType::kInt64);
  auto [loss, total] = ops::nll_loss_forward(to_cuda(x), to_cuda(t), std::nullopt, ops::Reduction::kMean, -100);
  expect_same(loss, std::get<0>(ops::nll_loss_forward(x, t, std::nullopt, ops::Reduction::kMean, -100)), "1-D");
  expect_same(ops::nll_loss_backward(ops::ones({}), to_cuda(x), to_cuda(t), std::nullopt, ops::Reduction::kMean, -100,
                                     total),
              ops::nll_loss_backward(ops::ones({}), x, t, std::nullopt, ops::Reduction::kMean, -100,
                                     std::get<1>(ops::nll_loss_forward(x, t, std::nullopt, ops::Reduction::kMean, -100))),
              "1-D backward");
  const Tensor logp = to_cuda(ops::zeros({3, 4}));
  const Tensor bad = to_cuda(ops::tensor({1, -100, 9}, {3}, DType::kInt64));
  EXPECT_THAT([&] { ops::nll_loss_forward(logp, bad, std::nullopt, ops::Reduction::kMean, -100); },
              ThrowsMessage<Error>(HasSubstr("aten::nll_loss_forward: Target 9 is out of bounds.")));
  EXPECT_THAT([&] { ops::nll_loss_forward(logp, bad, std::nullopt, ops::Reduction::kNone, 1); },
              ThrowsMessage<Error>(HasSubstr("aten::nll_loss_forward: Target -100 is out of bounds.")));
}

TEST(CudaNnTest, NllLoss2dIsTheCpusBits) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor logp = ops::log_softmax(input({3, 5, 4, 6}, dt, 15), 1);
    std::vector<double> tv = random_ints(72, 0, 5, 16, {72}).to_vector<double>();
    for (size_t i = 0; i < tv.size(); i += 7) tv[i] = 2;  // the ignore_index of the second pass
    const Tensor target = ops::tensor(tv, {3, 4, 6}, DType::kInt64), w = ops::abs(input({5}, dt, 17));
    for (ops::Reduction r : {ops::Reduction::kNone, ops::Reduction::kMean, ops::Reduction::kSum}) {
      for (int64_t ignore : {-100, 2}) {
        const std::string what = str_cat(dtype_short_name(dt), " reduction ", static_cast<int>(r), " ignore ", ignore);
        auto [loss, total] = ops::nll_loss2d_forward(to_cuda(logp), to_cuda(target), to_cuda(w), r, ignore);
        auto [rloss, rtotal] = ops::nll_loss2d_forward(logp, target, w, r, ignore);
        expect_same(loss, rloss, "nll_loss2d " + what);
        expect_same(total, rtotal, "total_weight " + what);
        const Tensor grad = r == ops::Reduction::kNone ? input({3, 4, 6}, dt, 18) : ops::full({}, 0.75, {.dtype = dt});
        expect_same(ops::nll_loss2d_backward(to_cuda(grad), to_cuda(logp), to_cuda(target), to_cuda(w), r, ignore,
                                             total),
                    ops::nll_loss2d_backward(grad, logp, target, w, r, ignore, rtotal), "backward " + what);
      }
    }
  }
  // An empty batch reduces to NaN; cross_entropy over [N, C, L] takes the same path.
  EXPECT_TRUE(std::isnan(ops::nll_loss2d(to_cuda(ops::zeros({0, 3, 2, 2})),
                                         to_cuda(ops::zeros({0, 2, 2}, {.dtype = DType::kInt64})))
                             .item<double>()));
  const Tensor x = input({2, 5, 7}, DType::kFloat32, 19);
  const Tensor t = random_ints(14, 0, 5, 20, {2, 7});
  expect_same(ops::cross_entropy(to_cuda(x), to_cuda(t)), ops::cross_entropy(x, t), "cross_entropy [N, C, L]");
}

TEST(CudaNnTest, SafeSoftmaxZeroesRowsThatAttendToNothing) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    Tensor x = ops::mul(input({4, 9, 6}, DType::kFloat64, 15), 3.0);
    x = ops::masked_fill(x, ops::gt(x, 1.0), -kInf);
    x = ops::masked_fill(x, ops::view(ops::lt(ops::arange(9.0), 3.0), {9, 1}), -kInf);  // whole rows along dim 2
    x = ops::to(x, dt);
    for (int64_t dim : {0, 1, 2}) {
      const std::string what = str_cat(dtype_short_name(dt), " dim ", dim);
      expect_close(ops::_safe_softmax(to_cuda(x), dim), ops::_safe_softmax(x, dim), "_safe_softmax " + what, 4);
    }
    expect_close(ops::_safe_softmax(to_cuda(x), -1, DType::kFloat64), ops::_safe_softmax(x, -1, DType::kFloat64),
                 "_safe_softmax to f64", 4);
  }
}

// check_sdpa: the forward and backward of both kernels on seeded (B, H, L|S, E)
// operands (query laid out as (B, L, H, E) when transposed_query).
void check_sdpa(DType dt, int64_t L, int64_t S, bool causal, const std::optional<Tensor>& mask,
                std::optional<double> scale, bool transposed_query, const std::string& what) {
  const int64_t B = 2, H = 3, E = 8;
  Tensor q = input({B, H, L, E}, dt, 16);
  if (transposed_query) q = ops::transpose(ops::contiguous(ops::transpose(q, 1, 2)), 1, 2);  // (B, L, H, E) memory
  const Tensor k = input({B, H, S, E}, dt, 17), v = input({B, H, S, E}, dt, 18);
  const std::optional<Tensor> dmask = mask ? std::optional<Tensor>(to_cuda(*mask)) : std::nullopt;
  // The device query keeps q's layout (aten::to here packs its result contiguous).
  const Tensor cq = transposed_query ? ops::transpose(to_cuda(ops::transpose(q, 1, 2)), 1, 2) : to_cuda(q);
  auto [out, lse] =
      ops::_scaled_dot_product_flash_attention_for_cpu(cq, to_cuda(k), to_cuda(v), 0.0, causal, dmask, scale);
  auto [rout, rlse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal, mask, scale);
  EXPECT_THAT(out.strides(), ElementsAreArray(rout.strides())) << what;
  EXPECT_THAT(lse.strides(), ElementsAreArray(rlse.strides())) << what;
  expect_close(out, rout, "out " + what, 8, 1.0);  // a weighted mean of values ~ 1
  expect_close(lse, rlse, "lse " + what, 8, 4.0);
  const Tensor g = input({B, H, L, E}, dt, 19);
  auto [dq, dk, dv] = ops::_scaled_dot_product_flash_attention_for_cpu_backward(
      to_cuda(g), cq, to_cuda(k), to_cuda(v), out, lse, 0.0, causal, dmask, scale);
  auto [rdq, rdk, rdv] =
      ops::_scaled_dot_product_flash_attention_for_cpu_backward(g, q, k, v, rout, rlse, 0.0, causal, mask, scale);
  EXPECT_THAT(dq.strides(), ElementsAreArray(rdq.strides())) << what;
  // Gradients sum signed terms: the floor is their inputs' magnitude.
  expect_close(dq, rdq, "dq " + what, 16, 4.0);
  expect_close(dk, rdk, "dk " + what, 16, 4.0);
  expect_close(dv, rdv, "dv " + what, 16, 4.0);
}

TEST(CudaNnTest, FlashAttentionMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    check_sdpa(dt, 5, 7, false, std::nullopt, std::nullopt, false, "plain " + n);
    check_sdpa(dt, 6, 6, true, std::nullopt, 0.5, true, "causal " + n);
    // A 4-D mask broadcast over heads, with a row of only -inf (zeros, logsumexp 0).
    Tensor mask4 = input({2, 1, 5, 7}, dt, 20);
    mask4 = ops::masked_fill(mask4, ops::gt(mask4, 1.2), -kInf);
    mask4 = ops::masked_fill(mask4, ops::view(ops::eq(ops::arange(5.0), 3.0), {5, 1}), -kInf);
    check_sdpa(dt, 5, 7, false, mask4, std::nullopt, false, "mask " + n);
    // A 2-D f32 mask (allowed with any query dtype).
    const Tensor mask2 = input({5, 7}, DType::kFloat32, 21);
    check_sdpa(dt, 5, 7, true, mask2, std::nullopt, false, "f32 mask " + n);
  }
  // Rows of scores too long for shared memory use the device scratch.
  check_sdpa(DType::kFloat32, 3, 12000, false, std::nullopt, std::nullopt, false, "long rows f32");
  check_sdpa(DType::kFloat64, 5000, 4, false, std::nullopt, std::nullopt, false, "long columns f64");
}

}  // namespace
}  // namespace opspec
