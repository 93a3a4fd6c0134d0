// matmul_epilogue.cc: the per-device table of linear-by-blocks runners. See
// Note [Matmul epilogues].
#include "runtime/fused/matmul_epilogue.h"

#include "runtime/core/per_device_table.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// Written while the dispatcher starts (or by a test), read by every run.
constinit PerDeviceTable<LinearBlocksFn> runners;

}  // namespace

void register_linear_blocks(DeviceType type, LinearBlocksFn fn) {
  runners.set(type, fn);
}

LinearBlocksFn linear_blocks(DeviceType type) {
  (void)Dispatcher::singleton();  // backends register their runners as it starts
  return runners.get(type);
}

}  // namespace opspec::internal
