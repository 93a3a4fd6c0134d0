// layer_norm.cc: CPU kernels of native_layer_norm and native_layer_norm_backward.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/cpu/cache_hints.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/fixed_lane_sum.h"
#include "kernels/cpu/loops.h"
#include "kernels/common/backward_meta.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

// layer_norm_row: one row of n elements; its mean and variance (biased,
// two-pass, accumulated in double so large offsets do not cancel, in fixed
// lanes: See Note [Fixed-lane sums]) go to *mean / *rstd in the compute type;
// w and b hold n values (ones and zeros without affine).
// The pass over squares prefetches the next row (See Note [Prefetching
// ahead] in cache_hints.h; next is null for the last). With a buf of n
// elements the row is written there and streamed to yr (See Note [Streaming
// stores]).
template <class T>
__attribute__((always_inline)) inline void layer_norm_row(const T* xr, T* yr, opmath_t<T>* mean, opmath_t<T>* rstd,
                                                          const opmath_t<T>* w, const opmath_t<T>* b, int64_t n,
                                                          double eps, const T* next, T* buf) {
  using C = opmath_t<T>;
  const double s = fixed_lane_sum<double>(n, [xr](int64_t i) { return static_cast<double>(static_cast<C>(xr[i])); });
  const double mu = s / static_cast<double>(n);
  static_assert(kPrefetchChunk % kSumLanes == 0, "each chunk starts at lane 0, so the sum's order is the row's");
  double acc[kSumLanes] = {};
  for (int64_t c = 0; c < n; c += kPrefetchChunk) {
    const int64_t e = std::min(n, c + kPrefetchChunk);
    prefetch_chunk(next, c, e);
    fixed_lane_add(acc, c, e, [xr, mu](int64_t i) {
      const double dv = static_cast<double>(static_cast<C>(xr[i])) - mu;
      return dv * dv;
    });
  }
  const double ss = fixed_lane_total(acc);
  const double var = ss / static_cast<double>(n);
  const C m = static_cast<C>(mu);
  const C rs = static_cast<C>(1.0 / std::sqrt(var + eps));
  *mean = m;
  *rstd = rs;
  T* dst = buf != nullptr ? buf : yr;
#pragma omp simd
  for (int64_t i = 0; i < n; ++i) dst[i] = T((static_cast<C>(xr[i]) - m) * rs * w[i] + b[i]);
  if (buf != nullptr) {
    stream_copy(yr, buf, n * static_cast<int64_t>(sizeof(T)));
    stream_fence();
  }
}

// layer_norm_row_f32: f32 rows in the wide clones (See Note [Wide vector
// clones] in loops.h); the fixed-lane sums round alike in every clone.
OPSPEC_WIDE_CLONES void layer_norm_row_f32(const float* xr, float* yr, float* mean, float* rstd, const float* w,
                                           const float* b, int64_t n, double eps, const float* next, float* buf) {
  layer_norm_row<float>(xr, yr, mean, rstd, w, b, n, eps, next, buf);
}

// layer_norm_rows: every row, in parallel.
template <class T>
void layer_norm_rows(const T* x, T* y, opmath_t<T>* mean, opmath_t<T>* rstd, const opmath_t<T>* w,
                     const opmath_t<T>* b, int64_t rows, int64_t n, double eps) {
  const bool stream = rows * n * static_cast<int64_t>(sizeof(T)) >= kStreamMinBytes;
  parallel_rows_with(rows, rows * n >= kParallelGrain, [&] { return std::vector<T>(stream ? n : 0); },
                     [&](int64_t r, std::vector<T>& scratch) {
    const T* next = r + 1 < rows ? x + (r + 1) * n : nullptr;
    T* buf = stream ? scratch.data() : nullptr;
    if constexpr (std::is_same_v<T, float>) {
      layer_norm_row_f32(x + r * n, y + r * n, mean + r, rstd + r, w, b, n, eps, next, buf);
    } else {
      layer_norm_row<T>(x + r * n, y + r * n, mean + r, rstd + r, w, b, n, eps, next, buf);
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_cpu(const Tensor& input, IntArrayRef normalized_shape,
                                                         const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias, double eps) {
  const LayerNormGeometry g = layer_norm_geometry(input, normalized_shape, weight, bias);
  Tensor out = make_tensor(input.sizes(), input.dtype(), kCPU);
  Tensor mean, rstd;
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), "aten::native_layer_norm", [&] {
    using C = opmath_t<scalar_t>;
    constexpr DType kC = dtype_of<C>();
    // Statistics are computed in C and converted once when their dtype differs.
    Tensor mean_c = make_tensor(g.stat_sizes, kC, kCPU);
    Tensor rstd_c = make_tensor(g.stat_sizes, kC, kCPU);
    if (input.numel() != 0) {
      const Tensor x = contiguous_cpu(input);
      // Without affine parameters, w = 1 and b = 0 keep one branch-free loop
      // (x * 1 + 0 rounds exactly like x).
      std::vector<C> ones, zeros;
      const Tensor w = weight ? contiguous_cpu(*weight, kC) : Tensor();
      const Tensor b = bias ? contiguous_cpu(*bias, kC) : Tensor();
      if (!w.defined()) ones.assign(static_cast<size_t>(g.cols), C(1));
      if (!b.defined()) zeros.assign(static_cast<size_t>(g.cols), C(0));
      layer_norm_rows<scalar_t>(static_cast<const scalar_t*>(x.raw_data()), out.data_ptr<scalar_t>(),
                                mean_c.data_ptr<C>(), rstd_c.data_ptr<C>(),
                                w.defined() ? static_cast<const C*>(w.raw_data()) : ones.data(),
                                b.defined() ? static_cast<const C*>(b.raw_data()) : zeros.data(), g.rows, g.cols, eps);
    } else if (g.rows != 0) {
      // Rows of zero elements: mean 0/0 and rstd of it, as the formula gives.
      const C nan = std::numeric_limits<C>::quiet_NaN();
      std::fill(mean_c.data_ptr<C>(), mean_c.data_ptr<C>() + g.rows, nan);
      std::fill(rstd_c.data_ptr<C>(), rstd_c.data_ptr<C>() + g.rows, nan);
    }
    mean = g.stat_dtype == kC ? mean_c : contiguous_cpu(mean_c, g.stat_dtype);
    rstd = g.stat_dtype == kC ? rstd_c : contiguous_cpu(rstd_c, g.stat_dtype);
  });
  return {out, mean, rstd};
}

}  // namespace opspec::internal

// ---- Backward: native_layer_norm_backward ----

namespace opspec::internal {

namespace {

constexpr int64_t kParamColumnBlock = 256;  // columns one task reduces for grad_weight / grad_bias

// layer_norm_backward_rows: grad_input of each row, as PyTorch's CPU kernel:
// with g = dy * w, ds = sum(g * x) and db = sum(g) (in double),
// dx = rstd * g + b * x + c, b = (db * mean - ds) * rstd^3 / N, c = -b * mean - db * rstd / N.
template <class T>
void layer_norm_backward_rows(const T* dy, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd,
                              const opmath_t<T>* w, T* dx, int64_t rows, int64_t n) {
  using C = opmath_t<T>;
  parallel_rows(rows, rows * n >= kParallelGrain, [&](int64_t r) {
    const T* dyr = dy + r * n;
    const T* xr = x + r * n;
    double ds = 0, db = 0;
#pragma omp simd reduction(+ : ds, db)
    for (int64_t i = 0; i < n; ++i) {
      const C g = static_cast<C>(dyr[i]) * w[i];
      ds += static_cast<double>(g * static_cast<C>(xr[i]));
      db += static_cast<double>(g);
    }
    const C a = rstd[r];
    const C scale = C(1) / static_cast<C>(n);
    const C b = (static_cast<C>(db) * mean[r] - static_cast<C>(ds)) * a * a * a * scale;
    const C c = -b * mean[r] - static_cast<C>(db) * a * scale;
    T* dxr = dx + r * n;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) {
      dxr[i] = T(a * static_cast<C>(dyr[i]) * w[i] + b * static_cast<C>(xr[i]) + c);
    }
  });
}

// layer_norm_param_grads: grad_weight[j] = sum_r dy * (x - mean) * rstd and
// grad_bias[j] = sum_r dy, in double; tasks own column blocks, so the sums
// never depend on the thread count.
template <class T>
void layer_norm_param_grads(const T* dy, const T* x, const opmath_t<T>* mean, const opmath_t<T>* rstd,
                            double* dw, double* db, int64_t rows, int64_t n) {
  using C = opmath_t<T>;
  const int64_t blocks = (n + kParamColumnBlock - 1) / kParamColumnBlock;
  parallel_rows(blocks, rows * n >= kParallelGrain, [&](int64_t blk) {
    const int64_t j0 = blk * kParamColumnBlock;
    const int64_t j1 = std::min(n, j0 + kParamColumnBlock);
    for (int64_t r = 0; r < rows; ++r) {
      const T* dyr = dy + r * n;
      const T* xr = x + r * n;
      const C m = mean[r], rs = rstd[r];
      if (dw != nullptr) {
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) {
          dw[j] += static_cast<double>(static_cast<C>(dyr[j]) * ((static_cast<C>(xr[j]) - m) * rs));
        }
      }
      if (db != nullptr) {
#pragma omp simd
        for (int64_t j = j0; j < j1; ++j) db[j] += static_cast<double>(static_cast<C>(dyr[j]));
      }
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_cpu(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_layer_norm_backward";
  require_cpu_device(input.device(), kOp);
  const LayerNormGeometry g =
      layer_norm_backward_geometry(grad_out, input, normalized_shape, mean, rstd, weight, bias);
  Tensor dx, dw, db;
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    constexpr DType kC = dtype_of<C>();
    const Tensor dy = contiguous_cpu(grad_out);
    const Tensor x = contiguous_cpu(input);
    const Tensor m = contiguous_cpu(mean, kC);
    const Tensor rs = contiguous_cpu(rstd, kC);
    const auto* dyp = static_cast<const scalar_t*>(dy.raw_data());
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    const auto* mp = static_cast<const C*>(m.raw_data());
    const auto* rsp = static_cast<const C*>(rs.raw_data());
    if (output_mask[0]) {
      dx = make_tensor(input.sizes(), input.dtype(), kCPU);
      if (input.numel() != 0) {
        std::vector<C> ones;
        const Tensor w = weight ? contiguous_cpu(*weight, kC) : Tensor();
        if (!w.defined()) ones.assign(static_cast<size_t>(g.cols), C(1));
        layer_norm_backward_rows<scalar_t>(dyp, xp, mp, rsp, w.defined() ? static_cast<const C*>(w.raw_data()) : ones.data(),
                                           dx.data_ptr<scalar_t>(), g.rows, g.cols);
      }
    }
    const bool want_w = output_mask[1] && weight.has_value();
    const bool want_b = output_mask[2] && bias.has_value();
    if (want_w || want_b) {
      std::vector<double> sw(want_w ? static_cast<size_t>(g.cols) : 0), sb(want_b ? static_cast<size_t>(g.cols) : 0);
      if (input.numel() != 0) {
        layer_norm_param_grads<scalar_t>(dyp, xp, mp, rsp, want_w ? sw.data() : nullptr, want_b ? sb.data() : nullptr,
                                         g.rows, g.cols);
      }
      // The sums round once to the compute type, then to the parameter's dtype.
      auto finish = [&](const std::vector<double>& sums, const Tensor& like) {
        Tensor c = make_tensor(like.sizes(), kC, kCPU);
        C* cp = c.data_ptr<C>();
        for (size_t j = 0; j < sums.size(); ++j) cp[j] = static_cast<C>(sums[j]);
        return like.dtype() == kC ? c : contiguous_cpu(c, like.dtype());
      };
      if (want_w) dw = finish(sw, *weight);
      if (want_b) db = finish(sb, *bias);
    }
  });
  return {dx, dw, db};
}

}  // namespace opspec::internal
