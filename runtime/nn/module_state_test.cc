// Tests for nn::Module's state (module_state.cc): state_dict, load_state_dict,
// to(), and parameters/zero_grad, against PyTorch's behaviour and messages.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>

#include "runtime/core/generator.h"
#include "runtime/core/grad_mode.h"
#include "runtime/nn/layers.h"
#include "runtime/nn/module.h"
#include "runtime/nn/reference_models_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace module_state_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::ThrowsMessage;

std::vector<std::string> keys(const nn::StateDict& s) {
  std::vector<std::string> out;
  for (const auto& [name, t] : s) out.push_back(name);
  return out;
}

// Holder: a module whose one parameter is a tensor made elsewhere (for ties).
struct Holder : nn::Module {
  explicit Holder(const Tensor& w) : Module("Holder") { register_parameter("w", w); }
  Tensor forward(const Tensor& x) override { return x; }
};

// Tied: a parameter registered by the module and by its child, as a tied embedding and head.
struct Tied : nn::Module {
  std::shared_ptr<Holder> c;
  Tied() : Module("Tied") {
    const Tensor& w = register_parameter("w", ops::randn({2, 2}));
    c = register_module("c", std::make_shared<Holder>(w));
  }
  Tensor forward(const Tensor& x) override { return x; }
};

TEST(ModuleStateTest, StateDictIsPyTorchsOrderDetached) {
  nn::Bar bar;
  const nn::StateDict s = bar.state_dict();
  EXPECT_THAT(keys(s), ElementsAre("abc.l1.weight", "abc.l1.bias", "abc.l2.weight", "abc.l2.bias", "xyz.weight",
                                   "xyz.bias"));
  // Parameters, then buffers, as nn.BatchNorm2d(4).state_dict().keys().
  EXPECT_THAT(keys(nn::BatchNorm2d(4).state_dict()),
              ElementsAre("weight", "bias", "running_mean", "running_var", "num_batches_tracked"));
  // Detached aliases: the data, not the leaf that requires grad.
  EXPECT_FALSE(s[0].second.requires_grad());
  EXPECT_TRUE(s[0].second.is_alias_of(bar.abc->l1->weight()));
  // A tensor registered twice is in the state under both names, as PyTorch's.
  EXPECT_THAT(keys(Tied().state_dict()), ElementsAre("w", "c.w"));
  EXPECT_EQ(Tied().parameters().size(), 1u);
}

TEST(ModuleStateTest, LoadStateDictCopiesIntoTheSameTensors) {
  manual_seed(1);
  nn::Bar src;
  manual_seed(2);
  nn::Bar dst;
  const Tensor x = ops::randn({3, 4});
  ASSERT_FALSE(ops::equal(src(x), dst(x)));
  const Tensor weight = dst.abc->l1->weight();
  const nn::LoadStateDictResult r = dst.load_state_dict(src.state_dict());
  EXPECT_THAT(r.missing_keys, IsEmpty());
  EXPECT_THAT(r.unexpected_keys, IsEmpty());
  EXPECT_TRUE(ops::equal(src(x), dst(x)));
  EXPECT_TRUE(dst.abc->l1->weight().is_same(weight));  // copied in place: layers and optimizers see it
  EXPECT_TRUE(weight.requires_grad());
  EXPECT_TRUE(weight.is_leaf());
  // Another dtype converts on the copy, as copy_ does.
  nn::StateDict f64;
  for (const auto& [name, t] : src.state_dict()) f64.emplace_back(name, ops::to(t, DType::kFloat64));
  manual_seed(3);
  nn::Bar other;
  other.load_state_dict(f64);
  EXPECT_EQ(other.xyz->weight().dtype(), DType::kFloat32);
  EXPECT_TRUE(ops::equal(other(x), src(x)));
}

TEST(ModuleStateTest, LoadStateDictErrorsArePyTorchs) {
  nn::Linear lin(3, 2);
  const Tensor before = ops::clone(lin.weight());
  nn::StateDict s = {{"weight", ops::zeros({2, 3})}, {"foo", ops::zeros({1})}};
  EXPECT_THAT([&] { lin.load_state_dict(s); },
              ThrowsMessage<Error>(HasSubstr("Error(s) in loading state_dict for Linear:\n\t"
                                             "Missing key(s) in state_dict: \"bias\". \n\t"
                                             "Unexpected key(s) in state_dict: \"foo\". ")));
  // Every problem at once, in PyTorch's order (torch 1.13's text, the same in 2.x).
  EXPECT_THAT([&] { lin.load_state_dict({{"weight", ops::zeros({3, 2})}, {"foo", ops::zeros({1})}}); },
              ThrowsMessage<Error>(HasSubstr(
                  "Error(s) in loading state_dict for Linear:\n\tMissing key(s) in state_dict: \"bias\". \n\t"
                  "Unexpected key(s) in state_dict: \"foo\". \n\tsize mismatch for weight: copying a param with "
                  "shape torch.Size([3, 2]) from checkpoint, the shape in current model is torch.Size([2, 3]).")));
  EXPECT_TRUE(ops::equal(lin.weight(), before));  // nothing copied
  const nn::LoadStateDictResult r = lin.load_state_dict(s, /*strict=*/false);
  EXPECT_THAT(r.missing_keys, ElementsAre("bias"));
  EXPECT_THAT(r.unexpected_keys, ElementsAre("foo"));
  EXPECT_TRUE(ops::equal(lin.weight(), ops::zeros({2, 3})));
  // A size mismatch is an error even when not strict.
  EXPECT_THAT([&] { lin.load_state_dict({{"weight", ops::zeros({3, 2})}}, false); },
              ThrowsMessage<Error>(HasSubstr("size mismatch for weight: copying a param with shape "
                                             "torch.Size([3, 2]) from checkpoint, the shape in current model is "
                                             "torch.Size([2, 3]).")));
}

TEST(ModuleStateTest, ToMovesAndConvertsKeepingLeavesAndTies) {
  manual_seed(4);
  nn::Sequential seq;
  seq.push_back(std::make_shared<nn::Linear>(4, 3));
  seq.push_back(std::make_shared<nn::BatchNorm2d>(3));
  seq.to(DType::kFloat64);
  for (const auto& [name, t] : seq.state_dict()) {
    // Floating tensors convert; num_batches_tracked stays an integer, as in PyTorch.
    EXPECT_EQ(t.dtype(), name.ends_with("num_batches_tracked") ? DType::kInt64 : DType::kFloat64) << name;
  }
  for (const Tensor& p : seq.parameters()) {
    EXPECT_TRUE(p.requires_grad());
    EXPECT_TRUE(p.is_leaf());
  }
  const Tensor x = ops::randn({2, 4}, {.dtype = DType::kFloat64});
  ops::sum((*seq[0])(x)).backward();
  ASSERT_TRUE(seq.parameters()[0].grad().defined());
  seq.to(kMeta);  // a device without data: every tensor, gradients too
  for (const auto& [name, t] : seq.state_dict()) EXPECT_EQ(t.device(), kMeta) << name;
  EXPECT_EQ(seq.parameters()[0].grad().device(), kMeta);
  EXPECT_EQ(seq.parameters()[0].grad().dtype(), DType::kFloat64);
  Tied tied;
  tied.to(DType::kFloat64);
  EXPECT_TRUE(tied.parameter("w").is_same(tied.c->parameter("w")));  // still one tensor
  EXPECT_EQ(tied.parameter("w").dtype(), DType::kFloat64);
  EXPECT_THAT([&] { tied.to(DType::kInt64); },
              ThrowsMessage<Error>(HasSubstr("nn.Module.to only accepts floating point or complex dtypes, but got "
                                             "desired dtype=torch.int64")));
}

TEST(ModuleStateTest, ZeroGradClearsOrZeroes) {
  nn::Linear lin(3, 2);
  ops::sum(lin(ops::randn({4, 3}))).backward();
  ASSERT_TRUE(lin.weight().grad().defined());
  lin.zero_grad(/*set_to_none=*/false);
  EXPECT_TRUE(ops::equal(lin.weight().grad(), ops::zeros({2, 3})));
  lin.zero_grad();
  EXPECT_FALSE(lin.weight().grad().defined());
  EXPECT_FALSE(lin.bias()->grad().defined());
}

}  // namespace module_state_test
}  // namespace opspec
