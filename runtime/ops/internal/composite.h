// composite.h: helpers the CompositeImplicit kernels share
// (decompositions.cc, decompositions_nn.cc). Not installed.
#pragma once

#include "runtime/core/tensor.h"

namespace opspec::internal {

// is_tensor_subclass_like: PyTorch's isTensorSubclassLike: a mode is active,
// or t is a subclass, meta or fake tensor (See Note [Composite decompositions]).
bool is_tensor_subclass_like(const Tensor& t);

// to_type: PyTorch's input.toType(dtype): self when dtype is self's, else a
// _to_copy naming dtype, layout and device.
Tensor to_type(const Tensor& self, DType dtype);

}  // namespace opspec::internal
