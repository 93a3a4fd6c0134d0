// symbolic_sizes.cc: See Note [Symbolic sizes by re-tracing] in internal/symbolic_sizes.h.
#include "runtime/compile/internal/symbolic_sizes.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace {

// linear: "s0", "4*s0", "s0 + 1", "2*s0 - 3".
std::string linear(int64_t a, const std::string& s, int64_t b) {
  std::string out = a == 1 ? s : str_cat(a, "*", s);
  if (b > 0) str_append(&out, " + ", b);
  if (b < 0) str_append(&out, " - ", -b);
  return out;
}

int64_t size_of(const Graph& g, size_t index, size_t d) {
  const OutputMeta& m = g.nodes()[index]->meta()[0];
  return m && d < m->sizes.size() ? m->sizes[d] : 0;
}

// dim_expression: dim d of node `index` from the base trace and the moved ones.
std::string dim_expression(const Graph& base, const GuardSet& guards, const std::vector<Graph>& moved,
                           const std::vector<int64_t>& moved_to, size_t index, size_t d) {
  const int64_t v0 = size_of(base, index, d);
  std::vector<size_t> changed;
  std::vector<int64_t> slope;
  for (size_t k = 0; k < moved.size(); ++k) {
    const int64_t vk = size_of(moved[k], index, d);
    if (vk == v0) continue;
    const int64_t dx = moved_to[k] - guards.symbols[k].hint;
    if ((vk - v0) % dx != 0) return str_cat(v0);  // not linear in the symbol: shown as traced
    changed.push_back(k);
    slope.push_back((vk - v0) / dx);
  }
  if (changed.empty()) return str_cat(v0);
  if (changed.size() == 1) {
    const ShapeSymbol& s = guards.symbols[changed[0]];
    return linear(slope[0], s.name, v0 - slope[0] * s.hint);
  }
  // A product c*s0*s1: each symbol's slope is the value over its size (a sum's slopes are constants).
  bool product = true;
  int64_t c = v0;
  std::vector<std::string> factors;
  for (size_t j = 0; j < changed.size() && product; ++j) {
    const ShapeSymbol& s = guards.symbols[changed[j]];
    product = v0 % s.hint == 0 && slope[j] == v0 / s.hint && c % s.hint == 0;
    if (product) c /= s.hint;
    factors.push_back(s.name);
  }
  if (product) return str_cat(c == 1 ? "" : str_cat(c, "*"), absl::StrJoin(factors, "*"));
  int64_t rest = v0;
  std::vector<std::string> terms;
  for (size_t j = 0; j < changed.size(); ++j) {
    const ShapeSymbol& s = guards.symbols[changed[j]];
    rest -= slope[j] * s.hint;
    terms.push_back(slope[j] == 1 ? s.name : str_cat(slope[j], "*", s.name));
  }
  std::string sum = absl::StrJoin(terms, " + ");
  if (rest > 0) str_append(&sum, " + ", rest);
  if (rest < 0) str_append(&sum, " - ", -rest);
  return sum;
}

}  // namespace

std::string constraint_violation(const std::string& source, int64_t value, std::string_view why) {
  return str_cat("Constraints violated (", source, ")!\n  - Not all values of ", source,
                 " in the specified range are valid because ", source, " was inferred to be a constant (", value,
                 "): ", why);
}

std::vector<Tensor> moved_inputs(const std::vector<Tensor>& examples, const ShapeSymbol& s, int64_t value) {
  std::vector<Tensor> out = examples;
  std::vector<SizeVec> sizes;
  for (const Tensor& t : examples) sizes.emplace_back(t.sizes().begin(), t.sizes().end());
  for (const auto& [i, d] : s.uses) sizes[i][d] = value;
  for (size_t i = 0; i < examples.size(); ++i) {
    if (SizeVec(examples[i].sizes().begin(), examples[i].sizes().end()) == sizes[i]) continue;
    out[i] = ops::empty(sizes[i], {.dtype = examples[i].dtype(), .device = examples[i].device()});
  }
  return out;
}

SymbolicSizes symbolic_sizes(const Graph& base, const GuardSet& guards, const std::vector<Tensor>& examples,
                             const Retrace& retrace) {
  SymbolicSizes out;
  const uint64_t program = base.structural_hash(/*include_metadata=*/false);
  std::vector<Graph> moved;
  std::vector<int64_t> moved_to;
  int64_t largest = 0;
  for (const ShapeSymbol& s : guards.symbols) largest = std::max(largest, s.hint);
  for (size_t k = 0; k < guards.symbols.size(); ++k) {
    const int64_t value = largest + 1 + static_cast<int64_t>(k);
    std::optional<Graph> g = retrace(moved_inputs(examples, guards.symbols[k], value));
    if (!g || g->structural_hash(false) != program || g->size() != base.size()) {
      out.specialized = k;
      out.specialized_value = str_cat(value);
      return out;  // no metas: the caller raises, or drops the symbol and asks again
    }
    moved.push_back(std::move(*g));
    moved_to.push_back(value);
  }
  const std::vector<Node*> nodes = base.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    const Node* n = nodes[i];
    if (n->op() == NodeOp::kOutput || n->meta().size() != 1 || !n->meta()[0]) {
      out.metas.emplace_back();
      continue;
    }
    const TensorMeta& m = *n->meta()[0];
    std::vector<std::string> dims;
    for (size_t d = 0; d < m.sizes.size(); ++d) {
      dims.push_back(dim_expression(base, guards, moved, moved_to, i, d));
    }
    std::string text = str_cat(dtype_short_name(m.dtype), "[", absl::StrJoin(dims, ", "), "]");
    if (m.device != kCPU) str_append(&text, " (", m.device.str(), ")");
    out.metas.push_back(std::move(text));
  }
  return out;
}

std::string symbolic_str(const Graph& base, const std::vector<std::string>& metas, std::string_view indent) {
  std::string out;
  const std::vector<Node*> nodes = base.nodes();
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string line = nodes[i]->str();
    if (i < metas.size() && !metas[i].empty()) {
      if (const size_t colon = line.rfind(" : "); colon != std::string::npos) line = line.substr(0, colon + 3) + metas[i];
    }
    str_append(&out, indent, line, "\n");
  }
  return out;
}

}  // namespace opspec::internal
