// conv.cu: the kernels of conv_launch.h: direct convolution and its backward,
// max/avg/adaptive-avg 2-D pooling and their backward, and batch norm and
// its backward, in the arithmetic of kernels/cpu/convolution.cc, pooling.cc
// and batch_norm.cc (compute types of kernels/common/opmath.h). No float
// atomics anywhere: every sum runs in one thread or one block in a fixed
// order, so results never depend on timing.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/block_reduce.cuh"
#include "kernels/cuda/conv_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {
namespace {

// kBlock: threads per block of the grid-stride kernels here.
constexpr int kBlock = 256;
// kMaxBlocks: blocks of the grid-stride and block-per-row kernels (they loop over the rest).
constexpr int64_t kMaxBlocks = 65536;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

// row_blocks: one block per row, up to kMaxBlocks.
unsigned row_blocks(int64_t rows) { return static_cast<unsigned>(rows < kMaxBlocks ? rows : kMaxBlocks); }

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }
__device__ __forceinline__ int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }
__device__ __forceinline__ int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

// accumulate: acc + v rounded to T, as the CPU's store(d, load(*d) + v) into
// its output (f16 and bf16 round after every add).
template <class T>
__device__ __forceinline__ T accumulate(T acc, opmath_t<T> v) {
  return static_cast<T>(static_cast<opmath_t<T>>(acc) + v);
}

// ---- Convolution ----

// Note [CUDA convolution]
// Direct kernels instead of the CPU's im2col + gemm (Note [CPU convolution]):
// the forward and the input gradient are one thread per output element,
// summing its (input channel, kernel row, kernel column) terms in that order
// (the input gradient gathers, for each input element, the output positions
// whose window reads it: no scatter, no atomics). The weight and bias
// gradients are one block per element, reducing over images and output
// positions with block_sum's fixed tree. Sums run in another order than
// OpenBLAS's: results agree with the CPU's to rounding, and repeat bit for
// bit. f16 and bf16 compute in f32 and round once, as the CPU does.

template <class T>
__global__ void conv_forward_kernel(const ConvArgs a, const T* x, const T* w, const T* bias, T* y, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1], kh = a.kernel[0], kw = a.kernel[1];
  const int64_t cg = a.in_channels / a.groups, og = a.out_channels / a.groups;
  for (int64_t o = first_index(); o < total; o += grid_stride()) {
    const int64_t ox = o % ow, oy = (o / ow) % oh, oc = (o / (ow * oh)) % a.out_channels;
    const int64_t n = o / (ow * oh * a.out_channels);
    const T* xg = x + (n * a.in_channels + (oc / og) * cg) * H * W;
    const T* wo = w + oc * cg * kh * kw;
    C acc = 0;
    for (int64_t c = 0; c < cg; ++c) {
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t yy = oy * a.stride[0] - a.padding[0] + i * a.dilation[0];
        if (yy < 0 || yy >= H) continue;
        const T* xr = xg + (c * H + yy) * W;
        const T* wr = wo + (c * kh + i) * kw;
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t xx = ox * a.stride[1] - a.padding[1] + j * a.dilation[1];
          if (xx >= 0 && xx < W) acc += static_cast<C>(xr[xx]) * static_cast<C>(wr[j]);
        }
      }
    }
    if (bias != nullptr) acc += static_cast<C>(bias[oc]);
    y[o] = static_cast<T>(acc);
  }
}

// conv_backward_input_kernel: dx[n, ci, y, x] = the sum over the group's
// output channels and kernel positions (i, j) whose output position
// ((y + pad - i * dil) / stride, same for x) exists, of dy there times w,
// plus bias[ci] when given (a transposed convolution's forward).
template <class T>
__global__ void conv_backward_input_kernel(const ConvArgs a, const T* dy, const T* w, const T* bias, T* dx,
                                           int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1], kh = a.kernel[0], kw = a.kernel[1];
  const int64_t cg = a.in_channels / a.groups, og = a.out_channels / a.groups;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t xx = e % W, yy = (e / W) % H, ci = (e / (W * H)) % a.in_channels;
    const int64_t n = e / (W * H * a.in_channels);
    const int64_t gi = ci / cg, c = ci % cg;
    C acc = 0;
    for (int64_t oc = gi * og; oc < (gi + 1) * og; ++oc) {
      const T* dyo = dy + (n * a.out_channels + oc) * oh * ow;
      const T* wo = w + (oc * cg + c) * kh * kw;
      for (int64_t i = 0; i < kh; ++i) {
        const int64_t ty = yy + a.padding[0] - i * a.dilation[0];
        if (ty < 0 || ty % a.stride[0] != 0 || ty / a.stride[0] >= oh) continue;
        const int64_t oy = ty / a.stride[0];
        for (int64_t j = 0; j < kw; ++j) {
          const int64_t tx = xx + a.padding[1] - j * a.dilation[1];
          if (tx < 0 || tx % a.stride[1] != 0 || tx / a.stride[1] >= ow) continue;
          acc += static_cast<C>(dyo[oy * ow + tx / a.stride[1]]) * static_cast<C>(wo[i * kw + j]);
        }
      }
    }
    // A transposed convolution's bias, added after the sum as the CPU's.
    dx[e] = static_cast<T>(bias != nullptr ? acc + static_cast<C>(bias[ci]) : acc);
  }
}

// conv_backward_weight_kernel: one block per weight element (o, c, i, j).
template <class T>
__global__ void __launch_bounds__(kRowThreads) conv_backward_weight_kernel(const ConvArgs a, const T* dy, const T* x,
                                                                           T* dw, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1], kh = a.kernel[0], kw = a.kernel[1];
  const int64_t cg = a.in_channels / a.groups, og = a.out_channels / a.groups;
  const int64_t len = a.batch * oh * ow;
  for (int64_t r = blockIdx.x; r < total; r += gridDim.x) {
    const int64_t j = r % kw, i = (r / kw) % kh, c = (r / (kw * kh)) % cg, oc = r / (kw * kh * cg);
    const int64_t ci = (oc / og) * cg + c;
    C acc = 0;
    for (int64_t e = threadIdx.x; e < len; e += blockDim.x) {
      const int64_t ox = e % ow, oy = (e / ow) % oh, n = e / (ow * oh);
      const int64_t yy = oy * a.stride[0] - a.padding[0] + i * a.dilation[0];
      const int64_t xx = ox * a.stride[1] - a.padding[1] + j * a.dilation[1];
      if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;
      acc += static_cast<C>(dy[((n * a.out_channels + oc) * oh + oy) * ow + ox]) *
             static_cast<C>(x[((n * a.in_channels + ci) * H + yy) * W + xx]);
    }
    acc = block_sum(acc);  // every thread takes part, then the next r
    if (threadIdx.x == 0) dw[r] = static_cast<T>(acc);
  }
}

// conv_backward_bias_kernel: one block per output channel.
template <class T>
__global__ void __launch_bounds__(kRowThreads) conv_backward_bias_kernel(const ConvArgs a, const T* dy, T* db) {
  using C = opmath_t<T>;
  const int64_t opix = a.out[0] * a.out[1], len = a.batch * opix;
  for (int64_t oc = blockIdx.x; oc < a.out_channels; oc += gridDim.x) {
    C acc = 0;
    for (int64_t e = threadIdx.x; e < len; e += blockDim.x) {
      acc += static_cast<C>(dy[((e / opix) * a.out_channels + oc) * opix + e % opix]);
    }
    acc = block_sum(acc);
    if (threadIdx.x == 0) db[oc] = static_cast<T>(acc);
  }
}

// ---- Pooling ----

// max_pool2d_kernel: one thread per output, kernels/cpu/pooling.cc's loop:
// the window clipped to the plane (its start moved in by whole dilations),
// the first element's index and -inf to start, and `v > best || isnan(v)`.
template <class T>
__global__ void max_pool2d_kernel(const PoolArgs a, const T* x, T* y, int64_t* indices, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t o = first_index(); o < total; o += grid_stride()) {
    const int64_t ox = o % ow, oy = (o / ow) % oh, p = o / (ow * oh);
    int64_t h0 = oy * a.stride[0] - a.padding[0];
    const int64_t h1 = min64(h0 + (a.kernel[0] - 1) * a.dilation[0] + 1, H);
    while (h0 < 0) h0 += a.dilation[0];
    int64_t w0 = ox * a.stride[1] - a.padding[1];
    const int64_t w1 = min64(w0 + (a.kernel[1] - 1) * a.dilation[1] + 1, W);
    while (w0 < 0) w0 += a.dilation[1];
    const T* xp = x + p * H * W;
    int64_t best = h0 * W + w0;
    C bv = -C(INFINITY);
    for (int64_t yy = h0; yy < h1; yy += a.dilation[0]) {
      for (int64_t xx = w0; xx < w1; xx += a.dilation[1]) {
        const C v = static_cast<C>(xp[yy * W + xx]);
        if (v > bv || v != v) {
          bv = v;
          best = yy * W + xx;
        }
      }
    }
    y[o] = static_cast<T>(bv);
    indices[o] = best;
  }
}

// Note [Deterministic max_pool2d backward]
// The CPU scatters dy into dx[indices] plane by plane in output order, each
// add rounded to the storage type. On CUDA each input element instead gathers
// the outputs whose window span (kernel extent from the window's unclipped
// start) holds it, in output order, and keeps those whose index names it: the
// same adds in the same order, so the CPU's bits, without atomics. That
// misses an index pointing outside its own window, which max_pool2d never
// produces but a caller may pass; a first kernel flags such indices (and
// those outside the plane, the CPU's error), and when there are any, one
// thread per plane replays the CPU's loop instead.

// in_span: whether input row (or column) v lies in the span of output o's window.
__device__ __forceinline__ bool in_span(int64_t v, int64_t o, int64_t stride, int64_t pad, int64_t kernel,
                                        int64_t dilation) {
  const int64_t start = o * stride - pad;
  return v >= start && v <= start + (kernel - 1) * dilation;
}

__global__ void check_max_indices_kernel(const PoolArgs a, const int64_t* indices, int* flags, int64_t total) {
  const int64_t W = a.in[1], oh = a.out[0], ow = a.out[1], plane = a.in[0] * a.in[1];
  for (int64_t o = first_index(); o < total; o += grid_stride()) {
    const int64_t at = indices[o];
    if (at < 0 || at >= plane) {
      atomicOr(flags, kMaxIndexOutOfRange);
    } else if (!in_span(at / W, (o / ow) % oh, a.stride[0], a.padding[0], a.kernel[0], a.dilation[0]) ||
               !in_span(at % W, o % ow, a.stride[1], a.padding[1], a.kernel[1], a.dilation[1])) {
      atomicOr(flags, kMaxIndexOutsideWindow);
    }
  }
}

// span_first / span_last: the outputs (clipped to [0, out)) whose window span holds input v.
__device__ __forceinline__ int64_t span_first(int64_t v, int64_t stride, int64_t pad, int64_t kernel,
                                              int64_t dilation) {
  const int64_t num = v + pad - (kernel - 1) * dilation;  // o * stride >= num
  return num <= 0 ? 0 : (num + stride - 1) / stride;
}
__device__ __forceinline__ int64_t span_last(int64_t v, int64_t stride, int64_t pad, int64_t out) {
  return min64((v + pad) / stride, out - 1);  // o * stride <= v + pad; v + pad >= 0
}

template <class T>
__global__ void max_pool2d_backward_kernel(const PoolArgs a, const T* dy, const int64_t* indices, T* dx,
                                           int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t xx = e % W, yy = (e / W) % H, p = e / (W * H);
    const int64_t at = yy * W + xx;
    const int64_t y0 = span_first(yy, a.stride[0], a.padding[0], a.kernel[0], a.dilation[0]);
    const int64_t y1 = span_last(yy, a.stride[0], a.padding[0], oh);
    const int64_t x0 = span_first(xx, a.stride[1], a.padding[1], a.kernel[1], a.dilation[1]);
    const int64_t x1 = span_last(xx, a.stride[1], a.padding[1], ow);
    T acc = static_cast<T>(C(0));
    for (int64_t oy = y0; oy <= y1; ++oy) {
      for (int64_t ox = x0; ox <= x1; ++ox) {
        const int64_t o = (p * oh + oy) * ow + ox;
        if (indices[o] == at) acc = accumulate(acc, static_cast<C>(dy[o]));
      }
    }
    dx[e] = acc;
  }
}

// max_pool2d_backward_plane_kernel: one thread per plane, the CPU's loop
// (indices checked to lie in the plane).
template <class T>
__global__ void max_pool2d_backward_plane_kernel(const PoolArgs a, const T* dy, const int64_t* indices, T* dx) {
  using C = opmath_t<T>;
  const int64_t in_plane = a.in[0] * a.in[1], out_plane = a.out[0] * a.out[1];
  for (int64_t p = first_index(); p < a.planes; p += grid_stride()) {
    T* dst = dx + p * in_plane;
    for (int64_t i = 0; i < in_plane; ++i) dst[i] = static_cast<T>(C(0));
    for (int64_t i = 0; i < out_plane; ++i) {
      const int64_t at = indices[p * out_plane + i];
      dst[at] = accumulate(dst[at], static_cast<C>(dy[p * out_plane + i]));
    }
  }
}

// AvgWindow: kernels/cpu/pooling.cc's avg_window: output (oy, ox)'s window
// clipped to the plane, and its divisor.
struct AvgWindow {
  int64_t h0, h1, w0, w1, divisor;
};
__device__ AvgWindow avg_window(const PoolArgs& a, int64_t oy, int64_t ox) {
  int64_t h0 = oy * a.stride[0] - a.padding[0], w0 = ox * a.stride[1] - a.padding[1];
  int64_t h1 = min64(h0 + a.kernel[0], a.in[0] + a.padding[0]);
  int64_t w1 = min64(w0 + a.kernel[1], a.in[1] + a.padding[1]);
  const int64_t pool_size = (h1 - h0) * (w1 - w0);
  h0 = max64(h0, 0);
  w0 = max64(w0, 0);
  h1 = min64(h1, a.in[0]);
  w1 = min64(w1, a.in[1]);
  const int64_t divisor = a.has_divisor ? a.divisor : (a.count_include_pad ? pool_size : (h1 - h0) * (w1 - w0));
  return {h0, h1, w0, w1, divisor};
}

template <class T>
__global__ void avg_pool2d_kernel(const PoolArgs a, const T* x, T* y, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t o = first_index(); o < total; o += grid_stride()) {
    const int64_t ox = o % ow, oy = (o / ow) % oh, p = o / (ow * oh);
    const AvgWindow w = avg_window(a, oy, ox);
    C s = 0;
    for (int64_t yy = w.h0; yy < w.h1; ++yy) {
      for (int64_t xx = w.w0; xx < w.w1; ++xx) s += static_cast<C>(x[(p * H + yy) * W + xx]);
    }
    const bool empty = w.h0 >= w.h1 || w.w0 >= w.w1;
    y[o] = static_cast<T>(empty ? C(0) : s / static_cast<C>(w.divisor));
  }
}

// avg_pool2d_backward_kernel: each input element gathers, in output order,
// the share of every output whose clipped window holds it (the windows
// [o * stride - pad, + kernel) that contain it), rounded after each add as
// the CPU's scatter: its bits.
template <class T>
__global__ void avg_pool2d_backward_kernel(const PoolArgs a, const T* dy, T* dx, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t xx = e % W, yy = (e / W) % H, p = e / (W * H);
    // o * stride - pad <= v < o * stride - pad + kernel.
    const int64_t ny = yy + a.padding[0] - a.kernel[0], nx = xx + a.padding[1] - a.kernel[1];
    const int64_t y0 = ny < 0 ? 0 : ny / a.stride[0] + 1, y1 = min64((yy + a.padding[0]) / a.stride[0], oh - 1);
    const int64_t x0 = nx < 0 ? 0 : nx / a.stride[1] + 1, x1 = min64((xx + a.padding[1]) / a.stride[1], ow - 1);
    T acc = static_cast<T>(C(0));
    for (int64_t oy = y0; oy <= y1; ++oy) {
      for (int64_t ox = x0; ox <= x1; ++ox) {
        const AvgWindow w = avg_window(a, oy, ox);
        acc = accumulate(acc, static_cast<C>(dy[(p * oh + oy) * ow + ox]) / static_cast<C>(w.divisor));
      }
    }
    dx[e] = acc;
  }
}

// adaptive_start / adaptive_end: output o's window [start, end) over `in`
// elements (kernels/cpu/pooling.cc's); the outputs whose windows hold input
// v are the same formulas with in and out swapped.
__device__ __forceinline__ int64_t adaptive_start(int64_t o, int64_t in, int64_t out) { return (o * in) / out; }
__device__ __forceinline__ int64_t adaptive_end(int64_t o, int64_t in, int64_t out) {
  return ((o + 1) * in + out - 1) / out;
}

template <class T>
__global__ void adaptive_avg_pool2d_kernel(const PoolArgs a, const T* x, T* y, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t o = first_index(); o < total; o += grid_stride()) {
    const int64_t ox = o % ow, oy = (o / ow) % oh, p = o / (ow * oh);
    const int64_t h0 = adaptive_start(oy, H, oh), h1 = adaptive_end(oy, H, oh);
    const int64_t w0 = adaptive_start(ox, W, ow), w1 = adaptive_end(ox, W, ow);
    C s = 0;
    for (int64_t yy = h0; yy < h1; ++yy) {
      for (int64_t xx = w0; xx < w1; ++xx) s += static_cast<C>(x[(p * H + yy) * W + xx]);
    }
    y[o] = static_cast<T>(s / static_cast<C>((h1 - h0) * (w1 - w0)));
  }
}

template <class T>
__global__ void adaptive_avg_pool2d_backward_kernel(const PoolArgs a, const T* dy, T* dx, int64_t total) {
  using C = opmath_t<T>;
  const int64_t H = a.in[0], W = a.in[1], oh = a.out[0], ow = a.out[1];
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t xx = e % W, yy = (e / W) % H, p = e / (W * H);
    const int64_t y0 = adaptive_start(yy, oh, H), y1 = min64(adaptive_end(yy, oh, H), oh);
    const int64_t x0 = adaptive_start(xx, ow, W), x1 = min64(adaptive_end(xx, ow, W), ow);
    T acc = static_cast<T>(C(0));
    for (int64_t oy = y0; oy < y1; ++oy) {
      const int64_t rows = adaptive_end(oy, H, oh) - adaptive_start(oy, H, oh);
      for (int64_t ox = x0; ox < x1; ++ox) {
        const int64_t cols = adaptive_end(ox, W, ow) - adaptive_start(ox, W, ow);
        acc = accumulate(acc, static_cast<C>(dy[(p * oh + oy) * ow + ox]) / static_cast<C>(rows * cols));
      }
    }
    dx[e] = acc;
  }
}

// ---- Batch norm ----

// Batch norm computes in f64 for f64 and f32 otherwise (f16 and bf16 too):
// kernels/cpu/batch_norm.cc's C, which opmath_t<T> is. Per-channel sums are
// one block per channel (block_sum's fixed tree), not the CPU's sequential
// loop: statistics agree with the CPU's to rounding; the elementwise parts
// are the CPU's formulas, operation for operation.

// square_root: the correctly rounded root in C's own precision (sqrtf for
// f32: no trip through double), as the CPU's std::sqrt.
template <class C>
__device__ __forceinline__ C square_root(C v) {
  if constexpr (std::is_same_v<C, float>) return ::sqrtf(v);
  else return ::sqrt(v);
}

// channel_at: the offset of element e of channel c's n * inner elements.
__device__ __forceinline__ int64_t channel_at(const BatchNormArgs& a, int64_t c, int64_t e) {
  return ((e / a.inner) * a.channels + c) * a.inner + e % a.inner;
}

template <class T>
__global__ void __launch_bounds__(kRowThreads) batch_norm_stats_kernel(const BatchNormArgs a) {
  using C = opmath_t<T>;
  const auto* x = static_cast<const T*>(a.x);
  const int64_t count = a.n * a.inner;
  for (int64_t c = blockIdx.x; c < a.channels; c += gridDim.x) {
    C sum = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) sum += static_cast<C>(x[channel_at(a, c, e)]);
    sum = block_sum(sum);
    const C m = count > 0 ? sum / static_cast<C>(count) : C(0);
    C vs = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const C d = static_cast<C>(x[channel_at(a, c, e)]) - m;
      vs += d * d;
    }
    vs = block_sum(vs);
    if (threadIdx.x == 0) {
      static_cast<C*>(a.mean)[c] = m;
      static_cast<C*>(a.var_sum)[c] = vs;
      static_cast<C*>(a.invstd)[c] =
          count > 0 ? C(1) / square_root(vs / static_cast<C>(count) + static_cast<C>(a.eps)) : C(0);
    }
  }
}

template <class C>
__global__ void batch_norm_update_running_kernel(const BatchNormArgs a) {
  const C m = static_cast<C>(a.momentum);
  const auto* mean = static_cast<const C*>(a.mean);
  const auto* var_sum = static_cast<const C*>(a.var_sum);
  auto* rm = static_cast<C*>(a.running_mean);
  auto* rv = static_cast<C*>(a.running_var);
  const int64_t count = a.n * a.inner;
  for (int64_t c = first_index(); c < a.channels; c += grid_stride()) {
    if (rm != nullptr) rm[c] = m * mean[c] + (C(1) - m) * rm[c];
    if (rv != nullptr) rv[c] = m * var_sum[c] / static_cast<C>(count - 1) + (C(1) - m) * rv[c];
  }
}

template <class C>
__global__ void batch_norm_eval_invstd_kernel(const BatchNormArgs a) {
  const auto* rv = static_cast<const C*>(a.running_var);
  auto* invstd = static_cast<C*>(a.invstd);
  for (int64_t c = first_index(); c < a.channels; c += grid_stride()) {
    invstd[c] = C(1) / square_root(rv[c] + static_cast<C>(a.eps));
  }
}

template <class T>
__global__ void batch_norm_forward_kernel(const BatchNormArgs a, int64_t total) {
  using C = opmath_t<T>;
  const auto* x = static_cast<const T*>(a.x);
  const auto* w = static_cast<const C*>(a.weight);
  const auto* b = static_cast<const C*>(a.bias);
  const auto* mean = static_cast<const C*>(a.mean);
  const auto* invstd = static_cast<const C*>(a.invstd);
  auto* y = static_cast<T*>(a.y);
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t c = (e / a.inner) % a.channels;
    const C alpha = invstd[c] * (w != nullptr ? w[c] : C(1));
    const C beta = (b != nullptr ? b[c] : C(0)) - mean[c] * alpha;
    y[e] = static_cast<T>(static_cast<C>(x[e]) * alpha + beta);
  }
}

// batch_norm_backward_reduce_kernel: per channel sum(dy) and sum((x - mean)
// dy), and dw = dotp * invstd, db = sum where asked for.
template <class T>
__global__ void __launch_bounds__(kRowThreads) batch_norm_backward_reduce_kernel(const BatchNormArgs a) {
  using C = opmath_t<T>;
  const auto* x = static_cast<const T*>(a.x);
  const auto* dy = static_cast<const T*>(a.dy);
  const auto* mean = static_cast<const C*>(a.mean);
  const auto* invstd = static_cast<const C*>(a.invstd);
  const int64_t count = a.n * a.inner;
  for (int64_t c = blockIdx.x; c < a.channels; c += gridDim.x) {
    C sum = 0, dotp = 0;
    for (int64_t e = threadIdx.x; e < count; e += blockDim.x) {
      const int64_t at = channel_at(a, c, e);
      const C g = static_cast<C>(dy[at]);
      sum += g;
      dotp += (static_cast<C>(x[at]) - mean[c]) * g;
    }
    sum = block_sum(sum);
    dotp = block_sum(dotp);
    if (threadIdx.x == 0) {
      static_cast<C*>(a.sums)[c] = sum;
      static_cast<C*>(a.dotps)[c] = dotp;
      if (a.dw != nullptr) static_cast<T*>(a.dw)[c] = static_cast<T>(dotp * invstd[c]);
      if (a.db != nullptr) static_cast<T*>(a.db)[c] = static_cast<T>(sum);
    }
  }
}

// batch_norm_backward_input_kernel: training: dx = (dy - sum / n - (x -
// mean) * dotp * invstd^2 / n) * invstd * w; eval: dx = dy * invstd * w.
template <class T>
__global__ void batch_norm_backward_input_kernel(const BatchNormArgs a, int64_t total) {
  using C = opmath_t<T>;
  const auto* x = static_cast<const T*>(a.x);
  const auto* dy = static_cast<const T*>(a.dy);
  const auto* w = static_cast<const C*>(a.weight);
  const auto* mean = static_cast<const C*>(a.mean);
  const auto* invstd = static_cast<const C*>(a.invstd);
  const auto* sums = static_cast<const C*>(a.sums);
  const auto* dotps = static_cast<const C*>(a.dotps);
  auto* dx = static_cast<T*>(a.dx);
  const int64_t count = a.n * a.inner;
  for (int64_t e = first_index(); e < total; e += grid_stride()) {
    const int64_t c = (e / a.inner) % a.channels;
    const C g = static_cast<C>(dy[e]);
    const C scale = invstd[c] * (w != nullptr ? w[c] : C(1));
    if (!a.train) {
      dx[e] = static_cast<T>(g * scale);
      continue;
    }
    const C grad_mean = count > 0 ? sums[c] / static_cast<C>(count) : C(0);
    const C k = count > 0 ? dotps[c] * invstd[c] * invstd[c] / static_cast<C>(count) : C(0);
    dx[e] = static_cast<T>((g - grad_mean - (static_cast<C>(x[e]) - mean[c]) * k) * scale);
  }
}

// with_compute: f.template operator()<C>() for code's compute type.
template <class F>
void with_compute(Code code, F&& f) {
  if (code == kF64) return f.template operator()<double>();
  f.template operator()<float>();
}

}  // namespace

// ---- Launchers ----

void launch_conv_forward(Code code, const ConvArgs& a, const void* x, const void* w, const void* bias, void* y) {
  const int64_t total = a.batch * a.out_channels * a.out[0] * a.out[1];
  if (total == 0) return;
  with_floating_code(code, "launch_conv_forward: needs a floating dtype", [&]<class T>() {
    conv_forward_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(x), static_cast<const T*>(w),
                                                          static_cast<const T*>(bias), static_cast<T*>(y), total);
  });
  check_launch("convolution");
}

void launch_conv_backward_input(Code code, const ConvArgs& a, const void* dy, const void* w, const void* bias,
                                void* dx) {
  const int64_t total = a.batch * a.in_channels * a.in[0] * a.in[1];
  if (total == 0) return;
  with_floating_code(code, "launch_conv_backward_input: needs a floating dtype", [&]<class T>() {
    conv_backward_input_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(dy),
                                                                 static_cast<const T*>(w),
                                                                 static_cast<const T*>(bias), static_cast<T*>(dx),
                                                                 total);
  });
  check_launch("convolution_backward");
}

void launch_conv_backward_weight(Code code, const ConvArgs& a, const void* dy, const void* x, void* dw) {
  const int64_t total = a.out_channels * (a.in_channels / a.groups) * a.kernel[0] * a.kernel[1];
  if (total == 0) return;
  const unsigned threads = row_threads(a.batch * a.out[0] * a.out[1]);
  with_floating_code(code, "launch_conv_backward_weight: needs a floating dtype", [&]<class T>() {
    conv_backward_weight_kernel<T><<<row_blocks(total), threads>>>(a, static_cast<const T*>(dy),
                                                                   static_cast<const T*>(x), static_cast<T*>(dw),
                                                                   total);
  });
  check_launch("convolution_backward");
}

void launch_conv_backward_bias(Code code, const ConvArgs& a, const void* dy, void* db) {
  if (a.out_channels == 0) return;
  const unsigned threads = row_threads(a.batch * a.out[0] * a.out[1]);
  with_floating_code(code, "launch_conv_backward_bias: needs a floating dtype", [&]<class T>() {
    conv_backward_bias_kernel<T><<<row_blocks(a.out_channels), threads>>>(a, static_cast<const T*>(dy),
                                                                          static_cast<T*>(db));
  });
  check_launch("convolution_backward");
}

void launch_max_pool2d(Code code, const PoolArgs& a, const void* x, void* y, int64_t* indices) {
  const int64_t total = a.planes * a.out[0] * a.out[1];
  if (total == 0) return;
  with_floating_code(code, "launch_max_pool2d: needs a floating dtype", [&]<class T>() {
    max_pool2d_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(x), static_cast<T*>(y), indices,
                                                        total);
  });
  check_launch("max_pool2d_with_indices");
}

void launch_check_max_indices(const PoolArgs& a, const int64_t* indices, int* flags) {
  const int64_t total = a.planes * a.out[0] * a.out[1];
  if (total == 0) return;
  check_max_indices_kernel<<<blocks_for(total), kBlock>>>(a, indices, flags, total);
  check_launch("max_pool2d_with_indices_backward");
}

void launch_max_pool2d_backward(Code code, const PoolArgs& a, const void* dy, const int64_t* indices, void* dx,
                                bool any_outside_window) {
  const int64_t total = a.planes * a.in[0] * a.in[1];
  if (total == 0) return;
  with_floating_code(code, "launch_max_pool2d_backward: needs a floating dtype", [&]<class T>() {
    const auto* g = static_cast<const T*>(dy);
    if (any_outside_window) {
      max_pool2d_backward_plane_kernel<T><<<blocks_for(a.planes), kBlock>>>(a, g, indices, static_cast<T*>(dx));
    } else {
      max_pool2d_backward_kernel<T><<<blocks_for(total), kBlock>>>(a, g, indices, static_cast<T*>(dx), total);
    }
  });
  check_launch("max_pool2d_with_indices_backward");
}

void launch_avg_pool2d(Code code, const PoolArgs& a, const void* x, void* y) {
  const int64_t total = a.planes * a.out[0] * a.out[1];
  if (total == 0) return;
  with_floating_code(code, "launch_avg_pool2d: needs a floating dtype", [&]<class T>() {
    avg_pool2d_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(x), static_cast<T*>(y), total);
  });
  check_launch("avg_pool2d");
}

void launch_avg_pool2d_backward(Code code, const PoolArgs& a, const void* dy, void* dx) {
  const int64_t total = a.planes * a.in[0] * a.in[1];
  if (total == 0) return;
  with_floating_code(code, "launch_avg_pool2d_backward: needs a floating dtype", [&]<class T>() {
    avg_pool2d_backward_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(dy), static_cast<T*>(dx),
                                                                 total);
  });
  check_launch("avg_pool2d_backward");
}

void launch_adaptive_avg_pool2d(Code code, const PoolArgs& a, const void* x, void* y) {
  const int64_t total = a.planes * a.out[0] * a.out[1];
  if (total == 0) return;
  with_floating_code(code, "launch_adaptive_avg_pool2d: needs a floating dtype", [&]<class T>() {
    adaptive_avg_pool2d_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(x), static_cast<T*>(y),
                                                                 total);
  });
  check_launch("_adaptive_avg_pool2d");
}

void launch_adaptive_avg_pool2d_backward(Code code, const PoolArgs& a, const void* dy, void* dx) {
  const int64_t total = a.planes * a.in[0] * a.in[1];
  if (total == 0) return;
  with_floating_code(code, "launch_adaptive_avg_pool2d_backward: needs a floating dtype", [&]<class T>() {
    adaptive_avg_pool2d_backward_kernel<T><<<blocks_for(total), kBlock>>>(a, static_cast<const T*>(dy),
                                                                          static_cast<T*>(dx), total);
  });
  check_launch("_adaptive_avg_pool2d_backward");
}

void launch_batch_norm_stats(Code code, const BatchNormArgs& a) {
  if (a.channels == 0) return;
  const unsigned threads = row_threads(a.n * a.inner);
  with_floating_code(code, "launch_batch_norm_stats: needs a floating dtype", [&]<class T>() {
    batch_norm_stats_kernel<T><<<row_blocks(a.channels), threads>>>(a);
  });
  check_launch("native_batch_norm");
}

void launch_batch_norm_update_running(Code code, const BatchNormArgs& a) {
  if (a.channels == 0 || (a.running_mean == nullptr && a.running_var == nullptr)) return;
  with_compute(code, [&]<class C>() { batch_norm_update_running_kernel<C><<<blocks_for(a.channels), kBlock>>>(a); });
  check_launch("native_batch_norm");
}

void launch_batch_norm_eval_invstd(Code code, const BatchNormArgs& a) {
  if (a.channels == 0) return;
  with_compute(code, [&]<class C>() { batch_norm_eval_invstd_kernel<C><<<blocks_for(a.channels), kBlock>>>(a); });
  check_launch("native_batch_norm");
}

void launch_batch_norm_forward(Code code, const BatchNormArgs& a) {
  const int64_t total = a.n * a.channels * a.inner;
  if (total == 0) return;
  with_floating_code(code, "launch_batch_norm_forward: needs a floating dtype", [&]<class T>() {
    batch_norm_forward_kernel<T><<<blocks_for(total), kBlock>>>(a, total);
  });
  check_launch("native_batch_norm");
}

void launch_batch_norm_backward(Code code, const BatchNormArgs& a) {
  if (a.channels == 0) return;
  const int64_t total = a.n * a.channels * a.inner;
  const unsigned threads = row_threads(a.n * a.inner);
  with_floating_code(code, "launch_batch_norm_backward: needs a floating dtype", [&]<class T>() {
    batch_norm_backward_reduce_kernel<T><<<row_blocks(a.channels), threads>>>(a);
    check_launch("native_batch_norm_backward");
    if (a.dx != nullptr && total > 0) batch_norm_backward_input_kernel<T><<<blocks_for(total), kBlock>>>(a, total);
  });
  check_launch("native_batch_norm_backward");
}

}  // namespace opspec::internal::cuda
