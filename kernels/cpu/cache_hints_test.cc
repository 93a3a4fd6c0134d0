// Tests of stream_copy, stream_scale and stream_sub_sub (See Note [Streaming
// stores] in cache_hints.h).
#include "kernels/cpu/cache_hints.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace opspec::internal {
namespace cache_hints_test {

// Every length to 300 bytes at every alignment of source and destination
// (the streamed middle, the plain head and tail), and nothing outside
// [dst, dst + bytes) is written.
TEST(CacheHintsTest, StreamCopyCopiesExactlyTheBytesAtAnyAlignment) {
  std::vector<uint8_t> src(400), dst(400);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  for (int64_t bytes : {0, 1, 15, 16, 17, 63, 64, 65, 127, 128, 200, 300}) {
    for (int d_off = 0; d_off < 18; ++d_off) {
      for (int s_off = 0; s_off < 6; ++s_off) {
        std::memset(dst.data(), 0xAB, dst.size());
        stream_copy(dst.data() + 32 + d_off, src.data() + s_off, bytes);
        stream_fence();
        for (int64_t i = 0; i < static_cast<int64_t>(dst.size()); ++i) {
          const int64_t k = i - 32 - d_off;
          const uint8_t want = k >= 0 && k < bytes ? src[static_cast<size_t>(s_off + k)] : uint8_t{0xAB};
          ASSERT_EQ(dst[static_cast<size_t>(i)], want)
              << "byte " << i << " of a " << bytes << "-byte copy at offsets " << d_off << ", " << s_off;
        }
      }
    }
  }
}

// stream_scale and stream_sub_sub: every length to 70 floats at every float
// alignment of the destination within a 64-byte line (plain head, streamed
// middle, plain tail), each element exactly the plain loop's value (NaN and
// infinities included), and nothing outside [dst, dst + n) written.
TEST(CacheHintsTest, StreamScaleAndSubSubComputeExactlyThePlainLoop) {
  std::vector<float> src(100);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<float>(i) * 0.37f - 11.3f;
  src[5] = std::numeric_limits<float>::quiet_NaN();
  src[20] = std::numeric_limits<float>::infinity();
  src[41] = -0.0f;
  constexpr float kK = 0.3f, kA = 1.7f, kB = 0.011f;
  constexpr uint32_t kGuard = 0x7fc5a5a5u;  // a NaN no result has
  alignas(64) float dst[128];
  for (bool sub : {false, true}) {
    for (int64_t n = 0; n <= 70; ++n) {
      for (int off = 0; off < 16; ++off) {
        for (float& v : dst) v = std::bit_cast<float>(kGuard);
        if (sub) {
          stream_sub_sub(dst + 16 + off, src.data() + 3, kA, kB, n);
        } else {
          stream_scale(dst + 16 + off, src.data() + 3, kK, n);
        }
        stream_fence();
        for (int64_t i = 0; i < 128; ++i) {
          const int64_t k = i - 16 - off;
          const float s = k >= 0 && k < n ? src[static_cast<size_t>(3 + k)] : 0.0f;
          const uint32_t want = k >= 0 && k < n ? std::bit_cast<uint32_t>(sub ? (s - kA) - kB : s * kK) : kGuard;
          ASSERT_EQ(std::bit_cast<uint32_t>(dst[i]), want)
              << (sub ? "stream_sub_sub" : "stream_scale") << " of " << n << " floats at offset " << off
              << ", float " << i;
        }
      }
    }
  }
}

}  // namespace cache_hints_test
}  // namespace opspec::internal
