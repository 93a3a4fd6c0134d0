// compiled_benchmark.h: OPSPEC_BENCHMARK_COMPILED, Google Benchmark
// benchmarks of one function run eagerly and compiled by each backend, for a
// user's own benchmark_main (link benchmark::benchmark and opspec::expect).
// Header-only: opspec's libraries do not depend on Google Benchmark.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "harness/expect/equivalence.h"
#include "runtime/compile/compile.h"
#include "runtime/core/device_hooks.h"

namespace opspec {

// CompiledBenchmarkOptions: the backends to benchmark besides eager.
struct CompiledBenchmarkOptions {
  std::vector<std::string> backends = {"eager", "fused"};
};

namespace internal {

using BenchmarkedFn = std::function<std::vector<Tensor>(const std::vector<Tensor>&)>;

inline CompiledBenchmarkOptions compiled_benchmark_options(CompiledBenchmarkOptions options = {}) { return options; }

// DeviceSync: waits for the device the inputs live on (cuda), or nothing on
// the cpu. Calls on a device only queue kernels: a benchmark's loop ends with
// one wait inside its timed region, so real time covers the device's work
// for the whole batch (as timing between CUDA events would), not the launches.
class DeviceSync {
 public:
  explicit DeviceSync(const std::vector<Tensor>& inputs) {
    for (const Tensor& t : inputs) {
      if (t.defined() && !t.device().is_cpu() && !t.device().is_meta()) {
        device_ = t.device();
        break;
      }
    }
  }
  void operator()() const {
    if (!device_.is_cpu()) get_device_hooks(device_.type).synchronize(device_);
  }

 private:
  Device device_ = kCPU;
};

// mean_seconds: the mean time of calls of f over at least min_seconds, the
// device's queued work included (one wait at the end).
inline double mean_seconds(const std::function<void()>& f, double min_seconds, const DeviceSync& sync) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point start = Clock::now();
  int64_t calls = 0;
  do {
    f();
    ++calls;
  } while (std::chrono::duration<double>(Clock::now() - start).count() < min_seconds);
  sync();
  return std::chrono::duration<double>(Clock::now() - start).count() / static_cast<double>(calls);
}

// timed_loop: state's loop over f, ending with a wait for the device in its last iteration.
template <class F>
void timed_loop(benchmark::State& state, const DeviceSync& sync, F&& f) {
  benchmark::IterationCount i = 0;
  for (auto _ : state) {
    f();
    if (++i == state.max_iterations) sync();
  }
}

// register_compiled_benchmarks: NAME/eager, then NAME/<backend> for each
// backend; a backend's benchmark first checks its result against eager's
// (SkipWithError with the divergence when it differs), times its cold call
// (counter compile_ms), then reports graphs, graph_breaks and speedup (eager's
// mean call time, measured just before, over this benchmark's).
inline bool register_compiled_benchmarks(const std::string& name, BenchmarkedFn fn,
                                         std::function<std::vector<Tensor>()> inputs_fn,
                                         CompiledBenchmarkOptions options) {
  benchmark::RegisterBenchmark((name + "/eager").c_str(), [fn, inputs_fn](benchmark::State& state) {
    const std::vector<Tensor> inputs = inputs_fn();
    timed_loop(state, DeviceSync(inputs), [&] { benchmark::DoNotOptimize(fn(inputs)); });
  })->UseRealTime();
  for (const std::string& backend : options.backends) {
    benchmark::RegisterBenchmark((name + "/" + backend).c_str(), [name, fn, inputs_fn, backend](benchmark::State& state) {
      const std::vector<Tensor> inputs = inputs_fn();
      CompileOptions compile_options{.backend = backend, .name = name};
      EquivalenceOptions eo;
      eo.compile = compile_options;
      const EquivalenceResult eq = check_eager_compiled_equivalent(fn, inputs, eo);
      if (!eq.result.ok) {
        state.SkipWithError(("the compiled result differs from eager's: " + eq.result.message).c_str());
        return;
      }
      const CompiledFunction compiled = compile(fn, compile_options);
      const DeviceSync sync(inputs);
      const double compile_s = mean_seconds([&] { compiled(inputs); }, 0, sync);  // the cold call
      const double eager_s = mean_seconds([&] { fn(inputs); }, 0.05, sync);
      const auto start = std::chrono::steady_clock::now();
      timed_loop(state, sync, [&] { benchmark::DoNotOptimize(compiled(inputs)); });
      const double per_call = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() /
                              static_cast<double>(std::max<int64_t>(1, state.iterations()));
      const CompileStats stats = compiled.stats();
      state.counters["compile_ms"] = compile_s * 1e3;
      state.counters["graphs"] = static_cast<double>(stats.graphs_run) / std::max(1, stats.calls);
      state.counters["graph_breaks"] = static_cast<double>(stats.breaks.size());
      state.counters["speedup"] = per_call > 0 ? eager_s / per_call : 0;
    })->UseRealTime();
  }
  return true;
}

}  // namespace internal
}  // namespace opspec

// OPSPEC_BENCHMARK_COMPILED(name, fn, inputs_fn [, {.backends = {...}}]):
// registers name/eager and name/<backend> Google Benchmark benchmarks of fn
// (a std::vector<Tensor> -> std::vector<Tensor> callable) on inputs_fn()'s
// tensors (made once per benchmark). In a file linked into the benchmark
// binary:
//   OPSPEC_BENCHMARK_COMPILED(my_block, &my_block, [] { return std::vector{ops::randn({64, 64})}; },
//                             {.backends = {"aot_eager", "fused"}});
#define OPSPEC_BENCHMARK_COMPILED(name, fn, inputs_fn, ...)                                            \
  static const bool opspec_benchmark_compiled_##name = ::opspec::internal::register_compiled_benchmarks( \
      #name, fn, inputs_fn, ::opspec::internal::compiled_benchmark_options(__VA_ARGS__))
