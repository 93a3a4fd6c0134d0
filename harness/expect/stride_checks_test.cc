// check_strides / check_output_strides / check_compiled_strides: pass and
// fail paths with their messages, on layouts PyTorch gives (Note [Memory formats]).
#include "harness/expect/stride_checks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/memory_format.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace stride_checks_test {

using ::testing::HasSubstr;

TEST(CheckStrides, ExactValuesPass) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_TRUE(check_strides(x, {3, 1}).ok);
  EXPECT_TRUE(check_strides(ops::t(x), {1, 3}).ok);
  EXPECT_TRUE(check_strides(ops::sum(x), {}).ok);  // a 0-dim tensor has no strides
  const Tensor cl = ops::contiguous(ops::randn({2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  EXPECT_TRUE(check_strides(cl, {60, 1, 15, 3}).ok);
}

TEST(CheckStrides, MismatchNamesBothValuesAndTheLayouts) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_EQ(check_strides(ops::t(x), {3, 1}).message, "expected strides [3, 1], got [1, 3] (sizes [3, 2])");
  EXPECT_EQ(check_strides(x, {1, 2}).message,
            "expected strides [1, 2], got [3, 1] (sizes [2, 3]; got a contiguous layout)");
  const Tensor cl = ops::contiguous(ops::randn({2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  EXPECT_EQ(check_strides(cl, {60, 20, 5, 1}).message,
            "expected strides [60, 20, 5, 1], got [60, 1, 15, 3] (sizes [2, 3, 4, 5]; got a channels_last layout, "
            "expected contiguous)");
  EXPECT_EQ(check_strides(x, {1}).message, "expected strides [1], got [3, 1]: 2 dims, not 1 (sizes [2, 3])");
}

TEST(CheckStrides, SizeOneDimsAreCompared) {
  // c10's is_contiguous ignores the stride of a size-1 dim; a strides check does not.
  const Tensor x = ops::randn({3, 1});
  EXPECT_FALSE(check_strides(x, {1, 3}).ok);
  EXPECT_TRUE(check_strides(x, {1, 1}).ok);
}

TEST(LayoutName, NamesExactFormatsOnly) {
  EXPECT_EQ(layout_name({2, 3}, {3, 1}), "contiguous");
  EXPECT_EQ(layout_name({2, 3, 4, 5}, {60, 1, 15, 3}), "channels_last");
  EXPECT_EQ(layout_name({1, 2, 3, 4, 5}, {120, 1, 40, 10, 2}), "channels_last_3d");
  EXPECT_EQ(layout_name({3, 2}, {1, 3}), "");
  EXPECT_EQ(layout_name({3, 2}, {1}), "");
}

TEST(CheckOutputStrides, CountsThenEachOutput) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_TRUE(check_output_strides({x, ops::t(x)}, {{3, 1}, {1, 3}}).ok);
  EXPECT_EQ(check_output_strides({x, x}, {{3, 1}}).message, "expected the strides of 1 output, got 2 outputs");
  EXPECT_EQ(check_output_strides({}, {{3, 1}, {1}}).message, "expected the strides of 2 outputs, got 0 outputs");
  // Every differing output is reported, numbered.
  EXPECT_EQ(check_output_strides({x, ops::t(x)}, {{1, 3}, {3, 1}}).message,
            "output 0: expected strides [1, 3], got [3, 1] (sizes [2, 3]; got a contiguous layout)\n"
            "output 1: expected strides [3, 1], got [1, 3] (sizes [3, 2])");
  EXPECT_EQ(check_output_strides({x}, {{1, 3}}).message,  // a single output is not numbered
            "expected strides [1, 3], got [3, 1] (sizes [2, 3]; got a contiguous layout)");
}

TEST(CheckCompiledStrides, ReportsEachCallAndOutputWithBothValues) {
  const TensorLayout row{{2, 3}, {3, 1}}, col{{2, 3}, {1, 2}};
  EXPECT_TRUE(check_compiled_strides({{row, col}, {row}}, {{row, col}, {row}}).ok);
  const CheckResult r = check_compiled_strides({{row, row}, {row}, {col}}, {{row, col}, {row}, {row}});
  EXPECT_EQ(r.message,
            "compiled outputs' strides differ from eager's (as inductor's assert_size_stride checks):\n"
            "  call 1, output 1: compiled strides [3, 1], eager [1, 2] (sizes [2, 3]; got a contiguous layout)\n"
            "  call 3, output 0: compiled strides [1, 2], eager [3, 1] (sizes [2, 3]; expected contiguous)");
  EXPECT_THAT(check_compiled_strides({{row}}, {{row, row}}).message,
              HasSubstr("call 1: 1 compiled output, eager returned 2"));
  EXPECT_THAT(check_compiled_strides({{row}}, {{TensorLayout{{3, 2}, {2, 1}}}}).message,
              HasSubstr("call 1, output 0: compiled strides [3, 1], eager [2, 1] (compiled sizes [2, 3], eager [3, 2])"));
  EXPECT_THAT(check_compiled_strides({{row}}, {{row}, {row}}).message, HasSubstr("1 compiled call observed, 2 expected"));
}

}  // namespace stride_checks_test
}  // namespace opspec
