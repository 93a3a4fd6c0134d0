// opcheck_assertions.cc: the body of EXPECT_OPCHECK.
#include "harness/gtest/opcheck_assertions.h"

#include <exception>
#include <functional>

#include "harness/gtest/macro_args.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
namespace {

// run: the verdict of check(), under a header naming the op and samples
// expressions ("opcheck of `"myops::foo"` on `{{{x}}}`").
::testing::AssertionResult run(const char* text, const std::function<OpcheckResult()>& check) {
  const std::vector<std::string> args = split_macro_args(text);
  const std::string head = str_cat("opcheck of `", abbreviate(args.empty() ? "" : args[0]), "` on `",
                                   abbreviate(args.size() > 1 ? args[1] : ""), "`:\n");
  try {
    const OpcheckResult r = check();
    if (r.result.ok) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << head << r.result.message;
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << head << "threw: " << e.what();
  }
}

}  // namespace

::testing::AssertionResult opcheck_assertion(const char* text, std::string_view op_name,
                                             const std::vector<OpSample>& samples, const OpcheckOptions& options) {
  return run(text, [&] { return opcheck(op_name, samples, options); });
}

::testing::AssertionResult opcheck_assertion(const char* text, const OperatorHandle& op,
                                             const std::vector<OpSample>& samples, const OpcheckOptions& options) {
  return run(text, [&] { return opcheck(op, samples, options); });
}

}  // namespace opspec::internal
