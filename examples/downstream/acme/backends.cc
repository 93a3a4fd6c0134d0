// backends.cc: acme's compiler backends, registered by name so that
// compile(f, {.backend = "acme_eager"}) and a spec's `compile: {backend: acme_eager}`
// find them. See Note [Backends] in runtime/compile/backend.h.
#include <atomic>
#include <memory>
#include <mutex>

#include "acme/acme.h"
#include "runtime/compile/aot_eager.h"
#include "runtime/graph/interpreter.h"

namespace acme {

void register_ops();  // scaled_add.cc

namespace {
std::atomic<int> g_acme_eager_graphs{0};
}  // namespace

int acme_eager_graphs() { return g_acme_eager_graphs.load(); }
void reset_acme_eager_graphs() { g_acme_eager_graphs = 0; }

opspec::CompiledGraph acme_eager_backend(const opspec::Graph& graph, const std::vector<opspec::Tensor>& example_inputs) {
  ++g_acme_eager_graphs;
  // The graph dies with this call (Note [Backends]): keep a copy. Graphs with
  // dynamic dims must accept any size there.
  auto kept = std::make_shared<const opspec::Graph>(graph.clone());
  const opspec::RunGraphOptions options{.check_sizes = !opspec::has_dynamic_dims(example_inputs)};
  return [kept, options](const std::vector<opspec::Tensor>& inputs) {
    return opspec::run_graph(*kept, inputs, options);
  };
}

void register_all() {
  static std::once_flag once;
  std::call_once(once, [] {
    register_ops();
    opspec::register_backend("acme_eager", &acme_eager_backend);
    // aot_eager with acme's decompositions: compiled graphs run aten::add.Tensor
    // where the program called acme::scaled_add.
    opspec::register_backend("acme_decomposed", opspec::make_aot_eager_backend(&decompositions()));
  });
}

}  // namespace acme
