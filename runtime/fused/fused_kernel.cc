// fused_kernel.cc: the per-device table of fused kernel factories. See Note
// [Fused kernels per device].
#include "runtime/fused/fused_kernel.h"

#include "runtime/core/per_device_table.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// Written while the dispatcher starts (or by a test), read by every compile.
constinit PerDeviceTable<FusedKernelFactory> factories;

}  // namespace

void FusedKernel::run_block(TensorList, TensorList, const MatrixBlock&, int64_t) const {
  throw NotImplementedError("fused kernels: this device's kernels run whole programs only, not blocks of them");
}

void register_fused_kernel_factory(DeviceType type, FusedKernelFactory factory) {
  factories.set(type, factory);
}

std::unique_ptr<FusedKernel> make_fused_kernel(DeviceType type, std::shared_ptr<const FusedProgram> program,
                                               std::string_view name) {
  (void)Dispatcher::singleton();  // backends register their factories as it starts
  OPSPEC_CHECK(program != nullptr && program->finalized(), "make_fused_kernel: ", name,
               ": the program is not finalized");
  const FusedKernelFactory factory = factories.get(type);
  if (factory == nullptr) {
    throw NotImplementedError(str_cat("fused kernels: no backend runs fused programs on ", device_type_name(type),
                                      " tensors (kernel ", name, ")"));
  }
  return factory(std::move(program), name);
}

}  // namespace opspec::internal
