// binary.cu: the arithmetic binary kernels (launch_binary,
// launch_binary_scalar_rhs), calling the shared functors of
// kernels/common/elementwise_ops.h. Comparisons are in compare.cu.
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {
namespace {

// Arith<A, F>: f on both operands cast to the arithmetic type A (int32 for
// bool storage), as the CPU's arith_into does.
template <class A, class F>
struct Arith {
  F f;
  template <class C>
  __device__ __forceinline__ auto operator()(C x, C y) const {
    return f(static_cast<A>(x), static_cast<A>(y));
  }
};

// ScalarRhs<F>: f(x, s) with s kept in float (f16/bf16 mul and div by one element).
template <class F>
struct ScalarRhs {
  F f;
  float s;
  __device__ __forceinline__ float operator()(float x) const { return f(x, s); }
};

template <class A>
A param_as(const Param& p) {
  if constexpr (std::is_same_v<A, double>) return p.f;
  else if constexpr (std::is_same_v<A, float>) return p.f32;
  else return static_cast<A>(p.i);
}

template <class S, class F>
void arith(const ElementwiseArgs& a, F f, const char* what) {
  launch_elementwise<S, S, 2>(a, Arith<arith_t<S>, F>{f}, what);
}

template <class S>
void binary_for(BinaryOp op, const ElementwiseArgs& a, const Param& p) {
  using A = arith_t<S>;
  switch (op) {
    case BinaryOp::kAdd: return arith<S>(a, AddOp{}, "add");
    case BinaryOp::kSub: return arith<S>(a, SubOp{}, "sub");
    case BinaryOp::kAddAlpha: return arith<S>(a, AddAlphaOp<A>{param_as<A>(p)}, "add");
    case BinaryOp::kSubAlpha: return arith<S>(a, SubAlphaOp<A>{param_as<A>(p)}, "sub");
    case BinaryOp::kMul: return arith<S>(a, MulOp{}, "mul");
    case BinaryOp::kMaximum: return arith<S>(a, MaximumOp{}, "maximum");
    case BinaryOp::kMinimum: return arith<S>(a, MinimumOp{}, "minimum");
    default: break;
  }
  if constexpr (std::is_integral_v<A>) {
    if (op == BinaryOp::kBitwiseAnd) return arith<S>(a, BitwiseAndOp{}, "bitwise_and");
    if (op == BinaryOp::kBitwiseOr) return arith<S>(a, BitwiseOrOp{}, "bitwise_or");
    if (op == BinaryOp::kBitwiseXor) return arith<S>(a, BitwiseXorOp{}, "bitwise_xor");
  }
  if constexpr (!std::is_same_v<S, bool>) {
    if (op == BinaryOp::kDivTrunc) return arith<S>(a, DivTruncOp{}, "div");
    if (op == BinaryOp::kDivFloor) return arith<S>(a, DivFloorOp{}, "div");
    if (op == BinaryOp::kRemainder) return arith<S>(a, RemainderOp{}, "remainder");
    if (op == BinaryOp::kFmod) return arith<S>(a, FmodOp{}, "fmod");
  }
  if constexpr (std::is_floating_point_v<A>) {
    if (op == BinaryOp::kDiv) return arith<S>(a, DivOp{}, "div");
    if (op == BinaryOp::kAtan2) return arith<S>(a, Atan2Op{}, "atan2");
    if (op == BinaryOp::kThresholdBackward) {
      return arith<S>(a, ThresholdBackwardOp{p.f}, "threshold_backward");
    }
    if (op == BinaryOp::kTanhBackward) return arith<S>(a, TanhBackwardOp{}, "tanh_backward");
    if (op == BinaryOp::kSigmoidBackward) return arith<S>(a, SigmoidBackwardOp{}, "sigmoid_backward");
    if (op == BinaryOp::kGeluBackwardErf) return arith<S>(a, GeluBackwardErfOp{}, "gelu_backward");
    if (op == BinaryOp::kGeluBackwardTanh) return arith<S>(a, GeluBackwardTanhOp{}, "gelu_backward");
    if (op == BinaryOp::kSiluBackward) return arith<S>(a, SiluBackwardOp{}, "silu_backward");
    if (op == BinaryOp::kDropoutBackward) return arith<S>(a, DropoutBackwardOp{p.f}, "native_dropout_backward");
  }
  if constexpr (!std::is_same_v<S, bool>) {
    if (op == BinaryOp::kPow) return arith<S>(a, PowOp{}, "pow");
  }
  fail_launch("launch_binary: no kernel for this op and dtype");
}

}  // namespace

void launch_binary(BinaryOp op, Code storage, const ElementwiseArgs& a, Param param) {
  with_code(storage, [&]<class S>() { binary_for<S>(op, a, param); });
}

void launch_binary_scalar_rhs(BinaryOp op, Code storage, const ElementwiseArgs& a, float s) {
  const auto run = [&]<class S>() {
    if (op == BinaryOp::kMul) return launch_elementwise<S, S, 1>(a, ScalarRhs<MulOp>{MulOp{}, s}, "mul");
    if (op == BinaryOp::kDiv) return launch_elementwise<S, S, 1>(a, ScalarRhs<DivOp>{DivOp{}, s}, "div");
    fail_launch("launch_binary_scalar_rhs: only mul and div");
  };
  if (storage == kF16) return run.template operator()<Half>();
  if (storage == kBF16) return run.template operator()<BFloat16>();
  fail_launch("launch_binary_scalar_rhs: only f16 and bf16");
}

}  // namespace opspec::internal::cuda
