// compile_benchmark.cc: what compile() costs on top of the ops it runs: the
// cold first call of a 100-op program (capture, guards, backend compile, run),
// the warm call of the same program (capture, cache lookup, run), and the
// per-call overhead on a single 1-element add. Names are issue 7's.
#include <benchmark/benchmark.h>

#include "runtime/compile/compile.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

constexpr int kProgramOps = 100;

// program_100: kProgramOps ops on 8x8 inputs, a fifth of them mm, the rest
// elementwise (cheap ones, so that what compile adds is what shows).
std::vector<Tensor> program_100(const Tensor& x, const Tensor& w) {
  Tensor y = x;
  for (int i = 0; i < kProgramOps; ++i) {
    switch (i % 5) {
      case 0: y = ops::mm(y, w); break;
      case 1: y = ops::add(y, x); break;
      case 2: y = ops::relu(y); break;
      case 3: y = ops::mul(y, 0.5); break;
      default: y = ops::sub(y, x); break;
    }
  }
  return {y};
}

// Cold: every iteration starts from empty caches (torch._dynamo.reset()), so
// the call captures, builds guards, compiles with the default backend and runs.
void BM_Compile_trace_and_compile(benchmark::State& state) {
  const Tensor x = ops::randn({8, 8}), w = ops::randn({8, 8});
  auto compiled = compile(&program_100);
  for (auto _ : state) {
    reset();
    benchmark::DoNotOptimize(compiled(x, w));
  }
  state.SetItemsProcessed(state.iterations() * kProgramOps);
}
BENCHMARK(BM_Compile_trace_and_compile)->Name("BM_Compile/trace_and_compile/100")->Unit(benchmark::kMicrosecond);

// Warm: the same program with its graph cached; what remains is capture,
// the cache lookup (program hash and guards) and running the graph.
void BM_Compile_cached_call(benchmark::State& state) {
  const Tensor x = ops::randn({8, 8}), w = ops::randn({8, 8});
  auto compiled = compile(&program_100);
  compiled(x, w);
  for (auto _ : state) benchmark::DoNotOptimize(compiled(x, w));
  if (compiled.stats().compiles != 1) state.SkipWithError("the warm calls recompiled");
  state.SetItemsProcessed(state.iterations() * kProgramOps);
}
BENCHMARK(BM_Compile_cached_call)->Name("BM_Compile/cached_call/100")->Unit(benchmark::kMicrosecond);

// Warm, with CompileOptions::trace_once: guards on the inputs, then the
// cached graph, without running fn (Note [Trace once]).
void BM_Compile_cached_call_trace_once(benchmark::State& state) {
  const Tensor x = ops::randn({8, 8}), w = ops::randn({8, 8});
  auto compiled = compile(&program_100, {.trace_once = true});
  compiled(x, w);
  for (auto _ : state) benchmark::DoNotOptimize(compiled(x, w));
  if (compiled.stats().traced_calls != compiled.stats().calls - 1) state.SkipWithError("fn ran on a warm call");
  state.SetItemsProcessed(state.iterations() * kProgramOps);
}
BENCHMARK(BM_Compile_cached_call_trace_once)
    ->Name("BM_Compile/cached_call/100/trace_once")
    ->Unit(benchmark::kMicrosecond);

// The same program run eagerly: the floor the compiled calls are measured against.
void BM_Compile_eager(benchmark::State& state) {
  const Tensor x = ops::randn({8, 8}), w = ops::randn({8, 8});
  for (auto _ : state) benchmark::DoNotOptimize(program_100(x, w));
  state.SetItemsProcessed(state.iterations() * kProgramOps);
}
BENCHMARK(BM_Compile_eager)->Name("BM_Compile/eager/100")->Unit(benchmark::kMicrosecond);

// FloorMode: the least a capture can do with an op at the PreDispatch key:
// answer it, the cheapest way a mode can (Note [Answers that run no op]), with
// a fresh fake tensor like its first argument, without looking at anything else.
class FloorMode : public DispatchMode {
 public:
  bool answer_without_ops(const OperatorHandle&, Stack& stack) override {
    const Tensor& t = stack[0].to_tensor();
    Tensor fake = is_fake(t) ? internal::make_fake_like(t) : internal::make_fake(t.sizes(), t.strides(), 0, t.dtype(), t.device());
    stack.clear();
    stack.emplace_back(std::move(fake));
    return true;
  }
  bool dispatch(OpCall& call) override { return answer_without_ops(call.op(), call.stack()); }
  DispatchKey key() const override { return DispatchKey::kPreDispatch; }
};

// The floor of any warm call that runs fn (lazy capture, Note [Lazy
// capture]): every op of fn reaches a pre-dispatch mode and gets a fresh
// fake result, then the same ops run eagerly, as the eager backend's graph
// runs them. What cached_call/100 adds to this is matching, tracking and
// guards; trace_once skips the first half.
void BM_Compile_lazy_floor(benchmark::State& state) {
  const Tensor x = ops::randn({8, 8}), w = ops::randn({8, 8});
  FloorMode mode;
  for (auto _ : state) {
    {
      EnablePreDispatchGuard pre_dispatch;
      ModeGuard guard(mode);
      benchmark::DoNotOptimize(program_100(x, w));
    }
    benchmark::DoNotOptimize(program_100(x, w));
  }
  state.SetItemsProcessed(state.iterations() * kProgramOps);
}
BENCHMARK(BM_Compile_lazy_floor)->Name("BM_Compile/lazy_floor/100")->Unit(benchmark::kMicrosecond);

// The overhead alone: a compiled 1-element add against the plain call
// (BM_Dispatch/add_1elem/plain).
void BM_Compiled_add_1elem(benchmark::State& state) {
  const Tensor a = ops::ones({1}), b = ops::ones({1});
  auto compiled = compile([](const Tensor& x, const Tensor& y) { return ops::add(x, y); });
  for (auto _ : state) benchmark::DoNotOptimize(compiled(a, b));
}
BENCHMARK(BM_Compiled_add_1elem)->Name("BM_Compile/add_1elem/call_overhead");

}  // namespace
}  // namespace opspec
