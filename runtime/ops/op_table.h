// op_table.h: OpId, the dense ids of the builtin ops declared in op_table.def,
// and fast access to their handles.
#pragma once

#include <string_view>

#include "runtime/dispatch/dispatcher.h"

namespace opspec {

// Note [One row per op]
// Each builtin op's facts are written once: its schema, kind and whether it
// is composite in op_table.def, and, for an elementwise unary op, its functor
// and dtype rule in unary_ops.def. Every layer expands those rows with
// X-macros instead of restating them: ops.h/ops.cc (the ops:: functions), the
// Meta, CPU and CUDA kernels and their registrations (kernels/), the fused
// backend's FusedOp and rule table (runtime/fused/, runtime/compile/fusion_lowering.cc)
// and the CUDA fused code generator; each unary row also makes its in-place
// op (See Note [In-place unary ops] in elementwise_rules.h). Adding an
// elementwise unary op is its row, its functor in
// kernels/common/elementwise_ops.h and a test;
// op_table_test.cc checks every row against the started dispatcher.

// OpId: one enumerator per line of op_table.def, in order.
enum class OpId : int {
#define OPSPEC_OP(id, schema, kind, composite) id,
#include "runtime/ops/op_table.def"
#undef OPSPEC_OP
  kNumBuiltinOps
};

// BuiltinOpInfo: one row of the op table.
struct BuiltinOpInfo {
  OpId id;
  std::string_view schema;
  OpKind kind;
  bool composite;
};

// builtin_op_table: every row of op_table.def.
absl::Span<const BuiltinOpInfo> builtin_op_table();

namespace internal {
// builtin_handles: handles indexed by OpId, filled when the dispatcher starts.
extern const OperatorHandle* builtin_handles[static_cast<int>(OpId::kNumBuiltinOps)];
}  // namespace internal

// builtin_op: the handle of a builtin op.
inline const OperatorHandle& builtin_op(OpId id) {
  (void)Dispatcher::singleton();  // made on first use, which fills builtin_handles
  return *internal::builtin_handles[static_cast<int>(id)];
}

}  // namespace opspec
