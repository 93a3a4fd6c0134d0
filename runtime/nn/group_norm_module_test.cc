// nn::GroupNorm (runtime/nn/layers.h): its parameters, its forward as
// ops::group_norm (one aten::native_group_norm under a mode) and
// F.group_norm's checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/dispatch/mode.h"
#include "runtime/nn/layers.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace group_norm_module_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class Names : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    names.push_back(call.name());
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
};

TEST(GroupNormModuleTest, ForwardIsGroupNormWithOnesAndZeros) {
  nn::GroupNorm gn(2, 4);
  EXPECT_EQ(gn.named_parameters().size(), 2u);
  const Tensor x = ops::randn({3, 4, 5});
  Names names;
  Tensor y;
  {
    ModeGuard g(names);
    y = gn.forward(x);
  }
  EXPECT_THAT(names.names, ElementsAre("aten::native_group_norm"));
  EXPECT_TRUE(ops::allclose(y, ops::group_norm(x, 2), 0, 0));
  nn::GroupNorm plain(4, 4, 1e-5, /*affine=*/false);
  EXPECT_TRUE(plain.named_parameters().empty());
  EXPECT_TRUE(ops::allclose(plain.forward(x), ops::group_norm(x, 4), 0, 0));
}

TEST(GroupNormModuleTest, PyTorchChecks) {
  EXPECT_THAT([] { nn::GroupNorm(3, 4); },
              ThrowsMessage<Error>(HasSubstr("num_channels must be divisible by num_groups")));
  nn::GroupNorm gn(2, 2);
  EXPECT_THAT([&] { gn.forward(ops::randn({2})); },
              ThrowsMessage<Error>(HasSubstr("Expected at least 2 dimensions for input tensor but received 1")));
  EXPECT_THAT([&] { gn.forward(ops::randn({1, 2})); },
              ThrowsMessage<Error>(HasSubstr("Expected more than 1 value per channel when training, got input size "
                                             "[1, 2]")));
}

}  // namespace
}  // namespace opspec
