// convolution_nhwc.h: the channels-last (NHWC) CPU passes of a 2-D
// convolution, which convolution.cc runs when the result is channels-last.
// See Note [Channels-last convolution] in convolution_nhwc.cc.
#pragma once

#include <optional>

#include "kernels/common/conv_meta.h"

namespace opspec::internal {

// nhwc_convolution_applies: a regular (not transposed) 2-D convolution whose
// result and gradients are laid out in format channels-last.
bool nhwc_convolution_applies(const ConvGeometry& g, MemoryFormat format);

// convolution_nhwc: the forward into out, a channels-last [N, C_out, oh, ow].
void convolution_nhwc(const ConvGeometry& g, const Tensor& input, const Tensor& weight,
                      const std::optional<Tensor>& bias, Tensor& out);

// convolution_backward_nhwc: the gradients each defined one asks for, dx and
// dw channels-last, db [C_out].
void convolution_backward_nhwc(const ConvGeometry& g, const Tensor& grad_output, const Tensor& input,
                               const Tensor& weight, Tensor& dx, Tensor& dw, Tensor& db);

}  // namespace opspec::internal
