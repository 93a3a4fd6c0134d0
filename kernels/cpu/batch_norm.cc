// batch_norm.cc: CPU kernels of native_batch_norm and
// native_batch_norm_backward, channel by channel over the OpenMP threads,
// with PyTorch's CPU arithmetic: statistics in the compute type (two passes:
// the sum, then the squared deviations), y = x * alpha + beta with alpha =
// invstd * weight and beta = bias - mean * alpha, and the running statistics
// updated in place (the variance unbiased), as batch_norm_cpu does.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>
#include <vector>

#include "kernels/common/conv_meta.h"
#include "kernels/common/layout_format.h"
#include "kernels/cpu/channels_last.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;


// Layout: input [N, C, S...] as N blocks of C planes of `inner` elements.
struct Layout {
  int64_t n = 1, c = 1, inner = 1;
};
Layout layout_of(const Tensor& input) {
  Layout l;
  l.n = input.size(0);
  l.c = input.size(1);
  for (int64_t d = 2; d < input.dim(); ++d) l.inner *= input.size(d);
  return l;
}

// values: a per-channel parameter in the compute type (fill when absent).
template <class C>
std::vector<C> values(const std::optional<Tensor>& t, int64_t n, C fill) {
  if (!t) return std::vector<C>(static_cast<size_t>(n), fill);
  const Tensor v = contiguous_cpu(*t, dtype_of<C>());
  const C* p = static_cast<const C*>(v.raw_data());
  return std::vector<C>(p, p + n);
}

// tensor_of: values as a new [n] tensor of dtype (rounded once).
template <class C>
Tensor tensor_of(const std::vector<C>& v, DType dtype) {
  Tensor t = make_tensor({static_cast<int64_t>(v.size())}, dtype_of<C>(), kCPU);
  std::copy(v.begin(), v.end(), static_cast<C*>(t.raw_data()));
  if (dtype == dtype_of<C>()) return t;
  Tensor out = make_tensor(t.sizes(), dtype, kCPU);
  copy_into(out, t);
  return out;
}

// Note [Batch statistics by lanes]
// PyTorch's batch_norm_cpu sums each channel in one sequential chain (the
// mean, then the squared deviations): one add per element, each waiting for
// the last. Taking kStatLanes channels together gives that many independent
// chains in flight, with every channel's additions in the same order, so the
// bits are PyTorch's and the loop is no longer bound by the add's latency.
constexpr int64_t kStatLanes = 8;

// channel_stats: mean, the sum of squared deviations and invstd of channels
// [c0, c0 + kLanes).
template <int64_t kLanes, class T, class C>
void channel_stats(const T* xp, const Layout& l, int64_t c0, int64_t count, double eps, C* mean, C* var_sum,
                   C* invstd) {
  C sum[kLanes] = {};
  for (int64_t i = 0; i < l.n; ++i) {
    const T* p = xp + (i * l.c + c0) * l.inner;
    for (int64_t k = 0; k < l.inner; ++k) {
      for (int64_t j = 0; j < kLanes; ++j) sum[j] += load(p[j * l.inner + k]);
    }
  }
  C m[kLanes], vs[kLanes] = {};
  for (int64_t j = 0; j < kLanes; ++j) m[j] = count > 0 ? sum[j] / static_cast<C>(count) : C(0);
  for (int64_t i = 0; i < l.n; ++i) {
    const T* p = xp + (i * l.c + c0) * l.inner;
    for (int64_t k = 0; k < l.inner; ++k) {
      for (int64_t j = 0; j < kLanes; ++j) {
        const C d = load(p[j * l.inner + k]) - m[j];
        vs[j] += d * d;
      }
    }
  }
  for (int64_t j = 0; j < kLanes; ++j) {
    mean[c0 + j] = m[j];
    var_sum[c0 + j] = vs[j];
    invstd[c0 + j] = count > 0 ? C(1) / std::sqrt(vs[j] / static_cast<C>(count) + static_cast<C>(eps)) : C(0);
  }
}

// Note [Channels-last batch norm]
// A channels-last input (suggest_memory_format: NHWC, or NDHWC for
// channels_last_3d) is read in its own layout, as rows of C channels, and
// the result written in it, with no transpose in or out (See Note [Model op
// layouts]). Each thread takes a range of channels and adds every row into
// their running sums, one chain per channel in row order: images, then
// pixels, the order of Note [Batch statistics by lanes], so the statistics
// are the same bits as the row-major path's; y = x * alpha + beta and the
// backward's dx are the same operations per element. The lanes are the
// channels themselves: contiguous in a row, so the loop vectorizes.

// ChannelsLast: a channels-last tensor's memory as `rows` rows of `c` channels.
struct ChannelsLast {
  int64_t rows = 0, c = 0;
};

// channels_last_format: input's channels-last format when it suggests one and has elements, else nullopt.
std::optional<MemoryFormat> channels_last_format(const Tensor& input) {
  const MemoryFormat f = suggest_memory_format(input);
  if (f == MemoryFormat::kContiguous || input.numel() == 0) return std::nullopt;
  return f;
}

// channel_ranges: f(c0, c1) for ranges of channels over the OpenMP threads,
// split at multiples of 16 so that each thread's lanes fill whole vectors.
template <class F>
void channel_ranges(int64_t c, bool parallel, F&& f) {
  constexpr int64_t kAlign = 16;
  const int64_t blocks = (c + kAlign - 1) / kAlign;
  const int64_t tasks = parallel ? std::min<int64_t>(get_num_threads(), blocks) : 1;
  parallel_rows(tasks, parallel, [&](int64_t t) {
    const int64_t c0 = std::min(c, blocks * t / tasks * kAlign), c1 = std::min(c, blocks * (t + 1) / tasks * kAlign);
    if (c0 < c1) f(c0, c1);
  });
}

// channels_last_stats: mean, the sum of squared deviations and invstd of
// channels [c0, c1) of rows x (See Note [Channels-last batch norm]).
template <class T, class C>
void channels_last_stats(const T* xp, const ChannelsLast& l, int64_t c0, int64_t c1, double eps, C* mean,
                         C* var_sum, C* invstd) {
  const int64_t w = c1 - c0;
  std::vector<C> sum(static_cast<size_t>(w)), vs(static_cast<size_t>(w));
  C* s = sum.data();
  for (int64_t r = 0; r < l.rows; ++r) {
    const T* p = xp + r * l.c + c0;
    OPSPEC_SIMD
    for (int64_t j = 0; j < w; ++j) s[j] += load(p[j]);
  }
  C* m = mean + c0;
  for (int64_t j = 0; j < w; ++j) m[j] = l.rows > 0 ? s[j] / static_cast<C>(l.rows) : C(0);
  C* v = vs.data();
  for (int64_t r = 0; r < l.rows; ++r) {
    const T* p = xp + r * l.c + c0;
    OPSPEC_SIMD
    for (int64_t j = 0; j < w; ++j) {
      const C d = load(p[j]) - m[j];
      v[j] += d * d;
    }
  }
  for (int64_t j = 0; j < w; ++j) {
    var_sum[c0 + j] = v[j];
    invstd[c0 + j] = l.rows > 0 ? C(1) / std::sqrt(v[j] / static_cast<C>(l.rows) + static_cast<C>(eps)) : C(0);
  }
}

// kRowsPerTask: rows of a channels-last tensor per parallel task (elementwise passes).
constexpr int64_t kRowsPerTask = 64;

// row_tasks: f(r) for every row r of l, kRowsPerTask rows per task over the OpenMP threads.
template <class F>
void row_tasks(const ChannelsLast& l, bool parallel, F&& f) {
  parallel_rows((l.rows + kRowsPerTask - 1) / kRowsPerTask, parallel, [&](int64_t t) {
    for (int64_t r = t * kRowsPerTask; r < std::min(l.rows, (t + 1) * kRowsPerTask); ++r) f(r);
  });
}

// channels_last_backward: native_batch_norm_backward's sums, dot products
// and (dx non-null) input gradient over channels-last rows, with the
// row-major path's operations per channel and element (See Note
// [Channels-last batch norm]).
template <class T, class C>
void channels_last_backward(const T* xp, const T* gp, const ChannelsLast& l, bool train, const std::vector<C>& mean,
                            const std::vector<C>& invstd, const std::vector<C>& w, std::vector<C>& sums,
                            std::vector<C>& dotps, T* dx, bool parallel) {
  const C* m = mean.data();
  channel_ranges(l.c, parallel, [&](int64_t c0, int64_t c1) {
    C *s = sums.data(), *d = dotps.data();
    for (int64_t r = 0; r < l.rows; ++r) {
      const T *x = xp + r * l.c, *g = gp + r * l.c;
      OPSPEC_SIMD
      for (int64_t c = c0; c < c1; ++c) {
        const C gv = load(g[c]);
        s[c] += gv;
        d[c] += (load(x[c]) - m[c]) * gv;
      }
    }
  });
  if (dx == nullptr) return;
  std::vector<C> grad_mean(static_cast<size_t>(l.c)), k(static_cast<size_t>(l.c)), scale(static_cast<size_t>(l.c));
  for (int64_t c = 0; c < l.c; ++c) {
    grad_mean[c] = l.rows > 0 ? sums[c] / static_cast<C>(l.rows) : C(0);
    k[c] = l.rows > 0 ? dotps[c] * invstd[c] * invstd[c] / static_cast<C>(l.rows) : C(0);
    scale[c] = invstd[c] * w[c];
  }
  const C *gm = grad_mean.data(), *kp = k.data(), *sc = scale.data();
  row_tasks(l, parallel, [&](int64_t r) {
    const T *x = xp + r * l.c, *g = gp + r * l.c;
    T* out = dx + r * l.c;
    if (train) {
      OPSPEC_SIMD
      for (int64_t c = 0; c < l.c; ++c) store(out + c, (load(g[c]) - gm[c] - (load(x[c]) - m[c]) * kp[c]) * sc[c]);
    } else {
      OPSPEC_SIMD
      for (int64_t c = 0; c < l.c; ++c) store(out + c, load(g[c]) * sc[c]);
    }
  });
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias,
                                                         const std::optional<Tensor>& running_mean,
                                                         const std::optional<Tensor>& running_var, bool training,
                                                         double momentum, double eps) {
  constexpr std::string_view kOp = "aten::native_batch_norm";
  require_cpu_device(input.device(), kOp);
  check_batch_norm(input, weight, bias, running_mean, running_var, training, kOp);
  const Layout l = layout_of(input);
  const DType stat = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  // A channels-last input is computed in its layout (See Note [Channels-last batch norm]).
  const std::optional<MemoryFormat> cl = channels_last_format(input);
  const ChannelsLast rows{l.n * l.inner, l.c};
  Tensor out = cl ? make_strided(input.sizes(), strides_for(input.sizes(), *cl, kOp), input.dtype(), kCPU)
                  : make_tensor(input.sizes(), input.dtype(), kCPU);
  Tensor save_mean = make_tensor({training ? l.c : 0}, stat, kCPU);
  Tensor save_invstd = make_tensor({training ? l.c : 0}, stat, kCPU);
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] {
    using C = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    const Tensor x = cl ? channels_last_rows(input) : contiguous_cpu(input);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* yp = static_cast<scalar_t*>(out.raw_data());
    const std::vector<C> w = values<C>(weight, l.c, C(1)), b = values<C>(bias, l.c, C(0));
    std::vector<C> mean(static_cast<size_t>(l.c)), invstd(static_cast<size_t>(l.c));
    std::vector<C> var_sum(static_cast<size_t>(l.c));
    const int64_t count = l.n * l.inner;
    if (training && cl) {
      channel_ranges(l.c, input.numel() >= kParallelGrain, [&](int64_t c0, int64_t c1) {
        channels_last_stats(xp, rows, c0, c1, eps, mean.data(), var_sum.data(), invstd.data());
      });
    } else if (training) {
      // kStatLanes channels at a time: their sums are independent chains, each
      // still added in PyTorch's order (See Note [Batch statistics by lanes]).
      const int64_t blocks = (l.c + kStatLanes - 1) / kStatLanes;
      parallel_rows(blocks, input.numel() >= kParallelGrain, [&](int64_t blk) {
        const int64_t c0 = blk * kStatLanes;
        if (l.c - c0 >= kStatLanes) {
          channel_stats<kStatLanes>(xp, l, c0, count, eps, mean.data(), var_sum.data(), invstd.data());
        } else {
          for (int64_t c = c0; c < l.c; ++c) {
            channel_stats<1>(xp, l, c, count, eps, mean.data(), var_sum.data(), invstd.data());
          }
        }
      });
    }
    if (training) {
      std::copy(mean.begin(), mean.end(), static_cast<C*>(save_mean.raw_data()));
      std::copy(invstd.begin(), invstd.end(), static_cast<C*>(save_invstd.raw_data()));
      // running = momentum * batch + (1 - momentum) * running; the variance unbiased.
      const auto m = static_cast<C>(momentum);
      if (running_mean) {
        std::vector<C> rm = values<C>(running_mean, l.c, C(0));
        for (int64_t c = 0; c < l.c; ++c) rm[c] = m * mean[c] + (C(1) - m) * rm[c];
        copy_into(*running_mean, tensor_of(rm, running_mean->dtype()));
      }
      if (running_var) {
        std::vector<C> rv = values<C>(running_var, l.c, C(0));
        for (int64_t c = 0; c < l.c; ++c) {
          rv[c] = m * var_sum[c] / static_cast<C>(count - 1) + (C(1) - m) * rv[c];
        }
        copy_into(*running_var, tensor_of(rv, running_var->dtype()));
      }
    } else {
      mean = values<C>(running_mean, l.c, C(0));
      const std::vector<C> rv = values<C>(running_var, l.c, C(1));
      for (int64_t c = 0; c < l.c; ++c) invstd[c] = C(1) / std::sqrt(rv[c] + static_cast<C>(eps));
    }
    if (cl) {
      std::vector<C> alpha(static_cast<size_t>(l.c)), beta(static_cast<size_t>(l.c));
      for (int64_t c = 0; c < l.c; ++c) {
        alpha[c] = invstd[c] * w[c];
        beta[c] = b[c] - mean[c] * alpha[c];
      }
      const C *al = alpha.data(), *be = beta.data();
      row_tasks(rows, input.numel() >= kParallelGrain, [&](int64_t r) {
        const scalar_t* p = xp + r * l.c;
        scalar_t* q = yp + r * l.c;
        OPSPEC_SIMD
        for (int64_t c = 0; c < l.c; ++c) store(q + c, load(p[c]) * al[c] + be[c]);
      });
      return;
    }
    parallel_rows(l.n * l.c, input.numel() >= kParallelGrain, [&](int64_t r) {
      const int64_t c = r % l.c;
      const C alpha = invstd[c] * w[c];
      const C beta = b[c] - mean[c] * alpha;
      const scalar_t* p = xp + r * l.inner;
      scalar_t* q = yp + r * l.inner;
      for (int64_t k = 0; k < l.inner; ++k) store(q + k, load(p[k]) * alpha + beta);
    });
  });
  if (cl) return {out, save_mean, save_invstd};
  // Computed row-major, then laid out in input's suggested format (See Note [Model op layouts]).
  return {in_format(out, suggest_memory_format(input), kOp, copy_into), save_mean, save_invstd};
}

// native_batch_norm_backward: per channel, sum = sum(dy), dotp = sum((x -
// mean) dy); training: dx = (dy - sum / n - (x - mean) dotp invstd^2 / n)
// invstd w; eval: dx = dy invstd w; dw = dotp invstd; db = sum.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_cpu(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_batch_norm_backward";
  require_cpu_device(input.device(), kOp);
  native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                                  eps, output_mask);
  const Layout l = layout_of(input);
  // A channels-last input is computed in its layout (See Note [Channels-last batch norm]).
  const std::optional<MemoryFormat> cl = channels_last_format(input);
  Tensor dx = !output_mask[0] ? Tensor()
              : cl            ? make_strided(input.sizes(), strides_for(input.sizes(), *cl, kOp), input.dtype(), kCPU)
                              : make_tensor(input.sizes(), input.dtype(), kCPU);
  Tensor dw = output_mask[1] ? make_tensor({l.c}, input.dtype(), kCPU) : Tensor();
  Tensor db = output_mask[2] ? make_tensor({l.c}, input.dtype(), kCPU) : Tensor();
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] {
    using C = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    const Tensor x = cl ? channels_last_rows(input) : contiguous_cpu(input);
    const Tensor g = cl ? channels_last_rows(grad_out, input.dtype()) : contiguous_cpu(grad_out, input.dtype());
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    const auto* gp = static_cast<const scalar_t*>(g.raw_data());
    const std::vector<C> w = values<C>(weight, l.c, C(1));
    std::vector<C> mean, invstd;
    if (train) {
      mean = values<C>(save_mean, l.c, C(0));
      invstd = values<C>(save_invstd, l.c, C(0));
    } else {
      mean = values<C>(running_mean, l.c, C(0));
      const std::vector<C> rv = values<C>(running_var, l.c, C(1));
      invstd.resize(static_cast<size_t>(l.c));
      for (int64_t c = 0; c < l.c; ++c) invstd[c] = C(1) / std::sqrt(rv[c] + static_cast<C>(eps));
    }
    std::vector<C> sums(static_cast<size_t>(l.c)), dotps(static_cast<size_t>(l.c));
    const int64_t count = l.n * l.inner;
    if (cl) {
      channels_last_backward<scalar_t, C>(xp, gp, ChannelsLast{count, l.c}, train, mean, invstd, w, sums, dotps,
                                          output_mask[0] ? static_cast<scalar_t*>(dx.raw_data()) : nullptr,
                                          input.numel() >= kParallelGrain);
    } else {
      parallel_rows(l.c, input.numel() >= kParallelGrain, [&](int64_t c) {
        C sum = 0, dotp = 0;
        for (int64_t i = 0; i < l.n; ++i) {
          const int64_t base = (i * l.c + c) * l.inner;
          for (int64_t k = 0; k < l.inner; ++k) {
            const C gv = load(gp[base + k]);
            sum += gv;
            dotp += (load(xp[base + k]) - mean[c]) * gv;
          }
        }
        sums[c] = sum;
        dotps[c] = dotp;
        if (!output_mask[0]) return;
        auto* dxp = dx.data_ptr<scalar_t>();
        const C grad_mean = count > 0 ? sum / static_cast<C>(count) : C(0);
        const C k = count > 0 ? dotp * invstd[c] * invstd[c] / static_cast<C>(count) : C(0);
        const C scale = invstd[c] * w[c];
        for (int64_t i = 0; i < l.n; ++i) {
          const int64_t base = (i * l.c + c) * l.inner;
          for (int64_t j = 0; j < l.inner; ++j) {
            const C gv = load(gp[base + j]);
            const C v = train ? (gv - grad_mean - (load(xp[base + j]) - mean[c]) * k) * scale : gv * scale;
            store(dxp + base + j, v);
          }
        }
      });
    }
    if (output_mask[1]) {
      auto* p = dw.data_ptr<scalar_t>();
      for (int64_t c = 0; c < l.c; ++c) store(p + c, dotps[c] * invstd[c]);
    }
    if (output_mask[2]) {
      auto* p = db.data_ptr<scalar_t>();
      for (int64_t c = 0; c < l.c; ++c) store(p + c, sums[c]);
    }
  });
  if (dx.defined() && !cl) dx = in_format(dx, suggest_memory_format(input), kOp, copy_into);
  return {dx, dw, db};
}

}  // namespace opspec::internal
