// device_hashes.h: the table of tensor hashes that device backends compute
// where a tensor's data lives, so hashing a device tensor copies nothing to
// the host. The harness defines the hashes (harness/tensor_hash.h) and looks
// them up here; a backend registers its versions when its runtime is
// installed (See Note [Device seam] in device_hooks.h).
#pragma once

#include <cstdint>
#include <optional>

#include "runtime/core/device.h"

namespace opspec {

class Tensor;

// DeviceHashKind: which hash: the harness's norm_hash, xor_hash or bitwise_hash.
enum class DeviceHashKind : uint8_t { kNorm, kXor, kBitwise };

// DeviceHashFn: one hash of a tensor computed on its device, as 64 bits (a
// norm hash's double bit-cast); nullopt when this tensor cannot be hashed
// there, and the caller then copies it to the host.
using DeviceHashFn = std::optional<uint64_t> (*)(const Tensor& t);

// register_device_hash: installs a backend's hash for its device type.
void register_device_hash(DeviceType type, DeviceHashKind kind, DeviceHashFn fn);

// find_device_hash: the registered hash, or null (installing the built
// backends' runtimes first).
DeviceHashFn find_device_hash(DeviceType type, DeviceHashKind kind);

}  // namespace opspec
