// sleef_decls.h: the SLEEF vector functions the evaluation calls, and
// sleef16 / sleef8, the functions of vector_math_cases.h on SLEEF's 16- and
// 8-lane variants. sleef.h
// declares them only when the whole file is compiled for AVX2 / AVX-512,
// which would let the compiler use those instructions anywhere in it; the
// evaluation instead compiles just the functions that call them for those
// targets (and checks the CPU first), so it declares them itself.
#pragma once

#include <immintrin.h>

extern "C" {
#define OPSPEC_SLEEF_DECL(fn) \
  __m512 Sleef_##fn##f16_u10(__m512); \
  __m256 Sleef_##fn##f8_u10(__m256);
OPSPEC_SLEEF_DECL(sin)
OPSPEC_SLEEF_DECL(cos)
OPSPEC_SLEEF_DECL(exp)
OPSPEC_SLEEF_DECL(log)
OPSPEC_SLEEF_DECL(tanh)
OPSPEC_SLEEF_DECL(erf)
#undef OPSPEC_SLEEF_DECL
}

#include <cstdint>

#include "benchmarks/vector_math_cases.h"

namespace opspec::vector_math_cases {

// sleef16: y[i] = f(x[i]) for n elements (a multiple of 16), SLEEF's AVX-512 functions.
__attribute__((target("avx512f"))) inline void sleef16(Fn f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m512 v = _mm512_loadu_ps(x + i);
    __m512 r;
    switch (f) {
      case Fn::kSin: r = Sleef_sinf16_u10(v); break;
      case Fn::kCos: r = Sleef_cosf16_u10(v); break;
      case Fn::kExp: r = Sleef_expf16_u10(v); break;
      case Fn::kLog: r = Sleef_logf16_u10(v); break;
      case Fn::kTanh: r = Sleef_tanhf16_u10(v); break;
      case Fn::kErf: r = Sleef_erff16_u10(v); break;
      default: {  // sigmoid = 1 / (1 + exp(-x))
        const __m512 one = _mm512_set1_ps(1.0f);
        r = _mm512_div_ps(one, _mm512_add_ps(one, Sleef_expf16_u10(_mm512_sub_ps(_mm512_setzero_ps(), v))));
      }
    }
    _mm512_storeu_ps(y + i, r);
  }
  for (; i < n; ++i) y[i] = x[i];  // kN is a multiple of 16
}

// sleef8: the same with SLEEF's AVX2 functions (n a multiple of 8).
__attribute__((target("avx2,fma"))) inline void sleef8(Fn f, const float* x, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(x + i);
    __m256 r;
    switch (f) {
      case Fn::kSin: r = Sleef_sinf8_u10(v); break;
      case Fn::kCos: r = Sleef_cosf8_u10(v); break;
      case Fn::kExp: r = Sleef_expf8_u10(v); break;
      case Fn::kLog: r = Sleef_logf8_u10(v); break;
      case Fn::kTanh: r = Sleef_tanhf8_u10(v); break;
      case Fn::kErf: r = Sleef_erff8_u10(v); break;
      default: {
        const __m256 one = _mm256_set1_ps(1.0f);
        r = _mm256_div_ps(one, _mm256_add_ps(one, Sleef_expf8_u10(_mm256_sub_ps(_mm256_setzero_ps(), v))));
      }
    }
    _mm256_storeu_ps(y + i, r);
  }
  for (; i < n; ++i) y[i] = x[i];
}

}  // namespace opspec::vector_math_cases
