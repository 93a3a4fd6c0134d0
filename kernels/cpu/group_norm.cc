// group_norm.cc: CPU kernels of native_group_norm and
// native_group_norm_backward, in the arithmetic of PyTorch's CPU kernel
// (GroupNormKernelImpl): y = x * (rstd * gamma) + (beta - rstd * gamma * mean).
#include <cmath>
#include <limits>
#include <tuple>
#include <type_traits>
#include <vector>

#include "kernels/common/layout_format.h"
#include "kernels/common/movement_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

// params_as: a parameter as n contiguous compute values, or `fallback` repeated.
template <class C>
std::vector<C> params_as(const std::optional<Tensor>& p, int64_t n, C fallback) {
  if (!p) return std::vector<C>(static_cast<size_t>(n), fallback);
  const Tensor t = contiguous_cpu(*p, dtype_of<C>());
  const auto* d = static_cast<const C*>(t.raw_data());
  return std::vector<C>(d, d + n);
}

// stat_tensor: n x group compute values as a tensor of dtype dt.
template <class C>
Tensor stat_tensor(const std::vector<C>& v, int64_t n, int64_t group, DType dt) {
  Tensor t = make_tensor({n, group}, dtype_of<C>(), kCPU);
  std::copy(v.begin(), v.end(), t.data_ptr<C>());
  return dt == dtype_of<C>() ? t : contiguous_cpu(t, dt);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_group_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                         int64_t HxW, int64_t group, double eps) {
  constexpr std::string_view kOp = "aten::native_group_norm";
  require_cpu_device(input.device(), kOp);
  const GroupNormGeometry g = group_norm_geometry(input, weight, bias, N, C, HxW, group, kOp);
  Tensor out = make_tensor(input.sizes(), input.dtype(), kCPU);
  Tensor mean, rstd;
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] {
    using Acc = opmath_t<scalar_t>;
    const int64_t rows = N * group;
    if (input.numel() == 0) {
      // PyTorch: zeros for mean, NaN for rstd.
      mean = stat_tensor(std::vector<Acc>(static_cast<size_t>(rows), Acc(0)), N, group, g.stat_dtype);
      rstd = stat_tensor(std::vector<Acc>(static_cast<size_t>(rows), std::numeric_limits<Acc>::quiet_NaN()), N, group,
                         g.stat_dtype);
      return;
    }
    const int64_t d = C / group;  // channels per group
    const int64_t row_len = d * HxW;
    const Tensor x = contiguous_cpu(input);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* yp = out.data_ptr<scalar_t>();
    const std::vector<Acc> w = params_as<Acc>(weight, C, Acc(1));
    const std::vector<Acc> b = params_as<Acc>(bias, C, Acc(0));
    std::vector<Acc> mv(static_cast<size_t>(rows)), rv(static_cast<size_t>(rows));
    parallel_rows(rows, input.numel() >= kParallelGrain, [&](int64_t r) {
      const scalar_t* xr = xp + r * row_len;
      // Mean and biased variance, two passes in double so large offsets do not cancel.
      double s = 0;
      for (int64_t i = 0; i < row_len; ++i) s += static_cast<double>(static_cast<Acc>(xr[i]));
      const double mu = s / static_cast<double>(row_len);
      double ss = 0;
      for (int64_t i = 0; i < row_len; ++i) {
        const double dv = static_cast<double>(static_cast<Acc>(xr[i])) - mu;
        ss += dv * dv;
      }
      const Acc m = static_cast<Acc>(mu);
      const Acc rs = static_cast<Acc>(1.0 / std::sqrt(ss / static_cast<double>(row_len) + eps));
      mv[static_cast<size_t>(r)] = m;
      rv[static_cast<size_t>(r)] = rs;
      const int64_t c0 = (r % group) * d;
      scalar_t* yr = yp + r * row_len;
      for (int64_t k = 0; k < d; ++k) {
        const Acc scale = rs * w[static_cast<size_t>(c0 + k)];
        const Acc shift = -scale * m + b[static_cast<size_t>(c0 + k)];
        const scalar_t* xc = xr + k * HxW;
        scalar_t* yc = yr + k * HxW;
        for (int64_t i = 0; i < HxW; ++i) yc[i] = static_cast<scalar_t>(static_cast<Acc>(xc[i]) * scale + shift);
      }
    });
    mean = stat_tensor(mv, N, group, g.stat_dtype);
    rstd = stat_tensor(rv, N, group, g.stat_dtype);
  });
  // Computed row-major, then laid out in input's suggested format (See Note [Model op layouts]).
  return {in_format(out, suggest_memory_format(input), kOp, copy_into), mean, rstd};
}

// native_group_norm_backward: PyTorch's GroupNormBackwardKernelImpl: with
// ds[n, c] = sum(dY * X) and db[n, c] = sum(dY) over the channel's HxW,
// dX = rstd * gamma * dY + c2 * X + c3 where, per group, c2 = (db_g * mean -
// ds_g) * rstd^3 / (D * HxW) and c3 = -c2 * mean - db_g * rstd / (D * HxW)
// (ds_g, db_g: ds and db weighted by gamma, summed over the group's channels);
// dgamma[c] = sum_n (ds - db * mean) * rstd and dbeta[c] = sum_n db.
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward_cpu(const Tensor& grad_out, const Tensor& input,
                                                                  const Tensor& mean, const Tensor& rstd,
                                                                  const std::optional<Tensor>& weight, int64_t N,
                                                                  int64_t C, int64_t HxW, int64_t group,
                                                                  std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_group_norm_backward";
  require_cpu_device(input.device(), kOp);
  const DType pdt = check_group_norm_backward(grad_out, input, mean, rstd, weight, N, C, HxW, group);
  Tensor dx = output_mask[0] ? make_tensor(input.sizes(), input.dtype(), kCPU) : Tensor();
  Tensor dw = output_mask[1] ? make_tensor({C}, pdt, kCPU) : Tensor();
  Tensor dbias = output_mask[2] ? make_tensor({C}, pdt, kCPU) : Tensor();
  if (input.numel() == 0) {
    const Tensor zero = make_tensor({}, DType::kFloat64, kCPU);
    *zero.data_ptr<double>() = 0;
    for (const Tensor* t : {&dx, &dw, &dbias}) {
      if (t->defined()) copy_into(*t, zero);
    }
    if (dx.defined()) dx = in_format(dx, suggest_memory_format(input), kOp, copy_into);
    return {dx, dw, dbias};
  }
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] {
    using Acc = opmath_t<scalar_t>;
    constexpr DType kAcc = dtype_of<Acc>();
    const int64_t d = C / group;
    const Tensor x = contiguous_cpu(input);
    const Tensor dy = contiguous_cpu(grad_out);
    const Tensor m = contiguous_cpu(mean, kAcc);
    const Tensor rs = contiguous_cpu(rstd, kAcc);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    const auto* dyp = static_cast<const scalar_t*>(dy.raw_data());
    const auto* mp = static_cast<const Acc*>(m.raw_data());
    const auto* rp = static_cast<const Acc*>(rs.raw_data());
    const std::vector<Acc> gamma = params_as<Acc>(weight, C, Acc(1));
    const bool parallel = input.numel() >= kParallelGrain;
    // ds, db per (n, c).
    std::vector<Acc> ds(static_cast<size_t>(N * C)), db(static_cast<size_t>(N * C));
    parallel_rows(N * C, parallel, [&](int64_t nc) {
      double sx = 0, sd = 0;
      const scalar_t* xc = xp + nc * HxW;
      const scalar_t* dc = dyp + nc * HxW;
      for (int64_t i = 0; i < HxW; ++i) {
        const Acc g = static_cast<Acc>(dc[i]);
        sx += static_cast<double>(g * static_cast<Acc>(xc[i]));
        sd += static_cast<double>(g);
      }
      ds[static_cast<size_t>(nc)] = static_cast<Acc>(sx);
      db[static_cast<size_t>(nc)] = static_cast<Acc>(sd);
    });
    if (dx.defined()) {
      auto* dxp = dx.data_ptr<scalar_t>();
      const Acc s = Acc(1) / static_cast<Acc>(d * HxW);
      parallel_rows(N * group, parallel, [&](int64_t r) {
        const int64_t n = r / group, c0 = (r % group) * d;
        Acc ds_g = 0, db_g = 0;
        for (int64_t k = 0; k < d; ++k) {
          ds_g += ds[static_cast<size_t>(n * C + c0 + k)] * gamma[static_cast<size_t>(c0 + k)];
          db_g += db[static_cast<size_t>(n * C + c0 + k)] * gamma[static_cast<size_t>(c0 + k)];
        }
        const Acc mu = mp[r], a = rp[r];
        const Acc c2 = (db_g * mu - ds_g) * a * a * a * s;
        const Acc c3 = -c2 * mu - db_g * a * s;
        for (int64_t k = 0; k < d; ++k) {
          const Acc c1 = a * gamma[static_cast<size_t>(c0 + k)];
          const int64_t off = (n * C + c0 + k) * HxW;
          for (int64_t i = 0; i < HxW; ++i) {
            dxp[off + i] = static_cast<scalar_t>(c1 * static_cast<Acc>(dyp[off + i]) +
                                                 c2 * static_cast<Acc>(xp[off + i]) + c3);
          }
        }
      });
    }
    // Parameter gradients: each channel sums over the batch in order.
    Tensor dw_acc = make_tensor({C}, kAcc, kCPU), db_acc = make_tensor({C}, kAcc, kCPU);
    auto* dwp = dw_acc.data_ptr<Acc>();
    auto* dbp = db_acc.data_ptr<Acc>();
    for (int64_t c = 0; c < C; ++c) {
      Acc gw = 0, gb = 0;
      for (int64_t n = 0; n < N; ++n) {
        const int64_t r = n * group + c / d;
        gw += (ds[static_cast<size_t>(n * C + c)] - db[static_cast<size_t>(n * C + c)] * mp[r]) * rp[r];
        gb += db[static_cast<size_t>(n * C + c)];
      }
      dwp[c] = gw;
      dbp[c] = gb;
    }
    if (dw.defined()) copy_into(dw, dw_acc);
    if (dbias.defined()) copy_into(dbias, db_acc);
  });
  // Computed row-major, then laid out in X's suggested format as PyTorch 2.x main's
  // empty_like(X, X.suggest_memory_format()) (1.13: contiguous). See Note [Model op layouts].
  if (dx.defined()) dx = in_format(dx, suggest_memory_format(input), kOp, copy_into);
  return {dx, dw, dbias};
}

}  // namespace opspec::internal
