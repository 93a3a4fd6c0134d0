// matmul_epilogue.cc: the per-device table of linear-by-blocks runners. See
// Note [Matmul epilogues].
#include "runtime/fused/matmul_epilogue.h"

#include <array>
#include <atomic>

#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// Written while the dispatcher starts (or by a test), read by every run.
std::array<std::atomic<LinearBlocksFn>, kNumDeviceTypes>& runners() {
  static std::array<std::atomic<LinearBlocksFn>, kNumDeviceTypes> table{};
  return table;
}

}  // namespace

void register_linear_blocks(DeviceType type, LinearBlocksFn fn) {
  runners()[static_cast<size_t>(type)].store(fn, std::memory_order_release);
}

LinearBlocksFn linear_blocks(DeviceType type) {
  (void)Dispatcher::singleton();  // backends register their runners as it starts
  return runners()[static_cast<size_t>(type)].load(std::memory_order_acquire);
}

}  // namespace opspec::internal
