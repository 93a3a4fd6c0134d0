// nvrtc_loader.h: NVRTC, loaded on first use.
// See Note [Loading CUDA libraries lazily] in lazy_library.h.
#pragma once

#include <nvrtc.h>

namespace opspec::internal::cuda {

// NvrtcApi: the NVRTC functions nvrtc.cc uses.
struct NvrtcApi {
  decltype(&nvrtcGetErrorString) get_error_string = nullptr;
  decltype(&nvrtcVersion) version = nullptr;
  decltype(&nvrtcGetNumSupportedArchs) get_num_supported_archs = nullptr;
  decltype(&nvrtcGetSupportedArchs) get_supported_archs = nullptr;
  decltype(&nvrtcCreateProgram) create_program = nullptr;
  decltype(&nvrtcDestroyProgram) destroy_program = nullptr;
  decltype(&nvrtcCompileProgram) compile_program = nullptr;
  decltype(&nvrtcGetProgramLogSize) get_program_log_size = nullptr;
  decltype(&nvrtcGetProgramLog) get_program_log = nullptr;
  decltype(&nvrtcGetPTXSize) get_ptx_size = nullptr;
  decltype(&nvrtcGetPTX) get_ptx = nullptr;
  decltype(&nvrtcGetCUBINSize) get_cubin_size = nullptr;
  decltype(&nvrtcGetCUBIN) get_cubin = nullptr;
};

// nvrtc_api: the loaded API; the first call loads the library (thread-safe).
// Throws naming the library and the loader's reason when it cannot be loaded.
const NvrtcApi& nvrtc_api();

}  // namespace opspec::internal::cuda
