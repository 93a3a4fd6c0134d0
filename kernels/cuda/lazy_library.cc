// lazy_library.cc: See Note [Loading CUDA libraries lazily] in lazy_library.h.
#include "kernels/cuda/lazy_library.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "runtime/core/error.h"

namespace opspec::internal::cuda {
namespace {

// beside_cudart: the path of soname in the directory of the loaded libcudart,
// or "".
std::string beside_cudart(const std::string& soname) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string cudart = info.dli_fname;
  const size_t slash = cudart.rfind('/');
  return slash == std::string::npos ? "" : cudart.substr(0, slash + 1) + soname;
}

}  // namespace

ToolkitLibrary::ToolkitLibrary(std::string soname) : soname_(std::move(soname)) {
  std::string errors;
  for (const std::string& path : {beside_cudart(soname_), soname_}) {
    if (path.empty()) continue;
    if ((handle_ = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) return;
    const char* why = dlerror();
    str_append(&errors, errors.empty() ? "" : "; ", why != nullptr ? why : path);
  }
  OPSPEC_CHECK(false, "CUDA: ", soname_, " could not be loaded: ", errors);
}

void* ToolkitLibrary::raw_symbol(const char* name) const {
  void* p = dlsym(handle_, name);
  OPSPEC_CHECK(p != nullptr, "CUDA: ", soname_, " has no ", name,
               " (a library older than the toolkit opspec was built with?)");
  return p;
}

}  // namespace opspec::internal::cuda
