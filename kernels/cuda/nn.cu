// nn.cu: the kernels of the model ops (nn_launch.h): index checks, row
// gathers (index_select, embedding), embedding_dense_backward, tril/triu,
// argmax/argmin, nll_loss and its backward, and the CPU-style flash attention
// and its backward, in the arithmetic of kernels/cpu/indexing.cc, loss.cc and
// attention.cc (compute types of kernels/common/opmath.h).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/nn_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {
namespace {

// kBlock: threads per block of the grid-stride kernels here.
constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// with_index_type: f.template operator()<I>() for the index type of code (i64 or i32).
template <class F>
void with_index_type(Code code, const char* what, F&& f) {
  if (code == kI64) return f.template operator()<int64_t>();
  if (code == kI32) return f.template operator()<int32_t>();
  fail_launch(what);
}

// with_element_bytes: f.template operator()<E>() for an unsigned type of elem_size bytes.
template <class F>
void with_element_bytes(int elem_size, const char* what, F&& f) {
  switch (elem_size) {
    case 1: return f.template operator()<uint8_t>();
    case 2: return f.template operator()<uint16_t>();
    case 4: return f.template operator()<uint32_t>();
    case 8: return f.template operator()<uint64_t>();
    default: fail_launch(what);
  }
}

// ---- Indices, gathers, triangles ----

template <class I>
__global__ void check_indices_kernel(const I* idx, int64_t count, int64_t n, bool has_ignore, int64_t ignore,
                                     int* bad) {
  for (int64_t i = first_index(); i < count; i += grid_stride()) {
    const auto v = static_cast<int64_t>(idx[i]);
    if (has_ignore && v == ignore) continue;
    if (v < 0 || v >= n) atomicExch(bad, 1);
  }
}

template <class E, class I>
__global__ void gather_rows_kernel(const E* src, const I* idx, E* out, int64_t total, int64_t n, int64_t k,
                                   int64_t inner) {
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t c = i % inner, r = i / inner;
    const int64_t o = r / k, j = r % k;
    out[i] = src[(o * n + static_cast<int64_t>(idx[j])) * inner + c];
  }
}

// triangle_kernel: the kept columns of row i are one run [lo, hi), computed as kernels/cpu/indexing.cc does.
template <class E>
__global__ void triangle_kernel(const E* src, E* out, int64_t total, int64_t rows, int64_t cols, int64_t diagonal,
                                bool lower) {
  for (int64_t x = first_index(); x < total; x += grid_stride()) {
    const int64_t j = x % cols, i = (x / cols) % rows;
    int64_t lo = 0, hi = cols;
    if (lower) {
      const int64_t end = i + diagonal + 1;
      hi = cols < end ? cols : (end > 0 ? end : 0);
    } else {
      const int64_t start = i + diagonal;
      lo = cols < start ? cols : (start > 0 ? start : 0);
    }
    out[x] = j >= lo && j < hi ? src[x] : E(0);
  }
}

// ---- argmax / argmin ----

// arg_better: whether v beats the best so far b: NaN beats everything and the
// first NaN stays (kernels/cpu/indexing.cc's arg_better).
template <bool kMax, class C>
__device__ __forceinline__ bool arg_better(C v, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (b != b) return false;
    if (v != v) return true;
  }
  return kMax ? v > b : v < b;
}

// arg_reduce_rows_kernel: one thread per output, the CPU's loop.
template <bool kMax, class T>
__global__ void arg_reduce_rows_kernel(const T* src, int64_t* out, int64_t rows, int64_t n, int64_t inner) {
  using C = opmath_t<T>;
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = src + (r / inner) * n * inner + r % inner;
    int64_t best = 0;
    C bv = static_cast<C>(p[0]);
    for (int64_t k = 1; k < n; ++k) {
      const C v = static_cast<C>(p[k * inner]);
      if (arg_better<kMax>(v, bv)) bv = v, best = k;
    }
    out[r] = best;
  }
}

// arg_reduce_block_kernel: one block per output: each thread keeps the best of
// its elements (the earliest on ties), then a fixed tree keeps the better
// pair, or the smaller index of two that tie: the CPU's answer.
template <bool kMax, class T>
__global__ void __launch_bounds__(kRowThreads) arg_reduce_block_kernel(const T* src, int64_t* out, int64_t rows,
                                                                       int64_t n, int64_t inner) {
  using C = opmath_t<T>;
  __shared__ C values[kRowThreads];
  __shared__ int64_t indices[kRowThreads];
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = src + (r / inner) * n * inner + r % inner;
    int64_t best = -1;  // none yet
    C bv = C(0);
    for (int64_t k = threadIdx.x; k < n; k += blockDim.x) {
      const C v = static_cast<C>(p[k * inner]);
      if (best < 0 || arg_better<kMax>(v, bv)) bv = v, best = k;
    }
    values[threadIdx.x] = bv;
    indices[threadIdx.x] = best;
    __syncthreads();
    for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) {
        const int64_t i = indices[threadIdx.x], j = indices[threadIdx.x + half];
        const C u = values[threadIdx.x], w = values[threadIdx.x + half];
        if (j >= 0 && (i < 0 || arg_better<kMax>(w, u) || (!arg_better<kMax>(u, w) && j < i))) {
          values[threadIdx.x] = w;
          indices[threadIdx.x] = j;
        }
      }
      __syncthreads();
    }
    if (threadIdx.x == 0) out[r] = indices[0];
    __syncthreads();
  }
}

template <bool kMax, class T>
void arg_reduce(const void* src, int64_t* out, int64_t outer, int64_t n, int64_t inner) {
  const int64_t rows = outer * inner;
  const auto* s = static_cast<const T*>(src);
  // Short rows, or many rows whose neighbours are neighbours in memory: a thread each.
  if (n <= 64 || (inner > 1 && rows >= 4096)) {
    arg_reduce_rows_kernel<kMax, T><<<blocks_for(rows), kBlock>>>(s, out, rows, n, inner);
  } else {
    const unsigned grid = static_cast<unsigned>(rows < 65536 ? rows : 65536);
    arg_reduce_block_kernel<kMax, T><<<grid, row_threads(n)>>>(s, out, rows, n, inner);
  }
  check_launch(kMax ? "argmax" : "argmin");
}

// ---- embedding_dense_backward ----

template <class T>
__global__ void embedding_backward_kernel(const T* grad, const int64_t* offsets, const int64_t* rows, T* out,
                                          int64_t total, int64_t width, bool scale_by_freq) {
  using C = opmath_t<T>;
  for (int64_t x = first_index(); x < total; x += grid_stride()) {
    const int64_t k = x / width, c = x % width;
    const int64_t begin = offsets[k], end = offsets[k + 1];
    const C scale = scale_by_freq && end > begin ? C(1) / static_cast<C>(end - begin) : C(1);
    C acc = C(0);
    for (int64_t p = begin; p < end; ++p) acc += static_cast<C>(grad[rows[p] * width + c]) * scale;
    out[x] = static_cast<T>(acc);
  }
}

// ---- _safe_softmax ----

// bitwise_not_kernel: one thread per element; b8 flips its one bit.
template <class T>
__global__ void bitwise_not_kernel(const T* src, T* out, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    if constexpr (sizeof(T) == 1) out[i] = static_cast<T>(src[i] == 0);
    else out[i] = static_cast<T>(~src[i]);
  }
}

// zero_masked_rows_kernel: one thread per row of x; a row of only -inf zeroes y's.
template <class T>
__global__ void zero_masked_rows_kernel(const T* x, T* y, int64_t rows, int64_t len, int64_t inner) {
  using C = opmath_t<T>;
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const int64_t base = (r / inner) * len * inner + r % inner;
    bool all_masked = true;
    for (int64_t k = 0; all_masked && k < len; ++k) all_masked = static_cast<C>(x[base + k * inner]) == -C(INFINITY);
    if (!all_masked) continue;
    for (int64_t k = 0; k < len; ++k) y[base + k * inner] = static_cast<T>(C(0));
  }
}

// ---- nll_loss ----

// nll_at: item i's log-probability of class c in x [batch, n_classes, map].
__device__ inline int64_t nll_at(const NllLossArgs& a, int64_t i, int64_t c) {
  return ((i / a.map) * a.n_classes + c) * a.map + i % a.map;
}

// nll_loss_none_kernel: one loss per item (reduction none with a batch dim).
template <class T>
__global__ void nll_loss_none_kernel(const NllLossArgs a) {
  using C = opmath_t<T>;
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const T*>(a.weight);
  auto* out = static_cast<T*>(a.out);
  for (int64_t i = first_index(); i < a.batch * a.map; i += grid_stride()) {
    const int64_t c = a.target[i];
    if (c == a.ignore_index) {
      out[i] = static_cast<T>(C(0));
      continue;
    }
    const C wv = w != nullptr ? static_cast<C>(w[c]) : C(1);
    out[i] = static_cast<T>(-static_cast<C>(x[nll_at(a, i, c)]) * wv);
  }
  if (first_index() == 0) *static_cast<T*>(a.total) = static_cast<T>(C(0));
}

// rounded: v rounded to T: one T operation's result (f16 and bf16 round).
template <class T>
__device__ inline opmath_t<T> rounded(opmath_t<T> v) {
  return static_cast<opmath_t<T>>(static_cast<T>(v));
}

// nll_loss_reduce_kernel: a single thread, so the sum keeps the CPU's cascade
// order, subtractions and roundings, and its bits (See Note [Cascade sum of
// nll_loss] in kernels/cpu/loss.cc).
template <class T>
__global__ void nll_loss_reduce_kernel(const NllLossArgs a) {
  using C = opmath_t<T>;
  constexpr int kLevels = 8;
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const T*>(a.weight);
  const int64_t level_mask = (int64_t{1} << a.level_power) - 1, items = a.batch * a.map;
  C loss[kLevels] = {}, wsum[kLevels] = {};
  int64_t ignored = 0;
  for (int64_t i = 0; i < items; ++i) {
    const int64_t c = a.target[i];
    if (c == a.ignore_index) {
      ++ignored;
      continue;
    }
    const C v = static_cast<C>(x[nll_at(a, i, c)]);
    if (w != nullptr) {
      const C wv = static_cast<C>(w[c]);
      loss[0] = rounded<T>(loss[0] - rounded<T>(v * wv));
      wsum[0] = rounded<T>(wsum[0] + wv);
    } else {
      loss[0] = rounded<T>(loss[0] - v);
    }
    for (int j = 0; j + 1 < kLevels; ++j) {
      if ((i & (level_mask << (j * a.level_power))) != 0) break;
      wsum[j + 1] = rounded<T>(wsum[j + 1] + wsum[j]);
      loss[j + 1] = rounded<T>(loss[j + 1] + loss[j]);
      wsum[j] = 0;
      loss[j] = 0;
    }
  }
  C total_weight = rounded<T>(static_cast<C>(items - ignored));
  if (w != nullptr) {
    total_weight = 0;
    for (int j = 0; j < kLevels; ++j) total_weight = rounded<T>(total_weight + wsum[j]);
  }
  C value = 0;
  for (int j = 0; j < kLevels; ++j) value = rounded<T>(value + loss[j]);
  if (a.mean) value /= total_weight;
  *static_cast<T*>(a.out) = static_cast<T>(value);
  *static_cast<T*>(a.total) = static_cast<T>(total_weight);
}

template <class T>
__global__ void nll_loss_backward_kernel(const NllLossArgs a) {
  using C = opmath_t<T>;
  const auto* g = static_cast<const T*>(a.grad);
  const auto* w = static_cast<const T*>(a.weight);
  auto* out = static_cast<T*>(a.out);
  C scalar_grad = a.elementwise ? C(0) : static_cast<C>(g[0]);
  if (!a.elementwise && a.mean) scalar_grad = rounded<T>(scalar_grad / rounded<T>(static_cast<C>(*a.total_weight)));
  for (int64_t i = first_index(); i < a.batch * a.map; i += grid_stride()) {
    const int64_t c = a.target[i];
    if (c == a.ignore_index) continue;
    const C gv = -(a.elementwise ? static_cast<C>(g[i]) : scalar_grad);
    out[nll_at(a, i, c)] = static_cast<T>(w != nullptr ? static_cast<C>(w[c]) * gv : gv);
  }
}

// ---- Attention ----

// Note [CUDA attention]
// _scaled_dot_product_flash_attention_for_cpu on CUDA, in the formulas of
// Note [CPU attention] (kernels/cpu/attention.cc), not its gemms: the forward
// is one block per (batch, head, query row): the row's scores (scale * q.k,
// plus the mask, -inf above the diagonal when causal), their max, exp and sum
// (the logsumexp; a row of only -inf gives zeros and logsumexp 0, as the
// CPU's), then P V, each output column by a thread. The backward
// recomputes P = exp(S - lse) twice: one block per query row computes
// delta = rowsum(dO O), dS = P (dO V^T - delta) and dQ = scale dS K; one block
// per key row computes its column of P and dS again and dV = P^T dO,
// dK = scale dS^T Q, so every sum runs in one block in a fixed order and no
// atomics are needed. A row of scores lives in shared memory, or in a device
// scratch of one row per block when too long (sdpa_scratch_bytes). Sums run in
// a different order than the CPU's gemms: results agree to rounding.

constexpr int64_t kMaxSharedBytes = 40 * 1024;  // dynamic shared memory per block (of the 48 KiB default)
constexpr int64_t kMaxRowBlocks = 65536;        // blocks of the row kernels (they loop over the rest)
constexpr int64_t kScratchBlocks = 1024;        // blocks when rows live in the device scratch

// RowPlan: grid, dynamic shared bytes and device scratch bytes of a row kernel.
struct RowPlan {
  unsigned grid = 0;
  size_t shared = 0;
  int64_t scratch_bytes = 0;
};

RowPlan row_plan(int64_t rows, int64_t row_bytes) {
  if (row_bytes <= kMaxSharedBytes) {
    return {static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks), static_cast<size_t>(row_bytes), 0};
  }
  const int64_t grid = rows < kScratchBlocks ? rows : kScratchBlocks;
  return {static_cast<unsigned>(grid), 0, grid * row_bytes};
}

int64_t compute_bytes(Code code) { return code == kF64 ? 8 : 4; }

// row_buffer: this block's row of `per_row` values: in the scratch when given, else in dynamic shared memory.
template <class C>
__device__ C* row_buffer(void* scratch, int64_t per_row) {
  extern __shared__ __align__(16) unsigned char nn_shared[];
  return scratch != nullptr ? static_cast<C*>(scratch) + static_cast<int64_t>(blockIdx.x) * per_row
                            : reinterpret_cast<C*>(nn_shared);
}

// sdpa_score: scores[b, h, i, j] as Note [CPU attention] computes it.
template <class T>
__device__ __forceinline__ opmath_t<T> sdpa_score(const SdpaArgs& a, const T* qi, const T* kj, int64_t b, int64_t h,
                                                  int64_t i, int64_t j) {
  using C = opmath_t<T>;
  C d = 0;
  for (int64_t e = 0; e < a.head_dim; ++e) d += static_cast<C>(qi[e]) * static_cast<C>(kj[e]);
  // BLAS's gemm on the CPU: an empty dot product (head dim 0) scores 0, whatever the scale (1 / sqrt(0) = inf).
  C s = a.head_dim > 0 ? static_cast<C>(a.scale) * d : C(0);
  if (a.mask != nullptr) {
    const int64_t* ms = a.mask_strides;
    s += static_cast<const C*>(a.mask)[b * ms[0] + h * ms[1] + i * ms[2] + j * ms[3]];
  }
  if (a.causal && j > i) s = -C(INFINITY);
  return s;
}

template <class T>
__global__ void __launch_bounds__(kRowThreads) sdpa_forward_kernel(const SdpaArgs a) {
  using C = opmath_t<T>;
  const int64_t H = a.heads, L = a.q_len, S = a.kv_len, E = a.head_dim, Ev = a.v_head_dim;
  const int64_t rows = a.batch * H * L;
  const auto* q = static_cast<const T*>(a.q);
  const auto* k = static_cast<const T*>(a.k);
  const auto* v = static_cast<const T*>(a.v);
  auto* out = static_cast<T*>(a.out);
  auto* lse = static_cast<C*>(a.lse);
  C* s = row_buffer<C>(a.scratch, S);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % L, bh = r / L, h = bh % H, b = bh / H;
    const T* kh = k + bh * S * E;
    const T* vh = v + bh * S * Ev;
    C m = -C(INFINITY);
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      const C sj = sdpa_score<T>(a, q + r * E, kh + j * E, b, h, i, j);
      s[j] = sj;
      m = m < sj || sj != sj ? sj : m;  // NaN propagates, as the CPU's (an all-NaN row is NaN, not empty)
    }
    m = block_max(m);
    C* lse_at = lse + (b * L + i) * H + h;
    if (m == -C(INFINITY)) {
      // A row that attends to nothing: zeros and logsumexp 0, as the CPU's kernel.
      for (int64_t j = threadIdx.x; j < S; j += blockDim.x) s[j] = C(0);
      if (threadIdx.x == 0) *lse_at = C(0);
    } else {
      C sum = 0;
      for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
        const C e = ::exp(s[j] - m);
        s[j] = e;
        sum += e;
      }
      sum = block_sum(sum);
      const C inv = C(1) / sum;
      for (int64_t j = threadIdx.x; j < S; j += blockDim.x) s[j] *= inv;
      if (threadIdx.x == 0) *lse_at = m + ::log(sum);
    }
    __syncthreads();
    const int64_t* os = a.out_strides;
    T* orow = out + b * os[0] + h * os[1] + i * os[2];
    for (int64_t c = threadIdx.x; c < Ev; c += blockDim.x) {
      C acc = 0;
      for (int64_t j = 0; j < S; ++j) acc += s[j] * static_cast<C>(vh[j * Ev + c]);
      orow[c * os[3]] = static_cast<T>(acc);
    }
    __syncthreads();  // s is the next row's
  }
}

// sdpa_backward_query_kernel: per query row: delta, dS (in the row buffer) and dQ.
template <class T>
__global__ void __launch_bounds__(kRowThreads) sdpa_backward_query_kernel(const SdpaArgs a) {
  using C = opmath_t<T>;
  const int64_t H = a.heads, L = a.q_len, S = a.kv_len, E = a.head_dim, Ev = a.v_head_dim;
  const int64_t rows = a.batch * H * L;
  const auto* q = static_cast<const T*>(a.q);
  const auto* k = static_cast<const T*>(a.k);
  const auto* v = static_cast<const T*>(a.v);
  const auto* dout = static_cast<const C*>(a.dout);
  const auto* o = static_cast<const C*>(a.o);
  const auto* lse = static_cast<const C*>(a.lse_in);
  auto* delta = static_cast<C*>(a.delta);
  auto* dq = static_cast<T*>(a.dq);
  const auto scale = static_cast<C>(a.scale);
  C* ds = row_buffer<C>(a.scratch, S);
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t i = r % L, bh = r / L, h = bh % H, b = bh / H;
    const T* kh = k + bh * S * E;
    const T* vh = v + bh * S * Ev;
    const C* dor = dout + r * Ev;
    C d = 0;
    for (int64_t c = threadIdx.x; c < Ev; c += blockDim.x) d += dor[c] * o[r * Ev + c];
    d = block_sum(d);
    if (threadIdx.x == 0) delta[r] = d;
    const C l = lse[r];
    for (int64_t j = threadIdx.x; j < S; j += blockDim.x) {
      const C p = ::exp(sdpa_score<T>(a, q + r * E, kh + j * E, b, h, i, j) - l);
      C dp = 0;
      for (int64_t c = 0; c < Ev; ++c) dp += dor[c] * static_cast<C>(vh[j * Ev + c]);
      ds[j] = p * (dp - d);
    }
    __syncthreads();
    for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
      C acc = 0;
      for (int64_t j = 0; j < S; ++j) acc += ds[j] * static_cast<C>(kh[j * E + e]);
      dq[b * a.dq_strides[0] + h * a.dq_strides[1] + i * a.dq_strides[2] + e * a.dq_strides[3]] =
          static_cast<T>(scale * acc);
    }
    __syncthreads();
  }
}

// sdpa_backward_key_kernel: per key row: its column of P and dS (in the row
// buffer, L values each), then dV and dK.
template <class T>
__global__ void __launch_bounds__(kRowThreads) sdpa_backward_key_kernel(const SdpaArgs a) {
  using C = opmath_t<T>;
  const int64_t H = a.heads, L = a.q_len, S = a.kv_len, E = a.head_dim, Ev = a.v_head_dim;
  const int64_t rows = a.batch * H * S;
  const auto* q = static_cast<const T*>(a.q);
  const auto* k = static_cast<const T*>(a.k);
  const auto* v = static_cast<const T*>(a.v);
  const auto* dout = static_cast<const C*>(a.dout);
  const auto* lse = static_cast<const C*>(a.lse_in);
  const auto* delta = static_cast<const C*>(a.delta);
  auto* dk = static_cast<T*>(a.dk);
  auto* dv = static_cast<T*>(a.dv);
  const auto scale = static_cast<C>(a.scale);
  C* p = row_buffer<C>(a.scratch, 2 * L);
  C* ds = p + L;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const int64_t j = r % S, bh = r / S, h = bh % H, b = bh / H;
    const T* vj = v + r * Ev;
    for (int64_t i = threadIdx.x; i < L; i += blockDim.x) {
      const int64_t qr = bh * L + i;
      const C pi = ::exp(sdpa_score<T>(a, q + qr * E, k + r * E, b, h, i, j) - lse[qr]);
      C dp = 0;
      for (int64_t c = 0; c < Ev; ++c) dp += dout[qr * Ev + c] * static_cast<C>(vj[c]);
      p[i] = pi;
      ds[i] = pi * (dp - delta[qr]);
    }
    __syncthreads();
    for (int64_t c = threadIdx.x; c < Ev; c += blockDim.x) {
      C acc = 0;
      for (int64_t i = 0; i < L; ++i) acc += p[i] * dout[(bh * L + i) * Ev + c];
      dv[b * a.dv_strides[0] + h * a.dv_strides[1] + j * a.dv_strides[2] + c * a.dv_strides[3]] =
          static_cast<T>(acc);
    }
    for (int64_t e = threadIdx.x; e < E; e += blockDim.x) {
      C acc = 0;
      for (int64_t i = 0; i < L; ++i) acc += ds[i] * static_cast<C>(q[(bh * L + i) * E + e]);
      dk[b * a.dk_strides[0] + h * a.dk_strides[1] + j * a.dk_strides[2] + e * a.dk_strides[3]] =
          static_cast<T>(scale * acc);
    }
    __syncthreads();
  }
}

int64_t max3(int64_t a, int64_t b, int64_t c) { return a > b ? (a > c ? a : c) : (b > c ? b : c); }

}  // namespace

void launch_check_indices(Code idx_code, const void* idx, int64_t count, int64_t n, bool has_ignore, int64_t ignore,
                          int* bad) {
  if (count == 0) return;
  with_index_type(idx_code, "launch_check_indices: indices must be i64 or i32", [&]<class I>() {
    check_indices_kernel<I><<<blocks_for(count), kBlock>>>(static_cast<const I*>(idx), count, n, has_ignore, ignore,
                                                            bad);
  });
  check_launch("index check");
}

void launch_gather_rows(int elem_size, Code idx_code, const void* src, const void* idx, void* out, int64_t outer,
                        int64_t n, int64_t k, int64_t inner) {
  const int64_t total = outer * k * inner;
  if (total == 0) return;
  with_element_bytes(elem_size, "launch_gather_rows: bad element size", [&]<class E>() {
    with_index_type(idx_code, "launch_gather_rows: indices must be i64 or i32", [&]<class I>() {
      gather_rows_kernel<E, I><<<blocks_for(total), kBlock>>>(static_cast<const E*>(src), static_cast<const I*>(idx),
                                                              static_cast<E*>(out), total, n, k, inner);
    });
  });
  check_launch("index_select");
}

void launch_triangle(int elem_size, bool lower, const void* src, void* out, int64_t mats, int64_t rows, int64_t cols,
                     int64_t diagonal) {
  const int64_t total = mats * rows * cols;
  if (total == 0) return;
  with_element_bytes(elem_size, "launch_triangle: bad element size", [&]<class E>() {
    triangle_kernel<E><<<blocks_for(total), kBlock>>>(static_cast<const E*>(src), static_cast<E*>(out), total, rows,
                                                      cols, diagonal, lower);
  });
  check_launch(lower ? "tril" : "triu");
}

void launch_arg_reduce(Code code, bool max, const void* src, int64_t* out, int64_t outer, int64_t n, int64_t inner) {
  if (outer * inner == 0 || n == 0) return;
  auto run = [&]<class T>() {
    if (max) arg_reduce<true, T>(src, out, outer, n, inner);
    else arg_reduce<false, T>(src, out, outer, n, inner);
  };
  switch (code) {
    case kF32: return run.operator()<float>();
    case kF64: return run.operator()<double>();
    case kF16: return run.operator()<Half>();
    case kBF16: return run.operator()<BFloat16>();
    case kI64: return run.operator()<int64_t>();
    case kI32: return run.operator()<int32_t>();
    default: fail_launch("launch_arg_reduce: argmax/argmin do not take bool");
  }
}

void launch_embedding_backward(Code code, const void* grad, const int64_t* offsets, const int64_t* rows, void* out,
                               int64_t num_weights, int64_t width, bool scale_by_freq) {
  const int64_t total = num_weights * width;
  if (total == 0) return;
  with_floating_code(code, "launch_embedding_backward: needs a floating dtype", [&]<class T>() {
    embedding_backward_kernel<T><<<blocks_for(total), kBlock>>>(static_cast<const T*>(grad), offsets, rows,
                                                                static_cast<T*>(out), total, width, scale_by_freq);
  });
  check_launch("embedding_dense_backward");
}

void launch_bitwise_not(Code code, const void* src, void* out, int64_t n) {
  if (n == 0) return;
  switch (code) {
    case kI64:
      bitwise_not_kernel<<<blocks_for(n), kBlock>>>(static_cast<const int64_t*>(src), static_cast<int64_t*>(out), n);
      break;
    case kI32:
      bitwise_not_kernel<<<blocks_for(n), kBlock>>>(static_cast<const int32_t*>(src), static_cast<int32_t*>(out), n);
      break;
    default:
      bitwise_not_kernel<<<blocks_for(n), kBlock>>>(static_cast<const uint8_t*>(src), static_cast<uint8_t*>(out), n);
      break;
  }
  check_launch("bitwise_not");
}

void launch_zero_masked_rows(Code code, const void* x, void* y, int64_t outer, int64_t len, int64_t inner) {
  const int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return;
  with_floating_code(code, "launch_zero_masked_rows: needs a floating dtype", [&]<class T>() {
    zero_masked_rows_kernel<T><<<blocks_for(rows), kBlock>>>(static_cast<const T*>(x), static_cast<T*>(y), rows, len,
                                                             inner);
  });
  check_launch("_safe_softmax");
}

void launch_nll_loss(Code code, const NllLossArgs& a) {
  with_floating_code(code, "launch_nll_loss: needs a floating dtype", [&]<class T>() {
    if (a.elementwise) nll_loss_none_kernel<T><<<blocks_for(a.batch * a.map), kBlock>>>(a);
    else nll_loss_reduce_kernel<T><<<1, 1>>>(a);
  });
  check_launch("nll_loss_forward");
}

void launch_nll_loss_backward(Code code, const NllLossArgs& a) {
  if (a.batch == 0) return;
  with_floating_code(code, "launch_nll_loss_backward: needs a floating dtype", [&]<class T>() {
    nll_loss_backward_kernel<T><<<blocks_for(a.batch * a.map), kBlock>>>(a);
  });
  check_launch("nll_loss_backward");
}

int64_t sdpa_scratch_bytes(Code code, const SdpaArgs& a, bool backward) {
  const int64_t bh = a.batch * a.heads, c = compute_bytes(code);
  const int64_t forward = row_plan(bh * a.q_len, a.kv_len * c).scratch_bytes;
  if (!backward) return forward;
  const int64_t keys = row_plan(bh * a.kv_len, 2 * a.q_len * c).scratch_bytes;
  return forward > keys ? forward : keys;
}

void launch_sdpa_forward(Code code, const SdpaArgs& a) {
  const int64_t rows = a.batch * a.heads * a.q_len;
  if (rows == 0) return;
  const RowPlan plan = row_plan(rows, a.kv_len * compute_bytes(code));
  SdpaArgs args = a;
  if (plan.scratch_bytes == 0) args.scratch = nullptr;
  const unsigned threads = row_threads(a.kv_len > a.v_head_dim ? a.kv_len : a.v_head_dim);
  with_floating_code(code, "launch_sdpa_forward: needs a floating dtype", [&]<class T>() {
    sdpa_forward_kernel<T><<<plan.grid, threads, plan.shared>>>(args);
  });
  check_launch("_scaled_dot_product_flash_attention_for_cpu");
}

void launch_sdpa_backward(Code code, const SdpaArgs& a) {
  const int64_t bh = a.batch * a.heads, c = compute_bytes(code);
  if (bh * a.q_len == 0 || bh * a.kv_len == 0) return;
  const RowPlan queries = row_plan(bh * a.q_len, a.kv_len * c);
  const RowPlan keys = row_plan(bh * a.kv_len, 2 * a.q_len * c);
  SdpaArgs qa = a, ka = a;
  if (queries.scratch_bytes == 0) qa.scratch = nullptr;
  if (keys.scratch_bytes == 0) ka.scratch = nullptr;
  const unsigned q_threads = row_threads(max3(a.kv_len, a.head_dim, a.v_head_dim));
  const unsigned k_threads = row_threads(max3(a.q_len, a.head_dim, a.v_head_dim));
  with_floating_code(code, "launch_sdpa_backward: needs a floating dtype", [&]<class T>() {
    sdpa_backward_query_kernel<T><<<queries.grid, q_threads, queries.shared>>>(qa);
    check_launch("_scaled_dot_product_flash_attention_for_cpu_backward");
    sdpa_backward_key_kernel<T><<<keys.grid, k_threads, keys.shared>>>(ka);
  });
  check_launch("_scaled_dot_product_flash_attention_for_cpu_backward");
}

}  // namespace opspec::internal::cuda
