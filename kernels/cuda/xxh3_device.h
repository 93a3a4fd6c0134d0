// xxh3_device.h: XXH3-64 with a seed (xxHash 0.8's XXH3_64bits_withSeed) as
// host-and-device code: the whole hash, for short inputs and as a host
// reference, and the pieces of its long-input loop that the CUDA bitwise hash
// runs in parallel. See Note [XXH3 on the device].
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/host_device.h"

namespace opspec::internal::xxh3 {

// Note [XXH3 on the device]
// The bitwise tensor hash (See Note [Bitwise tensor hash] in
// harness/tensor_hash.cc) is XXH3-64 of 1 MiB slices. XXH3 on inputs over
// 240 bytes keeps eight 64-bit accumulator lanes; each 64-byte stripe adds
// to lane j the term w[j ^ 1] + lo32(w[j] ^ s[j]) * hi32(w[j] ^ s[j]) (its
// words w, the secret words s at the stripe's offset), and after every block
// of kStripesPerBlock stripes each lane is scrambled (a non-linear step,
// lane by lane). Since addition mod 2^64 is associative, a block's effect
// is acc = scramble(acc + S_b), where the lane sums S_b of different blocks
// are independent: the device computes every block's S_b in parallel, then
// folds the few thousand block sums of a slice in order, one thread per
// lane. block_lane_term, scramble_lane and merge_accs below are those
// steps, and hash_long_by_blocks runs them in that order on the host, so
// the decomposition is tested against libxxhash without a GPU. Everything
// here follows xxhash.h 0.8's scalar code line for line; reads are
// little-endian byte loads (GPUs and x86 are little-endian).

// OPSPEC_XXH3_SECRET_BYTES: XXH3's default 192-byte secret (XXH3_kSecret),
// for initialising host and __constant__ device copies alike.
#define OPSPEC_XXH3_SECRET_BYTES                                                                            \
  0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c, 0xde, 0xd4, \
      0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f, 0xcb, 0x79, 0xe6,   \
      0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72, 0x21, 0xb8, 0x08, 0x46, 0x74,   \
      0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26, 0x4c, 0x3c, 0x28, 0x52, 0xbb, 0x91,   \
      0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e, 0xa3, 0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d,   \
      0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac, 0xd8, 0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34,   \
      0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f, 0x1d, 0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31,   \
      0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73, 0x64, 0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5,   \
      0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63, 0xeb, 0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16,   \
      0x55, 0x26, 0x29, 0xd4, 0x68, 0x9e, 0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8,   \
      0xd1, 0x7a, 0xd0, 0x31, 0xce, 0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca,   \
      0xbb, 0x4b, 0x40, 0x7e

// kSecretSize .. kMidSizeMax: XXH3's geometry for the default secret size.
inline constexpr int kSecretSize = 192;
inline constexpr int kStripeLen = 64;
inline constexpr int kLanes = 8;
inline constexpr int kSecretConsumeRate = 8;
inline constexpr int kStripesPerBlock = (kSecretSize - kStripeLen) / kSecretConsumeRate;  // 16
inline constexpr int kBlockLen = kStripeLen * kStripesPerBlock;                           // 1024
inline constexpr int kMidSizeMax = 240;
inline constexpr int kSecretSizeMin = 136;

// kPrime32_1 .. kPrime64_5: xxHash's primes.
inline constexpr uint64_t kPrime32_1 = 0x9E3779B1U;
inline constexpr uint64_t kPrime32_2 = 0x85EBCA77U;
inline constexpr uint64_t kPrime32_3 = 0xC2B2AE3DU;
inline constexpr uint64_t kPrime64_1 = 0x9E3779B185EBCA87ULL;
inline constexpr uint64_t kPrime64_2 = 0xC2B2AE3D27D4EB4FULL;
inline constexpr uint64_t kPrime64_3 = 0x165667B19E3779F9ULL;
inline constexpr uint64_t kPrime64_4 = 0x85EBCA77C2B2AE63ULL;
inline constexpr uint64_t kPrime64_5 = 0x27D4EB2F165667C5ULL;

// ---- primitives ----

// read_le32 / read_le64: little-endian loads from any alignment.
OPSPEC_HOST_DEVICE inline uint32_t read_le32(const uint8_t* p) {
  return uint32_t{p[0]} | uint32_t{p[1]} << 8 | uint32_t{p[2]} << 16 | uint32_t{p[3]} << 24;
}
OPSPEC_HOST_DEVICE inline uint64_t read_le64(const uint8_t* p) {
  return uint64_t{read_le32(p)} | uint64_t{read_le32(p + 4)} << 32;
}
// swap32 / swap64 / rotl64 / mult32to64: xxHash's bit helpers.
OPSPEC_HOST_DEVICE inline uint32_t swap32(uint32_t x) {
  return (x << 24) | ((x << 8) & 0x00ff0000u) | ((x >> 8) & 0x0000ff00u) | (x >> 24);
}
OPSPEC_HOST_DEVICE inline uint64_t swap64(uint64_t x) {
  return uint64_t{swap32(static_cast<uint32_t>(x))} << 32 | swap32(static_cast<uint32_t>(x >> 32));
}
OPSPEC_HOST_DEVICE inline uint64_t rotl64(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }
OPSPEC_HOST_DEVICE inline uint64_t mult32to64(uint64_t a, uint64_t b) { return (a & 0xFFFFFFFFu) * (b & 0xFFFFFFFFu); }

// mul128_fold64: the low and high halves of the 128-bit product, xored.
OPSPEC_HOST_DEVICE inline uint64_t mul128_fold64(uint64_t a, uint64_t b) {
#ifdef __CUDA_ARCH__
  return (a * b) ^ __umul64hi(a, b);
#else
  const unsigned __int128 p = static_cast<unsigned __int128>(a) * b;
  return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
#endif
}

// xxh64_avalanche / avalanche / rrmxmx: XXH64's and XXH3's final mixes.
OPSPEC_HOST_DEVICE inline uint64_t xxh64_avalanche(uint64_t h) {
  h ^= h >> 33;
  h *= kPrime64_2;
  h ^= h >> 29;
  h *= kPrime64_3;
  h ^= h >> 32;
  return h;
}
OPSPEC_HOST_DEVICE inline uint64_t avalanche(uint64_t h) {
  h ^= h >> 37;
  h *= 0x165667919E3779F9ULL;
  h ^= h >> 32;
  return h;
}
OPSPEC_HOST_DEVICE inline uint64_t rrmxmx(uint64_t h, uint64_t len) {
  h ^= rotl64(h, 49) ^ rotl64(h, 24);
  h *= 0x9FB21C651E98DF25ULL;
  h ^= (h >> 35) + len;
  h *= 0x9FB21C651E98DF25ULL;
  return h ^ (h >> 28);
}

// ---- short inputs (0 to 240 bytes) ----

// len_1to3 .. len_129to240, mix16: XXH3_64's short-input paths, by length.
OPSPEC_HOST_DEVICE inline uint64_t len_1to3(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  const uint32_t c1 = in[0], c2 = in[len >> 1], c3 = in[len - 1];
  const uint32_t combined = (c1 << 16) | (c2 << 24) | c3 | (static_cast<uint32_t>(len) << 8);
  const uint64_t bitflip = (read_le32(secret) ^ read_le32(secret + 4)) + seed;
  return xxh64_avalanche(uint64_t{combined} ^ bitflip);
}
OPSPEC_HOST_DEVICE inline uint64_t len_4to8(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  seed ^= uint64_t{swap32(static_cast<uint32_t>(seed))} << 32;
  const uint32_t in1 = read_le32(in), in2 = read_le32(in + len - 4);
  const uint64_t bitflip = (read_le64(secret + 8) ^ read_le64(secret + 16)) - seed;
  const uint64_t in64 = in2 + (uint64_t{in1} << 32);
  return rrmxmx(in64 ^ bitflip, len);
}
OPSPEC_HOST_DEVICE inline uint64_t len_9to16(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  const uint64_t bitflip1 = (read_le64(secret + 24) ^ read_le64(secret + 32)) + seed;
  const uint64_t bitflip2 = (read_le64(secret + 40) ^ read_le64(secret + 48)) - seed;
  const uint64_t lo = read_le64(in) ^ bitflip1;
  const uint64_t hi = read_le64(in + len - 8) ^ bitflip2;
  return avalanche(len + swap64(lo) + hi + mul128_fold64(lo, hi));
}
OPSPEC_HOST_DEVICE inline uint64_t len_0to16(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  if (len > 8) return len_9to16(in, len, secret, seed);
  if (len >= 4) return len_4to8(in, len, secret, seed);
  if (len > 0) return len_1to3(in, len, secret, seed);
  return xxh64_avalanche(seed ^ (read_le64(secret + 56) ^ read_le64(secret + 64)));
}
OPSPEC_HOST_DEVICE inline uint64_t mix16(const uint8_t* in, const uint8_t* secret, uint64_t seed) {
  return mul128_fold64(read_le64(in) ^ (read_le64(secret) + seed), read_le64(in + 8) ^ (read_le64(secret + 8) - seed));
}
OPSPEC_HOST_DEVICE inline uint64_t len_17to128(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  uint64_t acc = len * kPrime64_1;
  if (len > 32) {
    if (len > 64) {
      if (len > 96) {
        acc += mix16(in + 48, secret + 96, seed);
        acc += mix16(in + len - 64, secret + 112, seed);
      }
      acc += mix16(in + 32, secret + 64, seed);
      acc += mix16(in + len - 48, secret + 80, seed);
    }
    acc += mix16(in + 16, secret + 32, seed);
    acc += mix16(in + len - 32, secret + 48, seed);
  }
  acc += mix16(in, secret, seed);
  acc += mix16(in + len - 16, secret + 16, seed);
  return avalanche(acc);
}
OPSPEC_HOST_DEVICE inline uint64_t len_129to240(const uint8_t* in, size_t len, const uint8_t* secret, uint64_t seed) {
  constexpr int kStartOffset = 3, kLastOffset = 17;
  uint64_t acc = len * kPrime64_1;
  const int rounds = static_cast<int>(len) / 16;
  for (int i = 0; i < 8; ++i) acc += mix16(in + 16 * i, secret + 16 * i, seed);
  acc = avalanche(acc);
  for (int i = 8; i < rounds; ++i) acc += mix16(in + 16 * i, secret + 16 * (i - 8) + kStartOffset, seed);
  acc += mix16(in + len - 16, secret + kSecretSizeMin - kLastOffset, seed);
  return avalanche(acc);
}

// short_hash: XXH3_64bits_withSeed for len <= kMidSizeMax, with the default
// secret at `secret` (host or device memory).
OPSPEC_HOST_DEVICE inline uint64_t short_hash(const uint8_t* in, size_t len, uint64_t seed, const uint8_t* secret) {
  if (len <= 16) return len_0to16(in, len, secret, seed);
  if (len <= 128) return len_17to128(in, len, secret, seed);
  return len_129to240(in, len, secret, seed);
}

// ---- long inputs (over 240 bytes) ----

// custom_secret_word: word k (of kSecretSize / 8) of the seeded secret the
// long hash uses: the default secret's word plus the seed (even k) or minus it.
OPSPEC_HOST_DEVICE inline uint64_t custom_secret_word(const uint8_t* default_secret, int k, uint64_t seed) {
  const uint64_t w = read_le64(default_secret + 8 * k);
  return (k & 1) == 0 ? w + seed : w - seed;
}
// init_custom_secret: the whole seeded secret (XXH3_initCustomSecret; the
// default secret itself when seed is 0).
OPSPEC_HOST_DEVICE inline void init_custom_secret(uint8_t* out, const uint8_t* default_secret, uint64_t seed) {
  for (int k = 0; k < kSecretSize / 8; ++k) {
    const uint64_t w = custom_secret_word(default_secret, k, seed);
    for (int b = 0; b < 8; ++b) out[8 * k + b] = static_cast<uint8_t>(w >> (8 * b));
  }
}

// init_acc: lane's starting accumulator (XXH3_INIT_ACC).
OPSPEC_HOST_DEVICE inline uint64_t init_acc(int lane) {
  switch (lane) {
    case 0: return kPrime32_3;
    case 1: return kPrime64_1;
    case 2: return kPrime64_2;
    case 3: return kPrime64_3;
    case 4: return kPrime64_4;
    case 5: return kPrime32_2;
    case 6: return kPrime64_5;
    default: return kPrime32_1;
  }
}

// lane_term: what one stripe adds to accumulator lane j, from the stripe's
// words w[j] and w[j ^ 1] and the secret word s[j] at the stripe's offset.
OPSPEC_HOST_DEVICE inline uint64_t lane_term(uint64_t w_lane, uint64_t w_partner, uint64_t s_lane) {
  const uint64_t key = w_lane ^ s_lane;
  return w_partner + mult32to64(key, key >> 32);
}

// block_lane_sum: lane's sum over `stripes` stripes from `in`, the n-th read
// with the secret at secret + n * kSecretConsumeRate (a block, or the last
// partial one).
OPSPEC_HOST_DEVICE inline uint64_t block_lane_sum(const uint8_t* in, int stripes, const uint8_t* secret, int lane) {
  uint64_t sum = 0;
  for (int n = 0; n < stripes; ++n) {
    const uint8_t* s = in + n * kStripeLen;
    sum += lane_term(read_le64(s + 8 * lane), read_le64(s + 8 * (lane ^ 1)),
                     read_le64(secret + n * kSecretConsumeRate + 8 * lane));
  }
  return sum;
}

// scramble_lane: lane after a block (XXH3_scrambleAcc), keyed by the
// secret's last stripe.
OPSPEC_HOST_DEVICE inline uint64_t scramble_lane(uint64_t acc, const uint8_t* secret, int lane) {
  acc ^= acc >> 47;
  acc ^= read_le64(secret + kSecretSize - kStripeLen + 8 * lane);
  return acc * kPrime32_1;
}

// LongGeometry: how XXH3 cuts a long input: full blocks (each followed by a
// scramble), then the stripes of the last block, then the input's last
// 64 bytes as one more stripe.
struct LongGeometry {
  uint64_t full_blocks;
  int last_stripes;
};
OPSPEC_HOST_DEVICE inline LongGeometry long_geometry(uint64_t len) {
  const uint64_t blocks = (len - 1) / kBlockLen;
  return {blocks, static_cast<int>(((len - 1) - kBlockLen * blocks) / kStripeLen)};
}

// kLastStripeSecret / kMergeSecret: where the last stripe's and the merge's secret start.
inline constexpr int kLastStripeSecret = kSecretSize - kStripeLen - 7;
inline constexpr int kMergeSecret = 11;

// merge_accs: the hash of a long input from its final accumulators.
OPSPEC_HOST_DEVICE inline uint64_t merge_accs(const uint64_t* acc, const uint8_t* secret, uint64_t len) {
  uint64_t result = len * kPrime64_1;
  for (int i = 0; i < 4; ++i) {
    const uint8_t* s = secret + kMergeSecret + 16 * i;
    result += mul128_fold64(acc[2 * i] ^ read_le64(s), acc[2 * i + 1] ^ read_le64(s + 8));
  }
  return avalanche(result);
}

// hash_long_by_blocks: the long hash (len > kMidSizeMax) with secret (the
// seeded one), computed as the device computes it: all block lane sums
// first, then the per-lane scramble chain. See Note [XXH3 on the device].
OPSPEC_HOST_DEVICE inline uint64_t hash_long_by_blocks(const uint8_t* in, uint64_t len, const uint8_t* secret) {
  const LongGeometry g = long_geometry(len);
  uint64_t acc[kLanes];
  for (int lane = 0; lane < kLanes; ++lane) {
    uint64_t a = init_acc(lane);
    for (uint64_t b = 0; b < g.full_blocks; ++b) {
      a = scramble_lane(a + block_lane_sum(in + b * kBlockLen, kStripesPerBlock, secret, lane), secret, lane);
    }
    a += block_lane_sum(in + g.full_blocks * kBlockLen, g.last_stripes, secret, lane);
    a += block_lane_sum(in + len - kStripeLen, 1, secret + kLastStripeSecret, lane);
    acc[lane] = a;
  }
  return merge_accs(acc, secret, len);
}

// hash_with_seed: XXH3_64bits_withSeed(in, len, seed) for any len, with the
// default secret at default_secret (host or device memory).
OPSPEC_HOST_DEVICE inline uint64_t hash_with_seed(const uint8_t* in, uint64_t len, uint64_t seed,
                                                  const uint8_t* default_secret) {
  if (len <= kMidSizeMax) return short_hash(in, static_cast<size_t>(len), seed, default_secret);
  uint8_t secret[kSecretSize];
  init_custom_secret(secret, default_secret, seed);
  return hash_long_by_blocks(in, len, secret);
}

}  // namespace opspec::internal::xxh3
