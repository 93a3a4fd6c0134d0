// Tests of stream_copy (See Note [Streaming stores] in cache_hints.h).
#include "kernels/cpu/cache_hints.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
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

}  // namespace cache_hints_test
}  // namespace opspec::internal
