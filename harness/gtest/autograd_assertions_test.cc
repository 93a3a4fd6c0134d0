// Tests of EXPECT_GRADCHECK / ASSERT_GRADCHECK and EXPECT_OP_AUTOGRAD_REGISTERED:
// they pass for correct formulas and fail, with gradcheck's message, for a
// wrong one or a missing one.
#include "harness/gtest/autograd_assertions.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/autograd/formulas.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace autograd_assertions_test {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// autograd_gtest::twice: 2 * x, with a deliberately wrong formula (3 * grad);
// autograd_gtest::bare: kernels and no formula.
void register_ops() {
  static const bool registered = [] {
    Library lib("autograd_gtest");
    lib.def("twice(Tensor x) -> Tensor").impl("twice", DispatchKey::kCPU, [](const Tensor& x) {
      return ops::mul(x, 2.0);
    });
    lib.def("bare(Tensor x) -> Tensor").impl("bare", DispatchKey::kCPU, [](const Tensor& x) { return ops::clone(x); });
    autograd::register_formula({.op = "autograd_gtest::twice", .node_name = "TwiceBackward0",
                                .backward = [](const autograd::FormulaCall& c) -> autograd::VariableList {
                                  return {ops::mul(c.grad(), 3.0)};
                                }});
    return true;
  }();
  (void)registered;
}

std::vector<Tensor> call(const char* op, const std::vector<Tensor>& in) {
  Stack s{in[0]};
  Dispatcher::singleton().call_boxed(Dispatcher::singleton().get(op), s);
  return {s[0].to_tensor()};
}

Tensor leaf(IntArrayRef shape) {
  Tensor t = ops::randn(shape, {.dtype = DType::kFloat64});
  t.requires_grad_();
  return t;
}

TEST(GradcheckAssertions, PassForPyTorchsFormulas) {
  const Tensor x = leaf({2, 3}), w = leaf({3, 4});
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::tanh(ops::mm(in[0], in[1]))}; },
                   {x, w});
  ASSERT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::softmax(in[0], -1)}; }, {x},
                   {.eps = 1e-6, .atol = 1e-7, .rtol = 1e-4});
  // f32 inputs are checked in f64, as gradcheck requires.
  Tensor f = ops::randn({3});
  f.requires_grad_();
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::exp(in[0])}; }, {f});
}

TEST(GradcheckAssertions, AWrongFormulaFailsWithBothJacobians) {
  register_ops();
  const Tensor x = leaf({2});
  const std::string msg = testing_util::nonfatal_failure_of(
      [&] { EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return call("autograd_gtest::twice", in); }, {x}); });
  EXPECT_THAT(msg, StartsWith("gradcheck of `[](const std::vector<Tensor>& in) { return call(\"autograd_gtest::twice\", "
                              "in); }` on `{x}`:\nJacobian mismatch for output 0 with respect to input 0,\n"
                              "numerical:tensor([[2.0000, 0.0000],\n        [0.0000, 2.0000]], dtype=torch.float64)\n"
                              "analytical:tensor([[3.0000, 0.0000],\n        [0.0000, 3.0000]], dtype=torch.float64)\n"));
  EXPECT_THAT(testing_util::fatal_failure_of([&] {
                ASSERT_GRADCHECK([](const std::vector<Tensor>& in) { return call("autograd_gtest::bare", in); }, {x});
              }),
              HasSubstr("gradcheck: backward of output 0 failed: the derivative for 'autograd_gtest::bare' is not "
                        "implemented."));
}

TEST(GradcheckAssertions, MisuseIsReportedNotCrashed) {
  const Tensor plain = ops::randn({2}, {.dtype = DType::kFloat64});
  EXPECT_THAT(testing_util::nonfatal_failure_of([&] {
                EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::exp(in[0])}; }, {plain});
              }),
              HasSubstr("gradcheck: no input requires grad"));
  Tensor big = ops::randn({65, 64});
  big.requires_grad_();
  EXPECT_THAT(testing_util::nonfatal_failure_of([&] {
                EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::exp(in[0])}; }, {big});
              }),
              HasSubstr("gradcheck: the inputs that require grad have 4160 elements; gradcheck runs the function "
                        "twice per element, so it takes at most 4096 (give smaller inputs)"));
  const Tensor x = leaf({2});
  EXPECT_THAT(testing_util::nonfatal_failure_of([&] {
                EXPECT_GRADCHECK(
                    [](const std::vector<Tensor>& in) {
                      ops::sum(in[0]).backward();
                      return std::vector{in[0]};
                    },
                    {x});
              }),
              HasSubstr("gradcheck: the function calls backward()"));
  EXPECT_THAT(testing_util::nonfatal_failure_of([&] {
                EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector{ops::gt(in[0], 0.0)}; }, {x});
              }),
              HasSubstr("gradcheck: the function returned no floating-point tensor"));
}

TEST(AutogradRegisteredAssertions, PassForFormulasCompositesAndFactories) {
  EXPECT_OP_AUTOGRAD_REGISTERED("aten::mm");
  EXPECT_OP_AUTOGRAD_REGISTERED("aten::linear");
  EXPECT_OP_AUTOGRAD_REGISTERED(Dispatcher::singleton().get("aten::zeros"));
}

TEST(AutogradRegisteredAssertions, FailForAnOpWithoutAFormula) {
  register_ops();
  EXPECT_THAT(testing_util::nonfatal_failure_of([] { EXPECT_OP_AUTOGRAD_REGISTERED("autograd_gtest::bare"); }),
              HasSubstr("`\"autograd_gtest::bare\"`: autograd_gtest::bare has kernels but no derivative formula and "
                        "is not composite"));
  EXPECT_THAT(testing_util::nonfatal_failure_of([] { EXPECT_OP_AUTOGRAD_REGISTERED("autograd_gtest::missing"); }),
              HasSubstr("threw: "));
}

}  // namespace
}  // namespace opspec
