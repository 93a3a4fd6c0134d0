// tensor_assertions.h: gtest macros comparing tensors as torch.testing does:
// EXPECT_TENSOR_EQ (exactly equal) and EXPECT_TENSOR_CLOSE (PyTorch's per-dtype
// tolerances), with assert_close's messages, EXPECT_STRIDES (Tensor.stride()
// exactly, as inductor's assert_size_stride), and their ASSERT_ forms.
#pragma once

#include <exception>
#include <string_view>

#include <gtest/gtest.h>

#include "harness/expect/assert_close.h"
#include "harness/expect/stride_checks.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// tensor_close: the verdict of assert_close(actual, expected, options) as a
// gtest AssertionResult, naming both expressions on failure.
::testing::AssertionResult tensor_close(std::string_view actual_text, std::string_view expected_text,
                                        const Tensor& actual, const Tensor& expected, const CloseOptions& options);
// tensor_close_threw: the failure when evaluating or comparing the tensors
// threw (an op's error in either expression, rtol without atol): the
// assertion fails, as the compile and opcheck macros do, not the whole test.
::testing::AssertionResult tensor_close_threw(std::string_view actual_text, std::string_view expected_text,
                                              const std::exception& e);

// tensor_strides: the verdict of check_strides(t, expected), naming the
// tensor's expression on failure; tensor_strides_threw when evaluating it threw.
::testing::AssertionResult tensor_strides(std::string_view text, const Tensor& t, IntArrayRef expected);
::testing::AssertionResult tensor_strides_threw(std::string_view text, const std::exception& e);

// tensor_eq_options: CloseOptions of EXPECT_TENSOR_EQ (rtol = atol = 0, as
// torch.testing.assert_close(..., rtol=0, atol=0)); NaN is unequal to NaN unless equal_nan.
CloseOptions tensor_eq_options(bool equal_nan = false);

}  // namespace opspec::internal

// EXPECT_TENSOR_CLOSE(actual, expected [, options]): actual and expected have
// the same shape, dtype and device, and values within CloseOptions' rtol and
// atol (default: PyTorch's per-dtype table, as torch.testing.assert_close).
// Failure:
//   `y` and `ref` are not close:
//   Tensor-likes are not close!
//
//   Mismatched elements: 1 / 4 (25.0%)
//   Greatest absolute difference: 0.5 at index (2,) (up to 1e-05 allowed)
//   Greatest relative difference: 0.25 at index (2,) (up to 1.3e-06 allowed)
#define EXPECT_TENSOR_CLOSE(actual, expected, ...) \
  OPSPEC_GTEST_TENSOR_CLOSE_(GTEST_NONFATAL_FAILURE_, actual, expected, ::opspec::CloseOptions{__VA_ARGS__})
// ASSERT_TENSOR_CLOSE(actual, expected [, options]): fatal form.
#define ASSERT_TENSOR_CLOSE(actual, expected, ...) \
  OPSPEC_GTEST_TENSOR_CLOSE_(GTEST_FATAL_FAILURE_, actual, expected, ::opspec::CloseOptions{__VA_ARGS__})

// EXPECT_TENSOR_EQ(actual, expected): same shape, dtype, device and values
// exactly (NaN != NaN); failure as EXPECT_TENSOR_CLOSE's ("... are not equal").
#define EXPECT_TENSOR_EQ(actual, expected) \
  OPSPEC_GTEST_TENSOR_CLOSE_(GTEST_NONFATAL_FAILURE_, actual, expected, ::opspec::internal::tensor_eq_options())
// ASSERT_TENSOR_EQ(actual, expected): fatal form.
#define ASSERT_TENSOR_EQ(actual, expected) \
  OPSPEC_GTEST_TENSOR_CLOSE_(GTEST_FATAL_FAILURE_, actual, expected, ::opspec::internal::tensor_eq_options())

// EXPECT_STRIDES(tensor, expected): tensor.strides() equal expected exactly (a
// braced list, a std::vector<int64_t>, another tensor's strides()); size-1
// dims count, as Tensor.stride() == (...) does in Python. Failure:
//   `ops::relu(ops::t(x))` has unexpected strides: expected strides [3, 1], got [1, 3]
//   (sizes [2, 3]; got a ... layout)
#define EXPECT_STRIDES(tensor, ...) OPSPEC_GTEST_STRIDES_(GTEST_NONFATAL_FAILURE_, tensor, __VA_ARGS__)
// ASSERT_STRIDES(tensor, expected): fatal form.
#define ASSERT_STRIDES(tensor, ...) OPSPEC_GTEST_STRIDES_(GTEST_FATAL_FAILURE_, tensor, __VA_ARGS__)

#define OPSPEC_GTEST_STRIDES_(on_failure, tensor, ...)                                                     \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                                                             \
  if (::testing::AssertionResult opspec_strides_ar = ::testing::AssertionSuccess(); true) {                 \
    try {                                                                                                    \
      opspec_strides_ar = ::opspec::internal::tensor_strides(#tensor, (tensor), __VA_ARGS__);                \
    } catch (const std::exception& opspec_strides_e) {                                                       \
      opspec_strides_ar = ::opspec::internal::tensor_strides_threw(#tensor, opspec_strides_e);               \
    }                                                                                                        \
    if (!opspec_strides_ar) goto GTEST_CONCAT_TOKEN_(opspec_strides_label_, __LINE__);                       \
  } else /* NOLINT */                                                                                        \
    GTEST_CONCAT_TOKEN_(opspec_strides_label_, __LINE__)                                                     \
        : on_failure(opspec_strides_ar.failure_message())

// (Variadic: a braced CloseOptions{.rtol = r, .atol = a} holds a comma.)
// The arguments are evaluated inside a try block (gtest's EXPECT_NO_THROW
// shape, no lambda: clang before 16 cannot capture structured bindings).
#define OPSPEC_GTEST_TENSOR_CLOSE_(on_failure, actual, expected, ...)                                     \
  GTEST_AMBIGUOUS_ELSE_BLOCKER_                                                                             \
  if (::testing::AssertionResult opspec_tensor_ar = ::testing::AssertionSuccess(); true) {                  \
    try {                                                                                                    \
      opspec_tensor_ar = ::opspec::internal::tensor_close(#actual, #expected, (actual), (expected), __VA_ARGS__); \
    } catch (const std::exception& opspec_tensor_e) {                                                        \
      opspec_tensor_ar = ::opspec::internal::tensor_close_threw(#actual, #expected, opspec_tensor_e);        \
    }                                                                                                        \
    if (!opspec_tensor_ar) goto GTEST_CONCAT_TOKEN_(opspec_tensor_close_label_, __LINE__);                   \
  } else /* NOLINT */                                                                                        \
    GTEST_CONCAT_TOKEN_(opspec_tensor_close_label_, __LINE__)                                                \
        : on_failure(opspec_tensor_ar.failure_message())
