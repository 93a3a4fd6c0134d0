// device_loops.cuh: device-side pieces shared by the elementwise .cu files:
// element conversions, offset computation and the grid-stride elementwise
// kernel. Included by .cu files only. See Note [Elementwise launches] in launch.h.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/common/opmath.h"
#include "kernels/cuda/launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {

// kThreads: threads per block of every elementwise kernel.
inline constexpr int kThreads = 256;

// grid_for: blocks for n elements handled by grid-stride loops.
inline unsigned grid_for(int64_t n) {
  const int64_t blocks = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(blocks < 8192 ? (blocks < 1 ? 1 : blocks) : 8192);
}

// code_of<T>: the Code of storage type T.
template <class T>
__host__ __device__ constexpr Code code_of() {
  if constexpr (std::is_same_v<T, float>) return kF32;
  else if constexpr (std::is_same_v<T, double>) return kF64;
  else if constexpr (std::is_same_v<T, Half>) return kF16;
  else if constexpr (std::is_same_v<T, BFloat16>) return kBF16;
  else if constexpr (std::is_same_v<T, int64_t>) return kI64;
  else if constexpr (std::is_same_v<T, int32_t>) return kI32;
  else return kB8;
}

// convert<To>(v): storage value v as storage type To, as the CPU's copy_into
// converts (CastOp on compute values, then rounding to f16/bf16).
template <class To, class From>
__device__ __forceinline__ To convert(From v) {
  if constexpr (std::is_same_v<To, From>) {
    return v;
  } else {
    return static_cast<To>(CastOp<opmath_t<To>>{}(static_cast<opmath_t<From>>(v)));
  }
}

// load_as<S>: element `off` of data stored as `code`, converted to S.
template <class S>
__device__ __forceinline__ S load_as(const void* data, int64_t off, Code code) {
  switch (code) {
    case kF32: return convert<S>(static_cast<const float*>(data)[off]);
    case kF64: return convert<S>(static_cast<const double*>(data)[off]);
    case kF16: return convert<S>(static_cast<const Half*>(data)[off]);
    case kBF16: return convert<S>(static_cast<const BFloat16*>(data)[off]);
    case kI64: return convert<S>(static_cast<const int64_t*>(data)[off]);
    case kI32: return convert<S>(static_cast<const int32_t*>(data)[off]);
    default: return convert<S>(static_cast<const bool*>(data)[off]);
  }
}

// bits_as<S>: a scalar operand's value (stored in the low bytes of bits).
template <class S>
__device__ __forceinline__ S bits_as(uint64_t bits) {
  S v;
  memcpy(&v, &bits, sizeof(S));
  return v;
}

// input<S>(a, k, off): operand k as S: a scalar, the op's own type, or converted.
template <class S>
__device__ __forceinline__ S input(const ElementwiseArgs& a, int k, int64_t off) {
  if (a.data[k] == nullptr) return bits_as<S>(a.scalar[k]);
  if (a.code[k] == code_of<S>()) return static_cast<const S*>(a.data[k])[off];  // no conversion (the common case)
  return load_as<S>(a.data[k], off, a.code[k]);
}

// offsets: each operand's element offset for linear index i (See Note [Elementwise launches]).
template <int N>
__device__ __forceinline__ void offsets(const ElementwiseArgs& a, int64_t i, int64_t (&off)[N]) {
  if (a.contiguous) {
    for (int k = 0; k < N; ++k) off[k] = i;
  } else if (a.index32) {
    uint32_t rest = static_cast<uint32_t>(i);
    int32_t o[N] = {};
    for (int d = a.ndim - 1; d >= 0; --d) {
      const uint32_t size = static_cast<uint32_t>(a.sizes[d]);
      const uint32_t idx = rest % size;
      rest /= size;
      for (int k = 0; k < N; ++k) o[k] += static_cast<int32_t>(idx) * static_cast<int32_t>(a.strides[k][d]);
    }
    for (int k = 0; k < N; ++k) off[k] = o[k];
  } else {
    int64_t rest = i;
    for (int k = 0; k < N; ++k) off[k] = 0;
    for (int d = a.ndim - 1; d >= 0; --d) {
      const int64_t idx = rest % a.sizes[d];
      rest /= a.sizes[d];
      for (int k = 0; k < N; ++k) off[k] += idx * a.strides[k][d];
    }
  }
}

// elementwise_kernel<Out, S, N>: out = f(inputs converted to S and widened
// to the compute type) for N <= 3 inputs (addcmul, addcdiv and lerp take
// three); f returns a compute value stored as Out. WhereOp is the exception:
// f(cond, a, b) on S values as stored (no widening, so f16 NaN payloads move
// unchanged, as the CPU's bit select moves them).
template <class Out, class S, int N, class F>
__global__ void __launch_bounds__(kThreads) elementwise_kernel(const ElementwiseArgs a, F f) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < a.numel; i += stride) {
    int64_t off[N + 1];
    offsets(a, i, off);
    using C = opmath_t<S>;
    Out* out = static_cast<Out*>(a.data[0]) + off[0];
    if constexpr (N == 0) {
      *out = static_cast<Out>(f());
    } else if constexpr (N == 1) {
      *out = static_cast<Out>(f(static_cast<C>(input<S>(a, 1, off[1]))));
    } else if constexpr (N == 2) {
      *out = static_cast<Out>(f(static_cast<C>(input<S>(a, 1, off[1])), static_cast<C>(input<S>(a, 2, off[2]))));
    } else if constexpr (std::is_same_v<F, WhereOp>) {
      static_assert(N == 3, "where takes three inputs");
      *out = f(input<bool>(a, 1, off[1]), input<S>(a, 2, off[2]), input<S>(a, 3, off[3]));
    } else {
      static_assert(N == 3, "at most three inputs");
      *out = static_cast<Out>(f(static_cast<C>(input<S>(a, 1, off[1])), static_cast<C>(input<S>(a, 2, off[2])),
                                static_cast<C>(input<S>(a, 3, off[3]))));
    }
  }
}

// copy_kernel<Out>: out = input 1 converted to Out (a same-type copy moves bits).
template <class Out>
__global__ void __launch_bounds__(kThreads) copy_kernel(const ElementwiseArgs a) {
  const int64_t stride = static_cast<int64_t>(gridDim.x) * kThreads;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < a.numel; i += stride) {
    int64_t off[2];
    offsets(a, i, off);
    static_cast<Out*>(a.data[0])[off[0]] = input<Out>(a, 1, off[1]);
  }
}

// launch_elementwise: runs elementwise_kernel on the legacy default stream.
template <class Out, class S, int N, class F>
void launch_elementwise(const ElementwiseArgs& a, const F& f, const char* what) {
  if (a.numel == 0) return;
  elementwise_kernel<Out, S, N><<<grid_for(a.numel), kThreads>>>(a, f);
  check_launch(what);
}

// with_code: calls f.template operator()<T>() with T the storage type of code.
template <class F>
decltype(auto) with_code(Code code, F&& f) {
  switch (code) {
    case kF32: return f.template operator()<float>();
    case kF64: return f.template operator()<double>();
    case kF16: return f.template operator()<Half>();
    case kBF16: return f.template operator()<BFloat16>();
    case kI64: return f.template operator()<int64_t>();
    case kI32: return f.template operator()<int32_t>();
    default: return f.template operator()<bool>();
  }
}

}  // namespace opspec::internal::cuda
