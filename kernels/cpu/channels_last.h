// channels_last.h: the rows a channels-last CPU kernel reads (convolution,
// batch norm, max pooling; See Note [Model op layouts] in
// kernels/common/layout_format.h).
#pragma once

#include <optional>

#include "kernels/cpu/copy.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// channels_last_rows: t [N, C, S...] as a row-major [N, S..., C] tensor of
// dtype (t's own when nullopt): t's own memory when it is channels-last
// dense in that dtype, else a copy, so a kernel reads rows of C channels.
inline Tensor channels_last_rows(const Tensor& t, std::optional<DType> dtype = std::nullopt) {
  SizeVec sizes{t.size(0)}, strides{t.stride(0)};
  for (int64_t d = 2; d < t.dim(); ++d) {
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  sizes.push_back(t.size(1));
  strides.push_back(t.stride(1));
  return contiguous_cpu(make_view(t, sizes, strides, t.storage_offset()), dtype);
}

}  // namespace opspec::internal
