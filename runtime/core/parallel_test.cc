#include "runtime/core/parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "runtime/core/error.h"

namespace opspec {
namespace parallel_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

TEST(NumThreads, SetThenGet) {
  const int saved = get_num_threads();
  EXPECT_GE(saved, 1);
  {
    NumThreadsGuard three(3);
    EXPECT_EQ(get_num_threads(), 3);
    {
      NumThreadsGuard one(1);
      EXPECT_EQ(get_num_threads(), 1);
    }
    EXPECT_EQ(get_num_threads(), 3);
  }
  EXPECT_EQ(get_num_threads(), saved);
}

// Ended out of order (std::optional guards reset first-in first-out), the
// later guard used to put back the earlier one's count for good.
TEST(NumThreads, GuardsEndedOutOfOrderLeaveTheSettingAsBefore) {
  const int saved = get_num_threads();
  std::optional<NumThreadsGuard> two(std::in_place, 2), three(std::in_place, 3);
  two.reset();
  EXPECT_EQ(get_num_threads(), 3);  // the live guard's setting stays
  three.reset();
  EXPECT_EQ(get_num_threads(), saved);
  // And across threads: the setting is the process's, and so is the chain.
  std::optional<NumThreadsGuard> here(std::in_place, 2);
  std::optional<NumThreadsGuard> there;
  std::thread([&] { there.emplace(3); }).join();
  here.reset();
  EXPECT_EQ(get_num_threads(), 3);
  std::thread([&] { there.reset(); }).join();
  EXPECT_EQ(get_num_threads(), saved);
}

TEST(NumThreads, ANonPositiveCountIsAnErrorThatChangesNothing) {
  const int saved = get_num_threads();
  for (int n : {0, -2}) {
    EXPECT_THAT([&] { set_num_threads(n); },
                ThrowsMessage<Error>(HasSubstr("set_num_threads: expected a positive number of threads, got")));
  }
  EXPECT_EQ(get_num_threads(), saved);
}

}  // namespace
}  // namespace opspec
