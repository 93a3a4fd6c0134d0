// cublas_loader.cc: See Note [Loading cuBLAS lazily] in cublas_loader.h.
#include "kernels/cuda/cublas_loader.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <string>

#include "runtime/core/error.h"

namespace opspec::internal::cuda {
namespace {

// kCublasSoname: "libcublas.so.13" for the toolkit opspec was built with.
const std::string& cublas_soname() {
  static const std::string name = str_cat("libcublas.so.", CUBLAS_VER_MAJOR);
  return name;
}

// beside_cudart: the path of the cuBLAS library next to the loaded libcudart, or "".
std::string beside_cudart() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&cudaGetDeviceCount), &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string cudart = info.dli_fname;
  const size_t slash = cudart.rfind('/');
  return slash == std::string::npos ? "" : cudart.substr(0, slash + 1) + cublas_soname();
}

CublasApi load() {
  void* lib = nullptr;
  std::string errors;
  for (const std::string& path : {beside_cudart(), cublas_soname()}) {
    if (path.empty()) continue;
    if ((lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    const char* why = dlerror();
    str_append(&errors, errors.empty() ? "" : "; ", why != nullptr ? why : path);
  }
  OPSPEC_CHECK(lib != nullptr, "CUDA: cuBLAS (", cublas_soname(), ") could not be loaded: ", errors);
  auto symbol = [&](const char* name) {
    void* p = dlsym(lib, name);
    OPSPEC_CHECK(p != nullptr, "CUDA: ", cublas_soname(), " has no ", name,
                 " (a cuBLAS older than the toolkit opspec was built with?)");
    return p;
  };
  CublasApi api;
  api.create = reinterpret_cast<decltype(api.create)>(symbol("cublasCreate_v2"));
  api.set_stream = reinterpret_cast<decltype(api.set_stream)>(symbol("cublasSetStream_v2"));
  api.status_name = reinterpret_cast<decltype(api.status_name)>(symbol("cublasGetStatusName"));
  api.status_string = reinterpret_cast<decltype(api.status_string)>(symbol("cublasGetStatusString"));
  api.gemm_strided_batched_ex =
      reinterpret_cast<decltype(api.gemm_strided_batched_ex)>(symbol("cublasGemmStridedBatchedEx"));
  api.scal_ex = reinterpret_cast<decltype(api.scal_ex)>(symbol("cublasScalEx"));
  return api;  // the library stays loaded for the life of the process
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();
  return api;
}

}  // namespace opspec::internal::cuda
