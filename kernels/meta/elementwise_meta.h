// elementwise_meta.h: the registration of the Meta kernels of the
// elementwise, in-place, copy and conversion ops (their shape rules are
// runtime/ops/elementwise_rules.h).
#pragma once

#include "runtime/dispatch/library.h"

namespace opspec::internal {

// register_elementwise_meta_kernels: the Meta kernels of every elementwise,
// in-place, copy and conversion op.
void register_elementwise_meta_kernels(Library& lib);

}  // namespace opspec::internal
