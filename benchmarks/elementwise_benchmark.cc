// elementwise_benchmark.cc: issue 7's ten-op elementwise chain on 4M f32
// elements (the `elementwise_chain` fixture's program), run eagerly (one
// kernel and one full-size temporary per op) and through compile() with the
// fused backend, cache warm (one kernel, x read once, the result written once).
// Bytes processed count x read plus the result written for both, so their
// GB/s compare directly. `fused_sin_exp_tanh` runs only the chain's three
// transcendental ops, fused: the fused chain does that work and seven cheap
// ops more, so eager / fused_sin_exp_tanh bounds the speedup fusion can give
// with these math functions on the machine at hand. `{eager,fused}_cheap`
// run the cheap chain (ten ops of a cycle or two an element: fixtures/elementwise.cc),
// where eager moves ten times the bytes the fused kernel does: read against
// BM_Copy (memory_benchmark.cc). BM_Unary/{relu,exp}/16777216: one eager op
// on 64 MiB, against BM_Copy too.
#include <benchmark/benchmark.h>

#include <vector>

#include "benchmarks/chain_program.h"
#include "harness/expect/compiled_benchmark.h"
#include "kernels/cpu/fused_codegen.h"
#include "runtime/compile/compile.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// sin_exp_tanh: the chain's transcendental ops alone.
std::vector<Tensor> sin_exp_tanh(const std::vector<Tensor>& in) { return {ops::tanh(ops::exp(ops::sin(in.at(0))))}; }

void BM_ElementwiseChain_eager(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Tensor> in = {ops::randn({n})};
  for (auto _ : state) benchmark::DoNotOptimize(elementwise_chain(in));
  set_chain_bytes(state, n);
}
BENCHMARK(BM_ElementwiseChain_eager)->Name("BM_ElementwiseChain/eager")->Arg(int64_t{1} << 22)->UseRealTime();

// run_compiled: fn through compile() with the fused backend, cache warm;
// its CPU kernels made under the codegen policy (the default one compiles
// them at this size, See Note [Generated CPU kernels]), or interpreted.
void run_compiled(benchmark::State& state, std::vector<Tensor> (*fn)(const std::vector<Tensor>&), const char* name,
                  bool interpreted = false) {
  const int64_t n = state.range(0);
  const std::vector<Tensor> in = {ops::randn({n})};
  const CompiledFunction cf = compile(fn, {.backend = "fused", .name = name});
  {
    const internal::CpuFusedCodegenGuard policy(interpreted ? internal::CpuFusedCodegen::kNever
                                                            : internal::cpu_fused_codegen());
    benchmark::DoNotOptimize(cf(in));  // capture, compile and fill the cache
  }
  for (auto _ : state) benchmark::DoNotOptimize(cf(in));
  set_chain_bytes(state, n);
  if (cf.stats().compiles != 1 || cf.stats().graphs_run != static_cast<int>(state.iterations()) + 1) {
    state.SkipWithError("the chain did not run as one cached graph");
  }
}

void BM_ElementwiseChain_fused(benchmark::State& state) { run_compiled(state, &elementwise_chain, "elementwise_chain"); }
BENCHMARK(BM_ElementwiseChain_fused)->Name("BM_ElementwiseChain/fused")->Arg(int64_t{1} << 22)->UseRealTime();

void BM_ElementwiseChain_sin_exp_tanh(benchmark::State& state) { run_compiled(state, &sin_exp_tanh, "sin_exp_tanh"); }
BENCHMARK(BM_ElementwiseChain_sin_exp_tanh)
    ->Name("BM_ElementwiseChain/fused_sin_exp_tanh")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();

void BM_ElementwiseChain_eager_cheap(benchmark::State& state) {
  const int64_t n = state.range(0);
  const std::vector<Tensor> in = {ops::randn({n})};
  for (auto _ : state) benchmark::DoNotOptimize(cheap_chain(in));
  set_chain_bytes(state, n);
}
BENCHMARK(BM_ElementwiseChain_eager_cheap)
    ->Name("BM_ElementwiseChain/eager_cheap")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();

void BM_ElementwiseChain_fused_cheap(benchmark::State& state) { run_compiled(state, &cheap_chain, "cheap_chain"); }
BENCHMARK(BM_ElementwiseChain_fused_cheap)
    ->Name("BM_ElementwiseChain/fused_cheap")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();

// *_interpreted: the same fused kernels run by the tile interpreter (kNever),
// what the generated ones are measured against.
void BM_ElementwiseChain_fused_interpreted(benchmark::State& state) {
  run_compiled(state, &elementwise_chain, "elementwise_chain", /*interpreted=*/true);
}
BENCHMARK(BM_ElementwiseChain_fused_interpreted)
    ->Name("BM_ElementwiseChain/fused_interpreted")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();
void BM_ElementwiseChain_fused_cheap_interpreted(benchmark::State& state) {
  run_compiled(state, &cheap_chain, "cheap_chain", /*interpreted=*/true);
}
BENCHMARK(BM_ElementwiseChain_fused_cheap_interpreted)
    ->Name("BM_ElementwiseChain/fused_cheap_interpreted")
    ->Arg(int64_t{1} << 22)
    ->UseRealTime();

// BM_Unary: one eager unary op over n f32, into a fresh output (as eager code
// runs it); bytes: the read and the write.
void BM_Unary(benchmark::State& state, Tensor (*op)(const Tensor&)) {
  const int64_t n = state.range(0);
  const Tensor x = ops::randn({n});
  for (auto _ : state) benchmark::DoNotOptimize(op(x));
  state.SetBytesProcessed(state.iterations() * 2 * n * static_cast<int64_t>(sizeof(float)));
}
Tensor relu(const Tensor& x) { return ops::relu(x); }
Tensor exp(const Tensor& x) { return ops::exp(x); }
BENCHMARK_CAPTURE(BM_Unary, relu, &relu)->Name("BM_Unary/relu")->Arg(int64_t{1} << 24)->UseRealTime();
BENCHMARK_CAPTURE(BM_Unary, exp, &exp)->Name("BM_Unary/exp")->Arg(int64_t{1} << 24)->UseRealTime();

}  // namespace
}  // namespace opspec

// The cheap chain through OPSPEC_BENCHMARK_COMPILED, as a user's own
// benchmark binary registers a program (BM_Compiled_cheap_chain/{eager,fused}).
OPSPEC_BENCHMARK_COMPILED(BM_Compiled_cheap_chain, &opspec::cheap_chain,
                          [] { return std::vector<opspec::Tensor>{opspec::ops::randn({int64_t{1} << 20})}; },
                          {.backends = {"fused"}});
