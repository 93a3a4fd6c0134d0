// copy.h: strided copies with dtype conversion, the primitive every kernel
// family uses to make inputs contiguous or fill outputs. No dispatch.
#pragma once

#include "runtime/core/tensor.h"

namespace opspec::internal {

// copy_into: dst[...] = src[...] elementwise, converting dtype, broadcasting
// src to dst's shape; dst may be any strided view (cpu only). Parallel for
// large tensors.
void copy_into(const Tensor& dst, const Tensor& src);

// contiguous_cpu: src itself if contiguous with dtype `dtype` (or src's dtype
// when nullopt), otherwise a new contiguous cpu copy.
Tensor contiguous_cpu(const Tensor& src, std::optional<DType> dtype = std::nullopt);

// zero_bytes: sets every byte of t (a contiguous cpu tensor) to 0, the zero of
// every dtype; nothing for an empty t, whose data pointer is null (memset of a
// null pointer is undefined even for 0 bytes).
void zero_bytes(const Tensor& t);

}  // namespace opspec::internal
