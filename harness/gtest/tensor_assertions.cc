// tensor_assertions.cc: EXPECT_TENSOR_EQ and EXPECT_TENSOR_CLOSE.
#include "harness/gtest/tensor_assertions.h"

namespace opspec::internal {

::testing::AssertionResult tensor_close(std::string_view actual_text, std::string_view expected_text,
                                        const Tensor& actual, const Tensor& expected, const CloseOptions& options) {
  const CheckResult r = assert_close(actual, expected, options);
  if (r.ok) return ::testing::AssertionSuccess();
  const bool exact = options.rtol == 0.0 && options.atol == 0.0;
  return ::testing::AssertionFailure() << "`" << actual_text << "` and `" << expected_text << "` are not "
                                       << (exact ? "equal" : "close") << ":\n" << r.message;
}

::testing::AssertionResult tensor_close_threw(std::string_view actual_text, std::string_view expected_text,
                                              const std::exception& e) {
  return ::testing::AssertionFailure() << "comparing `" << actual_text << "` and `" << expected_text
                                       << "` threw: " << e.what();
}

::testing::AssertionResult tensor_strides(std::string_view text, const Tensor& t, IntArrayRef expected) {
  const CheckResult r = check_strides(t, expected);
  if (r.ok) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "`" << text << "` has unexpected strides: " << r.message;
}

::testing::AssertionResult tensor_strides_threw(std::string_view text, const std::exception& e) {
  return ::testing::AssertionFailure() << "checking the strides of `" << text << "` threw: " << e.what();
}

CloseOptions tensor_eq_options(bool equal_nan) {
  return CloseOptions{.rtol = 0.0, .atol = 0.0, .equal_nan = equal_nan};
}

}  // namespace opspec::internal
