// equivalence.cc: eager vs compiled, with the first divergent op on failure.
// See Note [Locating the divergence].
#include "harness/expect/equivalence.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "harness/debug_diff.h"
#include "harness/expect/internal/compiled_target.h"
#include "harness/expect/sequence_diff.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/generator.h"
#include "runtime/core/scalar.h"
#include "runtime/ops/untraced.h"

namespace opspec {
namespace {

// Note [Locating the divergence]
// A compiled log need not mirror the eager one entry by entry: the fused
// backend launches one kernel where eager ran several aten ops, aot_eager
// may decompose. So diff_logs (which stops at the first structural
// difference) is only the first step. When it finds a hash mismatch before
// the structures part, that is the answer. Otherwise the op entries of the
// two logs are aligned by name (a longest common subsequence, as a diff
// would) and the first aligned pair whose output hashes differ is reported;
// if every aligned pair agrees, the divergence lies in what only one run
// did, and the report shows those entries as a compact diff.

// clone_input: a copy with the same strides and dim marks, made without
// dispatching (modes see nothing; inputs are never shared between the runs,
// so an in-place fn does not taint the second run). Meta and fake tensors
// (meta storage, whatever device they claim) hold no data and are shared.
Tensor clone_input(const Tensor& t) {
  if (!t.defined() || t.impl()->storage()->device().is_meta()) return t;
  Tensor c = internal::make_strided(t.sizes(), t.strides(), t.dtype(), t.device());
  if (t.device().is_cpu()) {
    copy_untraced(c, t);
  } else if (const size_t nbytes = c.impl()->storage()->nbytes(); nbytes > 0) {
    // The same strides over fresh storage: the bytes t's strides span map
    // one to one onto c's storage, so one device-to-device copy clones it.
    get_device_hooks(t.device().type).copy_bytes(c.raw_data(), c.device(), t.raw_data(), t.device(), nbytes);
  }
  c.impl()->set_dim_marks(t.impl()->dynamic_dims(), t.impl()->static_dims());
  if (t.requires_grad() && t.is_leaf()) c.requires_grad_();  // a leaf of its own: each run's grads apart
  return c;
}

std::vector<Tensor> clone_inputs(const std::vector<Tensor>& inputs) {
  std::vector<Tensor> out;
  out.reserve(inputs.size());
  for (const Tensor& t : inputs) out.push_back(clone_input(t));
  return out;
}

// flatten_hashes: the leaves of a hash tree, in order.
void flatten_hashes(const HashNode& node, std::vector<HashValue>* out) {
  if (node.kind == HashNode::Kind::kHashes) out->insert(out->end(), node.hashes.begin(), node.hashes.end());
  for (const HashNode& child : node.items) flatten_hashes(child, out);
}

std::vector<HashValue> output_leaves(const DebugCall& c) {
  std::vector<HashValue> out;
  if (c.output_hash.has_value()) {
    for (const HashNode& n : *c.output_hash) flatten_hashes(n, &out);
  }
  return out;
}

bool hashes_match(const HashValue& a, const HashValue& b, double rtol) {
  if (a == b) return true;
  if (a.is_int || b.is_int) return false;
  if (std::isnan(a.f) && std::isnan(b.f)) return true;
  const double rel = std::fabs(a.f - b.f) / std::max({std::fabs(a.f), std::fabs(b.f), 1e-10});
  return rel <= rtol;
}

std::string entry_name(const DebugCall& c) {
  if (c.kind == DebugCall::Kind::kKernel) return str_cat("[", c.kernel_prefix, "] ", c.name);
  if (c.kind == DebugCall::Kind::kModule) return str_cat("[nn.Mod] ", c.name);
  return c.name;
}

// same_hashes: whether two aligned entries (same name) have matching result
// hashes: outputs for ops, post-launch buffer hashes for kernels.
bool same_hashes(const DebugCall& e, const DebugCall& c, double rtol) {
  std::vector<HashValue> he, hc;
  if (e.kind == DebugCall::Kind::kKernel) {
    for (const auto& [name, hs] : e.post_kernel_hashes) he.insert(he.end(), hs.begin(), hs.end());
    for (const auto& [name, hs] : c.post_kernel_hashes) hc.insert(hc.end(), hs.begin(), hs.end());
  } else {
    he = output_leaves(e);
    hc = output_leaves(c);
  }
  if (he.size() != hc.size()) return false;
  for (size_t k = 0; k < he.size(); ++k) {
    if (!hashes_match(he[k], hc[k], rtol)) return false;
  }
  return true;
}

// locate_divergence: the paragraph naming where the runs part. See Note [Locating the divergence].
std::string locate_divergence(const std::vector<DebugCall>& eager, const std::vector<DebugCall>& compiled,
                              double rtol, HashKind hash) {
  DiffOptions diff_options;
  diff_options.rtol = rtol;
  const LogDiff diff = diff_logs(eager, compiled, diff_options);
  if (diff.equivalent()) {
    return str_cat("the DebugMode logs show no divergence (", diff.entries1,
                   " entries, equal hashes): the difference is invisible to the hash (try hash: bitwise) "
                   "or arises outside the logged ops");
  }
  if (diff.first_mismatch() != nullptr) {
    return str_cat("DebugMode logs (log 1: eager, log 2: compiled): ", diff.report());
  }
  // The structures part (fused kernels, decompositions, extra or missing
  // ops): align the entries by name and find the first pair that disagrees.
  std::vector<std::string> e_names, c_names;
  for (const DebugCall& c : eager) e_names.push_back(entry_name(c));
  for (const DebugCall& c : compiled) c_names.push_back(entry_name(c));
  const auto pairs = align_sequences(e_names, c_names);
  size_t e_from = 0, c_from = 0;  // just past the previous aligned pair
  for (const auto& [ei, ci] : pairs) {
    const DebugCall& e = eager[ei];
    const DebugCall& c = compiled[ci];
    if (same_hashes(e, c, rtol)) {
      e_from = ei + 1;
      c_from = ci + 1;
      continue;
    }
    const DebugModeOptions render;
    std::string out = str_cat("first divergent op both runs made: ", e_names[ei], " (eager entry ", ei,
                              ", compiled entry ", ci, ")\n  eager:    ", e.render(render), "\n  compiled: ",
                              c.render(render));
    if (ei > e_from || ci > c_from) {
      // What only one run made just before it is where the divergence likely starts.
      str_append(&out, "\nbefore it the runs made different entries (- eager only, + compiled only), "
                       "where the divergence likely starts:\n");
      for (size_t k = e_from; k < ei; ++k) str_append(&out, "- [", k, "] ", e_names[k], "\n");
      for (size_t k = c_from; k < ci; ++k) str_append(&out, "+ [", k, "] ", c_names[k], "\n");
      out.pop_back();
    }
    return out;
  }
  // Every entry both made agrees: the divergence is in what only one made.
  std::string seq = sequence_diff(e_names, c_names);
  if (!seq.empty() && seq.back() == '\n') seq.pop_back();
  // Equal hashes are evidence, not proof: a norm hash compared with a
  // tolerance hides differences within it (a perturbed mm), so say so.
  return str_cat("every entry both runs made has equal ", hash_kind_name(hash), " hashes; they differ in these "
                 "entries (- eager only, + compiled only), where the divergence may lie",
                 hash == HashKind::kBitwise ? "" : " (hash: bitwise would show whether an entry both made differs)",
                 ":\n", seq);
}

std::string backend_label(const CompileOptions& o) {
  return o.backend_fn ? std::string("a custom backend") : str_cat("backend '", o.backend, "'");
}

// effective_rtol: the relative tolerance applied to norm hashes in the log diff.
double effective_rtol(const CloseOptions& close, const std::vector<Tensor>& outputs) {
  if (close.bitwise) return 0;
  if (close.rtol.has_value()) return *close.rtol;
  double rtol = default_tolerances(DType::kFloat32).rtol;
  for (const Tensor& t : outputs) {
    if (t.defined()) rtol = std::max(rtol, default_tolerances(t.dtype()).rtol);
  }
  return rtol;
}

}  // namespace

EquivalenceResult check_eager_compiled_equivalent(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                                                  const EquivalenceOptions& options) {
  const CloseOptions& close = options.close;
  if (close.rtol.has_value() != close.atol.has_value()) {
    throw Error(str_cat("assert_close: give both rtol and atol, or neither (got ",
                        close.rtol.has_value() ? "rtol" : "atol", " only)"));
  }
  EquivalenceResult r;
  // Note [Equivalence memory]: each run gets its own copy of the inputs, but
  // one copy at a time when fn leaves its inputs as they were (bitwise): the
  // eager copy is then dropped before the compiled one is made, and the
  // originals stand in for it. Peak: the inputs, one copy, both runs' outputs
  // (docs/memory.md); a fn that mutates its inputs needs both copies.
  std::vector<Tensor> eager_inputs = clone_inputs(inputs);
  const GeneratorState start = default_generator_state();  // both runs draw the same random numbers
  {
    DebugMode dm;
    {
      auto scope = dm.enter();
      auto hashes = DebugMode::log_tensor_hashes(options.hash);
      r.eager_outputs = fn(eager_inputs);
    }
    r.eager_log.assign(dm.logs().begin(), dm.logs().end());
  }
  bool eager_mutated = false;
  for (size_t i = 0; i < inputs.size() && !eager_mutated; ++i) {
    if (!inputs[i].defined() || eager_inputs[i].is_same(inputs[i])) continue;  // shared: undefined, meta, fake
    eager_mutated = !assert_close(eager_inputs[i], inputs[i], {.bitwise = true, .equal_nan = true}).ok;
  }
  bool any_grad = false;  // a leaf's grad is compared too: keep the eager copies
  for (const Tensor& t : eager_inputs) any_grad = any_grad || (t.defined() && t.grad().defined());
  if (!eager_mutated && !any_grad) eager_inputs.clear();  // the originals are the same bits
  const std::vector<Tensor>& eager_after = eager_mutated ? eager_inputs : inputs;
  const std::vector<Tensor> compiled_inputs = clone_inputs(inputs);
  set_default_generator_state(start);
  {
    const internal::CompiledTarget compiled(fn, options.module, options.compile);
    DebugMode dm;
    {
      auto scope = dm.enter();
      auto hashes = DebugMode::log_tensor_hashes(options.hash);
      r.compiled_outputs = compiled(compiled_inputs);
    }
    r.compiled_log.assign(dm.logs().begin(), dm.logs().end());
    r.stats = compiled.compiled().stats();
  }

  std::string what;
  CheckResult outputs = assert_close(r.compiled_outputs, r.eager_outputs, close);
  if (!outputs.ok) {
    what = outputs.message;
  } else {
    // fn may mutate its inputs: the two runs must leave them alike too.
    for (size_t i = 0; i < inputs.size() && what.empty(); ++i) {
      CheckResult in = assert_close(compiled_inputs[i], eager_after[i], close);
      if (!in.ok) what = str_cat("input ", i, " after the call: ", in.message);
    }
    // The gradients backward left in leaves that require grad must agree as well.
    for (size_t i = 0; i < eager_inputs.size() && what.empty(); ++i) {
      const Tensor eg = eager_inputs[i].defined() ? eager_inputs[i].grad() : Tensor();
      const Tensor cg = compiled_inputs[i].defined() ? compiled_inputs[i].grad() : Tensor();
      if (!eg.defined() && !cg.defined()) continue;
      if (eg.defined() != cg.defined()) {
        what = str_cat("input ", i, "'s grad: ", eg.defined() ? "eager set it, compiled did not" : "compiled set it, eager did not");
        continue;
      }
      CheckResult g = assert_close(cg, eg, close);
      if (!g.ok) what = str_cat("input ", i, "'s grad: ", g.message);
    }
  }
  if (what.empty()) {
    r.result = CheckResult::pass();
    return r;
  }
  r.result = CheckResult::fail(str_cat("eager and compiled (", backend_label(options.compile), ") results differ\n",
                                       what, "\n\n",
                                       locate_divergence(r.eager_log, r.compiled_log,
                                                         effective_rtol(close, r.eager_outputs), options.hash)));
  return r;
}

}  // namespace opspec
