#include "runtime/compile/aot_eager.h"

#include <memory>

#include "runtime/compile/logging.h"
#include "runtime/core/grad_mode.h"
#include "runtime/graph/interpreter.h"
#include "runtime/trace/make_fx.h"

namespace opspec {

Backend make_aot_eager_backend(const DecompositionTable* decompositions) {
  return [decompositions](const Graph& graph, const std::vector<Tensor>& example_inputs) -> CompiledGraph {
    // The example inputs are fake, so re-tracing computes nothing. Grad mode
    // is off: gradients are with_aot_autograd's (its joint graph), and an
    // input that requires grad may be written in place (a non-leaf's history
    // is rebased by the caller; See Note [Primals of non-leaf inputs]).
    autograd::NoGradGuard no_grad;
    auto aten = std::make_shared<const Graph>(
        make_fx([&graph](const std::vector<Tensor>& in) { return run_graph(graph, in); },
                {.decomposition_table = decompositions})(example_inputs));
    if (log_enabled("graph_code")) log_message("graph_code", str_cat("aot_eager graph:\n", aten->str()));
    const RunGraphOptions options{.check_sizes = !has_dynamic_dims(example_inputs)};
    const GraphRunner runner(*aten, options);
    return [aten, runner](const std::vector<Tensor>& inputs) { return runner(inputs); };
  };
}

}  // namespace opspec
