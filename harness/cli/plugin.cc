// plugin.cc: load_plugin. See Note [Plugins] in plugin.h.
#include "harness/cli/plugin.h"

#include <dlfcn.h>

#include <exception>

#include "runtime/core/error.h"

namespace opspec::cli {

absl::Status load_plugin(const std::string& path) {
  // A bare name ("libacme.so") would search the library path, not the
  // current directory, which is not what a user typing a file name means.
  const std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  dlerror();
  // RTLD_NOW: an undefined symbol is an error here, naming it, rather than a
  // crash at the first call. RTLD_GLOBAL: a second plugin may use the first.
  void* handle = dlopen(file.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::InvalidArgumentError(str_cat("--load ", path, ": ", why != nullptr ? why : "dlopen failed"));
  }
  using Init = void (*)();
  if (auto init = reinterpret_cast<Init>(dlsym(handle, "opspec_plugin_init")); init != nullptr) {
    try {
      init();
    } catch (const std::exception& e) {
      return absl::InvalidArgumentError(str_cat("--load ", path, ": opspec_plugin_init threw: ", e.what()));
    }
  }
  return absl::OkStatus();  // the handle stays open for the life of the process
}

}  // namespace opspec::cli
