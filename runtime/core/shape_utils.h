// shape_utils.h: broadcasting, type promotion and the other shape rules that
// meta functions and kernels share (PyTorch's rules throughout).
#pragma once

#include <optional>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec {

// broadcast_shapes: the broadcast of a and b; throws naming op when they do not
// broadcast ("The size of tensor a (3) must match the size of tensor b (4) at
// non-singleton dimension 1").
SizeVec broadcast_shapes(IntArrayRef a, IntArrayRef b, std::string_view op);

// result_type: PyTorch's type promotion over operands: dimensioned tensors
// outrank zero-dim tensors, which outrank wrapped numbers, unless a lower tier
// has a higher category (bool < integer < floating).
DType result_type(TensorList operands);
// result_type: for a tensor and a scalar.
DType result_type(const Tensor& t, const Scalar& s);

// check_same_device: all defined tensors on one device; 0-dim cpu tensors may
// join any device (as in PyTorch). Error: "op: Expected all tensors to be on the
// same device, but found at least two devices, cpu and meta!"
Device check_same_device(TensorList tensors, std::string_view op);

// check_normalized_shape: PyTorch's layer_norm / rms_norm input checks, in its
// order and texts: normalized_shape has a dim, weight and bias (null: not
// given) have its shape, and input's trailing dims are it. Errors name op.
void check_normalized_shape(IntArrayRef input, IntArrayRef normalized_shape, const IntArrayRef* weight,
                            const IntArrayRef* bias, std::string_view op);

// infer_size: resolves one -1 in a view shape against numel; throws naming op.
SizeVec infer_size(IntArrayRef shape, int64_t numel, std::string_view op);

// compute_view_strides: strides for viewing (sizes, strides) as new_shape
// without copying, or nullopt when impossible (PyTorch's computeStride).
std::optional<SizeVec> compute_view_strides(IntArrayRef sizes, IntArrayRef strides, IntArrayRef new_shape);

// reduction_dims: the set of dims (wrapped, deduplicated) a reduction over
// `dims` covers; empty or absent means all dims.
absl::InlinedVector<bool, 6> reduction_mask(std::optional<IntArrayRef> dims, int64_t ndim, std::string_view op);

// reduced_shape: sizes after reducing masked dims (kept as 1 when keepdim).
SizeVec reduced_shape(IntArrayRef sizes, absl::Span<const bool> mask, bool keepdim);

}  // namespace opspec
