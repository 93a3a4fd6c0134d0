// cublas_loader.h: cuBLAS, loaded on first use. See Note [Loading cuBLAS lazily].
#pragma once

#include <cublas_v2.h>

namespace opspec::internal::cuda {

// Note [Loading cuBLAS lazily]
// Linking libcublas loads libcublasLt with it, whose start-up initializers
// took 0.35 s of the 0.45 s every opspec process (the command, each test
// binary, each --isolate worker) spent before main, GPU or not, and 250 MB of
// resident memory. cuBLAS is only needed by a product on a CUDA tensor, so it
// is dlopened then: from the directory libcudart was loaded from (the
// toolkit's lib folder, which an installed opspec has no rpath to), else by
// its soname. The few entry points blas.cc calls are looked up by name.

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
