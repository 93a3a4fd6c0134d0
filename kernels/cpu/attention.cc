// attention.cc: CPU kernels of _scaled_dot_product_flash_attention_for_cpu
// and its backward. See Note [CPU attention].
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/common/nn_meta.h"
#include "kernels/common/vec_math.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/fixed_lane_sum.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "kernels/cpu/row_max.h"

namespace opspec::internal {

namespace {

// Note [CPU attention]
// Each (batch, head) is one task on the OpenMP threads: scores = scale * Q K^T
// by one gemm, plus the mask (and -inf above the diagonal when causal, the
// top-left aligned triangle of PyTorch's tril), a softmax per row that also
// yields the row's logsumexp, and out = P V by a second gemm written straight
// into the output, which has query's layout. q, k and v are read in place
// when their rows are contiguous (the (B, T, H, E) buffers of the linears
// before them, seen as (B, H, T, E)), as PyTorch's kernel reads them through
// strides. A causal forward takes query rows in blocks of kCausalBlock, each
// against the keys up to its last row, so the work above the diagonal (half
// of it) is skipped, as PyTorch's kernel skips those blocks; the skipped
// probabilities are zeros, so the sums are unchanged. f16 and bf16
// compute in f32 and round once. The backward recomputes P from the saved
// logsumexp (P = exp(S - lse)), as flash attention does, instead of keeping
// the L x S probabilities: dV = P^T dO, dP = dO V^T, dS = P (dP - rowsum(dO O)),
// dQ = scale dS K, dK = scale dS^T Q. A row that attends to nothing (all
// -inf) gives zeros and logsumexp 0, as PyTorch's kernel does.

constexpr int64_t kParallelWork = 1 << 15;  // multiply-adds below which heads stay serial
constexpr int64_t kCausalBlock = 32;        // query rows per block of a causal forward

// MaskView: attn_mask in the compute type, broadcast to (B, H, L, S) by zero strides.
template <class C>
struct MaskView {
  Tensor holder;
  const C* data = nullptr;
  int64_t stride[4] = {0, 0, 0, 0};

  MaskView(const std::optional<Tensor>& mask, DType compute) {
    if (!mask) return;
    holder = contiguous_cpu(*mask, compute);
    data = static_cast<const C*>(holder.raw_data());
    const int64_t nd = holder.dim();
    int64_t s = 1;
    for (int64_t i = nd - 1; i >= 0; --i) {
      const int64_t size = holder.size(i);
      stride[4 - nd + i] = size == 1 ? 0 : s;
      s *= size;
    }
  }
  const C* row(int64_t b, int64_t h, int64_t l) const {
    return data + b * stride[0] + h * stride[1] + l * stride[2];
  }
};

// Operands: q, k, v (and dO, O) as contiguous (B, H, *, E) tensors of the compute type.
template <class C>
const C* ptr(const Tensor& t) {
  return static_cast<const C*>(t.raw_data());
}

// HeadOperand: a (B, H, N, E) operand read in place where its rows are
// contiguous (the transposed view of a linear's output, as attention's
// callers make them), else a contiguous copy in the compute type.
template <class C>
struct HeadOperand {
  Tensor holder;
  const C* data;
  int64_t batch_stride, head_stride, ld;

  explicit HeadOperand(const Tensor& t) {
    const bool in_place = t.dtype() == dtype_of<C>() && t.stride(3) == 1 && t.stride(2) >= t.size(3);
    holder = in_place ? t : contiguous_cpu(t, dtype_of<C>());
    data = static_cast<const C*>(holder.raw_data());
    batch_stride = holder.stride(0);
    head_stride = holder.stride(1);
    ld = std::max<int64_t>(holder.stride(2), 1);
  }
  const C* head(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }
};

// scores: rows [i0, i1) of S, columns [0, cols): scale * Q K^T + mask, -inf
// above the diagonal when causal; q and k point at the head's first rows.
template <class C>
void scores(const SdpaGeometry& g, const C* q, int64_t ldq, const C* k, int64_t ldk, const MaskView<C>& mask,
            bool is_causal, int64_t b, int64_t h, int64_t i0, int64_t i1, int64_t cols, C* s) {
  const int64_t E = g.head_dim;
  gemm<C>(false, true, i1 - i0, cols, E, static_cast<C>(g.scale), q + i0 * ldq, ldq, k, ldk, C(0), s, cols);
  for (int64_t i = i0; i < i1; ++i) {
    C* row = s + (i - i0) * cols;
    if (mask.data != nullptr) {
      const C* mr = mask.row(b, h, i);
      for (int64_t j = 0; j < cols; ++j) row[j] += mr[j * mask.stride[3]];
    }
    if (is_causal) {
      for (int64_t j = i + 1; j < cols; ++j) row[j] = -std::numeric_limits<C>::infinity();
    }
  }
}

// Note [Attention's softmax rows]
// A row of scores becomes probabilities as softmax's rows do (See Note
// [Vectorised exp in softmax] in softmax.cc): row_max, vec_math's exp of
// x - max, the sum in double in fixed lanes (See Note [Fixed-lane sums]) and
// one reciprocal, built in the wide clones for f32 (See Note [Wide vector
// clones]; f64 keeps std::exp), so every machine rounds a row alike. The
// scalar loops before (std::exp per element, a max waiting on each compare)
// took 17% of the Llama block's eager forward. A NaN score makes its row NaN
// (row_max skips it, but it reaches the sum); a row of -inf attends to nothing.

// attention_exp: exp in the compute type, vec_math's for f32.
template <class C>
__attribute__((always_inline)) inline C attention_exp(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return vec_math::exp(x);
  } else {
    return std::exp(x);
  }
}

// softmax_scores_body: row[0, n) replaced by its softmax; returns the row's
// logsumexp, or false (row untouched) when every score is -inf.
template <class C>
__attribute__((always_inline)) inline bool softmax_scores_body(C* row, int64_t n, C* lse) {
  C m = row_max<C>(row, n);
  if (m == -std::numeric_limits<C>::infinity()) {
    if (std::none_of(row, row + n, [](C v) { return std::isnan(v); })) return false;
    m = std::numeric_limits<C>::quiet_NaN();  // NaNs among -infs: a NaN row, not an empty one
  }
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) row[j] = attention_exp<C>(row[j] - m);
  const double sum = fixed_lane_sum<double>(n, [row](int64_t j) { return static_cast<double>(row[j]); });
  const C inv = static_cast<C>(1.0 / sum);
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) row[j] *= inv;
  *lse = m + static_cast<C>(std::log(sum));
  return true;
}

OPSPEC_WIDE_CLONES bool softmax_scores_f32(float* row, int64_t n, float* lse) {
  return softmax_scores_body<float>(row, n, lse);
}

// softmax_scores: See softmax_scores_body; the wide clones for f32.
template <class C>
bool softmax_scores(C* row, int64_t n, C* lse) {
  if constexpr (std::is_same_v<C, float>) {
    return softmax_scores_f32(row, n, lse);
  } else {
    return softmax_scores_body<C>(row, n, lse);
  }
}

// exp_minus_body: p[0, n) := exp(p - shift), the backward's probabilities from the saved logsumexp.
template <class C>
__attribute__((always_inline)) inline void exp_minus_body(C* p, int64_t n, C shift) {
#pragma omp simd
  for (int64_t j = 0; j < n; ++j) p[j] = attention_exp<C>(p[j] - shift);
}

OPSPEC_WIDE_CLONES void exp_minus_f32(float* p, int64_t n, float shift) { exp_minus_body<float>(p, n, shift); }

template <class C>
void exp_minus(C* p, int64_t n, C shift) {
  if constexpr (std::is_same_v<C, float>) {
    exp_minus_f32(p, n, shift);
  } else {
    exp_minus_body<C>(p, n, shift);
  }
}

template <class T>
void flash_forward(const SdpaGeometry& g, const Tensor& query, const Tensor& key, const Tensor& value,
                   const std::optional<Tensor>& attn_mask, bool is_causal, Tensor& out, Tensor& lse) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr DType kC = dtype_of<C>();
  const HeadOperand<C> q(query), k(key), v(value);
  const MaskView<C> mask(attn_mask, kC);
  const int64_t B = g.batch, H = g.heads, L = g.q_len, S = g.kv_len, Ev = g.v_head_dim;
  // Reduced floats are computed into an f32 buffer of out's layout and rounded once.
  Tensor out_c = std::is_same_v<T, C> ? out : make_strided(out.sizes(), out.strides(), kC, kCPU);
  C* o = static_cast<C*>(out_c.raw_data());
  const int64_t sb = out.stride(0), sh = out.stride(1), sl = out.stride(2);
  auto* lp = static_cast<C*>(lse.raw_data());
  const bool parallel = B * H * L * S * (g.head_dim + Ev) >= kParallelWork;
  // Causal rows go in blocks, each against the keys up to its last row
  // (PyTorch's kernel skips the blocks above the diagonal too).
  const int64_t block = is_causal ? kCausalBlock : std::max<int64_t>(L, 1);
  parallel_rows_with(
      B * H, parallel, [&] { return std::vector<C>(static_cast<size_t>(std::min(block, L) * S)); },
      [&](int64_t bh, std::vector<C>& s) {
        const int64_t b = bh / H, h = bh % H;
        for (int64_t i0 = 0; i0 < L; i0 += block) {
          const int64_t i1 = std::min(i0 + block, L), cols = is_causal ? std::min(i1, S) : S;
          if (cols == 0) {  // causal rows past no key at all: nothing to attend to
            for (int64_t i = i0; i < i1; ++i) {
              std::fill(o + b * sb + h * sh + i * sl, o + b * sb + h * sh + i * sl + Ev, C(0));
              lp[(b * L + i) * H + h] = 0;
            }
            continue;
          }
          scores<C>(g, q.head(b, h), q.ld, k.head(b, h), k.ld, mask, is_causal, b, h, i0, i1, cols, s.data());
          for (int64_t i = i0; i < i1; ++i) {  // See Note [Attention's softmax rows]
            C* row = s.data() + (i - i0) * cols;
            if (!softmax_scores<C>(row, cols, &lp[(b * L + i) * H + h])) {
              // A row that attends to nothing: PyTorch's kernel takes max 0 and sum 1 (out 0, lse 0).
              std::fill(row, row + cols, C(0));
              lp[(b * L + i) * H + h] = 0;
            }
          }
          gemm<C>(false, false, i1 - i0, Ev, cols, C(1), s.data(), cols, v.head(b, h), v.ld, C(0),
                  o + b * sb + h * sh + i0 * sl, sl);
        }
      });
  if (!std::is_same_v<T, C>) copy_into(out, out_c);
}

template <class T>
void flash_backward(const SdpaGeometry& g, const Tensor& grad_out, const Tensor& query, const Tensor& key,
                    const Tensor& value, const Tensor& out, const Tensor& logsumexp,
                    const std::optional<Tensor>& attn_mask, bool is_causal, Tensor& dq, Tensor& dk, Tensor& dv) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr DType kC = dtype_of<C>();
  const Tensor q = contiguous_cpu(query, kC), k = contiguous_cpu(key, kC), v = contiguous_cpu(value, kC);
  const Tensor dout = contiguous_cpu(grad_out, kC), o = contiguous_cpu(out, kC);
  const Tensor lse = contiguous_cpu(logsumexp, kC);
  const MaskView<C> mask(attn_mask, kC);
  const int64_t B = g.batch, H = g.heads, L = g.q_len, S = g.kv_len, E = g.head_dim, Ev = g.v_head_dim;
  const Tensor dq_c = make_tensor(dq.sizes(), kC, kCPU), dk_c = make_tensor(dk.sizes(), kC, kCPU);
  const Tensor dv_c = make_tensor(dv.sizes(), kC, kCPU);
  const bool parallel = B * H * L * S * (E + Ev) >= kParallelWork;
  struct Scratch {
    std::vector<C> p, dp;
  };
  parallel_rows_with(
      B * H, parallel,
      [&] { return Scratch{std::vector<C>(static_cast<size_t>(L * S)), std::vector<C>(static_cast<size_t>(L * S))}; },
      [&](int64_t bh, Scratch& sc) {
        const int64_t b = bh / H, h = bh % H;
        const C* qh = ptr<C>(q) + bh * L * E;
        const C* kh = ptr<C>(k) + bh * S * E;
        const C* vh = ptr<C>(v) + bh * S * Ev;
        const C* doh = ptr<C>(dout) + bh * L * Ev;
        const C* oh = ptr<C>(o) + bh * L * Ev;
        const C* lh = ptr<C>(lse) + bh * L;
        C* p = sc.p.data();
        C* dp = sc.dp.data();
        scores<C>(g, qh, E, kh, E, mask, is_causal, b, h, 0, L, S, p);
        for (int64_t i = 0; i < L; ++i) exp_minus<C>(p + i * S, S, lh[i]);
        // dV = P^T dO; dP = dO V^T.
        gemm<C>(true, false, S, Ev, L, C(1), p, S, doh, Ev, C(0), static_cast<C*>(dv_c.raw_data()) + bh * S * Ev, Ev);
        gemm<C>(false, true, L, S, Ev, C(1), doh, Ev, vh, Ev, C(0), dp, S);
        for (int64_t i = 0; i < L; ++i) {
          C d = 0;
          for (int64_t c = 0; c < Ev; ++c) d += doh[i * Ev + c] * oh[i * Ev + c];
          for (int64_t j = 0; j < S; ++j) dp[i * S + j] = p[i * S + j] * (dp[i * S + j] - d);
        }
        const auto scale = static_cast<C>(g.scale);
        gemm<C>(false, false, L, E, S, scale, dp, S, kh, E, C(0), static_cast<C*>(dq_c.raw_data()) + bh * L * E, E);
        gemm<C>(true, false, S, E, L, scale, dp, S, qh, E, C(0), static_cast<C*>(dk_c.raw_data()) + bh * S * E, E);
      });
  copy_into(dq, dq_c);
  copy_into(dk, dk_c);
  copy_into(dv, dv_c);
}

}  // namespace

std::tuple<Tensor, Tensor> sdpa_flash_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                                          double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
                                          std::optional<double> scale) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_flash_attention_for_cpu";
  require_cpu_device(query.device(), kOp);
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p, kOp);
  // Plain variables, not a structured binding: clang 14 cannot capture one in the lambda below.
  Tensor out, lse;
  std::tie(out, lse) = sdpa_outputs(g, query, kCPU);
  // A head dim of 0 leaves no output but a logsumexp per row (left uninitialised before).
  if (out.numel() == 0 && lse.numel() == 0) return {out, lse};
  OPSPEC_DISPATCH_FLOATING_DTYPES(query.dtype(), kOp, [&] {
    flash_forward<scalar_t>(g, query, key, value, attn_mask, is_causal, out, lse);
  });
  return {out, lse};
}

std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cpu_backward(const Tensor& grad_out, const Tensor& query,
                                                           const Tensor& key, const Tensor& value, const Tensor& out,
                                                           const Tensor& logsumexp, double dropout_p, bool is_causal,
                                                           const std::optional<Tensor>& attn_mask,
                                                           std::optional<double> scale) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_flash_attention_for_cpu_backward";
  require_cpu_device(query.device(), kOp);
  sdpa_flash_cpu_backward_meta(grad_out, query, key, value, out, logsumexp, dropout_p, is_causal, attn_mask, scale);
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p, kOp);
  // (B, H, N, E) views of (B, N, H, E) buffers, as PyTorch's kernel returns them.
  Tensor dq = make_strided(query.sizes(), heads_last_strides(query.sizes()), query.dtype(), kCPU);
  Tensor dk = make_strided(key.sizes(), heads_last_strides(key.sizes()), key.dtype(), kCPU);
  Tensor dv = make_strided(value.sizes(), heads_last_strides(value.sizes()), value.dtype(), kCPU);
  if (query.numel() == 0 || key.numel() == 0) {
    // Nothing attends: every gradient is zero.
    for (const Tensor* t : {&dq, &dk, &dv}) zero_bytes(*t);
    return {dq, dk, dv};
  }
  OPSPEC_DISPATCH_FLOATING_DTYPES(query.dtype(), kOp, [&] {
    flash_backward<scalar_t>(g, grad_out, query, key, value, out, logsumexp, attn_mask, is_causal, dq, dk, dv);
  });
  return {dq, dk, dv};
}

}  // namespace opspec::internal
