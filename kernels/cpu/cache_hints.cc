// cache_hints.cc: stream_copy, stream_scale and stream_sub_sub (See Note
// [Streaming stores] in cache_hints.h).
#include "kernels/cpu/cache_hints.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define OPSPEC_STREAM_AVX512 1
#endif

namespace opspec::internal {

void stream_copy(void* dst, const void* src, int64_t bytes) {
  auto* d = static_cast<char*>(dst);
  const auto* s = static_cast<const char*>(src);
#if defined(__SSE2__)
  // Plain stores up to dst's first 16-byte boundary, then 16-byte streaming
  // stores (SSE2, so every x86-64 build has them), then the tail.
  const int64_t head = std::min<int64_t>(bytes, (16 - reinterpret_cast<uintptr_t>(d) % 16) % 16);
  std::memcpy(d, s, static_cast<size_t>(head));
  int64_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
    const __m128i e = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), e);
  }
  for (; i + 16 <= bytes; i += 16) {
    _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i)));
  }
  std::memcpy(d + i, s + i, static_cast<size_t>(bytes - i));
#else
  std::memcpy(d, s, static_cast<size_t>(bytes));
#endif
}

namespace {

enum class StreamOp { kScale, kSubSub };

// apply: one element of stream_map, as the plain loop computes it.
template <StreamOp kOp>
inline float apply(float v, float a, float b) {
  return kOp == StreamOp::kScale ? v * a : (v - a) - b;
}

// stream_map_plain: the elements before the first aligned vector, after the
// last one, and every element where the CPU has no streaming stores.
template <StreamOp kOp>
inline void stream_map_plain(float* dst, const float* src, float a, float b, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) dst[i] = apply<kOp>(src[i], a, b);
}

// aligned_start: the first index from which dst + i is `align`-byte aligned (at most n).
inline int64_t aligned_start(const float* dst, int64_t n, int64_t align) {
  const auto mis = static_cast<int64_t>(reinterpret_cast<uintptr_t>(dst) % static_cast<uintptr_t>(align));
  return mis % 4 != 0 ? n : std::min<int64_t>(n, (align - mis) % align / 4);
}

#if defined(OPSPEC_STREAM_AVX512)
// has_avx512f: whether this CPU runs AVX-512F, asked once.
bool has_avx512f() {
  static const bool has = __builtin_cpu_supports("avx512f");
  return has;
}

template <StreamOp kOp>
__attribute__((target("avx512f"))) void stream_map_avx512(float* dst, const float* src, float a, float b, int64_t n) {
  int64_t i = aligned_start(dst, n, 64);
  stream_map_plain<kOp>(dst, src, a, b, 0, i);
  const __m512 va = _mm512_set1_ps(a), vb = _mm512_set1_ps(b);
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(src + i);
    _mm512_stream_ps(dst + i, kOp == StreamOp::kScale ? _mm512_mul_ps(v, va) : _mm512_sub_ps(_mm512_sub_ps(v, va), vb));
  }
  stream_map_plain<kOp>(dst, src, a, b, i, n);
}
#endif

template <StreamOp kOp>
void stream_map(float* dst, const float* src, float a, float b, int64_t n) {
#if defined(OPSPEC_STREAM_AVX512)
  if (has_avx512f()) return stream_map_avx512<kOp>(dst, src, a, b, n);
#endif
#if defined(__SSE2__)
  int64_t i = aligned_start(dst, n, 16);
  stream_map_plain<kOp>(dst, src, a, b, 0, i);
  const __m128 va = _mm_set1_ps(a), vb = _mm_set1_ps(b);
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(src + i);
    _mm_stream_ps(dst + i, kOp == StreamOp::kScale ? _mm_mul_ps(v, va) : _mm_sub_ps(_mm_sub_ps(v, va), vb));
  }
  stream_map_plain<kOp>(dst, src, a, b, i, n);
#else
  stream_map_plain<kOp>(dst, src, a, b, 0, n);
#endif
}

}  // namespace

void stream_scale(float* dst, const float* src, float k, int64_t n) {
  stream_map<StreamOp::kScale>(dst, src, k, 0.0f, n);
}

void stream_sub_sub(float* dst, const float* src, float a, float b, int64_t n) {
  stream_map<StreamOp::kSubSub>(dst, src, a, b, n);
}

void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace opspec::internal
