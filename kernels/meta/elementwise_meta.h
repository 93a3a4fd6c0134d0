// elementwise_meta.h: the registration of the Meta kernels of the
// elementwise, in-place, copy and conversion ops (their shape rules are
// runtime/ops/elementwise_rules.h).
#pragma once

#include "runtime/core/tensor.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

// meta_out: the meta tensor an elementwise rule's result describes.
inline Tensor meta_out(const ElementwiseMeta& m) { return make_elementwise_output(m, kMeta); }

// register_elementwise_meta_kernels: the Meta kernels of every elementwise,
// in-place, copy and conversion op.
void register_elementwise_meta_kernels(Library& lib);

}  // namespace opspec::internal
