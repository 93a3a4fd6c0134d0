// nvrtc.h: run-time compilation of CUDA C++ with NVRTC (to PTX, and to a
// cubin for a real architecture), its in-memory and on-disk caches, and
// launching the compiled kernels. See Note [Run-time CUDA compilation].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opspec::internal {

// NvrtcOptions: how nvrtc_compile compiles a kernel.
struct NvrtcOptions {
  // arch: a virtual architecture ("compute_90": PTX only, which any newer GPU
  // JIT-compiles) or a real one ("sm_90": a cubin as well).
  std::string arch = "compute_90";
  // extra: further NVRTC options, after the fixed ones (See Note [Run-time CUDA compilation]).
  std::vector<std::string> extra;
};

// CompiledKernel: one compiled kernel; immutable and shared by the caches.
struct CompiledKernel {
  std::string name;       // the kernel's extern "C" name
  std::string ptx;        // for a virtual arch ("compute_90"), else empty
  std::string cubin;      // for a real arch ("sm_90"), else empty
  std::string log;        // NVRTC's log (warnings), empty when clean
  std::string options;    // the full option list, space separated
  std::string key;        // the cache key: a 32-digit hex hash of source, options, headers and NVRTC version
};

// nvrtc_compile: compiles source, which defines `extern "C" __global__` kernel
// `name` and may include the embedded headers (nvrtc_embedded_headers), with
// options. Returns the cached result when the same name, source and options
// were compiled before in this process, or are in the on-disk cache; compiles
// and stores it in both otherwise. Throws opspec::Error naming the kernel with
// NVRTC's log when the source does not compile. Needs no GPU.
std::shared_ptr<const CompiledKernel> nvrtc_compile(std::string_view name, std::string_view source,
                                                    const NvrtcOptions& options = {});

// nvrtc_version: "13.0", NVRTC's version (part of every cache key).
std::string nvrtc_version();

// nvrtc_supported_archs: the real architectures this NVRTC compiles for, e.g. {75, 80, ..., 120}.
std::vector<int> nvrtc_supported_archs();

// nvrtc_embedded_headers: (include name, text) of every header a kernel source
// may include: opspec's shared device code ("kernels/common/elementwise_ops.h",
// "runtime/core/half.h", ...), the prelude "opspec/nvrtc_prelude.h" and the
// few standard headers those need, which NVRTC does not ship.
const std::vector<std::pair<std::string, std::string>>& nvrtc_embedded_headers();

// nvrtc_cache_dir: the on-disk cache directory: $OPSPEC_CUDA_CACHE_DIR, else
// $XDG_CACHE_HOME/opspec/cuda, else ~/.cache/opspec/cuda. Empty (the disk
// cache is off) when OPSPEC_CUDA_CACHE_DIR is set to "" or "off".
std::string nvrtc_cache_dir();

// NvrtcCacheStats: what nvrtc_compile did since the process started (or the
// last nvrtc_reset_memory_cache).
struct NvrtcCacheStats {
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t compiles = 0;
};
NvrtcCacheStats nvrtc_cache_stats();

// nvrtc_reset_memory_cache: forgets the in-memory cache and zeroes the stats
// (tests; loaded kernels stay valid).
void nvrtc_reset_memory_cache();

// nvrtc_options_for_current_device: options targeting the current CUDA
// device: "sm_XY" when NVRTC supports its compute capability, else the
// default virtual arch. Throws opspec::Error when no device is available.
NvrtcOptions nvrtc_options_for_current_device();

// LaunchConfig: a 1-D launch.
struct LaunchConfig {
  uint32_t grid = 1;
  uint32_t block = 256;
};

// launch_compiled_kernel: launches kernel on the current device and stream
// with the kernel parameter values args (one pointer per parameter, as
// cudaLaunchKernel takes them). The image (cubin, else PTX) is loaded once
// per kernel. Throws opspec::Error naming the kernel on any CUDA error.
void launch_compiled_kernel(const CompiledKernel& kernel, LaunchConfig config, void** args);

// cuda_multiprocessor_count: the current device's SM count (launch sizing).
int cuda_multiprocessor_count();

}  // namespace opspec::internal
