// nn::GroupNorm, nn::RMSNorm and nn::ConvTranspose2d (runtime/nn/layers.h): their
// parameters (PyTorch's shapes and initial bounds), their forward under a
// mode (one aten::native_group_norm; one aten::convolution with
// transposed=True) and PyTorch's checks; a decoder's upsampling (stride 2 and
// output_padding 1 double H and W).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/dispatch/mode.h"
#include "runtime/nn/layers.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace layer_modules_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using Names = autograd_test::Recorder;  // the ops a scope dispatches, by name

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

// nn.RMSNorm: a ones weight of normalized_shape, forward F.rms_norm (its parts under a mode).
TEST(RMSNormModuleTest, ForwardIsRmsNormWithOnes) {
  nn::RMSNorm norm({4}, 1e-6);
  ASSERT_EQ(norm.named_parameters().size(), 1u);
  EXPECT_TRUE(ops::equal(*norm.weight(), ops::ones({4})));
  const Tensor x = ops::randn({3, 4});
  Names names;
  Tensor y;
  {
    ModeGuard g(names);
    y = norm.forward(x);
  }
  EXPECT_THAT(names.names, ElementsAre("aten::pow.Tensor_Scalar", "aten::mean.dim", "aten::add_.Scalar", "aten::rsqrt",
                                       "aten::mul.Tensor", "aten::mul.Tensor"));
  EXPECT_TRUE(ops::allclose(y, ops::rms_norm(x, {4}, std::nullopt, 1e-6), 0, 0));
  nn::RMSNorm plain({4}, std::nullopt, /*elementwise_affine=*/false);
  EXPECT_TRUE(plain.named_parameters().empty());
  EXPECT_TRUE(ops::allclose(plain.forward(x), ops::rms_norm(x, {4}), 0, 0));
  EXPECT_THAT([] { nn::RMSNorm({-1}); }, ThrowsMessage<Error>(HasSubstr("normalized_shape must be non-negative")));
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


TEST(ConvTransposeModuleTest, ParametersForwardAndUpsampling) {
  nn::ConvTranspose2d up(8, 4, 3, /*stride=*/2, /*padding=*/1, /*output_padding=*/1, /*groups=*/2);
  ASSERT_EQ(up.named_parameters().size(), 2u);
  EXPECT_THAT(up.weight().sizes(), ElementsAre(8, 2, 3, 3));
  // uniform in [-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = 4 / 2 * 3 * 3.
  const double bound = 1.0 / std::sqrt(18.0);
  EXPECT_LE(ops::amax(ops::abs(up.weight())).item<double>(), bound);
  const Tensor x = ops::randn({2, 8, 5, 7});
  Names names;
  Tensor y;
  {
    ModeGuard g(names);
    y = up.forward(x);
  }
  EXPECT_THAT(names.names, ElementsAre("aten::convolution"));  // the composite decomposes before modes
  EXPECT_THAT(y.sizes(), ElementsAre(2, 4, 10, 14));
  EXPECT_TRUE(ops::equal(y, ops::conv_transpose2d(x, up.weight(), up.named_parameters()[1].second, {2}, {1}, {1}, 2)));
  EXPECT_THAT([] { nn::ConvTranspose2d(3, 4, 3, 1, 0, 0, 2); },
              ThrowsMessage<Error>(HasSubstr("in_channels and out_channels must be divisible by groups")));
}

}  // namespace
}  // namespace opspec
