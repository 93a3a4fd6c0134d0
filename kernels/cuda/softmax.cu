// softmax.cu: _softmax and _log_softmax kernels (launch_softmax) and their
// backward (launch_softmax_backward), one block
// per row, in kernels/cpu/softmax.cc's arithmetic: max in the compute type,
// the sum of exp(x - max) in double, then exp(x - max) / sum or
// (x - max) - log(sum). exp is libdevice's, so values agree with the CPU's
// to an ulp or so rather than bit for bit.
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {
namespace {

template <class T, bool kLog>
__global__ void __launch_bounds__(kRowThreads) softmax_kernel(const T* x, T* y, int64_t len, int64_t inner) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t o = blockIdx.x / inner, i = blockIdx.x % inner;
  const int64_t base = o * len * inner + i;
  C m = -C(INFINITY);
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
    const C v = static_cast<C>(x[base + k * inner]);
    m = v > m ? v : m;
  }
  m = block_max(m);
  double s = 0;
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
    s += static_cast<double>(::exp(static_cast<C>(static_cast<C>(x[base + k * inner]) - m)));
  }
  s = block_sum(s);
  if constexpr (kLog) {
    const C log_sum = static_cast<C>(::log(s));
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      y[base + k * inner] = T((static_cast<C>(x[base + k * inner]) - m) - log_sum);
    }
  } else {
    const C inv = static_cast<C>(1.0 / s);
    for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
      y[base + k * inner] = T(::exp(static_cast<C>(static_cast<C>(x[base + k * inner]) - m)) * inv);
    }
  }
}

template <class T>
void softmax(bool log, const void* x, void* y, int64_t outer, int64_t len, int64_t inner) {
  if (outer * inner == 0 || len == 0) return;
  const unsigned rows = grid_rows(outer * inner, "softmax");
  if (log) {
    softmax_kernel<T, true><<<rows, row_threads(len)>>>(static_cast<const T*>(x), static_cast<T*>(y), len, inner);
  } else {
    softmax_kernel<T, false><<<rows, row_threads(len)>>>(static_cast<const T*>(x), static_cast<T*>(y), len, inner);
  }
  check_launch(log ? "log_softmax" : "softmax");
}

// softmax_backward_kernel: one block per (outer, inner) row, as
// kernels/cpu/softmax.cc: the sum along dim in double, then
// y * (g - sum(g * y)) or g - exp(y) * sum(g) in the compute type.
template <class T, bool kLog>
__global__ void __launch_bounds__(kRowThreads) softmax_backward_kernel(const T* g, const T* y, T* out, int64_t len,
                                                                       int64_t inner) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t o = blockIdx.x / inner, i = blockIdx.x % inner;
  const int64_t base = o * len * inner + i;
  double s = 0;
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
    const C gv = static_cast<C>(g[base + k * inner]);
    s += kLog ? static_cast<double>(gv) : static_cast<double>(gv * static_cast<C>(y[base + k * inner]));
  }
  const C sc = static_cast<C>(block_sum(s));
  for (int64_t k = threadIdx.x; k < len; k += blockDim.x) {
    const C gv = static_cast<C>(g[base + k * inner]);
    const C yv = static_cast<C>(y[base + k * inner]);
    out[base + k * inner] = kLog ? T(gv - ::exp(yv) * sc) : T(yv * (gv - sc));
  }
}

template <class T>
void softmax_backward(bool log, const void* g, const void* y, void* out, int64_t outer, int64_t len, int64_t inner) {
  if (outer * inner == 0 || len == 0) return;
  const unsigned rows = grid_rows(outer * inner, "softmax_backward");
  const auto* gp = static_cast<const T*>(g);
  const auto* yp = static_cast<const T*>(y);
  auto* op = static_cast<T*>(out);
  if (log) {
    softmax_backward_kernel<T, true><<<rows, row_threads(len)>>>(gp, yp, op, len, inner);
  } else {
    softmax_backward_kernel<T, false><<<rows, row_threads(len)>>>(gp, yp, op, len, inner);
  }
  check_launch(log ? "_log_softmax_backward_data" : "_softmax_backward_data");
}

}  // namespace

void launch_softmax_backward(Code code, bool log, const void* g, const void* y, void* out, int64_t outer, int64_t len,
                             int64_t inner) {
  switch (code) {
    case kF32: return softmax_backward<float>(log, g, y, out, outer, len, inner);
    case kF64: return softmax_backward<double>(log, g, y, out, outer, len, inner);
    case kF16: return softmax_backward<Half>(log, g, y, out, outer, len, inner);
    case kBF16: return softmax_backward<BFloat16>(log, g, y, out, outer, len, inner);
    default: fail_launch("launch_softmax_backward: softmax backward needs a floating dtype");
  }
}

void launch_softmax(Code code, bool log, const void* x, void* y, int64_t outer, int64_t len, int64_t inner) {
  switch (code) {
    case kF32: return softmax<float>(log, x, y, outer, len, inner);
    case kF64: return softmax<double>(log, x, y, outer, len, inner);
    case kF16: return softmax<Half>(log, x, y, outer, len, inner);
    case kBF16: return softmax<BFloat16>(log, x, y, outer, len, inner);
    default: fail_launch("launch_softmax: softmax needs a floating dtype");
  }
}

}  // namespace opspec::internal::cuda
