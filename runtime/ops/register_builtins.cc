// register_builtins.cc: fills the dispatcher with the builtin ops of
// op_table.def and their kernels. See Note [Builtin registration].
#include <array>

#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/op_table.h"

namespace opspec {

// Note [Builtin registration]
// The dispatcher registers builtins the first time it is used, in one explicit
// order: ops from the op table, then the kernels (register_builtin_kernels,
// the kernels' composition root in kernels/register_kernels.cc, which the
// runtime knows only by this declaration, so no runtime header includes
// kernels/), the decompositions, the mode fallbacks, and the Autograd key's
// kernel (register_autograd in runtime/autograd, known the same way, a layer
// above ops). Nothing relies on static initializers, so linking the static
// library never drops a kernel.

namespace internal {
const OperatorHandle* builtin_handles[static_cast<int>(OpId::kNumBuiltinOps)];
void register_decompositions(Dispatcher& d);    // runtime/ops/decompositions.cc
void register_nn_decompositions(Dispatcher& d);  // runtime/ops/decompositions_nn.cc
void register_movement_decompositions(Dispatcher& d);  // runtime/ops/decompositions_movement.cc
void register_norm_decompositions(Dispatcher& d);  // runtime/ops/decompositions_norm.cc
void register_builtin_kernels(Dispatcher& d);  // kernels/register_kernels.cc
void register_autograd(Dispatcher& d);         // runtime/autograd/autograd_kernel.cc
}  // namespace internal

absl::Span<const BuiltinOpInfo> builtin_op_table() {
  static constexpr BuiltinOpInfo kTable[] = {
#define OPSPEC_OP(id, schema, kind, composite) {OpId::id, schema, OpKind::kind, composite},
#include "runtime/ops/op_table.def"
#undef OPSPEC_OP
  };
  return kTable;
}

namespace internal {

void register_builtins(Dispatcher& d) {
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    // Composite ops become composite when their decomposition is registered.
    builtin_handles[static_cast<int>(row.id)] = &d.def(row.schema, row.kind, /*composite=*/false);
  }
#define OPSPEC_OP_TAG(id, tag) d.add_tag(*builtin_handles[static_cast<int>(OpId::id)], OpTag::tag);
#define OPSPEC_OP(id, schema, kind, composite)
#include "runtime/ops/op_table.def"
#undef OPSPEC_OP
#undef OPSPEC_OP_TAG
  register_builtin_kernels(d);
  register_decompositions(d);
  register_nn_decompositions(d);
  register_movement_decompositions(d);
  register_norm_decompositions(d);
  register_mode_fallbacks(d);
  register_fake_fallback(d);
  register_autograd(d);
}

}  // namespace internal
}  // namespace opspec
