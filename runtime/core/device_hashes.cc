// device_hashes.cc: the per-device table of tensor hashes.
#include "runtime/core/device_hashes.h"

#include <array>
#include <atomic>

#include "runtime/core/device_hooks.h"

namespace opspec {
namespace {

constexpr size_t kNumKinds = 3;
std::array<std::array<std::atomic<DeviceHashFn>, kNumKinds>, kNumDeviceTypes> table{};

}  // namespace

void register_device_hash(DeviceType type, DeviceHashKind kind, DeviceHashFn fn) {
  table[static_cast<size_t>(type)][static_cast<size_t>(kind)].store(fn, std::memory_order_release);
}

DeviceHashFn find_device_hash(DeviceType type, DeviceHashKind kind) {
  internal::ensure_device_runtimes();
  return table[static_cast<size_t>(type)][static_cast<size_t>(kind)].load(std::memory_order_acquire);
}

}  // namespace opspec
