// sleef_decls.h: the SLEEF vector functions the evaluation calls. sleef.h
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
