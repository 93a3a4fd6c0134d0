// fused_benchmark.cc: the fused backend against eager execution: the chain
// relu(x * y + z) * 0.5 on f32 tensors of 256K (cache-resident), 4M and 16M
// elements, and gelu(x * s + bias) - x with a broadcast bias and a 0-dim scale
// on 4M, each run as one fused kernel (`fused`; `kernel_only`: the group's FusedKernel into a
// preallocated output), eagerly (one kernel and one full-size temporary per op)
// and through the graph interpreter (eager plus per-node overhead);
// `fused_interpreted`: `fused` with the CPU's tile interpreter instead of
// generated code (See Note [Generated CPU kernels]).
#include <benchmark/benchmark.h>

#include <map>

#include "kernels/cpu/fused_codegen.h"
#include "runtime/compile/backend.h"
#include "runtime/compile/fusion.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace {

// kFusedInterpreted: kFused with the CPU's tile interpreter instead of generated code.
enum How : int64_t { kFused, kKernelOnly, kEager, kInterpreter, kFusedInterpreted };

Tensor chain(const Tensor& x, const Tensor& y, const Tensor& z) { return ops::relu(x * y + z) * 0.5; }

// bias_chain: gelu(x * scale + bias) - x with a [cols] bias and a 0-dim scale.
Tensor bias_chain(const Tensor& x, const Tensor& bias, const Tensor& scale) { return ops::gelu(x * scale + bias) - x; }

// inputs: cached per (benchmark, size), so repetitions reuse them.
const std::vector<Tensor>& inputs(bool bias, int64_t n) {
  static std::map<std::pair<bool, int64_t>, std::vector<Tensor>> cache;
  auto [it, fresh] = cache.try_emplace({bias, n});
  if (fresh) {
    const int64_t cols = 1024, rows = n / cols;
    it->second = bias ? std::vector<Tensor>{ops::randn({rows, cols}), ops::randn({cols}), ops::randn({})}
                      : std::vector<Tensor>{ops::randn({rows, cols}), ops::randn({rows, cols}), ops::randn({rows, cols})};
  }
  return it->second;
}

template <class Fn>
void run(benchmark::State& state, Fn fn, bool bias, How how) {
  const int64_t n = state.range(0);
  const std::vector<Tensor>& in = inputs(bias, n);
  const Graph g = make_fx(fn)(in);
  // Kernels are made under the policy (See Note [Generated CPU kernels]) and
  // run once before timing, so the compile is not timed.
  const internal::CpuFusedCodegenGuard policy(how == kFusedInterpreted ? internal::CpuFusedCodegen::kNever
                                                                       : internal::cpu_fused_codegen());
  const CompiledGraph fused = fused_backend(g, in);
  const std::vector<FusionGroup> groups = partition_graph(g);
  const Tensor out = ops::empty(in[0].sizes());
  if (how == kKernelOnly) {
    groups.at(0).kernel->run(in, {out});
  } else {
    benchmark::DoNotOptimize(fused(in));
  }
  for (auto _ : state) {
    switch (how) {
      case kFused:
      case kFusedInterpreted: benchmark::DoNotOptimize(fused(in)); break;
      case kKernelOnly: groups.at(0).kernel->run(in, {out}); break;
      case kEager: benchmark::DoNotOptimize(fn(in[0], in[1], in[2])); break;
      case kInterpreter: benchmark::DoNotOptimize(run_graph(g, in)); break;
    }
  }
  state.SetItemsProcessed(state.iterations() * n);
}

void BM_Chain(benchmark::State& state, How how) { run(state, &chain, false, how); }
void BM_BiasChain(benchmark::State& state, How how) { run(state, &bias_chain, true, how); }

constexpr int64_t k256K = int64_t{1} << 18, k4M = int64_t{1} << 22, k16M = int64_t{1} << 24;
BENCHMARK_CAPTURE(BM_Chain, fused, kFused)->Name("BM_Fused/relu_mul_add_mul/fused")->Arg(k256K)->Arg(k4M)->Arg(k16M)->UseRealTime();
BENCHMARK_CAPTURE(BM_Chain, kernel_only, kKernelOnly)->Name("BM_Fused/relu_mul_add_mul/kernel_only")->Arg(k256K)->Arg(k4M)->Arg(k16M)->UseRealTime();
BENCHMARK_CAPTURE(BM_Chain, eager, kEager)->Name("BM_Fused/relu_mul_add_mul/eager")->Arg(k256K)->Arg(k4M)->Arg(k16M)->UseRealTime();
BENCHMARK_CAPTURE(BM_Chain, interpreter, kInterpreter)->Name("BM_Fused/relu_mul_add_mul/interpreter")->Arg(k256K)->Arg(k4M)->Arg(k16M)->UseRealTime();
BENCHMARK_CAPTURE(BM_Chain, fused_interpreted, kFusedInterpreted)->Name("BM_Fused/relu_mul_add_mul/fused_interpreted")->Arg(k4M)->UseRealTime();
BENCHMARK_CAPTURE(BM_BiasChain, fused, kFused)->Name("BM_Fused/gelu_bias/fused")->Arg(k4M)->UseRealTime();
BENCHMARK_CAPTURE(BM_BiasChain, eager, kEager)->Name("BM_Fused/gelu_bias/eager")->Arg(k4M)->UseRealTime();
BENCHMARK_CAPTURE(BM_BiasChain, interpreter, kInterpreter)->Name("BM_Fused/gelu_bias/interpreter")->Arg(k4M)->UseRealTime();

}  // namespace
}  // namespace opspec
