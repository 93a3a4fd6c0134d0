// register_views.cc: registers the device-independent view kernels of
// kernels/common/views.h. See Note [Device-independent views].
#include "kernels/common/views.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

void register_view_kernels_at(Library& lib, DispatchKey key) {
  lib.impl("view", key, &view_kernel)
      .impl("_unsafe_view", key, &unsafe_view_kernel)
      .impl("as_strided", key, &as_strided_kernel)
      .impl("as_strided_", key, &as_strided_inplace_kernel)
      .impl("permute", key, &permute_kernel)
      .impl("t", key, &t_kernel)
      .impl("transpose.int", key, &transpose_kernel)
      .impl("expand", key, &expand_kernel)
      .impl("unsqueeze", key, &unsqueeze_kernel)
      .impl("squeeze", key, &squeeze_kernel)
      .impl("squeeze.dim", key, &squeeze_dim_kernel)
      .impl("squeeze_.dim", key, &squeeze_inplace_dim_kernel)
      .impl("t_", key, &t_inplace_kernel)
      .impl("transpose_", key, &transpose_inplace_kernel)
      .impl("unsqueeze_", key, &unsqueeze_inplace_kernel)
      .impl("slice.Tensor", key, &slice_kernel)
      .impl("select.int", key, &select_kernel)
      .impl("alias", key, &alias_kernel)
      .impl("detach", key, &detach_kernel)
      .impl("lift_fresh", key, &lift_fresh_kernel)
      .impl("lift_fresh_copy", key, &lift_fresh_copy_kernel)
      .impl("new_empty_strided", key, &new_empty_strided_kernel);
}

void register_view_kernels(Dispatcher& d) {
  Library lib("aten", d);
  // The same kernels serve CPU and Meta; the CUDA backend registers them at
  // DispatchKey::kCUDA too when it is built (kernels/cuda/register_cuda.cc).
  register_view_kernels_at(lib, DispatchKey::kCPU);
  register_view_kernels_at(lib, DispatchKey::kMeta);
}

}  // namespace opspec::internal
