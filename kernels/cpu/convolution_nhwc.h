// convolution_nhwc.h: the channels-last (NHWC) CPU passes of a 2-D
// convolution, which convolution.cc runs when the result is channels-last.
// See Note [Channels-last convolution] in convolution_nhwc.cc.
#pragma once

#include <optional>
#include <type_traits>

#include "kernels/common/conv_meta.h"
#include "kernels/cpu/copy.h"

namespace opspec::internal {

// conv_data: t's data as C*, or null for an undefined t (no bias).
template <class C>
const C* conv_data(const Tensor& t) {
  return t.defined() ? static_cast<const C*>(t.raw_data()) : nullptr;
}

// conv_compute_into: f(C* buffer) fills out's memory (out's dense layout)
// in the compute type C, then out gets it (rounded once for f16 and bf16).
// Shared by the row-major and channels-last passes.
template <class T, class F>
void conv_compute_into(Tensor& out, F&& f) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  Tensor c = std::is_same_v<T, C> ? out : make_strided(out.sizes(), out.strides(), dtype_of<C>(), kCPU);
  f(static_cast<C*>(c.raw_data()));
  if (!std::is_same_v<T, C>) copy_into(out, c);
}

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
