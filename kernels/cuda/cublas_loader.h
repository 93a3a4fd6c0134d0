// cublas_loader.h: cuBLAS, loaded on first use.
// See Note [Loading CUDA libraries lazily] in lazy_library.h.
#pragma once

#include <cublas_v2.h>

namespace opspec::internal::cuda {

// CublasApi: the cuBLAS functions blas.cc uses.
struct CublasApi {
  decltype(&cublasCreate_v2) create = nullptr;
  decltype(&cublasSetStream_v2) set_stream = nullptr;
  decltype(&cublasGetStatusName) status_name = nullptr;
  decltype(&cublasGetStatusString) status_string = nullptr;
  // The C entry point (C++ also sees an inline overload taking a cudaDataType compute type).
  cublasStatus_t (*gemm_strided_batched_ex)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int, int, int,
                                            const void*, const void*, cudaDataType, int, long long, const void*,
                                            cudaDataType, int, long long, const void*, void*, cudaDataType, int,
                                            long long, int, cublasComputeType_t, cublasGemmAlgo_t) = nullptr;
  decltype(&cublasScalEx) scal_ex = nullptr;
};

// cublas: the loaded API; the first call loads the library (thread-safe).
// Throws naming the library and the loader's reason when it cannot be loaded.
const CublasApi& cublas();

}  // namespace opspec::internal::cuda
