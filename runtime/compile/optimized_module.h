// optimized_module.h: compile(module), PyTorch's torch.compile(nn.Module):
// an OptimizedModule whose forward runs the wrapped module compiled.
#pragma once

#include <memory>
#include <type_traits>

#include "runtime/compile/compile.h"
#include "runtime/nn/module.h"

namespace opspec {

// OptimizedModule: a compiled nn::Module (torch._dynamo.OptimizedModule).
// Calling it runs the wrapped module's call (hooks and fqns included) under
// compile(); the wrapped module is its child "_orig_mod", so its parameters
// are named "_orig_mod.weight", ... as PyTorch names them. train()/eval()
// reach the wrapped module; a mode change changes the ops, so it recompiles.
class OptimizedModule : public nn::Module {
 public:
  OptimizedModule(std::shared_ptr<nn::Module> mod, CompileOptions options);
  // forward: the wrapped module's call, compiled.
  Tensor forward(const Tensor& input) override;
  // orig_mod: the wrapped module (PyTorch's _orig_mod).
  const std::shared_ptr<nn::Module>& orig_mod() const { return orig_; }
  // compiled: the compiled function (its stats(), reset()).
  const CompiledFunction& compiled() const { return compiled_; }

 private:
  std::shared_ptr<nn::Module> orig_;
  CompiledFunction compiled_;
};

// compile: `auto m = compile(std::make_shared<Mlp>(), {.backend = "fused"}); (*m)(x);`
template <class M>
  requires std::is_base_of_v<nn::Module, M>
std::shared_ptr<OptimizedModule> compile(std::shared_ptr<M> mod, CompileOptions options = {}) {
  return std::make_shared<OptimizedModule>(std::move(mod), std::move(options));
}

}  // namespace opspec
