// optim::SGD, Adam and AdamW: PyTorch 2.x's op sequences, values bit for bit
// (a script ran 2.x's _single_tensor_* code with python3-torch 1.13's ops and
// printed the f32 bits; 1.13's own optimizers agree within an ulp), option
// checks, zero_grad and the no_grad step. See Note [Optimizer steps].
#include <bit>
#include <memory>
#include <cstdint>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"
#include "runtime/dispatch/op_names_test_util.h"
#include "runtime/ops/ops.h"
#include "runtime/optim/adam.h"
#include "runtime/optim/sgd.h"

namespace opspec {
namespace optim_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<uint32_t> bits(const Tensor& t) {
  std::vector<uint32_t> out;
  for (float v : t.to_vector<float>()) out.push_back(std::bit_cast<uint32_t>(v));
  return out;
}

Tensor param() {
  Tensor p = ops::tensor({0.5, -1.0, 2.0}, {3});
  p.requires_grad_();
  return p;
}

// The two gradients of every run: step 1, then step 2.
const std::vector<std::vector<double>> kGrads = {{0.1, -0.2, 0.3}, {-0.05, 0.4, 0.01}};

// steps: each gradient in turn, then step(); the op names of the last step.
std::vector<std::string> steps(optim::Optimizer& opt, Tensor& p) {
  std::vector<std::string> names;
  for (const auto& g : kGrads) {
    p.set_grad(ops::tensor(g, {3}));
    test_util::OpNames mode;
    {
      ModeGuard guard(mode);
      opt.step();
    }
    names = mode.names;
  }
  return names;
}

TEST(OptimTest, AdamWRunsPyTorchsOpsAndBits) {
  Tensor p = param();
  optim::AdamW opt({p}, [] {
    optim::AdamOptions o = optim::AdamW::defaults();
    o.lr = 0.1;
    return o;
  }());
  p.set_grad(ops::tensor(kGrads[0], {3}));
  test_util::OpNames first;
  {
    ModeGuard guard(first);
    opt.step();
  }
  EXPECT_THAT(first.names,
              ElementsAre("aten::lift_fresh", "aten::zeros_like", "aten::zeros_like", "aten::add_.Tensor",
                          "aten::mul_.Tensor", "aten::lerp_.Scalar", "aten::mul_.Tensor", "aten::addcmul_",
                          "aten::_local_scalar_dense", "aten::sqrt", "aten::div.Tensor", "aten::add_.Tensor",
                          "aten::addcdiv_"));
  p.set_grad(ops::tensor(kGrads[1], {3}));
  opt.step();
  EXPECT_THAT(bits(p), ElementsAre(0x3ebeb3f8u, 0xbf6f493fu, 0x3fe9cfc5u));
  EXPECT_THAT(bits(opt.state(0).exp_avg), ElementsAre(0x3b83126fu, 0x3cb43959u, 0x3ce56042u));
  EXPECT_THAT(bits(opt.state(0).exp_avg_sq), ElementsAre(0x37518c25u, 0x3951ac5bu, 0x38bcc3c2u));
  EXPECT_EQ(opt.state(0).step.item().to_double(), 2.0);
  // The step ran under no_grad: the parameter is still a leaf that requires grad.
  EXPECT_TRUE(p.is_leaf());
  EXPECT_TRUE(p.requires_grad());
}

TEST(OptimTest, AdamWithAmsgradAndCoupledWeightDecay) {
  Tensor p = param();
  optim::Adam opt({p}, {.lr = 0.1, .weight_decay = 0.1, .amsgrad = true});
  const std::vector<std::string> names = steps(opt, p);
  EXPECT_THAT(names, ElementsAre("aten::add_.Tensor", "aten::add.Tensor", "aten::lerp_.Scalar", "aten::mul_.Tensor",
                                 "aten::addcmul_", "aten::_local_scalar_dense", "aten::maximum", "aten::copy_",
                                 "aten::sqrt", "aten::div.Tensor", "aten::add_.Tensor", "aten::addcdiv_"));
  EXPECT_THAT(bits(p), ElementsAre(0x3ead1acfu, 0xbf682ab3u, 0x3fe7b2bfu));
}

TEST(OptimTest, AdamMaximize) {
  Tensor p = param();
  optim::Adam opt({p}, {.lr = 0.05, .beta1 = 0.8, .beta2 = 0.99, .eps = 1e-6, .maximize = true});
  const std::vector<std::string> names = steps(opt, p);
  EXPECT_EQ(names.at(0), "aten::neg");
  EXPECT_THAT(bits(p), ElementsAre(0x3f0f809du, 0xbf83b49fu, 0x40054c99u));
}

TEST(OptimTest, SgdVariants) {
  {
    Tensor p = param();
    optim::SGD opt({p}, {.lr = 0.1});
    EXPECT_THAT(steps(opt, p), ElementsAre("aten::add_.Tensor"));
    EXPECT_THAT(bits(p), ElementsAre(0x3efd70a4u, 0xbf828f5cu, 0x3ffc0831u));
  }
  {
    Tensor p = param();
    optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
    p.set_grad(ops::tensor(kGrads[0], {3}));
    test_util::OpNames first;
    {
      ModeGuard guard(first);
      opt.step();
    }
    EXPECT_THAT(first.names, ElementsAre("aten::add.Tensor", "aten::detach", "aten::clone", "aten::add.Tensor",
                                         "aten::add_.Tensor"));
    p.set_grad(ops::tensor(kGrads[1], {3}));
    test_util::OpNames second;
    {
      ModeGuard guard(second);
      opt.step();
    }
    EXPECT_THAT(second.names, ElementsAre("aten::add.Tensor", "aten::mul_.Tensor", "aten::add_.Tensor",
                                          "aten::add.Tensor", "aten::add_.Tensor"));
    EXPECT_THAT(bits(p), ElementsAre(0x3ef5d3fbu, 0xbf8235c4u, 0x3ff42f5eu));
  }
  {
    Tensor p = param();
    optim::SGD opt({p}, {.lr = 0.1, .momentum = 0.5, .dampening = 0.1, .maximize = true});
    steps(opt, p);
    EXPECT_THAT(bits(p), ElementsAre(0x3f02b021u, 0xbf7e76c8u, 0x4002f006u));
  }
}

TEST(OptimTest, ZeroGradAndParametersWithoutGradients) {
  Tensor a = param(), b = param();
  optim::SGD opt({a, b}, {.lr = 0.5});
  a.set_grad(ops::ones({3}));
  opt.step();  // b has no gradient: skipped
  EXPECT_THAT(a.to_vector<double>(), ElementsAre(0, -1.5, 1.5));
  EXPECT_THAT(b.to_vector<double>(), ElementsAre(0.5, -1, 2));
  test_util::OpNames keep;
  {
    ModeGuard guard(keep);
    opt.zero_grad(/*set_to_none=*/false);
  }
  EXPECT_THAT(keep.names, ElementsAre("aten::zero_"));
  EXPECT_THAT(a.grad().to_vector<double>(), ElementsAre(0, 0, 0));
  test_util::OpNames drop;
  {
    ModeGuard guard(drop);
    opt.zero_grad();
  }
  EXPECT_TRUE(drop.names.empty());
  EXPECT_FALSE(a.grad().defined());
}

TEST(OptimTest, OptionsArePyTorchsChecks) {
  EXPECT_THAT([] { optim::SGD({param()}, {.lr = -0.1}); },
              ThrowsMessage<Error>(HasSubstr("Invalid learning rate: -0.1")));
  EXPECT_THAT([] { optim::SGD({param()}, {.momentum = -1}); },
              ThrowsMessage<Error>(HasSubstr("Invalid momentum value: -1")));
  EXPECT_THAT([] { optim::SGD({param()}, {.nesterov = true}); },
              ThrowsMessage<Error>(HasSubstr("Nesterov momentum requires a momentum and zero dampening")));
  EXPECT_THAT([] { optim::Adam({param()}, {.beta2 = 1.0}); },
              ThrowsMessage<Error>(HasSubstr("Invalid beta parameter at index 1: 1")));
  EXPECT_THAT([] { optim::Adam({param()}, {.eps = -1e-8}); },
              ThrowsMessage<Error>(HasSubstr("Invalid epsilon value: -1e-08")));
  EXPECT_THAT([] { optim::AdamW({}); }, ThrowsMessage<Error>(HasSubstr("optimizer got an empty parameter list")));
  const Tensor nonleaf = ops::mul(param(), 2.0);
  EXPECT_THAT([&] { optim::SGD({nonleaf}, {}); }, ThrowsMessage<Error>(HasSubstr("can't optimize a non-leaf Tensor")));
}

// A training loop: the loss of a least-squares fit (26 at w = 0) falls under
// each optimizer (gradients from backward()); torch 1.13 ends at 4.61, 11.07
// and 11.10 after 20 steps.
TEST(OptimTest, TrainingLoopsConverge) {
  const Tensor x = ops::tensor({1, 2, 3, 1, 0, 1}, {3, 2}), y = ops::tensor({5, 2, 7}, {3});
  for (int which = 0; which < 3; ++which) {
    Tensor w = ops::zeros({2});
    w.requires_grad_();
    std::unique_ptr<optim::Optimizer> opt;
    if (which == 0) {
      opt = std::make_unique<optim::SGD>(std::vector<Tensor>{w}, optim::SGDOptions{.lr = 0.1, .momentum = 0.5});
    }
    if (which == 1) opt = std::make_unique<optim::Adam>(std::vector<Tensor>{w}, optim::AdamOptions{.lr = 0.1});
    if (which == 2) {
      optim::AdamOptions o = optim::AdamW::defaults();
      o.lr = 0.1;
      opt = std::make_unique<optim::AdamW>(std::vector<Tensor>{w}, o);
    }
    double loss = 0;
    for (int i = 0; i < 20; ++i) {
      opt->zero_grad();
      const Tensor l = ops::mean(ops::pow(ops::sub(ops::mv(x, w), y), 2.0));
      l.backward();
      opt->step();
      loss = l.item().to_double();
    }
    const double want[] = {4.61, 11.072, 11.101};
    EXPECT_NEAR(loss, want[which], 1e-3) << "optimizer " << which;
  }
}

}  // namespace optim_test
}  // namespace opspec
