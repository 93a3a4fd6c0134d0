// coalesce.h: an input's element strides over a broadcast output shape,
// coalesced, as the fused kernels of every device read their inputs.
#pragma once

#include "runtime/core/tensor.h"

namespace opspec::internal {

// CoalescedGeometry: an input's element strides per output dim, coalesced
// (size-1 dims dropped, adjacent dims merged where the input steps over the
// outer one as far as over the whole inner one), so linear output index ->
// input offset is a short odometer.
struct CoalescedGeometry {
  SizeVec sizes, strides;
  // dense: one stride-1 dim over the whole shape: read in place.
  bool dense() const { return sizes.size() == 1 && strides[0] == 1; }
};

// coalesce_over: t's geometry as broadcast to shape (t's dims align to its end).
inline CoalescedGeometry coalesce_over(const Tensor& t, IntArrayRef shape) {
  CoalescedGeometry g;
  const int64_t nd = static_cast<int64_t>(shape.size()), lead = nd - t.dim();
  for (int64_t d = 0; d < nd; ++d) {
    if (shape[d] == 1) continue;
    const int64_t s = d >= lead && t.sizes()[d - lead] != 1 ? t.strides()[d - lead] : 0;
    if (!g.sizes.empty() && g.strides.back() == s * shape[d]) {
      g.sizes.back() *= shape[d];
      g.strides.back() = s;
    } else {
      g.sizes.push_back(shape[d]);
      g.strides.push_back(s);
    }
  }
  return g;
}

}  // namespace opspec::internal
