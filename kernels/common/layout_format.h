// layout_format.h: laying a model op's result out in a memory format, for the
// ops PyTorch allocates by their input's suggest_memory_format (convolution,
// pooling, batch and group norm, upsample, constant_pad_nd and their
// backwards), shared by their CPU, CUDA and Meta kernels. See Note [Memory
// formats] in runtime/core/memory_format.h.
#pragma once

#include <string_view>
#include <utility>

#include "runtime/core/memory_format.h"

namespace opspec::internal {

// Note [Model op layouts]
// Kernels compute row-major (their inputs made contiguous) and then copy the
// result into the layout PyTorch's kernel allocates, so values are the same
// bits in every layout; Meta allocates that layout directly. Where the
// transposes in and out cost a channels-last CNN most, the CPU kernels
// compute in channels-last itself: convolution and its backward (Note
// [Channels-last convolution]: the same products summed in another order,
// so within rounding of the row-major values, as PyTorch's oneDNN path),
// batch norm and max pooling and their backwards (Notes [Channels-last batch
// norm], [Channels-last max pooling]: the same bits). The layout is
// strides_for(sizes, format) with format one of: suggest_memory_format of
// the input (pooling, batch norm (CUDA's: Note [Batch norm on CUDA]), group
// norm and its backward on the CPU and Meta (CUDA's are row-major, as 2.x's),
// constant_pad_nd, upsample; upsample's backward takes grad_output's) or
// conv_memory_format for convolution and its input and weight gradients (on
// CUDA float64 stays row-major, as cuDNN's: conv_format_cuda). A
// channels-last input thus keeps channels-last activations through a CNN,
// as in PyTorch.

// with_strides: t (fresh and row-major) laid out with exactly strides: t
// itself or, when they differ only where no element moves (size-1 dims, an
// empty t), t's storage restrided; else a copy by copy(dst, src) into new
// storage (copy_into on the CPU, device_copy on CUDA).
template <class Copy>
Tensor with_strides(const Tensor& t, IntArrayRef strides, Copy&& copy) {
  if (t.strides() == strides) return t;
  if (is_contiguous_strides(t.sizes(), strides)) return make_view(t, t.sizes(), strides, t.storage_offset());
  Tensor out = make_strided(t.sizes(), strides, t.dtype(), t.device());
  std::forward<Copy>(copy)(out, t);
  return out;
}

// in_format: with_strides for a memory format's strides (never kPreserve).
template <class Copy>
Tensor in_format(const Tensor& t, MemoryFormat format, std::string_view op, Copy&& copy) {
  if (format == MemoryFormat::kContiguous) return t;
  return with_strides(t, strides_for(t.sizes(), format, op), std::forward<Copy>(copy));
}

// meta_in_format: a Meta tensor of sizes laid out in format (the Meta side of in_format).
inline Tensor meta_in_format(IntArrayRef sizes, DType dtype, MemoryFormat format, std::string_view op) {
  if (format == MemoryFormat::kContiguous) return make_tensor(sizes, dtype, kMeta);
  return make_strided(sizes, strides_for(sizes, format, op), dtype, kMeta);
}

}  // namespace opspec::internal
