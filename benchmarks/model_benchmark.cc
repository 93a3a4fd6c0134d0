// model_benchmark.cc: the reference models' forward, eager and compiled with
// the fused backend (issue 24's BM_Model/... names). The GPT-2 block (logits
// and loss) runs at batch 4, sequence 128, width 256 (4 heads of 64),
// vocabulary 512; the ResNet block (training mode) at batch 8, 64 channels,
// 56 x 56, its input contiguous or channels-last; the Llama decoder layer at
// batch 4, sequence 128, width 256 (8 heads of 32, 2 key/value heads), MLP
// 688. Each runs under NoGradGuard, as libtorch's figures run under
// torch.no_grad() (the parameters require grad: Note [Parameters require grad]).
// libtorch's times for the same models are in benchmarks/README.md.
#include <benchmark/benchmark.h>

#include "fixtures/gpt2_block.h"
#include "fixtures/llama_block.h"
#include "fixtures/resnet_block.h"
#include "runtime/compile/compile.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

void BM_Model_gpt2_block(benchmark::State& state, const char* backend) {
  autograd::NoGradGuard no_grad;
  constexpr int64_t kBatch = 4, kSeq = 128;
  manual_seed(0);
  const FixtureFn model = fixtures::gpt2_program({.vocab = 512, .max_seq = kSeq, .width = 256, .heads = 4});
  // Tokens 0..511 in order (B * T = vocabulary): any valid ids do for timing.
  const std::vector<Tensor> inputs = {ops::view(ops::arange(kBatch * kSeq, {.dtype = DType::kInt64}), {kBatch, kSeq})};
  const std::string_view b = backend == nullptr ? "" : backend;
  const bool trace_once = b.ends_with("+trace_once");
  const TracedFunction fn =
      backend == nullptr
          ? TracedFunction(model)
          : TracedFunction(CompiledFunction(
                model, {.backend = std::string(trace_once ? b.substr(0, b.size() - 11) : b), .trace_once = trace_once}));
  benchmark::DoNotOptimize(fn(inputs));  // untimed: capture, compile, generate kernels
  for (auto _ : state) benchmark::DoNotOptimize(fn(inputs));
}
BENCHMARK_CAPTURE(BM_Model_gpt2_block, eager, nullptr)
    ->Name("BM_Model/gpt2_block/eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Model_gpt2_block, fused, "fused")
    ->Name("BM_Model/gpt2_block/fused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
// fused_trace_once: warm calls run the compiled plan without re-running the
// model (its ops depend only on the inputs' metadata; See Note [Trace once]).
BENCHMARK_CAPTURE(BM_Model_gpt2_block, fused_trace_once, "fused+trace_once")
    ->Name("BM_Model/gpt2_block/fused_trace_once")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// The GPT-2 block's parts the fused backend fuses, at the benchmark's sizes:
// c_fc + gelu (Note [Matmul epilogues]) and the next-token loss over the
// sliced logits (Note [Cross-entropy over rows]), eager and fused.
// The argument is the batch (4 in the block's benchmark; 32 goes past the L2s).
void BM_GptPart(benchmark::State& state, const char* part, const char* backend) {
  const int64_t kBatch = state.range(0);
  constexpr int64_t kSeq = 128, kWidth = 256, kVocab = 512;
  manual_seed(0);
  const bool mlp = std::string_view(part) == "linear_gelu";
  const std::vector<Tensor> inputs =
      mlp ? std::vector<Tensor>{ops::randn({kBatch, kSeq, kWidth}), ops::randn({4 * kWidth, kWidth}),
                                ops::randn({4 * kWidth})}
          : std::vector<Tensor>{ops::randn({kBatch, kSeq, kVocab}),
                                ops::view(ops::remainder(ops::arange(kBatch * kSeq, {.dtype = DType::kInt64}), kVocab),
                                          {kBatch, kSeq})};
  const TracedFunction model = [mlp](const std::vector<Tensor>& in) {
    if (mlp) return std::vector<Tensor>{ops::gelu(ops::linear(in[0], in[1], in[2]), "tanh")};
    const int64_t t = in[1].size(1), vocab = in[0].size(2);
    const Tensor pred = ops::reshape(ops::slice(in[0], 1, 0, t - 1), {-1, vocab});
    return std::vector<Tensor>{ops::cross_entropy(pred, ops::reshape(ops::slice(in[1], 1, 1, t), {-1}))};
  };
  const TracedFunction fn = backend == nullptr ? model : TracedFunction(CompiledFunction(model, {.backend = backend}));
  benchmark::DoNotOptimize(fn(inputs));  // untimed: capture, compile, generate kernels
  for (auto _ : state) benchmark::DoNotOptimize(fn(inputs));
}
BENCHMARK_CAPTURE(BM_GptPart, linear_gelu_eager, "linear_gelu", nullptr)
    ->Name("BM_GptPart/linear_gelu/eager")->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_GptPart, linear_gelu_fused, "linear_gelu", "fused")
    ->Name("BM_GptPart/linear_gelu/fused")->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_GptPart, lm_loss_eager, "lm_loss", nullptr)
    ->Name("BM_GptPart/lm_loss/eager")->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK_CAPTURE(BM_GptPart, lm_loss_fused, "lm_loss", "fused")
    ->Name("BM_GptPart/lm_loss/fused")->Arg(4)->Arg(32)->Unit(benchmark::kMicrosecond)->UseRealTime();

// channels_last: the input laid out NHWC (PyTorch's fast CPU layout for
// CNNs); every activation then stays channels-last (Note [Model op layouts]).
void BM_Model_resnet_block(benchmark::State& state, const char* backend, bool channels_last) {
  autograd::NoGradGuard no_grad;
  manual_seed(0);
  std::shared_ptr<nn::Module> model = fixtures::resnet_block_model(64);
  const TracedFunction forward = [model](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*model)(in[0])}; };
  const Tensor x = ops::randn({8, 64, 56, 56});
  const std::vector<Tensor> inputs = {channels_last ? ops::contiguous(x, MemoryFormat::kChannelsLast)
                                                    : x};
  const TracedFunction fn = backend == nullptr ? forward : TracedFunction(CompiledFunction(forward, {.backend = backend}));
  benchmark::DoNotOptimize(fn(inputs));  // untimed: capture, compile, generate kernels
  for (auto _ : state) benchmark::DoNotOptimize(fn(inputs));
}
BENCHMARK_CAPTURE(BM_Model_resnet_block, eager, nullptr, false)
    ->Name("BM_Model/resnet_block/eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Model_resnet_block, fused, "fused", false)
    ->Name("BM_Model/resnet_block/fused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Model_resnet_block, channels_last_eager, nullptr, true)
    ->Name("BM_Model/resnet_block_channels_last/eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Model_resnet_block, channels_last_fused, "fused", true)
    ->Name("BM_Model/resnet_block_channels_last/fused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

void BM_Model_llama_block(benchmark::State& state, const char* backend) {
  autograd::NoGradGuard no_grad;
  constexpr int64_t kBatch = 4, kSeq = 128, kWidth = 256;
  manual_seed(0);
  std::shared_ptr<nn::Module> model =
      fixtures::llama_model({.width = kWidth, .heads = 8, .kv_heads = 2, .mlp = 688, .max_seq = kSeq});
  const TracedFunction forward = [model](const std::vector<Tensor>& in) { return std::vector<Tensor>{(*model)(in[0])}; };
  const std::vector<Tensor> inputs = {ops::randn({kBatch, kSeq, kWidth})};
  const TracedFunction fn = backend == nullptr ? forward : TracedFunction(CompiledFunction(forward, {.backend = backend}));
  benchmark::DoNotOptimize(fn(inputs));  // untimed: capture, compile, generate kernels
  for (auto _ : state) benchmark::DoNotOptimize(fn(inputs));
}
BENCHMARK_CAPTURE(BM_Model_llama_block, eager, nullptr)
    ->Name("BM_Model/llama_block/eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Model_llama_block, fused, "fused")
    ->Name("BM_Model/llama_block/fused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace opspec
