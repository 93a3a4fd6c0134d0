// ternary.cu: the kernels of addcmul, addcdiv and lerp (launch_ternary),
// calling the shared functors of kernels/common/elementwise_ops.h.
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"
#include "kernels/cuda/ternary_launch.h"

namespace opspec::internal::cuda {
namespace {

// param_value: the Param member holding a value in compute type C.
template <class C>
C param_value(const Param& p) {
  if constexpr (std::is_same_v<C, double>) return p.f;
  else if constexpr (std::is_same_v<C, float>) return p.f32;
  else return static_cast<C>(p.i);
}

template <class S>
void ternary_for(TernaryOp op, const ElementwiseArgs& a, const Param& p) {
  using C = opmath_t<S>;
  if constexpr (!std::is_same_v<S, bool>) {
    if (op == TernaryOp::kAddcmul) {
      return launch_elementwise<S, S, 3>(a, AddcmulOp<arith_t<S>>{param_value<arith_t<S>>(p)}, "addcmul");
    }
  }
  if constexpr (std::is_floating_point_v<C>) {
    switch (op) {
      case TernaryOp::kAddcdiv: return launch_elementwise<S, S, 3>(a, AddcdivOp<C>{param_value<C>(p)}, "addcdiv");
      case TernaryOp::kLerp: return launch_elementwise<S, S, 3>(a, LerpOp{}, "lerp");
      case TernaryOp::kLerpScalar:
        return launch_elementwise<S, S, 2>(a, LerpScalarOp<C>{param_value<C>(p)}, "lerp");
      default: break;
    }
  }
  fail_launch("launch_ternary: no kernel for this op and dtype");
}

}  // namespace

void launch_ternary(TernaryOp op, Code storage, const ElementwiseArgs& a, Param param) {
  with_code(storage, [&]<class S>() { ternary_for<S>(op, a, param); });
}

}  // namespace opspec::internal::cuda
