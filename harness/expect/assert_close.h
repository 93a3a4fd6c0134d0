// assert_close.h: PyTorch's torch.testing.assert_close for opspec tensors:
// the same default tolerances per dtype, the same closeness rule and the same
// message wording, returned as a CheckResult instead of raised.
#pragma once

#include <optional>
#include <vector>

#include "harness/check_result.h"
#include "runtime/core/tensor.h"

namespace opspec {

// CloseOptions: assert_close's keywords. rtol and atol go together (both or
// neither; neither means default_tolerances of the dtype).
struct CloseOptions {
  std::optional<double> rtol;
  std::optional<double> atol;
  bool bitwise = false;       // compare element bytes exactly (overrides tolerances)
  bool equal_nan = false;     // NaN == NaN
  bool check_dtype = true;    // dtypes must agree (else compared after upcasting to f64)
  bool check_device = true;   // devices must agree
};

// Tolerances: rtol and atol of one comparison.
struct Tolerances {
  double rtol = 0;
  double atol = 0;
};

// default_tolerances: PyTorch's table: f32 1.3e-6/1e-5, f64 1e-7/1e-7,
// f16 1e-3/1e-5, bf16 1.6e-2/1e-5, integers and bool 0/0.
Tolerances default_tolerances(DType dtype);

// assert_close: actual is close to expected: same shape (and dtype, device
// when checked), and no element with |a - e| > atol + rtol * |e| (NaN equal
// only with equal_nan, infinities only to the same infinity). Failure messages,
// as PyTorch words them:
//   "The values for attribute 'shape' do not match: [2, 3] != [3, 2]."
//   "The values for attribute 'dtype' do not match: f32 != f64."
//   "Tensor-likes are not close!\n\nMismatched elements: 3 / 16 (18.8%)\n
//    Greatest absolute difference: 0.5 at index (1, 2) (up to 1e-05 allowed)\n
//    Greatest relative difference: 0.25 at index (1, 2) (up to 1.3e-06 allowed)"
//   (integers and bool: "Tensor-likes are not equal!" with the same lines.)
// bitwise: "Tensors are not bitwise equal!\n\nMismatched elements: 1 / 4 (25.0%)\n
//   First mismatch at index (0, 1): 1.0000001 vs 1 (bits 0x3f800001 vs 0x3f800000)".
// Giving exactly one of rtol/atol throws opspec::Error("assert_close: give
// both rtol and atol, or neither (got rtol only)"). Reads data directly (no
// op is dispatched, so modes see nothing); non-contiguous tensors are fine.
CheckResult assert_close(const Tensor& actual, const Tensor& expected, const CloseOptions& options = {});

// assert_close (lists): equal counts ("The number of outputs does not match:
// 2 != 3."), then each pair; a failure is prefixed "output 1: ".
CheckResult assert_close(const std::vector<Tensor>& actual, const std::vector<Tensor>& expected,
                         const CloseOptions& options = {});

}  // namespace opspec
