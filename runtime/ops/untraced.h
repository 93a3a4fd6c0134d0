// untraced.h: copies of cpu tensors that no mode, tensor subclass or kernel
// observer sees, for bookkeeping around the ops a user runs (the harness
// cloning inputs between two runs, a device backend staging data on the host).
#pragma once

#include "runtime/core/tensor.h"

namespace opspec {

// copy_untraced: dst[...] = src[...] for cpu tensors, converting src's dtype
// and broadcasting it to dst's shape (dst may be any strided view), without
// dispatching. Throws opspec::Error naming both tensors otherwise.
void copy_untraced(const Tensor& dst, const Tensor& src);

// clone_untraced: a new tensor with t's sizes, strides, dtype and dim marks
// holding a copy of its data, made by copy_untraced (t must be on the cpu);
// an undefined t gives an undefined tensor.
Tensor clone_untraced(const Tensor& t);

namespace internal {

// CpuCopyFn: the CPU backend's strided, converting copy.
using CpuCopyFn = void (*)(const Tensor& dst, const Tensor& src);

// register_cpu_copy: installs the CPU backend's copy behind copy_untraced
// (the kernels' composition root does, while the dispatcher starts).
void register_cpu_copy(CpuCopyFn fn);

}  // namespace internal
}  // namespace opspec
