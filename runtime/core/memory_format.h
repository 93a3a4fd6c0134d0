// memory_format.h: memory formats and the stride rules PyTorch derives from
// them: which layouts count as contiguous or channels-last, the format a
// tensor suggests, the dense strides that keep a layout's dim order, and the
// output strides of an elementwise op. See Note [Memory formats].
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec {

// Note [Memory formats]
// A tensor's layout is its strides; PyTorch names four memory formats
// (c10::MemoryFormat, same numbering, which schemas pass as ints):
// contiguous (row-major), preserve (keep the input's layout: the default of
// clone, _to_copy and the *_like factories), channels_last (NHWC order of a
// 4-d NCHW tensor) and channels_last_3d (NDHWC of a 5-d tensor).
// Results follow PyTorch's rules, so a strides check written against PyTorch
// holds here, and so do the op sequences that depend on strides (reshape of
// a transposed sum is clone + _unsafe_view in both):
//   - preserve: an input that is non-overlapping and dense keeps its strides;
//     any other strided input gets dense strides in its dims' order
//     (infer_dense_strides);
//   - elementwise results: TensorIterator's NOTE [Computing output strides]
//     (elementwise_output_strides below): same-shaped inputs that are all
//     contiguous, all channels-last or all dense with one set of strides give
//     that layout; otherwise the dims are sorted by the inputs' strides, the
//     first input deciding and broadcast dims deferring to the next.
// Ambiguous layouts (an N111 tensor, a size-1 C) resolve to contiguous, as
// c10's Note [Ambiguous is_channels_last_strides_xd] explains. Elementwise
// kernels get the strides from their meta function (ElementwiseMeta::strides);
// the fused backend's kernels write row-major, so a cpu group copies a result
// into another layout and a device group leaves such a result unfused.

// MemoryFormat: c10::MemoryFormat; the values are what schemas carry.
enum class MemoryFormat : int8_t { kContiguous = 0, kPreserve = 1, kChannelsLast = 2, kChannelsLast3d = 3 };

// memory_format_name: "torch.contiguous_format", "torch.preserve_format",
// "torch.channels_last", "torch.channels_last_3d" (how Python prints them).
std::string_view memory_format_name(MemoryFormat format);

// memory_format_from_int: a schema's MemoryFormat int, or nullopt when it is
// not one of the four.
std::optional<MemoryFormat> memory_format_from_int(int64_t value);

// to_memory_format: a schema's optional MemoryFormat int as a format; throws
// naming op when the int is not a memory format.
std::optional<MemoryFormat> to_memory_format(std::optional<int64_t> value, std::string_view op);

// is_non_overlapping_and_dense: every element of the span the strides cover is
// used exactly once, in some dim order (c10's _compute_non_overlapping_and_dense).
bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides);
bool is_non_overlapping_and_dense(const Tensor& t);

// is_contiguous_as: c10's is_contiguous(memory_format): strides exactly those
// of format, ignoring size-1 dims (channels_last needs 4 dims, _3d 5).
// kPreserve is not a layout: false.
bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format);
bool is_contiguous(const Tensor& t, MemoryFormat format);

// is_channels_last_strides: c10's is_channels_last_strides_2d / _3d: the
// looser test suggest_memory_format uses (strides ordered C, W, H, N, with
// ambiguous N111 and size-1 C layouts counted as contiguous).
bool is_channels_last_strides(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format);

// suggest_memory_format: channels_last (or _3d) when the strides look like
// it, else contiguous (TensorBase::suggest_memory_format).
MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides);
MemoryFormat suggest_memory_format(const Tensor& t);

// strides_for: the strides of a fresh tensor of sizes in format; throws naming
// op for PyTorch's errors ("required rank 4 tensor to use channels_last
// format", "unsupported memory format Preserve").
SizeVec strides_for(IntArrayRef sizes, MemoryFormat format, std::string_view op);

// infer_dense_strides: dense strides that keep the dims' order of strides (at::
// infer_dense_strides; the same sort as TensorIterator's for one operand).
SizeVec infer_dense_strides(IntArrayRef sizes, IntArrayRef strides);

// preserve_strides: the strides a preserve_format copy of t gets: t's own when
// non-overlapping and dense, else infer_dense_strides (empty_like, clone, _to_copy).
SizeVec preserve_strides(const Tensor& t);

// like_strides: the strides of a *_like / clone / _to_copy result of t for an
// optional format (none is preserve); throws naming op as strides_for does.
SizeVec like_strides(const Tensor& t, std::optional<MemoryFormat> format, std::string_view op);

// elementwise_output_strides: the strides TensorIterator gives the result of an
// elementwise op over inputs with broadcast shape `shape` (See Note [Memory
// formats]); empty when they are plain contiguous strides (the common case,
// decided without sorting). Undefined inputs are skipped.
SizeVec elementwise_output_strides(IntArrayRef shape, TensorList inputs);
// elementwise_output_strides: the same over pointers (no Tensor copies).
SizeVec elementwise_output_strides(IntArrayRef shape, absl::Span<const Tensor* const> inputs);

}  // namespace opspec
