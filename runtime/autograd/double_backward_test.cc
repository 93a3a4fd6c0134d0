// Tests of double backward (create_graph) through the backward ops' own
// formulas: gelu_backward, _softmax_backward_data, native_layer_norm_backward,
// silu's differentiable form, and cosh/sinh: the op sequences of torch's traces (the helper's
// TorchDispatchMode trace of the same programs; is_same_size and
// saved-tensor detaches, which differ between versions, left out), and
// second derivatives against central differences of the first.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "runtime/autograd/autograd_test_util.h"

namespace opspec {
namespace double_backward_test {

using autograd_test::leaf;
using autograd_test::random;
using autograd_test::Recorder;
using ::testing::ElementsAreArray;
using F = std::function<Tensor(const Tensor&)>;

// Ops: op names as the recorder reports them, aten::detach left out.
std::vector<std::string> without_detach(const std::vector<std::string>& names) {
  std::vector<std::string> kept;
  for (const std::string& n : names) {
    if (n != "aten::detach") kept.push_back(n);
  }
  return kept;
}

// double_backward_ops: the ops of the second of two grad calls, as torch's
// trace takes them: g = d(f(x) . gout)/dx with create_graph, then g's
// gradient with respect to x and gout.
std::vector<std::string> double_backward_ops(const F& f, const Tensor& x) {
  const Tensor y = f(x);
  Tensor gout = random(y.sizes(), 61);
  gout.requires_grad_();
  const std::vector<Tensor> g = autograd::grad({y}, {x}, {gout}, std::nullopt, /*create_graph=*/true);
  const Tensor v = random(g[0].sizes(), 62);
  Recorder r;
  {
    ModeGuard guard(r);
    autograd::grad({g[0]}, {x, gout}, {v});
  }
  return without_detach(r.names);
}

TEST(DoubleBackward, GeluRecordsGeluBackwardThenGeluDoubleBackward) {
  const Tensor x = leaf({3, 4}, 60);
  EXPECT_THAT(double_backward_ops([](const Tensor& t) { return ops::gelu(t); }, x),
              ElementsAreArray({"aten::gelu_backward", "aten::mul.Tensor", "aten::mul.Scalar", "aten::exp",
                                "aten::mul.Scalar", "aten::mul.Tensor", "aten::mul.Scalar", "aten::sub.Tensor",
                                "aten::mul.Tensor", "aten::mul.Tensor"}));
}

TEST(DoubleBackward, TanhGeluWritesOneMinusAndOneOverAsATenDoes) {
  const Tensor x = leaf({3, 4}, 60);
  EXPECT_THAT(
      double_backward_ops([](const Tensor& t) { return ops::gelu(t, "tanh"); }, x),
      ElementsAreArray(
          {"aten::gelu_backward", "aten::pow.Tensor_Scalar", "aten::mul.Scalar", "aten::add.Tensor",
           "aten::mul.Scalar", "aten::tanh", "aten::cosh", "aten::empty_like", "aten::fill_.Scalar",
           "aten::div_.Tensor", "aten::mul.Scalar", "aten::mul.Tensor", "aten::empty_like", "aten::fill_.Scalar",
           "aten::sub_.Tensor", "aten::mul.Scalar", "aten::mul.Tensor", "aten::add.Scalar", "aten::mul.Scalar",
           "aten::mul.Scalar", "aten::mul.Tensor", "aten::neg", "aten::mul.Tensor", "aten::mul.Scalar",
           "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Scalar",
           "aten::mul.Scalar", "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Scalar", "aten::add.Tensor",
           "aten::add.Tensor", "aten::mul.Tensor", "aten::mul.Tensor"}));
}

TEST(DoubleBackward, SoftmaxRecordsTheSoftmaxDoubleBackward) {
  const Tensor x = leaf({3, 4}, 60);
  EXPECT_THAT(double_backward_ops([](const Tensor& t) { return ops::softmax(t, -1); }, x),
              ElementsAreArray({"aten::_softmax_backward_data", "aten::mul.Tensor", "aten::sum.dim_IntList",
                                "aten::mul.Tensor", "aten::mul.Tensor", "aten::sum.dim_IntList", "aten::mul.Tensor",
                                "aten::mul.Tensor", "aten::sub.Tensor", "aten::sub.Tensor",
                                "aten::_softmax_backward_data"}));
}

// silu's create_graph backward is differentiable ops, not silu_backward; the
// second backward runs through their nodes (torch's engine order). Gradients
// meeting at a node are summed in place (add_) as 2.x's InputBuffer does
// without grad mode; the 1.13 trace shows add.Tensor there.
TEST(DoubleBackward, SiluBackwardWithCreateGraphIsDifferentiableOps) {
  const Tensor x = leaf({3, 4}, 60);
  const Tensor y = ops::silu(x);
  Tensor gout = random(y.sizes(), 61);
  gout.requires_grad_();
  Recorder first;
  std::vector<Tensor> g;
  {
    ModeGuard guard(first);
    g = autograd::grad({y}, {x}, {gout}, std::nullopt, /*create_graph=*/true);
  }
  EXPECT_THAT(without_detach(first.names),
              ElementsAreArray({"aten::sigmoid", "aten::empty_like", "aten::fill_.Scalar", "aten::sub_.Tensor",
                                "aten::mul.Tensor", "aten::add.Scalar", "aten::mul.Tensor", "aten::mul.Tensor"}));
  // Without create_graph it is the fused kernel.
  const Tensor y2 = ops::silu(x);
  Recorder plain;
  {
    ModeGuard guard(plain);
    autograd::grad({y2}, {x}, {gout});
  }
  EXPECT_THAT(without_detach(plain.names), ElementsAreArray({"aten::silu_backward"}));
  EXPECT_THAT(double_backward_ops([](const Tensor& t) { return ops::silu(t); }, x),
              ElementsAreArray({"aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Tensor",
                                "aten::mul.Tensor", "aten::mul.Tensor", "aten::neg", "aten::add_.Tensor",
                                "aten::sigmoid_backward", "aten::add_.Tensor"}));
}

// Second derivatives: the gradient of sum(first(x) * v), first(x) = d sum(f(x)
// * w)/dx taken with create_graph, against central differences of first.
TEST(DoubleBackward, SecondDerivativesMatchCentralDifferencesOfTheFirst) {
  const Tensor w = random({2, 3}, 70), v = random({2, 3}, 71);
  const std::vector<std::pair<std::string, F>> cases = {
      {"gelu", [](const Tensor& x) { return ops::gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return ops::gelu(x, "tanh"); }},
      {"gelu_backward_of_a_square", [](const Tensor& x) { return ops::gelu_backward(ops::mul(x, x), x); }},
      {"silu", [](const Tensor& x) { return ops::silu(x); }},
      {"softmax", [](const Tensor& x) { return ops::softmax(x, 1); }},
      {"softmax_backward_of_a_square", [](const Tensor& x) {
         return ops::_softmax_backward_data(ops::mul(x, x), ops::softmax(x, 0), 0, DType::kFloat64);
       }},
      {"cosh", [](const Tensor& x) { return ops::cosh(x); }},
      {"sinh", [](const Tensor& x) { return ops::sinh(x); }},
      {"one_minus_in_place", [](const Tensor& x) {
         Tensor t = ops::mul(x, x);
         ops::sub_(t, ops::exp(x), 2);
         return t;
       }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    autograd_test::expect_second_derivatives_match(f, w, v, 72);
  }
}

// cosh and sinh: each other's derivative, the first backward's ops as torch's.
TEST(DoubleBackward, CoshAndSinhDifferentiateToEachOther) {
  const Tensor x = leaf({4}, 73);
  EXPECT_THAT(autograd_test::backward_ops(ops::sum(ops::cosh(x))),
              ElementsAreArray({"aten::ones_like", "aten::expand", "aten::sinh", "aten::mul.Tensor"}));
  const std::vector<double> xs = x.to_vector<double>(), g = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) EXPECT_NEAR(g[i], std::sinh(xs[i]), 1e-12) << i;
  const Tensor z = leaf({4}, 74);
  ops::sum(ops::sinh(z)).backward();
  const std::vector<double> zs = z.to_vector<double>(), gz = z.grad().to_vector<double>();
  for (size_t i = 0; i < zs.size(); ++i) EXPECT_NEAR(gz[i], std::cosh(zs[i]), 1e-12) << i;
}

// cumprod's backward of an input with a zero writes its slices into zeros
// with select + copy_; with create_graph those copies record CopySlices, so
// the first gradient has history (PyTorch 1.13 and 2.x: g = [1, 8, 0] with
// grad_fn CopySlices, then [4, 6, 2]).
TEST(DoubleBackward, CumprodWithAZeroDifferentiatesThroughCopySlices) {
  Tensor i = ops::tensor({2.0, 0.0, 3.0}, {3}, DType::kFloat32);
  i.requires_grad_();
  const std::vector<Tensor> g = autograd::grad({ops::sum(ops::cumprod(i, 0))}, {i}, {}, std::nullopt, true);
  ASSERT_NE(g[0].grad_fn(), nullptr);
  EXPECT_EQ(g[0].grad_fn()->name(), "CopySlices");
  EXPECT_THAT(g[0].to_vector<double>(), ElementsAreArray({1.0, 8.0, 0.0}));
  ops::sum(g[0]).backward();
  EXPECT_THAT(i.grad().to_vector<double>(), ElementsAreArray({4.0, 6.0, 2.0}));
}

// layer_norm's second backward: layer_norm_double_backward's ops (torch's
// trace, with 2.x's view where 1.13 logged _reshape_alias), weight and bias
// given and every input requiring grad.
TEST(DoubleBackward, LayerNormRecordsLayerNormDoubleBackward) {
  const Tensor x = leaf({2, 3, 4}, 76), w = leaf({4}, 77), b = leaf({4}, 78);
  const Tensor y = ops::layer_norm(x, {4}, w, b);
  Tensor gout = random(y.sizes(), 79);
  gout.requires_grad_();
  const std::vector<Tensor> g = autograd::grad({y}, {x, w, b}, {gout}, std::nullopt, /*create_graph=*/true);
  std::vector<Tensor> vs;
  for (size_t i = 0; i < g.size(); ++i) vs.push_back(random(g[i].sizes(), static_cast<uint32_t>(80 + i)));
  Recorder r;
  {
    ModeGuard guard(r);
    autograd::grad(g, {x, w, gout}, vs);  // b: its gradient does not depend on b
  }
  // sum over [1] with keepdim, as the trace's sum.dim_IntList(..., [1], True).
  const std::string s = "aten::sum.dim_IntList";
  const std::vector<std::string> want = {
      // reshapes of input, gO, mean, rstd, gamma, ggG, ggB, ggI
      "aten::view", "aten::view", "aten::view", "aten::view", "aten::view", "aten::view", "aten::view", "aten::view",
      "aten::sub.Tensor", "aten::pow.Tensor_Scalar", "aten::pow.Tensor_Scalar", "aten::mul.Tensor",
      // gI from ggI
      "aten::mul.Tensor", "aten::mul.Tensor", s, s, s, "aten::mul.Tensor", s, "aten::mul.Tensor", "aten::div_.Scalar",
      "aten::mul.Tensor", s, "aten::sub_.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul_.Scalar",
      "aten::add_.Tensor", "aten::mul.Tensor", "aten::div_.Scalar", "aten::div.Scalar", "aten::sub.Tensor",
      "aten::mul.Tensor", "aten::div_.Scalar", "aten::mul.Tensor", "aten::div.Scalar", "aten::sub.Tensor",
      "aten::mul.Tensor", "aten::div_.Scalar", "aten::mul.Tensor", "aten::add_.Tensor", "aten::add_.Tensor",
      // gI from ggG
      "aten::mul.Tensor", "aten::mul.Tensor", "aten::mul.Tensor", s, "aten::mul.Tensor", "aten::div_.Scalar",
      "aten::mul.Tensor", "aten::mul.Tensor", s, "aten::mul.Tensor", "aten::div_.Scalar", "aten::add_.Tensor",
      "aten::add_.Tensor", "aten::add_.Tensor", "aten::view",
      // gG
      "aten::ones", "aten::mul.Tensor", "aten::div_.Scalar", "aten::mul.Scalar", s, "aten::sub_.Tensor",
      "aten::mul.Tensor", s, "aten::mul.Tensor", "aten::mul.Tensor", "aten::sub_.Tensor", "aten::mul.Tensor",
      "aten::mul.Tensor", s, "aten::view",
      // ggO
      "aten::mul.Tensor", "aten::div_.Scalar", "aten::mul.Scalar", s, "aten::sub_.Tensor", "aten::mul.Tensor", s,
      "aten::mul.Tensor", "aten::mul.Tensor", "aten::sub_.Tensor", "aten::mul.Tensor", "aten::mul.Tensor",
      "aten::mul.Tensor", "aten::add_.Tensor", "aten::add_.Tensor", "aten::expand", "aten::view"};
  const std::vector<std::string> got = without_detach(r.names);
  ASSERT_GE(got.size(), want.size());
  EXPECT_EQ(std::vector<std::string>(got.begin(), got.begin() + static_cast<std::ptrdiff_t>(want.size())), want);
}

// layer_norm's second derivatives (weight given, and not) against central
// differences of the first.
TEST(DoubleBackward, LayerNormSecondDerivativesMatchCentralDifferences) {
  const Tensor w = random({2, 4}, 90), v = random({2, 4}, 91), gamma = random({4}, 92), beta = random({4}, 93);
  const std::vector<std::pair<std::string, F>> cases = {
      {"affine", [&](const Tensor& x) { return ops::layer_norm(x, {4}, gamma, beta); }},
      {"no_affine", [](const Tensor& x) { return ops::layer_norm(x, {4}); }},
  };
  for (const auto& [name, f] : cases) {
    SCOPED_TRACE(name);
    autograd_test::expect_second_derivatives_match(f, w, v, 94);
  }
}

}  // namespace
}  // namespace opspec
