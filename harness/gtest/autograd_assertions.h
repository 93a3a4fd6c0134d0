// autograd_assertions.h: EXPECT_GRADCHECK and EXPECT_OP_AUTOGRAD_REGISTERED,
// gradient checks as gtest assertions. Thin glue over
// harness/expect/gradcheck.h and check_autograd_registered in
// harness/expect/opcheck.h, whose messages they print.
#pragma once

#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "harness/expect/gradcheck.h"
#include "harness/expect/opcheck.h"

// EXPECT_GRADCHECK(f, inputs [, options]): gradcheck(f, inputs, options)
// passes: for every output of f and every input that requires grad, the
// Jacobian backward computes equals central differences in f64 (within
// torch.autograd.gradcheck's tolerances):
//   EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::tanh(in[0])}; }, {x});
// Failure: a line naming the call, then PyTorch's message:
//   gradcheck of `f` on `{x}`:
//   Jacobian mismatch for output 0 with respect to input 0,
//   numerical:tensor([[...]], dtype=torch.float64)
//   analytical:tensor([[...]], dtype=torch.float64)
#define EXPECT_GRADCHECK(...) \
  GTEST_ASSERT_(::opspec::internal::gradcheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_GRADCHECK(f, inputs [, options]): fatal form.
#define ASSERT_GRADCHECK(...) \
  GTEST_ASSERT_(::opspec::internal::gradcheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

// EXPECT_OP_AUTOGRAD_REGISTERED(op): op (a name such as "myops::foo", or an
// OperatorHandle) can be differentiated: it has a derivative formula, is
// composite, or is not differentiable (a factory, detach, no tensor returned).
// Failure: "`"myops::foo"`: myops::foo has kernels but no derivative formula ...".
#define EXPECT_OP_AUTOGRAD_REGISTERED(op) \
  GTEST_ASSERT_(::opspec::internal::autograd_registered_assertion(#op, op), GTEST_NONFATAL_FAILURE_)

namespace opspec::internal {

// gradcheck_assertion: the body of EXPECT_GRADCHECK; text is the stringized arguments.
::testing::AssertionResult gradcheck_assertion(const char* text, const TracedFunction& f,
                                               const std::vector<Tensor>& inputs,
                                               const GradcheckOptions& options = {});
// autograd_registered_assertion: the body of EXPECT_OP_AUTOGRAD_REGISTERED.
::testing::AssertionResult autograd_registered_assertion(const char* text, std::string_view op_name);
::testing::AssertionResult autograd_registered_assertion(const char* text, const OperatorHandle& op);

}  // namespace opspec::internal
