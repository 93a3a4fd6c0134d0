// conv_meta.h: shape, dtype and device rules of convolution, pooling and
// batch norm, shared by their CPU, CUDA and Meta kernels, plus the Meta
// kernels. Error texts are PyTorch's, prefixed with the op.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/core/memory_format.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"

namespace opspec::internal {

// ConvGeometry: a convolution over N batches of C input planes of one or two
// spatial dims (1-D treated as H = 1), with groups of C / groups channels.
// See Note [Transposed convolution geometry].
struct ConvGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, groups = 1;
  std::array<int64_t, 2> in{1, 1}, kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1}, out{1, 1};
  int spatial_dims = 2;
  bool transposed = false;
  SizeVec out_sizes;  // the result: [N, C_out, spatial...], transposed or not
};
// Note [Transposed convolution geometry]
// A transposed convolution is the adjoint (the input gradient) of the regular
// convolution whose input has the transposed result's shape and whose output
// has the transposed input's shape; PyTorch's slow_conv_transpose2d computes
// it so (gemm + col2im). Its ConvGeometry describes that regular convolution:
// in_channels and in are the transposed result's, out_channels and out its
// input's, and the weight [C, C_out / groups, k...] reads as that
// convolution's [out_channels, in_channels / groups, k...]. Kernels then run
// the regular convolution's three passes with roles swapped: the forward is
// the input-gradient pass, the input gradient the forward pass, and the
// weight gradient the weight pass with input and output gradient swapped.
// out stays the transposed input's size when output_padding >= stride (PyTorch
// allows it below dilation): the extra rows get no terms, only the bias.

// conv_geometry: checks input ([N, C, L] or [N, C, H, W]), weight ([C_out,
// C / groups, k...], transposed [C, C_out / groups, k...]), bias ([C_out])
// and the parameters, with PyTorch's error texts.
ConvGeometry conv_geometry(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                           IntArrayRef output_padding, int64_t groups, std::string_view op);

// PoolGeometry: a 2-D pooling window over [N, C, H, W] (or [C, H, W]).
struct PoolGeometry {
  int64_t planes = 0;  // N * C
  std::array<int64_t, 2> in{1, 1}, kernel{1, 1}, stride{1, 1}, padding{0, 0}, dilation{1, 1}, out{1, 1};
  SizeVec out_sizes;
};
// pool2d_geometry: max_pool2d's and avg_pool2d's checks and output size
// (stride [] means kernel_size; ceil_mode rounds up, keeping the last window
// starting inside the input or left padding).
PoolGeometry pool2d_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef dilation, bool ceil_mode, std::string_view op);
// adaptive_pool_shape: [N,] C, output_size for _adaptive_avg_pool2d.
SizeVec adaptive_pool_shape(const Tensor& self, IntArrayRef output_size, std::string_view op);

// check_batch_norm: input [N, C, ...] with weight, bias, running stats of C (when given).
int64_t check_batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                         const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                         bool training, std::string_view op);

// Note [Batch norm on CUDA]
// PyTorch's CUDA native_batch_norm (batch_norm_cuda, Normalization.cu) lays
// its result out as the input (empty_like: preserve_format, so a transposed
// input gives a transposed result where the CPU's takes the input's
// suggest_memory_format) and returns save_mean and save_invstd of C elements
// in eval too: running_mean and 1 / sqrt(running_var + eps) (the CPU's are
// empty). Its backward's grad_input is row-major (the fused NCHW kernel's
// LEGACY_CONTIGUOUS, eval's at::empty) except in training on an input its
// channels-last kernels take (batch_norm_use_channels_last_kernels: 4-D
// channels-last contiguous), which keeps channels-last. The CUDA kernels and
// Meta standing in for them (Note [Meta kernels standing in for a device])
// share the three rules below; on any other device they give the CPU's.

// batch_norm_output_strides: the strides of native_batch_norm's result on device.
SizeVec batch_norm_output_strides(const Tensor& input, Device device);
// batch_norm_saved_size: the elements of native_batch_norm's save_mean and save_invstd on device.
int64_t batch_norm_saved_size(int64_t channels, bool training, Device device);
// batch_norm_grad_input_format: the layout of native_batch_norm_backward's grad_input on device.
MemoryFormat batch_norm_grad_input_format(const Tensor& input, bool train, Device device);

// conv_memory_format: the layout of a convolution's result and of its input
// and weight gradients (See Note [Model op layouts] in layout_format.h):
// channels_last when the input or the weight suggests it, transposed or not
// (PyTorch 2.x's CPU and cuDNN kernels); contiguous for an empty input.
MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight);

// Meta kernels.
Tensor convolution_meta(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups);
std::tuple<Tensor, Tensor, Tensor> convolution_backward_meta(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, OptionalIntArrayRef bias_sizes,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask);
std::tuple<Tensor, Tensor> max_pool2d_with_indices_meta(const Tensor& self, IntArrayRef kernel_size,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool ceil_mode);
Tensor max_pool2d_with_indices_backward_meta(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                             bool ceil_mode, const Tensor& indices);
Tensor avg_pool2d_meta(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward_meta(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d_meta(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool2d_backward_meta(const Tensor& grad_output, const Tensor& self);
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_meta(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias,
                                                          const std::optional<Tensor>& running_mean,
                                                          const std::optional<Tensor>& running_var, bool training,
                                                          double momentum, double eps);
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_meta(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask);

}  // namespace opspec::internal
