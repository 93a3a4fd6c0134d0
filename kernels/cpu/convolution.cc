// convolution.cc: CPU kernels of convolution and convolution_backward
// (1-D and 2-D, groups, stride, padding, dilation, transposed). See Note
// [CPU convolution].
#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#include "kernels/common/conv_meta.h"
#include "kernels/common/layout_format.h"
#include "kernels/cpu/convolution_nhwc.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/gemm.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

// Note [CPU convolution]
// im2col + gemm, per image and group: the input patch of every output
// position becomes a column of a [C/groups * kh * kw, oh * ow] matrix (a 1x1
// convolution with stride 1 and no padding reads the input as it is), and
// the group's weight [C_out/groups, C/groups * kh * kw] multiplies it by one
// OpenBLAS call on the calling thread; images run on the OpenMP threads. The
// backward is the transpose: columns of W^T dY scattered back (col2im) for
// the input, dY cols^T for the weight, one partial per image summed in image
// order, so the bits do not depend on the thread count. f16 and bf16 compute
// in f32 and round once. A transposed convolution runs the same three passes
// with roles swapped (See Note [Transposed convolution geometry] in
// kernels/common/conv_meta.h).

// kColumnBudget: im2col elements per gemm in the forward (512 KiB of f32:
// 12.5 ms for BM_Conv2d/resnet against 16.4 ms for whole images).
constexpr int64_t kColumnBudget = int64_t{1} << 17;

bool is_pointwise(const ConvGeometry& g) {
  return g.kernel[0] == 1 && g.kernel[1] == 1 && g.stride[0] == 1 && g.stride[1] == 1 && g.padding[0] == 0 &&
         g.padding[1] == 0 && g.in == g.out;  // a transposed output_padding can make in larger
}

// valid_range: the outputs o in [0, n) whose input position o * stride + offset
// lies in [0, extent), as [lo, hi): the padding outside it reads zeros.
struct ValidRange {
  int64_t lo, hi;
};
ValidRange valid_range(int64_t n, int64_t stride, int64_t offset, int64_t extent) {
  // o >= ceil(-offset / stride) and o <= floor((extent - 1 - offset) / stride).
  auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t lo = std::clamp(-floor_div(offset, stride), int64_t{0}, n);
  const int64_t hi = std::clamp(floor_div(extent - 1 - offset, stride) + 1, lo, n);
  return {lo, hi};
}

// im2col: the patches of `channels` planes x [H, W] for output rows [oy0,
// oy1) as columns. Each column run is the valid range copied (a memcpy at
// stride 1) between zero fills, with no test per element.
template <class C>
void im2col(const C* x, int64_t channels, const ConvGeometry& g, int64_t oy0, int64_t oy1, C* cols) {
  const int64_t H = g.in[0], W = g.in[1], ow = g.out[1], sx = g.stride[1], n = (oy1 - oy0) * ow;
  // Each tap's valid rows and columns, the same for every channel.
  std::vector<ValidRange> tap_ys(static_cast<size_t>(g.kernel[0])), tap_xs(static_cast<size_t>(g.kernel[1]));
  for (int64_t i = 0; i < g.kernel[0]; ++i) {
    tap_ys[i] = valid_range(g.out[0], g.stride[0], i * g.dilation[0] - g.padding[0], H);
  }
  for (int64_t j = 0; j < g.kernel[1]; ++j) tap_xs[j] = valid_range(ow, sx, j * g.dilation[1] - g.padding[1], W);
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      const int64_t y_off = i * g.dilation[0] - g.padding[0];
      const ValidRange ys = tap_ys[i];
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const int64_t x_off = j * g.dilation[1] - g.padding[1];
        const ValidRange xs = tap_xs[j];
        C* row = cols + ((c * g.kernel[0] + i) * g.kernel[1] + j) * n;  // output row oy at (oy - oy0) * ow
        const int64_t y_lo = std::clamp(ys.lo, oy0, oy1), y_hi = std::clamp(ys.hi, y_lo, oy1);
        std::fill(row, row + (y_lo - oy0) * ow, C(0));
        for (int64_t oy = y_lo; oy < y_hi; ++oy) {
          C* r = row + (oy - oy0) * ow;
          const C* xr = x + (c * H + oy * g.stride[0] + y_off) * W + x_off;
          std::fill(r, r + xs.lo, C(0));
          if (sx == 1) {
            std::memcpy(r + xs.lo, xr + xs.lo, static_cast<size_t>(xs.hi - xs.lo) * sizeof(C));
          } else {
            for (int64_t ox = xs.lo; ox < xs.hi; ++ox) r[ox] = xr[ox * sx];
          }
          std::fill(r + xs.hi, r + ow, C(0));
        }
        std::fill(row + (y_hi - oy0) * ow, row + n, C(0));
      }
    }
  }
}

// col2im: the transpose of im2col, accumulating into x (zeroed by the caller).
template <class C>
void col2im(const C* cols, int64_t channels, const ConvGeometry& g, C* x) {
  const int64_t H = g.in[0], W = g.in[1], oh = g.out[0], ow = g.out[1];
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t i = 0; i < g.kernel[0]; ++i) {
      for (int64_t j = 0; j < g.kernel[1]; ++j) {
        const C* row = cols + ((c * g.kernel[0] + i) * g.kernel[1] + j) * oh * ow;
        for (int64_t oy = 0; oy < oh; ++oy) {
          const int64_t y = oy * g.stride[0] - g.padding[0] + i * g.dilation[0];
          if (y < 0 || y >= H) continue;
          C* xr = x + (c * H + y) * W;
          for (int64_t ox = 0; ox < ow; ++ox) {
            const int64_t xx = ox * g.stride[1] - g.padding[1] + j * g.dilation[1];
            if (xx >= 0 && xx < W) xr[xx] += row[oy * ow + ox];
          }
        }
      }
    }
  }
}

// Work: a convolution's sizes in the compute type C, for the three passes.
struct Work {
  int64_t cg, og, plane, opix, kdim;
  bool pointwise, parallel;
};
Work work_of(const ConvGeometry& g) {
  Work w;
  w.cg = g.in_channels / g.groups;
  w.og = g.out_channels / g.groups;
  w.plane = g.in[0] * g.in[1];
  w.opix = g.out[0] * g.out[1];
  w.kdim = w.cg * g.kernel[0] * g.kernel[1];
  w.pointwise = is_pointwise(g);
  w.parallel = g.batch * g.out_channels * w.opix * w.kdim >= (int64_t{1} << 16);
  return w;
}

// forward_pass: y = conv(x, w) (+ bias per output channel when non-null),
// y [N, out_channels, out] written whole.
template <class C>
void forward_pass(const ConvGeometry& g, const C* xp, const C* wp, const C* bp, C* yp) {
  const Work k = work_of(g);
  // Output rows per gemm: their columns stay in L2 for the gemm's packing (See Note [CPU convolution]).
  const int64_t ow = g.out[1];
  const int64_t rows = std::clamp(kColumnBudget / std::max<int64_t>(k.kdim * ow, 1), int64_t{1}, g.out[0]);
  parallel_rows_with(
      g.batch, k.parallel,
      [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(k.kdim * rows * ow)); },
      [&](int64_t n, std::vector<C>& cols) {
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const C* xg = xp + (n * g.in_channels + gi * k.cg) * k.plane;
          C* yg = yp + (n * g.out_channels + gi * k.og) * k.opix;
          if (bp != nullptr) {
            for (int64_t o = 0; o < k.og; ++o) std::fill(yg + o * k.opix, yg + (o + 1) * k.opix, bp[gi * k.og + o]);
          }
          const C* wg = wp + gi * k.og * k.kdim;
          const C beta = bp != nullptr ? C(1) : C(0);
          if (k.pointwise) {
            gemm<C>(false, false, k.og, k.opix, k.kdim, C(1), wg, k.kdim, xg, k.opix, beta, yg, k.opix);
            continue;
          }
          for (int64_t oy0 = 0; oy0 < g.out[0]; oy0 += rows) {
            const int64_t oy1 = std::min(oy0 + rows, g.out[0]), cols_n = (oy1 - oy0) * ow;
            im2col<C>(xg, k.cg, g, oy0, oy1, cols.data());
            gemm<C>(false, false, k.og, cols_n, k.kdim, C(1), wg, k.kdim, cols.data(), cols_n, beta, yg + oy0 * ow,
                    k.opix);
          }
        }
      });
}

// input_grad_pass: dx = the adjoint of conv(., w) applied to dy (W^T dy
// scattered back by col2im), dx [N, in_channels, in] written whole.
template <class C>
void input_grad_pass(const ConvGeometry& g, const C* dyp, const C* wp, C* dxp) {
  const Work k = work_of(g);
  std::fill(dxp, dxp + g.batch * g.in_channels * k.plane, C(0));
  parallel_rows_with(
      g.batch, k.parallel,
      [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(k.kdim * k.opix)); },
      [&](int64_t n, std::vector<C>& cols) {
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const C* dyg = dyp + (n * g.out_channels + gi * k.og) * k.opix;
          const C* wg = wp + gi * k.og * k.kdim;
          C* dxg = dxp + (n * g.in_channels + gi * k.cg) * k.plane;
          if (k.pointwise) {
            gemm<C>(true, false, k.kdim, k.opix, k.og, C(1), wg, k.kdim, dyg, k.opix, C(0), dxg, k.opix);
          } else {
            gemm<C>(true, false, k.kdim, k.opix, k.og, C(1), wg, k.kdim, dyg, k.opix, C(0), cols.data(), k.opix);
            col2im<C>(cols.data(), k.cg, g, dxg);
          }
        }
      });
}

// weight_grad_pass: dw = dy cols(x)^T, one partial per image summed in image
// order (the bits do not depend on the thread count).
template <class C>
void weight_grad_pass(const ConvGeometry& g, const C* xp, const C* dyp, C* dwp) {
  const Work k = work_of(g);
  const int64_t wsize = g.out_channels * k.kdim;
  std::vector<C> parts(static_cast<size_t>(g.batch * wsize));
  parallel_rows_with(
      g.batch, k.parallel,
      [&] { return std::vector<C>(k.pointwise ? 0 : static_cast<size_t>(k.kdim * k.opix)); },
      [&](int64_t n, std::vector<C>& cols) {
        for (int64_t gi = 0; gi < g.groups; ++gi) {
          const C* xg = xp + (n * g.in_channels + gi * k.cg) * k.plane;
          const C* dyg = dyp + (n * g.out_channels + gi * k.og) * k.opix;
          const C* src = xg;
          if (!k.pointwise) {
            im2col<C>(xg, k.cg, g, 0, g.out[0], cols.data());
            src = cols.data();
          }
          gemm<C>(false, true, k.og, k.kdim, k.opix, C(1), dyg, k.opix, src, k.opix, C(0),
                  parts.data() + n * wsize + gi * k.og * k.kdim, k.kdim);
        }
      });
  std::fill(dwp, dwp + wsize, C(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    const C* p = parts.data() + n * wsize;
    for (int64_t i = 0; i < wsize; ++i) dwp[i] += p[i];
  }
}

// channel_sums: s[c] = the sum of t[n, c, :] over images n, in order.
template <class C>
void channel_sums(const C* t, int64_t batch, int64_t channels, int64_t pixels, C* s) {
  for (int64_t c = 0; c < channels; ++c) {
    C sum = 0;
    for (int64_t n = 0; n < batch; ++n) {
      const C* r = t + (n * channels + c) * pixels;
      for (int64_t i = 0; i < pixels; ++i) sum += r[i];
    }
    s[c] = sum;
  }
}

// conv_forward: a regular convolution's forward pass, or a transposed one's
// input-gradient pass plus the bias (See Note [Transposed convolution geometry]).
template <class T>
void conv_forward(const ConvGeometry& g, const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                  Tensor& out) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr DType kC = dtype_of<C>();
  const Tensor x = contiguous_cpu(input, kC), w = contiguous_cpu(weight, kC);
  const Tensor b = bias ? contiguous_cpu(*bias, kC) : Tensor();
  conv_compute_into<T>(out, [&](C* y) {
    if (!g.transposed) return forward_pass<C>(g, conv_data<C>(x), conv_data<C>(w), conv_data<C>(b), y);
    input_grad_pass<C>(g, conv_data<C>(x), conv_data<C>(w), y);
    if (!b.defined()) return;
    const C* bp = conv_data<C>(b);
    const int64_t plane = g.in[0] * g.in[1];
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t c = 0; c < g.in_channels; ++c) {
        C* r = y + (n * g.in_channels + c) * plane;
        for (int64_t i = 0; i < plane; ++i) r[i] += bp[c];
      }
    }
  });
}

// conv_backward: the gradients of input, weight and bias each asked for;
// a transposed convolution's swap the passes' roles (See Note [Transposed
// convolution geometry]).
template <class T>
void conv_backward(const ConvGeometry& g, const Tensor& grad_output, const Tensor& input, const Tensor& weight,
                   Tensor& dx, Tensor& dw, Tensor& db) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr DType kC = dtype_of<C>();
  const Tensor x = contiguous_cpu(input, kC), w = contiguous_cpu(weight, kC), dy = contiguous_cpu(grad_output, kC);
  // In the regular convolution's terms: its input and its output's gradient.
  const C* conv_in = conv_data<C>(g.transposed ? dy : x);
  const C* conv_dout = conv_data<C>(g.transposed ? x : dy);
  if (dx.defined()) {
    conv_compute_into<T>(dx, [&](C* d) {
      if (g.transposed) return forward_pass<C>(g, conv_in, conv_data<C>(w), nullptr, d);
      input_grad_pass<C>(g, conv_dout, conv_data<C>(w), d);
    });
  }
  if (dw.defined()) conv_compute_into<T>(dw, [&](C* d) { weight_grad_pass<C>(g, conv_in, conv_dout, d); });
  if (db.defined()) {
    conv_compute_into<T>(db, [&](C* d) {
      if (g.transposed) return channel_sums<C>(conv_in, g.batch, g.in_channels, g.in[0] * g.in[1], d);
      channel_sums<C>(conv_dout, g.batch, g.out_channels, g.out[0] * g.out[1], d);
    });
  }
}

}  // namespace

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                       IntArrayRef output_padding, int64_t groups) {
  constexpr std::string_view kOp = "aten::convolution";
  require_cpu_device(input.device(), kOp);
  const ConvGeometry g =
      conv_geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, kOp);
  const MemoryFormat format = conv_memory_format(input, weight);
  if (nhwc_convolution_applies(g, format)) {
    // Computed in the channels-last result itself (See Note [Channels-last convolution]).
    Tensor out = make_strided(g.out_sizes, strides_for(g.out_sizes, format, kOp), input.dtype(), kCPU);
    if (out.numel() != 0) convolution_nhwc(g, input, weight, bias, out);
    return out;
  }
  Tensor out = make_tensor(g.out_sizes, input.dtype(), kCPU);
  if (out.numel() != 0) {
    OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp, [&] { conv_forward<scalar_t>(g, input, weight, bias, out); });
  }
  // Computed row-major, then laid out as PyTorch's kernel allocates it (See Note [Model op layouts]).
  return in_format(out, format, kOp, copy_into);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_cpu(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, OptionalIntArrayRef bias_sizes,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::convolution_backward";
  require_cpu_device(input.device(), kOp);
  auto [mx, mw, mb] = convolution_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                                transposed, output_padding, groups, output_mask);
  const ConvGeometry g = conv_geometry(input, weight, std::nullopt, stride, padding, dilation, transposed,
                                       output_padding, groups, kOp);
  if (nhwc_convolution_applies(g, conv_memory_format(input, weight))) {
    // The Meta kernel's channels-last gradients, computed in place (See Note [Channels-last convolution]).
    Tensor dx = mx.defined() ? make_strided(mx.sizes(), mx.strides(), input.dtype(), kCPU) : Tensor();
    Tensor dw = mw.defined() ? make_strided(mw.sizes(), mw.strides(), weight.dtype(), kCPU) : Tensor();
    Tensor db = mb.defined() ? make_tensor(mb.sizes(), input.dtype(), kCPU) : Tensor();
    convolution_backward_nhwc(g, grad_output, input, weight, dx, dw, db);
    return {dx, dw, db};
  }
  Tensor dx = mx.defined() ? make_tensor(mx.sizes(), input.dtype(), kCPU) : Tensor();
  Tensor dw = mw.defined() ? make_tensor(mw.sizes(), weight.dtype(), kCPU) : Tensor();
  Tensor db = mb.defined() ? make_tensor(mb.sizes(), input.dtype(), kCPU) : Tensor();
  OPSPEC_DISPATCH_FLOATING_DTYPES(input.dtype(), kOp,
                                  [&] { conv_backward<scalar_t>(g, grad_output, input, weight, dx, dw, db); });
  // The gradients take the Meta kernel's strides (the forward's layout; an empty input's zeros_like).
  auto laid = [](const Tensor& d, const Tensor& like) {
    return d.defined() ? with_strides(d, like.strides(), copy_into) : d;
  };
  return {laid(dx, mx), laid(dw, mw), db};
}

}  // namespace opspec::internal
