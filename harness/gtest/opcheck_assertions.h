// opcheck_assertions.h: EXPECT_OPCHECK / ASSERT_OPCHECK, torch.library.opcheck
// as a gtest assertion. Thin glue over harness/expect/opcheck.h, whose
// message it prints.
#pragma once

#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "harness/expect/opcheck.h"

// EXPECT_OPCHECK(op, samples [, options]): opcheck(op, samples, options)
// passes: op (a name such as "myops::foo", or an OperatorHandle) agrees with
// its schema and its Meta kernel, fake tensors and compile() agree with its
// real run on every sample (See Note [opcheck]). Arguments are forwarded to
// a function, so braced samples and designated initializers work unparenthesized:
//   EXPECT_OPCHECK("myops::foo", {{{x}}, {{x, y}, {{"alpha", 2}}}});
//   EXPECT_OPCHECK("myops::foo", {{{x}}}, {.test_utils = {"test_schema", "test_faketensor"}});
// Failure: a line naming the call, then opcheck's message:
//   opcheck of `"myops::foo"` on `{{{x}}}`:
//   opcheck(myops::foo): 2 of 5 checks failed: test_faketensor test_meta
//   test_faketensor: FakeTensorMode (the Meta kernel) gives output 0 sizes [3, 2] where the CPU
//   kernel gives [2, 3], for sample 0: myops::foo(f32[2, 3])
// An exception (an unknown op or test_util) is a failure ("threw: ..."), not a crash.
#define EXPECT_OPCHECK(...) \
  GTEST_ASSERT_(::opspec::internal::opcheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_NONFATAL_FAILURE_)
// ASSERT_OPCHECK(op, samples [, options]): fatal form.
#define ASSERT_OPCHECK(...) \
  GTEST_ASSERT_(::opspec::internal::opcheck_assertion(#__VA_ARGS__, __VA_ARGS__), GTEST_FATAL_FAILURE_)

namespace opspec::internal {

// opcheck_assertion: the body of EXPECT_OPCHECK for an op given by name;
// text is the stringized macro arguments.
::testing::AssertionResult opcheck_assertion(const char* text, std::string_view op_name,
                                             const std::vector<OpSample>& samples, const OpcheckOptions& options = {});
// opcheck_assertion: the same for an OperatorHandle.
::testing::AssertionResult opcheck_assertion(const char* text, const OperatorHandle& op,
                                             const std::vector<OpSample>& samples, const OpcheckOptions& options = {});

}  // namespace opspec::internal
