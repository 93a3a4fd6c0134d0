// Every aten op called with random arguments built from its schema, as
// PyTorch's OpInfo crossref tests call ops with sampled inputs: on the CPU
// and again on Meta tensors of the same sizes, strides and dtypes. See Note
// [Op crossref].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/op_crossref_samples_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace op_crossref_test {

// Note [Op crossref]
// Hostile input must end in an opspec::Error, never a crash, a foreign
// exception or undefined behaviour (ci/sanitize runs this under ASan and
// UBSan), and fake tensors must see what the CPU sees. For each op, each
// seed builds one call: tensors of small random shapes (often one shape for
// all, so binary ops get past their checks), dtypes, values and layouts
// (transposed and strided views), ints, floats and lists from small ranges
// with a few extreme values (huge sizes, NaN, inf), and defaults half the
// time. The call then runs on the CPU and on Meta copies of its tensors:
//   - either may throw opspec::Error; anything else thrown fails the test;
//   - when the CPU succeeds, Meta must succeed with outputs of the same
//     sizes, dtypes and strides (PyTorch's meta functions check what the CPU
//     checks and lay results out as it does, except values: ops tagged
//     kDynamicOutputShape have no Meta answer).
// OPSPEC_CROSSREF_SEEDS raises the calls per op for a longer hunt;
// OPSPEC_CROSSREF_TRACE=1 prints each call before it runs (to name a crash),
// the CPU's error when it refuses one, and the ops that rarely or never ran.

// random_tensor: a tensor of the call's shape and dtype most of the time.
Tensor random_tensor(Rng& rng, const CallShape& call) {
  const bool same = chance(rng, 70);
  const std::vector<int64_t> sizes = same ? call.sizes : random_sizes(rng);
  return make_tensor(rng, sizes, same || chance(rng, 50) ? call.dtype : kDTypes[pick(rng, 7)]);
}

int64_t random_int(Rng& rng) {
  if (chance(rng, 3)) return chance(rng, 50) ? std::numeric_limits<int64_t>::max() : int64_t{1} << 40;
  return pick(rng, 9) - 3;
}
double random_float(Rng& rng) {
  if (chance(rng, 3)) {
    const double special[] = {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
                              -std::numeric_limits<double>::infinity(), 1e300};
    return special[pick(rng, 4)];
  }
  return (pick(rng, 13) - 4) * 0.25;
}
// random_int_list: windows' geometry (kernel_size, stride, padding, ...)
// mostly in range, other lists often the call's shape (sizes, views).
std::vector<int64_t> random_int_list(Rng& rng, const CallShape& call, const Argument& arg) {
  const bool window = arg.name == "kernel_size" || arg.name == "stride" || arg.name == "dilation" ||
                      arg.name == "padding" || arg.name == "output_size" || arg.name == "output_padding";
  std::vector<int64_t> l(arg.type.list_size > 0 ? arg.type.list_size : window ? 2 : pick(rng, 4));
  if (window && chance(rng, 80)) {
    for (int64_t& v : l) v = pick(rng, 2) + (arg.name == "padding" || arg.name == "output_padding" ? 0 : 1);
    return l;
  }
  if (arg.type.list_size == 0 && chance(rng, 40)) return call.sizes;
  for (int64_t& v : l) v = random_int(rng);
  return l;
}

// random_index: an i64 index tensor (index, indices, target) mostly in range.
Tensor random_index(Rng& rng, const CallShape& call) {
  std::vector<int64_t> sizes = chance(rng, 50) ? call.sizes : std::vector<int64_t>{1 + pick(rng, 4)};
  int64_t n = 1;
  for (int64_t d : sizes) n *= d;
  std::vector<double> values(n);
  for (double& v : values) v = chance(rng, 5) ? pick(rng, 9) - 4 : pick(rng, 2);
  return ops::tensor(std::move(values), sizes, DType::kInt64);
}

const char* const kStrings[] = {"none", "tanh", "sum", "mean", "amax", "amin", "prod", "trunc", "floor", "bad"};

// random_value: one argument of the given type (a list, an optional, a base type).
Value random_value(Rng& rng, const CallShape& call, const Argument& arg) {
  const ArgType& type = arg.type;
  if (type.is_optional && chance(rng, 25)) return std::nullopt;
  if (type.is_list) {
    switch (type.kind) {
      case TypeKind::kInt: return random_int_list(rng, call, arg);
      case TypeKind::kFloat: {
        std::vector<double> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (double& v : l) v = random_float(rng);
        return l;
      }
      case TypeKind::kBool: {
        std::vector<bool> l(type.list_size > 0 ? type.list_size : pick(rng, 4));
        for (size_t i = 0; i < l.size(); ++i) l[i] = chance(rng, 50);
        return l;
      }
      default: {  // Tensor[], Tensor?[]
        std::vector<Tensor> l(1 + pick(rng, 3));
        for (Tensor& t : l) t = random_tensor(rng, call);
        return l;
      }
    }
  }
  switch (type.kind) {
    case TypeKind::kTensor:
      if ((arg.name == "index" || arg.name == "indices" || arg.name == "target") && chance(rng, 80)) {
        return random_index(rng, call);
      }
      return random_tensor(rng, call);
    case TypeKind::kScalar: {
      const int k = pick(rng, 3);
      return k == 0 ? Value(random_int(rng)) : k == 1 ? Value(random_float(rng)) : Value(chance(rng, 50));
    }
    case TypeKind::kInt: return random_int(rng);
    case TypeKind::kFloat: return random_float(rng);
    case TypeKind::kBool: return chance(rng, 50);
    case TypeKind::kString: return kStrings[pick(rng, 10)];
    case TypeKind::kScalarType: return kDTypes[pick(rng, 7)];
    case TypeKind::kDevice: return chance(rng, 90) ? Device(kCPU) : Device(DeviceType::kCUDA, 0);
    default: return std::nullopt;  // layout, memory format, generator: their defaults
  }
}

// to_meta: a Meta tensor with t's sizes, strides, offset, storage size and
// dtype (no data), so views of it reach what views of t reach.
Value to_meta(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return v;
    const auto storage = static_cast<int64_t>(t.impl()->storage()->nbytes()) / t.element_size();
    const Tensor base = ops::empty({storage}, {.dtype = t.dtype(), .device = kMeta});
    return ops::as_strided(base, t.sizes(), t.strides(), t.storage_offset());
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(to_meta(Value(t)).to_tensor());
    return l;
  }
  if (v.is_device() && v.to_device().is_cpu()) return kMeta;  // to(cpu) of a meta tensor stays meta
  return v;
}

// Outcome: how one call ended.
struct Outcome {
  enum Kind { kOk, kError, kForeign } kind = kOk;
  std::string message;
  Stack results;
};

Outcome run(const OperatorHandle& op, Stack stack) {
  Outcome o;
  try {
    op.call_boxed(stack);
    o.results = std::move(stack);
  } catch (const Error& e) {
    o.kind = Outcome::kError;
    o.message = e.what();
  } catch (const std::exception& e) {
    o.kind = Outcome::kForeign;
    o.message = std::string("std::exception: ") + e.what();
  } catch (...) {
    o.kind = Outcome::kForeign;
    o.message = "an exception of unknown type";
  }
  return o;
}

// kMetaRefusals: calls the CPU runs and Meta refuses in PyTorch too.
struct MetaRefusal {
  std::string_view op, message, why;
};
constexpr MetaRefusal kMetaRefusals[] = {
    {"aten::_local_scalar_dense", "cannot be called on meta tensors", "item() needs the data"},
    {"", "data-dependent output shape", "a bool mask's nonzero needs the data"},
    {"aten::scaled_dot_product_attention", "Explicit attn_mask should not be set when is_causal=True",
     "the kernel is chosen by device: the CPU's flash kernel takes a mask with is_causal, Meta's math path "
     "(_fused_sdp_choice_meta) refuses it"},
    {"aten::_scaled_dot_product_attention_math", "expected self and mat2 to have the same dtype",
     "Meta is subclass-like (c10's kTensorSubclassLike has the meta bit): the mask is added out of place and "
     "promotes, where the CPU's add_ keeps the scores' dtype"},
};

bool meta_cannot_answer(const OperatorHandle& op, const Outcome& meta) {
  for (const MetaRefusal& r : kMetaRefusals) {
    if ((r.op.empty() || r.op == op.schema().qualified_name()) && meta.message.find(r.message) != std::string::npos) {
      return true;
    }
  }
  return false;
}

std::string describe(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    if (!t.defined()) return "undefined";
    return std::string(dtype_short_name(t.dtype())) + format_sizes(t.sizes());
  }
  if (v.is_tensor_list()) {
    std::string s = "[";
    for (const Tensor& t : v.to_tensor_list()) s += describe(Value(t)) + ", ";
    return s + "]";
  }
  return v.repr();
}
std::string describe_call(const OperatorHandle& op, const Stack& args) {
  std::string s = op.schema().qualified_name() + "(";
  for (const Value& v : args) s += describe(v) + ", ";
  return s + ")";
}

// significant_strides: t's strides where they matter, as PyTorch's
// check_significant_strides compares them: dims of size 1 and empty tensors
// have any stride, so "*" stands there. The storage offset too (views).
std::string significant_strides(const Tensor& t) {
  if (!t.defined() || t.numel() == 0) return "";
  std::string s = "strides (";
  for (int64_t d = 0; d < t.dim(); ++d) s += (t.sizes()[d] > 1 ? std::to_string(t.strides()[d]) : "*") + ",";
  return s + ") offset " + std::to_string(t.storage_offset());
}
std::vector<Tensor> tensors_of(const Value& v) {
  if (v.is_tensor()) return {v.to_tensor()};
  if (v.is_tensor_list()) return v.to_tensor_list();
  return {};
}

// meta_mismatch: "" when every tensor result of meta has cpu's sizes, dtype
// and significant strides, else the first difference.
std::string meta_mismatch(const Stack& cpu, const Stack& meta) {
  if (cpu.size() != meta.size()) return "a different number of results";
  for (size_t i = 0; i < cpu.size(); ++i) {
    if (!cpu[i].is_tensor() && !cpu[i].is_tensor_list()) continue;
    if (describe(cpu[i]) != describe(meta[i])) {
      return "result " + std::to_string(i) + ": cpu " + describe(cpu[i]) + ", meta " + describe(meta[i]);
    }
    const std::vector<Tensor> c = tensors_of(cpu[i]), m = tensors_of(meta[i]);
    for (size_t j = 0; j < c.size(); ++j) {
      if (significant_strides(c[j]) != significant_strides(m[j])) {
        return "result " + std::to_string(i) + ": cpu " + describe(Value(c[j])) + " " + significant_strides(c[j]) +
               ", meta " + significant_strides(m[j]);
      }
    }
  }
  return "";
}

int seeds_per_op() {
  const char* env = std::getenv("OPSPEC_CROSSREF_SEEDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 64;
}

TEST(OpCrossrefTest, RandomCallsFailCleanlyAndMetaAgreesWithTheCpu) {
  const int seeds = seeds_per_op();
  const bool trace = std::getenv("OPSPEC_CROSSREF_TRACE") != nullptr;
  std::map<std::string, int> ok_calls;
  std::vector<std::string> problems;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->schema().ns() != "aten" || (!op->has_kernel(DispatchKey::kCPU) && !op->is_composite())) continue;
    const std::string name = op->schema().qualified_name();
    for (int seed = 0; seed < seeds; ++seed) {
      Rng rng(std::hash<std::string>{}(name) ^ (static_cast<uint64_t>(seed) * 0x9e3779b97f4a7c15ull));
      const CallShape call{random_sizes(rng), chance(rng, 60) ? DType::kFloat32 : kDTypes[pick(rng, 7)]};
      Stack args;
      if (const auto sample = samples().find(name); sample != samples().end() && seed % 2 == 1) {
        args = sample->second(rng);
      } else {
        for (const Argument& a : op->schema().arguments()) {
          args.push_back(a.default_value.has_value() && chance(rng, 50) ? *a.default_value
                                                                        : random_value(rng, call, a));
        }
      }
      Stack meta_args;
      for (const Value& v : args) meta_args.push_back(to_meta(v));
      const std::string what = describe_call(*op, args);
      if (trace) std::fprintf(stderr, "%s\n", what.c_str());
      const Outcome cpu = run(*op, args);
      if (trace && cpu.kind == Outcome::kError) std::fprintf(stderr, "  cpu: %s\n", cpu.message.c_str());
      if (cpu.kind == Outcome::kForeign) problems.push_back(what + " on cpu threw " + cpu.message);
      const Outcome meta = run(*op, meta_args);
      if (meta.kind == Outcome::kForeign) problems.push_back(what + " on meta threw " + meta.message);
      if (cpu.kind != Outcome::kOk) continue;
      ++ok_calls[name];
      if (op->has_tag(OpTag::kDynamicOutputShape)) continue;
      if (meta.kind != Outcome::kOk && meta_cannot_answer(*op, meta)) continue;
      if (meta.kind != Outcome::kOk) {
        problems.push_back(what + ": the cpu ran it, meta threw: " + meta.message);
      } else if (const std::string m = meta_mismatch(cpu.results, meta.results); !m.empty()) {
        problems.push_back(what + ": " + m);
      }
    }
  }
  for (const std::string& p : problems) ADD_FAILURE() << p;
  if (trace) {
    for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
      const std::string& n = op->schema().qualified_name();
      if (op->schema().ns() == "aten" && !ok_calls.contains(n)) std::fprintf(stderr, "never ran: %s\n", n.c_str());
      if (op->schema().ns() == "aten" && ok_calls.contains(n) && ok_calls[n] * 10 < seeds) {
        std::fprintf(stderr, "rarely ran: %s (%d of %d)\n", n.c_str(), ok_calls[n], seeds);
      }
    }
  }
  // The generator reaches most ops' kernels, not only their argument checks,
  // and a sample's calls mostly run (a sample that bit-rotted into errors would
  // hide its op again).
  EXPECT_GT(ok_calls.size(), 250u);
  for (const auto& [name, sample] : samples()) {
    if (Dispatcher::singleton().find(name) == nullptr) continue;
    EXPECT_GE(ok_calls[name], seeds / 4) << name << ": its sample's calls fail";
  }
}

}  // namespace op_crossref_test
}  // namespace opspec
