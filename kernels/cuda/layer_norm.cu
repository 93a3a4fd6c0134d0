// layer_norm.cu: the native_layer_norm kernel (launch_layer_norm), one block
// per row, in kernels/cpu/layer_norm.cc's arithmetic: two-pass mean and
// biased variance accumulated in double, then (x - mean) * rstd * w + b in
// the compute type.
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {
namespace {

template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <class T>
__global__ void __launch_bounds__(kRowThreads) layer_norm_kernel(const T* x, T* y, compute_t<T>* mean,
                                                                 compute_t<T>* rstd, const compute_t<T>* w,
                                                                 const compute_t<T>* b, int64_t n, double eps) {
  using C = compute_t<T>;
  const int64_t r = blockIdx.x;
  const T* xr = x + r * n;
  double s = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) s += static_cast<double>(static_cast<C>(xr[i]));
  const double mu = block_sum(s) / static_cast<double>(n);
  double ss = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const double dv = static_cast<double>(static_cast<C>(xr[i])) - mu;
    ss += dv * dv;
  }
  const double var = block_sum(ss) / static_cast<double>(n);
  const C m = static_cast<C>(mu);
  const C rs = static_cast<C>(1.0 / ::sqrt(var + eps));
  if (threadIdx.x == 0) {
    mean[r] = m;
    rstd[r] = rs;
  }
  T* yr = y + r * n;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const C wi = w != nullptr ? w[i] : C(1);
    const C bi = b != nullptr ? b[i] : C(0);
    yr[i] = T((static_cast<C>(xr[i]) - m) * rs * wi + bi);
  }
}

template <class T>
void layer_norm(const void* x, void* y, void* mean, void* rstd, const void* w, const void* b, int64_t rows, int64_t n,
                double eps) {
  using C = compute_t<T>;
  if (rows == 0) return;
  layer_norm_kernel<T><<<static_cast<unsigned>(rows), row_threads(n)>>>(
      static_cast<const T*>(x), static_cast<T*>(y), static_cast<C*>(mean), static_cast<C*>(rstd),
      static_cast<const C*>(w), static_cast<const C*>(b), n, eps);
  check_launch("native_layer_norm");
}

}  // namespace

void launch_layer_norm(Code code, const void* x, void* y, void* mean, void* rstd, const void* w, const void* b,
                       int64_t rows, int64_t n, double eps) {
  switch (code) {
    case kF32: return layer_norm<float>(x, y, mean, rstd, w, b, rows, n, eps);
    case kF64: return layer_norm<double>(x, y, mean, rstd, w, b, rows, n, eps);
    case kF16: return layer_norm<Half>(x, y, mean, rstd, w, b, rows, n, eps);
    case kBF16: return layer_norm<BFloat16>(x, y, mean, rstd, w, b, rows, n, eps);
    default: fail_launch("launch_layer_norm: layer_norm needs a floating dtype");
  }
}

}  // namespace opspec::internal::cuda
