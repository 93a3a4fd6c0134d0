// Every derivative formula against central differences on the op crossref
// test's calls, as PyTorch's OpInfo test_fn_grad runs gradcheck on every
// op's samples. See Note [Gradcheck sweep].
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "harness/expect/gradcheck.h"
#include "harness/expect/opcheck.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/formulas.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/op_crossref_samples_test_util.h"

namespace opspec {
namespace op_crossref_test {
namespace {

// Note [Gradcheck sweep]
// For each op with a derivative formula (or a composite), not in-place and
// not random, each seed takes op_crossref_test's call (random_call: random
// arguments, or the op's sample), makes every floating tensor argument an
// f64 leaf with continuous values (a random sign times [0.2, 2): no ties for
// max or sort, no kinks of relu or abs, no zeros for log or 1/x) and every
// floating dtype argument f64, and runs gradcheck on the outputs that
// require grad. A call is skipped when it fails, when its output is not
// moderate there (not finite, or past 1e6), or when its inputs exceed 48
// elements (gradcheck runs the op twice per element). kNotSwept lists the
// ops left out, with the reasons.
// OPSPEC_GRADCHECK_SEEDS sets the calls per op (default 8).

// kNotSwept: ops whose formulas hold only where the sweep's random calls do
// not, as in PyTorch (whose OpInfos sample them to fit):
//   - the norms' backward ops take the forward's saved mean and rstd as
//     inputs; their double backward treats them as functions of the input
//     (PyTorch checks these by gradgradcheck through the forward);
//   - scatter (src, value) and index_put without accumulate, and their
//     in-place forms, write duplicate indices once (the last wins), which a
//     gather of the gradient does not undo;
//   - round.decimals (and round_) scales by 10^decimals before it rounds: at decimals 5
//     the difference step (1e-6) spans 0.1 of a rounding step, so one
//     element in five crosses a step and its numerical gradient is 5, not
//     the formula's (and PyTorch's) zero.
constexpr std::string_view kNotSwept[] = {
    "aten::native_layer_norm_backward", "aten::native_batch_norm_backward", "aten::native_group_norm_backward",
    "aten::scatter.src", "aten::scatter.value", "aten::scatter_.src", "aten::scatter_.value", "aten::index_put",
    "aten::index_put_", "aten::_index_put_impl_", "aten::round.decimals", "aten::round_.decimals",
};

// listed: name is one of list's.
template <size_t N>
bool listed(const std::string_view (&list)[N], std::string_view name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

bool swept(std::string_view name) { return !listed(kNotSwept, name); }

// kFirstOutputOnly: ops whose other outputs are statistics their formula
// takes no gradient for, as PyTorch's (derivatives.yaml reads grads[0] only).
constexpr std::string_view kFirstOutputOnly[] = {
    "aten::native_layer_norm", "aten::native_batch_norm", "aten::native_group_norm",
    "aten::_scaled_dot_product_flash_attention_for_cpu", "aten::nll_loss_forward", "aten::nll_loss2d_forward",
};

// not_differentiable: arg is one op's formula refuses to differentiate
// (Formula::not_differentiable: nll_loss's weight, the CPU flash kernel's
// attn_mask); the sweep keeps it constant. Composites keep theirs variable
// (scaled_dot_product_attention's mask takes the math path then).
bool not_differentiable(std::string_view op, std::string_view arg) {
  const autograd::Formula* formula = autograd::find_formula(op);
  if (formula == nullptr) return false;
  for (std::string_view refused : formula->not_differentiable) {
    if (!refused.empty() && refused == arg) return true;
  }
  return false;
}

// kKnownRefusals: backward errors PyTorch's formulas raise too on these
// calls (FunctionsManual's arithmetic, its in-place ops and its engine's
// shape check), or a documented gap; op is a qualified name or a part of one.
struct KnownRefusal {
  std::string_view op, message, why;
};
constexpr KnownRefusal kKnownRefusals[] = {
    {"pow", "with a bool tensor is not supported", "pow_backward subtracts 1 from a bool exponent"},
    {"atan2", "on a bool tensor is not supported", "atan2_backward negates a bool self for other's gradient"},
    {"clamp", "doesn't match the broadcast shape", "clamp_backward_min_max's logical_or_ into a smaller mask"},
    {"batch_norm", "returned an invalid gradient", "a [1, 1, 1] bias for one channel gets a [1] gradient"},
    {"embedding_dense_backward", "returned an invalid gradient", "a grad_output without the embedding dim"},
    {"scatter", "returned an invalid gradient", "src larger than index: gather(grad, index) has index's shape"},
    {"scatter", "Index tensor must have the same number of dimensions", "an empty index of another rank"},
    {"as_strided", "whose elements may overlap is not implemented", "PyTorch's index_add_ path, not built"},
    // tensor1's gradient reads `value / tensor2`, TensorOperators.h's
    // empty_like(tensor2).fill_(value).div_(tensor2): torch 1.13 refuses an
    // integral or b8 tensor2 there in the same words.
    {"addcdiv", "aten::div_: result type Float can't be cast to the desired output type",
     "value / tensor2 is computed in tensor2's dtype"},
    {"aten::leaky_relu_", "triggered with a negative slope", "leaky_relu_backward refuses an in-place negative slope"},
    {"aten::elu_", "triggered with a negative slope", "elu_backward refuses an in-place negative alpha"},
    // elu_'s row reads the result's sign (is_result), which a negative scale
    // flips: PyTorch's gradient is as wrong there (only alpha < 0 is refused).
    {"aten::elu_", "Jacobian mismatch", "a negative scale flips the result's sign that elu_'s formula reads"},
};

bool known_refusal(std::string_view op, const std::string& message) {
  for (const KnownRefusal& r : kKnownRefusals) {
    // A qualified name is that op only; a bare one any op containing it.
    const bool op_matches = r.op.starts_with("aten::") ? op == r.op : op.find(r.op) != std::string_view::npos;
    if (op_matches && message.find(r.message) != std::string::npos) return true;
  }
  return false;
}

bool scatter_src_larger_than_index(const OperatorHandle& op, const Stack& args) {
  const Tensor* src = nullptr;
  const Tensor* index = nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = op.schema().arguments()[i].name;
    if (!args[i].is_tensor() || !args[i].to_tensor().defined()) continue;
    if (arg == "src") src = &args[i].to_tensor();
    if (arg == "index") index = &args[i].to_tensor();
  }
  return src != nullptr && index != nullptr && src->sizes() != index->sizes();
}

// kSamplesOnly: ops swept on their samples only: nll_loss's backward ops take
// the forward's total_weight, which a random call does not match to its
// targets, and PyTorch's double backward (nll_loss(grad, ...)) recomputes it.
constexpr std::string_view kSamplesOnly[] = {"aten::nll_loss_backward", "aten::nll_loss2d_backward"};

// mean_over_nothing: an nll_loss backward call of mean reduction whose
// targets are all ignored (total_weight 0): its double backward is
// nll_loss(grad, ...), a mean over no items, NaN in PyTorch too.
bool mean_over_nothing(const OperatorHandle& op, const Stack& args) {
  bool mean = false, zero_total = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = op.schema().arguments()[i].name;
    if (arg == "reduction" && args[i].is_int()) mean = args[i].to_int() == 1;
    if (arg == "total_weight" && args[i].is_tensor() && args[i].to_tensor().numel() == 1) {
      zero_total = args[i].to_tensor().to_vector<double>()[0] == 0.0;
    }
  }
  return mean && zero_total;
}

bool samples_only(std::string_view name) { return listed(kSamplesOnly, name); }

bool first_output_only(std::string_view name) { return listed(kFirstOutputOnly, name); }

// continuous: t's shape with values of a random sign and magnitude in [0.2, 2), f64.
Tensor continuous(const Tensor& t, Rng& rng) {
  std::uniform_real_distribution<double> magnitude(0.2, 2.0);
  std::vector<double> v(static_cast<size_t>(t.numel()));
  for (double& x : v) x = (chance(rng, 50) ? -1 : 1) * magnitude(rng);
  return ops::tensor(std::move(v), t.sizes(), DType::kFloat64);
}

// moderate: at most 1024 elements each, every value finite and below 1e6 in
// magnitude (a domain's edge, or a huge scalar argument, leaves central
// differences no precision).
bool moderate(const std::vector<Tensor>& ts) {
  for (const Tensor& t : ts) {
    if (t.numel() > 1024) return false;  // a broadcasting view (sizes near 2^40): no Jacobian that large
    for (double x : t.to_vector<double>()) {
      if (!std::isfinite(x) || std::abs(x) > 1e6) return false;
    }
  }
  return true;
}

int gradcheck_seeds() {
  const char* env = std::getenv("OPSPEC_GRADCHECK_SEEDS");
  return env != nullptr ? std::max(1, std::atoi(env)) : 8;
}

// SweepCall: a call prepared for gradcheck: its arguments, and the floating
// tensor arguments to differentiate (positions) with their f64 values.
struct SweepCall {
  Stack args;
  std::vector<size_t> positions;
  std::vector<Tensor> inputs;
};

// prepare: seed's call of op made ready for gradcheck (See Note [Gradcheck
// sweep]), or nullopt when it is skipped.
std::optional<SweepCall> prepare(const OperatorHandle& op, const std::string& name, int seed) {
  if (samples_only(name) && seed % 2 == 0) return std::nullopt;  // random_call's samples are on odd seeds
  SweepCall c{random_call(op, seed), {}, {}};
  Stack& args = c.args;
  // Floating dtype arguments become f64 (central differences need it); not
  // asked for: sparse gradients (opspec refuses them) and embedding's
  // scale_grad_by_freq (by design not the derivative of the forward).
  // Nor embedding's padding_idx (its row gets no gradient by design), nor dropout.
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = op.schema().arguments()[i].name;
    if (args[i].is_dtype() && is_floating(args[i].to_dtype())) args[i] = DType::kFloat64;
    if ((arg == "sparse" || arg == "sparse_grad" || arg == "scale_grad_by_freq") && args[i].is_bool()) {
      args[i] = false;
    }
    if (arg == "dropout_p" && args[i].is_double()) args[i] = 0.0;  // random: no derivative to compare
    if (arg == "padding_idx" && args[i].is_int()) args[i] = int64_t{-1};
    // an inf or 1e300 scale leaves central differences no precision
    if (args[i].is_double() && !(std::abs(args[i].to_double()) < 1e6)) return std::nullopt;
  }
  // A scatter's src larger than its index: the elements past the index
  // take no part, and PyTorch's formulas (gathers of index's shape) assume none.
  if (scatter_src_larger_than_index(op, args) || mean_over_nothing(op, args)) return std::nullopt;
  Rng rng(static_cast<uint64_t>(seed) * 7919 + name.size());
  int64_t elements = 0;
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].is_tensor() || !args[i].to_tensor().defined() || !is_floating(args[i].to_tensor().dtype())) {
      continue;
    }
    const std::string& arg = op.schema().arguments()[i].name;
    if (arg == "running_mean" || arg == "running_var") {
      args[i] = ops::abs(continuous(args[i].to_tensor(), rng));  // f64, positive (a running variance)
      continue;
    }
    if (not_differentiable(op.name(), arg)) {  // its values matter (a forward's total_weight)
      args[i] = ops::to(args[i].to_tensor(), DType::kFloat64);
      continue;
    }
    c.positions.push_back(i);
    c.inputs.push_back(continuous(args[i].to_tensor(), rng));
    elements += c.inputs.back().numel();
  }
  if (c.inputs.empty() || elements == 0 || elements > 48) return std::nullopt;
  return c;
}

// Sweep: the calls checked and the problems found.
struct Sweep {
  int checked = 0;
  std::vector<std::string> problems;

  // check: gradcheck of call (leaves to its outputs) at leaves, unless the call
  // fails or its checked outputs are not moderate.
  void check(const OperatorHandle& op, const std::string& name, const Stack& args,
             const std::function<std::vector<Tensor>(const std::vector<Tensor>&)>& call, std::vector<Tensor> leaves) {
    for (Tensor& x : leaves) x = ops::clone(x).requires_grad_();
    std::vector<Tensor> probe;
    try {
      probe = call(leaves);
    } catch (const Error&) {
      return;  // an invalid call: the crossref test's business
    }
    // The outputs to check: the floating ones that require grad after a call with grad.
    std::vector<size_t> outputs;
    for (size_t k = 0; k < probe.size() && (k == 0 || !first_output_only(name)); ++k) {
      if (probe[k].defined() && is_floating(probe[k].dtype()) && probe[k].requires_grad()) outputs.push_back(k);
    }
    std::vector<Tensor> checked_outputs;
    for (size_t k : outputs) checked_outputs.push_back(probe[k]);
    if (outputs.empty() || !moderate(checked_outputs)) return;
    const TracedFunction fn = [&](const std::vector<Tensor>& xs) {
      const std::vector<Tensor> all = call(xs);
      std::vector<Tensor> picked;
      for (size_t k : outputs) picked.push_back(all[k]);
      return picked;
    };
    ++checked;
    if (const CheckResult r = gradcheck(fn, leaves); !r.ok && !known_refusal(name, r.message)) {
      problems.push_back(describe_call(op, args) + ": " + r.message.substr(0, 600));
    }
  }
};

// every_result: the call of op with c's arguments, xs in the differentiated
// positions, as a function to every tensor it leaves on the stack.
std::function<std::vector<Tensor>(const std::vector<Tensor>&)> every_result(const OperatorHandle& op,
                                                                            const SweepCall& c) {
  return [&op, &c](const std::vector<Tensor>& xs) {
    Stack s = c.args;
    for (size_t k = 0; k < c.positions.size(); ++k) s[c.positions[k]] = xs[k];
    op.call_boxed(s);
    std::vector<Tensor> all;
    for (const Value& v : s) {
      for (const Tensor& t : tensors_of(v)) all.push_back(t);
    }
    return all;
  };
}

// swept_op: an aten op with a CPU kernel (or a composite) that autograd
// handles, swept and selected.
bool swept_op(const OperatorHandle& op, const std::string& name) {
  if (op.schema().ns() != "aten" || values_unspecified(name)) return false;
  if (!op.has_kernel(DispatchKey::kCPU) && !op.is_composite()) return false;
  return check_autograd_registered(op).ok && swept(name) && op_selected(name);
}

// for_each_functional_call: f(op, name, call) for each swept functional op's
// call prepared with each of seeds seeds.
template <class F>
void for_each_functional_call(int seeds, F&& f) {
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    const std::string name = op->schema().qualified_name();
    if (op->schema().is_mutable() || !swept_op(*op, name)) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      if (std::optional<SweepCall> c = prepare(*op, name, seed)) f(*op, name, *c);
    }
  }
}

TEST(GradcheckSweepTest, EveryFormulaMatchesCentralDifferences) {
  const int seeds = gradcheck_seeds();
  Sweep sweep;
  for_each_functional_call(seeds, [&](const OperatorHandle& op, const std::string& name, const SweepCall& c) {
    sweep.check(op, name, c.args, every_result(op, c), c.inputs);
  });
  for (const std::string& p : sweep.problems) ADD_FAILURE() << p;
  // Most differentiable ops get checked, not only skipped.
  EXPECT_GT(sweep.checked, 40 * seeds);
}

// relaid: x with the same values in another layout: channels-last for 4 dims,
// its last two dims column-major for 2 or 3, or x itself (undefined) for others.
Tensor relaid(const Tensor& x) {
  if (x.dim() == 4) return ops::contiguous(x, MemoryFormat::kChannelsLast);
  if (x.dim() == 2 || x.dim() == 3) return ops::transpose(ops::contiguous(ops::transpose(x, -1, -2)), -1, -2);
  return Tensor();
}

// Every formula again with its differentiated inputs laid out otherwise than
// row-major (channels-last, column-major), as a CNN or a transposed weight
// hands them over: a formula or kernel that reads a gradient or an input by
// position rather than by strides gives a permuted Jacobian here.
TEST(GradcheckSweepTest, EveryFormulaOnStridedInputs) {
  const int seeds = gradcheck_seeds();
  Sweep sweep;
  for_each_functional_call(seeds, [&](const OperatorHandle& op, const std::string& name, SweepCall& c) {
    bool any = false;
    for (Tensor& x : c.inputs) {
      const Tensor r = relaid(x);
      if (!r.defined() || r.strides() == x.strides()) continue;  // a size-1 dim: the same strides
      x = r;
      any = true;
    }
    if (any) sweep.check(op, name, c.args, every_result(op, c), c.inputs);
  });
  for (const std::string& p : sweep.problems) ADD_FAILURE() << p;
  EXPECT_GT(sweep.checked, 20 * seeds);
}

// Note [In-place sweep through views]
// Every in-place op with a formula (not random) runs on a view of a tensor
// with history: b = base * 1.5 (base an f64 leaf of shape [2, self's]), the
// op changes b.select(0, 1) in place, and gradcheck runs on b, whose history
// is then a CopySlices of the op's node (See Note [In-place changes to
// views]); for an in-place view op (squeeze_), which leaves b alone, on the
// view, whose grad_fn is then the op's node. On odd seeds the view is of a plain buffer of zeros
// instead, when another argument is differentiable: the view is adopted.
// A storage_offset argument (as_strided_'s) counts from the storage's start,
// not self's: the call's offset, drawn for a self that starts its storage, is
// moved by the view's own offset (a negative one stays, refused as before).
// Unmoved, as_strided_ read b's other half,
// elements outside self that its formula (as_strided_backward, PyTorch's too:
// torch 1.13 gives them a zero gradient) does not differentiate.

// rebase_storage_offsets: s's storage_offset arguments of op moved by view's storage offset.
void rebase_storage_offsets(const OperatorHandle& op, Stack& s, const Tensor& view) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (op.schema().arguments()[i].name == "storage_offset" && s[i].is_int() && s[i].to_int() >= 0) {
      s[i] = s[i].to_int() + view.storage_offset();
    }
  }
}

// check_inplace_through_view: seed's call of in-place op checked on a view
// (See Note [In-place sweep through views]); false where the call is skipped.
bool check_inplace_through_view(Sweep& sweep, const OperatorHandle& op, const std::string& name, int seed) {
  std::optional<SweepCall> c = prepare(op, name, seed);
  if (!c || c->positions[0] != 0) return false;  // self must be a floating tensor
  const bool plain = seed % 2 == 1 && c->positions.size() > 1;
  std::vector<Tensor> leaves = c->inputs;
  SizeVec base_sizes{2};
  for (int64_t d : leaves[0].sizes()) base_sizes.push_back(d);
  const Tensor halves[] = {ops::unsqueeze(leaves[0], 0), ops::unsqueeze(ops::neg(leaves[0]), 0)};
  leaves[0] = ops::cat(halves, 0);
  if (plain) leaves.erase(leaves.begin());
  const auto call = [&](const std::vector<Tensor>& xs) {
    Stack s = c->args;
    const Tensor b = plain ? ops::zeros(base_sizes, {.dtype = DType::kFloat64}) : ops::mul(xs[0], 1.5);
    const Tensor view = ops::select(b, 0, 1);
    s[0] = view;
    for (size_t k = 1; k < c->positions.size(); ++k) s[c->positions[k]] = xs[plain ? k - 1 : k];
    rebase_storage_offsets(op, s, view);
    op.call_boxed(s);
    // An in-place view op (squeeze_) changes the view's geometry, not b: its node is checked through the view.
    return std::vector<Tensor>{op.kind() == OpKind::kView ? view : b};
  };
  const int before = sweep.checked;
  sweep.check(op, name, c->args, call, leaves);
  return sweep.checked > before;
}

TEST(GradcheckSweepTest, EveryInPlaceFormulaThroughAView) {
  const int seeds = gradcheck_seeds();
  Sweep sweep;
  int ops_checked = 0;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    const std::string name = op->schema().qualified_name();
    if (!op->schema().is_mutable() || autograd::find_formula(name) == nullptr ||
        !swept_op(*op, name) || !op->schema().arguments()[0].is_write) {
      continue;
    }
    int calls = 0;
    for (int seed = 0; seed < seeds; ++seed) calls += check_inplace_through_view(sweep, *op, name, seed) ? 1 : 0;
    if (calls > 0) ++ops_checked;
    if (std::getenv("OPSPEC_CROSSREF_TRACE") != nullptr) {
      std::printf("in-place through a view: %s checked in %d of %d calls\n", name.c_str(), calls, seeds);
    }
  }
  for (const std::string& p : sweep.problems) ADD_FAILURE() << p;
  // add_, mul_, copy_, masked_fill_, the scatters, index_put_, ... get checked.
  if (std::getenv("OPSPEC_CROSSREF_OP") == nullptr) {
    EXPECT_GT(ops_checked, 10);
  }
}

// Seeds 408 and 943 of as_strided_ (f32[4] to [] at offset 3; f32[3, 1, 4] to
// [1, 4] strides [2, 1] at offset 4) failed at OPSPEC_GRADCHECK_SEEDS=1000
// before the sweep moved their offsets into the view (See Note [In-place
// sweep through views]); they are checked, and pass, at any seed count now.
TEST(GradcheckSweepTest, AsStridedInPlaceSeedsWithAnOffsetPassThroughAView) {
  const OperatorHandle* op = Dispatcher::singleton().find("aten::as_strided_");
  ASSERT_NE(op, nullptr);
  for (int seed : {408, 943}) {
    Sweep sweep;
    EXPECT_TRUE(check_inplace_through_view(sweep, *op, "aten::as_strided_", seed)) << "seed " << seed;
    for (const std::string& p : sweep.problems) ADD_FAILURE() << "seed " << seed << ": " << p;
  }
}

// as_strided_ on a view reading outside it: the element it reads gets no
// gradient, as torch 1.13 gives (b = x * 1.5; v = b.select(0, 1);
// v.as_strided_([], [], 3); grad of v w.r.t. x: all zeros, where central
// differences see 1.5 at x[0][3]); within the view (offset 4 + 3) it gets 1.5.
TEST(GradcheckSweepTest, AsStridedInPlaceOnAViewDifferentiatesOnlyTheViewsElements) {
  for (int64_t offset : {3, 7}) {
    const Tensor x = ops::reshape(ops::arange(8, {.dtype = DType::kFloat64}), {2, 4}).requires_grad_();
    Tensor v = ops::select(ops::mul(x, 1.5), 0, 1);
    ops::as_strided_(v, {}, {}, offset);
    EXPECT_EQ(v.item<double>(), 1.5 * static_cast<double>(offset));
    const Tensor g = autograd::grad({v}, {x})[0];
    std::vector<double> expected(8, 0.0);
    if (offset == 7) expected[7] = 1.5;
    EXPECT_EQ(g.to_vector<double>(), expected) << "offset " << offset;
  }
}

}  // namespace
}  // namespace op_crossref_test
}  // namespace opspec
