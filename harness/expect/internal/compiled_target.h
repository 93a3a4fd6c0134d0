// compiled_target.h: CompiledTarget, what observe_compile and the equivalence
// check compile and call: a function (compile(fn)) or a module (compile(module)).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/compile/compile.h"
#include "runtime/compile/optimized_module.h"

namespace opspec::internal {

// CompiledTarget: fn compiled with options, or, when module is set, the
// module compiled as torch.compile(model) does (an OptimizedModule called on
// the single input; fn is then not used).
class CompiledTarget {
 public:
  CompiledTarget(const TracedFunction& fn, std::shared_ptr<nn::Module> module, CompileOptions options) {
    if (module) {
      module_ = compile(std::move(module), std::move(options));
    } else {
      fn_.emplace(fn, std::move(options));
    }
  }
  // operator(): one call.
  std::vector<Tensor> operator()(const std::vector<Tensor>& inputs) const {
    if (!module_) return (*fn_)(inputs);
    OPSPEC_CHECK(inputs.size() == 1, "compile(module): ", module_->orig_mod()->type_name(),
                 " takes one input, got ", inputs.size());
    return {(*module_)(inputs[0])};
  }
  // compiled: the compiled function (stats, counters).
  const CompiledFunction& compiled() const { return module_ ? module_->compiled() : *fn_; }
  // module: the OptimizedModule, or null for a function.
  const std::shared_ptr<OptimizedModule>& module() const { return module_; }

 private:
  std::optional<CompiledFunction> fn_;
  std::shared_ptr<OptimizedModule> module_;
};

}  // namespace opspec::internal
