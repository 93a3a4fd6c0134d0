// conv_launch.h: the launchers of kernels/cuda/conv.cu (convolution and its
// backward, max/avg/adaptive-avg 2-D pooling and their backward, batch norm
// and its backward) over raw device pointers, shared by conv.cc (host side)
// and conv.cu, in plain C++ types as launch.h's (See Note [Elementwise
// launches] in launch.h). Every tensor is contiguous; element types are one
// floating `code` (f32, f64, f16, bf16) computed in opmath_t (f32 for f16
// and bf16), as the CPU kernels do.
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// ConvArgs: a convolution of input [batch, in_channels, in[0], in[1]] by
// weight [out_channels, in_channels / groups, kernel[0], kernel[1]] into
// [batch, out_channels, out[0], out[1]] (1-D as height 1), kernels/common/
// conv_meta.h's ConvGeometry in plain types.
struct ConvArgs {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
};

// launch_conv_forward: y = conv(x, w) + bias (bias null: none).
void launch_conv_forward(Code code, const ConvArgs& a, const void* x, const void* w, const void* bias, void* y);
// launch_conv_backward_input: dx = the transposed convolution of dy by w
// (+ bias per input channel when non-null: a transposed convolution's forward,
// See Note [Transposed convolution geometry] in kernels/common/conv_meta.h).
void launch_conv_backward_input(Code code, const ConvArgs& a, const void* dy, const void* w, const void* bias,
                                void* dx);
// launch_conv_backward_weight: dw[o, c, i, j] = the sum over images and
// output positions of dy times the input element (o, c, i, j) read there;
// zeros when batch is 0.
void launch_conv_backward_weight(Code code, const ConvArgs& a, const void* dy, const void* x, void* dw);
// launch_conv_backward_bias: db[o] = the sum of dy[:, o] ([out_channels]).
void launch_conv_backward_bias(Code code, const ConvArgs& a, const void* dy, void* db);

// PoolArgs: a 2-D pooling of `planes` planes in[0] x in[1] into out[0] x
// out[1], kernels/common/conv_meta.h's PoolGeometry in plain types (adaptive
// pooling reads planes, in and out only); avg_pool2d's divisor rule too.
struct PoolArgs {
  int64_t planes = 0;
  int64_t in[2] = {1, 1}, out[2] = {1, 1}, kernel[2] = {1, 1};
  int64_t stride[2] = {1, 1}, padding[2] = {0, 0}, dilation[2] = {1, 1};
  bool count_include_pad = true;
  bool has_divisor = false;  // divisor_override given: every window divides by `divisor`
  int64_t divisor = 1;
};

// launch_max_pool2d: y and the i64 indices (into each input plane) of each
// window's max, as kernels/cpu/pooling.cc picks it.
void launch_max_pool2d(Code code, const PoolArgs& a, const void* x, void* y, int64_t* indices);

// Flags of launch_check_max_indices (the caller zeroes *flags first).
inline constexpr int kMaxIndexOutOfRange = 1;  // an index outside its plane: the CPU's error
inline constexpr int kMaxIndexOutsideWindow = 2;  // one inside the plane but not in its output's window

// launch_check_max_indices: ORs into *flags what the i64 indices (shaped as
// the pooled output) hold (See Note [Deterministic max_pool2d backward] in conv.cu).
void launch_check_max_indices(const PoolArgs& a, const int64_t* indices, int* flags);
// launch_max_pool2d_backward: dx[p, at] = the sum of dy over the outputs of
// plane p whose index is `at`, in output order and rounded after each add
// as the CPU's; every index in range, and in its output's window unless
// any_outside_window.
void launch_max_pool2d_backward(Code code, const PoolArgs& a, const void* dy, const int64_t* indices, void* dx,
                                bool any_outside_window);

// launch_avg_pool2d / launch_avg_pool2d_backward: avg_pool2d and its
// backward (dilation 1), with kernels/cpu/pooling.cc's windows and divisors.
void launch_avg_pool2d(Code code, const PoolArgs& a, const void* x, void* y);
void launch_avg_pool2d_backward(Code code, const PoolArgs& a, const void* dy, void* dx);

// launch_adaptive_avg_pool2d / launch_adaptive_avg_pool2d_backward:
// _adaptive_avg_pool2d and its backward (windows [o * in / out, ceil((o + 1) * in / out))).
void launch_adaptive_avg_pool2d(Code code, const PoolArgs& a, const void* x, void* y);
void launch_adaptive_avg_pool2d_backward(Code code, const PoolArgs& a, const void* dy, void* dx);

// BatchNormArgs: batch norm over an input [n, channels, inner] of `code`;
// per-channel values (weight, bias, mean, invstd, running stats, sums) hold
// `channels` elements of the compute type (f64 for f64, f32 otherwise).
struct BatchNormArgs {
  int64_t n = 0, channels = 0, inner = 1;
  const void* x = nullptr;
  const void* weight = nullptr;  // null: ones
  const void* bias = nullptr;    // null: zeros
  void* mean = nullptr;
  void* invstd = nullptr;
  double eps = 0, momentum = 0;
  // Forward: var_sum (training), the running stats (null when absent;
  // updated in place in training, read in eval) and y of `code`.
  void* var_sum = nullptr;
  void* running_mean = nullptr;
  void* running_var = nullptr;
  void* y = nullptr;
  // Backward: dy of `code`; sums and dotps (per channel sum(dy) and
  // sum((x - mean) dy)); dx, dw, db of `code`, each null when not asked for.
  const void* dy = nullptr;
  void* sums = nullptr;
  void* dotps = nullptr;
  void* dx = nullptr;
  void* dw = nullptr;
  void* db = nullptr;
  bool train = false;
};

// launch_batch_norm_stats: training: mean, invstd and var_sum of each channel
// (two passes: the mean, then the squared deviations).
void launch_batch_norm_stats(Code code, const BatchNormArgs& a);
// launch_batch_norm_update_running: training: running = momentum * batch +
// (1 - momentum) * running for each given running stat (the variance unbiased).
void launch_batch_norm_update_running(Code code, const BatchNormArgs& a);
// launch_batch_norm_eval_invstd: eval: invstd = 1 / sqrt(running_var + eps).
void launch_batch_norm_eval_invstd(Code code, const BatchNormArgs& a);
// launch_batch_norm_forward: y = x * alpha + beta, alpha = invstd * weight,
// beta = bias - mean * alpha.
void launch_batch_norm_forward(Code code, const BatchNormArgs& a);
// launch_batch_norm_backward: sums, dotps, then dw, db and dx where asked for.
void launch_batch_norm_backward(Code code, const BatchNormArgs& a);

}  // namespace opspec::internal::cuda
