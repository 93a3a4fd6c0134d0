// stride_checks.h: checks of tensors' strides (Tensor.stride()) against the
// values PyTorch gives, for EXPECT_STRIDES and the spec runner's
// `expect.strides`: eager outputs against written values, and each compiled
// call's outputs against eager's, as inductor's assert_size_stride does.
// Strides are compared exactly, size-1 dims included: a user who writes
// strides wants those values (See Note [Memory formats]).
#pragma once

#include <string>
#include <vector>

#include "harness/check_result.h"
#include "runtime/core/tensor.h"

namespace opspec {

// TensorLayout: a tensor's sizes and strides, kept without its storage (what
// observe_compile keeps of each call's outputs for a strides check).
struct TensorLayout {
  SizeVec sizes;
  SizeVec strides;
};

TensorLayout layout_of(const Tensor& t);
std::vector<TensorLayout> layouts_of(const std::vector<Tensor>& tensors);

// layout_name: "contiguous", "channels_last", "channels_last_3d" when the
// strides are exactly that format's for the sizes, else "" (for messages).
std::string layout_name(IntArrayRef sizes, IntArrayRef strides);

// check_strides: t's strides equal expected exactly. Failure:
//   "expected strides [1, 3], got [3, 1] (sizes [3, 2]; got a contiguous layout)"
//   "expected strides [1], got [3, 1]: 2 dims, not 1 (sizes [3, 2])"
CheckResult check_strides(const Tensor& t, IntArrayRef expected);
CheckResult check_strides(const TensorLayout& actual, IntArrayRef expected);

// check_output_strides: one strides list per output, each equal. Failures:
// "expected the strides of 1 output, got 2 outputs", or each output that
// differs, one line each: "output 1: expected strides [..], got [..] (...)".
CheckResult check_output_strides(const std::vector<Tensor>& outputs, const std::vector<SizeVec>& expected);

// check_compiled_strides: call i's compiled outputs have the sizes and
// strides of expected[i] (eager's for the same inputs). Every mismatch is
// reported, one line per call and output with both values:
//   "compiled outputs' strides differ from eager's (as inductor's assert_size_stride checks):\n
//     call 1, output 0: compiled strides [3, 1], eager [1, 3] (sizes [3, 2])"
// and a call returning another number of outputs: "call 2: 1 compiled output, eager returned 2".
CheckResult check_compiled_strides(const std::vector<std::vector<TensorLayout>>& compiled,
                                   const std::vector<std::vector<TensorLayout>>& expected);

}  // namespace opspec
