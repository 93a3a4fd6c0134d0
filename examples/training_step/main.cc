// training_step: the README's autograd example. One SGD step of a linear
// layer with relu and a mean loss, under DebugMode: the log shows the
// forward ops, the backward ops the engine runs (PyTorch's formulas and
// order), and the update. With --check it compares the ops against PyTorch's
// sequence (torch under a TorchDispatchMode, aten::detach left out: its
// placement differs between versions) and exits 1 on any difference
// (ci/run-specs runs it that way).
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include "harness/debug_mode.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

int main(int argc, char** argv) {
  using namespace opspec;
  const bool check = argc > 1 && std::strcmp(argv[1], "--check") == 0;
  const Tensor x = ops::randn({8, 4});
  const Tensor w = ops::randn({3, 4}).requires_grad_();
  const Tensor b = ops::zeros({3}).requires_grad_();
  DebugMode dm({.record_ids = true});
  {
    auto scope = dm.enter();
    const Tensor loss = ops::mean(ops::relu(ops::linear(x, w, b)));
    loss.backward();
    autograd::NoGradGuard no_grad;  // the update is not part of the graph
    Tensor wv = w, bv = b;
    ops::add_(wv, w.grad(), -0.1);
    ops::add_(bv, b.grad(), -0.1);
  }
  std::cout << dm.debug_string() << "\n";
  if (!check) return 0;
  const std::vector<std::string> pytorch = {
      "aten::t", "aten::addmm", "aten::relu", "aten::mean",                        // forward
      "aten::ones_like", "aten::expand", "aten::div.Scalar",                       // MeanBackward0
      "aten::threshold_backward",                                                  // ReluBackward0
      "aten::t", "aten::mm", "aten::t", "aten::sum.dim_IntList", "aten::view",  // AddmmBackward0
      "aten::t",                                                                   // TBackward0
      "aten::add_.Tensor", "aten::add_.Tensor"};                                   // the update
  std::vector<std::string> seen;
  for (const DebugCall& call : dm.logs()) {
    if (call.kind == DebugCall::Kind::kOp && call.name != "aten::detach") seen.push_back(call.name);
  }
  if (seen != pytorch) {
    std::cerr << "training_step: the ops differ from PyTorch's\n";
    return 1;
  }
  std::cout << "training_step: the same " << seen.size() << " ops as PyTorch\n";
  return 0;
}
