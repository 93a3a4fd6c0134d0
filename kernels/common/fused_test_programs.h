// fused_test_programs.h: fused programs the code generators' tests share
// (kernels/cpu/fused_codegen_test.cc, kernels/cuda/fused_codegen_test.cc).
#pragma once

#include <initializer_list>
#include <vector>

#include "runtime/fused/fused_program.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

// kFusedDTypes: every dtype a fused program takes.
inline constexpr DType kFusedDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};

// all_ops_program: every FusedOp that takes operands of dtype d, over a
// contiguous input x [rows, 8], a broadcast (strided) input y [8] and a
// one-element (uniform) input s [1], each result an output so none is dead.
inline FusedProgram all_ops_program(DType d, int64_t rows = 4) {
  FusedProgram p({rows, 8});
  const int x = p.add_input(d, {rows, 8});
  const int y = p.add_input(d, {8});
  const int s = p.add_input(d, {1});
  const int c = p.add_constant(3, d);
  const bool floating = is_floating(d), boolean = d == DType::kBool;
  auto out = [&](FusedOp op, std::initializer_list<int> args, const Scalar& param = Scalar()) {
    p.add_output(p.add_op(op, args, param));
  };
  // Every unary_ops.def row, on the dtypes its rule accepts.
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                  \
  if (UnaryKind::dtype_rule == UnaryKind::kKeepDtypeBool ||                                    \
      (!boolean && (floating || UnaryKind::dtype_rule == UnaryKind::kKeepDtype)))              \
    out(FusedOp::k##functor, {x});
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  if (!boolean) {
    const std::vector<double> exponents =
        floating ? std::vector<double>{0.5, -0.5, -1.0, 2.0, 3.0, -2.0, 1.7} : std::vector<double>{2.0, 3.0, 5.0};
    for (double e : exponents) out(FusedOp::kPowScalar, {y}, floating ? Scalar(e) : Scalar(static_cast<int64_t>(e)));
  }
  if (floating) {
    for (FusedOp op : {FusedOp::kGeluErf, FusedOp::kGeluTanh}) out(op, {x});
    out(FusedOp::kDiv, {x, y});
  }
  out(FusedOp::kLogicalNot, {x});
  if (!floating) out(FusedOp::kBitwiseNot, {x});
  for (FusedOp op : {FusedOp::kAdd, FusedOp::kSub, FusedOp::kMul, FusedOp::kMaximum, FusedOp::kMinimum}) out(op, {x, y});
  if (!boolean) {
    out(FusedOp::kPow, {x, s});
    for (FusedOp op : {FusedOp::kDivTrunc, FusedOp::kDivFloor, FusedOp::kRemainder, FusedOp::kFmod}) out(op, {x, y});
  }
  if (floating) out(FusedOp::kAtan2, {x, y});
  if (!floating) {
    for (FusedOp op : {FusedOp::kBitwiseAnd, FusedOp::kBitwiseOr, FusedOp::kBitwiseXor}) out(op, {x, y});
  }
  out(FusedOp::kAddAlpha, {x, y}, floating ? Scalar(0.25) : Scalar(int64_t{3}));
  out(FusedOp::kSubAlpha, {x, c}, floating ? Scalar(1.5) : Scalar(int64_t{2}));
  if (d == DType::kFloat16 || d == DType::kBFloat16) {  // by an f32 scalar, eager's reduced-precision path
    const int k = p.add_constant(0.1, DType::kFloat32);
    out(FusedOp::kMul, {x, k});
    out(FusedOp::kDiv, {y, k});
  }
  for (FusedOp op : {FusedOp::kEq, FusedOp::kNe, FusedOp::kLt, FusedOp::kLe, FusedOp::kGt, FusedOp::kGe,
                     FusedOp::kLogicalAnd, FusedOp::kLogicalOr, FusedOp::kLogicalXor}) {
    out(op, {x, y});
  }
  out(FusedOp::kWhere, {p.add_op(FusedOp::kLt, {x, y}), x, s});
  if (!boolean) {  // every operand kind: per element, broadcast, uniform, constant
    out(FusedOp::kFma, {x, y, s});
    out(FusedOp::kFma, {s, c, x});
  }
  // A uniform chain: computed once per thread, before the loop.
  p.add_output(p.add_op(FusedOp::kAdd, {s, c}));
  for (DType to : kFusedDTypes) {
    if (to != d) p.add_output(p.add_cast(x, to));
  }
  p.finalize();
  return p;
}

}  // namespace opspec::internal
