// cublas_loader.cc: See Note [Loading CUDA libraries lazily] in lazy_library.h.
#include "kernels/cuda/cublas_loader.h"

#include "kernels/cuda/lazy_library.h"
#include "runtime/core/error.h"

namespace opspec::internal::cuda {
namespace {

CublasApi load() {
  const ToolkitLibrary lib(str_cat("libcublas.so.", CUBLAS_VER_MAJOR));
  CublasApi api;
  api.create = lib.symbol<decltype(api.create)>("cublasCreate_v2");
  api.set_stream = lib.symbol<decltype(api.set_stream)>("cublasSetStream_v2");
  api.status_name = lib.symbol<decltype(api.status_name)>("cublasGetStatusName");
  api.status_string = lib.symbol<decltype(api.status_string)>("cublasGetStatusString");
  api.gemm_strided_batched_ex = lib.symbol<decltype(api.gemm_strided_batched_ex)>("cublasGemmStridedBatchedEx");
  api.scal_ex = lib.symbol<decltype(api.scal_ex)>("cublasScalEx");
  return api;
}

}  // namespace

const CublasApi& cublas() {
  static const CublasApi api = load();
  return api;
}

}  // namespace opspec::internal::cuda
