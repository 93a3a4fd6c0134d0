// optim_benchmark.cc: one AdamW step over an MLP's parameters (Linear(512 ->
// 1024), Linear(1024 -> 512): 1.05M f32 parameters, 4.2 MB; with grads and
// two moments 16.8 MB touched per step): BM_Optim/adamw_step/eager runs
// optim::AdamW::step() eagerly (PyTorch's single-tensor path: each op a full
// pass, item() for the step count), /fused the same step compiled with the
// fused backend (PyTorch 2.x's compiled path, Note [Compiled optimizer
// steps]: its elementwise chains fused kernels), /compiled_eager with the
// eager backend (the compiled path's ops one by one). Figures: README.md.
#include <benchmark/benchmark.h>

#include <memory>
#include <vector>

#include "runtime/compile/compile.h"
#include "runtime/ops/ops.h"
#include "runtime/optim/adam.h"

namespace opspec {
namespace {

// mlp_params: the two layers' weights and biases, requiring grad, with gradients.
std::vector<Tensor> mlp_params() {
  std::vector<Tensor> params;
  for (auto sizes : {std::vector<int64_t>{1024, 512}, std::vector<int64_t>{1024}, std::vector<int64_t>{512, 1024},
                     std::vector<int64_t>{512}}) {
    Tensor p = ops::mul(ops::randn(sizes), 0.02);
    p.requires_grad_();
    p.set_grad(ops::mul(ops::randn(sizes), 1e-3));
    params.push_back(p);
  }
  return params;
}

int64_t total_elements(const std::vector<Tensor>& params) {
  int64_t n = 0;
  for (const Tensor& p : params) n += p.numel();
  return n;
}

// backend: empty for eager, else the compile backend the step is compiled with.
void BM_Optim_adamw_step(benchmark::State& state, const char* backend) {
  std::vector<Tensor> params = mlp_params();
  auto opt = std::make_shared<optim::AdamW>(params);
  const bool compiled = *backend != '\0';
  CompiledFunction step = compile([opt](const std::vector<Tensor>&) { opt->step(); },
                                  {.backend = compiled ? backend : "eager"});
  auto run = [&] {
    if (compiled) {
      step(std::vector<Tensor>{});
    } else {
      opt->step();
    }
  };
  for (int k = 0; k < 3; ++k) run();  // the state, the steady step's graph, its generated kernels
  for (auto _ : state) run();
  // Bytes: parameter, grad and both moments read, parameter and moments written.
  state.SetBytesProcessed(state.iterations() * total_elements(params) * 4 * 7);
}
BENCHMARK_CAPTURE(BM_Optim_adamw_step, eager, "")
    ->Name("BM_Optim/adamw_step/eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Optim_adamw_step, compiled_eager, "eager")
    ->Name("BM_Optim/adamw_step/compiled_eager")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_Optim_adamw_step, fused, "fused")
    ->Name("BM_Optim/adamw_step/fused")
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace opspec
