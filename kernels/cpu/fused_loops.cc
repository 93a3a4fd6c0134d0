// fused_loops.cc: the typed loop of every FusedProgram instruction, each
// mirroring the loop its eager kernel runs, for the tile interpreter
// (fused.cc): the binary ops, comparisons, where and fma here, the unary ops,
// pow.Tensor_Scalar, logical_not, bitwise_not and casts in fused_loops_unary.cc (two
// files, so that neither compile takes long). The loops themselves are in
// internal/fused_typed_loops.h. See Note [Fused kernels].
#include "kernels/cpu/fused_loops.h"

#include <type_traits>

#include "kernels/cpu/internal/fused_typed_loops.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace fused_loops_detail {
namespace {

template <class Op>
FusedLoopFn arith_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &arith_kernel<scalar_t, Op>; });
}

// no_bool_for / integral_for: Op's loop for the dtypes add_op lets it take.
template <class Op>
FusedLoopFn no_bool_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return nullptr;
    } else {
      return &arith_kernel<scalar_t, Op>;
    }
  });
}
template <class Op>
FusedLoopFn integral_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
    if constexpr (kFloating<scalar_t>) {
      return nullptr;
    } else {
      return &arith_kernel<scalar_t, Op>;
    }
  });
}

template <class Op>
FusedLoopFn no_bool_for_ternary(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
    if constexpr (std::is_same_v<scalar_t, bool>) {
      return nullptr;
    } else {
      return &ternary_kernel<scalar_t, Op>;
    }
  });
}

template <class Op>
FusedLoopFn predicate_for(DType d) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &predicate_kernel<scalar_t, Op>; });
}

}  // namespace
}  // namespace fused_loops_detail

FusedLoopFn select_fused_loop(const FusedProgram::Instr& ins, const std::vector<FusedProgram::Reg>& regs) {
  using namespace fused_loops_detail;  // NOLINT: the typed loops, in this function only
  const DType d = regs[ins.args[0]].dtype;
  const bool reduced_rhs = ins.nargs == 2 && regs[ins.args[1]].dtype != d;
  switch (ins.op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) case FusedOp::k##functor:
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    case FusedOp::kGeluErf:
    case FusedOp::kGeluTanh:
    case FusedOp::kPowScalar:
    case FusedOp::kLogicalNot:
    case FusedOp::kBitwiseNot:
    case FusedOp::kCast:
      return select_unary_fused_loop(ins, regs);
    case FusedOp::kAdd: return arith_for<AddOp>(d);
    case FusedOp::kSub: return arith_for<SubOp>(d);
    case FusedOp::kMul:
      if (reduced_rhs) return d == DType::kFloat16 ? &reduced_rhs_kernel<Half, MulOp> : &reduced_rhs_kernel<BFloat16, MulOp>;
      return arith_for<MulOp>(d);
    case FusedOp::kDiv:
      if (reduced_rhs) return d == DType::kFloat16 ? &reduced_rhs_kernel<Half, DivOp> : &reduced_rhs_kernel<BFloat16, DivOp>;
      return OPSPEC_DISPATCH_FLOATING_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &arith_kernel<scalar_t, DivOp>; });
    case FusedOp::kPow:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn {
        if constexpr (std::is_same_v<scalar_t, bool>) {
          return nullptr;
        } else {
          return &arith_kernel<scalar_t, PowOp>;
        }
      });
    case FusedOp::kMaximum: return arith_for<MaximumOp>(d);
    case FusedOp::kMinimum: return arith_for<MinimumOp>(d);
    case FusedOp::kAddAlpha:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &alpha_kernel<scalar_t, AddAlphaOp>; });
    case FusedOp::kSubAlpha:
      return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &alpha_kernel<scalar_t, SubAlphaOp>; });
    case FusedOp::kDivTrunc: return no_bool_for<DivTruncOp>(d);
    case FusedOp::kDivFloor: return no_bool_for<DivFloorOp>(d);
    case FusedOp::kRemainder: return no_bool_for<RemainderOp>(d);
    case FusedOp::kFmod: return no_bool_for<FmodOp>(d);
    case FusedOp::kAtan2:
      return OPSPEC_DISPATCH_FLOATING_DTYPES(d, "fused", [&]() -> FusedLoopFn { return &arith_kernel<scalar_t, Atan2Op>; });
    case FusedOp::kBitwiseAnd: return integral_for<BitwiseAndOp>(d);
    case FusedOp::kBitwiseOr: return integral_for<BitwiseOrOp>(d);
    case FusedOp::kBitwiseXor: return integral_for<BitwiseXorOp>(d);
    case FusedOp::kEq: return predicate_for<EqOp>(d);
    case FusedOp::kNe: return predicate_for<NeOp>(d);
    case FusedOp::kLt: return predicate_for<LtOp>(d);
    case FusedOp::kLe: return predicate_for<LeOp>(d);
    case FusedOp::kGt: return predicate_for<GtOp>(d);
    case FusedOp::kGe: return predicate_for<GeOp>(d);
    case FusedOp::kLogicalAnd: return predicate_for<LogicalAndOp>(d);
    case FusedOp::kLogicalOr: return predicate_for<LogicalOrOp>(d);
    case FusedOp::kLogicalXor: return predicate_for<LogicalXorOp>(d);
    case FusedOp::kWhere:
      switch (element_size(regs[ins.args[1]].dtype)) {
        case 1: return &where_kernel<uint8_t>;
        case 2: return &where_kernel<uint16_t>;
        case 4: return &where_kernel<uint32_t>;
        case 8: return &where_kernel<uint64_t>;
        default: return nullptr;
      }
    case FusedOp::kFma: return no_bool_for_ternary<FmaOp>(d);
  }
  return nullptr;
}

}  // namespace opspec::internal
