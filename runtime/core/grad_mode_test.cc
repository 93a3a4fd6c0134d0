// grad_mode_test.cc: grad mode and its guards, which may end in any order
// (See Note [Out-of-order guard release]).
#include "runtime/core/grad_mode.h"

#include <gtest/gtest.h>

#include <optional>
#include <thread>

namespace opspec::autograd {
namespace grad_mode_test {

TEST(GradMode, GuardsNestAndRestore) {
  ASSERT_TRUE(is_grad_enabled());
  {
    NoGradGuard off;
    EXPECT_FALSE(is_grad_enabled());
    {
      EnableGradGuard on;
      EXPECT_TRUE(is_grad_enabled());
    }
    EXPECT_FALSE(is_grad_enabled());
  }
  EXPECT_TRUE(is_grad_enabled());
}

// Ended first-in first-out, the later guard put back "off" for the rest of
// the thread: nothing recorded history again.
TEST(GradMode, GuardsEndedOutOfOrderLeaveTheModeAsBefore) {
  std::optional<NoGradGuard> off(std::in_place);
  std::optional<EnableGradGuard> on(std::in_place);
  off.reset();
  EXPECT_TRUE(is_grad_enabled());  // the live guard's mode stays
  on.reset();
  EXPECT_TRUE(is_grad_enabled());
  // The other way round too.
  std::optional<EnableGradGuard> on2(std::in_place);
  std::optional<NoGradGuard> off2(std::in_place);
  on2.reset();
  EXPECT_FALSE(is_grad_enabled());
  off2.reset();
  EXPECT_TRUE(is_grad_enabled());
}

TEST(GradMode, EachThreadHasItsOwn) {
  NoGradGuard off;
  bool other = false;
  std::thread([&] { other = is_grad_enabled(); }).join();
  EXPECT_TRUE(other);
  EXPECT_FALSE(is_grad_enabled());
}

}  // namespace grad_mode_test
}  // namespace opspec::autograd
