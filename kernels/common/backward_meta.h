// backward_meta.h: shape and dtype rules of autograd's backward ops
// (_softmax_backward_data, _log_softmax_backward_data,
// native_layer_norm_backward, native_dropout_backward, slice_backward,
// select_backward) and of masked_fill_, shared by their CPU, Meta and CUDA
// kernels, plus the Meta kernels themselves.
#pragma once

#include <array>
#include <optional>
#include <string_view>
#include <tuple>

#include "kernels/common/reduce_meta.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"

namespace opspec::internal {

// SoftmaxBackwardGeometry: the wrapped dim, the result dtype and the
// [outer, len, inner] split of grad_output around dim.
struct SoftmaxBackwardGeometry {
  int64_t dim = 0;
  DType result_dtype;
  int64_t outer = 1, len = 1, inner = 1;
};

// softmax_backward_geometry: PyTorch's meta function of
// _softmax_backward_data (op names which): grad and output have one shape and
// dtype; the result has grad's dtype, or f16 for an f32 grad of an f16 input.
SoftmaxBackwardGeometry softmax_backward_geometry(const Tensor& grad, const Tensor& output, int64_t dim,
                                                  DType input_dtype, std::string_view op);

// layer_norm_backward_geometry: native_layer_norm's checks, plus grad_out
// shaped like input and mean/rstd holding one value per row.
LayerNormGeometry layer_norm_backward_geometry(const Tensor& grad_out, const Tensor& input,
                                               IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
                                               const std::optional<Tensor>& weight,
                                               const std::optional<Tensor>& bias);

// slice_backward_target / select_backward_target: the view of out (a tensor
// of the forward input's sizes) that grad fills, after checking grad has the
// shape the forward slice (select) had.
Tensor slice_backward_target(const Tensor& out, const Tensor& grad, int64_t dim, int64_t start, int64_t end,
                             int64_t step);
Tensor select_backward_target(const Tensor& out, const Tensor& grad, int64_t dim, int64_t index);

// check_dropout_backward: mask is b8 with grad's shape; grad is floating.
void check_dropout_backward(const Tensor& grad, const Tensor& mask);

// check_negative_slope_in_place: PyTorch's meta check of leaky_relu_backward
// (what = "leakyReLu") and elu_backward (what = "elu"): a backward through
// the result of an in-place forward (is_result) needs a slope >= 0.
void check_negative_slope_in_place(bool is_result, double slope, std::string_view what, std::string_view op);

// check_masked_fill: mask is b8, does not partially overlap self, and broadcasts to self's shape without growing it.
void check_masked_fill(const Tensor& self, const Tensor& mask);
// masked_fill_sizes: the out-of-place masked_fill's result shape, self and mask
// broadcast (mask must be b8; PyTorch's expand_outplace).
SizeVec masked_fill_sizes(const Tensor& self, const Tensor& mask);

// Meta kernels: outputs with the CPU kernels' sizes and dtypes, and no data.
Tensor softmax_backward_data_meta(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype);
Tensor log_softmax_backward_data_meta(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_meta(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask);
Tensor native_dropout_backward_meta(const Tensor& grad, const Tensor& mask, double scale);
Tensor slice_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                           int64_t step);
Tensor select_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t index);
Tensor masked_fill__meta(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor masked_fill_meta(const Tensor& self, const Tensor& mask, const Scalar& value);

}  // namespace opspec::internal
