// pooling.cc: CPU kernels of max_pool2d_with_indices, avg_pool2d,
// _adaptive_avg_pool2d and their backward ops, plane by plane over the
// OpenMP threads, with PyTorch's window rules.
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/common/conv_meta.h"
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

// zero_filled: a contiguous cpu tensor of zeros (all-zero bits in every dtype).
Tensor zero_filled(IntArrayRef sizes, DType dtype) {
  Tensor t = make_tensor(sizes, dtype, kCPU);
  std::memset(t.raw_data(), 0, t.nbytes());
  return t;
}

}  // namespace

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                       bool ceil_mode) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices";
  require_cpu_device(self.device(), kOp);
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  Tensor idx = make_tensor(g.out_sizes, DType::kInt64, kCPU);
  if (out.numel() == 0) return {out, idx};
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor x = contiguous_cpu(self);
    const auto* xp = static_cast<const scalar_t*>(x.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    auto* ip = idx.data_ptr<int64_t>();
    const int64_t H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
    parallel_rows(g.planes, self.numel() >= kParallelGrain, [&](int64_t p) {
      const scalar_t* xpl = xp + p * H * W;
      for (int64_t oy = 0; oy < oh; ++oy) {
        int64_t h0 = oy * g.stride[0] - g.padding[0];
        const int64_t h1 = std::min(h0 + (g.kernel[0] - 1) * g.dilation[0] + 1, H);
        while (h0 < 0) h0 += g.dilation[0];
        for (int64_t ox = 0; ox < ow; ++ox) {
          int64_t w0 = ox * g.stride[1] - g.padding[1];
          const int64_t w1 = std::min(w0 + (g.kernel[1] - 1) * g.dilation[1] + 1, W);
          while (w0 < 0) w0 += g.dilation[1];
          // PyTorch's loop: the first window element's index, -inf, and NaN wins.
          int64_t best = h0 * W + w0;
          C bv = -std::numeric_limits<C>::infinity();
          for (int64_t y = h0; y < h1; y += g.dilation[0]) {
            for (int64_t xx = w0; xx < w1; xx += g.dilation[1]) {
              const C v = load(xpl[y * W + xx]);
              if (v > bv || std::isnan(v)) {
                bv = v;
                best = y * W + xx;
              }
            }
          }
          store(op + (p * oh + oy) * ow + ox, bv);
          ip[(p * oh + oy) * ow + ox] = best;
        }
      }
    });
  });
  return {out, idx};
}

Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices_backward";
  require_cpu_device(self.device(), kOp);
  max_pool2d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
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
  return out;
}

Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr std::string_view kOp = "aten::avg_pool2d";
  require_cpu_device(self.device(), kOp);
  avg_pool2d_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, kOp);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  if (out.numel() == 0) return out;
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
  return out;
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
  return out;
}

Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d";
  require_cpu_device(self.device(), kOp);
  Tensor out = make_tensor(adaptive_pool_shape(self, output_size, kOp), self.dtype(), kCPU);
  if (out.numel() == 0) return out;
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
  return out;
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
  return out;
}

}  // namespace opspec::internal
