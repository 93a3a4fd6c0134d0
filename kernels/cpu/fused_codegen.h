// fused_codegen.h: C++ generated for a FusedProgram and compiled at run time
// for the CPU: one loop over a tile that evaluates every instruction in
// registers. fused.cc runs it tile by tile in place of its interpreter when
// the codegen policy says so. See Note [Generated CPU kernels].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "runtime/fused/fused_program.h"

namespace opspec::internal {

// FusedTileFn: a generated kernel over one tile of n output elements.
// in[k]: input k's n elements (contiguous), or its one element when the
// input is uniform, or null when the program never reads it; out[k]: output
// k's n elements.
using FusedTileFn = void (*)(int64_t n, const void* const* in, void* const* out);

// fused_cpu_source: the C++ source of program as `extern "C"` function name
// (a FusedTileFn). The text depends only on the program's structure and
// name, never its shape. Requires a finalized program.
std::string fused_cpu_source(const FusedProgram& program, std::string_view name);

// compile_fused_cpu: fused_cpu_source compiled and loaded (See Note
// [Run-time CPU compilation] in cpu_jit.h); cached by the program's
// structure and name, so a second kernel of the same structure costs a hash.
// Throws opspec::Error with the compiler's output when it fails.
FusedTileFn compile_fused_cpu(const FusedProgram& program, std::string_view name);

// CpuFusedCodegen: when the CPU's fused kernels generate code.
enum class CpuFusedCodegen {
  kAuto,    // at a kernel's first run over kCodegenRunElements, or once its runs
            // total kCodegenTotalElements, if a compiler runs
  kAlways,  // when the kernel is made; compile errors throw
  kNever,   // never: the interpreter runs every program
};

// kCodegenRunElements / kCodegenTotalElements: when kAuto compiles a kernel
// (See Note [Generated CPU kernels]).
inline constexpr int64_t kCodegenRunElements = int64_t{1} << 16;
inline constexpr int64_t kCodegenTotalElements = int64_t{1} << 22;

// cpu_fused_codegen: the policy: set_cpu_fused_codegen's, else
// $OPSPEC_CPU_CODEGEN ("auto", "always" or "never"; read once), else kAuto.
CpuFusedCodegen cpu_fused_codegen();
// set_cpu_fused_codegen: overrides the policy for kernels made from now on.
void set_cpu_fused_codegen(CpuFusedCodegen policy);

// CpuFusedCodegenGuard: sets the policy for its scope, then restores it.
class CpuFusedCodegenGuard {
 public:
  explicit CpuFusedCodegenGuard(CpuFusedCodegen policy) : saved_(cpu_fused_codegen()) {
    set_cpu_fused_codegen(policy);
  }
  ~CpuFusedCodegenGuard() { set_cpu_fused_codegen(saved_); }
  CpuFusedCodegenGuard(const CpuFusedCodegenGuard&) = delete;
  CpuFusedCodegenGuard& operator=(const CpuFusedCodegenGuard&) = delete;

 private:
  CpuFusedCodegen saved_;
};

}  // namespace opspec::internal
