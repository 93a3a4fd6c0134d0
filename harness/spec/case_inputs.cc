// case_inputs.cc: inputs and the case function. See Note [Running a case].
#include "harness/spec/case_inputs.h"

#include "absl/strings/str_cat.h"
#include "harness/program/fixture.h"
#include "runtime/compile/guards.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec::spec {
namespace {

// check_returned: a case's results are tensors or numbers; run by the
// program at its return statement, so the error has the value's position.
void check_returned(const Value& v) {
  if (v.is_tensor() || v.is_tensor_list() || v.is_scalar()) return;
  throw Error(str_cat("the program returned a ", v.type_name(), "; return tensors or numbers"));
}

std::vector<Tensor> to_tensors(const std::vector<Value>& values) {
  std::vector<Tensor> out;
  for (const Value& v : values) {
    check_returned(v);
    if (v.is_tensor()) {
      out.push_back(v.to_tensor());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) out.push_back(t);
    } else {
      out.push_back(internal::make_wrapped_number(v.to_scalar()));
    }
  }
  return out;
}

}  // namespace

Tensor make_input(const InputSpec& in, DType default_dtype, const std::string& device) {
  const DType dtype = in.dtype.value_or(default_dtype);
  const TensorOptions o{.dtype = dtype};
  Tensor t;
  if (in.init == "randn") {
    t = ops::randn(in.shape, o);
  } else if (in.init == "rand") {
    t = ops::rand(in.shape, o);
  } else if (in.init == "zeros") {
    t = ops::zeros(in.shape, o);
  } else if (in.init == "ones") {
    t = ops::ones(in.shape, o);
  } else if (in.init == "full") {
    t = ops::full(in.shape, in.fill, o);
  } else if (in.init == "arange") {
    t = ops::reshape(ops::arange(static_cast<int64_t>(compute_numel(in.shape)), o), in.shape);
  } else if (in.init == "values") {
    OPSPEC_CHECK(static_cast<int64_t>(in.values.size()) == compute_numel(in.shape), "it has ", in.values.size(),
                 " values but shape ", format_sizes(in.shape), " needs ", compute_numel(in.shape));
    t = ops::tensor(in.values, in.shape, dtype);
  } else {
    throw Error(str_cat("unknown init '", in.init, "'"));
  }
  const std::string& dev = in.device.empty() ? device : in.device;
  if (dev != "cpu") t = ops::to(t, Device::parse(dev));
  // Laid out after its values are drawn, so the values (and the random
  // stream) are the same whatever the format; before requires_grad, so the
  // leaf is the laid-out tensor.
  if (in.memory_format) t = ops::contiguous(t, *in.memory_format);
  if (in.requires_grad) {
    OPSPEC_CHECK(is_floating(t.dtype()), "only Tensors of floating point dtype can require gradients (got ",
                 dtype_short_name(t.dtype()), ")");
    t.requires_grad_();
  }
  return t;
}

CaseFunction make_case_function(const CaseSpec& c, const std::string& device) {
  CaseFunction f;
  for (const InputSpec& in : c.inputs) f.input_names.push_back(in.name);
  // Inputs and parameters are made where no user mode can see them.
  f.make = [specs = c.inputs, dtype = c.dtype, seed = c.seed, device](const std::vector<InputSpec>& overrides) {
    HideUserModesGuard hide;
    manual_seed(seed);
    std::vector<Tensor> out;
    for (const InputSpec& in : specs) {
      const InputSpec* use = &in;
      for (const InputSpec& o : overrides)
        if (o.name == in.name) use = &o;
      try {
        out.push_back(make_input(*use, dtype, device));
      } catch (const Error& e) {
        // Say which input could not be made (and where): the runtime's message names only the op.
        throw Error(str_cat(use->where.line == 0 ? "" : str_cat(use->where.str(), ": "), "input '", use->name, "': ",
                            e.what()));
      }
    }
    return out;
  };
  f.make({});  // the inputs' random draws come before the parameters'
  HideUserModesGuard hide;
  if (c.program) {
    auto instance = std::make_shared<ProgramInstance>(c.program->instantiate());
    f.fn = [instance, names = f.input_names](const std::vector<Tensor>& inputs) {
      std::vector<std::pair<std::string, Value>> args;
      for (size_t i = 0; i < names.size() && i < inputs.size(); ++i) args.emplace_back(names[i], inputs[i]);
      return to_tensors(instance->run(args, check_returned));
    };
  } else {
    const Fixture* fixture = find_fixture(c.fixture);
    OPSPEC_CHECK(fixture != nullptr, "unknown fixture '", c.fixture, "'");
    if (fixture->make_module) {  // one module: the eager run calls it, compile(module) compiles it
      f.module = fixture->make_module();
      f.fn = module_program(f.module);
    } else {
      f.fn = fixture->make();
    }
  }
  return f;
}

void mark_inputs(const CompileSpec& compile, const std::vector<std::string>& names,
                 const std::vector<Tensor>& inputs) {
  auto find = [&](const std::string& name) -> const Tensor& {
    for (size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return inputs.at(i);
    throw Error(str_cat(compile.where.str(), ": compile: no input called '", name, "'"));
  };
  for (const auto& [name, dim] : compile.mark_dynamic) mark_dynamic(find(name), dim);
  for (const auto& [name, dim] : compile.mark_static) mark_static(find(name), dim);
}

Tensor expected_tensor(const std::vector<double>& values, const Tensor& like) {
  OPSPEC_CHECK(static_cast<int64_t>(values.size()) == like.numel(), "expect.outputs has ", values.size(),
               " values but the output ", format_sizes(like.sizes()), " has ", like.numel(), " elements");
  HideUserModesGuard hide;
  // Meta tensors have no values: assert_close compares their metadata only.
  if (like.device().is_meta()) return ops::empty(like.sizes(), {.dtype = DType::kFloat64, .device = like.device()});
  const Tensor host = ops::tensor(values, like.sizes(), DType::kFloat64);
  return like.device().is_cpu() ? host : ops::to(host, like.device());  // assert_close checks the device
}

}  // namespace opspec::spec
