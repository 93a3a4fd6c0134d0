// register_kernels.cc: the kernels' composition root: register_builtin_kernels
// puts every kernel family, the fused kernel runners, the CPU copy behind
// copy_untraced and the built device backends into the dispatcher. The runtime calls it while the dispatcher
// starts, knowing only its declaration (See Note [Builtin registration]).
#include "kernels/cpu/copy.h"
#include "kernels/cpu/fused.h"
#include "kernels/meta/elementwise_meta.h"
#include "kernels/common/registration.h"
#include "kernels/common/scatter_meta.h"
#include "kernels/common/sort_meta.h"
#include "kernels/common/movement_meta.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/untraced.h"

namespace opspec::internal {

void register_builtin_kernels(Dispatcher& d) {
  register_elementwise_kernels(d);
  {
    Library lib("aten", d);
    register_elementwise_meta_kernels(lib);
  }
  register_reduction_kernels(d);
  register_linalg_kernels(d);
  register_backward_kernels(d);
  register_nn_kernels(d);
  register_sort_kernels(d);
  register_scatter_kernels(d);
  register_movement_kernels(d);
  register_factory_kernels(d);
  register_view_kernels(d);
  register_random_kernels(d);
  register_split_kernels(d);
  register_cpu_fused_kernels();
  register_cpu_copy(&copy_into);
  register_device_backends(d);
}

}  // namespace opspec::internal
