// cpu_jit.h: run-time compilation of C++ for the CPU: the system compiler
// builds a shared library, which is loaded with dlopen, cached in memory and
// on disk. The CPU's fused kernels use it (kernels/cpu/fused_codegen.h).
// See Note [Run-time CPU compilation].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace opspec::internal {

// CpuJitLibrary: one compiled and loaded shared library; immutable, shared by
// the caches, and never unloaded (kernels from it may run until exit).
struct CpuJitLibrary {
  std::string name;  // what it was compiled for (errors, logs)
  std::string key;   // its cache key: 32 hex digits
  std::string log;   // the compiler's output (warnings), empty when clean
  void* handle = nullptr;
  // symbol: the address of extern "C" symbol `symbol`; throws opspec::Error naming it when absent.
  void* symbol(std::string_view symbol) const;
};

// CpuJitHeader: (include path, text) of a header a source may include.
using CpuJitHeader = std::pair<std::string, std::string>;

// cpu_jit_compile: compiles source, which may include the functor headers
// (functor_headers.h) and headers, into a shared library and loads it.
// Returns the cached library when the same source and headers were compiled
// before in this process or are in the on-disk cache (cpu_jit_cache_dir).
// Throws opspec::Error naming `name`, with the compiler's output, when no
// compiler runs or the source does not compile.
std::shared_ptr<const CpuJitLibrary> cpu_jit_compile(std::string_view name, std::string_view source,
                                                     const std::vector<CpuJitHeader>& headers = {});

// cpu_jit_identifier: name as a C identifier (anything but [A-Za-z0-9_] as
// '_', a leading digit prefixed with 'k'): a generated function's name, and
// the stem of its files in the cache.
std::string cpu_jit_identifier(std::string_view name);

// cpu_jit_compiler: the compiler command: $OPSPEC_CXX, else the compiler this
// library was built with when it still exists, else "c++".
std::string cpu_jit_compiler();

// cpu_jit_flags: the flags every compile passes (See Note [Run-time CPU compilation]).
const std::vector<std::string>& cpu_jit_flags();

// cpu_jit_available: whether the compiler runs; when not, *why (if given) says what failed.
bool cpu_jit_available(std::string* why = nullptr);

// cpu_jit_cache_dir: the on-disk cache: $OPSPEC_CPU_CACHE_DIR, else
// $XDG_CACHE_HOME/opspec/cpu, else ~/.cache/opspec/cpu. Empty (the disk
// cache is off: each compile works in a temporary directory it then removes)
// when OPSPEC_CPU_CACHE_DIR is "" or "off".
std::string cpu_jit_cache_dir();

// CpuJitStats: what cpu_jit_compile did since the process started (or the
// last cpu_jit_reset_memory_cache).
struct CpuJitStats {
  int64_t memory_hits = 0;
  int64_t disk_hits = 0;
  int64_t compiles = 0;
};
CpuJitStats cpu_jit_stats();

// cpu_jit_reset_memory_cache: forgets the in-memory cache and zeroes the
// stats (tests; loaded libraries stay loaded).
void cpu_jit_reset_memory_cache();

}  // namespace opspec::internal
