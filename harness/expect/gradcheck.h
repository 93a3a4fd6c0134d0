// gradcheck.h: gradcheck, torch.autograd.gradcheck: a function's backward
// (its derivative formulas) against finite differences, in f64. The check
// behind EXPECT_GRADCHECK and a spec's `expect.gradcheck`.
#pragma once

#include <vector>

#include "harness/check_result.h"
#include "runtime/trace/make_fx.h"

namespace opspec {

// kGradcheckMaxElements: the most elements (over every input that requires
// grad) gradcheck perturbs; more is refused with a message, not run for hours.
inline constexpr int64_t kGradcheckMaxElements = 4096;

// GradcheckOptions: torch.autograd.gradcheck's step and tolerances.
struct GradcheckOptions {
  double eps = 1e-6;   // finite-difference step
  double atol = 1e-5;  // |analytical - numerical| <= atol + rtol * |numerical|
  double rtol = 1e-3;
};

// gradcheck: runs fn on f64 copies of inputs (the floating ones; those that
// require grad become leaves that require grad, the others stay constants)
// and compares, for every output i and input j that requires grad, the
// Jacobian from central differences (each element of input j moved by
// +-eps, fn run without grad) with the one backward computes (one
// autograd::grad per output element, a one-hot grad_output). Both have one
// row per element of input j and one column per element of output i, as
// PyTorch's. Failure message (PyTorch's):
//   "Jacobian mismatch for output 0 with respect to input 1,\n"
//   "numerical:tensor([[...]], dtype=torch.float64)\nanalytical:tensor([[...]], dtype=torch.float64)\n"
// It also fails when no input requires grad, when those inputs have more
// than kGradcheckMaxElements elements, when fn returns no floating
// output, when backward fails (with its error), or when fn itself calls
// backward (an input's .grad is set after the first call).
CheckResult gradcheck(const TracedFunction& fn, const std::vector<Tensor>& inputs, const GradcheckOptions& options = {});

}  // namespace opspec
