// trace_once.cc: CompileOptions::trace_once, warm calls that run the compiled
// graph without running fn. See Note [Trace once].
#include <algorithm>

#include "runtime/compile/internal/capture.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/fake/fake_tensor.h"

namespace opspec::internal {

// Note [Trace once]
// Lazy capture runs fn on every call (see Note [Lazy capture]): that is what
// keeps C++ control flow right, and it costs every op a trip through the
// capture mode even when the graph is cached (~17 us for a 100-op program).
// A function whose ops depend only on its inputs' metadata (no branch on a
// value, no state of its own) can promise so with trace_once, as a function
// under jax.jit does: a call that captured one graph, with no graph break and
// no read of any tensor's data, becomes a TracedPlan: every input's exact
// dtype, device, sizes and strides and which inputs are the same tensor, the
// thread's dispatch key adjustments, where each graph input comes from (an
// input, or a tensor fn closed over, kept by reference so in-place updates
// show), and where each output comes from (a graph result, an input, or
// undefined). A later call whose inputs match a plan runs the plan's
// compiled graph on them and returns; fn does not run, so its C++ side
// effects (a counter, a print, a tensor stored outside) do not happen, and a
// closed-over tensor reassigned to another one is not seen. A call that made
// a tensor escape other than by returning it makes no plan. Calls under any
// mode, with tensor subclass or fake inputs, inside another capture, or
// whose inputs match no plan take the lazy path as usual (and may add a plan).

namespace {

// plain_call: nothing besides the compiled graph could see or change what a
// call does: no mode on any stack, no subclass or fake input.
bool plain_call(const std::vector<Tensor>& inputs) {
  if (!local_dispatch_key_set().modes.empty()) return false;
  return std::none_of(inputs.begin(), inputs.end(),
                      [](const Tensor& t) { return t.defined() && (t.impl()->subclass() || is_fake(t)); });
}

// same_as: the first input that is inputs[i] itself.
size_t same_as(const std::vector<Tensor>& inputs, size_t i) {
  if (!inputs[i].defined()) return i;
  for (size_t j = 0; j < i; ++j) {
    if (inputs[j].is_same(inputs[i])) return j;
  }
  return i;
}

bool matches(const TracedPlan& plan, const std::vector<Tensor>& inputs) {
  if (plan.inputs.size() != inputs.size()) return false;
  const LocalDispatchKeySet& tls = local_dispatch_key_set();
  if (!(tls.included == plan.included) || !(tls.excluded == plan.excluded)) return false;
  if (autograd::is_grad_enabled() != plan.grad_enabled) return false;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TracedPlan::InputMeta& m = plan.inputs[i];
    const Tensor& t = inputs[i];
    if (t.defined() != m.defined) return false;
    if (!t.defined()) continue;
    if (t.dtype() != m.dtype || t.device() != m.device || !std::ranges::equal(t.sizes(), m.sizes) ||
        !std::ranges::equal(t.strides(), m.strides) || same_as(inputs, i) != m.same_as) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::shared_ptr<const TracedPlan> find_plan(const CompiledState& state, const std::vector<Tensor>& inputs) {
  if (state.plans.empty() || !plain_call(inputs)) return nullptr;
  for (const auto& plan : state.plans) {
    if (matches(*plan, inputs)) return plan;
  }
  return nullptr;
}

void keep_plan(CompiledState& state, const std::vector<Tensor>& inputs, const std::vector<Tensor>& outputs,
               const LastGraph* last) {
  if (!plain_call(inputs)) return;
  if (last != nullptr && last->recording == nullptr) return;  // past cache_size_limit: ran eagerly
  auto plan = std::make_shared<TracedPlan>();
  const LocalDispatchKeySet& tls = local_dispatch_key_set();
  plan->included = tls.included;
  plan->excluded = tls.excluded;
  plan->grad_enabled = autograd::is_grad_enabled();
  plan->graph_grad_enabled = last != nullptr ? last->grad_enabled : plan->grad_enabled;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Tensor& t = inputs[i];
    TracedPlan::InputMeta m;
    m.defined = t.defined();
    if (m.defined) {
      m.dtype = t.dtype();
      m.device = t.device();
      m.sizes.assign(t.sizes().begin(), t.sizes().end());
      m.strides.assign(t.strides().begin(), t.strides().end());
    }
    m.same_as = same_as(inputs, i);
    plan->inputs.push_back(std::move(m));
  }
  auto input_index = [&](const Tensor& t) -> int {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (inputs[i].defined() && inputs[i].is_same(t)) return static_cast<int>(i);
    }
    return -1;
  };
  const std::vector<const TensorImpl*> no_results;
  const std::vector<const TensorImpl*>& results = last != nullptr ? last->results : no_results;
  if (last != nullptr) {
    for (const Tensor& t : last->inputs) {
      const int i = input_index(t);
      if (i >= 0) {
        plan->graph_inputs.push_back(i);
      } else {
        plan->kept.push_back(t);
        plan->graph_inputs.push_back(-static_cast<int>(plan->kept.size()));
      }
    }
    plan->recording = last->recording;
  }
  plan->num_results = results.size();
  std::vector<int64_t> returned(results.size(), 0);  // how many outputs hold each result
  for (const Tensor& t : outputs) {
    if (!t.defined()) {
      plan->outputs.push_back(TracedPlan::kUndefined);
      continue;
    }
    const auto r = std::find(results.begin(), results.end(), t.impl());
    if (r != results.end()) {
      const auto k = static_cast<size_t>(r - results.begin());
      plan->outputs.push_back(static_cast<int>(k));
      ++returned[k];
      continue;
    }
    const int i = input_index(t);
    if (i < 0) return;  // neither computed nor an input: nothing to return it from
    plan->outputs.push_back(-2 - i);
  }
  // A result held by anything but the returned vector escaped fn (stored
  // outside it): skipping fn would leave that holder with a stale tensor.
  for (size_t k = 0; k < results.size(); ++k) {
    // Held at flush yet not returned, or returned and held elsewhere too.
    if (returned[k] == 0 || results[k]->use_count() != returned[k]) return;
  }
  std::lock_guard<std::mutex> lock(state.mu);
  if (find_plan(state, inputs) != nullptr) return;  // made by a call under a mode meanwhile
  state.plans.insert(state.plans.begin(), std::move(plan));
  if (state.plans.size() > static_cast<size_t>(state.options.cache_size_limit)) state.plans.pop_back();
}

std::vector<Tensor> run_plan(CompiledState& state, const TracedPlan& plan, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> results;
  if (plan.recording != nullptr) {
    std::vector<Tensor> graph_inputs;
    graph_inputs.reserve(plan.graph_inputs.size());
    for (int g : plan.graph_inputs) {
      graph_inputs.push_back(g >= 0 ? inputs[static_cast<size_t>(g)] : plan.kept[static_cast<size_t>(-1 - g)]);
    }
    autograd::AutoGradMode grad_mode(plan.graph_grad_enabled);  // its entry mode: See Note [Grad mode nodes]
    results = plan.recording->entry->compiled(graph_inputs);
  }
  OPSPEC_CHECK(results.size() == plan.num_results, "compile: the backend returned ", results.size(),
               " outputs for a graph with ", plan.num_results);
  std::vector<Tensor> outputs;
  outputs.reserve(plan.outputs.size());
  for (int o : plan.outputs) {
    if (o >= 0) {
      outputs.push_back(results[static_cast<size_t>(o)]);
    } else if (o == TracedPlan::kUndefined) {
      outputs.emplace_back();
    } else {
      outputs.push_back(inputs[static_cast<size_t>(-2 - o)]);
    }
  }
  std::lock_guard<std::mutex> lock(state.mu);
  if (plan.recording != nullptr) ++state.stats.graphs_run;
  ++state.stats.traced_calls;
  return outputs;
}

}  // namespace opspec::internal
