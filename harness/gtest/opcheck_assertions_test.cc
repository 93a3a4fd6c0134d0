// EXPECT_OPCHECK / ASSERT_OPCHECK: pass and fail paths, with the message.
#include "harness/gtest/opcheck_assertions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/autograd/formulas.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace opcheck_assertions_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using testing_util::fatal_failure_of;
using testing_util::nonfatal_failure_of;

// The defect: a CPU kernel that sums rows and a Meta kernel that
// forgets to drop the reduced dim.
void register_row_sum() {
  static const bool registered = [] {
    Library lib("opcheck_gtest");
    lib.def("row_sum(Tensor x) -> Tensor")
        .impl("row_sum", DispatchKey::kCPU, [](const Tensor& x) {
          const int64_t dims[] = {1};
          return ops::sum(x, dims);
        })
        .impl("row_sum", DispatchKey::kMeta,
              [](const Tensor& x) { return internal::make_tensor(x.sizes(), x.dtype(), kMeta); });
    // Its derivative (the gradient spread back over each row): only the Meta kernel is wrong.
    autograd::register_formula({.op = "opcheck_gtest::row_sum", .node_name = "RowSumBackward0",
                                .backward = [](const autograd::FormulaCall& c) -> autograd::VariableList {
                                  return {ops::expand(ops::unsqueeze(c.grad(), 1), c.sizes(0))};
                                }});
    return true;
  }();
  (void)registered;
}

TEST(OpcheckAssertions, PassesForACorrectOp) {
  const Tensor x = ops::randn({3, 2});
  EXPECT_OPCHECK("aten::add.Tensor", {{{x, x}}, {{x, x}, {{"alpha", 2}}}});
  ASSERT_OPCHECK(Dispatcher::singleton().get("aten::relu"), {{{x}}}, {.test_utils = {"test_meta"}});
}

TEST(OpcheckAssertions, FailsNamingTheCallTheCheckAndTheMismatch) {
  register_row_sum();
  const Tensor x = ops::randn({3, 2});
  const std::string msg = nonfatal_failure_of([&] { EXPECT_OPCHECK("opcheck_gtest::row_sum", {{{x}}}); });
  EXPECT_THAT(msg, StartsWith("opcheck of `\"opcheck_gtest::row_sum\"` on `{{{x}}}`:\n"
                              "opcheck(opcheck_gtest::row_sum): 2 of 5 checks failed: test_faketensor test_meta\n"));
  EXPECT_THAT(msg, HasSubstr("test_meta: the Meta kernel gives output 0 sizes [3, 2] where the CPU kernel gives [3], "
                             "for sample 0: opcheck_gtest::row_sum(f32[3, 2])"));
  EXPECT_THAT(fatal_failure_of([&] {
                ASSERT_OPCHECK("opcheck_gtest::row_sum", {{{x}}}, {.test_utils = {"test_meta"}});
              }),
              HasSubstr("1 of 1 checks failed: test_meta"));
}

TEST(OpcheckAssertions, AnExceptionIsAFailureNotACrash) {
  const Tensor x = ops::randn({2});
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_OPCHECK("aten::relu", {{{x}}}, {.test_utils = {"test_nothing"}}); }),
              HasSubstr("threw: opcheck: unknown test_util 'test_nothing'"));
  EXPECT_THAT(nonfatal_failure_of([&] { EXPECT_OPCHECK("aten::no_such_op", {{{x}}}); }), HasSubstr("threw: "));
}

}  // namespace
}  // namespace opspec
