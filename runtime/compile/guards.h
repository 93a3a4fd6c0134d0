// guards.h: the checks a compiled graph is guarded by (dtype, device, rank,
// sizes and strides of every graph input), their failure messages in
// PyTorch's words, and mark_dynamic / mark_static. See Note [Guards].
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "runtime/core/tensor.h"

namespace opspec {

// Note [Guards]
// A compiled graph may run only on inputs like those it was captured with.
// Each graph input gets a TensorGuard recording its dtype, device, rank,
// sizes and strides; a dim marked dynamic (mark_dynamic, or every dim under
// CompileOptions::dynamic except those marked static) is left out of the size
// check, and strides are then checked only as contiguity, so one graph serves
// every size of that dim. Sizes that a program passes to an op as arguments
// (view([8, 3])) are part of the graph itself, so a new size there gives a
// new graph whatever the marks say. A failing guard is reported as PyTorch
// does: "tensor 'x' size mismatch at index 0. expected 3, actual 4".

// mark_dynamic: dim of t may change between calls without a recompile.
void mark_dynamic(const Tensor& t, int64_t dim);
// mark_static: dim of t stays guarded even when compiling with dynamic = true
// (mark_dynamic wins when both are set, as in PyTorch).
void mark_static(const Tensor& t, int64_t dim);

// TensorGuard: what one graph input must look like.
struct TensorGuard {
  std::string name;
  DType dtype = DType::kFloat32;
  Device device = kCPU;
  SizeVec sizes;
  SizeVec strides;
  uint64_t dynamic_dims = 0;  // bit d: dim d is not checked
  bool contiguous = true;

  // make: the guard for t; dynamic dims are t's marks, plus every unmarked
  // dim when all_dynamic.
  static TensorGuard make(std::string name, const Tensor& t, bool all_dynamic);
  // failure: why t does not pass, or nullopt when it does.
  std::optional<std::string> failure(const Tensor& t) const;
  // str: "tensor 'x': f32[s0, 4] stride [4, 1] cpu" (dynamic dims as s<d>).
  std::string str() const;
};

// GuardSet: the guards of every input of one graph.
struct GuardSet {
  std::vector<TensorGuard> tensors;

  // first_failure: the first guard inputs fail, or nullopt when all pass.
  std::optional<std::string> first_failure(absl::Span<const Tensor> inputs) const;
  // has_dynamic_dims: some guard leaves a dim unchecked.
  bool has_dynamic_dims() const;
};

}  // namespace opspec
