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
