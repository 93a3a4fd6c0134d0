// fused_kernel.h: FusedKernel, a finalized FusedProgram made runnable on one
// device, and the per-device table of kernel factories that backends fill.
// See Note [Fused kernels per device].
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "runtime/core/device.h"
#include "runtime/fused/fused_program.h"

namespace opspec::internal {

// Note [Fused kernels per device]
// The fused backend knows the IR (FusedProgram), never a device's way of
// running it: each backend registers a FusedKernelFactory for its device
// type while the dispatcher starts (the CPU's interprets the program with
// typed loops and generates C++ for the kernels that run longest, See Note
// [Generated CPU kernels]; CUDA's generates and compiles source), and the backend asks
// make_fused_kernel for the group's device. A device type with no factory
// fails with an error naming it, never a branch on the device in the compiler.

// MatrixBlock: rows [row0, row0 + rows) x columns [col0, col0 + cols) of a
// row-major matrix (a block of a product's output: See Note [Matmul epilogues]
// in matmul_epilogue.h).
struct MatrixBlock {
  int64_t row0 = 0, rows = 0, col0 = 0, cols = 0;
};

// FusedKernel: one program, ready to run on one device type.
class FusedKernel {
 public:
  virtual ~FusedKernel() = default;
  // run: evaluates the program: inputs[k] has input k's dtype and sizes (any
  // strides); outputs are fresh contiguous tensors of the program's shape and
  // output dtypes (on cpu also all dense in one other order of their dims,
  // as eager lays them out: See Note [Fused outputs in eager's layout] in
  // kernels/cpu/fused.cc), or on cpu an input itself (written over element for
  // element, See Note [In-place fusion]); all on the kernel's device. Throws
  // opspec::Error naming the offending argument.
  virtual void run(TensorList inputs, TensorList outputs) const = 0;
  // run_block: evaluates the program on one block of its output only, the
  // output's elements viewed as a row-major matrix of `width` columns, on the
  // calling thread (a matmul epilogue: See Note [Matmul epilogues]); the same
  // operands as run. Blocks are independent: disjoint ones may run at once.
  // Devices whose kernels run whole programs only refuse it.
  virtual void run_block(TensorList inputs, TensorList outputs, const MatrixBlock& block, int64_t width) const;
};

// FusedKernelFactory: makes a device's kernel for a finalized program; name is
// the fused group's name (a kernel name for profilers and generated source).
using FusedKernelFactory = std::unique_ptr<FusedKernel> (*)(std::shared_ptr<const FusedProgram> program,
                                                            std::string_view name);

// register_fused_kernel_factory: installs how device type runs fused programs
// (called by backends at dispatcher start; a later call replaces it).
void register_fused_kernel_factory(DeviceType type, FusedKernelFactory factory);

// make_fused_kernel: program's kernel on device type; throws
// NotImplementedError naming the device when no backend runs fused programs there.
std::unique_ptr<FusedKernel> make_fused_kernel(DeviceType type, std::shared_ptr<const FusedProgram> program,
                                               std::string_view name);

}  // namespace opspec::internal
