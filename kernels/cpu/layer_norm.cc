// layer_norm.cc: CPU kernel of native_layer_norm.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

constexpr int64_t kParallelGrain = 32768;  // elements below which rows stay serial

// Compute type: float for f32/f16/bf16, double for f64 (see Note [Reduced precision math]).
template <class T> using compute_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

// layer_norm_rows: rows of n elements; mean and variance (biased, two-pass,
// accumulated in double so large offsets do not cancel) go to mean/rstd in
// the compute type; w and b hold n values (ones and zeros without affine).
template <class T>
void layer_norm_rows(const T* x, T* y, compute_t<T>* mean, compute_t<T>* rstd, const compute_t<T>* w,
                     const compute_t<T>* b, int64_t rows, int64_t n, double eps) {
  using C = compute_t<T>;
  parallel_rows(rows, rows * n >= kParallelGrain, [&](int64_t r) {
    const T* xr = x + r * n;
    double s = 0;
#pragma omp simd reduction(+ : s)
    for (int64_t i = 0; i < n; ++i) s += static_cast<double>(static_cast<C>(xr[i]));
    const double mu = s / static_cast<double>(n);
    double ss = 0;
#pragma omp simd reduction(+ : ss)
    for (int64_t i = 0; i < n; ++i) {
      const double dv = static_cast<double>(static_cast<C>(xr[i])) - mu;
      ss += dv * dv;
    }
    const double var = ss / static_cast<double>(n);
    const C m = static_cast<C>(mu);
    const C rs = static_cast<C>(1.0 / std::sqrt(var + eps));
    mean[r] = m;
    rstd[r] = rs;
    T* yr = y + r * n;
#pragma omp simd
    for (int64_t i = 0; i < n; ++i) yr[i] = T((static_cast<C>(xr[i]) - m) * rs * w[i] + b[i]);
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
    using C = compute_t<scalar_t>;
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
