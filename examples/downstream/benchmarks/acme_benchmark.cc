// acme_benchmark.cc: acme's own op benchmarked eagerly and compiled by its
// backends and opspec's fused backend, with OPSPEC_BENCHMARK_COMPILED, in
// acme's Google Benchmark binary (acme_benchmarks/eager, .../acme_eager, ...,
// with counters compile_ms, graphs, graph_breaks and speedup).
#include <benchmark/benchmark.h>

#include <vector>

#include "acme/acme.h"
#include "harness/expect/compiled_benchmark.h"
#include "runtime/ops/ops.h"

namespace {

// residual: x + 0.5 * relu(x @ w), acme's fixture's program, on [256, 256].
std::vector<opspec::Tensor> residual(const std::vector<opspec::Tensor>& in) {
  const opspec::Tensor h = opspec::ops::relu(opspec::ops::mm(in[0], in[1]));
  return {acme::scaled_add(in[0], h, 0.5)};
}

std::vector<opspec::Tensor> residual_inputs() {
  return {opspec::ops::randn({256, 256}), opspec::ops::randn({256, 256})};
}

}  // namespace

OPSPEC_BENCHMARK_COMPILED(acme_residual, &residual, &residual_inputs,
                          {.backends = {"acme_eager", "acme_decomposed", "fused"}});

int main(int argc, char** argv) {
  acme::register_all();  // the op and the backends, before any benchmark runs
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
