// autograd_assertions.cc: the bodies of EXPECT_GRADCHECK and EXPECT_OP_AUTOGRAD_REGISTERED.
#include "harness/gtest/autograd_assertions.h"

#include <exception>

#include "harness/gtest/macro_args.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {

::testing::AssertionResult gradcheck_assertion(const char* text, const TracedFunction& f,
                                               const std::vector<Tensor>& inputs, const GradcheckOptions& options) {
  const std::vector<std::string> args = split_macro_args(text);
  const std::string head = str_cat("gradcheck of `", abbreviate(args.empty() ? "" : args[0]), "` on `",
                                   abbreviate(args.size() > 1 ? args[1] : ""), "`:\n");
  try {
    const CheckResult r = gradcheck(f, inputs, options);
    if (r.ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << head << r.message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << head << "threw: " << e.what();
  }
}

::testing::AssertionResult autograd_registered_assertion(const char* text, const OperatorHandle& op) {
  const CheckResult r = check_autograd_registered(op);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "`" << text << "`: " << r.message;
}

::testing::AssertionResult autograd_registered_assertion(const char* text, std::string_view op_name) {
  try {
    return autograd_registered_assertion(text, Dispatcher::singleton().get(op_name));
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "`" << text << "`: threw: " << e.what();
  }
}

}  // namespace opspec::internal
