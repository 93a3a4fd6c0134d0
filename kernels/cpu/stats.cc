// stats.cc: CPU kernels of var, std and var_mean (.correction), logsumexp,
// any and all. Each output reduces one contiguous row of a copy of self
// laid out kept dims first, reduced dims last (See Note [Statistics rows]).
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>

#include "kernels/common/reduce_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;

// Note [Statistics rows]
// var/std need two passes over each output's elements (the mean, then the
// squared deviations, accumulated in double as layer norm's statistics) and
// logsumexp needs the max first; a copy with the reduced dims innermost
// makes every pass a contiguous run. The sums run in element order, so the
// result does not depend on the thread count.
struct StatRows {
  Tensor data;  // contiguous: `rows` runs of `len` elements
  int64_t rows = 1, len = 1;
};

StatRows rows_of(const Tensor& self, const ReductionGeometry& g) {
  StatRows r;
  r.data = contiguous_cpu(reduced_dims_last(self, g));
  r.len = g.reduced_numel;
  r.rows = r.len == 0 ? compute_numel(g.out_sizes) : self.numel() / r.len;
  return r;
}

double correction_of(const std::optional<Scalar>& c) { return c ? c->to_double() : 1.0; }

// moments: mean and variance (ss / max(0, n - correction)) of each row, in double.
template <class Emit>
void moments(const Tensor& self, const ReductionGeometry& g, double correction, std::string_view op, Emit emit) {
  const StatRows r = rows_of(self, g);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), op, [&] {
    const auto* p = static_cast<const scalar_t*>(r.data.raw_data());
    parallel_rows(r.rows, self.numel() >= kParallelGrain, [&](int64_t i) {
      const scalar_t* x = p + i * r.len;
      double s = 0;
      for (int64_t k = 0; k < r.len; ++k) s += static_cast<double>(load(x[k]));
      const double mean = r.len > 0 ? s / static_cast<double>(r.len) : std::numeric_limits<double>::quiet_NaN();
      double ss = 0;
      for (int64_t k = 0; k < r.len; ++k) {
        const double d = static_cast<double>(load(x[k])) - mean;
        ss += d * d;
      }
      const double dof = std::max(0.0, static_cast<double>(r.len) - correction);
      emit(i, ss / dof, mean);
    });
  });
}

template <bool kAny>
Tensor bool_reduce(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::string_view op) {
  require_cpu_device(self.device(), op);
  const ReductionGeometry g = bool_reduction_geometry(self, dim, keepdim, op);
  Tensor out = make_tensor(g.out_sizes, DType::kBool, kCPU);
  auto* o = out.data_ptr<bool>();
  const StatRows r = rows_of(self, g);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    const auto* p = static_cast<const scalar_t*>(r.data.raw_data());
    parallel_rows(out.numel(), self.numel() >= kParallelGrain, [&](int64_t i) {
      bool acc = !kAny;
      // any stops at the first nonzero, all at the first zero (NaN is nonzero).
      for (int64_t k = 0; k < r.len && acc == !kAny; ++k) acc = load(p[i * r.len + k]) != decltype(load(p[0]))(0);
      o[i] = acc;
    });
  });
  return out;
}

}  // namespace

Tensor var_correction_cpu(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                          bool keepdim) {
  constexpr std::string_view kOp = "aten::var";
  require_cpu_device(self.device(), kOp);
  const ReductionGeometry g = var_geometry(self, dim, keepdim, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    auto* o = out.data_ptr<scalar_t>();
    moments(self, g, correction_of(correction), kOp, [&](int64_t i, double var, double) { store(o + i, var); });
  });
  return out;
}

Tensor std_correction_cpu(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                          bool keepdim) {
  constexpr std::string_view kOp = "aten::std";
  require_cpu_device(self.device(), kOp);
  const ReductionGeometry g = var_geometry(self, dim, keepdim, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    auto* o = out.data_ptr<scalar_t>();
    moments(self, g, correction_of(correction), kOp,
            [&](int64_t i, double var, double) { store(o + i, std::sqrt(var)); });
  });
  return out;
}

std::tuple<Tensor, Tensor> var_mean_correction_cpu(const Tensor& self, OptionalIntArrayRef dim,
                                                   const std::optional<Scalar>& correction, bool keepdim) {
  constexpr std::string_view kOp = "aten::var_mean";
  require_cpu_device(self.device(), kOp);
  const ReductionGeometry g = var_geometry(self, dim, keepdim, kOp);
  Tensor var = make_tensor(g.out_sizes, self.dtype(), kCPU);
  Tensor mean = make_tensor(g.out_sizes, self.dtype(), kCPU);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    auto* v = var.data_ptr<scalar_t>();
    auto* m = mean.data_ptr<scalar_t>();
    moments(self, g, correction_of(correction), kOp, [&](int64_t i, double vv, double mm) {
      store(v + i, vv);
      store(m + i, mm);
    });
  });
  return {var, mean};
}

// logsumexp: max + log(sum(exp(x - max))), an infinite max taken as 0 (as
// PyTorch's kernel: all -inf gives -inf, a +inf gives +inf); integers in f32.
Tensor logsumexp_cpu(const Tensor& self, IntArrayRef dim, bool keepdim) {
  constexpr std::string_view kOp = "aten::logsumexp";
  require_cpu_device(self.device(), kOp);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, kOp);
  const DType dt = is_floating(self.dtype()) ? self.dtype() : kDefaultFloat;
  Tensor out = make_tensor(g.out_sizes, dt, kCPU);
  const StatRows r = rows_of(is_floating(self.dtype()) ? self : contiguous_cpu(self, dt), g);
  OPSPEC_DISPATCH_FLOATING_DTYPES(dt, kOp, [&] {
    using C = opmath_t<scalar_t>;
    const auto* p = static_cast<const scalar_t*>(r.data.raw_data());
    auto* o = out.data_ptr<scalar_t>();
    parallel_rows(out.numel(), self.numel() >= kParallelGrain, [&](int64_t i) {
      const scalar_t* x = p + i * r.len;
      C m = -std::numeric_limits<C>::infinity();
      for (int64_t k = 0; k < r.len; ++k) m = std::max(m, static_cast<C>(load(x[k])));
      if (std::isinf(m)) m = 0;
      C s = 0;
      for (int64_t k = 0; k < r.len; ++k) s += std::exp(static_cast<C>(load(x[k])) - m);
      store(o + i, std::log(s) + m);
    });
  });
  return out;
}

Tensor any_cpu(const Tensor& self) { return bool_reduce<true>(self, std::nullopt, false, "aten::any"); }
Tensor any_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return bool_reduce<true>(self, dim, keepdim, "aten::any");
}
Tensor all_cpu(const Tensor& self) { return bool_reduce<false>(self, std::nullopt, false, "aten::all"); }
Tensor all_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return bool_reduce<false>(self, dim, keepdim, "aten::all");
}

}  // namespace opspec::internal
