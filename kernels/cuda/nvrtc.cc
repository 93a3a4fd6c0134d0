// nvrtc.cc: NVRTC compilation with in-memory and on-disk caches, the headers
// run-time compiled kernels may include, and launching compiled kernels
// through the CUDA runtime's library API. See Note [Run-time CUDA compilation].
#include "kernels/cuda/nvrtc.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "kernels/common/cache_files.h"
#include "kernels/common/functor_headers.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/nvrtc_loader.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/error.h"

// Note [Embedded NVRTC headers]
// NVRTC compiles the shared functor headers (See Note [Embedded functor
// headers] in kernels/common/functor_headers.cc) as this build compiled them.
// It ships no standard library, so the few standard headers they include are
// replaced by minimal versions (kCstdint, kTypeTraits, kBit) and two GCC
// builtins vec_math.h uses are defined in the prelude. Every header's text
// is part of every cache key.

namespace opspec::internal {
namespace {

// kPrelude: "opspec/nvrtc_prelude.h".
constexpr const char kPrelude[] = R"cuda(// opspec/nvrtc_prelude.h: what run-time compiled kernels include first.
#ifndef OPSPEC_NVRTC_PRELUDE_H
#define OPSPEC_NVRTC_PRELUDE_H
// vec_math.h's host-only code (never called on the device) uses these GCC
// builtins, which NVRTC lacks; -default-device makes it device code to parse.
#define __builtin_inff() __int_as_float(0x7f800000)
#define __builtin_nanf(s) __int_as_float(0x7fc00000)
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/opmath.h"
#include "runtime/core/half.h"

namespace opspec::internal::nvrtc {

// load: a stored value widened to its compute type, opmath_t (loops.h's load).
template <class T> __device__ __forceinline__ T load(T v) { return v; }
__device__ __forceinline__ float load(opspec::Half v) { return opspec::Half::to_float(v.bits); }
__device__ __forceinline__ float load(opspec::BFloat16 v) { return static_cast<float>(v); }

// store<T>: a compute value rounded to storage type T (loops.h's store).
template <class T, class V> __device__ __forceinline__ T store(V v) { return static_cast<T>(v); }

// from_bits<T>: the value whose bytes are the low sizeof(T) bytes of b.
template <class T> __device__ __forceinline__ T from_bits(unsigned long long b) {
  if constexpr (sizeof(T) == 8) {
    return __builtin_bit_cast(T, b);
  } else if constexpr (sizeof(T) == 4) {
    return __builtin_bit_cast(T, static_cast<unsigned int>(b));
  } else if constexpr (sizeof(T) == 2) {
    return __builtin_bit_cast(T, static_cast<unsigned short>(b));
  } else {
    return __builtin_bit_cast(T, static_cast<unsigned char>(b));
  }
}

// Geometry<I, N>: a strided input's coalesced sizes and element strides over
// the output shape; offset(i) is the element read for linear output index i.
template <class I, int N> struct Geometry {
  I size[N];
  I stride[N];
  __device__ __forceinline__ I offset(I i) const {
    I off = 0;
#pragma unroll
    for (int d = N - 1; d > 0; --d) {
      off += (i % size[d]) * stride[d];
      i /= size[d];
    }
    return off + i * stride[0];
  }
};

}  // namespace opspec::internal::nvrtc
#endif  // OPSPEC_NVRTC_PRELUDE_H
)cuda";

// kCstdint: <cstdint> (the fixed-width types, global and in std).
constexpr const char kCstdint[] = R"cuda(#ifndef OPSPEC_NVRTC_CSTDINT
#define OPSPEC_NVRTC_CSTDINT
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
namespace std {
using ::int8_t; using ::int16_t; using ::int32_t; using ::int64_t;
using ::uint8_t; using ::uint16_t; using ::uint32_t; using ::uint64_t;
}  // namespace std
#endif
)cuda";

// kTypeTraits: <type_traits>, the traits opspec's device code uses.
constexpr const char kTypeTraits[] = R"cuda(#ifndef OPSPEC_NVRTC_TYPE_TRAITS
#define OPSPEC_NVRTC_TYPE_TRAITS
namespace std {
template <class T, T v> struct integral_constant { static constexpr T value = v; };
using true_type = integral_constant<bool, true>;
using false_type = integral_constant<bool, false>;
template <class A, class B> struct is_same : false_type {};
template <class A> struct is_same<A, A> : true_type {};
template <class A, class B> inline constexpr bool is_same_v = is_same<A, B>::value;
template <class T> struct remove_cv { using type = T; };
template <class T> struct remove_cv<const T> { using type = T; };
template <class T> struct remove_cv<volatile T> { using type = T; };
template <class T> struct remove_cv<const volatile T> { using type = T; };
template <class T> using remove_cv_t = typename remove_cv<T>::type;
template <class T> struct is_fp_ : false_type {};
template <> struct is_fp_<float> : true_type {};
template <> struct is_fp_<double> : true_type {};
template <class T> struct is_floating_point : is_fp_<remove_cv_t<T>> {};
template <class T> inline constexpr bool is_floating_point_v = is_floating_point<T>::value;
template <class T> struct is_int_ : false_type {};
template <> struct is_int_<bool> : true_type {};
template <> struct is_int_<char> : true_type {};
template <> struct is_int_<signed char> : true_type {};
template <> struct is_int_<unsigned char> : true_type {};
template <> struct is_int_<short> : true_type {};
template <> struct is_int_<unsigned short> : true_type {};
template <> struct is_int_<int> : true_type {};
template <> struct is_int_<unsigned int> : true_type {};
template <> struct is_int_<long> : true_type {};
template <> struct is_int_<unsigned long> : true_type {};
template <> struct is_int_<long long> : true_type {};
template <> struct is_int_<unsigned long long> : true_type {};
template <class T> struct is_integral : is_int_<remove_cv_t<T>> {};
template <class T> inline constexpr bool is_integral_v = is_integral<T>::value;
template <class T> struct is_arithmetic : integral_constant<bool, is_integral_v<T> || is_floating_point_v<T>> {};
template <class T> inline constexpr bool is_arithmetic_v = is_arithmetic<T>::value;
template <class T, bool = is_arithmetic_v<T>> struct is_signed_ : integral_constant<bool, T(-1) < T(0)> {};
template <class T> struct is_signed_<T, false> : false_type {};
template <class T> struct is_signed : is_signed_<remove_cv_t<T>> {};
template <class T> inline constexpr bool is_signed_v = is_signed<T>::value;
template <class T> struct make_unsigned;
template <> struct make_unsigned<signed char> { using type = unsigned char; };
template <> struct make_unsigned<short> { using type = unsigned short; };
template <> struct make_unsigned<int> { using type = unsigned int; };
template <> struct make_unsigned<long> { using type = unsigned long; };
template <> struct make_unsigned<long long> { using type = unsigned long long; };
template <class T> using make_unsigned_t = typename make_unsigned<T>::type;
template <bool B, class T, class F> struct conditional { using type = T; };
template <class T, class F> struct conditional<false, T, F> { using type = F; };
template <bool B, class T, class F> using conditional_t = typename conditional<B, T, F>::type;
template <bool B, class T = void> struct enable_if {};
template <class T> struct enable_if<true, T> { using type = T; };
template <bool B, class T = void> using enable_if_t = typename enable_if<B, T>::type;
}  // namespace std
#endif
)cuda";

// kBit: <bit> (std::bit_cast).
constexpr const char kBit[] = R"cuda(#ifndef OPSPEC_NVRTC_BIT
#define OPSPEC_NVRTC_BIT
namespace std {
template <class To, class From> __host__ __device__ constexpr To bit_cast(const From& from) {
  return __builtin_bit_cast(To, from);
}
}  // namespace std
#endif
)cuda";

// kEmpty: <math.h> and <cstring>: NVRTC declares the CUDA math functions
// itself, and device code here uses nothing else from them.
constexpr const char kEmpty[] = "";

// Note [Run-time CUDA compilation]
// nvrtc_compile hands NVRTC the source, the embedded headers and the options
//   --std=c++20 -default-device --fmad=false -arch=<arch> <extra...>
// -default-device because NVRTC rejects unannotated (host) functions and
// half.h / vec_math.h are plain C++ shared with the CPU; --fmad=false
// because the CPU kernels are built with -ffp-contract=off, and an FMA
// formed from a functor's a * b + c would round differently. Results are
// cached twice, under a key hashing the name, source, options, NVRTC
// version and embedded headers: in memory for the process, and on disk
// (nvrtc_cache_dir) as <name>-<key>.ptx or .cubin, written to a temporary
// file and renamed so concurrent processes never read a partial file; an
// unreadable or unwritable directory only costs a compile. On a device,
// kernels compile to a cubin for its own arch
// (nvrtc_options_for_current_device), which loads on any driver, even one
// older than NVRTC, where PTX would need a JIT the driver may not have.
// Launching goes through the CUDA runtime's library API
// (cudaLibraryLoadData, cudaLibraryGetKernel, cudaLaunchKernel) rather than
// the driver API: the runtime, which the rest of the backend links, finds
// and loads the driver itself, so nothing links libcuda.so (only a stub on
// machines without a GPU, where linking it would make every test binary fail
// to start) and nothing dlopens it by a guessed name; libraries are
// context-independent, so a kernel loads lazily into whichever device
// launches it, in the same primary context the runtime's allocations live in.

// kFixedOptions: the options every compile passes before -arch and extra.
constexpr const char* kFixedOptions[] = {"--std=c++20", "-default-device", "--fmad=false"};

// kNul: the separator of hashed fields.
constexpr std::string_view kNul("\0", 1);

void check_nvrtc(nvrtcResult r, std::string_view what, std::string_view name) {
  OPSPEC_CHECK(r == NVRTC_SUCCESS, "NVRTC: ", what, " failed for CUDA kernel ", name, ": ",
               cuda::nvrtc_api().get_error_string(r));
}

// headers_digest: the hash of every embedded header's name and text.
const std::string& headers_digest() {
  static const std::string digest = [] {
    std::string all;
    for (const auto& [name, text] : nvrtc_embedded_headers()) str_append(&all, name, kNul, text, kNul);
    return hex_digest128(all);
  }();
  return digest;
}

std::vector<std::string> option_list(const NvrtcOptions& o) {
  std::vector<std::string> opts(std::begin(kFixedOptions), std::end(kFixedOptions));
  opts.push_back("-arch=" + o.arch);
  opts.insert(opts.end(), o.extra.begin(), o.extra.end());
  return opts;
}

bool is_real_arch(std::string_view arch) { return arch.starts_with("sm_"); }

// numbered: source with 1-based line numbers, for compile errors.
std::string numbered(std::string_view source) {
  std::string out;
  int line = 1;
  size_t start = 0;
  while (start < source.size()) {
    size_t end = source.find('\n', start);
    if (end == std::string_view::npos) end = source.size();
    char prefix[16];
    std::snprintf(prefix, sizeof prefix, "%5d  ", line++);
    str_append(&out, prefix, source.substr(start, end - start), "\n");
    start = end + 1;
  }
  return out;
}

std::shared_ptr<CompiledKernel> compile_now(std::string_view name, std::string_view source,
                                            const std::vector<std::string>& opts, bool real_arch) {
  const cuda::NvrtcApi& api = cuda::nvrtc_api();
  const auto& headers = nvrtc_embedded_headers();
  std::vector<const char*> texts, names;
  for (const auto& [n, t] : headers) {
    names.push_back(n.c_str());
    texts.push_back(t.c_str());
  }
  const std::string src(source), file = str_cat(name, ".cu");
  nvrtcProgram prog = nullptr;
  check_nvrtc(api.create_program(&prog, src.c_str(), file.c_str(), static_cast<int>(headers.size()), texts.data(),
                                 names.data()),
              "nvrtcCreateProgram", name);
  struct Destroy {
    const cuda::NvrtcApi& api;
    nvrtcProgram* p;
    ~Destroy() { api.destroy_program(p); }
  } destroy{api, &prog};
  std::vector<const char*> argv;
  for (const std::string& o : opts) argv.push_back(o.c_str());
  const nvrtcResult r = api.compile_program(prog, static_cast<int>(argv.size()), argv.data());
  auto out = std::make_shared<CompiledKernel>();
  out->name = std::string(name);
  out->options = absl::StrJoin(opts, " ");
  size_t size = 0;
  check_nvrtc(api.get_program_log_size(prog, &size), "nvrtcGetProgramLogSize", name);
  std::string log(size, '\0');
  check_nvrtc(api.get_program_log(prog, log.data()), "nvrtcGetProgramLog", name);
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  OPSPEC_CHECK(r == NVRTC_SUCCESS, "NVRTC failed to compile CUDA kernel ", name, " (", api.get_error_string(r),
               "; options: ", out->options, "):\n", log, "\n--- source of ", file, " ---\n", numbered(source));
  out->log = std::move(log);
  if (real_arch) {
    check_nvrtc(api.get_cubin_size(prog, &size), "nvrtcGetCUBINSize", name);
    out->cubin.resize(size);
    check_nvrtc(api.get_cubin(prog, out->cubin.data()), "nvrtcGetCUBIN", name);
  } else {
    check_nvrtc(api.get_ptx_size(prog, &size), "nvrtcGetPTXSize", name);
    out->ptx.resize(size);
    check_nvrtc(api.get_ptx(prog, out->ptx.data()), "nvrtcGetPTX", name);
    while (!out->ptx.empty() && out->ptx.back() == '\0') out->ptx.pop_back();
  }
  return out;
}

// ---- the disk cache ----

std::filesystem::path disk_path(const std::string& dir, std::string_view name, const std::string& key, bool real_arch) {
  return std::filesystem::path(dir) / str_cat(name, "-", key, real_arch ? ".cubin" : ".ptx");
}

// ---- the memory cache ----

struct Cache {
  std::mutex mu;
  absl::flat_hash_map<std::string, std::shared_ptr<const CompiledKernel>> kernels;
  std::atomic<int64_t> memory_hits{0}, disk_hits{0}, compiles{0};
};

Cache& cache() {
  static Cache* c = new Cache;  // never destroyed: kernels may launch during static destruction
  return *c;
}

// ---- launching ----

void check_cuda(cudaError_t e, std::string_view what, std::string_view name) {
  OPSPEC_CHECK(e == cudaSuccess, "CUDA: ", what, " failed for kernel ", name, ": ", cudaGetErrorName(e), " (",
               cudaGetErrorString(e), ")");
}

struct Loaded {
  std::mutex mu;
  absl::flat_hash_map<std::string, cudaKernel_t> kernels;  // by cache key
};

Loaded& loaded() {
  static Loaded* l = new Loaded;  // libraries stay loaded for the process
  return *l;
}

cudaKernel_t load_kernel(const CompiledKernel& k) {
  Loaded& l = loaded();
  std::lock_guard<std::mutex> lock(l.mu);
  if (auto it = l.kernels.find(k.key); it != l.kernels.end()) return it->second;
  const void* image = k.cubin.empty() ? static_cast<const void*>(k.ptx.c_str()) : k.cubin.data();
  cudaLibrary_t lib = nullptr;
  check_cuda(cudaLibraryLoadData(&lib, image, nullptr, nullptr, 0, nullptr, nullptr, 0), "cudaLibraryLoadData", k.name);
  cudaKernel_t kernel = nullptr;
  check_cuda(cudaLibraryGetKernel(&kernel, lib, k.name.c_str()), "cudaLibraryGetKernel", k.name);
  l.kernels.emplace(k.key, kernel);
  return kernel;
}

}  // namespace

const std::vector<std::pair<std::string, std::string>>& nvrtc_embedded_headers() {
  static const auto* headers = [] {
    auto* all = new std::vector<std::pair<std::string, std::string>>{{"opspec/nvrtc_prelude.h", kPrelude}};
    all->insert(all->end(), functor_headers().begin(), functor_headers().end());
    all->emplace_back("cstdint", kCstdint);
    all->emplace_back("type_traits", kTypeTraits);
    all->emplace_back("bit", kBit);
    all->emplace_back("math.h", kEmpty);
    all->emplace_back("cstring", kEmpty);
    return all;
  }();
  return *headers;
}

std::string nvrtc_version() {
  int major = 0, minor = 0;
  check_nvrtc(cuda::nvrtc_api().version(&major, &minor), "nvrtcVersion", "-");
  return str_cat(major, ".", minor);
}

std::vector<int> nvrtc_supported_archs() {
  int n = 0;
  check_nvrtc(cuda::nvrtc_api().get_num_supported_archs(&n), "nvrtcGetNumSupportedArchs", "-");
  std::vector<int> archs(static_cast<size_t>(n));
  if (n > 0) check_nvrtc(cuda::nvrtc_api().get_supported_archs(archs.data()), "nvrtcGetSupportedArchs", "-");
  return archs;
}

std::string nvrtc_cache_dir() {
  if (const char* dir = std::getenv("OPSPEC_CUDA_CACHE_DIR")) {
    const std::string_view d = dir;
    return d == "off" ? std::string() : std::string(d);
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] != '\0') {
    return (std::filesystem::path(xdg) / "opspec" / "cuda").string();
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && home[0] != '\0') {
    return (std::filesystem::path(home) / ".cache" / "opspec" / "cuda").string();
  }
  return std::string();
}

std::shared_ptr<const CompiledKernel> nvrtc_compile(std::string_view name, std::string_view source,
                                                    const NvrtcOptions& options) {
  const std::vector<std::string> opts = option_list(options);
  const bool real_arch = is_real_arch(options.arch);
  static const std::string version = nvrtc_version();
  std::string keyed;
  const std::string joined = absl::StrJoin(opts, absl::string_view(kNul.data(), kNul.size()));
  str_append(&keyed, name, kNul, source, kNul, joined, kNul, version, kNul, headers_digest());
  const std::string key = hex_digest128(keyed);
  Cache& c = cache();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.kernels.find(key); it != c.kernels.end()) {
      c.memory_hits.fetch_add(1);
      return it->second;
    }
  }
  const std::string dir = nvrtc_cache_dir();
  std::shared_ptr<CompiledKernel> kernel;
  std::string image;
  if (!dir.empty() && read_file(disk_path(dir, name, key, real_arch), &image) && !image.empty()) {
    kernel = std::make_shared<CompiledKernel>();
    kernel->name = std::string(name);
    kernel->options = absl::StrJoin(opts, " ");
    (real_arch ? kernel->cubin : kernel->ptx) = std::move(image);
    c.disk_hits.fetch_add(1);
  } else {
    kernel = compile_now(name, source, opts, real_arch);
    c.compiles.fetch_add(1);
    if (!dir.empty()) {
      write_file_atomically(disk_path(dir, name, key, real_arch), real_arch ? kernel->cubin : kernel->ptx);
    }
  }
  kernel->key = key;
  std::lock_guard<std::mutex> lock(c.mu);
  return c.kernels.try_emplace(key, std::move(kernel)).first->second;  // a racing thread's result wins equally
}

NvrtcCacheStats nvrtc_cache_stats() {
  Cache& c = cache();
  return {c.memory_hits.load(), c.disk_hits.load(), c.compiles.load()};
}

void nvrtc_reset_memory_cache() {
  Cache& c = cache();
  std::lock_guard<std::mutex> lock(c.mu);
  c.kernels.clear();
  c.memory_hits = 0;
  c.disk_hits = 0;
  c.compiles = 0;
}

NvrtcOptions nvrtc_options_for_current_device() {
  OPSPEC_CHECK(cuda::device_count() > 0, kNoCudaDeviceMessage);
  int device = 0, major = 0, minor = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice", "-");
  // The arch of each device, worked out once.
  static std::mutex mu;
  static auto* archs_by_device = new absl::flat_hash_map<int, std::string>;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = archs_by_device->find(device); it != archs_by_device->end()) return NvrtcOptions{.arch = it->second};
  }
  check_cuda(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), "cudaDeviceGetAttribute", "-");
  check_cuda(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), "cudaDeviceGetAttribute", "-");
  const int cc = major * 10 + minor;
  static const std::vector<int> archs = nvrtc_supported_archs();
  NvrtcOptions o;
  if (std::find(archs.begin(), archs.end(), cc) != archs.end()) {
    o.arch = str_cat("sm_", cc);
  } else {
    // A device NVRTC does not know: PTX for the newest older arch, which the driver JIT-compiles.
    int best = 0;
    for (int a : archs) best = a <= cc ? std::max(best, a) : best;
    OPSPEC_CHECK(best > 0, "NVRTC ", nvrtc_version(), " cannot compile for compute capability ", major, ".", minor);
    o.arch = str_cat("compute_", best);
  }
  std::lock_guard<std::mutex> lock(mu);
  archs_by_device->try_emplace(device, o.arch);
  return o;
}

void launch_compiled_kernel(const CompiledKernel& kernel, LaunchConfig config, void** args) {
  const cudaKernel_t k = load_kernel(kernel);
  check_cuda(
      cudaLaunchKernel(reinterpret_cast<const void*>(k), dim3(config.grid), dim3(config.block), args, 0, nullptr),
      "cudaLaunchKernel", kernel.name);
}

int cuda_multiprocessor_count() {
  static std::atomic<int> counts[64] = {};  // per device, queried once
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice", "-");
  std::atomic<int>* slot = device >= 0 && device < 64 ? &counts[device] : nullptr;
  if (slot != nullptr && slot->load(std::memory_order_relaxed) > 0) return slot->load(std::memory_order_relaxed);
  int count = 0;
  check_cuda(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device), "cudaDeviceGetAttribute", "-");
  if (slot != nullptr) slot->store(count, std::memory_order_relaxed);
  return count;
}

}  // namespace opspec::internal
