#include "runtime/compile/optimized_module.h"

namespace opspec {
namespace {

CompileOptions with_module_name(CompileOptions options, const nn::Module* mod) {
  OPSPEC_CHECK(mod != nullptr, "compile: the module is null");
  if (options.name == "fn") options.name = mod->type_name();  // logs and errors name the module
  if (options.input_names.empty()) options.input_names = {"input"};  // PyTorch: L['input'] of forward
  return options;
}

}  // namespace

OptimizedModule::OptimizedModule(std::shared_ptr<nn::Module> mod, CompileOptions options)
    : nn::Module("OptimizedModule"),
      orig_(mod),
      compiled_(internal::as_traced_function([raw = mod.get()](const Tensor& input) { return (*raw)(input); }),
                with_module_name(std::move(options), mod.get())) {
  register_module("_orig_mod", orig_);
}

Tensor OptimizedModule::forward(const Tensor& input) {
  std::vector<Tensor> out = compiled_(input);
  OPSPEC_INTERNAL_ASSERT(out.size() == 1);
  return out[0];
}

}  // namespace opspec
