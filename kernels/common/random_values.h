// random_values.h: the value of element i of uniform_, normal_, randint and
// bernoulli from its Philox counter, shared by the CPU kernels
// (kernels/cpu/random.cc) and the CUDA kernels (kernels/cuda/random.cu) so
// both backends draw the same numbers. See Note [Random draws per dtype].
#pragma once

#include <math.h>

#include <cstdint>
#include <type_traits>

#include "runtime/core/half.h"
#include "runtime/core/host_device.h"
#include "runtime/core/philox.h"

namespace opspec::internal::random_values {

// unit_uniform: rand's draw for T at counter c, in [0, 1): 24 bits for f32,
// 53 for f64, 11 (8) for f16 (bf16), so rand_like(x) == uniform_(x, 0, 1).
template <class T>
OPSPEC_HOST_DEVICE inline double unit_uniform(uint64_t seed, uint64_t c) {
  if constexpr (std::is_same_v<T, double>) {
    return philox::uniform_double(seed, c);
  } else if constexpr (std::is_same_v<T, float>) {
    return philox::uniform_float(seed, c);
  } else {
    constexpr float kScale = std::is_same_v<T, Half> ? 2048.0f : 256.0f;  // 2^digits
    return static_cast<double>(::floorf(philox::uniform_float(seed, c) * kScale) / kScale);
  }
}

// uniform: from + (to - from) * u, one fused multiply-add in double (explicit,
// so the device compiler's contraction cannot round differently), then T.
template <class T>
OPSPEC_HOST_DEVICE inline T uniform(uint64_t seed, uint64_t c, double from, double to) {
  return static_cast<T>(::fma(to - from, unit_uniform<T>(seed, c), from));
}

// normal: mean + std * z, z randn's double draw, one fused multiply-add, then T.
template <class T>
OPSPEC_HOST_DEVICE inline T normal(uint64_t seed, uint64_t c, double mean, double std) {
  return static_cast<T>(::fma(std, philox::normal_double(seed, c), mean));
}

// randint: low + (64 random bits mod (high - low)), high > low; floating
// dtypes get the integer converted, bool any nonzero value.
template <class T>
OPSPEC_HOST_DEVICE inline T randint(uint64_t seed, uint64_t c, int64_t low, uint64_t range) {
  const philox::Block r = philox::philox4x32_10(c, seed);
  const uint64_t bits = uint64_t{r.w[0]} << 32 | r.w[1];
  const int64_t v = static_cast<int64_t>(static_cast<uint64_t>(low) + bits % range);
  if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(v);
  } else {
    return static_cast<T>(static_cast<double>(v));
  }
}

// bernoulli: 1 when rand's f64 draw is below p (bernoulli_.float's rule), else 0.
template <class T>
OPSPEC_HOST_DEVICE inline T bernoulli(uint64_t seed, uint64_t c, double p) {
  return philox::uniform_double(seed, c) < p ? static_cast<T>(1.0f) : static_cast<T>(0.0f);
}

}  // namespace opspec::internal::random_values
