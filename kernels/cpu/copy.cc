// copy.cc: copy_into and contiguous_cpu (kernels/cpu/copy.h), plus the input
// casting helpers of loops.h that are built on them.
#include "kernels/cpu/copy.h"

#include <algorithm>
#include <cstring>

#include "kernels/common/elementwise_ops.h"
#include "kernels/cpu/loops.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/core/shape_utils.h"

namespace opspec::internal {
namespace {

// copy_bits<U>: a same-dtype copy moves element bits with an unsigned type of
// the element's size, so one loop serves every dtype of that size.
template <class U>
void copy_bits(const TensorIterator& iter) {
  cpu_kernel<U, U>(iter, [](U v) { return v; });
}

}  // namespace

void copy_into(const Tensor& dst, const Tensor& src) {
  OPSPEC_CHECK(dst.device().is_cpu() && src.device().is_cpu(), "copy_into: expected cpu tensors, got ",
               dst.meta_str(), " and ", src.meta_str());
  const SizeVec shape = broadcast_shapes(dst.sizes(), src.sizes(), "aten::copy_");
  OPSPEC_CHECK(std::equal(shape.begin(), shape.end(), dst.sizes().begin(), dst.sizes().end()),
               "aten::copy_: output with shape ", format_sizes(dst.sizes()),
               " doesn't match the broadcast shape ", format_sizes(shape));
  if (dst.numel() == 0) return;
  if (same_elements(dst, src)) return;  // x.copy_(x)
  if (partial_overlap(dst, src)) {
    // Read all of src before writing any of dst.
    Tensor tmp = make_tensor(src.sizes(), src.dtype(), kCPU);
    copy_into(tmp, src);
    copy_into(dst, tmp);
    return;
  }
  const Tensor inputs[] = {src};
  TensorIterator iter(dst, inputs);
  if (dst.dtype() == src.dtype()) {
    switch (dst.element_size()) {
      case 1: copy_bits<uint8_t>(iter); return;
      case 2: copy_bits<uint16_t>(iter); return;
      case 4: copy_bits<uint32_t>(iter); return;
      case 8: copy_bits<uint64_t>(iter); return;
      default: OPSPEC_INTERNAL_ASSERT(false);
    }
  }
  OPSPEC_DISPATCH_ALL_DTYPES(dst.dtype(), "aten::copy_", [&] {
    using dst_t = scalar_t;
    OPSPEC_DISPATCH_ALL_DTYPES(src.dtype(), "aten::copy_", [&] {
      using src_t = scalar_t;
      cpu_kernel<dst_t, src_t>(iter, [](opmath_t<src_t> v) { return CastOp<opmath_t<dst_t>>{}(v); });
    });
  });
}

void zero_bytes(const Tensor& t) {
  if (t.nbytes() > 0) std::memset(t.raw_data(), 0, static_cast<size_t>(t.nbytes()));
}

Tensor contiguous_cpu(const Tensor& src, std::optional<DType> dtype) {
  const DType dt = dtype.value_or(src.dtype());
  if (src.is_contiguous() && src.dtype() == dt) return src;
  Tensor out = make_tensor(src.sizes(), dt, kCPU);
  copy_into(out, src);
  return out;
}

Tensor cast_for_compute(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype) return t;
  // Convert only the distinct elements: broadcast dims shrink to 1 for the
  // copy and are re-expanded (stride 0) in the result.
  SizeVec compact(t.sizes().begin(), t.sizes().end());
  bool any_broadcast = false;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] == 0 && compact[d] > 1) {
      compact[d] = 1;
      any_broadcast = true;
    }
  }
  if (!any_broadcast) return contiguous_cpu(t, dtype);
  Tensor tmp = make_tensor(compact, dtype, kCPU);
  copy_into(tmp, make_view(t, compact, t.strides(), t.storage_offset()));
  SizeVec strides = contiguous_strides(compact);
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (compact[d] != t.sizes()[d]) strides[d] = 0;
  }
  return make_view(tmp, t.sizes(), strides, 0);
}

}  // namespace opspec::internal
