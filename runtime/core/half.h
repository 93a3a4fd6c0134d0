// half.h: the 16-bit float storage types Half (IEEE f16) and BFloat16.
// Both convert to and from float with round-to-nearest-even, as PyTorch's do;
// arithmetic on them happens in float (see Note [Reduced precision math]).
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

#include "runtime/core/host_device.h"

namespace opspec {

// Note [Reduced precision math]
// f16 and bf16 values are widened to float, computed, and rounded back after
// every op, exactly like PyTorch's CPU kernels. A fused kernel must round at the
// same points to stay bit-identical with eager. The conversions below are
// OPSPEC_HOST_DEVICE: CUDA kernels round with the same code.

// BFloat16: the top 16 bits of an IEEE float32.
struct BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  OPSPEC_HOST_DEVICE BFloat16(float f) : bits(from_float(f)) {}  // NOLINT: implicit like PyTorch's
  OPSPEC_HOST_DEVICE operator float() const { return std::bit_cast<float>(uint32_t{bits} << 16); }
  OPSPEC_HOST_DEVICE static uint16_t from_float(float f) {
    uint32_t u = std::bit_cast<uint32_t>(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays quiet NaN
    uint32_t rounding_bias = 0x7fffu + ((u >> 16) & 1u);
    return static_cast<uint16_t>((u + rounding_bias) >> 16);
  }
};

// Half: IEEE 754 binary16.
struct Half {
  uint16_t bits = 0;
  Half() = default;
  OPSPEC_HOST_DEVICE Half(float f) : bits(from_float(f)) {}  // NOLINT: implicit like PyTorch's
  OPSPEC_HOST_DEVICE operator float() const { return to_float(bits); }

  OPSPEC_HOST_DEVICE static float to_float(uint16_t h) {
    const uint32_t sign = uint32_t{h & 0x8000u} << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    uint32_t out;
    if (exp == 0x1f) {
      out = sign | 0x7f800000u | (mant << 13);  // inf / nan
    } else if (exp != 0) {
      out = sign | ((exp + 112u) << 23) | (mant << 13);
    } else if (mant == 0) {
      out = sign;
    } else {  // subnormal: normalise
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      out = sign | ((112u - e) << 23) | ((mant & 0x3ffu) << 13);
    }
    return std::bit_cast<float>(out);
  }

  OPSPEC_HOST_DEVICE static uint16_t from_float(float f) {
    const uint32_t u = std::bit_cast<uint32_t>(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // NaN
    if (abs >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // overflow → inf
    if (abs < 0x38800000u) {  // result is subnormal or zero
      // Add 0.5 (as a float) so the FPU does the round-to-nearest-even for us.
      const float shifted = std::bit_cast<float>(abs) + 0.5f;
      return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u));
    }
    const uint32_t mant_odd = (abs >> 13) & 1u;
    uint32_t v = abs + 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round
    return static_cast<uint16_t>(sign | (v >> 13));
  }
};

namespace internal {

// select_bits: c ? a : b as integer masking, so GCC neither branches nor
// refuses to if-convert around floating-point ops (-ftrapping-math).
inline uint32_t select_bits(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}

// half_bits_to_float / float_to_half_bits: Half's conversions written without
// branches or loops (the FP16 library's algorithms, as c10::Half uses), so
// loops over f16 vectorize. Bit-identical to Half::to_float / Half::from_float
// for every input, NaN payloads included (copy_test checks).
__attribute__((always_inline)) inline float half_bits_to_float(uint16_t h) {
  const uint32_t w = uint32_t{h} << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t two_w = w + w;
  const float normalized = std::bit_cast<float>((two_w >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  const float denormalized = std::bit_cast<float>((two_w >> 17) | (126u << 23)) - 0.5f;
  uint32_t bits = select_bits(two_w < (1u << 27), std::bit_cast<uint32_t>(denormalized), std::bit_cast<uint32_t>(normalized));
  // inf and NaN keep their payload unquietened, as Half::to_float does.
  bits = select_bits((h & 0x7c00u) == 0x7c00u, 0x7f800000u | ((uint32_t{h} & 0x3ffu) << 13), bits);
  return std::bit_cast<float>(sign | bits);
}
__attribute__((always_inline)) inline uint16_t float_to_half_bits(float f) {
  const uint32_t w = std::bit_cast<uint32_t>(f);
  const uint32_t shl1_w = w + w;
  const uint32_t sign = w & 0x80000000u;
  float base = (std::bit_cast<float>(w & 0x7fffffffu) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t exp_bits = shl1_w & 0xff000000u;
  const uint32_t bias = select_bits(exp_bits < 0x71000000u, 0x71000000u, exp_bits);
  base = std::bit_cast<float>((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = std::bit_cast<uint32_t>(base);
  const uint32_t nonsign = ((bits >> 13) & 0x7c00u) + (bits & 0x0fffu);
  return static_cast<uint16_t>((sign >> 16) | select_bits(shl1_w > 0xff000000u, 0x7e00u, nonsign));
}

}  // namespace internal

}  // namespace opspec
