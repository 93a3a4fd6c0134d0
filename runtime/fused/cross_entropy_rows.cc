// cross_entropy_rows.cc: the per-device table of cross-entropy-over-rows
// kernels. See Note [Cross-entropy over rows].
#include "runtime/fused/cross_entropy_rows.h"

#include "runtime/core/per_device_table.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// Written while the dispatcher starts (or by a test), read by every run.
constinit PerDeviceTable<CrossEntropyRowsFn> kernels;

}  // namespace

void register_cross_entropy_rows(DeviceType type, CrossEntropyRowsFn fn) {
  kernels.set(type, fn);
}

CrossEntropyRowsFn cross_entropy_rows(DeviceType type) {
  (void)Dispatcher::singleton();  // backends register their kernels as it starts
  return kernels.get(type);
}

}  // namespace opspec::internal
