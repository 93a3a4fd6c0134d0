// unary.cu: the unary elementwise kernels (launch_unary), one per (functor,
// storage type), calling the shared functors of kernels/common/elementwise_ops.h.
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {
namespace {

// Rule: the dtype rules of unary_ops.def rows (UnaryKind's names; the host
// header that declares UnaryKind is not compiled by nvcc).
enum class Rule { kKeepDtype, kKeepDtypeBool, kFloating, kFloatingOnly };

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
  if constexpr (std::is_same_v<S, bool>) {
    switch (op) {  // kKeepDtypeBool rows keep b8 (sign: its values unchanged)
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                              \
  case UnaryOp::k##functor:                                                                                \
    if constexpr (Rule::dtype_rule == Rule::kKeepDtypeBool) {                                              \
      return launch_elementwise<S, S, 1>(a, functor##Op{}, #name);                                        \
    }                                                                                                      \
    break;
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
      default: break;
    }
  } else {
    switch (op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                              \
  case UnaryOp::k##functor:                                                                                \
    if constexpr (Rule::dtype_rule == Rule::kKeepDtype || Rule::dtype_rule == Rule::kKeepDtypeBool) {      \
      return launch_elementwise<S, S, 1>(a, functor##Op{}, #name);                                        \
    }                                                                                                      \
    break;
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
      case UnaryOp::kSquare: return launch_elementwise<S, S, 1>(a, SquareOp{}, "pow");
      case UnaryOp::kCube: return launch_elementwise<S, S, 1>(a, CubeOp{}, "pow");
      case UnaryOp::kPowScalar: return launch_elementwise<S, S, 1>(a, PowScalarOp<C>{param_as<C>(p)}, "pow");
      default: break;
    }
    if constexpr (std::is_floating_point_v<C>) {
      switch (op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  case UnaryOp::k##functor: return launch_elementwise<S, S, 1>(a, functor##Op{}, #name);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
        case UnaryOp::kGeluErf: return launch_elementwise<S, S, 1>(a, GeluErfOp{}, "gelu");
        case UnaryOp::kGeluTanh: return launch_elementwise<S, S, 1>(a, GeluTanhOp{}, "gelu");
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
