// block_reduce.cuh: block-wide sum and max with a fixed combination order
// (results never depend on timing), for the row kernels of softmax.cu and
// layer_norm.cu. Included by .cu files only.
#pragma once

#include <cuda_runtime.h>

namespace opspec::internal::cuda {

// kRowThreads: threads per block of the row kernels (one block per row).
inline constexpr int kRowThreads = 256;

// block_sum / block_max: the value combined over the block's threads as a
// fixed binary tree; every thread gets the result (block_max propagates NaN).
// blockDim.x must be a power of two.
template <class T>
__device__ T block_sum(T v) {
  __shared__ T shared[kRowThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = shared[threadIdx.x] + shared[threadIdx.x + half];
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();  // shared is reused by the next call
  return result;
}

template <class T>
__device__ T block_max(T v) {
  __shared__ T shared[kRowThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) {
      const T b = shared[threadIdx.x + half];
      shared[threadIdx.x] = b > shared[threadIdx.x] || b != b ? b : shared[threadIdx.x];  // NaN propagates
    }
    __syncthreads();
  }
  const T result = shared[0];
  __syncthreads();
  return result;
}

// row_threads: a power of two between 32 and kRowThreads covering n elements.
inline unsigned row_threads(long long n) {
  unsigned t = 32;
  while (t < kRowThreads && t < n) t *= 2;
  return t;
}

}  // namespace opspec::internal::cuda
