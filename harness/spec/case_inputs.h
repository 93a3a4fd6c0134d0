// case_inputs.h: turning a case's inputs and program (or fixture) into
// tensors and a function the runner and the compiler can call.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/spec/spec.h"
#include "runtime/nn/module.h"
#include "runtime/trace/make_fx.h"

namespace opspec::spec {

// CaseFunction: a case ready to run: its input names, its function (tensors
// in, tensors out), and a maker of fresh, identical inputs.
struct CaseFunction {
  std::vector<std::string> input_names;
  TracedFunction fn;
  // module: a module fixture's module (fn calls it); null otherwise.
  std::shared_ptr<nn::Module> module;
  // make_inputs: seeds the generator with the case's seed and creates the
  // inputs in order, each replaced by the override of the same name if any;
  // every call gives the same values for the same specs.
  std::function<std::vector<Tensor>(const std::vector<InputSpec>& overrides)> make;
  std::vector<Tensor> make_inputs(const std::vector<InputSpec>& overrides = {}) const { return make(overrides); }
};

// make_case_function: seeds, creates the inputs once, then instantiates the
// program or fixture (so parameters come after the inputs in the random
// stream, the same every run). Inputs go to `device`.
CaseFunction make_case_function(const CaseSpec& c, const std::string& device);

// make_input: one input tensor from its spec (cpu, then moved to device).
Tensor make_input(const InputSpec& in, DType default_dtype, const std::string& device);

// mark_inputs: applies compile.dynamic / compile.static marks (NAME.DIM) to inputs.
void mark_inputs(const CompileSpec& compile, const std::vector<std::string>& names, const std::vector<Tensor>& inputs);

// expected_tensor: the values of `expect.outputs` shaped like `like`, in f64
// on like's device (on meta, an f64 meta tensor: meta outputs have no values).
Tensor expected_tensor(const std::vector<double>& values, const Tensor& like);

}  // namespace opspec::spec
