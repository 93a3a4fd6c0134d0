// pooling.cc: CPU kernels of max_pool2d_with_indices, avg_pool2d,
// _adaptive_avg_pool2d and their backward ops, plane by plane over the
// OpenMP threads, with PyTorch's window rules.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
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


int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
int64_t adaptive_end(int64_t o, int64_t in, int64_t out) { return ((o + 1) * in + out - 1) / out; }

// AvgWindow: the clipped window of output (oy, ox) and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};
AvgWindow avg_window(const PoolGeometry& g, int64_t oy, int64_t ox, bool count_include_pad,
                     std::optional<int64_t> divisor_override) {
  int64_t h0 = oy * g.stride[0] - g.padding[0], w0 = ox * g.stride[1] - g.padding[1];
  int64_t h1 = std::min(h0 + g.kernel[0], g.in[0] + g.padding[0]);
  int64_t w1 = std::min(w0 + g.kernel[1], g.in[1] + g.padding[1]);
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = std::max<int64_t>(h0, 0);
  w0 = std::max<int64_t>(w0, 0);
  h1 = std::min(h1, g.in[0]);
  w1 = std::min(w1, g.in[1]);
  const int64_t divisor =
      divisor_override ? *divisor_override : (count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
  return {h0, h1, w0, w1, divisor};
}

// Note [Max pooling rows]
// PyTorch's max pooling visits each window in order (rows, then columns)
// keeping the first maximum and letting NaN win. The outputs of one row whose
// windows lie inside the input row run together: for each window offset,
// every output's element is compared at once, a loop over the outputs that
// vectorizes (at stride 1 or 2 the loads are contiguous), with the same
// order, values and indices as the per-output loop, which the row's edges
// (windows reaching into the padding) still take. BM_MaxPool2d/resnet.

// MaxRow: one output row's running maxima and their indices.
template <class C>
struct MaxRow {
  std::vector<C> value;
  std::vector<int64_t> index;
};

// MaxRowArgs: where one output row's inner windows are: input rows [h0, h1)
// by dy, kernel columns kw at stride sx and dilation dx from column
// ox * sx - pad, outputs [x_lo, x_hi).
struct MaxRowArgs {
  int64_t W, h0, h1, dy, kw, sx, dx, pad, x_lo, x_hi;
};

// max_pool_row: the running maxima of one output row, in the order of
// PyTorch's per-output loop (See Note [Max pooling rows]); kStride 1 or 2
// makes the loads contiguous, 0 reads a.sx and a.dx.
template <int kStride, class T, class C>
inline void max_pool_row(const T* plane, const MaxRowArgs& a, C* bv, int64_t* best) {
  const int64_t sx = kStride != 0 ? kStride : a.sx, dx = kStride != 0 ? 1 : a.dx;
  for (int64_t ox = a.x_lo; ox < a.x_hi; ++ox) {
    bv[ox] = -std::numeric_limits<C>::infinity();
    best[ox] = a.h0 * a.W + ox * sx - a.pad;
  }
  for (int64_t y = a.h0; y < a.h1; y += a.dy) {
    for (int64_t kx = 0; kx < a.kw; ++kx) {
      const int64_t off = y * a.W + kx * dx - a.pad;
      const T* in = plane + off;
      OPSPEC_SIMD
      for (int64_t ox = a.x_lo; ox < a.x_hi; ++ox) {
        const C v = load(in[ox * sx]);
        const bool take = v > bv[ox] || v != v;
        bv[ox] = take ? v : bv[ox];
        best[ox] = take ? off + ox * sx : best[ox];
      }
    }
  }
}

// max_pool_row_f32: max_pool_row for f32, built for the widest vectors the
// CPU runs (See Note [Wide vector clones] in loops.h): compares of 16 lanes.
OPSPEC_WIDE_CLONES void max_pool_row_f32(const float* plane, const MaxRowArgs& a, float* bv, int64_t* best) {
  if (a.sx == 2 && a.dx == 1) {
    max_pool_row<2>(plane, a, bv, best);
  } else if (a.sx == 1 && a.dx == 1) {
    max_pool_row<1>(plane, a, bv, best);
  } else {
    max_pool_row<0>(plane, a, bv, best);
  }
}

// inner_max_pool_row: max_pool_row_f32 for f32, else the generic loop.
template <class T, class C>
void inner_max_pool_row(const T* plane, const MaxRowArgs& a, C* bv, int64_t* best) {
  max_pool_row<0>(plane, a, bv, best);
}
void inner_max_pool_row(const float* plane, const MaxRowArgs& a, float* bv, int64_t* best) {
  max_pool_row_f32(plane, a, bv, best);
}

// Note [Channels-last max pooling]
// A channels-last input (NHWC) is pooled in its layout, with no transpose in
// or out (See Note [Model op layouts]): each output pixel visits its window
// in PyTorch's order (rows, then columns) comparing all C channels of an
// input pixel at once, a loop over contiguous channels that vectorizes. Each
// channel sees the comparisons of the per-output loop in its order, so the
// values and indices are the same. The backward adds each channel's
// gradients in the row-major path's order: the same bits.

// ClWindow: the input rows [h0, h1) by dy and columns [w0, w1) by dx of one output pixel.
struct ClWindow {
  int64_t h0, h1, dy, w0, w1, dx;
};

// kClLanes: channels compared at once; the window's tap numbers ride in
// int32 lanes beside the values (one vector width for both) and become
// input indices once per output.
constexpr int64_t kClLanes = 16;

// max_pool_lanes_cl: the maxima and their input indices of `lanes` (<=
// kClLanes; kLanes when nonzero) channels of one window of image img
// ([H, W, c] rows of width W), into ov and oi; taps[t] is tap t's index.
template <int64_t kLanes, class T, class C>
[[gnu::always_inline]] inline void max_pool_lanes_cl(const T* img, int64_t c, int64_t W, const ClWindow& w,
                                                     const int64_t* taps, int64_t lanes, T* ov, int64_t* oi) {
  const int64_t n = kLanes != 0 ? kLanes : lanes;
  C bv[kClLanes];
  int32_t bt[kClLanes];
  for (int64_t j = 0; j < n; ++j) {
    bv[j] = -std::numeric_limits<C>::infinity();
    bt[j] = 0;
  }
  int32_t t = 0;
  for (int64_t y = w.h0; y < w.h1; y += w.dy) {
    for (int64_t x = w.w0; x < w.w1; x += w.dx, ++t) {
      const T* in = img + (y * W + x) * c;
      OPSPEC_SIMD
      for (int64_t j = 0; j < n; ++j) {
        const C v = load(in[j]);
        const bool take = v > bv[j] || v != v;
        bv[j] = take ? v : bv[j];
        bt[j] = take ? t : bt[j];
      }
    }
  }
  for (int64_t j = 0; j < n; ++j) {
    store(ov + j, bv[j]);
    oi[j] = taps[bt[j]];
  }
}

// ClRow: one output row of a channels-last max pool: sizes and window rules.
struct ClRow {
  int64_t c, W, ow, h0, h1, dy, sx, pad, reach, dx;
};

// max_pool_row_cl: the outputs of one row, written to orow and irow ([ow, c]
// each); taps is scratch for a window's tap indices. Every channel sees the
// per-output loop's comparisons in its order (See Note [Channels-last max pooling]).
template <class T, class C>
[[gnu::always_inline]] inline void max_pool_row_cl(const T* img, const ClRow& r, T* orow, int64_t* irow,
                                                   int64_t* taps) {
  for (int64_t ox = 0; ox < r.ow; ++ox) {
    int64_t w0 = ox * r.sx - r.pad;
    const int64_t w1 = std::min(w0 + r.reach + 1, r.W);
    while (w0 < 0) w0 += r.dx;
    const ClWindow w{r.h0, r.h1, r.dy, w0, w1, r.dx};
    // The window's input indices in visiting order; an empty window's is its first element's, as PyTorch's.
    int64_t n = 0;
    taps[0] = r.h0 * r.W + w0;
    for (int64_t y = w.h0; y < w.h1; y += w.dy) {
      for (int64_t x = w.w0; x < w.w1; x += w.dx) taps[n++] = y * r.W + x;
    }
    T* ov = orow + ox * r.c;
    int64_t* oi = irow + ox * r.c;
    int64_t j = 0;
    for (; j + kClLanes <= r.c; j += kClLanes) {
      max_pool_lanes_cl<kClLanes, T, C>(img + j, r.c, r.W, w, taps, kClLanes, ov + j, oi + j);
    }
    if (j < r.c) max_pool_lanes_cl<0, T, C>(img + j, r.c, r.W, w, taps, r.c - j, ov + j, oi + j);
  }
}

// max_pool_row_cl_f32: max_pool_row_cl for f32 in the widest vectors the CPU
// runs (See Note [Wide vector clones] in loops.h).
OPSPEC_WIDE_CLONES void max_pool_row_cl_f32(const float* img, const ClRow& r, float* orow, int64_t* irow,
                                            int64_t* taps) {
  max_pool_row_cl<float, float>(img, r, orow, irow, taps);
}
template <class T, class C>
void pool_row_cl(const T* img, const ClRow& r, T* orow, int64_t* irow, int64_t* taps) {
  if constexpr (std::is_same_v<T, float>) {
    max_pool_row_cl_f32(img, r, orow, irow, taps);
  } else {
    max_pool_row_cl<T, C>(img, r, orow, irow, taps);
  }
}

// max_pool_channels_last: max_pool2d_with_indices of a channels-last self
// into channels-last out and idx (See Note [Channels-last max pooling]).
template <class T>
void max_pool_channels_last(const Tensor& self, const PoolGeometry& g, Tensor& out, Tensor& idx) {
  using C = opmath_t<T>;
  const int64_t N = self.size(0), c = self.size(1), H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
  const Tensor x = channels_last_rows(self);
  const auto* xp = static_cast<const T*>(x.raw_data());
  auto* op = static_cast<T*>(out.raw_data());
  auto* ip = static_cast<int64_t*>(idx.raw_data());
  parallel_rows_with(
      N * oh, self.numel() >= kParallelGrain,
      [&] { return std::vector<int64_t>(static_cast<size_t>(std::max<int64_t>(g.kernel[0] * g.kernel[1], 1))); },
      [&](int64_t row, std::vector<int64_t>& taps) {
        const int64_t n = row / oh, oy = row % oh;
        int64_t h0 = oy * g.stride[0] - g.padding[0];
        const int64_t h1 = std::min(h0 + (g.kernel[0] - 1) * g.dilation[0] + 1, H);
        while (h0 < 0) h0 += g.dilation[0];
        const ClRow r{c, W, ow, h0, h1, g.dilation[0], g.stride[1], g.padding[1], (g.kernel[1] - 1) * g.dilation[1],
                      g.dilation[1]};
        pool_row_cl<T, C>(xp + n * H * W * c, r, op + row * ow * c, ip + row * ow * c, taps.data());
      });
}

// max_pool_backward_channels_last: the gradient of a channels-last self
// into channels-last out (zeroed), each channel's adds in the row-major order.
template <class T>
void max_pool_backward_channels_last(const Tensor& grad_output, const Tensor& self, const Tensor& indices,
                                     const PoolGeometry& g, Tensor& out, std::string_view op_name) {
  const int64_t N = self.size(0), c = self.size(1), in_plane = g.in[0] * g.in[1], out_plane = g.out[0] * g.out[1];
  const Tensor go = channels_last_rows(grad_output, self.dtype()), ix = channels_last_rows(indices, DType::kInt64);
  const auto* gp = static_cast<const T*>(go.raw_data());
  const auto* ip = static_cast<const int64_t*>(ix.raw_data());
  auto* dst = static_cast<T*>(out.raw_data());
  parallel_rows(N, self.numel() >= kParallelGrain, [&](int64_t n) {
    T* d = dst + n * in_plane * c;
    for (int64_t i = 0; i < out_plane; ++i) {
      const int64_t* at = ip + (n * out_plane + i) * c;
      const T* gr = gp + (n * out_plane + i) * c;
      for (int64_t j = 0; j < c; ++j) {
        OPSPEC_CHECK(at[j] >= 0 && at[j] < in_plane, op_name, ": found an invalid max index ", at[j]);
        store(d + at[j] * c + j, load(d[at[j] * c + j]) + load(gr[j]));
      }
    }
  });
}

// zero_filled: a contiguous cpu tensor of zeros (all-zero bits in every dtype).
// in_format_of: t (row-major) laid out in like's suggested memory format, as
// PyTorch's pooling kernels allocate (See Note [Model op layouts]).
Tensor in_format_of(const Tensor& t, const Tensor& like, std::string_view op) {
  return in_format(t, suggest_memory_format(like), op, copy_into);
}

Tensor zero_filled(IntArrayRef sizes, DType dtype) {
  Tensor t = make_tensor(sizes, dtype, kCPU);
  zero_bytes(t);
  return t;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                       bool ceil_mode) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices";
  require_cpu_device(self.device(), kOp);
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  if (self.dim() == 4 && self.numel() != 0 && suggest_memory_format(self) == MemoryFormat::kChannelsLast) {
    // Pooled in the channels-last layout itself (See Note [Channels-last max pooling]).
    const SizeVec strides = strides_for(g.out_sizes, MemoryFormat::kChannelsLast, kOp);
    Tensor out = make_strided(g.out_sizes, strides, self.dtype(), kCPU);
    Tensor idx = make_strided(g.out_sizes, strides, DType::kInt64, kCPU);
    if (out.numel() != 0) {
      OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp,
                                      [&] { max_pool_channels_last<scalar_t>(self, g, out, idx); });
    }
    return {out, idx};
  }
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  Tensor idx = make_tensor(g.out_sizes, DType::kInt64, kCPU);
  if (out.numel() == 0) return {in_format_of(out, self, kOp), in_format_of(idx, self, kOp)};
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor x = contiguous_cpu(self);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    auto* ip = idx.data_ptr<int64_t>();
    const int64_t H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
    // Outputs whose windows lie inside the row go through max_pool_row (See Note [Max pooling rows]).
    const int64_t sx = g.stride[1], dx = g.dilation[1], reach = (g.kernel[1] - 1) * dx;
    const int64_t x_lo = std::min((g.padding[1] + sx - 1) / sx, ow);
    const int64_t x_hi = std::clamp(W - 1 - reach + g.padding[1] >= 0 ? (W - 1 - reach + g.padding[1]) / sx + 1 : 0,
                                    x_lo, ow);
    parallel_rows_with(
        g.planes, self.numel() >= kParallelGrain,
        [&] {
          return MaxRow<C>{std::vector<C>(static_cast<size_t>(ow)), std::vector<int64_t>(static_cast<size_t>(ow))};
        },
        [&](int64_t p, MaxRow<C>& row) {
          const scalar_t* xpl = xp + p * H * W;
          for (int64_t oy = 0; oy < oh; ++oy) {
            int64_t h0 = oy * g.stride[0] - g.padding[0];
            const int64_t h1 = std::min(h0 + (g.kernel[0] - 1) * g.dilation[0] + 1, H);
            while (h0 < 0) h0 += g.dilation[0];
            scalar_t* orow = op + (p * oh + oy) * ow;
            int64_t* irow = ip + (p * oh + oy) * ow;
            auto scalar_output = [&](int64_t ox) {
              int64_t w0 = ox * sx - g.padding[1];
              const int64_t w1 = std::min(w0 + reach + 1, W);
              while (w0 < 0) w0 += dx;
              // PyTorch's loop: the first window element's index, -inf, and NaN wins.
              int64_t best = h0 * W + w0;
              C bv = -std::numeric_limits<C>::infinity();
              for (int64_t y = h0; y < h1; y += g.dilation[0]) {
                for (int64_t xx = w0; xx < w1; xx += dx) {
                  const C v = load(xpl[y * W + xx]);
                  if (v > bv || std::isnan(v)) {
                    bv = v;
                    best = y * W + xx;
                  }
                }
              }
              store(orow + ox, bv);
              irow[ox] = best;
            };
            for (int64_t ox = 0; ox < x_lo; ++ox) scalar_output(ox);
            if (x_lo < x_hi) {
              const MaxRowArgs a{W, h0, h1, g.dilation[0], g.kernel[1], sx, dx, g.padding[1], x_lo, x_hi};
              inner_max_pool_row(xpl, a, row.value.data(), row.index.data());
              for (int64_t ox = x_lo; ox < x_hi; ++ox) {
                store(orow + ox, row.value[ox]);
                irow[ox] = row.index[ox];
              }
            }
            for (int64_t ox = x_hi; ox < ow; ++ox) scalar_output(ox);
          }
        });
  });
  return {in_format_of(out, self, kOp), in_format_of(idx, self, kOp)};
}

Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices_backward";
  require_cpu_device(self.device(), kOp);
  max_pool2d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  if (self.dim() == 4 && self.numel() != 0 && suggest_memory_format(self) == MemoryFormat::kChannelsLast) {
    // See Note [Channels-last max pooling].
    Tensor out = make_strided(self.sizes(), strides_for(self.sizes(), MemoryFormat::kChannelsLast, kOp), self.dtype(),
                              kCPU);
    std::memset(out.raw_data(), 0, static_cast<size_t>(out.numel()) * element_size(out.dtype()));
    OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
      max_pool_backward_channels_last<scalar_t>(grad_output, self, indices, g, out, kOp);
    });
    return out;
  }
  Tensor out = zero_filled(self.sizes(), self.dtype());
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    const Tensor go = contiguous_cpu(grad_output, self.dtype()), ix = contiguous_cpu(indices, DType::kInt64);
    const auto* gp = static_cast<const scalar_t*>(go.raw_data());
    const auto* ip = static_cast<const int64_t*>(ix.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    const int64_t in_plane = g.in[0] * g.in[1], out_plane = g.out[0] * g.out[1];
    parallel_rows(g.planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      scalar_t* dst = op + p * in_plane;
      for (int64_t i = 0; i < out_plane; ++i) {
        const int64_t at = ip[p * out_plane + i];
        OPSPEC_CHECK(at >= 0 && at < in_plane, kOp, ": found an invalid max index ", at);
        store(dst + at, load(dst[at]) + load(gp[p * out_plane + i]));
      }
    });
  });
  return in_format_of(out, self, kOp);
}

Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr std::string_view kOp = "aten::avg_pool2d";
  require_cpu_device(self.device(), kOp);
  avg_pool2d_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor x = contiguous_cpu(self);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    const int64_t H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
    parallel_rows(g.planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          const AvgWindow w = avg_window(g, oy, ox, count_include_pad, divisor_override);
          C s = 0;
          for (int64_t y = w.h0; y < w.h1; ++y) {
            for (int64_t xx = w.w0; xx < w.w1; ++xx) s += load(xp[(p * H + y) * W + xx]);
          }
          const bool empty = w.h0 >= w.h1 || w.w0 >= w.w1;
          store(op + (p * oh + oy) * ow + ox, empty ? C(0) : s / static_cast<C>(w.divisor));
        }
      }
    });
  });
  return in_format_of(out, self, kOp);
}

Tensor avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override) {
  constexpr std::string_view kOp = "aten::avg_pool2d_backward";
  require_cpu_device(self.device(), kOp);
  avg_pool2d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override);
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, kOp);
  Tensor out = zero_filled(self.sizes(), self.dtype());
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor go = contiguous_cpu(grad_output, self.dtype());
    const auto* gp = static_cast<const scalar_t*>(go.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    const int64_t H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
    parallel_rows(g.planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        for (int64_t ox = 0; ox < ow; ++ox) {
          const AvgWindow w = avg_window(g, oy, ox, count_include_pad, divisor_override);
          const C share = load(gp[(p * oh + oy) * ow + ox]) / static_cast<C>(w.divisor);
          for (int64_t y = w.h0; y < w.h1; ++y) {
            for (int64_t xx = w.w0; xx < w.w1; ++xx) {
              scalar_t* d = op + (p * H + y) * W + xx;
              store(d, load(*d) + share);
            }
          }
        }
      }
    });
  });
  return in_format_of(out, self, kOp);
}

Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d";
  require_cpu_device(self.device(), kOp);
  Tensor out = make_tensor(adaptive_pool_shape(self, output_size, kOp), self.dtype(), kCPU);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor x = contiguous_cpu(self);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    const int64_t H = self.size(-2), W = self.size(-1), oh = output_size[0], ow = output_size[1];
    const int64_t planes = self.numel() / (H * W);
    parallel_rows(planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t h0 = adaptive_start(oy, H, oh), h1 = adaptive_end(oy, H, oh);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t w0 = adaptive_start(ox, W, ow), w1 = adaptive_end(ox, W, ow);
          C s = 0;
          for (int64_t y = h0; y < h1; ++y) {
            for (int64_t xx = w0; xx < w1; ++xx) s += load(xp[(p * H + y) * W + xx]);
          }
          store(op + (p * oh + oy) * ow + ox, s / static_cast<C>((h1 - h0) * (w1 - w0)));
        }
      }
    });
  });
  return in_format_of(out, self, kOp);
}

Tensor adaptive_avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d_backward";
  require_cpu_device(self.device(), kOp);
  adaptive_avg_pool2d_backward_meta(grad_output, self);
  Tensor out = zero_filled(self.sizes(), self.dtype());
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor go = contiguous_cpu(grad_output, self.dtype());
    const auto* gp = static_cast<const scalar_t*>(go.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    const int64_t H = self.size(-2), W = self.size(-1), oh = grad_output.size(-2), ow = grad_output.size(-1);
    const int64_t planes = self.numel() / (H * W);
    parallel_rows(planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      for (int64_t oy = 0; oy < oh; ++oy) {
        const int64_t h0 = adaptive_start(oy, H, oh), h1 = adaptive_end(oy, H, oh);
        for (int64_t ox = 0; ox < ow; ++ox) {
          const int64_t w0 = adaptive_start(ox, W, ow), w1 = adaptive_end(ox, W, ow);
          const C share = load(gp[(p * oh + oy) * ow + ox]) / static_cast<C>((h1 - h0) * (w1 - w0));
          for (int64_t y = h0; y < h1; ++y) {
            for (int64_t xx = w0; xx < w1; ++xx) {
              scalar_t* d = op + (p * H + y) * W + xx;
              store(d, load(*d) + share);
            }
          }
        }
      }
    });
  });
  return in_format_of(out, self, kOp);
}

}  // namespace opspec::internal
