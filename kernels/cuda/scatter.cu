// scatter.cu: the kernels of the scatter, gather and indexing ops
// (scatter_launch.h), in the arithmetic of kernels/cpu/scatter.cc (compute
// types of kernels/common/opmath.h), so CPU and CUDA results have the same bits.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/scatter_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {
namespace {

constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// with_code: f.template operator()<T>() for the storage type of any code.
template <class F>
void with_code(Code code, const char* what, F&& f) {
  switch (code) {
    case kF32: return f.template operator()<float>();
    case kF64: return f.template operator()<double>();
    case kF16: return f.template operator()<Half>();
    case kBF16: return f.template operator()<BFloat16>();
    case kI64: return f.template operator()<int64_t>();
    case kI32: return f.template operator()<int32_t>();
    case kB8: return f.template operator()<bool>();
    default: fail_launch(what);
  }
}

// The reductions of kernels/cpu/scatter.cc (ScatterReduce's values).
constexpr int kAssign = 0, kSum = 1, kProd = 2, kMean = 3, kMax = 4, kMin = 5;

template <class C>
__device__ C combine(int r, C a, C b) {
  switch (r) {
    case kAssign: return b;
    case kSum:
    case kMean: return a + b;
    case kProd: return a * b;
    case kMax:
      if constexpr (std::is_floating_point_v<C>) {
        if (isnan(b)) return b;
      }
      return a < b ? b : a;
    case kMin:
      if constexpr (std::is_floating_point_v<C>) {
        if (isnan(b)) return b;
      }
      return b < a ? b : a;
  }
  return b;
}

template <class C>
__device__ C identity(int r) {
  switch (r) {
    case kProd: return C(1);
    case kMax:
      return std::numeric_limits<C>::has_infinity ? -std::numeric_limits<C>::infinity()
                                                  : std::numeric_limits<C>::lowest();
    case kMin:
      return std::numeric_limits<C>::has_infinity ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
    default: return C(0);
  }
}

template <class T>
__device__ T stored(arith_t<T> v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else {
    return static_cast<T>(v);
  }
}

template <class T>
__global__ void scatter_lines_kernel(int r, bool include_self, T* target, const T* src, T value,
                                     const int64_t* target_off, const int64_t* src_off, int64_t lines, int64_t len,
                                     int64_t* count) {
  using C = arith_t<T>;
  for (int64_t l = first_index(); l < lines; l += grid_stride()) {
    const int64_t base = l * len;
    if (!include_self) {
      for (int64_t j = 0; j < len; ++j) target[target_off[base + j]] = stored<T>(identity<C>(r));
    }
    for (int64_t j = 0; j < len; ++j) {
      const int64_t t = target_off[base + j];
      const C b = src != nullptr ? static_cast<C>(src[src_off[base + j]]) : static_cast<C>(value);
      target[t] = stored<T>(combine<C>(r, static_cast<C>(target[t]), b));
      if (count != nullptr) ++count[t];
    }
  }
}

template <class T>
__global__ void mean_finalize_kernel(T* target, const int64_t* count, bool include_self, int64_t n) {
  using C = arith_t<T>;
  for (int64_t i = first_index(); i < n; i += grid_stride()) {
    int64_t k = count[i] + (include_self ? 1 : 0);
    if (k < 1) k = 1;
    const C a = static_cast<C>(target[i]);
    if constexpr (std::is_floating_point_v<C>) {
      target[i] = stored<T>(a / static_cast<C>(k));
    } else {
      const C q = a / static_cast<C>(k);
      target[i] = stored<T>(a % static_cast<C>(k) != 0 && a < 0 ? q - 1 : q);
    }
  }
}

template <class E>
__global__ void gather_offsets_kernel(const E* src, const int64_t* off, E* out, int64_t n) {
  for (int64_t i = first_index(); i < n; i += grid_stride()) out[i] = src[off[i]];
}

}  // namespace

void launch_scatter_lines(Code code, int reduce, bool include_self, void* target, const void* src,
                          uint64_t value_bits, const int64_t* target_off, const int64_t* src_off, int64_t lines,
                          int64_t len, int64_t* count) {
  if (lines == 0 || len == 0) return;
  with_code(code, "launch_scatter_lines: bad dtype", [&]<class T>() {
    T value{};
    std::memcpy(static_cast<void*>(&value), &value_bits, sizeof(T));
    scatter_lines_kernel<T><<<blocks_for(lines), kBlock>>>(reduce, include_self, static_cast<T*>(target),
                                                           static_cast<const T*>(src), value, target_off, src_off,
                                                           lines, len, count);
  });
  check_launch("scatter");
}

void launch_mean_finalize(Code code, void* target, const int64_t* count, bool include_self, int64_t n) {
  if (n == 0) return;
  with_code(code, "launch_mean_finalize: bad dtype", [&]<class T>() {
    mean_finalize_kernel<T><<<blocks_for(n), kBlock>>>(static_cast<T*>(target), count, include_self, n);
  });
  check_launch("scatter_reduce mean");
}

void launch_gather_offsets(int elem_size, const void* src, const int64_t* off, void* out, int64_t n) {
  if (n == 0) return;
  switch (elem_size) {
    case 1:
      gather_offsets_kernel<uint8_t><<<blocks_for(n), kBlock>>>(static_cast<const uint8_t*>(src), off,
                                                                 static_cast<uint8_t*>(out), n);
      break;
    case 2:
      gather_offsets_kernel<uint16_t><<<blocks_for(n), kBlock>>>(static_cast<const uint16_t*>(src), off,
                                                                  static_cast<uint16_t*>(out), n);
      break;
    case 4:
      gather_offsets_kernel<uint32_t><<<blocks_for(n), kBlock>>>(static_cast<const uint32_t*>(src), off,
                                                                  static_cast<uint32_t*>(out), n);
      break;
    case 8:
      gather_offsets_kernel<uint64_t><<<blocks_for(n), kBlock>>>(static_cast<const uint64_t*>(src), off,
                                                                  static_cast<uint64_t*>(out), n);
      break;
    default: fail_launch("launch_gather_offsets: bad element size");
  }
  check_launch("gather");
}

}  // namespace opspec::internal::cuda
