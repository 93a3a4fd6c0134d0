// reduction_benchmark.cc: reductions and the normalizations real models run
// after matmul, on 64 MiB of f32: BM_Reduce/{sum,amax}/16777216 (the whole
// tensor to one value) and BM_Reduce/mean_dim/16777216 ([4096, 4096] to
// [4096] over the last dim), read against BM_MemRead (bytes: one read);
// BM_Softmax/4096x4096 and BM_LayerNorm/4096x4096 (last dim, with weight and
// bias), read against BM_Copy (bytes: one read and one write of the tensor).
#include <benchmark/benchmark.h>

#include "runtime/ops/ops.h"

namespace opspec {
namespace {

constexpr int64_t kRows = 4096, kCols = 4096;

const Tensor& matrix() {
  static const Tensor x = ops::randn({kRows, kCols});
  return x;
}

void BM_Reduce_sum(benchmark::State& state) {
  const Tensor x = ops::reshape(matrix(), {state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(ops::sum(x));
  state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}
BENCHMARK(BM_Reduce_sum)->Name("BM_Reduce/sum")->Arg(kRows * kCols)->UseRealTime();

void BM_Reduce_amax(benchmark::State& state) {
  const Tensor x = ops::reshape(matrix(), {state.range(0)});
  for (auto _ : state) benchmark::DoNotOptimize(ops::amax(x));
  state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}
BENCHMARK(BM_Reduce_amax)->Name("BM_Reduce/amax")->Arg(kRows * kCols)->UseRealTime();

void BM_Reduce_mean_dim(benchmark::State& state) {
  const Tensor& x = matrix();
  for (auto _ : state) benchmark::DoNotOptimize(ops::mean(x, {1}));
  state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}
BENCHMARK(BM_Reduce_mean_dim)->Name("BM_Reduce/mean_dim")->Arg(kRows * kCols)->UseRealTime();

void BM_Softmax(benchmark::State& state) {
  const Tensor& x = matrix();
  for (auto _ : state) benchmark::DoNotOptimize(ops::softmax(x, -1));
  state.SetBytesProcessed(state.iterations() * 2 * x.numel() * 4);
}
BENCHMARK(BM_Softmax)->Name("BM_Softmax/4096x4096")->UseRealTime();

void BM_LayerNorm(benchmark::State& state) {
  const Tensor& x = matrix();
  const Tensor w = ops::randn({kCols}), b = ops::randn({kCols});
  for (auto _ : state) benchmark::DoNotOptimize(ops::layer_norm(x, {kCols}, w, b));
  state.SetBytesProcessed(state.iterations() * 2 * x.numel() * 4);
}
BENCHMARK(BM_LayerNorm)->Name("BM_LayerNorm/4096x4096")->UseRealTime();

}  // namespace
}  // namespace opspec
