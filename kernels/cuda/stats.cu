// stats.cu: the kernels of stats_launch.h: var/std/var_mean, logsumexp and
// any/all over contiguous rows, and mse_loss and its backward elementwise, in
// the arithmetic of kernels/cpu/stats.cc and loss.cc (compute types of
// kernels/common/opmath.h).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/stats_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {

// Note [CUDA statistics]
// Every output reduces one contiguous row, with no atomics, so results never
// depend on timing. A short row (at most kThreadRowLen elements) gets one
// thread, which runs the CPU kernel's loops in element order: var, std and
// var_mean are then the CPU's bits (double sums, IEEE division and sqrt, and
// no contracted multiply-adds under --fmad=false). A longer row gets one
// block: thread t folds elements t, t + blockDim, ... in order and the block
// combines its threads as block_reduce.cuh's fixed tree; the sums then agree
// with the CPU's to rounding, not bit for bit. logsumexp's exp and log are
// CUDA's, so it agrees to rounding on either path; any/all are exact.

namespace {

// kBlock: threads per block of the one-thread-per-row and elementwise kernels.
constexpr int kBlock = 256;
// kThreadRowLen: the longest row one thread reduces (See Note [CUDA statistics]).
constexpr int64_t kThreadRowLen = 64;
// kMaxRowBlocks: blocks of the block-per-row kernels (they loop over the rest).
constexpr int64_t kMaxRowBlocks = 65536;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < kMaxRowBlocks ? rows : kMaxRowBlocks); }

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// with_any_code: f.template operator()<T>() for every code (b8 as uint8_t).
template <class F>
void with_any_code(Code code, const char* what, F&& f) {
  switch (code) {
    case kI64: return f.template operator()<int64_t>();
    case kI32: return f.template operator()<int32_t>();
    case kB8: return f.template operator()<uint8_t>();
    default: with_floating_code(code, what, f);
  }
}

// widen: an element as its compute value (kernels/cpu/loops.h's load).
template <class T>
__device__ __forceinline__ opmath_t<T> widen(T x) {
  return static_cast<opmath_t<T>>(x);
}

// narrow: a double or compute value as an element; f16 and bf16 go through
// float as the CPU's store does.
template <class T, class V>
__device__ __forceinline__ T narrow(V v) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(v));
  } else {
    return static_cast<T>(v);
  }
}

// ---- var / std / var_mean ----

// dof_of: max(0, len - correction) as std::max(0.0, ...) computes it.
__device__ __forceinline__ double dof_of(int64_t len, double correction) {
  const double d = static_cast<double>(len) - correction;
  return 0.0 < d ? d : 0.0;
}

template <class T>
__device__ __forceinline__ void store_moments(int64_t r, double ss, double mean, int64_t len, double correction,
                                              bool take_sqrt, T* var, T* mean_out) {
  const double v = ss / dof_of(len, correction);
  var[r] = narrow<T>(take_sqrt ? ::sqrt(v) : v);
  if (mean_out != nullptr) mean_out[r] = narrow<T>(mean);
}

// moments_rows_kernel: one thread per row, the CPU's two loops.
template <class T>
__global__ void moments_rows_kernel(const T* x, int64_t rows, int64_t len, double correction, bool take_sqrt, T* var,
                                    T* mean_out) {
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + r * len;
    double s = 0;
    for (int64_t k = 0; k < len; ++k) s += static_cast<double>(widen(p[k]));
    const double mean = len > 0 ? s / static_cast<double>(len) : static_cast<double>(NAN);
    double ss = 0;
    for (int64_t k = 0; k < len; ++k) {
      const double d = static_cast<double>(widen(p[k])) - mean;
      ss += d * d;
    }
    store_moments(r, ss, mean, len, correction, take_sqrt, var, mean_out);
  }
}

// moments_block_kernel: one block per row (len > 0), two block sums.
template <class T>
__global__ void __launch_bounds__(kRowThreads) moments_block_kernel(const T* x, int64_t rows, int64_t len,
                                                                    double correction, bool take_sqrt, T* var,
                                                                    T* mean_out) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * len;
    double s = 0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) s += static_cast<double>(widen(p[k]));
    const double mean = block_sum(s) / static_cast<double>(len);
    double ss = 0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      const double d = static_cast<double>(widen(p[k])) - mean;
      ss += d * d;
    }
    ss = block_sum(ss);
    if (threadIdx.x == 0) store_moments(r, ss, mean, len, correction, take_sqrt, var, mean_out);
  }
}

// ---- logsumexp ----

// max_step: std::max(m, v): a NaN v never becomes the max.
template <class C>
__device__ __forceinline__ C max_step(C m, C v) {
  return m < v ? v : m;
}

template <class T>
__global__ void logsumexp_rows_kernel(const T* x, T* out, int64_t rows, int64_t len) {
  using C = opmath_t<T>;
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + r * len;
    C m = -C(INFINITY);
    for (int64_t k = 0; k < len; ++k) m = max_step(m, widen(p[k]));
    if (::isinf(m)) m = C(0);
    C s = 0;
    for (int64_t k = 0; k < len; ++k) s += ::exp(widen(p[k]) - m);
    out[r] = narrow<T>(::log(s) + m);
  }
}

template <class T>
__global__ void __launch_bounds__(kRowThreads) logsumexp_block_kernel(const T* x, T* out, int64_t rows, int64_t len) {
  using C = opmath_t<T>;
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * len;
    C m = -C(INFINITY);
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) m = max_step(m, widen(p[k]));
    m = block_max(m);  // the threads' maxima are never NaN
    if (::isinf(m)) m = C(0);
    C s = 0;
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) s += ::exp(widen(p[k]) - m);
    s = block_sum(s);
    if (threadIdx.x == 0) out[r] = narrow<T>(::log(s) + m);
  }
}

// ---- any / all ----

template <class T>
__device__ __forceinline__ bool nonzero(T v) {
  return widen(v) != opmath_t<T>(0);
}

// any_all_rows_kernel: one thread per row; any stops at the first nonzero, all at the first zero.
template <bool kAny, class T>
__global__ void any_all_rows_kernel(const T* x, bool* out, int64_t rows, int64_t len) {
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + r * len;
    bool acc = !kAny;
    for (int64_t k = 0; k < len && acc == !kAny; ++k) acc = nonzero(p[k]);
    out[r] = acc;
  }
}

// any_all_block_kernel: one block per row; a thread stops at its first
// element that decides the row (nonzero for any, zero for all).
template <bool kAny, class T>
__global__ void __launch_bounds__(kRowThreads) any_all_block_kernel(const T* x, bool* out, int64_t rows, int64_t len) {
  for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* p = x + r * len;
    int decided = 0;
    for (int64_t k = threadIdx.x; k < len && decided == 0; k += blockDim.x) decided = nonzero(p[k]) == kAny;
    const bool found = __syncthreads_or(decided) != 0;
    if (threadIdx.x == 0) out[r] = kAny ? found : !found;
  }
}

// ---- mse_loss ----

template <class T>
__global__ void mse_kernel(const T* a, const T* b, T* out, int64_t n) {
  using C = opmath_t<T>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const C x = widen(a[i]), y = widen(b[i]);
    out[i] = narrow<T>((x - y) * (x - y));
  }
}

template <class T>
__global__ void mse_backward_kernel(const T* a, const T* b, const T* grad, bool grad_broadcast, double norm, T* out,
                                    int64_t n) {
  using C = opmath_t<T>;
  const auto scale = static_cast<C>(norm);
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    const C go = widen(grad[grad_broadcast ? 0 : i]);
    out[i] = narrow<T>(scale * (widen(a[i]) - widen(b[i])) * go);
  }
}

}  // namespace

void launch_moments(Code code, const void* x, int64_t rows, int64_t len, double correction, bool take_sqrt, void* var,
                    void* mean) {
  if (rows == 0) return;
  with_floating_code(code, "launch_moments: needs a floating dtype", [&]<class T>() {
    const auto* p = static_cast<const T*>(x);
    auto* v = static_cast<T*>(var);
    auto* m = static_cast<T*>(mean);
    if (len <= kThreadRowLen) {
      moments_rows_kernel<T><<<blocks_for(rows), kBlock>>>(p, rows, len, correction, take_sqrt, v, m);
    } else {
      moments_block_kernel<T><<<row_blocks(rows), row_threads(len)>>>(p, rows, len, correction, take_sqrt, v, m);
    }
  });
  check_launch(mean != nullptr ? "var_mean" : (take_sqrt ? "std" : "var"));
}

void launch_logsumexp(Code code, const void* x, void* out, int64_t rows, int64_t len) {
  if (rows == 0) return;
  with_floating_code(code, "launch_logsumexp: needs a floating dtype", [&]<class T>() {
    const auto* p = static_cast<const T*>(x);
    auto* o = static_cast<T*>(out);
    if (len <= kThreadRowLen) {
      logsumexp_rows_kernel<T><<<blocks_for(rows), kBlock>>>(p, o, rows, len);
    } else {
      logsumexp_block_kernel<T><<<row_blocks(rows), row_threads(len)>>>(p, o, rows, len);
    }
  });
  check_launch("logsumexp");
}

void launch_any_all(Code code, bool any, const void* x, bool* out, int64_t rows, int64_t len) {
  if (rows == 0) return;
  with_any_code(code, "launch_any_all: unknown dtype", [&]<class T>() {
    const auto* p = static_cast<const T*>(x);
    const bool per_thread = len <= kThreadRowLen;
    if (any && per_thread) {
      any_all_rows_kernel<true, T><<<blocks_for(rows), kBlock>>>(p, out, rows, len);
    } else if (per_thread) {
      any_all_rows_kernel<false, T><<<blocks_for(rows), kBlock>>>(p, out, rows, len);
    } else if (any) {
      any_all_block_kernel<true, T><<<row_blocks(rows), row_threads(len)>>>(p, out, rows, len);
    } else {
      any_all_block_kernel<false, T><<<row_blocks(rows), row_threads(len)>>>(p, out, rows, len);
    }
  });
  check_launch(any ? "any" : "all");
}

void launch_mse(Code code, const void* a, const void* b, void* out, int64_t n) {
  if (n == 0) return;
  with_floating_code(code, "launch_mse: needs a floating dtype", [&]<class T>() {
    mse_kernel<T><<<blocks_for(n), kBlock>>>(static_cast<const T*>(a), static_cast<const T*>(b), static_cast<T*>(out),
                                             n);
  });
  check_launch("mse_loss");
}

void launch_mse_backward(Code code, const void* a, const void* b, const void* grad, bool grad_broadcast, double norm,
                         void* out, int64_t n) {
  if (n == 0) return;
  with_floating_code(code, "launch_mse_backward: needs a floating dtype", [&]<class T>() {
    mse_backward_kernel<T><<<blocks_for(n), kBlock>>>(static_cast<const T*>(a), static_cast<const T*>(b),
                                                      static_cast<const T*>(grad), grad_broadcast, norm,
                                                      static_cast<T*>(out), n);
  });
  check_launch("mse_loss_backward");
}

}  // namespace opspec::internal::cuda
