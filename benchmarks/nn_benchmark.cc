// nn_benchmark.cc: the layers the reference models spend their time in, at
// the models' shapes (model_benchmark.cc): BM_Conv2d/resnet (3x3, stride 1,
// padding 1, 64 -> 64 channels, [8, 64, 56, 56]), BM_MaxPool2d/resnet (3x3,
// stride 2, padding 1, the same input), BM_BatchNorm/resnet (training) and
// BM_Sdpa/gpt2_causal (batch 4, 4 heads, sequence 128, head 64, q, k and v
// the transposed views a linear's output gives, as in the GPT-2 block). The
// /resnet_channels_last rows run the first three on the same values laid
// out NHWC (BM_Model/resnet_block_channels_last's layers).
#include <benchmark/benchmark.h>

#include "runtime/ops/ops.h"

namespace opspec {
namespace {

const Tensor& resnet_activation(bool channels_last = false) {
  static const Tensor x = ops::randn({8, 64, 56, 56});
  static const Tensor x_cl = ops::contiguous(x, MemoryFormat::kChannelsLast);
  return channels_last ? x_cl : x;
}

void BM_Conv2d_resnet(benchmark::State& state, bool channels_last) {
  const Tensor& x = resnet_activation(channels_last);
  const Tensor w = ops::randn({64, 64, 3, 3});
  for (auto _ : state) benchmark::DoNotOptimize(ops::conv2d(x, w, std::nullopt, {1}, {1}));
  // Multiply-adds: every output element sums 64 channels x 9 taps.
  state.counters["GMAC/s"] = benchmark::Counter(static_cast<double>(x.numel()) * 64 * 9 * state.iterations() / 1e9,
                                                benchmark::Counter::kIsRate);
}
BENCHMARK_CAPTURE(BM_Conv2d_resnet, contiguous, false)
    ->Name("BM_Conv2d/resnet")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Conv2d_resnet, channels_last, true)
    ->Name("BM_Conv2d/resnet_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_MaxPool2d_resnet(benchmark::State& state, bool channels_last) {
  const Tensor& x = resnet_activation(channels_last);
  for (auto _ : state) benchmark::DoNotOptimize(ops::max_pool2d(x, {3}, {2}, {1}));
  state.SetBytesProcessed(state.iterations() * x.numel() * 4);
}
BENCHMARK_CAPTURE(BM_MaxPool2d_resnet, contiguous, false)
    ->Name("BM_MaxPool2d/resnet")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_MaxPool2d_resnet, channels_last, true)
    ->Name("BM_MaxPool2d/resnet_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_BatchNorm_resnet(benchmark::State& state, bool channels_last) {
  const Tensor& x = resnet_activation(channels_last);
  const Tensor weight = ops::ones({64}), bias = ops::zeros({64});
  const Tensor mean = ops::zeros({64}), var = ops::ones({64});
  for (auto _ : state) {
    benchmark::DoNotOptimize(ops::batch_norm(x, weight, bias, mean, var, /*training=*/true, 0.1, 1e-5));
  }
  state.SetBytesProcessed(state.iterations() * x.numel() * 4 * 2);  // one read, one write
}
BENCHMARK_CAPTURE(BM_BatchNorm_resnet, contiguous, false)
    ->Name("BM_BatchNorm/resnet")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_BatchNorm_resnet, channels_last, true)
    ->Name("BM_BatchNorm/resnet_channels_last")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Sdpa_gpt2_causal(benchmark::State& state) {
  constexpr int64_t kBatch = 4, kSeq = 128, kHeads = 4, kHead = 64;
  // [B, T, H * E] projections seen as [B, H, T, E], as CausalSelfAttention makes them.
  auto heads = [&] {
    return ops::transpose(ops::view(ops::randn({kBatch, kSeq, kHeads * kHead}), {kBatch, kSeq, kHeads, kHead}), 1, 2);
  };
  const Tensor q = heads(), k = heads(), v = heads();
  for (auto _ : state) {
    benchmark::DoNotOptimize(ops::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, /*is_causal=*/true));
  }
}
BENCHMARK(BM_Sdpa_gpt2_causal)->Name("BM_Sdpa/gpt2_causal")->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace opspec
