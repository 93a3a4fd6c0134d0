// guards.h: the checks a compiled graph is guarded by (dtype, device, rank,
// sizes and strides of every graph input), their failure messages in
// PyTorch's words, and mark_dynamic / mark_static. See Note [Guards].
#pragma once

#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "runtime/core/tensor.h"

namespace opspec {

// Note [Guards]
// A compiled graph may run only on inputs like those it was captured with.
// Each graph input gets a TensorGuard recording its dtype, device, rank,
// sizes and strides. A dynamic dim (mark_dynamic; every dim under
// CompileOptions::dynamic = true except those marked static; a dim whose
// size changed once, under automatic dynamic, See Note [Automatic dynamic]
// in compile.cc) is a symbol with PyTorch's range [2, inf): its size is left
// out of the tensor's check, strides are then checked only as contiguity,
// and GuardSet checks `2 <= L['x'].size()[0]` instead, so sizes 0 and 1 are
// specialized as in PyTorch (0/1 specialization: a dim of size 0 or 1 is
// never made dynamic, and a dynamic graph refuses them). Dynamic dims with
// the same size share one symbol and are guarded equal, as PyTorch's duck
// shaping: a graph traced with x and y both of size 4 may broadcast one
// against the other. Sizes that a program passes to an op as arguments
// (view([8, 3])) are part of the graph itself, so a new size there gives a
// new graph whatever the marks say. Guards name fn's inputs by PyTorch's
// source, L['x'] (other graph inputs, results of an earlier graph or tensors
// fn closed over, by their placeholder name), and a failing guard is
// reported in PyTorch's words: "tensor 'L['x']' size mismatch at index 0.
// expected 3, actual 4", or the failing symbolic guard itself.

// mark_dynamic: dim of t may change between calls without a recompile.
// Calling it while a compiled function is being captured throws
// GraphBreakError (PyTorch's mark_dynamic is forbid_in_graph).
void mark_dynamic(const Tensor& t, int64_t dim);
// mark_static: dim of t stays guarded even when compiling with dynamic = true
// (mark_dynamic wins when both are set, as in PyTorch).
void mark_static(const Tensor& t, int64_t dim);

// TensorGuard: what one graph input must look like, apart from its symbolic dims.
struct TensorGuard {
  std::string name;    // the graph's placeholder name
  std::string source;  // PyTorch's source: "L['x']" for fn's inputs, else the name
  DType dtype = DType::kFloat32;
  Device device = kCPU;
  SizeVec sizes;
  SizeVec strides;
  uint64_t dynamic_dims = 0;  // bit d: dim d is a symbol (its size is not checked here)
  bool contiguous = true;

  // make: the guard for t with the given dynamic dims (dims of size 0 or 1 are never dynamic).
  static TensorGuard make(std::string name, std::string source, const Tensor& t, uint64_t dynamic_dims);
  // failure: why t does not pass (dtype, device, rank, static sizes, strides), or nullopt.
  std::optional<std::string> failure(const Tensor& t) const;
};

// ShapeSymbol: one symbolic size (s0, s1, ...): every (input, dim) it stands for.
struct ShapeSymbol {
  std::string name;
  int64_t hint = 0;  // the size it was traced with
  std::vector<std::pair<size_t, int64_t>> uses;  // (input, dim), the first defines it
};

// GuardSet: the guards of every input of one graph.
struct GuardSet {
  std::vector<TensorGuard> tensors;
  std::vector<ShapeSymbol> symbols;

  // make: guards for inputs (names and sources per input, dynamic_dims per
  // input as bits); allocates the symbols in input order, duck-shaped.
  static GuardSet make(absl::Span<const Tensor> inputs, const std::vector<std::string>& names,
                       const std::vector<std::string>& sources, const std::vector<uint64_t>& dynamic_dims);
  // first_failure: the first guard inputs fail, or nullopt when all pass.
  std::optional<std::string> first_failure(absl::Span<const Tensor> inputs) const;
  // has_dynamic_dims: some input has a symbolic dim.
  bool has_dynamic_dims() const { return !symbols.empty(); }
  // summary: one line, "tensor 'x': f32[s0, 3] contiguous cpu; tensor 'w': f32[3, 2] stride [2, 1] cpu".
  std::string summary() const;
  // code: every guard as PyTorch's TORCH_LOGS=guards prints it, one per line:
  // "TENSOR_MATCH: check_tensor(L['x'], torch.float32, device=cpu, size=[None, 3], stride=[3, 1])",
  // "LAMBDA_GUARD: 2 <= L['x'].size()[0]", "LAMBDA_GUARD: L['y'].size()[0] == L['x'].size()[0]".
  std::vector<std::string> code() const;
  // symbol_of: the symbol's name for dim d of input i, or nullptr when static.
  const std::string* symbol_of(size_t i, int64_t d) const;
};

}  // namespace opspec
