// SiteLabelScope: the innermost live scope names the site, whatever order
// scopes end in (Note [Out-of-order guard release]).
#include "runtime/core/call_site.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

namespace opspec {
namespace call_site_test {

TEST(SiteLabelScope, NestedScopesNameTheInnermostLabel) {
  EXPECT_EQ(current_site_label(), nullptr);
  const std::string outer = "a.yaml:1:1", inner = "a.yaml:2:1";
  {
    SiteLabelScope o(outer);
    {
      SiteLabelScope i(inner);
      EXPECT_EQ(*current_site_label(), inner);
    }
    EXPECT_EQ(*current_site_label(), outer);
  }
  EXPECT_EQ(current_site_label(), nullptr);
}

// Ended first in, first out, the later scope put back the earlier one's label,
// which may already be gone (a dangling pointer).
TEST(SiteLabelScope, ScopesEndedOutOfOrderLeaveNoLabelBehind) {
  auto first = std::make_unique<std::string>("a.yaml:1:1");
  const std::string second = "a.yaml:2:1";
  std::optional<SiteLabelScope> s1, s2;
  s1.emplace(*first);
  s2.emplace(second);
  s1.reset();
  first.reset();
  EXPECT_EQ(*current_site_label(), second);
  s2.reset();
  EXPECT_EQ(current_site_label(), nullptr);
  // Three scopes, the middle one ended first.
  const std::string a = "a", b = "b", c = "c";
  std::optional<SiteLabelScope> sa, sb, sc;
  sa.emplace(a);
  sb.emplace(b);
  sc.emplace(c);
  sb.reset();
  EXPECT_EQ(*current_site_label(), c);
  sc.reset();
  EXPECT_EQ(*current_site_label(), a);
  sa.reset();
  EXPECT_EQ(current_site_label(), nullptr);
}

}  // namespace call_site_test
}  // namespace opspec
