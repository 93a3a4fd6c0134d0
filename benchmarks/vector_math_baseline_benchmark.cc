// vector_math_baseline_benchmark.cc: how fast the chain's three
// transcendentals (sin, exp, tanh, in one pass over 4M f32) run with the
// C library's own vector math (glibc's libmvec, reached by compiling this
// file alone with -ffast-math), on every core, as opspec's kernels run.
// libmvec is tuned for throughput and allows 4 ulp of error where opspec's
// functions stay within 1-2 (Note [Vectorizable float math]), so its time is
// a floor for any fused chain on this machine: the fused chain does this
// work and seven cheap ops more. See benchmarks/README.md.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "benchmarks/vector_math_cases.h"

namespace opspec {
namespace {

// Wide clones as kernels/cpu/loops.h builds its transcendental loops, so the
// widest libmvec variant the CPU runs is used (Note [Wide vector clones]).
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__)
#define OPSPEC_BASELINE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OPSPEC_BASELINE_CLONES
#endif

OPSPEC_BASELINE_CLONES void sin_exp_tanh_chunk(const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(std::exp(std::sin(x[i])));
}

void BM_LibmvecSinExpTanh(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::vector<float> x(static_cast<size_t>(n)), y(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) x[static_cast<size_t>(i)] = static_cast<float>(i % 2000) / 1000.0f - 1.0f;
  constexpr int64_t kChunk = 1 << 15;
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      sin_exp_tanh_chunk(x.data() + begin, y.data() + begin, std::min(kChunk, n - begin));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<int64_t>(sizeof(float)));
}
BENCHMARK(BM_LibmvecSinExpTanh)
    ->Name("BM_ElementwiseChain/libmvec_sin_exp_tanh")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();

// BM_VectorMath/<fn>/libmvec: each function alone, as libmvec computes it.
OPSPEC_BASELINE_CLONES void libmvec_chunk(vector_math_cases::Fn f, const float* x, float* y, int64_t n) {
  using vector_math_cases::Fn;
  switch (f) {
    case Fn::kSin: for (int64_t i = 0; i < n; ++i) y[i] = std::sin(x[i]); break;
    case Fn::kCos: for (int64_t i = 0; i < n; ++i) y[i] = std::cos(x[i]); break;
    case Fn::kExp: for (int64_t i = 0; i < n; ++i) y[i] = std::exp(x[i]); break;
    case Fn::kLog: for (int64_t i = 0; i < n; ++i) y[i] = std::log(x[i]); break;
    case Fn::kTanh: for (int64_t i = 0; i < n; ++i) y[i] = std::tanh(x[i]); break;
    case Fn::kErf: for (int64_t i = 0; i < n; ++i) y[i] = std::erf(x[i]); break;
    case Fn::kSigmoid: for (int64_t i = 0; i < n; ++i) y[i] = 1.0f / (1.0f + std::exp(-x[i])); break;
  }
}

void BM_VectorMathLibmvec(benchmark::State& state, vector_math_cases::Fn f) {
  const std::vector<float> x = vector_math_cases::inputs(f);
  std::vector<float> y(x.size());
  const int64_t n = static_cast<int64_t>(x.size());
  constexpr int64_t kChunk = 1 << 15;
  for (auto _ : state) {
#pragma omp parallel for schedule(static)
    for (int64_t begin = 0; begin < n; begin += kChunk) {
      libmvec_chunk(f, x.data() + begin, y.data() + begin, std::min(kChunk, n - begin));
    }
    benchmark::DoNotOptimize(y.data());
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
}

[[maybe_unused]] const bool kRegistered = [] {
  for (const vector_math_cases::Fn f : vector_math_cases::kAll) {
    benchmark::RegisterBenchmark((std::string("BM_VectorMath/") + vector_math_cases::name(f) + "/libmvec").c_str(),
                                 BM_VectorMathLibmvec, f)
        ->UseRealTime();
  }
  return true;
}();

}  // namespace
}  // namespace opspec
