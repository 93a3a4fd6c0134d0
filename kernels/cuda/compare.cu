// compare.cu: the comparison and logical kernels (launch_compare) and where
// (launch_where), calling the shared functors of kernels/common/elementwise_ops.h.
#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {

void launch_compare(BinaryOp op, Code storage, const ElementwiseArgs& a) {
  with_code(storage, [&]<class S>() {
    switch (op) {
      case BinaryOp::kEq: return launch_elementwise<bool, S, 2>(a, EqOp{}, "eq");
      case BinaryOp::kNe: return launch_elementwise<bool, S, 2>(a, NeOp{}, "ne");
      case BinaryOp::kLt: return launch_elementwise<bool, S, 2>(a, LtOp{}, "lt");
      case BinaryOp::kLe: return launch_elementwise<bool, S, 2>(a, LeOp{}, "le");
      case BinaryOp::kGt: return launch_elementwise<bool, S, 2>(a, GtOp{}, "gt");
      case BinaryOp::kGe: return launch_elementwise<bool, S, 2>(a, GeOp{}, "ge");
      case BinaryOp::kLogicalAnd: return launch_elementwise<bool, S, 2>(a, LogicalAndOp{}, "logical_and");
      case BinaryOp::kLogicalOr: return launch_elementwise<bool, S, 2>(a, LogicalOrOp{}, "logical_or");
      case BinaryOp::kLogicalXor: return launch_elementwise<bool, S, 2>(a, LogicalXorOp{}, "logical_xor");
      default: fail_launch("launch_compare: not a comparison or logical op");
    }
  });
}

void launch_where(Code storage, const ElementwiseArgs& a) {
  with_code(storage, [&]<class S>() { launch_elementwise<S, S, 3>(a, WhereOp{}, "where"); });
}

}  // namespace opspec::internal::cuda
