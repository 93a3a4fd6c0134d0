// autograd_benchmark.cc: what recording autograd history costs per op, and
// one training step of an MLP, eager and compiled (issue 23's BM_Autograd/... names).
#include <benchmark/benchmark.h>

#include "runtime/autograd/engine.h"
#include "runtime/compile/compile.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// add_1elem: one 1-element add, inputs plain or requiring grad (the Autograd
// kernel records a Node and sets the result's history).
void BM_Autograd_add(benchmark::State& state, bool requires_grad) {
  const Tensor a = ops::ones({1}), b = ops::ones({1});
  if (requires_grad) a.requires_grad_();
  for (auto _ : state) benchmark::DoNotOptimize(ops::add(a, b));
}
BENCHMARK_CAPTURE(BM_Autograd_add, plain, false)->Name("BM_Autograd/add_1elem/plain");
BENCHMARK_CAPTURE(BM_Autograd_add, requires_grad, true)->Name("BM_Autograd/add_1elem/requires_grad");

// mlp_loss: a 3-layer MLP's loss (inputs: x, then weight and bias per layer).
std::vector<Tensor> mlp_loss(const std::vector<Tensor>& in) {
  Tensor h = in[0];
  for (int i = 0; i < 3; ++i) {
    h = ops::addmm(in[2 + 2 * i], h, ops::t(in[1 + 2 * i]));
    if (i < 2) h = ops::relu(h);
  }
  return {ops::mean(ops::mul(h, h))};
}

// mlp_train_step: a 3-layer MLP (batch 64, width 512): forward, loss,
// backward, and an SGD update of every parameter under no_grad; the loss
// eager, or compiled with the fused backend (forward and backward graphs).
void BM_Autograd_mlp_train_step(benchmark::State& state, const char* backend) {
  constexpr int64_t kBatch = 64, kWidth = 512;
  const Tensor x = ops::randn({kBatch, kWidth});
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    params.push_back(ops::mul(ops::randn({kWidth, kWidth}), 0.04));
    params.push_back(ops::zeros({kWidth}));
  }
  for (const Tensor& p : params) p.requires_grad_();
  std::vector<Tensor> inputs = {x};
  inputs.insert(inputs.end(), params.begin(), params.end());
  const TracedFunction loss_fn =
      backend == nullptr ? TracedFunction(&mlp_loss) : TracedFunction(CompiledFunction(&mlp_loss, {.backend = backend}));
  for (auto _ : state) {
    const Tensor loss = loss_fn(inputs)[0];
    loss.backward();
    autograd::NoGradGuard no_grad;
    for (Tensor& p : params) {
      ops::add_(p, p.grad(), -1e-3);
      p.set_grad(Tensor());
    }
  }
}
BENCHMARK_CAPTURE(BM_Autograd_mlp_train_step, eager, nullptr)
    ->Name("BM_Autograd/mlp_train_step/eager")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Autograd_mlp_train_step, compiled_fused, "fused")
    ->Name("BM_Autograd/mlp_train_step/compiled_fused")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace opspec
