#include "runtime/core/device.h"

#include <charconv>

#include "runtime/core/error.h"

namespace opspec {

std::string_view device_type_name(DeviceType t) {
  switch (t) {
    case DeviceType::kCPU: return "cpu";
    case DeviceType::kMeta: return "meta";
    case DeviceType::kCUDA: return "cuda";
  }
  return "?";
}

namespace {
// kMaxDeviceIndex: the largest index parse accepts (Device::index is an int8_t).
constexpr int kMaxDeviceIndex = 126;
}  // namespace

Device Device::parse(std::string_view text) {
  std::string_view type = text;
  int index = -1;
  if (auto colon = text.find(':'); colon != std::string_view::npos) {
    type = text.substr(0, colon);
    std::string_view digits = text.substr(colon + 1);
    OPSPEC_CHECK(!digits.empty() && digits.find_first_not_of("0123456789") == std::string_view::npos,
                 "invalid device string '", text, "': expected an index after ':'");
    // Digits that do not fit an int are out of range too, not a missing index.
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index);
    OPSPEC_CHECK(ec == std::errc() && index <= kMaxDeviceIndex, "invalid device string '", text, "': device index ",
                 shorten(digits, 40), " is out of range; indices go from 0 to ", kMaxDeviceIndex);
  }
  if (type == "cpu") return Device(DeviceType::kCPU, static_cast<int8_t>(index));
  if (type == "meta") return Device(DeviceType::kMeta, static_cast<int8_t>(index));
  if (type == "cuda") return Device(DeviceType::kCUDA, static_cast<int8_t>(index));
  OPSPEC_FAIL("invalid device string '", text, "': expected cpu, meta, cuda or cuda:N");
}

std::string Device::str() const {
  std::string s(device_type_name(type));
  if (index >= 0 && type == DeviceType::kCUDA) str_append(&s, ":", index);
  return s;
}

}  // namespace opspec
