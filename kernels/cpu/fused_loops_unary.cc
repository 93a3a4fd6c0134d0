// fused_loops_unary.cc: the tile interpreter's loops of the unary ops,
// pow.Tensor_Scalar, logical_not, bitwise_not and casts (the binary ones are in
// fused_loops.cc). See Note [Fused loops run wide] in fused_loops.cc.
#include <type_traits>

#include "kernels/cpu/internal/fused_typed_loops.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal::fused_loops_detail {
namespace {

// unary_for: Op's loop for dtype d; ops with a floating rule have no integer
// loops, and only kKeepDtypeBool ops have a b8 one.
template <class Op, UnaryKind kRule>
FusedLoopFn unary_for(DType d) {
  constexpr bool kFloatingRule = kRule == UnaryKind::kFloating || kRule == UnaryKind::kFloatingOnly;
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
    if constexpr ((std::is_same_v<scalar_t, bool> && kRule != UnaryKind::kKeepDtypeBool) ||
                  (kFloatingRule && !kFloating<scalar_t>)) {
      return nullptr;
    } else {
      return &unary_kernel<scalar_t, Op>;
    }
  });
}

FusedLoopFn cast_for(DType to, DType from) {
  return OPSPEC_DISPATCH_ALL_DTYPES(to, "fused", [&]() -> FusedLoopFn {
    using D = scalar_t;
    return OPSPEC_DISPATCH_ALL_DTYPES(from, "fused", [&]() -> FusedLoopFn { return &cast_kernel<D, scalar_t>; });
  });
}

}  // namespace

FusedLoopFn select_unary_fused_loop(const Instr& ins, const std::vector<Reg>& regs) {
  const DType d = regs[ins.args[0]].dtype;
  switch (ins.op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  case FusedOp::k##functor: return unary_for<functor##Op, UnaryKind::dtype_rule>(d);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    case FusedOp::kGeluErf: return unary_for<GeluErfOp, UnaryKind::kFloatingOnly>(d);
    case FusedOp::kGeluTanh: return unary_for<GeluTanhOp, UnaryKind::kFloatingOnly>(d);
    case FusedOp::kPowScalar:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          return nullptr;
        } else {
          return &pow_scalar_kernel<scalar_t>;
        }
      });
    case FusedOp::kLogicalNot:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &logical_not_kernel<scalar_t>; });
    case FusedOp::kBitwiseNot:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
        if constexpr (kFloating<scalar_t>) {
          return nullptr;
        } else {
          return &bitwise_not_kernel<scalar_t>;
        }
      });
    case FusedOp::kCast: return cast_for(regs[ins.out].dtype, d);
    default: return nullptr;
  }
}

}  // namespace opspec::internal::fused_loops_detail
