// device_hashes.cc: the per-device table of tensor hashes.
#include "runtime/core/device_hashes.h"

#include <array>

#include "runtime/core/device_hooks.h"
#include "runtime/core/per_device_table.h"

namespace opspec {
namespace {

constexpr size_t kNumKinds = 3;
constinit std::array<internal::PerDeviceTable<DeviceHashFn>, kNumKinds> table;  // by kind

}  // namespace

void register_device_hash(DeviceType type, DeviceHashKind kind, DeviceHashFn fn) {
  table[static_cast<size_t>(kind)].set(type, fn);
}

DeviceHashFn find_device_hash(DeviceType type, DeviceHashKind kind) {
  internal::ensure_device_runtimes();
  return table[static_cast<size_t>(kind)].get(type);
}

}  // namespace opspec
