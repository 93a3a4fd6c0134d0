// cuda_benchmark.cc: issue 8's goal: the ten-op elementwise chain on 64M f32
// elements on cuda:0, fused into one NVRTC kernel by compile() with the fused
// backend (cache warm), against the bandwidth of a device-to-device copy of
// the same buffer in the same run (goal: at least 80% of it). Both count the
// input read plus the output written, so their bytes_per_second compare
// directly; eager_cuda is the unfused chain. Each iteration ends with a
// device synchronize, so the time is the GPU's. Without a CUDA device (or a
// build without the backend) each skips with "no CUDA device available".
#include <benchmark/benchmark.h>

#include <vector>

#include "benchmarks/chain_program.h"
#include "runtime/compile/compile.h"
#include "runtime/core/device_hooks.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

constexpr Device kCuda0{DeviceType::kCUDA, 0};
constexpr int64_t kElements = int64_t{1} << 26;

bool skip_without_cuda(benchmark::State& state) {
  if (get_device_hooks(DeviceType::kCUDA).is_available()) return false;
  state.SkipWithError("no CUDA device available");
  return true;
}

void synchronize() { get_device_hooks(DeviceType::kCUDA).synchronize(kCuda0); }

// The bandwidth ceiling: one read and one write of the buffer, device to device.
void BM_CopyD2D(benchmark::State& state) {
  if (skip_without_cuda(state)) return;
  const int64_t n = state.range(0);
  const Tensor src = ops::randn({n}, {.device = kCuda0});
  const Tensor dst = ops::empty({n}, {.device = kCuda0});
  const size_t nbytes = static_cast<size_t>(n) * sizeof(float);
  for (auto _ : state) {
    get_device_hooks(DeviceType::kCUDA).copy_bytes(dst.raw_data(), kCuda0, src.raw_data(), kCuda0, nbytes);
    synchronize();
  }
  set_chain_bytes(state, n);
}
BENCHMARK(BM_CopyD2D)->Name("BM_CopyD2D")->Arg(kElements)->UseRealTime()->Unit(benchmark::kMicrosecond);

void BM_ElementwiseChain_eager_cuda(benchmark::State& state) {
  if (skip_without_cuda(state)) return;
  const int64_t n = state.range(0);
  const std::vector<Tensor> in = {ops::randn({n}, {.device = kCuda0})};
  for (auto _ : state) {
    benchmark::DoNotOptimize(elementwise_chain(in));
    synchronize();
  }
  set_chain_bytes(state, n);
}
BENCHMARK(BM_ElementwiseChain_eager_cuda)
    ->Name("BM_ElementwiseChain/eager_cuda")
    ->Arg(kElements)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

void BM_ElementwiseChain_fused_cuda(benchmark::State& state) {
  if (skip_without_cuda(state)) return;
  const int64_t n = state.range(0);
  const std::vector<Tensor> in = {ops::randn({n}, {.device = kCuda0})};
  const CompiledFunction cf = compile(&elementwise_chain, {.backend = "fused", .name = "elementwise_chain"});
  benchmark::DoNotOptimize(cf(in));  // capture, NVRTC compile, fill the caches
  synchronize();
  for (auto _ : state) {
    benchmark::DoNotOptimize(cf(in));
    synchronize();
  }
  set_chain_bytes(state, n);
  if (cf.stats().compiles != 1) state.SkipWithError("the chain did not run as one cached graph");
}
BENCHMARK(BM_ElementwiseChain_fused_cuda)
    ->Name("BM_ElementwiseChain/fused_cuda")
    ->Arg(kElements)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace opspec
