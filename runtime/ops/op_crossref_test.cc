// Every aten op called with random arguments built from its schema, as
// PyTorch's OpInfo crossref tests call ops with sampled inputs: on the CPU
// and again on Meta tensors of the same sizes, strides and dtypes. See Note
// [Op crossref]; the generators and samples are op_crossref_test_util.h and
// op_crossref_samples_test_util.h.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <map>
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
// time; ops whose arguments must agree get a valid sample on odd seeds. The
// call then runs on the CPU and on Meta copies of its tensors:
//   - either may throw opspec::Error; anything else thrown fails the test;
//   - when the CPU succeeds, Meta must succeed with outputs of the same
//     sizes, dtypes and strides (PyTorch's meta functions check what the CPU
//     checks and lay results out as it does, except values: ops tagged
//     kDynamicOutputShape have no Meta answer).
// OPSPEC_CROSSREF_SEEDS raises the calls per op for a longer hunt;
// OPSPEC_CROSSREF_OP=aten::name calls that op alone;
// OPSPEC_CROSSREF_TRACE=1 prints each call before it runs (to name a crash),
// the CPU's error when it refuses one, and the ops that rarely or never ran.

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

TEST(OpCrossrefTest, RandomCallsFailCleanlyAndMetaAgreesWithTheCpu) {
  const int seeds = seeds_per_op();
  const bool trace = std::getenv("OPSPEC_CROSSREF_TRACE") != nullptr;
  std::map<std::string, int> ok_calls;
  std::vector<std::string> problems;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->schema().ns() != "aten" || (!op->has_kernel(DispatchKey::kCPU) && !op->is_composite())) continue;
    const std::string name = op->schema().qualified_name();
    if (!op_selected(name)) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      const Stack args = random_call(*op, seed);
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

// Note [Layout crossref]
// A kernel's values must not depend on how its inputs are laid out: each
// call runs again on contiguous clones of its tensors, and where both runs
// succeed their results must agree as result_mismatch compares them (to a few
// ulp: BLAS sums in an order that depends on alignment). Both runs start
// from one random seed, so random ops draw the same numbers. Left out: ops
// that read the storage itself (as_strided and its kin, given explicit
// strides), empty* (uninitialised), and scaled_dot_product_attention, which
// picks its kernel by layout as PyTorch's does (the flash kernel only for a
// last dim of stride 1; the math path multiplies a causal mask's zeros by
// the values it hides, so a NaN there shows in one and not the other). It
// found an all-NaN attention row read as an empty one.
bool layout_picks_the_result(std::string_view name) {
  return name.find("as_strided") != std::string_view::npos || name.find("_reshape_alias") != std::string_view::npos ||
         name.find("empty") != std::string_view::npos || name == "aten::scaled_dot_product_attention";
}

Value contiguous_clone(const Value& v) {
  if (v.is_tensor()) {
    const Tensor& t = v.to_tensor();
    return t.defined() ? Value(ops::contiguous(ops::clone(t))) : v;
  }
  if (v.is_tensor_list()) {
    std::vector<Tensor> l;
    for (const Tensor& t : v.to_tensor_list()) l.push_back(t.defined() ? ops::contiguous(ops::clone(t)) : t);
    return l;
  }
  return v;
}

TEST(OpCrossrefTest, ValuesDoNotDependOnTheInputsLayout) {
  const int seeds = seeds_per_op();
  std::vector<std::string> problems;
  int compared = 0;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    if (op->schema().ns() != "aten" || (!op->has_kernel(DispatchKey::kCPU) && !op->is_composite())) continue;
    const std::string name = op->schema().qualified_name();
    if (!op_selected(name)) continue;
    if (layout_picks_the_result(name)) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      const Stack args = random_call(*op, seed);
      Stack dense;
      for (const Value& v : args) dense.push_back(contiguous_clone(v));  // before in-place ops run
      manual_seed(static_cast<uint64_t>(seed));
      const Outcome strided = run(*op, args);
      manual_seed(static_cast<uint64_t>(seed));
      const Outcome contiguous = run(*op, dense);
      if (strided.kind != Outcome::kOk || contiguous.kind != Outcome::kOk) continue;
      ++compared;
      if (const std::string m = result_mismatch(strided.results, contiguous.results, true); !m.empty()) {
        problems.push_back(describe_call(*op, args) + ": strided and contiguous inputs differ: " + m);
      }
    }
  }
  for (const std::string& p : problems) ADD_FAILURE() << p;
  EXPECT_GT(compared, 100 * seeds);
}

}  // namespace op_crossref_test
}  // namespace opspec
