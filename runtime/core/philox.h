// philox.h: the Philox4x32-10 block function and the transforms from its
// 32-bit words to uniform and normal values, shared by the CPU generator
// (runtime/core/generator.cc) and the CUDA random kernels so both draw the
// same numbers for the same (seed, counter). See Note [Counter-based randomness].
#pragma once

#include <math.h>

#include <cstdint>

#include "runtime/core/host_device.h"

namespace opspec::internal::philox {

// Note [Same random numbers on every device]
// Philox and the uniform transforms use only integer arithmetic and exact
// conversions (24 or 53 random bits times a power of two), so rand, bernoulli_
// and dropout masks are bit-identical on the host and on a GPU. normal_double
// (Box-Muller) also needs log and cos: the host calls glibc and CUDA device
// code libdevice; both are within an ulp of the exact value and agree on all
// but a small fraction of inputs, where f64 randn can differ in its last bit
// (f32 randn, rounded from it, practically never does).

// Block: the four 32-bit output words of one Philox call.
struct Block {
  uint32_t w[4];
};

// philox4x32_10: the Philox 4x32-10 block function (Salmon et al., SC'11)
// at a 64-bit counter (the upper counter words are zero) with a 64-bit key.
OPSPEC_HOST_DEVICE inline Block philox4x32_10(uint64_t counter, uint64_t key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u;
  constexpr uint32_t kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0 = static_cast<uint32_t>(counter), c1 = static_cast<uint32_t>(counter >> 32), c2 = 0, c3 = 0;
  uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t{kM0} * c0, p1 = uint64_t{kM1} * c2;
    const uint32_t hi0 = static_cast<uint32_t>(p0 >> 32), lo0 = static_cast<uint32_t>(p0);
    const uint32_t hi1 = static_cast<uint32_t>(p1 >> 32), lo1 = static_cast<uint32_t>(p1);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += kW0;
    k1 += kW1;
  }
  return {{c0, c1, c2, c3}};
}

// uniform_float: [0, 1) from the top 24 bits of the first word.
OPSPEC_HOST_DEVICE inline float uniform_float(uint64_t seed, uint64_t counter) {
  const Block r = philox4x32_10(counter, seed);
  return static_cast<float>(r.w[0] >> 8) * 0x1.0p-24f;
}

// uniform_double: [0, 1) from 53 bits of the first two words.
OPSPEC_HOST_DEVICE inline double uniform_double(uint64_t seed, uint64_t counter) {
  const Block r = philox4x32_10(counter, seed);
  const uint64_t bits = (uint64_t{r.w[0]} << 32 | r.w[1]) >> 11;
  return static_cast<double>(bits) * 0x1.0p-53;
}

// normal_double: a standard normal value by Box-Muller from all four words.
OPSPEC_HOST_DEVICE inline double normal_double(uint64_t seed, uint64_t counter) {
  const Block r = philox4x32_10(counter, seed);
  // u1 in (0, 1] so log(u1) is finite; u2 in [0, 1).
  const double u1 = (static_cast<double>((uint64_t{r.w[0]} << 32 | r.w[1]) >> 11) + 1.0) * 0x1.0p-53;
  const double u2 = static_cast<double>((uint64_t{r.w[2]} << 32 | r.w[3]) >> 11) * 0x1.0p-53;
  constexpr double kTwoPi = 2.0 * 3.14159265358979323846;
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(kTwoPi * u2);
}

// normal_float: normal_double rounded to float.
OPSPEC_HOST_DEVICE inline float normal_float(uint64_t seed, uint64_t counter) {
  return static_cast<float>(normal_double(seed, counter));
}

}  // namespace opspec::internal::philox
