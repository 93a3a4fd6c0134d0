// fused.h: the CPU's fused elementwise kernels: run_fused evaluates a
// FusedProgram (runtime/fused/fused_program.h) over its output shape in one
// pass, tile by tile (See Note [Fused kernels]); the CPU's FusedKernel
// factory does the same with its loops chosen once, and runs generated code
// instead once the codegen policy says so (See Note [Generated CPU kernels]
// in fused_codegen.cc).
#pragma once

#include "runtime/fused/fused_kernel.h"
#include "runtime/fused/fused_program.h"

namespace opspec::internal {

// run_fused: evaluates a finalized program: inputs[k] must have input k's
// dtype and sizes (any strides, cpu); outputs[k] must be cpu tensors of output
// k's dtype and the program's shape, contiguous or all dense in one other
// order of their dims (written in that order: See Note [Fused outputs in
// eager's layout] in fused.cc), aliasing no input or other output. Parallel across tiles for large shapes. Throws opspec::Error naming
// the offending argument.
void run_fused(const FusedProgram& program, TensorList inputs, TensorList outputs);

// register_cpu_fused_kernels: registers the CPU's FusedKernelFactory (See
// Note [Fused kernels per device]); called by the kernels' composition root.
void register_cpu_fused_kernels();

}  // namespace opspec::internal
