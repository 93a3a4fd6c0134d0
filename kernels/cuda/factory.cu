// factory.cu: arange and the random kernels (rand, randn, bernoulli_,
// dropout), which draw from the same Philox functions as the CPU generator
// (runtime/core/philox.h), so element i of a call has the same value on
// both. See Note [Same random numbers on every device] there.
#include <type_traits>

#include "kernels/cuda/code_dispatch.cuh"
#include "kernels/cuda/device_loops.cuh"
#include "runtime/core/philox.h"

namespace opspec::internal::cuda {
namespace {

#define OPSPEC_GRID_STRIDE(i, n)                                                                          \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * kThreads + threadIdx.x; i < (n);                    \
       i += static_cast<int64_t>(gridDim.x) * kThreads)

// arange_kernel: the CPU's arange_fill (kernels/cpu/factory.cc), element by element.
template <class T>
__global__ void __launch_bounds__(kThreads) arange_kernel(T* p, int64_t n, double start, double step, int64_t istart,
                                                          int64_t istep) {
  OPSPEC_GRID_STRIDE(i, n) {
    if constexpr (std::is_integral_v<T>) {
      const uint64_t v = static_cast<uint64_t>(istart) + static_cast<uint64_t>(istep) * static_cast<uint64_t>(i);
      p[i] = static_cast<T>(static_cast<int64_t>(v));
    } else {
      using acc_t = std::conditional_t<std::is_same_v<T, double> || std::is_same_v<T, float>, double, float>;
      p[i] = static_cast<T>(static_cast<acc_t>(start) + static_cast<acc_t>(step) * static_cast<acc_t>(i));
    }
  }
}

// random_kernel: the CPU's uniform_loop, normal_loop and bernoulli_loop (kernels/cpu/random.cc).
template <class T, RandomKind kKind>
__global__ void __launch_bounds__(kThreads) random_kernel(T* p, int64_t n, uint64_t seed, uint64_t first, double prob) {
  OPSPEC_GRID_STRIDE(i, n) {
    const uint64_t c = first + static_cast<uint64_t>(i);
    if constexpr (kKind == RandomKind::kBernoulli) {
      p[i] = philox::uniform_double(seed, c) < prob ? static_cast<T>(1.0f) : static_cast<T>(0.0f);
    } else if constexpr (kKind == RandomKind::kUniform) {
      if constexpr (std::is_same_v<T, double>) {
        p[i] = philox::uniform_double(seed, c);
      } else if constexpr (std::is_same_v<T, float>) {
        p[i] = philox::uniform_float(seed, c);
      } else {
        constexpr float kScale = std::is_same_v<T, Half> ? 2048.0f : 256.0f;  // 2^digits
        p[i] = T(::floorf(philox::uniform_float(seed, c) * kScale) / kScale);
      }
    } else {
      if constexpr (std::is_same_v<T, double>) {
        p[i] = philox::normal_double(seed, c);
      } else {
        p[i] = T(philox::normal_float(seed, c));
      }
    }
  }
}

// dropout_kernel: the CPU's dropout_loop.
template <class T>
__global__ void __launch_bounds__(kThreads) dropout_kernel(const T* x, T* y, bool* mask, int64_t n, uint64_t seed,
                                                           uint64_t first, double p1m, double scale) {
  using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const acc_t s = static_cast<acc_t>(scale);
  OPSPEC_GRID_STRIDE(i, n) {
    const bool keep = philox::uniform_double(seed, first + static_cast<uint64_t>(i)) < p1m;
    mask[i] = keep;
    y[i] = static_cast<T>(static_cast<acc_t>(x[i]) * static_cast<acc_t>(keep) * s);
  }
}

}  // namespace

void launch_arange(Code code, void* out, int64_t n, double start, double step, int64_t istart, int64_t istep) {
  if (n == 0) return;
  with_code(code, [&]<class T>() {
    if constexpr (std::is_same_v<T, bool>) {
      fail_launch("launch_arange: no bool arange");
    } else {
      arange_kernel<T><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, start, step, istart, istep);
      check_launch("arange");
    }
  });
}

void launch_random(RandomKind kind, Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double p) {
  if (n == 0) return;
  if (kind == RandomKind::kBernoulli) {
    with_code(code, [&]<class T>() {
      random_kernel<T, RandomKind::kBernoulli><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, p);
    });
  } else {
    with_floating_code(code, "launch_random: rand and randn need a floating dtype", [&]<class T>() {
      if (kind == RandomKind::kUniform) {
        random_kernel<T, RandomKind::kUniform><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, p);
      } else {
        random_kernel<T, RandomKind::kNormal><<<grid_for(n), kThreads>>>(static_cast<T*>(out), n, seed, first, p);
      }
    });
  }
  check_launch("random");
}

void launch_dropout(Code code, const void* x, void* y, bool* mask, int64_t n, uint64_t seed, uint64_t first,
                    double p1m, double scale) {
  if (n == 0) return;
  with_floating_code(code, "launch_dropout: dropout needs a floating dtype", [&]<class T>() {
    dropout_kernel<T><<<grid_for(n), kThreads>>>(static_cast<const T*>(x), static_cast<T*>(y), mask, n, seed, first,
                                                  p1m, scale);
  });
  check_launch("dropout");
}

}  // namespace opspec::internal::cuda
