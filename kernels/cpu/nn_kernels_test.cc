// Tests of the model ops' CPU and Meta kernels (indexing.cc, loss.cc,
// attention.cc, _safe_softmax, bitwise_not) against hand-computed values and
// a double-precision reference, and their errors (PyTorch's words).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <utility>

#include "runtime/ops/ops.h"

namespace opspec {
namespace nn_kernels_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
Tensor ints(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kInt64); }
Tensor floats(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kFloat32); }

TEST(IndexSelectTest, PicksSlicesAlongDim) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_THAT(values(ops::index_select(x, 0, ints({2, 0, 2}, {3}))), ElementsAre(5, 6, 1, 2, 5, 6));
  const Tensor cols = ops::index_select(x, -1, ints({1}, {1}));
  EXPECT_THAT(cols.sizes(), ElementsAre(3, 1));
  EXPECT_THAT(values(cols), ElementsAre(2, 4, 6));
  // A 0-D index selects one slice (size 1); i32 indices work; a transposed input too.
  EXPECT_THAT(ops::index_select(x, 0, ints({1}, {})).sizes(), ElementsAre(1, 2));
  EXPECT_THAT(values(ops::index_select(ops::t(x), 1, ops::tensor({2}, {1}, DType::kInt32))), ElementsAre(5, 6));
  EXPECT_THAT(ops::index_select(ops::empty({3, 2}, {.device = kMeta}), 1,
                                ops::empty({3}, {.dtype = DType::kInt64, .device = kMeta}))
                  .sizes(),
              ElementsAre(3, 3));
}

TEST(IndexSelectTest, RejectsBadIndices) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  EXPECT_THAT([&] { ops::index_select(x, 0, ints({3}, {1})); },
              ThrowsMessage<Error>(HasSubstr("index out of range in self")));
  EXPECT_THAT([&] { ops::index_select(x, 0, ints({-1}, {1})); },
              ThrowsMessage<Error>(HasSubstr("index out of range in self")));
  EXPECT_THAT([&] { ops::index_select(x, 0, floats({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("index_select(): Expected dtype int32 or int64 for index")));
  EXPECT_THAT([&] { ops::index_select(x, 0, ints({0, 1}, {1, 2})); },
              ThrowsMessage<Error>(HasSubstr("index_select(): Index is supposed to be a vector")));
  EXPECT_THAT([&] { ops::index_select(x, 2, ints({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

TEST(EmbeddingTest, RowsOfWeightInIndicesShape) {
  const Tensor w = floats({0, 1, 10, 11, 20, 21, 30, 31}, {4, 2});
  const Tensor out = ops::embedding(w, ints({0, 3, 3, 1}, {2, 2}));
  EXPECT_THAT(out.sizes(), ElementsAre(2, 2, 2));
  EXPECT_THAT(values(out), ElementsAre(0, 1, 30, 31, 30, 31, 10, 11));
  EXPECT_THAT([&] { ops::embedding(w, ints({4}, {1})); }, ThrowsMessage<Error>(HasSubstr("index out of range in self")));
  EXPECT_THAT([&] { ops::embedding(floats({1, 2}, {2}), ints({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("'weight' must be 2-D")));
  EXPECT_THAT([&] { ops::embedding(w, floats({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("Expected tensor for argument #1 'indices' to have one of the following "
                                             "scalar types: Long, Int; but got torch.float32 instead")));
}

TEST(EmbeddingTest, DenseBackwardSumsRowsSkipsPaddingAndScalesByFrequency) {
  const Tensor g = floats({1, 2, 3, 4, 5, 6}, {3, 2});
  const Tensor idx = ints({1, 2, 1}, {3});
  EXPECT_THAT(values(ops::embedding_dense_backward(g, idx, 4, -1, false)), ElementsAre(0, 0, 6, 8, 3, 4, 0, 0));
  EXPECT_THAT(values(ops::embedding_dense_backward(g, idx, 4, 1, false)), ElementsAre(0, 0, 0, 0, 3, 4, 0, 0));
  EXPECT_THAT(values(ops::embedding_dense_backward(g, idx, 4, -1, true)), ElementsAre(0, 0, 3, 4, 3, 4, 0, 0));
}

TEST(TriangleTest, KeepsTheTriangleFromTheDiagonal) {
  const Tensor x = floats({1, 2, 3, 4, 5, 6, 7, 8, 9}, {3, 3});
  EXPECT_THAT(values(ops::tril(x)), ElementsAre(1, 0, 0, 4, 5, 0, 7, 8, 9));
  EXPECT_THAT(values(ops::tril(x, -1)), ElementsAre(0, 0, 0, 4, 0, 0, 7, 8, 0));
  EXPECT_THAT(values(ops::triu(x, 1)), ElementsAre(0, 2, 3, 0, 0, 6, 0, 0, 0));
  EXPECT_THAT(values(ops::triu(x, -5)), ElementsAreArray(values(x)));
  // Batched, non-square, transposed input (the result is contiguous), and bool.
  const Tensor b = ops::tril(ops::transpose(floats({1, 2, 3, 4, 5, 6}, {1, 2, 3}), 1, 2));
  EXPECT_THAT(b.sizes(), ElementsAre(1, 3, 2));
  EXPECT_TRUE(b.is_contiguous());
  EXPECT_THAT(values(b), ElementsAre(1, 0, 2, 5, 3, 6));
  EXPECT_THAT(values(ops::tril(ops::ones({2, 3}, {.dtype = DType::kBool}))), ElementsAre(1, 0, 0, 1, 1, 0));
  EXPECT_THAT([&] { ops::tril(floats({1, 2}, {2})); },
              ThrowsMessage<Error>(HasSubstr("tril: input tensor must have at least 2 dimensions")));
  EXPECT_THAT([&] { ops::triu(ops::empty({2}, {.device = kMeta})); },
              ThrowsMessage<Error>(HasSubstr("triu: input tensor must have at least 2 dimensions")));
}

TEST(ArgReductionTest, FirstExtremeAndNaNWins) {
  const Tensor x = floats({1, 5, 5, 2, 0, 7}, {2, 3});
  EXPECT_EQ(ops::argmax(x).item<int64_t>(), 5);
  EXPECT_EQ(ops::argmin(x).item<int64_t>(), 4);
  EXPECT_THAT(values(ops::argmax(x, 1)), ElementsAre(1, 2));
  EXPECT_THAT(values(ops::argmin(x, 0)), ElementsAre(0, 1, 0));
  EXPECT_THAT(ops::argmax(x, 1, true).sizes(), ElementsAre(2, 1));
  EXPECT_EQ(ops::argmax(x).dtype(), DType::kInt64);
  const double nan = std::nan("");
  EXPECT_EQ(ops::argmax(floats({1, nan, 5, nan}, {4})).item<int64_t>(), 1);
  EXPECT_EQ(ops::argmin(floats({1, nan, -5}, {3})).item<int64_t>(), 1);
  EXPECT_THAT(values(ops::argmax(ints({3, 9, 9}, {3}))), ElementsAre(1));
  EXPECT_THAT([&] { ops::argmax(ops::empty({0})); },
              ThrowsMessage<Error>(HasSubstr("argmax(): Expected reduction dim to be specified for input.numel() == 0.")));
  EXPECT_THAT([&] { ops::argmin(ops::empty({2, 0}), 1); },
              ThrowsMessage<Error>(HasSubstr("argmin(): Expected reduction dim 1 to have non-zero size.")));
}

TEST(NllLossTest, ReductionsWeightsAndIgnoredTargets) {
  const Tensor logp = floats({-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor t = ints({2, 0}, {2});
  auto loss = [&](const Tensor& target, std::optional<Tensor> w, ops::Reduction r, int64_t ignore = -100) {
    return ops::nll_loss_forward(logp, target, w, r, ignore);
  };
  auto [mean, total] = loss(t, std::nullopt, ops::Reduction::kMean);
  EXPECT_DOUBLE_EQ(mean.item<double>(), 3.5);
  EXPECT_DOUBLE_EQ(total.item<double>(), 2);
  EXPECT_DOUBLE_EQ(std::get<0>(loss(t, std::nullopt, ops::Reduction::kSum)).item<double>(), 7);
  auto [none, none_total] = loss(t, std::nullopt, ops::Reduction::kNone);
  EXPECT_THAT(values(none), ElementsAre(3, 4));
  EXPECT_DOUBLE_EQ(none_total.item<double>(), 0);  // never written on this path, as PyTorch
  const Tensor w = floats({1, 2, 3}, {3});
  auto [wmean, wtotal] = loss(t, w, ops::Reduction::kMean);
  EXPECT_DOUBLE_EQ(wmean.item<double>(), 13.0 / 4);  // (3 * 3 + 4 * 1) / (3 + 1)
  EXPECT_DOUBLE_EQ(wtotal.item<double>(), 4);
  EXPECT_DOUBLE_EQ(std::get<0>(loss(ints({2, 7}, {2}), std::nullopt, ops::Reduction::kMean, 7)).item<double>(), 3);
  EXPECT_TRUE(std::isnan(std::get<0>(loss(ints({7, 7}, {2}), std::nullopt, ops::Reduction::kMean, 7)).item<double>()));
  // A 1-D input takes a 0-D target.
  EXPECT_DOUBLE_EQ(
      std::get<0>(ops::nll_loss_forward(floats({-1, -2}, {2}), ints({1}, {}), std::nullopt, ops::Reduction::kMean, -100))
          .item<double>(),
      2);
}

TEST(NllLossTest, CascadeSumOfALongBatchMatchesADoubleSum) {
  const int64_t n = 5000;
  std::mt19937 gen(3);
  std::uniform_real_distribution<double> dist(-3, 0);
  std::vector<double> v(static_cast<size_t>(n * 2));
  for (double& x : v) x = static_cast<float>(dist(gen));
  std::vector<double> target(static_cast<size_t>(n));
  double want = 0;
  for (int64_t i = 0; i < n; ++i) {
    target[static_cast<size_t>(i)] = static_cast<double>(i % 2);
    want -= v[static_cast<size_t>(2 * i + i % 2)];
  }
  const Tensor got = std::get<0>(
      ops::nll_loss_forward(floats(v, {n, 2}), ints(target, {n}), std::nullopt, ops::Reduction::kSum, -100));
  EXPECT_THAT(got.item<double>(), DoubleNear(want, 1e-6 * std::abs(want)));
}

TEST(NllLossTest, BackwardAndErrors) {
  const Tensor logp = floats({-1, -2, -3, -4, -5, -6}, {2, 3});
  const Tensor t = ints({2, 0}, {2});
  auto [loss, total] = ops::nll_loss_forward(logp, t, std::nullopt, ops::Reduction::kMean, -100);
  const Tensor g = ops::nll_loss_backward(ops::ones({}), logp, t, std::nullopt, ops::Reduction::kMean, -100, total);
  EXPECT_THAT(values(g), ElementsAre(0, 0, -0.5, -0.5, 0, 0));
  const Tensor gn = ops::nll_loss_backward(floats({2, 3}, {2}), logp, t, floats({1, 1, 10}, {3}),
                                           ops::Reduction::kNone, -100, total);
  EXPECT_THAT(values(gn), ElementsAre(0, 0, -20, -3, 0, 0));
  auto fwd = [&](const Tensor& x, const Tensor& target) {
    ops::nll_loss_forward(x, target, std::nullopt, ops::Reduction::kMean, -100);
  };
  EXPECT_THAT([&] { fwd(logp, ints({5, 0}, {2})); }, ThrowsMessage<Error>(HasSubstr("Target 5 is out of bounds.")));
  EXPECT_THAT([&] { fwd(logp, ints({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("size mismatch (got input: [2, 3], target: [1])")));
  EXPECT_THAT([&] { fwd(logp, floats({0, 1}, {2})); },
              ThrowsMessage<Error>(HasSubstr("expected scalar type Long but found Float")));
  EXPECT_THAT([&] { fwd(ops::zeros({2, 3, 4}), t); },
              ThrowsMessage<Error>(HasSubstr("input tensor should be 1D or 2D")));
  EXPECT_THAT([&] { fwd(floats({-1, -2}, {2}), ints({0}, {1})); },
              ThrowsMessage<Error>(HasSubstr("Expected target to be 0D when input is 1D, but got target.dim =1")));
  EXPECT_THAT([&] { ops::nll_loss_forward(logp, t, floats({1, 2}, {2}), ops::Reduction::kMean, -100); },
              ThrowsMessage<Error>(HasSubstr("weight tensor should be defined either for all 3 classes or no "
                                             "classes but got weight tensor of shape: [2]")));
}

// reference_attention: softmax(scale q k^T + mask) v per (b, h), in double.
std::vector<double> reference_attention(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
                                        bool causal, double scale) {
  const int64_t B = q.size(0), H = q.size(1), L = q.size(2), S = k.size(2), E = q.size(3);
  const std::vector<double> qv = values(ops::contiguous(q)), kv = values(ops::contiguous(k)),
                            vv = values(ops::contiguous(v));
  const std::vector<double> mv = mask != nullptr ? values(ops::contiguous(ops::expand(*mask, {B, H, L, S})))
                                                 : std::vector<double>();
  std::vector<double> out(static_cast<size_t>(B * H * L * E));
  for (int64_t bh = 0; bh < B * H; ++bh) {
    for (int64_t i = 0; i < L; ++i) {
      std::vector<double> s(static_cast<size_t>(S));
      double m = -kInf;
      for (int64_t j = 0; j < S; ++j) {
        double d = 0;
        for (int64_t e = 0; e < E; ++e) d += qv[(bh * L + i) * E + e] * kv[(bh * S + j) * E + e];
        d *= scale;
        if (!mv.empty()) d += mv[(bh * L + i) * S + j];
        if (causal && j > i) d = -kInf;
        s[static_cast<size_t>(j)] = d;
        m = std::max(m, d);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - m));
      for (int64_t e = 0; e < E; ++e) {
        double acc = 0;
        for (int64_t j = 0; j < S; ++j) acc += s[static_cast<size_t>(j)] / sum * vv[(bh * S + j) * E + e];
        out[static_cast<size_t>((bh * L + i) * E + e)] = acc;
      }
    }
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(FlashAttentionTest, MatchesTheReferenceWithMasksCausalAndScale) {
  manual_seed(7);
  const Tensor q = ops::randn({2, 3, 5, 4}), k = ops::randn({2, 3, 6, 4}), v = ops::randn({2, 3, 6, 4});
  const double scale = 0.5;
  auto [out, lse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v);
  expect_near(values(out), reference_attention(q, k, v, nullptr, false, 1 / std::sqrt(4.0)), 1e-5);
  EXPECT_THAT(lse.sizes(), ElementsAre(2, 3, 5));
  EXPECT_THAT(lse.strides(), ElementsAre(15, 1, 3));  // a transpose of a (B, L, H) buffer
  const Tensor causal = std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, true));
  expect_near(values(causal), reference_attention(q, k, v, nullptr, true, 0.5), 1e-5);
  const Tensor mask = ops::randn({5, 6});
  const Tensor masked =
      std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, mask, scale));
  expect_near(values(masked), reference_attention(q, k, v, &mask, false, scale), 1e-5);
  // f64 and bf16 run too (bf16 computes in f32 and rounds once).
  const Tensor q64 = ops::to(q, DType::kFloat64), k64 = ops::to(k, DType::kFloat64), v64 = ops::to(v, DType::kFloat64);
  expect_near(values(std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(q64, k64, v64))),
              reference_attention(q, k, v, nullptr, false, 0.5), 1e-12);
  const Tensor qb = ops::to(q, DType::kBFloat16), kb = ops::to(k, DType::kBFloat16), vb = ops::to(v, DType::kBFloat16);
  expect_near(values(std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(qb, kb, vb))),
              reference_attention(qb, kb, vb, nullptr, false, 0.5), 2e-2);
}

TEST(FlashAttentionTest, OutputHasQuerysLayoutAndMaskedRowsAreZero) {
  manual_seed(8);
  // q viewed from (B, L, H, E), as a GPT block makes it: the output keeps that layout.
  const Tensor q = ops::transpose(ops::randn({1, 4, 2, 8}), 1, 2);
  const Tensor k = ops::randn({1, 2, 4, 8}), v = ops::randn({1, 2, 4, 8});
  auto [out, lse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v);
  EXPECT_THAT(out.strides(), ElementsAreArray(q.strides()));
  expect_near(values(out), reference_attention(q, k, v, nullptr, false, 1 / std::sqrt(8.0)), 1e-5);
  // A row that attends to nothing gives zeros and logsumexp 0 (no NaN).
  const Tensor mask = ops::tensor({-kInf, -kInf, -kInf, -kInf, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, {4, 4});
  auto [mo, ml] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, mask);
  const std::vector<double> row = values(ops::select(ops::select(mo, 1, 0), 1, 0));
  EXPECT_THAT(row, ::testing::Each(0.0));
  EXPECT_EQ(values(ml)[0], 0.0);
}

TEST(FlashAttentionTest, CausalBlocksAndStridedOperandsMatchTheReference) {
  // Sequences past one causal block of query rows (See Note [CPU attention]),
  // with more, fewer and as many keys as queries, and operands read in place
  // (rows contiguous: transposes of (B, T, H, E)) or copied (strided rows).
  manual_seed(9);
  for (const auto& [L, S] : {std::pair<int64_t, int64_t>{70, 70}, {70, 40}, {40, 70}, {33, 1}}) {
    SCOPED_TRACE(testing::Message() << "L=" << L << " S=" << S);
    const Tensor q = ops::transpose(ops::randn({2, L, 3, 8}), 1, 2);
    const Tensor k = ops::transpose(ops::randn({2, S, 3, 8}), 1, 2);
    const Tensor v = ops::transpose(ops::randn({2, S, 3, 8}), 1, 2);
    for (const bool causal : {false, true}) {
      const Tensor out = std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, causal));
      expect_near(values(out), reference_attention(q, k, v, nullptr, causal, 1 / std::sqrt(8.0)), 1e-5);
      // In place or copied, the same bits.
      const Tensor copied = std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(
          ops::contiguous(q), ops::contiguous(k), ops::contiguous(v), 0.0, causal));
      EXPECT_TRUE(ops::equal(out, copied));
    }
    // A mask with the causal triangle, and operands whose last dim is strided (copied).
    const Tensor mask = ops::randn({L, S});
    const Tensor qs = ops::slice(ops::randn({2, 3, L, 16}), 3, 0, 16, 2);
    const Tensor masked = std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(qs, k, v, 0.0, true, mask, 0.3));
    expect_near(values(masked), reference_attention(qs, k, v, &mask, true, 0.3), 1e-5);
  }
}

TEST(FlashAttentionTest, OneRowOperandsWithAnyStrideInTheirSizeOneDim) {
  // A size-1 dim may have any stride (an expand's, a view's): with one query
  // row or one key, the rows' stride is the gemm's leading dimension, which
  // BLAS refuses below the row length (it printed "On entry to DGEMM" and
  // left the output unwritten). The crossref test's samples found it.
  manual_seed(10);
  const Tensor base = ops::randn({2, 2, 1, 4}, {.dtype = DType::kFloat64});
  const Tensor q1 = ops::as_strided(base, {2, 2, 1, 4}, {8, 4, 1, 1});  // stride 1 in the size-1 dim
  const Tensor k = ops::randn({2, 2, 3, 4}, {.dtype = DType::kFloat64});
  const Tensor v1 = ops::as_strided(ops::randn({2, 2, 1, 4}, {.dtype = DType::kFloat64}), {2, 2, 1, 4}, {8, 4, 2, 1});
  const Tensor k1 = ops::as_strided(base, {2, 2, 1, 4}, {8, 4, 0, 1});
  for (const auto& [q, kk, v] : {std::tuple<Tensor, Tensor, Tensor>{q1, k, ops::randn({2, 2, 3, 4}, {.dtype = DType::kFloat64})},
                                 {ops::randn({2, 2, 3, 4}, {.dtype = DType::kFloat64}), k1, v1}}) {
    auto [out, lse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, kk, v);
    auto [want, want_lse] = ops::_scaled_dot_product_flash_attention_for_cpu(ops::contiguous(ops::clone(q)),
                                                                             ops::clone(kk), ops::clone(v));
    EXPECT_TRUE(ops::equal(out, want));
    expect_near(values(out), reference_attention(q, kk, v, nullptr, false, 0.5), 1e-12);
    const Tensor g = ops::randn(out.sizes(), {.dtype = DType::kFloat64});
    auto [dq, dk, dv] = ops::_scaled_dot_product_flash_attention_for_cpu_backward(g, q, kk, v, out, lse, 0.0, false);
    auto [wq, wk, wv] = ops::_scaled_dot_product_flash_attention_for_cpu_backward(
        g, ops::clone(q), ops::clone(kk), ops::clone(v), want, want_lse, 0.0, false);
    EXPECT_TRUE(ops::equal(dq, wq) && ops::equal(dk, wk) && ops::equal(dv, wv));
  }
}

TEST(FlashAttentionTest, ARowOfNaNScoresIsNaNNotEmpty) {
  // The row max skipped NaN (std::max), so a row whose scores are all NaN
  // read as a row that attends to nothing: zeros and logsumexp 0. PyTorch's
  // vectorized max propagates NaN: the row's output and logsumexp are NaN,
  // in any layout. The CUDA crossref test's CPU self-check found it.
  const Tensor q = ops::tensor({1, 2, -3, std::nan("")}, {2, 1, 1, 2});
  const Tensor k = ops::tensor({0.75, 0.5, -1, 1.5, 0, 1, -2, -0.5}, {2, 1, 2, 2});
  const Tensor v = ops::tensor({1, 2, 3, 4, 5, 6, 7, 8}, {2, 1, 2, 2});
  for (const Tensor& kk : {k, ops::contiguous(ops::transpose(ops::contiguous(ops::transpose(k, 2, 3)), 2, 3))}) {
    auto [out, lse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, kk, v);
    const std::vector<double> o = values(out), l = values(lse);
    EXPECT_FALSE(std::isnan(o[0]) || std::isnan(o[1]) || std::isnan(l[0]));  // batch 0 has no NaN
    EXPECT_TRUE(std::isnan(o[2]) && std::isnan(o[3]) && std::isnan(l[1]));
  }
}

TEST(FlashAttentionTest, AHeadDimOfZeroStillHasALogsumexpPerRow) {
  // The output is empty but the logsumexp is not: it was left uninitialised
  // (the layout crossref test saw two runs disagree). Every score is the
  // empty dot product, so each row's logsumexp is log(S) (log 3 here), or
  // log(i + 1) under the causal mask.
  const Tensor q = ops::zeros({1, 1, 2, 0}), k = ops::zeros({1, 1, 3, 0});
  auto [out, lse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, k);
  EXPECT_EQ(out.numel(), 0);
  EXPECT_THAT(values(lse), ElementsAre(DoubleNear(std::log(3.0), 1e-6), DoubleNear(std::log(3.0), 1e-6)));
  auto [cout, clse] = ops::_scaled_dot_product_flash_attention_for_cpu(q, k, k, 0.0, true);
  EXPECT_THAT(values(clse), ElementsAre(DoubleNear(0, 1e-6), DoubleNear(std::log(2.0), 1e-6)));
}

TEST(FlashAttentionTest, Errors) {
  const Tensor q = ops::zeros({1, 2, 3, 4});
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(ops::zeros({2, 3, 4}), q, q); },
              ThrowsMessage<Error>(HasSubstr("Accept only 4 dims inputs shape of {B, H, T, K}")));
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(q, q, q, 0.1); },
              ThrowsMessage<Error>(HasSubstr("Currently do not support dropout > 0")));
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(q, q, ops::zeros({1, 2, 3, 5})); },
              ThrowsMessage<Error>(HasSubstr("Q/K/V should have the same head size")));
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(q, q, q, 0.0, false, ops::zeros({3, 3, 3})); },
              ThrowsMessage<Error>(HasSubstr("Attention mask dim in {2, 4}")));
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(q, ops::zeros({1, 2, 3, 4}, {.dtype = DType::kFloat64}), q); },
              ThrowsMessage<Error>(HasSubstr("Expected query, key, and value to have the same dtype")));
}

TEST(SafeSoftmaxTest, RowsOfMinusInfinityGiveZeros) {
  const Tensor x = ops::tensor({-kInf, -kInf, 0, 0}, {2, 2});
  EXPECT_THAT(values(ops::_safe_softmax(x, -1)), ElementsAre(0, 0, 0.5, 0.5));
  EXPECT_THAT(values(ops::_safe_softmax(x, 0)), ElementsAre(0, 0, 1, 1));
  EXPECT_EQ(ops::_safe_softmax(x, 1, DType::kFloat64).dtype(), DType::kFloat64);
}

TEST(BitwiseNotTest, IntegersAndBool) {
  EXPECT_THAT(values(ops::bitwise_not(ints({0, 5, -1}, {3}))), ElementsAre(-1, -6, 0));
  const Tensor b = ops::bitwise_not(ops::tensor({1, 0}, {2}, DType::kBool));
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_THAT(values(b), ElementsAre(0, 1));
  EXPECT_THAT([&] { ops::bitwise_not(floats({1}, {1})); },
              ThrowsMessage<Error>(HasSubstr("\"bitwise_not_cpu\" not implemented for 'Float'")));
}

}  // namespace
}  // namespace opspec
