#include "runtime/core/dispatch_key.h"

#include <array>

#include "runtime/core/error.h"

namespace opspec {
namespace {
constexpr std::array<std::string_view, kNumDispatchKeys> kNames = {
    "CPU", "CUDA", "Meta", "Fake", "BackendSelect", "Python", "CompositeImplicit",
    "Autograd", "FunctionMode", "PreDispatch", "PythonDispatcher"};
}  // namespace

std::string_view dispatch_key_name(DispatchKey k) { return kNames[static_cast<int>(k)]; }

DispatchKey parse_dispatch_key(std::string_view name) {
  for (int i = 0; i < kNumDispatchKeys; ++i) {
    if (kNames[i] == name) return static_cast<DispatchKey>(i);
  }
  OPSPEC_FAIL("unknown dispatch key '", name, "'");
}

std::string DispatchKeySet::str() const {
  std::string out = "DispatchKeySet(";
  bool first = true;
  for (int i = kNumDispatchKeys - 1; i >= 0; --i) {
    if (!has(static_cast<DispatchKey>(i))) continue;
    str_append(&out, first ? "" : ", ", kNames[i]);
    first = false;
  }
  return out + ")";
}

}  // namespace opspec
