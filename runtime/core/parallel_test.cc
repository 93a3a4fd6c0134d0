#include "runtime/core/parallel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

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
