// softmax.cc: CPU kernels of _softmax and _log_softmax and of their backward ops.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "kernels/common/backward_meta.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/common/vec_math.h"
#include "kernels/cpu/cache_hints.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/fixed_lane_sum.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "kernels/cpu/row_max.h"

namespace opspec::internal {

namespace {

constexpr int64_t kColumnBlock = 64;       // neighbouring columns processed together when dim is not last

// Compute type: float for f32/f16/bf16, double for f64 (see Note [Reduced precision math]).
template <class T> using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// Note [Vectorised exp in softmax]
// glibc's expf cannot be vectorised without -ffast-math, and calling it per
// element makes softmax several times slower than PyTorch's (which uses
// Sleef's vectorised exp, not std::exp, either). f32 uses vec_math's branch-free
// Cephes expf, the one the elementwise and fused kernels share (within 1 ulp of
// glibc; See Note [Vectorizable float math]), so softmax's exp rounds like the
// exp op's. Softmax only takes exp(x - max), which is <= 0 or NaN, so it calls
// vec_math::exp_nonpositive: exp bit for bit there, without the compare and
// select of the upper clamp (a 4096-wide row's exp: 1.21 -> 1.04 us).
// f64 keeps std::exp.
template <class C>
inline C exp_c(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return vec_math::exp(x);
  } else {
    return std::exp(x);
  }
}

// exp_shifted: exp_c(x) for x = v - max (<= 0 or NaN).
template <class C>
inline C exp_shifted(C x) {
  if constexpr (std::is_same_v<C, float>) {
    return vec_math::exp_nonpositive(x);
  } else {
    return std::exp(x);
  }
}

// Note [Softmax rows in flight]
// A row's output needs its sum, known only after all its exponentials, so a
// kernel that finishes each row at its end writes the row (16 KiB at 4096 f32)
// in one burst after computing with the memory bus idle. Instead each row is
// left pending, its exponentials in one half of a two-row buffer, and the next
// row writes that output a chunk at a time between its own chunks of exp (the
// chunk loop also prefetches the row after, See Note [Prefetching ahead]), so
// reading, writing and exp overlap. Streamed f32 outputs (See Note [Streaming
// stores]) are scaled and stored in one pass by stream_scale / stream_sub_sub
// (64-byte streaming stores on AVX-512); f64 ones are finished in the buffer
// and stream_copy'd. Every element goes through the same operations as before,
// so a row has the bits it has alone, whatever the thread count. The sum adds in
// double in kRowSumLanes fixed lanes (See Note [Fixed-lane sums]): with 8 (one
// AVX-512 vector) each row waited on the latency of its adds. On the 2-core
// AVX-512 VM, BM_Softmax/4096x4096 beside BM_Copy at 2.6-2.9 ms: 3.9-4.05 ms
// finishing each row at its end (with the exp above), 3.15-3.3 ms in flight,
// 3.07-3.18 ms with row_max below; in a standalone test, 16-byte streaming
// stores (stream_copy) cost 0.2-0.4 ms of that and 8 sum lanes 0.1 us a row.
constexpr int kRowSumLanes = 16;
static_assert(kPrefetchChunk % kRowSumLanes == 0, "row chunks start on a sum lane boundary");

// PendingRow: a row whose max and sum are known and whose output is not yet
// written; buf holds its exponentials (softmax; log_softmax uses x). x is null for none.
template <class T>
struct PendingRow {
  const T* x = nullptr;
  T* y = nullptr;
  compute_t<T>* buf = nullptr;  // its half of the buffer (an f64 row is finished in it)
  compute_t<T> m{};    // the row's max
  compute_t<T> fac{};  // softmax: 1 / sum; log_softmax: log(sum)
};

// finish_chunk: elements [c, e) of p's output, streamed with stream (only
// where T is the compute type; buf is then free to hold an f64 chunk).
template <class T, bool kLog>
__attribute__((always_inline)) inline void finish_chunk(const PendingRow<T>& p, int64_t c, int64_t e, bool stream) {
  using C = compute_t<T>;
  if constexpr (std::is_same_v<T, float>) {
    if (stream) {
      // (x - max) - log(sum), in that order: x - max is exact near the maximum.
      if constexpr (kLog) {
        stream_sub_sub(p.y + c, p.x + c, p.m, p.fac, e - c);
      } else {
        stream_scale(p.y + c, p.buf + c, p.fac, e - c);
      }
      return;
    }
  } else if constexpr (std::is_same_v<T, C>) {
    if (stream) {
#pragma omp simd
      for (int64_t i = c; i < e; ++i) p.buf[i] = kLog ? (p.x[i] - p.m) - p.fac : p.buf[i] * p.fac;
      stream_copy(p.y + c, p.buf + c, (e - c) * static_cast<int64_t>(sizeof(T)));
      return;
    }
  }
#pragma omp simd
  for (int64_t i = c; i < e; ++i) {
    p.y[i] = kLog ? T((static_cast<C>(p.x[i]) - p.m) - p.fac) : T(p.buf[i] * p.fac);
  }
}

// softmax_row_body: row x of n elements: its max, then exp(x - max) into buf
// and their sum, while finishing prev's output chunk by chunk and prefetching
// next (null for none). Numerically stable: every exponent is <= 0. A NaN
// anywhere makes the sum, and so the whole row, NaN (as in PyTorch), so the max
// need not propagate it. The max is exact in any order and the sum adds in
// fixed lanes, so the wide clones below round as the baseline build does.
template <class T, bool kLog>
__attribute__((always_inline)) inline PendingRow<T> softmax_row_body(const T* x, T* y, int64_t n,
                                                                     compute_t<T>* buf, const T* next,
                                                                     const PendingRow<T>& prev, bool stream) {
  using C = compute_t<T>;
  const C m = row_max<C>(x, n);
  double acc[kRowSumLanes] = {};
  for (int64_t c = 0; c < n; c += kPrefetchChunk) {
    const int64_t e = std::min(n, c + kPrefetchChunk);
    prefetch_chunk(next, c, e);
#pragma omp simd
    for (int64_t i = c; i < e; ++i) buf[i] = exp_shifted(static_cast<C>(static_cast<C>(x[i]) - m));
    fixed_lane_add(acc, c, e, [buf](int64_t i) { return static_cast<double>(buf[i]); });
    if (prev.x != nullptr) finish_chunk<T, kLog>(prev, c, e, stream);
  }
  const double s = fixed_lane_total(acc);
  return {x, y, buf, m, kLog ? static_cast<C>(std::log(s)) : static_cast<C>(1.0 / s)};
}

// softmax_rows_body: rows [begin, end) of a [rows, n] input, with bufs of 2n
// elements. See Note [Softmax rows in flight].
template <class T, bool kLog>
__attribute__((always_inline)) inline void softmax_rows_body(const T* x, T* y, int64_t n, int64_t begin,
                                                             int64_t end, compute_t<T>* bufs, bool stream) {
  PendingRow<T> pending;
  for (int64_t r = begin; r < end; ++r) {
    const T* next = r + 1 < end ? x + (r + 1) * n : nullptr;
    pending = softmax_row_body<T, kLog>(x + r * n, y + r * n, n, bufs + (r - begin) % 2 * n, next, pending, stream);
  }
  if (pending.x != nullptr) finish_chunk<T, kLog>(pending, 0, n, stream);
  if (stream) stream_fence();
}

// Note [Softmax rows run wide]
// f32 rows are bound by exp, so they run in the wide clones (See Note [Wide
// vector clones] in loops.h): vec_math's exp gives the same bits in every
// clone and the sum adds in fixed lanes, so results do not depend on the CPU.
OPSPEC_WIDE_CLONES void softmax_rows_f32(const float* x, float* y, int64_t n, int64_t begin, int64_t end,
                                         float* bufs, bool stream) {
  softmax_rows_body<float, false>(x, y, n, begin, end, bufs, stream);
}
OPSPEC_WIDE_CLONES void log_softmax_rows_f32(const float* x, float* y, int64_t n, int64_t begin, int64_t end,
                                             float* bufs, bool stream) {
  softmax_rows_body<float, true>(x, y, n, begin, end, bufs, stream);
}

// softmax_rows: softmax_rows_body, through the wide clones for f32.
template <class T, bool kLog>
void softmax_rows(const T* x, T* y, int64_t n, int64_t begin, int64_t end, compute_t<T>* bufs, bool stream) {
  if constexpr (std::is_same_v<T, float>) {
    (kLog ? log_softmax_rows_f32 : softmax_rows_f32)(x, y, n, begin, end, bufs, stream);
  } else {
    softmax_rows_body<T, kLog>(x, y, n, begin, end, bufs, stream);
  }
}

// log_softmax_at_body: for rows [begin, end) of an [outer, inner, n] view with
// strides (s0, s1, 1), out[r] = row r's log-probability at target[r], as
// softmax_rows_body writes it (the same max, log-sum-exp and subtractions);
// rows whose target is ignore_index are skipped. See Note [Cross-entropy over rows].
template <class T>
__attribute__((always_inline)) inline void log_softmax_at_body(const T* x, int64_t n, int64_t inner, int64_t s0,
                                                               int64_t s1, const int64_t* target, int64_t ignore_index,
                                                               int64_t begin, int64_t end, T* out, compute_t<T>* buf) {
  using C = compute_t<T>;
  for (int64_t r = begin; r < end; ++r) {
    if (target[r] == ignore_index) continue;
    const T* row = x + (r / inner) * s0 + (r % inner) * s1;
    const PendingRow<T> p = softmax_row_body<T, true>(row, nullptr, n, buf, nullptr, PendingRow<T>{}, false);
    out[r] = T((static_cast<C>(row[target[r]]) - p.m) - p.fac);
  }
}
OPSPEC_WIDE_CLONES void log_softmax_at_f32(const float* x, int64_t n, int64_t inner, int64_t s0, int64_t s1,
                                           const int64_t* target, int64_t ignore_index, int64_t begin, int64_t end,
                                           float* out, float* buf) {
  log_softmax_at_body<float>(x, n, inner, s0, s1, target, ignore_index, begin, end, out, buf);
}

// softmax_columns: columns [c0, c0 + width) of one [d, inner] slab (dim is not the last).
template <class T, bool kLog>
void softmax_columns(const T* x, T* y, int64_t d, int64_t inner, int64_t width) {
  using C = compute_t<T>;
  C m[kColumnBlock];
  double s[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) {
    m[j] = -std::numeric_limits<C>::infinity();
    s[j] = 0;
  }
  for (int64_t k = 0; k < d; ++k) {
    const T* row = x + k * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const C v = static_cast<C>(row[j]);
      m[j] = v > m[j] ? v : m[j];
    }
  }
  // Softmax in f32/f64 keeps exp(x - max) in the output between the passes
  // (one exp per element); f16/bf16 and log_softmax recompute from x.
  constexpr bool kStoreExp = !kLog && std::is_same_v<T, C>;
  for (int64_t k = 0; k < d; ++k) {
    const T* row = x + k * inner;
    T* out = y + k * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const C e = exp_shifted(static_cast<C>(static_cast<C>(row[j]) - m[j]));
      if constexpr (kStoreExp) out[j] = e;
      s[j] += static_cast<double>(e);
    }
  }
  C fac[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) {
    fac[j] = kLog ? static_cast<C>(std::log(s[j])) : static_cast<C>(1.0 / s[j]);
  }
  for (int64_t k = 0; k < d; ++k) {
    const T* row = x + k * inner;
    T* out = y + k * inner;
    if constexpr (kStoreExp) {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) out[j] = out[j] * fac[j];
    } else {
#pragma omp simd
      for (int64_t j = 0; j < width; ++j) {
        const C v = static_cast<C>(static_cast<C>(row[j]) - m[j]);
        out[j] = kLog ? T(v - fac[j]) : T(exp_shifted(v) * fac[j]);
      }
    }
  }
}

// softmax_contiguous: softmax over the middle dim of a contiguous [outer, len, inner] input.
template <class T, bool kLog>
void softmax_contiguous(const T* x, T* y, int64_t outer, int64_t len, int64_t inner) {
  using C = compute_t<T>;
  const bool parallel = outer * len * inner >= kParallelGrain;
  const bool stream = outer * len * inner * static_cast<int64_t>(sizeof(T)) >= kStreamMinBytes;
  if (inner == 1) {
    parallel_row_ranges(
        outer, parallel, [&] { return std::vector<C>(static_cast<size_t>(2 * len)); },
        [&](int64_t begin, int64_t end, std::vector<C>& bufs) {
          softmax_rows<T, kLog>(x, y, len, begin, end, bufs.data(), stream);
        });
    return;
  }
  const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  parallel_rows(outer * blocks, parallel, [&](int64_t task) {
    const int64_t o = task / blocks;
    const int64_t c0 = (task % blocks) * kColumnBlock;
    const int64_t base = o * len * inner + c0;
    softmax_columns<T, kLog>(x + base, y + base, len, inner, std::min(kColumnBlock, inner - c0));
  });
}

template <bool kLog>
Tensor softmax_impl(const Tensor& self, int64_t dim, bool half_to_float) {
  const std::string_view op = kLog ? "aten::_log_softmax" : "aten::_softmax";
  const int64_t d = softmax_dim(self, dim, half_to_float, /*is_cpu=*/true, op);
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  if (self.numel() == 0) return out;
  // Strided inputs are made contiguous once; the output is always contiguous.
  const Tensor in = contiguous_cpu(self);
  int64_t outer = 1, inner = 1;
  const int64_t len = self.dim() == 0 ? 1 : self.sizes()[d];
  for (int64_t i = 0; i < self.dim(); ++i) {
    if (i < d) outer *= self.sizes()[i];
    if (i > d) inner *= self.sizes()[i];
  }
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] {
    softmax_contiguous<scalar_t, kLog>(static_cast<const scalar_t*>(in.raw_data()), out.data_ptr<scalar_t>(), outer,
                                       len, inner);
  });
  return out;
}

}  // namespace

// log_softmax_at_rows: out[r] = log_softmax(rows.reshape(-1, C), 1)[r,
// target[r]] with log_softmax's bits, for rows of dims 2 or 3 (f32 or f64,
// classes last and contiguous) and targets in range or ignore_index (skipped,
// out[r] left as it is). See Note [Cross-entropy over rows].
void log_softmax_at_rows(const Tensor& rows, const int64_t* target, int64_t ignore_index, const Tensor& out) {
  const int64_t n = rows.size(-1), count = out.numel();
  const int64_t inner = rows.dim() == 3 ? rows.size(1) : 1;
  const int64_t s0 = rows.stride(0), s1 = rows.dim() == 3 ? rows.stride(1) : 0;
  const bool parallel = count * n >= kParallelGrain;
  auto run = [&]<class T>(T*) {
    const auto* x = static_cast<const T*>(rows.raw_data());
    T* y = out.data_ptr<T>();
    parallel_rows_with(
        count, parallel, [&] { return std::vector<T>(static_cast<size_t>(n)); },
        [&](int64_t r, std::vector<T>& buf) {
          if constexpr (std::is_same_v<T, float>) {
            log_softmax_at_f32(x, n, inner, s0, s1, target, ignore_index, r, r + 1, y, buf.data());
          } else {
            log_softmax_at_body<T>(x, n, inner, s0, s1, target, ignore_index, r, r + 1, y, buf.data());
          }
        });
  };
  OPSPEC_CHECK(rows.dtype() == DType::kFloat32 || rows.dtype() == DType::kFloat64,
               "log_softmax_at_rows: rows of ", rows.meta_str(), " (f32 and f64 only)");
  if (rows.dtype() == DType::kFloat32) {
    run(static_cast<float*>(nullptr));
  } else {
    run(static_cast<double*>(nullptr));
  }
}

Tensor softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<false>(self, dim, half_to_float);
}

Tensor log_softmax_cpu(const Tensor& self, int64_t dim, bool half_to_float) {
  return softmax_impl<true>(self, dim, half_to_float);
}

// _safe_softmax: softmax (after converting to dtype), with rows whose inputs
// are all -inf giving zeros instead of NaN (attention rows that attend to nothing).
Tensor safe_softmax_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::_safe_softmax";
  require_cpu_device(self.device(), kOp);
  const Tensor in = contiguous_cpu(self, dtype.value_or(self.dtype()));
  Tensor out = softmax_impl<false>(in, dim, false);
  const int64_t d = wrap_dim(dim, in.dim(), kOp);
  int64_t outer = 1, inner = 1;
  const int64_t len = in.dim() == 0 ? 1 : in.sizes()[d];
  for (int64_t i = 0; i < in.dim(); ++i) {
    if (i < d) outer *= in.sizes()[i];
    if (i > d) inner *= in.sizes()[i];
  }
  OPSPEC_DISPATCH_FLOATING_DTYPES(in.dtype(), kOp, [&] {
    const auto* x = static_cast<const scalar_t*>(in.raw_data());
    auto* y = out.data_ptr<scalar_t>();
    for (int64_t r = 0; r < outer * inner; ++r) {
      const int64_t base = (r / inner) * len * inner + r % inner;
      bool all_masked = len > 0;
      for (int64_t k = 0; all_masked && k < len; ++k) {
        const auto v = loops_detail::load(x[base + k * inner]);
        all_masked = std::isinf(v) && v < 0;
      }
      if (!all_masked) continue;
      for (int64_t k = 0; k < len; ++k) loops_detail::store(y + base + k * inner, 0.0f);
    }
  });
  return out;
}

}  // namespace opspec::internal

// ---- Backward: _softmax_backward_data and _log_softmax_backward_data ----

namespace opspec::internal {

namespace {

// softmax_backward_columns: columns [0, width) of one [len, inner] slab:
// softmax: gI = y * (g - sum(g * y)); log_softmax: gI = g - exp(y) * sum(g),
// sums along dim accumulated in double (inner == 1 is one column of a row).
template <class T, bool kLog>
void softmax_backward_columns(const T* g, const T* y, T* out, int64_t len, int64_t inner, int64_t width) {
  using C = compute_t<T>;
  double s[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) s[j] = 0;
  for (int64_t k = 0; k < len; ++k) {
    const T* gr = g + k * inner;
    const T* yr = y + k * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const C gv = static_cast<C>(gr[j]);
      s[j] += kLog ? static_cast<double>(gv) : static_cast<double>(gv * static_cast<C>(yr[j]));
    }
  }
  C sc[kColumnBlock];
  for (int64_t j = 0; j < width; ++j) sc[j] = static_cast<C>(s[j]);
  for (int64_t k = 0; k < len; ++k) {
    const T* gr = g + k * inner;
    const T* yr = y + k * inner;
    T* o = out + k * inner;
#pragma omp simd
    for (int64_t j = 0; j < width; ++j) {
      const C gv = static_cast<C>(gr[j]);
      const C yv = static_cast<C>(yr[j]);
      o[j] = kLog ? T(gv - exp_c(yv) * sc[j]) : T(yv * (gv - sc[j]));
    }
  }
}

// softmax_backward_row: one contiguous row (dim is the last).
template <class T, bool kLog>
void softmax_backward_row(const T* g, const T* y, T* out, int64_t n) {
  using C = compute_t<T>;
  double s = 0;
#pragma omp simd reduction(+ : s)
  for (int64_t i = 0; i < n; ++i) {
    const C gv = static_cast<C>(g[i]);
    s += kLog ? static_cast<double>(gv) : static_cast<double>(gv * static_cast<C>(y[i]));
  }
  const C sc = static_cast<C>(s);
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) {
    const C gv = static_cast<C>(g[i]);
    const C yv = static_cast<C>(y[i]);
    out[i] = kLog ? T(gv - exp_c(yv) * sc) : T(yv * (gv - sc));
  }
}

template <bool kLog>
Tensor softmax_backward_impl(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  const std::string_view op = kLog ? "aten::_log_softmax_backward_data" : "aten::_softmax_backward_data";
  require_cpu_device(grad.device(), op);
  const SoftmaxBackwardGeometry geo = softmax_backward_geometry(grad, output, dim, input_dtype, op);
  Tensor out = make_tensor(grad.sizes(), grad.dtype(), kCPU);
  if (grad.numel() != 0) {
    const Tensor g = contiguous_cpu(grad);
    const Tensor y = contiguous_cpu(output);
    const bool parallel = grad.numel() >= kParallelGrain;
    OPSPEC_DISPATCH_FLOATING_DTYPES(grad.dtype(), op, [&] {
      const auto* gp = static_cast<const scalar_t*>(g.raw_data());
      const auto* yp = static_cast<const scalar_t*>(y.raw_data());
      auto* op_ = out.data_ptr<scalar_t>();
      const int64_t len = geo.len, inner = geo.inner;
      if (inner == 1) {
        parallel_rows(geo.outer, parallel, [&](int64_t r) {
          softmax_backward_row<scalar_t, kLog>(gp + r * len, yp + r * len, op_ + r * len, len);
        });
        return;
      }
      const int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
      parallel_rows(geo.outer * blocks, parallel, [&](int64_t task) {
        const int64_t base = (task / blocks) * len * inner + (task % blocks) * kColumnBlock;
        softmax_backward_columns<scalar_t, kLog>(gp + base, yp + base, op_ + base, len, inner,
                                                 std::min(kColumnBlock, inner - (task % blocks) * kColumnBlock));
      });
    });
  }
  return geo.result_dtype == out.dtype() ? out : contiguous_cpu(out, geo.result_dtype);
}

}  // namespace

Tensor softmax_backward_data_cpu(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  return softmax_backward_impl<false>(grad, output, dim, input_dtype);
}

Tensor log_softmax_backward_data_cpu(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  return softmax_backward_impl<true>(grad, output, dim, input_dtype);
}

}  // namespace opspec::internal
