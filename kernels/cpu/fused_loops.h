// fused_loops.h: the typed loop of each FusedProgram instruction, which the
// CPU's tile interpreter (fused.cc) runs over a tile at a time. See Note
// [Fused loops run wide] in fused_loops.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/fused/fused_program.h"

namespace opspec::internal {

// FusedLoopFn: one instruction's typed loop over n elements: out[i] =
// op(args[0][i], ...); bit k of mask marks argument k as one broadcast value.
using FusedLoopFn = void (*)(const FusedProgram::Instr& ins, char* out, char* const* args, unsigned mask, int64_t n);

// select_fused_loop: the typed loop of an instruction whose operand dtypes
// were validated by FusedProgram::add_op (null only for combinations add_op rejects).
FusedLoopFn select_fused_loop(const FusedProgram::Instr& ins, const std::vector<FusedProgram::Reg>& regs);

}  // namespace opspec::internal
