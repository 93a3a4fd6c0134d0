// pointwise_launch.h: launchers of the elementwise ops with scalar parameters
// (pointwise.cu), host side in pointwise.cc. Plain C++ types only (See
// Note [Elementwise launches] in launch.h).
#pragma once

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// PointwiseOp: the parametrized functors of kernels/common/elementwise_ops.h.
enum class PointwiseOp : uint8_t {
  kClamp,               // ClampOp: lo, hi (f or i), has_lo, has_hi
  kClampMin,            // ClampMinOp: lo (f[0] or i[0])
  kClampMax,            // ClampMaxOp: hi (f[1] or i[1])
  kLeakyRelu,           // LeakyReluOp: f[0] slope
  kElu,                 // EluOp: f[0] alpha, f[1] scale, f[2] input_scale
  kSoftplus,            // SoftplusOp: f[0] beta, f[1] threshold
  kRoundDecimals,       // RoundDecimalsOp: f[0] 10^|decimals|, flag = decimals < 0
  kNanToNum,            // NanToNumOp: f[0..2] the replacements, already rounded to the storage type
  kHardtanhBackward,    // (grad, x): f[0] lo, f[1] hi
  kLeakyReluBackward,   // (grad, x): f[0] slope
  kEluBackward,         // (grad, x or result): as kElu, flag = is_result
  kSoftplusBackward,    // (grad, x): as kSoftplus
};

// PointwiseParams: an op's parameters as doubles (converted to the compute
// type on the device, as the CPU's Scalar.to<opmath_t>()), integer bounds as
// int64 (exact), and the flags.
struct PointwiseParams {
  double f[3] = {};
  int64_t i[2] = {};
  bool has_lo = false, has_hi = false, flag = false;
};

// launch_pointwise: out = op(in...) for storage type `storage` (one input, or
// (grad, saved) for the backward ops), inputs converted to `storage`.
void launch_pointwise(PointwiseOp op, Code storage, const ElementwiseArgs& a, const PointwiseParams& p);
// launch_float_test: out (b8) = isnan / isinf of an input stored as `storage`.
void launch_float_test(bool isinf, Code storage, const ElementwiseArgs& a);

}  // namespace opspec::internal::cuda
