// device.h: Device, where a tensor's data lives (cpu, meta, cuda:N).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace opspec {

// DeviceType: cpu holds data in host memory; meta holds no data at all (shape
// inference only); cuda is backed by the optional CUDA backend.
enum class DeviceType : uint8_t { kCPU, kMeta, kCUDA };

// kNumDeviceTypes: how many DeviceType values there are.
inline constexpr int kNumDeviceTypes = 3;

// Device: a device type plus an index (-1 means "the current one", as in torch).
struct Device {
  DeviceType type = DeviceType::kCPU;
  int8_t index = -1;

  constexpr Device() = default;
  constexpr Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}  // NOLINT

  // parse: "cpu", "meta", "cuda", "cuda:1". Throws opspec::Error on anything else.
  static Device parse(std::string_view text);

  // str: "cpu", "meta", "cuda" or "cuda:1", as torch prints devices.
  std::string str() const;

  bool is_cpu() const { return type == DeviceType::kCPU; }
  bool is_meta() const { return type == DeviceType::kMeta; }
  bool is_cuda() const { return type == DeviceType::kCUDA; }

  friend constexpr bool operator==(Device a, Device b) {
    // An unindexed cuda device equals cuda:0, like torch's current device.
    return a.type == b.type && (a.index == b.index || (a.index <= 0 && b.index <= 0));
  }
};

// device_type_name: "cpu", "meta", "cuda".
std::string_view device_type_name(DeviceType t);

// kCPU / kMeta: the two devices every build has.
inline constexpr Device kCPU{DeviceType::kCPU};
inline constexpr Device kMeta{DeviceType::kMeta};

}  // namespace opspec
