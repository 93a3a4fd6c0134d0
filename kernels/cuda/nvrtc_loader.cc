// nvrtc_loader.cc: See Note [Loading CUDA libraries lazily] in lazy_library.h.
#include "kernels/cuda/nvrtc_loader.h"

#include <cuda_runtime_api.h>

#include "kernels/cuda/lazy_library.h"
#include "runtime/core/error.h"

namespace opspec::internal::cuda {
namespace {

NvrtcApi load() {
  // NVRTC's soname carries the toolkit's major version (libnvrtc.so.13 for
  // CUDA 13.x).
  const ToolkitLibrary lib(str_cat("libnvrtc.so.", CUDART_VERSION / 1000));
  NvrtcApi api;
  api.get_error_string = lib.symbol<decltype(api.get_error_string)>("nvrtcGetErrorString");
  api.version = lib.symbol<decltype(api.version)>("nvrtcVersion");
  api.get_num_supported_archs = lib.symbol<decltype(api.get_num_supported_archs)>("nvrtcGetNumSupportedArchs");
  api.get_supported_archs = lib.symbol<decltype(api.get_supported_archs)>("nvrtcGetSupportedArchs");
  api.create_program = lib.symbol<decltype(api.create_program)>("nvrtcCreateProgram");
  api.destroy_program = lib.symbol<decltype(api.destroy_program)>("nvrtcDestroyProgram");
  api.compile_program = lib.symbol<decltype(api.compile_program)>("nvrtcCompileProgram");
  api.get_program_log_size = lib.symbol<decltype(api.get_program_log_size)>("nvrtcGetProgramLogSize");
  api.get_program_log = lib.symbol<decltype(api.get_program_log)>("nvrtcGetProgramLog");
  api.get_ptx_size = lib.symbol<decltype(api.get_ptx_size)>("nvrtcGetPTXSize");
  api.get_ptx = lib.symbol<decltype(api.get_ptx)>("nvrtcGetPTX");
  api.get_cubin_size = lib.symbol<decltype(api.get_cubin_size)>("nvrtcGetCUBINSize");
  api.get_cubin = lib.symbol<decltype(api.get_cubin)>("nvrtcGetCUBIN");
  return api;
}

}  // namespace

const NvrtcApi& nvrtc_api() {
  static const NvrtcApi api = load();
  return api;
}

}  // namespace opspec::internal::cuda
