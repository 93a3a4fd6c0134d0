// autograd_benchmark.cc: what recording autograd history costs per op, and
// one training step of an MLP, eager (issue 23's BM_Autograd/... names).
#include <benchmark/benchmark.h>

#include "runtime/autograd/engine.h"
#include "runtime/autograd/grad_mode.h"
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

// mlp_train_step: a 3-layer MLP (batch 64, width 512): forward, loss,
// backward, and an SGD update of every parameter under no_grad.
void BM_Autograd_mlp_train_step(benchmark::State& state) {
  constexpr int64_t kBatch = 64, kWidth = 512;
  const Tensor x = ops::randn({kBatch, kWidth});
  std::vector<Tensor> params;
  for (int i = 0; i < 3; ++i) {
    params.push_back(ops::mul(ops::randn({kWidth, kWidth}), 0.04));
    params.push_back(ops::zeros({kWidth}));
  }
  for (const Tensor& p : params) p.requires_grad_();
  for (auto _ : state) {
    Tensor h = x;
    for (int i = 0; i < 3; ++i) {
      h = ops::addmm(params[2 * i + 1], h, ops::t(params[2 * i]));
      if (i < 2) h = ops::relu(h);
    }
    const Tensor loss = ops::mean(ops::mul(h, h));
    loss.backward();
    autograd::NoGradGuard no_grad;
    for (Tensor& p : params) {
      ops::add_(p, p.grad(), -1e-3);
      p.set_grad(Tensor());
    }
  }
}
BENCHMARK(BM_Autograd_mlp_train_step)->Name("BM_Autograd/mlp_train_step/eager")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace opspec
