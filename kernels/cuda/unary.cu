// unary.cu: the unary elementwise kernels (launch_unary), one per (functor,
// storage type), calling the shared functors of kernels/common/elementwise_ops.h.
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {
namespace {

// PowScalarOp: PowOp with a fixed exponent (pow.Tensor_Scalar's general case).
template <class C>
struct PowScalarOp {
  C exponent;
  __device__ __forceinline__ C operator()(C x) const { return PowOp{}(x, exponent); }
};

// param_as<C>: the launch parameter in compute type C.
template <class C>
C param_as(const Param& p) {
  if constexpr (std::is_same_v<C, double>) return p.f;
  else if constexpr (std::is_same_v<C, float>) return p.f32;
  else return static_cast<C>(p.i);
}

template <class S>
void unary_for(UnaryOp op, const ElementwiseArgs& a, const Param& p) {
  using C = opmath_t<S>;
  if (op == UnaryOp::kLogicalNot) return launch_elementwise<bool, S, 1>(a, LogicalNotOp{}, "logical_not");
  if constexpr (!std::is_same_v<S, bool>) {
    switch (op) {
      case UnaryOp::kNeg: return launch_elementwise<S, S, 1>(a, NegOp{}, "neg");
      case UnaryOp::kAbs: return launch_elementwise<S, S, 1>(a, AbsOp{}, "abs");
      case UnaryOp::kRelu: return launch_elementwise<S, S, 1>(a, ReluOp{}, "relu");
      case UnaryOp::kSquare: return launch_elementwise<S, S, 1>(a, SquareOp{}, "pow");
      case UnaryOp::kCube: return launch_elementwise<S, S, 1>(a, CubeOp{}, "pow");
      case UnaryOp::kPowScalar: return launch_elementwise<S, S, 1>(a, PowScalarOp<C>{param_as<C>(p)}, "pow");
      default: break;
    }
    if constexpr (std::is_floating_point_v<C>) {
      switch (op) {
        case UnaryOp::kSin: return launch_elementwise<S, S, 1>(a, SinOp{}, "sin");
        case UnaryOp::kCos: return launch_elementwise<S, S, 1>(a, CosOp{}, "cos");
        case UnaryOp::kExp: return launch_elementwise<S, S, 1>(a, ExpOp{}, "exp");
        case UnaryOp::kLog: return launch_elementwise<S, S, 1>(a, LogOp{}, "log");
        case UnaryOp::kTanh: return launch_elementwise<S, S, 1>(a, TanhOp{}, "tanh");
        case UnaryOp::kSigmoid: return launch_elementwise<S, S, 1>(a, SigmoidOp{}, "sigmoid");
        case UnaryOp::kSqrt: return launch_elementwise<S, S, 1>(a, SqrtOp{}, "sqrt");
        case UnaryOp::kRsqrt: return launch_elementwise<S, S, 1>(a, RsqrtOp{}, "rsqrt");
        case UnaryOp::kReciprocal: return launch_elementwise<S, S, 1>(a, ReciprocalOp{}, "reciprocal");
        case UnaryOp::kErf: return launch_elementwise<S, S, 1>(a, ErfOp{}, "erf");
        case UnaryOp::kGeluErf: return launch_elementwise<S, S, 1>(a, GeluErfOp{}, "gelu");
        case UnaryOp::kGeluTanh: return launch_elementwise<S, S, 1>(a, GeluTanhOp{}, "gelu");
        case UnaryOp::kSilu: return launch_elementwise<S, S, 1>(a, SiluOp{}, "silu");
        case UnaryOp::kInvSquare: return launch_elementwise<S, S, 1>(a, InvSquareOp{}, "pow");
        default: break;
      }
    }
  }
  fail_launch("launch_unary: no kernel for this op and dtype");
}

}  // namespace

void launch_unary(UnaryOp op, Code storage, const ElementwiseArgs& a, Param param) {
  with_code(storage, [&]<class S>() { unary_for<S>(op, a, param); });
}

}  // namespace opspec::internal::cuda
