// device_backends.cc: the seam between the runtime and the optional device
// backends, and the only file compiled with OPSPEC_HAS_CUDA (set by
// cmake/opspec_cuda.cmake when the CUDA backend is built). See Note [Device seam].
#include "kernels/common/registration.h"
#include "runtime/core/device_hooks.h"

namespace opspec::internal {

#ifdef OPSPEC_HAS_CUDA
// kernels/cuda/register_cuda.cc and kernels/cuda/cuda_hooks.cc.
void register_cuda_kernels(Dispatcher& d);
void install_cuda_runtime();
#endif

void register_device_backends(Dispatcher& d) {
#ifdef OPSPEC_HAS_CUDA
  register_cuda_kernels(d);
#endif
}

void install_device_runtimes() {
#ifdef OPSPEC_HAS_CUDA
  install_cuda_runtime();
#endif
}

}  // namespace opspec::internal
