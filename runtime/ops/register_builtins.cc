// register_builtins.cc: fills the dispatcher with the builtin ops of
// op_table.def and their kernels. See Note [Builtin registration].
#include <array>

#include "kernels/registration.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/op_table.h"

namespace opspec {

// Note [Builtin registration]
// The dispatcher registers builtins the first time it is used, in one explicit
// order: ops from the op table, then each kernel family, then the generic
// BackendSelect kernel for factories, the decompositions, and the mode
// fallbacks. Nothing relies on static initializers, so linking the static
// library never drops a kernel.

namespace internal {
const OperatorHandle* builtin_handles[static_cast<int>(OpId::kNumBuiltinOps)];
void register_decompositions(Dispatcher& d);  // runtime/ops/decompositions.cc
}  // namespace internal

absl::Span<const BuiltinOpInfo> builtin_op_table() {
  static constexpr BuiltinOpInfo kTable[] = {
#define OPSPEC_OP(id, schema, kind, composite) {OpId::id, schema, OpKind::kind, composite},
#include "runtime/ops/op_table.def"
#undef OPSPEC_OP
  };
  return kTable;
}

namespace {

// Factories with no tensor argument pick their backend from `device`.
void backend_select(const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  const int device_index = op.schema().argument_index("device");
  Device device = kCPU;
  if (device_index >= 0 && !stack[device_index].is_none()) device = stack[device_index].to_device();
  const DispatchKeySet next = (ks & DispatchKeySet::below(DispatchKey::kBackendSelect)) - kBackendKeys;
  Dispatcher::singleton().redispatch_boxed(op, next.add(backend_key(device.type)), stack);
}

}  // namespace

namespace internal {

void register_builtins(Dispatcher& d) {
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    // Composite ops become composite when their decomposition is registered.
    builtin_handles[static_cast<int>(row.id)] = &d.def(row.schema, row.kind, /*composite=*/false);
  }
  register_elementwise_kernels(d);
  register_reduction_kernels(d);
  register_linalg_kernels(d);
  register_factory_kernels(d);
  register_view_kernels(d);
  for (const BuiltinOpInfo& row : builtin_op_table()) {
    const OperatorHandle& op = *builtin_handles[static_cast<int>(row.id)];
    bool has_tensor_arg = false;
    for (const Argument& a : op.schema().arguments()) has_tensor_arg |= a.type.kind == TypeKind::kTensor;
    if (row.kind == OpKind::kFactory && !has_tensor_arg) {
      d.register_kernel(op, DispatchKey::kBackendSelect, KernelFunction::from_boxed(&backend_select, "backend_select"));
    }
  }
  register_decompositions(d);
  register_mode_fallbacks(d);
}

}  // namespace internal
}  // namespace opspec
