// reduce_plan.h: ReducePlan, the coalesced geometry of a reduction (the dims
// kept and the dims reduced), shared by the CPU and CUDA reduction kernels.
// See Note [Reduction engine] in kernels/cpu/reduce.cc.
#pragma once

#include "absl/types/span.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// ReducePlan: kept dims in output order (the output is contiguous over them)
// and reduced dims largest stride first (so any permutation of a contiguous
// tensor reduces as one contiguous run), size-1 dims dropped, each list
// coalesced. red_sizes is never empty (a lone [1] when nothing is reduced).
struct ReducePlan {
  SizeVec kept_sizes, kept_strides;  // outermost first
  SizeVec red_sizes, red_strides;    // largest stride first
  int64_t n_out = 1, n_red = 1;      // products of kept_sizes and red_sizes
};

// make_reduce_plan: the plan of reducing in over the dims set in mask.
ReducePlan make_reduce_plan(const Tensor& in, absl::Span<const bool> mask);

}  // namespace opspec::internal
