// trace_benchmark.cc: what tracing costs: one op on fake tensors (the Fake
// key's meta kernel), make_fx of a small MLP block and of the `mlp` fixture,
// and running the traced graph against running the same program eagerly.
#include <benchmark/benchmark.h>

#include "harness/program/fixture.h"
#include "runtime/compile/compile.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace {

// An MLP block: linear, gelu, linear, residual add, layer norm.
Tensor mlp_block(const Tensor& x, const Tensor& w1, const Tensor& w2) {
  const Tensor h = ops::linear(ops::gelu(ops::linear(x, w1)), w2);
  return ops::layer_norm(ops::add(h, x), {x.size(-1)});
}

struct MlpInputs {
  Tensor x = ops::randn({64, 256});
  Tensor w1 = ops::randn({1024, 256});
  Tensor w2 = ops::randn({256, 1024});
};

void BM_Fake_mm(benchmark::State& state) {
  Tensor a, b;
  {
    FakeTensorMode fake;
    ModeGuard guard(fake);
    a = ops::randn({4096, 4096});
    b = ops::randn({4096, 4096});
  }
  for (auto _ : state) benchmark::DoNotOptimize(ops::mm(a, b));  // metadata only
}
BENCHMARK(BM_Fake_mm)->Name("BM_Fake/mm_4096");

void BM_MakeFx_mlp_block(benchmark::State& state) {
  const MlpInputs in;
  const TracingMode mode = state.range(0) == 0 ? TracingMode::kFake : TracingMode::kReal;
  for (auto _ : state) benchmark::DoNotOptimize(make_fx(&mlp_block, {.tracing_mode = mode})(in.x, in.w1, in.w2));
}
BENCHMARK(BM_MakeFx_mlp_block)->Name("BM_MakeFx/mlp_block")->ArgName("real")->Arg(0)->Arg(1);

void BM_RunGraph_mlp_block(benchmark::State& state) {
  const MlpInputs in;
  const Graph g = make_fx(&mlp_block)(in.x, in.w1, in.w2);
  for (auto _ : state) benchmark::DoNotOptimize(run_graph(g, {in.x, in.w1, in.w2}));
}
BENCHMARK(BM_RunGraph_mlp_block)->Name("BM_RunGraph/mlp_block/interpreter");

void BM_Eager_mlp_block(benchmark::State& state) {
  const MlpInputs in;
  for (auto _ : state) benchmark::DoNotOptimize(mlp_block(in.x, in.w1, in.w2));
}
BENCHMARK(BM_Eager_mlp_block)->Name("BM_RunGraph/mlp_block/eager");

// A compiled call: capture on fake tensors, cache lookup by program and
// guards, then the graph. The difference to eager is the per-call overhead.
void BM_Compiled_mlp_block(benchmark::State& state) {
  const MlpInputs in;
  auto compiled = compile(&mlp_block);
  for (auto _ : state) benchmark::DoNotOptimize(compiled(in.x, in.w1, in.w2));
}
BENCHMARK(BM_Compiled_mlp_block)->Name("BM_RunGraph/mlp_block/compiled_eager_backend");

// make_fx of the `mlp` fixture (Linear 16->32, gelu, Linear 32->16 on x
// [8, 16]) with fake tensors: tracing cost alone, nothing computes.
void BM_FakeTrace_mlp(benchmark::State& state) {
  const Fixture* fixture = find_fixture("mlp");
  if (fixture == nullptr) {
    state.SkipWithError("the mlp fixture is not linked in");
    return;
  }
  const FixtureFn fn = fixture->make();
  const Tensor x = ops::randn({8, 16});
  for (auto _ : state) benchmark::DoNotOptimize(make_fx(fn)(x));
}
BENCHMARK(BM_FakeTrace_mlp)->Name("BM_FakeTrace/mlp")->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace opspec
