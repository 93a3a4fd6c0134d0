// matmul_epilogue.h: the seam through which the fused backend has a device
// compute a linear's product block by block, running a fused group's program
// on each block as it is finished. See Note [Matmul epilogues].
#pragma once

#include "absl/functional/function_ref.h"
#include "runtime/core/device.h"
#include "runtime/core/tensor.h"
#include "runtime/fused/fused_kernel.h"

namespace opspec::internal {

// Note [Matmul epilogues]
// Eager runs GPT-2's `gelu(c_fc(x))` as an addmm that writes [512, 1024]
// floats, then a gelu that reads them back from memory into a second buffer;
// a projection and its residual add the same way. Inductor's CPU GEMM
// template instead runs the pointwise ops as an epilogue on each block of the
// product while the block is still in cache. The fused backend does that for
// a `linear` whose result only one fused group reads, with that group's shape
// (its members elementwise, so element i of the group reads element i of the
// product): the device computes the product exactly as its addmm (with a
// bias) or mm (without) computes linear's, the same BLAS calls on the same
// blocks, so the same bits; after each block of the output is final, on the
// thread that computed it, the group's program runs on that block
// (FusedKernel::run_block) and writes its result over the product element for
// element (See Note [In-place fusion]). The product's buffer becomes the
// group's output: no temporary, and one pass over memory fewer. Anything the
// runner cannot do as eager would (a non-contiguous input of more than two
// dims, mixed dtypes, a bias that is not a vector) it declines, and the
// backend runs the linear and the group one after the other instead.

// MatrixBlockFn: called on each finished block of a product's output.
using MatrixBlockFn = absl::FunctionRef<void(const MatrixBlock&)>;

// LinearBlocksFn: linear(input, weight, bias) into out, a fresh contiguous
// [n, m] tensor, input viewed as [n, k] (weight [m, k], bias [m] or null),
// computed as the device's linear computes it: start() runs once it has
// accepted the operands, then done(block) once on each block of out as soon
// as it is final, blocks disjoint and covering out, some at once on
// different threads. Returns false, with nothing called or computed, when it
// cannot compute the product as eager would.
using LinearBlocksFn = bool (*)(const Tensor& out, const Tensor& input, const Tensor& weight, const Tensor* bias,
                                absl::FunctionRef<void()> start, MatrixBlockFn done);

// register_linear_blocks: installs device type's runner (at dispatcher start).
void register_linear_blocks(DeviceType type, LinearBlocksFn fn);

// linear_blocks: device type's runner, or null when it has none.
LinearBlocksFn linear_blocks(DeviceType type);

}  // namespace opspec::internal
