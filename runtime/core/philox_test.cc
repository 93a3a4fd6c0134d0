// Philox4x32-10 against the Random123 known-answer vector, and the generator's
// transforms, which the CUDA kernels share (runtime/core/philox.h).
#include "runtime/core/philox.h"

#include <gtest/gtest.h>

#include "runtime/core/generator.h"

namespace opspec {
namespace philox_test {

TEST(PhiloxTest, MatchesTheRandom123KnownAnswer) {
  // Random123's kat_vectors: philox4x32 10 rounds, counter 0, key 0.
  const internal::philox::Block b = internal::philox::philox4x32_10(0, 0);
  EXPECT_EQ(b.w[0], 0x6627e8d5u);
  EXPECT_EQ(b.w[1], 0xe169c58du);
  EXPECT_EQ(b.w[2], 0xbc57ac4cu);
  EXPECT_EQ(b.w[3], 0x9b00dbd8u);
  const auto a = Philox4x32::block(0, 0);
  EXPECT_EQ(a[0], b.w[0]);
  EXPECT_EQ(a[3], b.w[3]);
}

TEST(PhiloxTest, UniformValuesUseTheTopBitsOfTheFirstWords) {
  for (uint64_t c : {uint64_t{0}, uint64_t{1} << 40, ~uint64_t{0}}) {
    const internal::philox::Block b = internal::philox::philox4x32_10(c, 1234);
    EXPECT_EQ(internal::uniform_float(1234, c), static_cast<float>(b.w[0] >> 8) / 16777216.0f);
    const uint64_t bits = (uint64_t{b.w[0]} << 32 | b.w[1]) >> 11;
    EXPECT_EQ(internal::uniform_double(1234, c), static_cast<double>(bits) / 9007199254740992.0);
    EXPECT_GE(internal::uniform_double(1234, c), 0.0);
    EXPECT_LT(internal::uniform_double(1234, c), 1.0);
    EXPECT_EQ(internal::normal_float(1234, c), static_cast<float>(internal::normal_double(1234, c)));
  }
}

}  // namespace
}  // namespace opspec
