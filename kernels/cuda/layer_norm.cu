// layer_norm.cu: the native_layer_norm kernel (launch_layer_norm) and its
// backward (launch_layer_norm_backward), one block per row, in kernels/cpu/layer_norm.cc's arithmetic: two-pass mean and
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
  layer_norm_kernel<T><<<grid_rows(rows, "native_layer_norm"), row_threads(n)>>>(
      static_cast<const T*>(x), static_cast<T*>(y), static_cast<C*>(mean), static_cast<C*>(rstd),
      static_cast<const C*>(w), static_cast<const C*>(b), n, eps);
  check_launch("native_layer_norm");
}

// layer_norm_backward_kernel: grad_input of one row per block, as
// kernels/cpu/layer_norm.cc: ds = sum(g * x), db = sum(g) in double (g = dy * w),
// dx = rstd * g + b * x + c.
template <class T>
__global__ void __launch_bounds__(kRowThreads) layer_norm_backward_kernel(const T* dy, const T* x,
                                                                          const compute_t<T>* mean,
                                                                          const compute_t<T>* rstd,
                                                                          const compute_t<T>* w, T* dx, int64_t n) {
  using C = compute_t<T>;
  const int64_t r = blockIdx.x;
  const T* dyr = dy + r * n;
  const T* xr = x + r * n;
  double ds = 0, db = 0;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const C g = static_cast<C>(dyr[i]) * (w != nullptr ? w[i] : C(1));
    ds += static_cast<double>(g * static_cast<C>(xr[i]));
    db += static_cast<double>(g);
  }
  ds = block_sum(ds);
  db = block_sum(db);
  const C a = rstd[r];
  const C scale = C(1) / static_cast<C>(n);
  const C b = (static_cast<C>(db) * mean[r] - static_cast<C>(ds)) * a * a * a * scale;
  const C c = -b * mean[r] - static_cast<C>(db) * a * scale;
  T* dxr = dx + r * n;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const C wi = w != nullptr ? w[i] : C(1);
    dxr[i] = T(a * static_cast<C>(dyr[i]) * wi + b * static_cast<C>(xr[i]) + c);
  }
}

// layer_norm_param_kernel: one thread per column sums over the rows in
// double (the CPU's order), then rounds once to the compute type.
template <class T>
__global__ void layer_norm_param_kernel(const T* dy, const T* x, const compute_t<T>* mean, const compute_t<T>* rstd,
                                        compute_t<T>* dw, compute_t<T>* db, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  const int64_t j = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  double sw = 0, sb = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const C d = static_cast<C>(dy[r * n + j]);
    sw += static_cast<double>(d * ((static_cast<C>(x[r * n + j]) - mean[r]) * rstd[r]));
    sb += static_cast<double>(d);
  }
  if (dw != nullptr) dw[j] = static_cast<C>(sw);
  if (db != nullptr) db[j] = static_cast<C>(sb);
}

template <class T>
void layer_norm_backward(const void* dy, const void* x, const void* mean, const void* rstd, const void* w, void* dx,
                         void* dw, void* db, int64_t rows, int64_t n) {
  using C = compute_t<T>;
  const auto* dyp = static_cast<const T*>(dy);
  const auto* xp = static_cast<const T*>(x);
  const auto* mp = static_cast<const C*>(mean);
  const auto* rp = static_cast<const C*>(rstd);
  if (dx != nullptr && rows > 0 && n > 0) {
    layer_norm_backward_kernel<T><<<grid_rows(rows, "native_layer_norm_backward"), row_threads(n)>>>(
        dyp, xp, mp, rp, static_cast<const C*>(w), static_cast<T*>(dx), n);
    check_launch("native_layer_norm_backward");
  }
  if ((dw != nullptr || db != nullptr) && n > 0) {
    constexpr unsigned kThreads = 256;
    layer_norm_param_kernel<T><<<static_cast<unsigned>((n + kThreads - 1) / kThreads), kThreads>>>(
        dyp, xp, mp, rp, static_cast<C*>(dw), static_cast<C*>(db), rows, n);
    check_launch("native_layer_norm_backward");
  }
}

}  // namespace

void launch_layer_norm_backward(Code code, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* w, void* dx, void* dw, void* db, int64_t rows, int64_t n) {
  switch (code) {
    case kF32: return layer_norm_backward<float>(dy, x, mean, rstd, w, dx, dw, db, rows, n);
    case kF64: return layer_norm_backward<double>(dy, x, mean, rstd, w, dx, dw, db, rows, n);
    case kF16: return layer_norm_backward<Half>(dy, x, mean, rstd, w, dx, dw, db, rows, n);
    case kBF16: return layer_norm_backward<BFloat16>(dy, x, mean, rstd, w, dx, dw, db, rows, n);
    default: fail_launch("launch_layer_norm_backward: layer_norm needs a floating dtype");
  }
}

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
