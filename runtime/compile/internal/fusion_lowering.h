// fusion_lowering.h: lowering graph nodes to FusedProgram instructions, for
// the partitioning pass (fusion.cc). See Note [Fusion] in fusion.h.
#pragma once

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/fused/fused_program.h"
#include "runtime/graph/graph.h"

namespace opspec::internal {

// has_fusion_rule: n is a call of an op (or an in-place op whose functional
// form, See Note [In-place fusion]) with a row in the fusion rule table: a
// builtin elementwise op. Whether this call fuses is Lowerer's to say.
bool has_fusion_rule(const Node& n);

// is_inplace_call: n calls an in-place op whose functional form fuses (See
// Note [In-place fusion]).
bool is_inplace_call(const Node& n);

// single_tensor: the metadata of a node producing one tensor on cpu or, for
// the CUDA backend's fused kernels, cuda (See Note [Fused CUDA kernels]); or null.
const TensorMeta* single_tensor(const Node& n);

// Operand: a lowered tensor argument: its register, and a tensor with its
// dtype, sizes and wrapped-number flag (a meta tensor, or the wrapped number
// itself) for the op's shape function.
struct Operand {
  int reg;
  Tensor proxy;
};

// Lowerer: builds one program, mapping nodes to registers: members already
// lowered, and outside nodes as inputs (recorded in first-use order), which
// must be on the group's device.
struct Lowerer {
  FusedProgram& program;
  Device device;
  absl::flat_hash_map<const Node*, Operand> regs;
  std::vector<Node*> inputs;

  // operand: argument i of n, lowered (a constant, a member's register or a new input).
  Operand operand(const Node& n, size_t i);

  // lower: n's instructions (throws opspec::Error where eager would reject the
  // call or the op has no rule); its result must have the dtype n was traced with.
  int lower(const Node& n);
};

}  // namespace opspec::internal
