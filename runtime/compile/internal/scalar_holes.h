// scalar_holes.h: internal: numbers a compiled program reads with item()
// and passes back to ops, made graph inputs after one recompile. See Note
// [Values read with item()].
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "runtime/core/scalar.h"
#include "runtime/graph/graph.h"

namespace opspec::internal {

// Note [Values read with item()]
// A value fn reads with item() and passes to an op (`mul(x, n)`) enters the
// next graph as a wrapped-number constant, so a new value is a new program.
// As Dynamo guards on a Python int and makes it dynamic after one recompile
// (automatic dynamic), the compiler (a) names the value in the recompile
// reason, `L['n'].item() == 3` with what it is now, rather than "the program
// changed", and (b) on that recompile turns each constant that changed to a
// value read with item() into a graph input (a "hole", fed the current value
// as a wrapped number at every call), so later values reuse the graph. Other
// numbers (a C++ variable fn closes over) stay specialized, as Dynamo
// specializes a closure's float, and recompile with a reason naming the op
// and argument. A hole is keyed by its place (the node's position and the
// argument's index), so a constant that happens to
// equal the value but never changed stays a constant.

// ItemRead: a value fn read with item() during a call, and from what
// ("L['x']" for an input of fn, "a tensor" otherwise).
struct ItemRead {
  std::string source;
  Scalar value;
};

// ScalarSlot: a wrapped-number argument: the call's position among the
// graph's nodes and the argument's index.
struct ScalarSlot {
  size_t node = 0;
  size_t arg = 0;
  friend bool operator==(const ScalarSlot&, const ScalarSlot&) = default;
};

// ConstantChange: a slot whose number differs between two graphs of one program.
struct ConstantChange {
  ScalarSlot slot;
  Scalar before, after;
  std::string op;  // the call's op, for messages
};

// constant_changes: where b's wrapped-number constants differ from a's, or
// nullopt when the graphs differ in anything else (ops, wiring, arguments).
std::optional<std::vector<ConstantChange>> constant_changes(const Graph& a, const Graph& b);

// with_holes: g with the numbers at slots made inputs: one placeholder each,
// after g's own, in the order of slots.
Graph with_holes(const Graph& g, const std::vector<ScalarSlot>& slots);

// hole_values: the numbers g holds at slots, as wrapped-number tensors: the
// extra inputs of with_holes(g, slots).
std::vector<Tensor> hole_values(const Graph& g, const std::vector<ScalarSlot>& slots);

// holes_hash: g's program hash with the numbers at slots left out.
uint64_t holes_hash(const Graph& g, const std::vector<ScalarSlot>& slots);

}  // namespace opspec::internal
