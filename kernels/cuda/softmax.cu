// softmax.cu: _softmax and _log_softmax kernels (launch_softmax), one block
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
  const unsigned rows = static_cast<unsigned>(outer * inner);
  if (rows == 0 || len == 0) return;
  if (log) {
    softmax_kernel<T, true><<<rows, row_threads(len)>>>(static_cast<const T*>(x), static_cast<T*>(y), len, inner);
  } else {
    softmax_kernel<T, false><<<rows, row_threads(len)>>>(static_cast<const T*>(x), static_cast<T*>(y), len, inner);
  }
  check_launch(log ? "log_softmax" : "softmax");
}

}  // namespace

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
