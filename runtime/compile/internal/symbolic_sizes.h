// symbolic_sizes.h: internal: the sizes of a graph's nodes as expressions of
// its guards' symbols (f32[s0, 3], f32[4*s0]), found by re-tracing. See Note
// [Symbolic sizes by re-tracing].
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "runtime/compile/guards.h"
#include "runtime/graph/graph.h"

namespace opspec::internal {

// Note [Symbolic sizes by re-tracing]
// opspec traces with concrete sizes (no ShapeEnv). To print a graph's sizes
// as PyTorch does, the graph's program is traced again once per symbol, with
// that symbol's dims given a new size (larger than every size seen, so no
// two symbols collide): a node dim that does not move is a constant; one
// that moves with one symbol by an integer slope is linear in it ("4*s0",
// "s0 + 1"); one that moves with several is a product when each slope is the
// value over that symbol's size ("2*s0*s1"), else a sum ("s0 + s1"). A trace
// that fails, or whose program differs, means the program specialized the
// symbol: export reports it as a constraint violation; compile() prints that
// graph's traced sizes.

// Retrace: the program traced on inputs of other sizes; nullopt when it fails.
using Retrace = std::function<std::optional<Graph>(const std::vector<Tensor>& inputs)>;

// SymbolicSizes: the outcome: each node's meta text ("" when it has not
// exactly one tensor output), or (metas left empty) the first symbol the
// program specialized.
struct SymbolicSizes {
  std::vector<std::string> metas;
  std::optional<size_t> specialized;  // index into guards.symbols
  std::string specialized_value;      // the size it was moved to
};

// symbolic_sizes: re-traces base's program (See the Note) on inputs like
// examples with each symbol moved.
SymbolicSizes symbolic_sizes(const Graph& base, const GuardSet& guards, const std::vector<Tensor>& examples,
                             const Retrace& retrace);

// symbolic_str: base.str() with each node's meta replaced by metas[i] when not empty.
std::string symbolic_str(const Graph& base, const std::vector<std::string>& metas, std::string_view indent = "");

// constraint_violation: PyTorch's text for a dynamic dim (source, traced
// with value) that the program specialized, with why.
std::string constraint_violation(const std::string& source, int64_t value, std::string_view why);

// moved_inputs: examples with symbol s's dims set to value (contiguous, uninitialised).
std::vector<Tensor> moved_inputs(const std::vector<Tensor>& examples, const ShapeSymbol& s, int64_t value);

}  // namespace opspec::internal
