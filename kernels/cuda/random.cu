// random.cu: the CUDA kernels of randint, uniform_, normal_ and bernoulli,
// drawing from kernels/common/random_values.h as the CPU kernels do, so the
// same (seed, offset) gives the same values on both.
#include <cuda_runtime_api.h>

#include <type_traits>

#include "kernels/common/random_values.h"
#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/device_loops.cuh"
#include "kernels/cuda/random_launch.h"

namespace opspec::internal::cuda {
namespace {

#define OPSPEC_RANDOM_GRID_STRIDE(i, n)                                                                   \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < (n);                    \
       i += static_cast<int64_t>(gridDim.x) * kThreads)

template <class T>
__global__ void __launch_bounds__(kThreads) randint_kernel(T* p, int64_t n, uint64_t seed, uint64_t first,
                                                           int64_t low, uint64_t range) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) { p[i] = random_values::randint<T>(seed, first + static_cast<uint64_t>(i), low, range); }
}

template <class T>
__global__ void __launch_bounds__(kThreads) uniform_kernel(T* p, int64_t n, uint64_t seed, uint64_t first, double from,
                                                           double to) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) { p[i] = random_values::uniform<T>(seed, first + static_cast<uint64_t>(i), from, to); }
}

template <class T>
__global__ void __launch_bounds__(kThreads) normal_kernel(T* p, int64_t n, uint64_t seed, uint64_t first, double mean,
                                                          double std) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) { p[i] = random_values::normal<T>(seed, first + static_cast<uint64_t>(i), mean, std); }
}

template <class T>
__global__ void __launch_bounds__(kThreads) bernoulli_tensor_kernel(const T* probs, T* p, int64_t n, uint64_t seed,
                                                                    uint64_t first) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) {
    p[i] = random_values::bernoulli<T>(seed, first + static_cast<uint64_t>(i), static_cast<double>(static_cast<float>(probs[i])));
  }
}

template <>
__global__ void __launch_bounds__(kThreads) bernoulli_tensor_kernel<double>(const double* probs, double* p, int64_t n,
                                                                            uint64_t seed, uint64_t first) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) { p[i] = random_values::bernoulli<double>(seed, first + static_cast<uint64_t>(i), probs[i]); }
}

// probs_out_of_range: sets *bad when some prob is outside [0, 1] (NaN included).
template <class T>
__global__ void __launch_bounds__(kThreads) probs_out_of_range(const T* probs, int64_t n, int* bad) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) {
    const double v = static_cast<double>(static_cast<float>(probs[i]));
    if (!(v >= 0 && v <= 1)) *bad = 1;
  }
}

template <>
__global__ void __launch_bounds__(kThreads) probs_out_of_range<double>(const double* probs, int64_t n, int* bad) {
  OPSPEC_RANDOM_GRID_STRIDE(i, n) {
    if (!(probs[i] >= 0 && probs[i] <= 1)) *bad = 1;
  }
}

}  // namespace

void launch_randint(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, int64_t low, uint64_t range) {
  if (n == 0) return;
  with_code(code, [&]<class T>() {
    randint_kernel<T><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, low, range);
  });
  check_launch("randint");
}

void launch_uniform(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double from, double to) {
  if (n == 0) return;
  with_floating_code(code, "launch_uniform: uniform_ needs a floating dtype", [&]<class T>() {
    uniform_kernel<T><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, from, to);
  });
  check_launch("uniform_");
}

void launch_normal(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double mean, double std) {
  if (n == 0) return;
  with_floating_code(code, "launch_normal: normal_ needs a floating dtype", [&]<class T>() {
    normal_kernel<T><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, mean, std);
  });
  check_launch("normal_");
}

void launch_bernoulli_tensor(Code code, const void* probs, void* out, int64_t n, uint64_t seed, uint64_t first) {
  if (n == 0) return;
  with_floating_code(code, "launch_bernoulli_tensor: bernoulli needs floating probabilities", [&]<class T>() {
    bernoulli_tensor_kernel<T><<<grid_for(n), kThreads>>>(static_cast<const T*>(probs), static_cast<T*>(out), n, seed,
                                                          first);
  });
  check_launch("bernoulli");
}

bool launch_check_probs(Code code, const void* probs, int64_t n) {
  if (n == 0) return true;
  int* bad = nullptr;
  if (cudaMalloc(&bad, sizeof(int)) != cudaSuccess) fail_launch("bernoulli: cudaMalloc failed");
  int host = 0;
  cudaMemsetAsync(bad, 0, sizeof(int), nullptr);
  with_floating_code(code, "launch_check_probs: bernoulli needs floating probabilities", [&]<class T>() {
    probs_out_of_range<T><<<grid_for(n), kThreads>>>(static_cast<const T*>(probs), n, bad);
  });
  check_launch("bernoulli");
  const cudaError_t copied = cudaMemcpy(&host, bad, sizeof(int), cudaMemcpyDeviceToHost);
  cudaFree(bad);
  if (copied != cudaSuccess) fail_launch("bernoulli: reading the probability check back failed");
  return host == 0;
}

}  // namespace opspec::internal::cuda
