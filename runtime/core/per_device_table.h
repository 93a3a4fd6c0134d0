// per_device_table.h: PerDeviceTable, one value per device type that
// backends fill in while they start.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>

#include "runtime/core/device.h"

namespace opspec::internal {

// PerDeviceTable: one pointer-sized value (a kernel, a factory, hooks) per
// DeviceType, null until the device's backend registers one. Written while
// backends start (or by a test swapping a kernel), read on every call after:
// release/acquire, so a reader sees whatever the writer set up before storing.
// Readers that may run before any backend started call their start-up hook
// (the dispatcher's singleton, ensure_device_runtimes) before get(). Tables are
// constinit: filled with nulls before any start-up code runs.
template <typename T>
class PerDeviceTable {
 public:
  // set: installs value for type (null uninstalls).
  void set(DeviceType type, T value) noexcept { slots_[index(type)].store(value, std::memory_order_release); }

  // get: type's value, or null when no backend registered one.
  T get(DeviceType type) const noexcept { return slots_[index(type)].load(std::memory_order_acquire); }

 private:
  static size_t index(DeviceType type) noexcept { return static_cast<size_t>(type); }

  std::array<std::atomic<T>, kNumDeviceTypes> slots_{};
};

}  // namespace opspec::internal
