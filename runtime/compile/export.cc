// export.cc: export_program: the fullgraph check, the PreDispatch trace, the
// re-traces that find specialized dims and symbolic sizes, run() and str().
// See Note [Export] in export.h; the JSON form is in export_json.cc.
#include "runtime/compile/export.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_join.h"
#include "runtime/compile/backend.h"
#include "runtime/compile/internal/symbolic_sizes.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// trace: fn on tensors of these sizes, traced at PreDispatch on fakes.
Graph trace(const TracedFunction& fn, const std::vector<Tensor>& inputs, const std::vector<std::string>& names) {
  return make_fx(fn, {.pre_dispatch = true, .input_names = names})(inputs);
}

}  // namespace

ExportedProgram export_traced(const TracedFunction& fn, const std::vector<Tensor>& inputs,
                              const ExportOptions& options) {
  std::vector<std::string> names, sources;
  for (size_t i = 0; i < inputs.size(); ++i) {
    OPSPEC_CHECK(inputs[i].defined(), "export(", options.name, "): input ", i, " is undefined");
    names.push_back(i < options.input_names.size() ? options.input_names[i] : str_cat("x", i));
    sources.push_back(str_cat("L['", names.back(), "']"));
  }
  std::vector<uint64_t> dynamic(inputs.size(), 0);
  for (const auto& [name, dims] : options.dynamic_shapes) {
    const auto it = std::find(names.begin(), names.end(), name);
    OPSPEC_CHECK(it != names.end(), "export(", options.name, "): dynamic_shapes names '", name,
                 "', which is not an input (inputs: ", absl::StrJoin(names, ", "), ")");
    const size_t i = static_cast<size_t>(it - names.begin());
    for (int64_t dim : dims) {
      const int64_t d = wrap_dim(dim, inputs[i].dim(), "export: dynamic_shapes");
      OPSPEC_CHECK(d < 64, "export: dims beyond 63 cannot be dynamic");
      const int64_t size = inputs[i].sizes()[d];
      if (size < 2) {
        throw ConstraintViolationError(internal::constraint_violation(str_cat(sources[i], ".size()[", d, "]"), size,
                                                 "a size of 0 or 1 is specialized (0/1 specialization); "
                                                 "export with an example of size 2 or more"));
      }
      dynamic[i] |= uint64_t{1} << d;
    }
  }

  // One graph, or the first break named, on copies: fn may write its inputs.
  // Each copy is a leaf with its input's requires_grad: a clone is not a leaf
  // (grad(x) after backward failed before the break was named), and backward
  // through it reached the caller's input.
  {
    std::vector<Tensor> copies;
    for (const Tensor& t : inputs) {
      Tensor copy = ops::clone(t.detach());
      if (t.requires_grad()) copy.requires_grad_();
      copies.push_back(std::move(copy));
    }
    const CompiledFunction check(fn, {.backend = "eager", .dynamic = false, .input_names = names, .name = options.name});
    check(copies);
    const CompileStats stats = check.stats();
    if (!stats.breaks.empty()) {
      const GraphBreak& b = stats.breaks.front();
      throw GraphBreakError(str_cat("export(", options.name, ") needs one graph: graph break: ", b.reason,
                                    b.user_site.empty() ? "" : str_cat(" (at ", b.user_site, ")")));
    }
    // A grad mode change is a node of the one graph (See Note [Grad mode
    // nodes]); the PreDispatch trace below records it as well.
    OPSPEC_CHECK(stats.graphs_run <= 1, "export(", options.name, ") needs one graph, and the program ran ",
                 stats.graphs_run);
  }

  ExportedProgram ep;
  ep.name_ = options.name;
  ep.guards_ = GuardSet::make(inputs, names, sources, dynamic);
  Graph base = trace(fn, inputs, names);

  // Each symbol's size changed, alone: the graph must not change (Note [Export]).
  std::string failure;
  const internal::SymbolicSizes sizes =
      internal::symbolic_sizes(base, ep.guards_, inputs, [&](const std::vector<Tensor>& moved) -> std::optional<Graph> {
        try {
          return trace(fn, moved, names);
        } catch (const std::exception& e) {
          failure = e.what();
          return std::nullopt;
        }
      });
  if (sizes.specialized) {
    const ShapeSymbol& s = ep.guards_.symbols[*sizes.specialized];
    const auto [i, d] = s.uses.front();
    throw ConstraintViolationError(internal::constraint_violation(
        str_cat(sources[i], ".size()[", d, "]"), s.hint,
        failure.empty() ? std::string("the program's ops or their arguments change with it (a size passed to an op as a number?)")
                        : str_cat("with ", sizes.specialized_value, " the program fails: ", failure)));
  }
  ep.node_sizes_ = sizes.metas;
  const std::vector<Node*> nodes = base.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    if (nodes[i]->op() == NodeOp::kPlaceholder) ep.inputs_.push_back({nodes[i]->name(), "user_input", ep.node_sizes_[i]});
  }
  if (Node* out = base.output()) {
    for (const NodeArg& a : out->args()) {
      const Node* n = a.as_node();
      const size_t index = static_cast<size_t>(std::find(nodes.begin(), nodes.end(), n) - nodes.begin());
      ep.outputs_.push_back({n->name(), "user_output", ep.node_sizes_[index]});
    }
  }
  ep.graph_ = std::make_shared<const Graph>(std::move(base));
  return ep;
}

std::vector<std::string> ExportedProgram::range_constraints() const {
  std::vector<std::string> out;
  for (const ShapeSymbol& s : guards_.symbols) out.push_back(str_cat(s.name, ": VR[2, int_oo]"));
  return out;
}

std::vector<Tensor> ExportedProgram::run(const std::vector<Tensor>& inputs) const {
  OPSPEC_CHECK(graph_ != nullptr, "ExportedProgram::run: the program is empty (default-constructed)");
  if (auto failure = guards_.first_failure(inputs)) {
    OPSPEC_FAIL("ExportedProgram ", name_, ": the inputs do not satisfy its guards: ", *failure);
  }
  return run_graph(*graph_, inputs, {.check_sizes = !guards_.has_dynamic_dims()});
}

std::string ExportedProgram::str() const {
  if (graph_ == nullptr) return "ExportedProgram: (empty)\n";
  std::string out = str_cat("ExportedProgram ", name_, ":\n", internal::symbolic_str(*graph_, node_sizes_, "  "));
  auto specs = [](const std::vector<TensorSpec>& list) {
    std::vector<std::string> parts;
    for (const TensorSpec& s : list) parts.push_back(str_cat(s.name, ": ", s.meta, " (", s.kind, ")"));
    return absl::StrJoin(parts, ", ");
  };
  str_append(&out, "Graph signature: inputs [", specs(inputs_), "], outputs [", specs(outputs_), "]\n");
  str_append(&out, "Range constraints: {", absl::StrJoin(range_constraints(), ", "), "}\n");
  str_append(&out, "Guards:\n");
  for (const std::string& g : guards_.code()) str_append(&out, "  ", g, "\n");
  return out;
}

}  // namespace opspec
