// pointwise.cu: the kernels of the elementwise ops with scalar parameters
// (launch_pointwise) and the NaN/infinity tests, calling the shared functors
// of kernels/common/elementwise_ops.h.
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"
#include "kernels/cuda/pointwise_launch.h"

namespace opspec::internal::cuda {
namespace {

// bound: a clamp bound in compute type C (integers exactly, from i).
template <class C>
C bound(const PointwiseParams& p, int k) {
  if constexpr (std::is_floating_point_v<C>) return static_cast<C>(p.f[k]);
  else return static_cast<C>(p.i[k]);
}

template <class S>
void pointwise_for(PointwiseOp op, const ElementwiseArgs& a, const PointwiseParams& p) {
  using C = opmath_t<S>;
  if constexpr (!std::is_same_v<S, bool>) {
    using A = arith_t<S>;
    if (op == PointwiseOp::kClamp) {
      return launch_elementwise<S, S, 1>(a, ClampOp<A>{bound<A>(p, 0), bound<A>(p, 1), p.has_lo, p.has_hi}, "clamp");
    }
    if (op == PointwiseOp::kClampMin) return launch_elementwise<S, S, 1>(a, ClampMinOp<A>{bound<A>(p, 0)}, "clamp_min");
    if (op == PointwiseOp::kClampMax) return launch_elementwise<S, S, 1>(a, ClampMaxOp<A>{bound<A>(p, 1)}, "clamp_max");
  }
  if constexpr (std::is_floating_point_v<C>) {
    const C f0 = static_cast<C>(p.f[0]), f1 = static_cast<C>(p.f[1]), f2 = static_cast<C>(p.f[2]);
    switch (op) {
      case PointwiseOp::kLeakyRelu: return launch_elementwise<S, S, 1>(a, LeakyReluOp<C>{f0}, "leaky_relu");
      case PointwiseOp::kElu: return launch_elementwise<S, S, 1>(a, EluOp<C>{f0 * f1, f1, f2}, "elu");
      case PointwiseOp::kSoftplus: return launch_elementwise<S, S, 1>(a, SoftplusOp<C>{f0, f1}, "softplus");
      case PointwiseOp::kRoundDecimals:
        return launch_elementwise<S, S, 1>(a, RoundDecimalsOp<C>{f0, p.flag}, "round_decimals");
      case PointwiseOp::kNanToNum: return launch_elementwise<S, S, 1>(a, NanToNumOp<C>{f0, f1, f2}, "nan_to_num");
      case PointwiseOp::kHardtanhBackward:
        return launch_elementwise<S, S, 2>(a, HardtanhBackwardOp<C>{f0, f1}, "hardtanh_backward");
      case PointwiseOp::kLeakyReluBackward:
        return launch_elementwise<S, S, 2>(a, LeakyReluBackwardOp<C>{f0}, "leaky_relu_backward");
      case PointwiseOp::kEluBackward:
        return launch_elementwise<S, S, 2>(a, EluBackwardOp<C>{f0 * f1, f1, f2, p.flag}, "elu_backward");
      case PointwiseOp::kSoftplusBackward:
        return launch_elementwise<S, S, 2>(a, SoftplusBackwardOp<C>{f0, f1}, "softplus_backward");
      default: break;
    }
  }
  fail_launch("launch_pointwise: no kernel for this op and dtype");
}

}  // namespace

void launch_pointwise(PointwiseOp op, Code storage, const ElementwiseArgs& a, const PointwiseParams& p) {
  with_code(storage, [&]<class S>() { pointwise_for<S>(op, a, p); });
}

void launch_float_test(bool isinf, Code storage, const ElementwiseArgs& a) {
  with_code(storage, [&]<class S>() {
    if (isinf) return launch_elementwise<bool, S, 1>(a, IsinfOp{}, "isinf");
    launch_elementwise<bool, S, 1>(a, IsnanOp{}, "isnan");
  });
}

}  // namespace opspec::internal::cuda
