// Every derivative formula against central differences on the op crossref
// test's calls, as PyTorch's OpInfo test_fn_grad runs gradcheck on every
// op's samples. See Note [Gradcheck sweep].
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "harness/expect/gradcheck.h"
#include "harness/expect/opcheck.h"
#include "runtime/autograd/formulas.h"
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
//   - scatter.src and index_put without accumulate write duplicate indices
//     once (the last wins), which a gather of the gradient does not undo.
constexpr std::string_view kNotSwept[] = {
    "aten::native_layer_norm_backward", "aten::native_batch_norm_backward", "aten::native_group_norm_backward",
    "aten::scatter.src", "aten::scatter.value", "aten::index_put", "aten::_index_put_impl_",
};

bool swept(std::string_view name) {
  for (std::string_view n : kNotSwept) {
    if (n == name) return false;
  }
  return true;
}

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
// shape check), or a documented gap.
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
};

bool known_refusal(std::string_view op, const std::string& message) {
  for (const KnownRefusal& r : kKnownRefusals) {
    if (op.find(r.op) != std::string_view::npos && message.find(r.message) != std::string::npos) return true;
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

bool samples_only(std::string_view name) {
  for (std::string_view n : kSamplesOnly) {
    if (n == name) return true;
  }
  return false;
}

bool first_output_only(std::string_view name) {
  for (std::string_view n : kFirstOutputOnly) {
    if (n == name) return true;
  }
  return false;
}

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

TEST(GradcheckSweepTest, EveryFormulaMatchesCentralDifferences) {
  const int seeds = gradcheck_seeds();
  std::vector<std::string> problems;
  int checked = 0;
  for (const OperatorHandle* op : Dispatcher::singleton().ops()) {
    const std::string name = op->schema().qualified_name();
    if (op->schema().ns() != "aten" || op->schema().is_mutable() || values_unspecified(name)) continue;
    if (!op->has_kernel(DispatchKey::kCPU) && !op->is_composite()) continue;
    if (!check_autograd_registered(*op).ok || !swept(name) || !op_selected(name)) continue;
    for (int seed = 0; seed < seeds; ++seed) {
      if (samples_only(name) && seed % 2 == 0) continue;  // random_call's samples are on odd seeds
      Stack args = random_call(*op, seed);
      // Floating dtype arguments become f64 (central differences need it); not
      // asked for: sparse gradients (opspec refuses them) and embedding's
      // scale_grad_by_freq (by design not the derivative of the forward).
      // Nor embedding's padding_idx (its row gets no gradient by design), nor dropout.
      bool moderate_args = true;
      for (size_t i = 0; i < args.size(); ++i) {
        const std::string& arg = op->schema().arguments()[i].name;
        if (args[i].is_dtype() && is_floating(args[i].to_dtype())) args[i] = DType::kFloat64;
        if ((arg == "sparse" || arg == "sparse_grad" || arg == "scale_grad_by_freq") && args[i].is_bool()) {
          args[i] = false;
        }
        if (arg == "dropout_p" && args[i].is_double()) args[i] = 0.0;  // random: no derivative to compare
        if (arg == "padding_idx" && args[i].is_int()) args[i] = int64_t{-1};
        if (args[i].is_double() && !(std::abs(args[i].to_double()) < 1e6)) moderate_args = false;
      }
      if (!moderate_args) continue;  // an inf or 1e300 scale leaves central differences no precision
      // A scatter's src larger than its index: the elements past the index
      // take no part, and PyTorch's formulas (gathers of index's shape) assume none.
      if (scatter_src_larger_than_index(*op, args) || mean_over_nothing(*op, args)) continue;
      Rng rng(static_cast<uint64_t>(seed) * 7919 + name.size());
      std::vector<size_t> positions;
      std::vector<Tensor> inputs;
      int64_t elements = 0;
      for (size_t i = 0; i < args.size(); ++i) {
        if (!args[i].is_tensor() || !args[i].to_tensor().defined() || !is_floating(args[i].to_tensor().dtype())) {
          continue;
        }
        const std::string& arg = op->schema().arguments()[i].name;
        if (arg == "running_mean" || arg == "running_var") {
          args[i] = ops::abs(continuous(args[i].to_tensor(), rng));  // f64, positive (a running variance)
          continue;
        }
        if (not_differentiable(op->name(), arg)) {  // its values matter (a forward's total_weight)
          args[i] = ops::to(args[i].to_tensor(), DType::kFloat64);
          continue;
        }
        positions.push_back(i);
        inputs.push_back(continuous(args[i].to_tensor(), rng));
        elements += inputs.back().numel();
      }
      if (inputs.empty() || elements == 0 || elements > 48) continue;
      // The outputs to check: the floating ones that require grad after a call with grad.
      std::vector<size_t> outputs;
      const auto call = [&](const std::vector<Tensor>& xs) {
        Stack s = args;
        for (size_t k = 0; k < positions.size(); ++k) s[positions[k]] = xs[k];
        op->call_boxed(s);
        std::vector<Tensor> all;
        for (const Value& v : s) {
          for (const Tensor& t : tensors_of(v)) all.push_back(t);
        }
        return all;
      };
      std::vector<Tensor> leaves;
      for (const Tensor& x : inputs) leaves.push_back(ops::clone(x).requires_grad_());
      std::vector<Tensor> probe;
      try {
        probe = call(leaves);
      } catch (const Error&) {
        continue;  // an invalid call: the crossref test's business
      }
      for (size_t k = 0; k < probe.size() && (k == 0 || !first_output_only(name)); ++k) {
        if (probe[k].defined() && is_floating(probe[k].dtype()) && probe[k].requires_grad()) outputs.push_back(k);
      }
      std::vector<Tensor> checked_outputs;
      for (size_t k : outputs) checked_outputs.push_back(probe[k]);
      if (outputs.empty() || !moderate(checked_outputs)) continue;
      const TracedFunction fn = [&](const std::vector<Tensor>& xs) {
        const std::vector<Tensor> all = call(xs);
        std::vector<Tensor> picked;
        for (size_t k : outputs) picked.push_back(all[k]);
        return picked;
      };
      ++checked;
      if (const CheckResult r = gradcheck(fn, leaves); !r.ok && !known_refusal(name, r.message)) {
        problems.push_back(describe_call(*op, args) + ": " + r.message.substr(0, 600));
      }
    }
  }
  for (const std::string& p : problems) ADD_FAILURE() << p;
  // Most differentiable ops get checked, not only skipped.
  EXPECT_GT(checked, 40 * seeds);
}

}  // namespace
}  // namespace op_crossref_test
}  // namespace opspec
