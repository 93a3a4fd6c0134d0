// vector_math_sleef_benchmark.cc: BM_VectorMath/<fn>/sleef: the functions of
// vector_math_cases.h with SLEEF's 1.0-ulp vector functions (the library
// PyTorch's CPU kernels use), 16 lanes where the CPU has AVX-512, else 8
// (AVX2 + FMA), on every core. Built only where SLEEF is installed (Debian
// libsleef-dev): an evaluation, not a dependency. See benchmarks/README.md.
#include <benchmark/benchmark.h>
#include "benchmarks/sleef_decls.h"

#include <algorithm>
#include <string>
#include <vector>

#include "benchmarks/vector_math_cases.h"

namespace opspec {
namespace {

using vector_math_cases::Fn;

__attribute__((target("avx512f"))) void sleef16(Fn f, const float* x, float* y, int64_t n) {
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

__attribute__((target("avx2,fma"))) void sleef8(Fn f, const float* x, float* y, int64_t n) {
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

void BM_VectorMathSleef(benchmark::State& state, Fn f) {
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    state.SkipWithError("SLEEF's 8-lane functions need AVX2 and FMA");
    return;
  }
  const bool wide = __builtin_cpu_supports("avx512f");
  const std::vector<float> x = vector_math_cases::inputs(f);
  std::vector<float> y(x.size());
  const int64_t n = static_cast<int64_t>(x.size());
  constexpr int64_t kChunk = 1 << 15;
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      const int64_t len = std::min(kChunk, n - begin);
      if (wide) {
        sleef16(f, x.data() + begin, y.data() + begin, len);
      } else {
        sleef8(f, x.data() + begin, y.data() + begin, len);
      }
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(wide ? "16 lanes (AVX-512)" : "8 lanes (AVX2)");
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const Fn f : vector_math_cases::kAll) {
    benchmark::RegisterBenchmark((std::string("BM_VectorMath/") + vector_math_cases::name(f) + "/sleef").c_str(),
                                 BM_VectorMathSleef, f)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace opspec
