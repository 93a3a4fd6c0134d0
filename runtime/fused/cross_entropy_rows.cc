// cross_entropy_rows.cc: the per-device table of cross-entropy-over-rows
// kernels. See Note [Cross-entropy over rows].
#include "runtime/fused/cross_entropy_rows.h"

#include <array>
#include <atomic>

#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// Written while the dispatcher starts (or by a test), read by every run.
std::array<std::atomic<CrossEntropyRowsFn>, kNumDeviceTypes>& kernels() {
  static std::array<std::atomic<CrossEntropyRowsFn>, kNumDeviceTypes> table{};
  return table;
}

}  // namespace

void register_cross_entropy_rows(DeviceType type, CrossEntropyRowsFn fn) {
  kernels()[static_cast<size_t>(type)].store(fn, std::memory_order_release);
}

CrossEntropyRowsFn cross_entropy_rows(DeviceType type) {
  (void)Dispatcher::singleton();  // backends register their kernels as it starts
  return kernels()[static_cast<size_t>(type)].load(std::memory_order_acquire);
}

}  // namespace opspec::internal
