// movement.cu: the kernels of movement_launch.h: plan gathers (constant_pad_nd,
// flip, roll, repeat, upsample_nearest2d), upsample_nearest2d's backward and
// group norm with its backward, in the arithmetic of kernels/cpu/movement.cc
// and group_norm.cc (compute types of kernels/common/opmath.h).
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/movement_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {
namespace {

constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

template <class T>
using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// ---- Gathers ----

// plan_gather_kernel: element i's input offset is the sum of its per-dim
// table entries, the last dim fastest; any pad entry makes it the fill.
template <class E>
__global__ void plan_gather_kernel(const E* src, E* out, const int64_t* plan, int ndim, int64_t numel,
                                   int64_t pad_entry, E fill) {
  const int64_t* sizes = plan;
  const int64_t* offsets = plan + ndim;
  const int64_t* table = plan + 2 * ndim;
  for (int64_t i = first_index(); i < numel; i += grid_stride()) {
    int64_t rem = i, off = 0;
    bool pad = false;
    for (int d = ndim - 1; d >= 0; --d) {
      const int64_t t = table[offsets[d] + rem % sizes[d]];
      rem /= sizes[d];
      if (t == pad_entry) {
        pad = true;
      } else {
        off += t;
      }
    }
    out[i] = pad ? fill : src[off];
  }
}

// upsample_backward_kernel: one thread per input pixel sums its run of output pixels.
template <class T>
__global__ void upsample_backward_kernel(const T* grad, T* out, const int64_t* rh, const int64_t* rw, int64_t total,
                                         int64_t ih, int64_t iw, int64_t oh, int64_t ow) {
  using C = compute_t<T>;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t x = i % iw, y = (i / iw) % ih, p = i / (iw * ih);
    const T* g = grad + p * oh * ow;
    C acc = 0;
    for (int64_t a = rh[2 * y]; a < rh[2 * y + 1]; ++a) {
      for (int64_t b = rw[2 * x]; b < rw[2 * x + 1]; ++b) acc += static_cast<C>(g[a * ow + b]);
    }
    out[i] = T(acc);
  }
}

// ---- Group norm ----

// group_stats_kernel: one block per (n, group) row of d * hxw elements: the
// two-pass mean and biased variance in double (group_norm.cc's).
template <class T>
__global__ void __launch_bounds__(kRowThreads) group_stats_kernel(const T* x, compute_t<T>* mean,
                                                                  compute_t<T>* rstd, int64_t len, double eps) {
  using C = compute_t<T>;
  const int64_t r = blockIdx.x;
  const T* xr = x + r * len;
  double s = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) s += static_cast<double>(static_cast<C>(xr[i]));
  const double mu = block_sum(s) / static_cast<double>(len);
  double ss = 0;
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x) {
    const double dv = static_cast<double>(static_cast<C>(xr[i])) - mu;
    ss += dv * dv;
  }
  const double var = block_sum(ss) / static_cast<double>(len);
  if (threadIdx.x == 0) {
    mean[r] = static_cast<C>(mu);
    rstd[r] = static_cast<C>(1.0 / ::sqrt(var + eps));
  }
}

// group_norm_apply_kernel: y = x * (rstd * w) + (-(rstd * w) * mean + b).
template <class T>
__global__ void group_norm_apply_kernel(const T* x, T* y, const compute_t<T>* mean, const compute_t<T>* rstd,
                                        const compute_t<T>* w, const compute_t<T>* b, int64_t total, int64_t c,
                                        int64_t hxw, int64_t d, int64_t group) {
  using C = compute_t<T>;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t nc = i / hxw, ch = nc % c, n = nc / c;
    const int64_t r = n * group + ch / d;
    const C scale = rstd[r] * (w != nullptr ? w[ch] : C(1));
    const C shift = -scale * mean[r] + (b != nullptr ? b[ch] : C(0));
    y[i] = T(static_cast<C>(x[i]) * scale + shift);
  }
}

// channel_sums_kernel: one block per (n, c): ds = sum(dy * x), db = sum(dy) in double.
template <class T>
__global__ void __launch_bounds__(kRowThreads) channel_sums_kernel(const T* dy, const T* x, compute_t<T>* ds,
                                                                   compute_t<T>* db, int64_t hxw) {
  using C = compute_t<T>;
  const int64_t r = blockIdx.x;
  double sx = 0, sd = 0;
  for (int64_t i = threadIdx.x; i < hxw; i += blockDim.x) {
    const C g = static_cast<C>(dy[r * hxw + i]);
    sx += static_cast<double>(g * static_cast<C>(x[r * hxw + i]));
    sd += static_cast<double>(g);
  }
  sx = block_sum(sx);
  sd = block_sum(sd);
  if (threadIdx.x == 0) {
    ds[r] = static_cast<C>(sx);
    db[r] = static_cast<C>(sd);
  }
}

// group_coeffs_kernel: per (n, group), c2 and c3 of group_norm.cc's backward.
template <class C>
__global__ void group_coeffs_kernel(const C* ds, const C* db, const C* mean, const C* rstd, const C* w, C* c2,
                                    C* c3, int64_t rows, int64_t c, int64_t d, int64_t group, int64_t hxw) {
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const int64_t n = r / group, c0 = (r % group) * d;
    C ds_g = 0, db_g = 0;
    for (int64_t k = 0; k < d; ++k) {
      const C g = w != nullptr ? w[c0 + k] : C(1);
      ds_g += ds[n * c + c0 + k] * g;
      db_g += db[n * c + c0 + k] * g;
    }
    const C s = C(1) / static_cast<C>(d * hxw);
    const C mu = mean[r], a = rstd[r];
    const C k2 = (db_g * mu - ds_g) * a * a * a * s;
    c2[r] = k2;
    c3[r] = -k2 * mu - db_g * a * s;
  }
}

template <class T>
__global__ void group_norm_dx_kernel(const T* dy, const T* x, const compute_t<T>* rstd, const compute_t<T>* w,
                                     const compute_t<T>* c2, const compute_t<T>* c3, T* dx, int64_t total, int64_t c,
                                     int64_t hxw, int64_t d, int64_t group) {
  using C = compute_t<T>;
  for (int64_t i = first_index(); i < total; i += grid_stride()) {
    const int64_t nc = i / hxw, ch = nc % c, n = nc / c;
    const int64_t r = n * group + ch / d;
    const C c1 = rstd[r] * (w != nullptr ? w[ch] : C(1));
    dx[i] = T(c1 * static_cast<C>(dy[i]) + c2[r] * static_cast<C>(x[i]) + c3[r]);
  }
}

// group_params_kernel: per channel, the batch's sums in order (group_norm.cc's).
template <class C>
__global__ void group_params_kernel(const C* ds, const C* db, const C* mean, const C* rstd, C* dw, C* dbias,
                                    int64_t n, int64_t c, int64_t d, int64_t group) {
  for (int64_t ch = first_index(); ch < c; ch += grid_stride()) {
    C gw = 0, gb = 0;
    for (int64_t k = 0; k < n; ++k) {
      const int64_t r = k * group + ch / d;
      gw += (ds[k * c + ch] - db[k * c + ch] * mean[r]) * rstd[r];
      gb += db[k * c + ch];
    }
    dw[ch] = gw;
    dbias[ch] = gb;
  }
}

}  // namespace

void launch_plan_gather(int elem_size, const void* src, void* out, const int64_t* plan, int ndim, int64_t numel,
                        int64_t pad_entry, uint64_t fill_bits) {
  if (numel == 0) return;
  auto run = [&]<class E>() {
    E fill;
    memcpy(&fill, &fill_bits, sizeof(E));  // little-endian: the low bytes
    plan_gather_kernel<E><<<blocks_for(numel), kBlock>>>(static_cast<const E*>(src), static_cast<E*>(out), plan,
                                                         ndim, numel, pad_entry, fill);
  };
  switch (elem_size) {
    case 1: run.operator()<uint8_t>(); break;
    case 2: run.operator()<uint16_t>(); break;
    case 4: run.operator()<uint32_t>(); break;
    case 8: run.operator()<uint64_t>(); break;
    default: fail_launch("launch_plan_gather: bad element size");
  }
  check_launch("plan gather");
}

void launch_upsample_nearest2d_backward(Code code, const void* grad, void* out, const int64_t* rh,
                                        const int64_t* rw, int64_t planes, int64_t ih, int64_t iw, int64_t oh,
                                        int64_t ow) {
  const int64_t total = planes * ih * iw;
  if (total == 0) return;
  with_floating_code(code, "launch_upsample_nearest2d_backward: needs a floating dtype", [&]<class T>() {
    upsample_backward_kernel<T><<<blocks_for(total), kBlock>>>(static_cast<const T*>(grad), static_cast<T*>(out), rh,
                                                               rw, total, ih, iw, oh, ow);
  });
  check_launch("upsample_nearest2d_backward");
}

void launch_group_norm(Code code, const void* x, void* y, void* mean, void* rstd, const void* w, const void* b,
                       int64_t n, int64_t c, int64_t hxw, int64_t group, double eps) {
  const int64_t rows = n * group, d = c / group, total = n * c * hxw;
  if (rows == 0 || total == 0) return;
  with_floating_code(code, "launch_group_norm: needs a floating dtype", [&]<class T>() {
    using C = compute_t<T>;
    group_stats_kernel<T><<<static_cast<unsigned>(rows), row_threads(d * hxw)>>>(
        static_cast<const T*>(x), static_cast<C*>(mean), static_cast<C*>(rstd), d * hxw, eps);
    check_launch("native_group_norm");
    group_norm_apply_kernel<T><<<blocks_for(total), kBlock>>>(
        static_cast<const T*>(x), static_cast<T*>(y), static_cast<const C*>(mean), static_cast<const C*>(rstd),
        static_cast<const C*>(w), static_cast<const C*>(b), total, c, hxw, d, group);
  });
  check_launch("native_group_norm");
}

void launch_group_norm_backward(Code code, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* w, void* dx, void* dw, void* db, void* scratch, int64_t n, int64_t c,
                                int64_t hxw, int64_t group) {
  const int64_t d = c / group, total = n * c * hxw, rows = n * group;
  if (total == 0) return;
  with_floating_code(code, "launch_group_norm_backward: needs a floating dtype", [&]<class T>() {
    using C = compute_t<T>;
    C* ds = static_cast<C*>(scratch);
    C* dbs = ds + n * c;
    C* c2 = dbs + n * c;
    C* c3 = c2 + rows;
    const auto* mp = static_cast<const C*>(mean);
    const auto* rp = static_cast<const C*>(rstd);
    const auto* wp = static_cast<const C*>(w);
    channel_sums_kernel<T><<<static_cast<unsigned>(n * c), row_threads(hxw)>>>(
        static_cast<const T*>(dy), static_cast<const T*>(x), ds, dbs, hxw);
    check_launch("native_group_norm_backward");
    if (dx != nullptr) {
      group_coeffs_kernel<C><<<blocks_for(rows), kBlock>>>(ds, dbs, mp, rp, wp, c2, c3, rows, c, d, group, hxw);
      check_launch("native_group_norm_backward");
      group_norm_dx_kernel<T><<<blocks_for(total), kBlock>>>(static_cast<const T*>(dy), static_cast<const T*>(x), rp,
                                                             wp, c2, c3, static_cast<T*>(dx), total, c, hxw, d, group);
      check_launch("native_group_norm_backward");
    }
    group_params_kernel<C><<<blocks_for(c), kBlock>>>(ds, dbs, mp, rp, static_cast<C*>(dw), static_cast<C*>(db), n,
                                                      c, d, group);
  });
  check_launch("native_group_norm_backward");
}

}  // namespace opspec::internal::cuda
