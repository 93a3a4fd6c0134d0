// blas.h: registration of the CUDA matrix products (mm, bmm, addmm, dot, mv
// through cuBLAS, kernels/cuda/blas.cc). See Note [Matrix products on CUDA].
#pragma once

#include "runtime/dispatch/library.h"

namespace opspec::internal {

// register_cuda_blas_kernels: mm, bmm, addmm, dot and mv at DispatchKey::kCUDA
// (their Meta kernels are the CPU's, kernels/common/linalg_meta.h).
void register_cuda_blas_kernels(Library& lib);

}  // namespace opspec::internal
