// register_cuda.cc: register_cuda_kernels, every CUDA kernel at
// DispatchKey::kCUDA, called from kernels/device_backends.cc when the backend
// is built (See Note [Device seam] in runtime/core/device_hooks.h).
#include "kernels/common/registration.h"
#include "kernels/common/views.h"
#include "kernels/cuda/blas.h"
#include "kernels/cuda/fused_codegen.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

namespace cuda {
// kernels/cuda/elementwise.cc, conversion.cc, reduce.cc, stats.cc, factory.cc, nn.cc, conv.cc.
void register_elementwise_cuda_kernels(Library& lib);
void register_conversion_cuda_kernels(Library& lib);
void register_reduction_cuda_kernels(Library& lib);
void register_stats_cuda_kernels(Library& lib);
void register_factory_cuda_kernels(Library& lib);
void register_nn_cuda_kernels(Library& lib);
void register_conv_cuda_kernels(Library& lib);
void register_pointwise_cuda_kernels(Library& lib);
void register_ternary_cuda_kernels(Library& lib);
void register_sort_cuda_kernels(Library& lib);  // kernels/cuda/sort.cc
void register_movement_cuda_kernels(Library& lib);  // kernels/cuda/movement.cc
void register_scatter_cuda_kernels(Library& lib);  // kernels/cuda/scatter.cc
}  // namespace cuda

void register_cuda_kernels(Dispatcher& d) {
  Library lib("aten", d);
  cuda::register_elementwise_cuda_kernels(lib);
  cuda::register_conversion_cuda_kernels(lib);
  cuda::register_reduction_cuda_kernels(lib);
  cuda::register_stats_cuda_kernels(lib);
  cuda::register_factory_cuda_kernels(lib);
  cuda::register_nn_cuda_kernels(lib);
  cuda::register_conv_cuda_kernels(lib);
  cuda::register_pointwise_cuda_kernels(lib);
  cuda::register_ternary_cuda_kernels(lib);
  cuda::register_sort_cuda_kernels(lib);
  cuda::register_movement_cuda_kernels(lib);
  cuda::register_scatter_cuda_kernels(lib);
  register_cuda_blas_kernels(lib);
  // Views only compute geometry: the CPU and Meta kernels serve CUDA too
  // (See Note [Device-independent views]).
  register_view_kernels_at(lib, DispatchKey::kCUDA);
  register_split_kernels_at(lib, DispatchKey::kCUDA);  // kernels/cpu/split.cc (views too)
  register_cuda_fused_kernels();
}

}  // namespace opspec::internal
