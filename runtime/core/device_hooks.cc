#include "runtime/core/device_hooks.h"

#include <mutex>

#include "runtime/core/error.h"
#include "runtime/core/per_device_table.h"

namespace opspec {

namespace {

// MissingBackendHooks: a device type whose backend is not built. Queries say
// there are no devices; anything that would touch one throws.
class MissingBackendHooks final : public DeviceHooks {
 public:
  bool is_built() const override { return false; }
  int device_count() const override { return 0; }
  Device check_device(Device device, std::string_view op) const override { fail(op); }
  void copy_bytes(void*, Device, const void*, Device, size_t) override { fail("copy_bytes"); }
  void synchronize(Device) override { fail("synchronize"); }

 private:
  [[noreturn]] static void fail(std::string_view op) {
    internal::throw_not_implemented(str_cat(op, ": ", kNoCudaBackendMessage));
  }
};

constinit internal::PerDeviceTable<DeviceHooks*> hooks_table;

}  // namespace

DeviceHooks& get_device_hooks(DeviceType type) {
  OPSPEC_CHECK(type != DeviceType::kCPU && type != DeviceType::kMeta, "get_device_hooks: ", device_type_name(type),
               " has no device hooks (it is the host, or holds no data)");
  internal::ensure_device_runtimes();
  static MissingBackendHooks missing;
  DeviceHooks* hooks = hooks_table.get(type);
  return hooks != nullptr ? *hooks : missing;
}

namespace internal {

void register_device_hooks(DeviceType type, DeviceHooks* hooks) {
  OPSPEC_INTERNAL_ASSERT(type != DeviceType::kCPU && type != DeviceType::kMeta);
  hooks_table.set(type, hooks);
}

void ensure_device_runtimes() {
  static std::once_flag once;
  std::call_once(once, &install_device_runtimes);
}

}  // namespace internal

}  // namespace opspec
