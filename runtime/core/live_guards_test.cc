// live_guards_test.cc: LiveLink keeps the chain of live guards right however
// they end (See Note [Out-of-order guard release]).
#include "runtime/core/live_guards.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

namespace opspec::internal {
namespace live_guards_test {

// A guard of an int slot, written as the runtime's guards are: the innermost
// live guard restores what it saved; one ending out of order hands it inward.
int g_slot = 0;
LiveLink<struct IntGuard>* g_innermost = nullptr;

struct IntGuard {
  explicit IntGuard(int value) : saved(g_slot), link(this, g_innermost) { g_slot = value; }
  ~IntGuard() {
    if (IntGuard* inner = link.inner(); inner == nullptr) {
      g_slot = saved;
    } else {
      inner->saved = saved;
    }
  }
  int saved;
  LiveLink<IntGuard> link;
};

// chain: the live guards' values from the outermost in, walked from the innermost.
std::vector<int> chain() {
  std::vector<int> values;
  for (IntGuard* g = owner_of(g_innermost); g != nullptr; g = g->link.outer()) values.insert(values.begin(), g->saved);
  return values;
}

TEST(LiveLink, EveryOrderOfEndingThreeGuardsRestoresTheSlot) {
  const int orders[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2}, {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
  for (const auto& order : orders) {
    SCOPED_TRACE(testing::Message() << order[0] << order[1] << order[2]);
    g_slot = 7;
    std::optional<IntGuard> guards[3];
    for (int i = 0; i < 3; ++i) guards[i].emplace(10 + i);
    EXPECT_EQ(g_slot, 12);
    EXPECT_EQ(chain(), (std::vector<int>{7, 10, 11}));
    for (int k = 0; k < 3; ++k) {
      guards[order[k]].reset();
      // The slot holds the value of the innermost guard still alive, or 7.
      int expected = 7;
      for (int i = 0; i < 3; ++i) {
        if (guards[i].has_value()) expected = 10 + i;
      }
      EXPECT_EQ(g_slot, expected) << "after ending guard " << order[k];
    }
    EXPECT_EQ(g_innermost, nullptr);
  }
}

TEST(LiveLink, InnerAndOuterNameTheNeighboursStillAlive) {
  std::optional<IntGuard> a(std::in_place, 1), b(std::in_place, 2), c(std::in_place, 3);
  EXPECT_EQ(a->link.inner(), &*b);
  EXPECT_EQ(c->link.outer(), &*b);
  b.reset();
  EXPECT_EQ(a->link.inner(), &*c);
  EXPECT_EQ(c->link.outer(), &*a);
  EXPECT_EQ(c->link.inner(), nullptr);
  EXPECT_EQ(owner_of(g_innermost), &*c);
}

}  // namespace live_guards_test
}  // namespace opspec::internal
