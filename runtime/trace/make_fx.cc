#include "runtime/trace/make_fx.h"

#include <memory>
#include <optional>

#include "runtime/dispatch/local_dispatch_key_set.h"
#include "runtime/trace/proxy_tensor.h"

namespace opspec {

Graph Tracer::operator()(const std::vector<Tensor>& inputs) const {
  const bool fake = options_.tracing_mode == TracingMode::kFake;
  OPSPEC_CHECK(fake || options_.fake_mode == nullptr, "make_fx: fake_mode is only used with TracingMode::kFake");
  std::unique_ptr<FakeTensorMode> own_fake_mode;
  FakeTensorMode* fake_mode = options_.fake_mode;
  if (fake && fake_mode == nullptr) {
    own_fake_mode = std::make_unique<FakeTensorMode>();
    fake_mode = own_fake_mode.get();
  }

  Graph graph;
  ProxyTensorMode proxy(graph, options_.pre_dispatch ? DispatchKey::kPreDispatch : DispatchKey::kPython,
                        options_.decomposition_table);
  std::vector<Tensor> traced_inputs;
  traced_inputs.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    OPSPEC_CHECK(inputs[i].defined(), "make_fx: input ", i, " is an undefined tensor");
    const Tensor t = fake ? fake_mode->from_real(inputs[i]) : inputs[i];
    const std::string name = i < options_.input_names.size() ? options_.input_names[i] : str_cat("arg", i, "_1");
    proxy.track(t, graph.add_placeholder(name, TensorMeta::of(t)));
    traced_inputs.push_back(t);
  }

  std::vector<Tensor> outputs;
  {
    // Guards unwind in reverse on any exception, restoring the mode stack
    // and the thread-local key sets exactly.
    EnablePythonDispatcherGuard overrides;
    std::optional<EnablePreDispatchGuard> pre_dispatch;
    if (options_.pre_dispatch) pre_dispatch.emplace();
    std::optional<ModeGuard> fake_guard;
    if (fake) fake_guard.emplace(*fake_mode);
    ModeGuard proxy_guard(proxy);
    if (options_.pre_dispatch) proxy.sync_grad_mode();  // the entry mode (See Note [Grad mode nodes])
    outputs = fn_(traced_inputs);
    if (options_.pre_dispatch) proxy.sync_grad_mode();  // a restore after the last op
  }

  std::vector<Node*> results;
  results.reserve(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    OPSPEC_CHECK(outputs[i].defined(), "make_fx: output ", i, " of the traced function is an undefined tensor");
    results.push_back(proxy.node_or_constant(outputs[i]));
  }
  graph.set_output(std::move(results));
  return graph;
}

}  // namespace opspec
