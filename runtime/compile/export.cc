// export.cc: export_program: the fullgraph check, the PreDispatch trace, the
// re-traces that find specialized dims and symbolic sizes, run() and str().
// See Note [Export] in export.h; the JSON form is in export_json.cc.
#include "runtime/compile/export.h"

#include <algorithm>
#include <map>
#include <optional>

#include "absl/strings/str_join.h"
#include "runtime/compile/backend.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

// trace: fn on tensors of these sizes, traced at PreDispatch on fakes.
Graph trace(const TracedFunction& fn, const std::vector<Tensor>& inputs, const std::vector<std::string>& names) {
  return make_fx(fn, {.pre_dispatch = true, .input_names = names})(inputs);
}

// resized: inputs with symbol s's dims set to value (contiguous, uninitialised).
std::vector<Tensor> resized(const std::vector<Tensor>& inputs, const ShapeSymbol& s, int64_t value) {
  std::vector<Tensor> out = inputs;
  std::vector<SizeVec> sizes;
  for (const Tensor& t : inputs) sizes.emplace_back(t.sizes().begin(), t.sizes().end());
  for (const auto& [i, d] : s.uses) sizes[i][d] = value;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (SizeVec(inputs[i].sizes().begin(), inputs[i].sizes().end()) == sizes[i]) continue;
    out[i] = ops::empty(sizes[i], {.dtype = inputs[i].dtype(), .device = inputs[i].device()});
  }
  return out;
}

// linear: "s0", "4*s0", "s0 + 1", "2*s0 - 3".
std::string linear(int64_t a, const std::string& s, int64_t b) {
  std::string out = a == 1 ? s : str_cat(a, "*", s);
  if (b > 0) str_append(&out, " + ", b);
  if (b < 0) str_append(&out, " - ", -b);
  return out;
}

// SymbolicSizes: the size expressions of every node's outputs, from the base
// trace and one trace per symbol with that symbol's size changed.
class SymbolicSizes {
 public:
  SymbolicSizes(const Graph& base, const GuardSet& guards, std::vector<Graph> moved, std::vector<int64_t> moved_to)
      : base_(base), guards_(guards), moved_(std::move(moved)), moved_to_(std::move(moved_to)) {}

  // dim: the expression of output `out`'s dim d of node `index`.
  std::string dim(size_t index, size_t out, size_t d) const {
    const int64_t v0 = size_of(base_, index, out, d);
    std::vector<size_t> changed;
    std::vector<int64_t> slope;
    for (size_t k = 0; k < moved_.size(); ++k) {
      const int64_t vk = size_of(moved_[k], index, out, d);
      if (vk == v0) continue;
      const int64_t dx = moved_to_[k] - guards_.symbols[k].hint;
      if ((vk - v0) % dx != 0) return str_cat(v0);  // not linear in the symbol: shown as traced
      changed.push_back(k);
      slope.push_back((vk - v0) / dx);
    }
    if (changed.empty()) return str_cat(v0);
    // A product c*s0*s1: each symbol's slope is the value over its size (a sum's slopes are constants).
    if (changed.size() >= 2) {
      bool product = true;
      int64_t c = v0;
      std::vector<std::string> factors;
      for (size_t j = 0; j < changed.size() && product; ++j) {
        const ShapeSymbol& s = guards_.symbols[changed[j]];
        product = v0 % s.hint == 0 && slope[j] == v0 / s.hint && c % s.hint == 0;
        if (product) c /= s.hint;
        factors.push_back(s.name);
      }
      if (product) return str_cat(c == 1 ? "" : str_cat(c, "*"), absl::StrJoin(factors, "*"));
    }
    int64_t rest = v0;
    std::vector<std::string> terms;
    for (size_t j = 0; j < changed.size(); ++j) {
      const ShapeSymbol& s = guards_.symbols[changed[j]];
      rest -= slope[j] * s.hint;
      terms.push_back(slope[j] == 1 ? s.name : str_cat(slope[j], "*", s.name));
    }
    if (terms.size() == 1) return linear(slope[0], guards_.symbols[changed[0]].name, rest);
    std::string sum = absl::StrJoin(terms, " + ");
    if (rest > 0) str_append(&sum, " + ", rest);
    if (rest < 0) str_append(&sum, " - ", -rest);
    return sum;
  }

  // meta: "f32[s0, 3]" for node `index`, or "" when it has not exactly one tensor output.
  std::string meta(size_t index) const {
    const Node* n = base_.nodes()[index];
    if (n->meta().size() != 1 || !n->meta()[0]) return "";
    const TensorMeta& m = *n->meta()[0];
    std::vector<std::string> dims;
    for (size_t d = 0; d < m.sizes.size(); ++d) dims.push_back(dim(index, 0, d));
    std::string s = str_cat(dtype_short_name(m.dtype), "[", absl::StrJoin(dims, ", "), "]");
    if (m.device != kCPU) str_append(&s, " (", m.device.str(), ")");
    return s;
  }

 private:
  static int64_t size_of(const Graph& g, size_t index, size_t out, size_t d) {
    const OutputMeta& m = g.nodes()[index]->meta()[out];
    return m ? m->sizes[d] : 0;
  }
  const Graph& base_;
  const GuardSet& guards_;
  std::vector<Graph> moved_;
  std::vector<int64_t> moved_to_;
};

std::string violation(const std::string& source, int64_t value, std::string_view why) {
  return str_cat("Constraints violated (", source, ")!\n  - Not all values of ", source,
                 " in the specified range are valid because ", source, " was inferred to be a constant (", value,
                 "): ", why);
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
        throw ConstraintViolationError(violation(str_cat(sources[i], ".size()[", d, "]"), size,
                                                 "a size of 0 or 1 is specialized (0/1 specialization); "
                                                 "export with an example of size 2 or more"));
      }
      dynamic[i] |= uint64_t{1} << d;
    }
  }

  // One graph, or the first break named, on copies: fn may write its inputs.
  {
    std::vector<Tensor> copies;
    for (const Tensor& t : inputs) copies.push_back(ops::clone(t));
    const CompiledFunction check(fn, {.backend = "eager", .dynamic = false, .input_names = names, .name = options.name});
    check(copies);
    const CompileStats stats = check.stats();
    if (!stats.breaks.empty()) {
      const GraphBreak& b = stats.breaks.front();
      throw GraphBreakError(str_cat("export(", options.name, ") needs one graph: graph break: ", b.reason,
                                    b.user_site.empty() ? "" : str_cat(" (at ", b.user_site, ")")));
    }
  }

  ExportedProgram ep;
  ep.name_ = options.name;
  ep.guards_ = GuardSet::make(inputs, names, sources, dynamic);
  Graph base = trace(fn, inputs, names);
  const uint64_t program = base.structural_hash(/*include_metadata=*/false);

  // Each symbol's size changed, alone: the graph must not change (Note [Export]).
  std::vector<Graph> moved;
  std::vector<int64_t> moved_to;
  int64_t largest = 0;
  for (const ShapeSymbol& s : ep.guards_.symbols) largest = std::max(largest, s.hint);
  for (size_t k = 0; k < ep.guards_.symbols.size(); ++k) {
    const ShapeSymbol& s = ep.guards_.symbols[k];
    const auto [i, d] = s.uses.front();
    const std::string source = str_cat(sources[i], ".size()[", d, "]");
    const int64_t value = largest + 1 + static_cast<int64_t>(k);
    std::optional<Graph> g;
    try {
      g = trace(fn, resized(inputs, s, value), names);
    } catch (const std::exception& e) {
      throw ConstraintViolationError(violation(source, s.hint, str_cat("with ", value, " the program fails: ", e.what())));
    }
    if (g->structural_hash(false) != program) {
      throw ConstraintViolationError(violation(
          source, s.hint, "the program's ops or their arguments change with it (a size passed to an op as a number?)"));
    }
    moved.push_back(std::move(*g));
    moved_to.push_back(value);
  }

  const SymbolicSizes sizes(base, ep.guards_, std::move(moved), std::move(moved_to));
  const std::vector<Node*> nodes = base.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    ep.node_sizes_.push_back(nodes[i]->op() == NodeOp::kOutput ? "" : sizes.meta(i));
    if (nodes[i]->op() == NodeOp::kPlaceholder) {
      ep.inputs_.push_back({nodes[i]->name(), "user_input", ep.node_sizes_.back()});
    }
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
  std::string out = str_cat("ExportedProgram ", name_, ":\n");
  const std::vector<Node*> nodes = graph_->nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string line = nodes[i]->str();
    if (i < node_sizes_.size() && !node_sizes_[i].empty()) {
      if (const size_t colon = line.rfind(" : "); colon != std::string::npos) line = line.substr(0, colon + 3) + node_sizes_[i];
    }
    str_append(&out, "  ", line, "\n");
  }
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
