// decomposition_table.h: DecompositionTable, op -> a function in terms of
// other ops, which make_fx and the compiler's backends apply while tracing
// (PyTorch's decomposition_table). See Note [Decomposition tables].
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "runtime/dispatch/library.h"

namespace opspec {

// Note [Decomposition tables]
// A table entry replaces an op, while tracing, by the ops its function calls:
// the function runs on the traced (fake or proxy) tensors, so the graph
// records its parts instead of the op. Entries are kernels with the op's C++
// signature (checked against the schema when added) or boxed functions, so a
// table is a plain value a user can build, merge and pass around. Nothing
// checks that an entry is right: a table that decomposes cos into sin traces
// without complaint, and it takes a harness comparing eager and traced runs
// (op logs with hashes) to catch it, as in PyTorch.

// DecompositionTable: op -> decomposition.
//   DecompositionTable t;
//   t.add("aten::silu", [](const Tensor& x) { return ops::mul(x, ops::sigmoid(x)); });
class DecompositionTable {
 public:
  // add: fn as op_name's decomposition (replacing any previous one). fn is a
  // function pointer or captureless lambda with the op's C++ signature (see
  // runtime/dispatch/signature.h), or a boxed `void(const OperatorHandle&,
  // DispatchKeySet, Stack&)` callable. Throws for unknown ops or a wrong signature.
  template <class Fn>
  DecompositionTable& add(std::string_view op_name, Fn&& fn) {
    const OperatorHandle& op = Dispatcher::singleton().get(op_name);
    entries_[&op] = internal::make_kernel(op, DispatchKey::kCompositeImplicit, std::forward<Fn>(fn), "/decomposition");
    return *this;
  }
  // remove: drops op_name's entry, if any.
  DecompositionTable& remove(std::string_view op_name);
  // merge: adds every entry of other (other's entries win).
  DecompositionTable& merge(const DecompositionTable& other);

  // contains: whether op has an entry.
  bool contains(const OperatorHandle& op) const { return entries_.contains(&op); }
  // apply: runs op's decomposition on the stack (its arguments on entry, its
  // results after); returns false, leaving the stack alone, when op has none.
  bool apply(const OperatorHandle& op, Stack& stack) const;
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  // op_names: the ops with entries, sorted.
  std::vector<std::string> op_names() const;

 private:
  absl::flat_hash_map<const OperatorHandle*, KernelFunction> entries_;
};

// default_decompositions: the runtime's standard decompositions: every builtin
// composite op's own decomposition (linear, matmul, softmax, layer_norm,
// reshape, ...) plus PyTorch's core decompositions of silu, gelu, sigmoid,
// _softmax, _log_softmax, native_layer_norm, addmm and rsub into simpler
// elementwise ops and reductions, which a fusing backend can fuse.
const DecompositionTable& default_decompositions();

}  // namespace opspec
