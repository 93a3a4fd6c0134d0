// convolution_nhwc.cc: a 2-D convolution and its gradients computed in the
// channels-last layout itself. See Note [Channels-last convolution].
#include "kernels/cpu/convolution_nhwc.h"

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/cpu/channels_last.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

// Note [Channels-last convolution]
// A convolution whose result is channels-last (conv_memory_format) runs in
// NHWC instead of computing row-major and transposing in and out (See Note
// [Model op layouts]): the input is read as [N, H, W, C] (its own memory
// when it is channels-last), the weight as [C_out, kh, kw, C / groups] (its
// own memory when channels-last, else a copy: 147 KiB for ResNet's 3x3),
// and im2col's rows are output pixels, each kh * kw runs of C / groups
// channels copied whole. One gemm per block of pixels then writes
// Y [pixels, C_out] straight into the result's rows; a 1x1 convolution of
// stride 1 multiplies the input's rows as they are. The gradients are the
// transposes, as in Note [CPU convolution]: dx by dY W scattered back a
// channel run at a time, dw by dY^T cols summed per image in image order.
// The weight gradient is [C_out, kh, kw, C / groups] in memory: the
// channels-last layout the result takes.
// Values: each output sums the same products as the row-major path, but over
// (kh, kw, c) instead of (c, kh, kw), and the input gradient adds a pixel's
// taps in another order, so they differ from it by rounding (a few ulp of the
// sum of |terms|), as PyTorch's channels-last CPU convolution (oneDNN) does
// from its contiguous one. The bias gradient adds in the row-major order:
// the same bits.

// kPixelBudget: im2col elements per gemm (512 KiB of f32, as kColumnBudget of Note [CPU convolution]).
constexpr int64_t kPixelBudget = int64_t{1} << 17;

// Nhwc: a convolution's sizes for the NHWC passes.
struct Nhwc {
  int64_t H, W, oh, ow, cg, og, cin, cout, taps, kdim, plane, opix;
  bool pointwise, parallel;
};
Nhwc nhwc_of(const ConvGeometry& g) {
  Nhwc k;
  k.H = g.in[0];
  k.W = g.in[1];
  k.oh = g.out[0];
  k.ow = g.out[1];
  k.cin = g.in_channels;
  k.cout = g.out_channels;
  k.cg = g.in_channels / g.groups;
  k.og = g.out_channels / g.groups;
  k.taps = g.kernel[0] * g.kernel[1];
  k.kdim = k.taps * k.cg;
  k.plane = k.H * k.W;
  k.opix = k.oh * k.ow;
  k.pointwise = g.kernel[0] == 1 && g.kernel[1] == 1 && g.stride[0] == 1 && g.stride[1] == 1 &&
                g.padding[0] == 0 && g.padding[1] == 0;
  k.parallel = g.batch * k.cout * k.opix * k.kdim >= (int64_t{1} << 16);
  return k;
}

// block_pixels: output pixels per gemm, so that their columns stay in L2.
int64_t block_pixels(const Nhwc& k) {
  return std::clamp(kPixelBudget / std::max<int64_t>(k.kdim, 1), int64_t{1}, std::max<int64_t>(k.opix, 1));
}

// Tap: input pixel (iy, ix) of output pixel p's tap t, or nothing in the padding.
struct TapWalk {
  const ConvGeometry& g;
  const Nhwc& k;
  // f(t, input pixel index or -1) for every tap of output pixel p, in (kh, kw) order.
  template <class F>
  void each(int64_t p, F&& f) const {
    const int64_t oy = p / k.ow, ox = p % k.ow;
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      const int64_t iy = oy * g.stride[0] - g.padding[0] + i * g.dilation[0];
      const bool row_ok = iy >= 0 && iy < k.H;
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const int64_t ix = ox * g.stride[1] - g.padding[1] + j * g.dilation[1];
        f(i * g.kernel[1] + j, row_ok && ix >= 0 && ix < k.W ? iy * k.W + ix : int64_t{-1});
      }
    }
  }
};

// im2col_nhwc: rows of output pixels [p0, p1): each tap's cg channels of
// image x (pixel stride cin) or zeros in the padding.
template <class C>
void im2col_nhwc(const C* x, const ConvGeometry& g, const Nhwc& k, int64_t p0, int64_t p1, C* cols) {
  const TapWalk walk{g, k};
  const size_t run = static_cast<size_t>(k.cg) * sizeof(C);
  for (int64_t p = p0; p < p1; ++p) {
    C* row = cols + (p - p0) * k.kdim;
    walk.each(p, [&](int64_t t, int64_t pix) {
      if (pix < 0) {
        std::memset(row + t * k.cg, 0, run);  // all-zero bits: 0.0 in float and double
      } else {
        std::memcpy(row + t * k.cg, x + pix * k.cin, run);
      }
    });
  }
}

// col2im_nhwc: the transpose of im2col_nhwc, accumulating into image dx.
template <class C>
void col2im_nhwc(const C* cols, const ConvGeometry& g, const Nhwc& k, int64_t p0, int64_t p1, C* dx) {
  const TapWalk walk{g, k};
  for (int64_t p = p0; p < p1; ++p) {
    const C* row = cols + (p - p0) * k.kdim;
    walk.each(p, [&](int64_t t, int64_t pix) {
      if (pix < 0) return;
      C* d = dx + pix * k.cin;
      const C* s = row + t * k.cg;
      for (int64_t c = 0; c < k.cg; ++c) d[c] += s[c];
    });
  }
}

// forward_nhwc: y [N, oh, ow, cout] = conv(x [N, H, W, cin], w [cout, kh, kw, cg]) (+ bias).
template <class C>
void forward_nhwc(const ConvGeometry& g, const C* xp, const C* wp, const C* bp, C* yp) {
  const Nhwc k = nhwc_of(g);
  const int64_t block = block_pixels(k);
  parallel_rows_with(
      g.batch, k.parallel, [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(block * k.kdim)); },
      [&](int64_t n, std::vector<C>& cols) {
        const C* x = xp + n * k.plane * k.cin;
        C* y = yp + n * k.opix * k.cout;
        if (bp != nullptr) {
          for (int64_t p = 0; p < k.opix; ++p) std::copy(bp, bp + k.cout, y + p * k.cout);
        }
        const C beta = bp != nullptr ? C(1) : C(0);
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const C* wg = wp + gi * k.og * k.kdim;
          if (k.pointwise) {
            gemm<C>(false, true, k.opix, k.og, k.kdim, C(1), x + gi * k.cg, k.cin, wg, k.kdim, beta, y + gi * k.og,
                    k.cout);
            continue;
          }
          for (int64_t p0 = 0; p0 < k.opix; p0 += block) {
            const int64_t p1 = std::min(p0 + block, k.opix);
            im2col_nhwc<C>(x + gi * k.cg, g, k, p0, p1, cols.data());
            gemm<C>(false, true, p1 - p0, k.og, k.kdim, C(1), cols.data(), k.kdim, wg, k.kdim, beta,
                    y + p0 * k.cout + gi * k.og, k.cout);
          }
        }
      });
}

// input_grad_nhwc: dx [N, H, W, cin] = the adjoint of conv(., w) applied to dy [N, oh, ow, cout].
template <class C>
void input_grad_nhwc(const ConvGeometry& g, const C* dyp, const C* wp, C* dxp) {
  const Nhwc k = nhwc_of(g);
  const int64_t block = block_pixels(k);
  parallel_rows_with(
      g.batch, k.parallel, [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(block * k.kdim)); },
      [&](int64_t n, std::vector<C>& cols) {
        const C* dy = dyp + n * k.opix * k.cout;
        C* dx = dxp + n * k.plane * k.cin;
        if (!k.pointwise) std::fill(dx, dx + k.plane * k.cin, C(0));
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const C* wg = wp + gi * k.og * k.kdim;
          if (k.pointwise) {
            gemm<C>(false, false, k.opix, k.kdim, k.og, C(1), dy + gi * k.og, k.cout, wg, k.kdim, C(0),
                    dx + gi * k.cg, k.cin);
            continue;
          }
          for (int64_t p0 = 0; p0 < k.opix; p0 += block) {
            const int64_t p1 = std::min(p0 + block, k.opix);
            gemm<C>(false, false, p1 - p0, k.kdim, k.og, C(1), dy + p0 * k.cout + gi * k.og, k.cout, wg, k.kdim, C(0),
                    cols.data(), k.kdim);
            col2im_nhwc<C>(cols.data(), g, k, p0, p1, dx + gi * k.cg);
          }
        }
      });
}

// weight_grad_nhwc: dw [cout, kh, kw, cg] = dy^T cols(x), one partial per
// image summed in image order (the bits do not depend on the thread count).
template <class C>
void weight_grad_nhwc(const ConvGeometry& g, const C* xp, const C* dyp, C* dwp) {
  const Nhwc k = nhwc_of(g);
  const int64_t block = block_pixels(k), wsize = k.cout * k.kdim;
  std::vector<C> parts(static_cast<size_t>(g.batch * wsize));
  parallel_rows_with(
      g.batch, k.parallel, [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(block * k.kdim)); },
      [&](int64_t n, std::vector<C>& cols) {
        const C* x = xp + n * k.plane * k.cin;
        const C* dy = dyp + n * k.opix * k.cout;
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          C* part = parts.data() + n * wsize + gi * k.og * k.kdim;
          if (k.pointwise) {
            gemm<C>(true, false, k.og, k.kdim, k.opix, C(1), dy + gi * k.og, k.cout, x + gi * k.cg, k.cin, C(0), part,
                    k.kdim);
            continue;
          }
          for (int64_t p0 = 0; p0 < k.opix; p0 += block) {
            const int64_t p1 = std::min(p0 + block, k.opix);
            im2col_nhwc<C>(x + gi * k.cg, g, k, p0, p1, cols.data());
            gemm<C>(true, false, k.og, k.kdim, p1 - p0, C(1), dy + p0 * k.cout + gi * k.og, k.cout, cols.data(),
                    k.kdim, p0 == 0 ? C(0) : C(1), part, k.kdim);
          }
        }
      });
  std::fill(dwp, dwp + wsize, C(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    const C* p = parts.data() + n * wsize;
    for (int64_t i = 0; i < wsize; ++i) dwp[i] += p[i];
  }
}

// channel_sums_nhwc: s[c] = the sum of t[n, :, c] over images and pixels,
// each channel added in the row-major path's order (images, then pixels).
template <class C>
void channel_sums_nhwc(const C* t, int64_t rows, int64_t channels, C* s) {
  std::fill(s, s + channels, C(0));
  for (int64_t r = 0; r < rows; ++r) {
    const C* row = t + r * channels;
    for (int64_t c = 0; c < channels; ++c) s[c] += row[c];
  }
}

// weight_rows: the weight [C_out, C / groups, kh, kw] as [C_out, kh, kw, C / groups] in C (its
// own memory when it is channels-last): permuted on this thread, since a copy this small (147 KiB
// for ResNet's 3x3) costs less than waking the OpenMP team, twice a block on a loaded machine.
template <class C>
Tensor weight_rows(const Tensor& weight) {
  if (is_contiguous(weight, MemoryFormat::kChannelsLast) && weight.dtype() == dtype_of<C>()) {
    return channels_last_rows(weight);
  }
  const Tensor w = contiguous_cpu(weight, dtype_of<C>());
  const int64_t O = w.size(0), cg = w.size(1), taps = w.size(2) * w.size(3);
  Tensor rows = make_tensor({O, w.size(2), w.size(3), cg}, dtype_of<C>(), kCPU);
  const auto* src = static_cast<const C*>(w.raw_data());
  auto* dst = static_cast<C*>(rows.raw_data());
  for (int64_t o = 0; o < O; ++o) {
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t t = 0; t < taps; ++t) dst[(o * taps + t) * cg + c] = src[(o * cg + c) * taps + t];
    }
  }
  return rows;
}

}  // namespace

bool nhwc_convolution_applies(const ConvGeometry& g, MemoryFormat format) {
  return format == MemoryFormat::kChannelsLast && !g.transposed && g.spatial_dims == 2;
}

void convolution_nhwc(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias, Tensor& out) {
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), "aten::convolution", [&] {
    using C = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    constexpr DType kC = dtype_of<C>();
    const Tensor x = channels_last_rows(input, kC), w = weight_rows<C>(weight);
    const Tensor b = bias ? contiguous_cpu(*bias, kC) : Tensor();
    conv_compute_into<scalar_t>(out, [&](C* y) { forward_nhwc<C>(g, conv_data<C>(x), conv_data<C>(w), conv_data<C>(b), y); });
  });
}

void convolution_backward_nhwc(const ConvGeometry& g, const Tensor& grad_output, const Tensor& input,
                               const Tensor& weight, Tensor& dx, Tensor& dw, Tensor& db) {
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), "aten::convolution_backward", [&] {
    using C = std::conditional_t<std::is_same_v<scalar_t, double>, double, float>;
    constexpr DType kC = dtype_of<C>();
    const Tensor dy = channels_last_rows(grad_output, kC);
    if (dx.defined()) {
      const Tensor w = weight_rows<C>(weight);
      conv_compute_into<scalar_t>(dx, [&](C* d) { input_grad_nhwc<C>(g, conv_data<C>(dy), conv_data<C>(w), d); });
    }
    if (dw.defined()) {
      const Tensor x = channels_last_rows(input, kC);
      conv_compute_into<scalar_t>(dw, [&](C* d) { weight_grad_nhwc<C>(g, conv_data<C>(x), conv_data<C>(dy), d); });
    }
    if (db.defined()) {
      conv_compute_into<scalar_t>(db, [&](C* d) {
        channel_sums_nhwc<C>(conv_data<C>(dy), g.batch * g.out[0] * g.out[1], g.out_channels, d);
      });
    }
  });
}

}  // namespace opspec::internal
