// The device XXH3 compiled for the host, against libxxhash: every length up to
// 4 KiB, random lengths up to several MiB, many seeds and misaligned inputs.
// Runs without a GPU.
#include "kernels/cuda/xxh3_device.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <random>
#include <vector>

namespace opspec::internal::xxh3 {
namespace cuda_xxh3_device_test {

constexpr uint8_t kDefaultSecret[kSecretSize] = {OPSPEC_XXH3_SECRET_BYTES};

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<uint8_t> v(n);
  for (uint8_t& b : v) b = static_cast<uint8_t>(rng());
  return v;
}

TEST(Xxh3DeviceTest, SecretIsLibxxhashDefault) {
  // XXH3_64bits_withSecret with our copy of the secret equals the unseeded hash.
  const std::vector<uint8_t> data = random_bytes(1000, 1);
  EXPECT_EQ(XXH3_64bits_withSecret(data.data(), data.size(), kDefaultSecret, sizeof kDefaultSecret),
            XXH3_64bits(data.data(), data.size()));
}

TEST(Xxh3DeviceTest, EveryLengthUpTo4KiB) {
  const std::vector<uint8_t> data = random_bytes(4096 + 8, 2);
  const uint64_t seeds[] = {0, 1, 0x9E3779B185EBCA87ULL, 0xFFFFFFFFFFFFFFFFULL, 0x0123456789ABCDEFULL};
  for (uint64_t seed : seeds) {
    for (size_t len = 0; len <= 4096; ++len) {
      for (size_t offset : {size_t{0}, size_t{3}}) {  // aligned and misaligned starts
        const uint8_t* p = data.data() + offset;
        ASSERT_EQ(hash_with_seed(p, len, seed, kDefaultSecret), XXH3_64bits_withSeed(p, len, seed))
            << "len " << len << " seed " << seed << " offset " << offset;
      }
    }
  }
}

TEST(Xxh3DeviceTest, RandomLongLengthsAndSeeds) {
  constexpr size_t kMax = size_t{6} << 20;
  const std::vector<uint8_t> data = random_bytes(kMax, 3);
  std::mt19937_64 rng(4);
  for (int trial = 0; trial < 40; ++trial) {
    // Lengths around block and slice boundaries, and uniform ones.
    size_t len = trial % 4 == 0 ? (size_t{1} << 20) + (rng() % 3) - 1
                 : trial % 4 == 1 ? kBlockLen * (1 + rng() % 64) + (rng() % 3) - 1
                                  : 1 + rng() % kMax;
    len = std::min(len, kMax);
    const uint64_t seed = rng();
    ASSERT_EQ(hash_with_seed(data.data(), len, seed, kDefaultSecret), XXH3_64bits_withSeed(data.data(), len, seed))
        << "len " << len << " seed " << seed;
  }
}

TEST(Xxh3DeviceTest, ManySeedsAtEveryRegime) {
  const std::vector<uint8_t> data = random_bytes(5000, 5);
  std::mt19937_64 rng(6);
  for (size_t len : {0, 1, 3, 4, 8, 9, 16, 17, 128, 129, 240, 241, 1024, 1025, 2048, 4999}) {
    for (int k = 0; k < 200; ++k) {
      const uint64_t seed = rng();
      ASSERT_EQ(hash_with_seed(data.data(), len, seed, kDefaultSecret), XXH3_64bits_withSeed(data.data(), len, seed))
          << "len " << len << " seed " << seed;
    }
  }
}

TEST(Xxh3DeviceTest, CustomSecretIsLibxxhashsSeededSecret) {
  // The long hash with our seeded secret equals libxxhash's seeded hash, and
  // with seed 0 the secret is the default one.
  const std::vector<uint8_t> data = random_bytes(3000, 7);
  uint8_t secret[kSecretSize];
  init_custom_secret(secret, kDefaultSecret, 0);
  EXPECT_EQ(std::vector<uint8_t>(secret, secret + kSecretSize),
            std::vector<uint8_t>(kDefaultSecret, kDefaultSecret + kSecretSize));
  init_custom_secret(secret, kDefaultSecret, 12345);
  EXPECT_EQ(hash_long_by_blocks(data.data(), data.size(), secret), XXH3_64bits_withSeed(data.data(), data.size(), 12345));
  EXPECT_EQ(custom_secret_word(kDefaultSecret, 3, 12345), read_le64(secret + 24));
}

}  // namespace
}  // namespace opspec::internal::xxh3
