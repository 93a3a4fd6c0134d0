// ternary_launch.h: the launcher of addcmul, addcdiv and lerp (ternary.cu),
// host side in ternary.cc. Plain C++ types only (See Note [Elementwise
// launches] in launch.h).
#pragma once

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// TernaryOp: the functors of Note [Ternary pointwise ops].
enum class TernaryOp : uint8_t {
  kAddcmul,     // AddcmulOp: (self, t1, t2), value in the Param
  kAddcdiv,     // AddcdivOp: (self, t1, t2), value in the Param
  kLerp,        // LerpOp: (self, end, weight)
  kLerpScalar,  // LerpScalarOp: (self, end), weight in the Param
};

// launch_ternary: out = op(inputs) for storage type `storage`, inputs
// converted to it; Param's member for the compute type holds value or weight
// (f64: f; f32, f16 and bf16: f32; integers: i).
void launch_ternary(TernaryOp op, Code storage, const ElementwiseArgs& a, Param param);

}  // namespace opspec::internal::cuda
