// backend.h: compiler backends: what compile() hands each captured graph to,
// and the registry of named backends (PyTorch's register_backend /
// list_backends). See Note [Backends].
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/graph/graph.h"

namespace opspec {

// Note [Backends]
// A backend receives a captured graph and example inputs (fake tensors with
// the metadata of the real inputs, one per placeholder) and returns a
// CompiledGraph: a function from real inputs to the graph's outputs. It is
// called once per cache miss; the CompiledGraph is called on every hit, so
// work that does not depend on input values (planning, fusion, decomposition)
// belongs in the backend, not in the CompiledGraph. Built in: "eager" (the
// interpreter), "aot_eager" (re-traced to primitive aten ops with a
// decomposition table, then interpreted) and "fused" (elementwise chains run
// as single-pass fused CPU kernels).

// CompiledGraph: runs a compiled graph on real inputs (one per placeholder).
using CompiledGraph = std::function<std::vector<Tensor>(const std::vector<Tensor>& inputs)>;

// Backend: compiles graph for inputs like example_inputs. The graph outlives
// neither the call nor the returned CompiledGraph: clone what must be kept.
using Backend = std::function<CompiledGraph(const Graph& graph, const std::vector<Tensor>& example_inputs)>;

// register_backend: makes backend available by name (replacing any previous
// one), with tags such as "debug" or "experimental" that list_backends can
// leave out (PyTorch's register_backend(tags=...)).
void register_backend(std::string name, Backend backend, std::vector<std::string> tags = {});
// lookup_backend: the backend called name; throws opspec::Error listing the
// registered names when there is none.
Backend lookup_backend(std::string_view name);
// ListBackendsOptions: which backends list_backends leaves out.
struct ListBackendsOptions {
  // exclude_tags: backends with any of these tags are left out (PyTorch's
  // default; the built-in eager and aot_eager are tagged "debug").
  std::vector<std::string> exclude_tags = {"debug", "experimental"};
};
// list_backends: the registered names, sorted, without those excluded by tag
// (`list_backends({.exclude_tags = {}})` lists every one).
std::vector<std::string> list_backends(const ListBackendsOptions& options = {});
// backend_tags: the tags backend name was registered with; throws for an unknown name.
std::vector<std::string> backend_tags(std::string_view name);

// has_dynamic_dims: some example input has dims marked dynamic, which the
// compiled graph must accept at any size (see Note [Guards]).
bool has_dynamic_dims(const std::vector<Tensor>& example_inputs);

// eager_backend: runs the graph node by node through the dispatcher.
CompiledGraph eager_backend(const Graph& graph, const std::vector<Tensor>& example_inputs);
// fused_backend: groups elementwise chains into fused CPU kernels; other ops
// run through their normal kernels. See kernels/cpu/fused.h.
CompiledGraph fused_backend(const Graph& graph, const std::vector<Tensor>& example_inputs);

}  // namespace opspec
