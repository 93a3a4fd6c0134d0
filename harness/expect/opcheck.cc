// opcheck.cc: the sub-checks of opcheck, each comparing one way of running
// an op with its real run. See Note [opcheck].
#include "harness/expect/opcheck.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "harness/expect/equivalence.h"
#include "harness/tensor_hash.h"
#include "runtime/autograd/formulas.h"
#include "runtime/compile/compile.h"
#include "runtime/core/device_hooks.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/mode.h"
#include "runtime/fake/fake_tensor.h"

namespace opspec {
namespace {

// The sub-check names, as torch.library.opcheck spells them (plus test_meta).
constexpr std::string_view kSchema = "test_schema";
constexpr std::string_view kAutograd = "test_autograd_registration";
constexpr std::string_view kFake = "test_faketensor";
constexpr std::string_view kMeta_ = "test_meta";
constexpr std::string_view kAotStatic = "test_aot_dispatch_static";
constexpr std::string_view kAotDynamic = "test_aot_dispatch_dynamic";

// Sample: one bound sample and its real run.
struct Sample {
  size_t index = 0;
  Stack args;                       // the bound arguments, the caller's tensors
  Stack ran_args;                   // copies of args after the real run (it may mutate them)
  Stack outputs;                    // what the real run returned
  std::vector<uint64_t> hashes;     // bitwise hash of each tensor of ran_args before the run
  std::vector<SizeVec> sizes, strides;  // and its geometry
  std::string label;                // "sample 0: myops::foo(f32[3, 2])"
};

// for_each_tensor: fn(tensor, argument index, element index or -1) for every
// defined tensor of stack, tensor lists included.
void for_each_tensor(const Stack& stack, const std::function<void(const Tensor&, size_t, int)>& fn) {
  for (size_t i = 0; i < stack.size(); ++i) {
    if (stack[i].is_tensor()) {
      if (stack[i].to_tensor().defined()) fn(stack[i].to_tensor(), i, -1);
    } else if (stack[i].is_tensor_list()) {
      const std::vector<Tensor>& l = stack[i].to_tensor_list();
      for (size_t k = 0; k < l.size(); ++k) {
        if (l[k].defined()) fn(l[k], i, static_cast<int>(k));
      }
    }
  }
}

// map_tensors: stack with every defined tensor (in lists too) replaced by fn(t).
Stack map_tensors(const Stack& stack, const std::function<Tensor(const Tensor&)>& fn) {
  Stack out = stack;
  for (Value& v : out) {
    if (v.is_tensor()) {
      if (v.to_tensor().defined()) v = Value(fn(v.to_tensor()));
    } else if (v.is_tensor_list()) {
      for (Tensor& t : v.to_tensor_list()) {
        if (t.defined()) t = fn(t);
      }
    }
  }
  return out;
}

// flat_tensors: the defined tensors of stack in order (lists flattened).
std::vector<Tensor> flat_tensors(const Stack& stack) {
  std::vector<Tensor> out;
  for_each_tensor(stack, [&](const Tensor& t, size_t, int) { out.push_back(t); });
  return out;
}

// clone_real: a copy of a real tensor's whole storage, with its geometry,
// made without dispatching (no mode sees it), so the real run may mutate it
// and views of one storage can be rebuilt over one copy.
Tensor clone_real(const Tensor& t) {
  const StorageImpl& s = *t.impl()->storage();
  if (s.device().is_meta()) return t;  // meta and fake tensors hold no data
  Tensor c = internal::make_like_geometry(*t.impl(), s.nbytes(), s.device());
  if (s.nbytes() > 0) {
    void* dst = c.impl()->storage()->data();
    if (s.device().is_cpu()) {
      std::memcpy(dst, s.data(), s.nbytes());
    } else {
      get_device_hooks(s.device().type).copy_bytes(dst, s.device(), s.data(), s.device(), s.nbytes());
    }
  }
  if (t.is_wrapped_number()) c.impl()->set_wrapped_number(true);
  return c;
}

// copy_preserving_aliases: map_tensors(stack, make), except that tensors
// sharing a storage get copies sharing one: make copies the first tensor of
// each storage (all of the storage), later ones are views of that copy with
// their own geometry, so arguments that alias each other still do.
Stack copy_preserving_aliases(const Stack& stack, const std::function<Tensor(const Tensor&)>& make) {
  absl::flat_hash_map<const StorageImpl*, Tensor> first;  // storage -> copy of its first tensor
  return map_tensors(stack, [&](const Tensor& t) {
    const StorageImpl* s = t.impl()->storage().get();
    auto it = first.find(s);
    if (it == first.end()) return first.emplace(s, make(t)).first->second;
    return internal::make_view(it->second, t.sizes(), t.strides(), t.storage_offset());
  });
}

// meta_like: a meta tensor (no data, Meta key) with t's geometry and dtype
// over meta storage as large as t's, so views keep their offsets.
Tensor meta_like(const Tensor& t) {
  if (t.device().is_meta()) return t;
  if (t.is_wrapped_number()) return t;  // a 0-dim cpu scalar mixes with any device
  auto storage = Storage::make(t.impl()->storage()->nbytes(), kMeta);
  return Tensor(IntrusivePtr<TensorImpl>::make(std::move(storage), t.sizes(), t.strides(), t.storage_offset(),
                                               t.dtype(), kMeta));
}

// backend_name: "CPU" or "CUDA": which kernel gave the real run.
std::string backend_name(const Stack& args) {
  Device device = kCPU;
  for_each_tensor(args, [&](const Tensor& t, size_t, int) {
    if (!t.is_wrapped_number()) device = t.device();
  });
  std::string name = Device(device.type).str();
  std::transform(name.begin(), name.end(), name.begin(), [](char c) { return static_cast<char>(std::toupper(c)); });
  return name;
}

// run_boxed: calls op on a copy of args; returns the results, or the error.
Stack run_boxed(const OperatorHandle& op, Stack stack, std::string* error) {
  try {
    Dispatcher::singleton().call_boxed(op, stack);
    return stack;
  } catch (const std::exception& e) {
    *error = e.what();
  } catch (...) {
    *error = "an exception that is not a std::exception";
  }
  return {};
}

// arg_name: "argument 'self'" or "argument 'tensors'[1]".
std::string arg_name(const OperatorHandle& op, size_t i, int elem) {
  const std::string& name = op.schema().arguments()[i].name;
  return elem < 0 ? str_cat("argument '", name, "'") : str_cat("argument '", name, "'[", elem, "]");
}

// significant_strides_equal: strides agree on every dim that has more than
// one element (a dim of size 1, or any dim of an empty tensor, is never stepped).
bool significant_strides_equal(const Tensor& a, const Tensor& b) {
  if (a.numel() == 0) return true;
  for (int64_t d = 0; d < a.dim(); ++d) {
    if (a.size(d) > 1 && a.stride(d) != b.stride(d)) return false;
  }
  return true;
}

// compare_geometry: "" when t (the Meta or fake run's) has ref's sizes,
// strides, storage offset, dtype (and device, when check_device); else what
// differs, worded as "<who> gives <what> <t's> where the <backend> kernel gives <ref's>".
std::string compare_geometry(const Tensor& t, const Tensor& ref, std::string_view who, std::string_view what,
                             std::string_view backend, bool check_device) {
  auto differs = [&](std::string_view attr, const std::string& got, const std::string& want) {
    return str_cat(who, " gives ", what, " ", attr, " ", got, " where the ", backend, " kernel gives ", want);
  };
  if (!t.defined() || !ref.defined()) {
    if (t.defined() == ref.defined()) return "";
    return str_cat(who, " gives ", what, t.defined() ? " as a tensor" : " as None", " where the ", backend,
                   " kernel gives ", ref.defined() ? "a tensor" : "None");
  }
  if (t.sizes() != ref.sizes()) return differs("sizes", format_sizes(t.sizes()), format_sizes(ref.sizes()));
  if (t.dtype() != ref.dtype()) {
    return differs("dtype", std::string(dtype_short_name(t.dtype())), std::string(dtype_short_name(ref.dtype())));
  }
  if (check_device && t.device() != ref.device()) return differs("device", t.device().str(), ref.device().str());
  if (!significant_strides_equal(t, ref)) {
    return differs("strides", format_sizes(t.strides()), format_sizes(ref.strides()));
  }
  if (t.numel() > 0 && t.storage_offset() != ref.storage_offset()) {
    return differs("storage offset", str_cat(t.storage_offset()), str_cat(ref.storage_offset()));
  }
  return "";
}

// compare_outputs: compare_geometry over every tensor output (lists
// flattened) and over every argument the schema marks written (an in-place
// op's metadata changes, as squeeze_'s, show there). Empty when all agree.
std::string compare_outputs(const OperatorHandle& op, const Sample& s, const Stack& args, const Stack& outputs,
                            std::string_view who, bool check_device) {
  const std::string backend = backend_name(s.args);
  if (outputs.size() != s.outputs.size()) {
    return str_cat(who, " returns ", outputs.size(), " values where the ", backend, " kernel returns ",
                   s.outputs.size());
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const Value& got = outputs[i];
    const Value& want = s.outputs[i];
    if (want.is_tensor()) {
      if (!got.is_tensor()) {
        return str_cat(who, " gives output ", i, " as ", got.type_name(), " where the ", backend,
                       " kernel gives a Tensor");
      }
      std::string d =
          compare_geometry(got.to_tensor(), want.to_tensor(), who, str_cat("output ", i), backend, check_device);
      if (!d.empty()) return d;
    } else if (want.is_tensor_list()) {
      if (!got.is_tensor_list() || got.to_tensor_list().size() != want.to_tensor_list().size()) {
        return str_cat(who, " gives output ", i, " as ", got.repr(), " where the ", backend, " kernel gives ",
                       want.to_tensor_list().size(), " tensors");
      }
      for (size_t k = 0; k < want.to_tensor_list().size(); ++k) {
        std::string d = compare_geometry(got.to_tensor_list()[k], want.to_tensor_list()[k], who,
                                         str_cat("output ", i, "[", k, "]"), backend, check_device);
        if (!d.empty()) return d;
      }
    }
  }
  const std::vector<Argument>& schema_args = op.schema().arguments();
  for (size_t i = 0; i < schema_args.size() && i < args.size(); ++i) {
    if (!schema_args[i].is_write || !args[i].is_tensor() || !s.ran_args[i].is_tensor()) continue;
    std::string d = compare_geometry(args[i].to_tensor(), s.ran_args[i].to_tensor(), who,
                                     str_cat("mutated ", arg_name(op, i, -1)), backend, check_device);
    if (!d.empty()) return d;
  }
  return "";
}

// aliased_argument: the first argument tensor of args sharing t's storage,
// as "argument 'self'", or "" when none does.
std::string aliased_argument(const OperatorHandle& op, const Tensor& t, const Stack& args) {
  std::string found;
  if (!t.defined()) return found;
  for_each_tensor(args, [&](const Tensor& a, size_t i, int elem) {
    if (found.empty() && !a.is_wrapped_number() && t.is_alias_of(a)) found = arg_name(op, i, elem);
  });
  return found;
}

// ---- the sub-checks: each returns one line per problem ("" when none) ----

std::string check_schema(const OperatorHandle& op, const Sample& s) {
  const FunctionSchema& schema = op.schema();
  const std::vector<Argument>& rets = schema.returns();
  if (s.outputs.size() != rets.size()) {
    return str_cat(op.name(), " returned ", s.outputs.size(), " values where its schema declares ", rets.size());
  }
  for (size_t i = 0; i < rets.size(); ++i) {
    const Argument& r = rets[i];
    const Value& v = s.outputs[i];
    if (!FunctionSchema::value_matches(r.type, v)) {
      return str_cat(op.name(), " returned ", v.type_name(), " for return ", i, " where its schema says ",
                     r.type.str());
    }
    if (!v.is_tensor() || !v.to_tensor().defined()) continue;
    const Tensor& out = v.to_tensor();
    if (r.is_write) {
      // "-> Tensor(a!)": the very argument written, as torch's in-place and out= ops return it.
      for (size_t a = 0; a < schema.arguments().size(); ++a) {
        const Argument& arg = schema.arguments()[a];
        if (arg.alias_set != r.alias_set || !s.ran_args[a].is_tensor()) continue;
        if (!out.is_same(s.ran_args[a].to_tensor())) {
          return str_cat(op.name(), " returns a new tensor for return ", i, " where its schema (", r.type.str(), "(",
                         r.alias_set, "!)) says it returns ", arg_name(op, a, -1), " itself");
        }
      }
    } else if (r.alias_set.empty()) {
      // No annotation: a fresh tensor. An alias would make functionalization
      // and the compiler's reuse of buffers wrong.
      if (std::string a = aliased_argument(op, out, s.ran_args); !a.empty()) {
        return str_cat(op.name(), " returns a tensor for return ", i, " that shares storage with ", a,
                       ", but its schema declares a fresh tensor (annotate it Tensor(a) or return a copy)");
      }
    }
  }
  // Arguments not marked written must come back as they went in, unless
  // they share storage with one that is (add_(x, x) changes both).
  std::vector<const StorageImpl*> written;
  for_each_tensor(s.ran_args, [&](const Tensor& t, size_t i, int) {
    if (schema.arguments()[i].is_write) written.push_back(t.impl()->storage().get());
  });
  std::string problem;
  size_t k = 0;
  for_each_tensor(s.ran_args, [&](const Tensor& t, size_t i, int elem) {
    const size_t n = k++;
    if (!problem.empty() || schema.arguments()[i].is_write) return;
    if (std::find(written.begin(), written.end(), t.impl()->storage().get()) != written.end()) return;
    if (t.sizes() != IntArrayRef(s.sizes[n]) || t.strides() != IntArrayRef(s.strides[n])) {
      problem = str_cat(op.name(), " changed the sizes or strides of ", arg_name(op, i, elem), " (now ",
                        format_sizes(t.sizes()), "), but its schema does not mark it mutable (Tensor(a!))");
    } else if (!t.impl()->storage()->device().is_meta()) {  // meta and fake samples have no values to compare
      if (bitwise_hash(t) != s.hashes[n]) {
        problem = str_cat(op.name(), " mutated ", arg_name(op, i, elem),
                          " (its values changed), but its schema does not mark it mutable (Tensor(a!))");
      }
    }
  });
  return problem;
}

std::string check_meta(const OperatorHandle& op, const Sample& s) {
  Stack args = copy_preserving_aliases(s.args, meta_like);
  // The whole call moves to meta: every device argument names meta (a
  // factory's None too, so factories run their Meta kernel; to.device's cpu
  // would ask to copy meta data).
  const std::vector<Argument>& schema_args = op.schema().arguments();
  for (size_t i = 0; i < schema_args.size() && i < args.size(); ++i) {
    if (schema_args[i].type.kind == TypeKind::kDevice && !schema_args[i].type.is_list) args[i] = Value(kMeta);
  }
  std::string error;
  const Stack outputs = run_boxed(op, args, &error);
  if (!error.empty()) return str_cat("the Meta kernel raised: ", error);
  return compare_outputs(op, s, args, outputs, "the Meta kernel", /*check_device=*/false);
}

std::string check_fake(const OperatorHandle& op, const Sample& s) {
  FakeTensorMode fake;
  const Stack args = map_tensors(s.args, [&](const Tensor& t) { return fake.from_real(t); });
  std::string error;
  Stack outputs;
  {
    ModeGuard guard(fake);
    outputs = run_boxed(op, args, &error);
  }
  if (!error.empty()) return str_cat("under FakeTensorMode the op raised: ", error);
  std::string d = compare_outputs(op, s, args, outputs, "FakeTensorMode (the Meta kernel)", /*check_device=*/true);
  if (!d.empty()) return d;
  // Aliasing: an output that is a view of an argument in the real run is a
  // view of the same argument on fake tensors, and only then.
  for (size_t i = 0; i < outputs.size() && i < s.outputs.size(); ++i) {
    if (!outputs[i].is_tensor() || !s.outputs[i].is_tensor()) continue;
    const std::string real = aliased_argument(op, s.outputs[i].to_tensor(), s.ran_args);
    const std::string faked = aliased_argument(op, outputs[i].to_tensor(), args);
    if (real != faked) {
      return str_cat("FakeTensorMode (the Meta kernel) gives output ", i, " ",
                     faked.empty() ? "as a fresh tensor" : str_cat("as an alias of ", faked), " where the ",
                     backend_name(s.args), " kernel gives it ",
                     real.empty() ? "as a fresh tensor" : str_cat("as an alias of ", real));
    }
  }
  return "";
}

std::string check_aot(const OperatorHandle& op, const Sample& s, bool dynamic, const CloseOptions& close) {
  // The op's tensor arguments are the compiled function's inputs; every
  // other argument is a constant of the function, as in a traced call.
  const Stack& args = s.args;
  auto fn = [&op, &args](const std::vector<Tensor>& inputs) {
    size_t next = 0;
    Stack stack = map_tensors(args, [&](const Tensor&) { return inputs[next++]; });
    Dispatcher::singleton().call_boxed(op, stack);
    return flat_tensors(stack);
  };
  EquivalenceOptions options;
  options.compile.backend = "aot_eager";
  options.compile.fullgraph = true;  // an op the compiler cannot capture whole fails here, not silently runs eager
  options.compile.dynamic = dynamic;
  options.compile.name = op.name();
  options.close = close;
  try {
    EquivalenceResult r = check_eager_compiled_equivalent(fn, flat_tensors(args), options);
    if (r.result.ok) return "";
    std::string m = r.result.message;
    while (!m.empty() && m.back() == '\n') m.pop_back();
    return m;
  } catch (const std::exception& e) {
    return str_cat("compiling a call of ", op.name(), " (backend 'aot_eager', fullgraph", dynamic ? ", dynamic" : "",
                   ") raised: ", e.what());
  }
}

// indent: every line after the first indented by two spaces.
std::string indent(std::string_view text) {
  std::string out;
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += "  ";
  }
  return out;
}

}  // namespace

std::string_view opcheck_status_name(OpcheckStatus s) {
  switch (s) {
    case OpcheckStatus::kPassed: return "passed";
    case OpcheckStatus::kFailed: return "failed";
    case OpcheckStatus::kSkipped: return "skipped";
  }
  return "?";
}

const OpcheckTest* OpcheckResult::find(std::string_view name) const {
  for (const OpcheckTest& t : tests) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

std::string OpcheckResult::summary() const {
  std::string out;
  for (const OpcheckTest& t : tests) {
    str_append(&out, t.name, ": ", opcheck_status_name(t.status),
               t.status == OpcheckStatus::kSkipped ? str_cat(": ", t.message) : "", "\n");
  }
  return out;
}

const std::vector<std::string>& opcheck_all_test_utils() {
  static const std::vector<std::string> all = {std::string(kSchema), std::string(kAutograd), std::string(kFake),
                                               std::string(kMeta_), std::string(kAotStatic),
                                               std::string(kAotDynamic)};
  return all;
}

const std::vector<std::string>& opcheck_default_test_utils() {
  static const std::vector<std::string> defaults = {std::string(kSchema), std::string(kAutograd),
                                                    std::string(kFake), std::string(kMeta_),
                                                    std::string(kAotDynamic)};
  return defaults;
}

CheckResult check_autograd_registered(const OperatorHandle& op) {
  if (op.is_composite() || autograd::find_formula(op.name()) != nullptr) return CheckResult::pass();
  // Ops that make tensors outside the graph, or return no tensor, need no formula.
  if (op.kind() == OpKind::kFactory || op.name() == "aten::detach") return CheckResult::pass();
  bool returns_tensor = false;
  for (const Argument& r : op.schema().returns()) returns_tensor |= r.type.kind == TypeKind::kTensor;
  if (!returns_tensor) return CheckResult::pass();
  return CheckResult::fail(str_cat(
      op.name(), " has kernels but no derivative formula and is not composite, so backward through it fails with "
      "\"the derivative for '", op.name(), "' is not implemented.\": register one with "
      "opspec::autograd::register_formula, or make the op composite (CompositeImplicit)"));
}

OpcheckResult opcheck(std::string_view op_name, const std::vector<OpSample>& samples, const OpcheckOptions& options) {
  return opcheck(Dispatcher::singleton().get(op_name), samples, options);
}

OpcheckResult opcheck(const OperatorHandle& op, const std::vector<OpSample>& samples, const OpcheckOptions& options) {
  const std::vector<std::string>& names =
      options.test_utils.empty() ? opcheck_default_test_utils() : options.test_utils;
  for (const std::string& n : names) {
    const auto& all = opcheck_all_test_utils();
    if (std::find(all.begin(), all.end(), n) == all.end()) {
      std::string known;
      for (const std::string& a : all) str_append(&known, known.empty() ? "" : ", ", a);
      throw Error(str_cat("opcheck: unknown test_util '", n, "'; known: ", known));
    }
  }
  OpcheckResult result;
  std::string sample_errors;  // samples that could not run at all, one line each
  size_t failed_samples = 0;

  // The reference: each sample bound to the schema and run for real on copies.
  std::vector<Sample> runs;
  for (size_t i = 0; i < samples.size(); ++i) {
    Sample s;
    s.index = i;
    try {
      s.args = op.schema().bind(samples[i].args, samples[i].kwargs);
    } catch (const std::exception& e) {
      str_append(&sample_errors, "sample ", i, " does not fit the schema: ", e.what(), "\n");
      ++failed_samples;
      continue;
    }
    s.label = str_cat("sample ", i, ": ", op.name(), "(", op.schema().format_arguments(s.args), ")");
    s.ran_args = copy_preserving_aliases(s.args, clone_real);
    for_each_tensor(s.ran_args, [&](const Tensor& t, size_t, int) {
      s.hashes.push_back(t.impl()->storage()->device().is_meta() ? 0 : bitwise_hash(t));
      s.sizes.emplace_back(t.sizes().begin(), t.sizes().end());
      s.strides.emplace_back(t.strides().begin(), t.strides().end());
    });
    std::string error;
    s.outputs = run_boxed(op, s.ran_args, &error);
    if (!error.empty()) {
      str_append(&sample_errors, s.label, ": the ", backend_name(s.args), " kernel raised: ", error, "\n");
      ++failed_samples;
      continue;
    }
    // run_boxed ran on a copy of the stack holding the same tensors: the
    // arguments it mutated are s.ran_args' tensors.
    runs.push_back(std::move(s));
  }

  std::vector<std::string> failed;
  for (const std::string& name : names) {
    OpcheckTest t{name, OpcheckStatus::kPassed, ""};
    if (name == kAutograd) {
      // Needed only when a sample's real run gives a floating-point tensor (PyTorch's check too).
      bool floating_out = false;
      for (const Sample& s : runs) {
        for (const Value& v : s.outputs) floating_out |= v.is_tensor() && v.to_tensor().defined() &&
                                                         is_floating(v.to_tensor().dtype());
      }
      const CheckResult r = check_autograd_registered(op);
      if (!r.ok && floating_out) {
        t.status = OpcheckStatus::kFailed;
        t.message = r.message;
        failed.push_back(name);
      } else if (!r.ok) {
        t.status = OpcheckStatus::kSkipped;
        t.message = "no sample gave a floating-point output";
      }
    } else if (runs.empty()) {
      t.status = OpcheckStatus::kSkipped;
      t.message = "no sample ran";
    } else {
      for (const Sample& s : runs) {
        std::string problem;
        if (name == kSchema) problem = check_schema(op, s);
        else if (name == kMeta_) problem = check_meta(op, s);
        else if (name == kFake) problem = check_fake(op, s);
        else if (name == kAotStatic) problem = check_aot(op, s, /*dynamic=*/false, options.close);
        else if (name == kAotDynamic) problem = check_aot(op, s, /*dynamic=*/true, options.close);
        if (!problem.empty()) str_append(&t.message, indent(problem), ", for ", s.label, "\n");
      }
      if (!t.message.empty()) {
        t.status = OpcheckStatus::kFailed;
        t.message.pop_back();
        failed.push_back(name);
      }
    }
    result.tests.push_back(std::move(t));
  }

  if (failed.empty() && sample_errors.empty()) return result;
  std::string msg = str_cat("opcheck(", op.name(), "): ");
  if (!failed.empty()) {
    str_append(&msg, failed.size(), " of ", names.size(), " checks failed:");
    for (const std::string& f : failed) str_append(&msg, " ", f);
    str_append(&msg, sample_errors.empty() ? "\n" : "; ");
  }
  if (!sample_errors.empty()) {
    str_append(&msg, failed_samples, " of ", samples.size(), " samples could not run\n", sample_errors);
  }
  for (const OpcheckTest& t : result.tests) {
    if (t.status == OpcheckStatus::kFailed) str_append(&msg, t.name, ": ", t.message, "\n");
  }
  msg.pop_back();
  result.result = CheckResult::fail(std::move(msg));
  return result;
}

}  // namespace opspec
