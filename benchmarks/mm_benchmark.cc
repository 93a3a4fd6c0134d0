// mm_benchmark.cc: ops::mm on f32 512x512 @ 512x512 against the BLAS
// library's own sgemm on the same shape, so the ratio of the two is what
// the dispatcher, the output allocation and the kernel's set-up cost.
#include <cblas.h>

#include <benchmark/benchmark.h>

#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// set_flops: 2 * n^3 floating-point operations per iteration, as a rate.
void set_flops(benchmark::State& state, int64_t n) {
  state.counters["FLOP/s"] =
      benchmark::Counter(2.0 * static_cast<double>(n * n * n), benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Mm(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Tensor a = ops::randn({n, n}), b = ops::randn({n, n});
  for (auto _ : state) benchmark::DoNotOptimize(ops::mm(a, b));
  set_flops(state, n);
}
BENCHMARK(BM_Mm)->Name("BM_Mm")->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
// 8 and 16 take the fixed-order loop, 17 BLAS (See Note [Small matrix products]).
BENCHMARK(BM_Mm)->Name("BM_Mm")->Arg(8)->Arg(16)->Arg(17)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The baseline: cblas_sgemm into a preallocated output, nothing else, with
// OpenBLAS's own threads (as many as opspec's), the best the library does
// alone. opspec keeps OpenBLAS on one thread and splits products over its
// OpenMP threads itself (See Note [One thread pool for products]).
void BM_Sgemm(benchmark::State& state) {
  openblas_set_num_threads(get_num_threads());
  const int64_t n = state.range(0);
  const Tensor a = ops::randn({n, n}), b = ops::randn({n, n});
  Tensor c = ops::empty({n, n});
  const auto ni = static_cast<blasint>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, ni, ni, ni, 1.0f, a.data_ptr<float>(), ni,
                b.data_ptr<float>(), ni, 0.0f, c.data_ptr<float>(), ni);
    benchmark::ClobberMemory();
  }
  set_flops(state, n);
  openblas_set_num_threads(1);
}
BENCHMARK(BM_Sgemm)->Name("BM_Sgemm")->Arg(512)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_Sgemm)->Name("BM_Sgemm")->Arg(8)->Arg(16)->Arg(17)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace opspec
