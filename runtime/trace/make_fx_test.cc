// make_fx: graphs of the decomposition tests' programs (golden text, the same
// calls and arguments PyTorch 1.13's make_fx records for them), fake and
// real tracing, pre_dispatch, constants, factories, in-place ordering, and
// what a failing trace leaves behind.
#include "runtime/trace/make_fx.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "runtime/core/generator.h"
#include "runtime/graph/interpreter.h"
#include "runtime/graph/passes.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace make_fx_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class MakeFxTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(0); }
  Tensor x2 = ops::randn({4, 3});
  Tensor w = ops::randn({5, 3});
  Tensor b = ops::randn({5});
  Tensor x3 = ops::randn({2, 4, 3});
  Tensor x1 = ops::randn({3});
};

TEST_F(MakeFxTest, LinearGraphs) {
  auto linear = [](const Tensor& x, const Tensor& w, const Tensor& b) { return ops::linear(x, w, b); };
  EXPECT_EQ(make_fx(linear)(x2, w, b).str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%arg1_1 = placeholder : f32[5, 3]\n"
            "%arg2_1 = placeholder : f32[5]\n"
            "%t = aten::t(%arg1_1) : f32[3, 5]\n"
            "%addmm = aten::addmm(%arg2_1, %arg0_1, %t) : f32[4, 5]\n"
            "return %addmm\n");
  EXPECT_EQ(make_fx(linear)(x3, w, b).str(),
            "%arg0_1 = placeholder : f32[2, 4, 3]\n"
            "%arg1_1 = placeholder : f32[5, 3]\n"
            "%arg2_1 = placeholder : f32[5]\n"
            "%view = aten::view(%arg0_1, [8, 3]) : f32[8, 3]\n"
            "%t = aten::t(%arg1_1) : f32[3, 5]\n"
            "%addmm = aten::addmm(%arg2_1, %view, %t) : f32[8, 5]\n"
            "%view_1 = aten::view(%addmm, [2, 4, 5]) : f32[2, 4, 5]\n"
            "return %view_1\n");
  // A 1-D input is flattened too: viewed to [1, 3] (PyTorch 2.5+).
  EXPECT_EQ(make_fx(linear)(x1, w, b).str(),
            "%arg0_1 = placeholder : f32[3]\n"
            "%arg1_1 = placeholder : f32[5, 3]\n"
            "%arg2_1 = placeholder : f32[5]\n"
            "%view = aten::view(%arg0_1, [1, 3]) : f32[1, 3]\n"
            "%t = aten::t(%arg1_1) : f32[3, 5]\n"
            "%addmm = aten::addmm(%arg2_1, %view, %t) : f32[1, 5]\n"
            "%view_1 = aten::view(%addmm, [5]) : f32[5]\n"
            "return %view_1\n");
  auto no_bias = [](const Tensor& x, const Tensor& w) { return ops::linear(x, w); };
  EXPECT_EQ(make_fx(no_bias, {.input_names = {"x", "w"}})(x2, w).str(),
            "%x = placeholder : f32[4, 3]\n"
            "%w = placeholder : f32[5, 3]\n"
            "%t = aten::t(%w) : f32[3, 5]\n"
            "%mm = aten::mm(%x, %t) : f32[4, 5]\n"
            "return %mm\n");
}

TEST_F(MakeFxTest, PreDispatchKeepsCompositesWhole) {
  auto f = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ops::softmax(ops::linear(x, w, b), -1);
  };
  EXPECT_EQ(make_fx(f, {.pre_dispatch = true})(x3, w, b).str(),
            "%arg0_1 = placeholder : f32[2, 4, 3]\n"
            "%arg1_1 = placeholder : f32[5, 3]\n"
            "%arg2_1 = placeholder : f32[5]\n"
            "%linear = aten::linear(%arg0_1, %arg1_1, %arg2_1) : f32[2, 4, 5]\n"
            "%softmax = aten::softmax.int(%linear, -1) : f32[2, 4, 5]\n"
            "return %softmax\n");
  // The same program after dispatch has no composite left.
  const std::string post = make_fx(f)(x3, w, b).str();
  EXPECT_THAT(post, Not(HasSubstr("aten::linear")));
  EXPECT_THAT(post, HasSubstr("aten::_softmax(%view_1, -1, False)"));
}

TEST_F(MakeFxTest, MatmulGraphs) {
  auto matmul = [](const Tensor& a, const Tensor& b) { return ops::matmul(a, b); };
  EXPECT_EQ(make_fx(matmul)(x3, ops::randn({2, 3, 6})).str(),
            "%arg0_1 = placeholder : f32[2, 4, 3]\n"
            "%arg1_1 = placeholder : f32[2, 3, 6]\n"
            "%expand = aten::expand(%arg0_1, [2, 4, 3]) : f32[2, 4, 3]\n"
            "%view = aten::view(%expand, [2, 4, 3]) : f32[2, 4, 3]\n"
            "%expand_1 = aten::expand(%arg1_1, [2, 3, 6]) : f32[2, 3, 6]\n"
            "%view_1 = aten::view(%expand_1, [2, 3, 6]) : f32[2, 3, 6]\n"
            "%bmm = aten::bmm(%view, %view_1) : f32[2, 4, 6]\n"
            "%_unsafe_view = aten::_unsafe_view(%bmm, [2, 4, 6]) : f32[2, 4, 6]\n"
            "return %_unsafe_view\n");
  EXPECT_EQ(make_fx(matmul)(ops::randn({4}), x2).str(),
            "%arg0_1 = placeholder : f32[4]\n"
            "%arg1_1 = placeholder : f32[4, 3]\n"
            "%unsqueeze = aten::unsqueeze(%arg0_1, 0) : f32[1, 4]\n"
            "%mm = aten::mm(%unsqueeze, %arg1_1) : f32[1, 3]\n"
            "%squeeze_ = aten::squeeze_.dim(%mm, 0) : f32[3]\n"
            "return %squeeze_\n");
  EXPECT_EQ(make_fx(matmul)(x1, ops::randn({3})).str(),
            "%arg0_1 = placeholder : f32[3]\n"
            "%arg1_1 = placeholder : f32[3]\n"
            "%dot = aten::dot(%arg0_1, %arg1_1) : f32[]\n"
            "return %dot\n");
}

TEST_F(MakeFxTest, SoftmaxLayerNormAndDropoutGraphs) {
  EXPECT_EQ(make_fx([](const Tensor& x) { return ops::softmax(x, 1, DType::kFloat64); })(x2).str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%_to_copy = aten::_to_copy(%arg0_1, dtype=torch.float64, layout=torch.strided, device=cpu) : f64[4, 3]\n"
            "%_softmax = aten::_softmax(%_to_copy, 1, False) : f64[4, 3]\n"
            "return %_softmax\n");
  const Tensor gamma = ops::ones({3}), beta = ops::zeros({3});
  auto ln = [](const Tensor& x, const Tensor& g, const Tensor& b) { return ops::layer_norm(x, {3}, g, b); };
  EXPECT_EQ(make_fx(ln)(x2, gamma, beta).str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%arg1_1 = placeholder : f32[3]\n"
            "%arg2_1 = placeholder : f32[3]\n"
            "%native_layer_norm = aten::native_layer_norm(%arg0_1, [3], %arg1_1, %arg2_1, 1e-05) : "
            "(f32[4, 3], f32[4, 1], f32[4, 1])\n"
            "%getitem = getitem(%native_layer_norm, 0) : f32[4, 3]\n"
            "%getitem_1 = getitem(%native_layer_norm, 1) : f32[4, 1]\n"
            "%getitem_2 = getitem(%native_layer_norm, 2) : f32[4, 1]\n"
            "return %getitem\n");
  EXPECT_EQ(make_fx([](const Tensor& x) { return ops::dropout(x, 0.5, true); })(x2).str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%empty_like = aten::empty_like(%arg0_1, memory_format=torch.contiguous_format) : f32[4, 3]\n"
            "%bernoulli_ = aten::bernoulli_.float(%empty_like) : f32[4, 3]\n"
            "%div_ = aten::div_.Scalar(%bernoulli_, 0.5) : f32[4, 3]\n"
            "%mul = aten::mul.Tensor(%arg0_1, %div_) : f32[4, 3]\n"
            "return %mul\n");
}

TEST_F(MakeFxTest, OperatorsScalarsReshapesAndFactories) {
  auto f = [](const Tensor& x) {
    const Tensor a = x + 1.0;
    const Tensor b = 1.0 - a;
    const Tensor c = ops::reshape(ops::t(b), {12});
    const Tensor d = ops::to(c, DType::kFloat64);
    const Tensor noise = ops::randn({12}, {.dtype = DType::kFloat64});
    const Tensor sum = ops::add(d, noise);
    return ops::mul(sum, ops::zeros_like(d));
  };
  EXPECT_EQ(make_fx(f)(x2).str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%add = aten::add.Tensor(%arg0_1, 1.0) : f32[4, 3]\n"
            "%rsub = aten::rsub.Scalar(%add, 1.0) : f32[4, 3]\n"
            "%t = aten::t(%rsub) : f32[3, 4]\n"
            "%clone = aten::clone(%t, memory_format=torch.contiguous_format) : f32[3, 4]\n"
            "%_unsafe_view = aten::_unsafe_view(%clone, [12]) : f32[12]\n"
            "%_to_copy = aten::_to_copy(%_unsafe_view, dtype=torch.float64) : f64[12]\n"
            "%randn = aten::randn([12], dtype=torch.float64, device=cpu, pin_memory=False) : f64[12]\n"
            "%add_1 = aten::add.Tensor(%_to_copy, %randn) : f64[12]\n"
            "%zeros_like = aten::zeros_like(%_to_copy, dtype=torch.float64, layout=torch.strided, device=cpu, "
            "pin_memory=False) : f64[12]\n"
            "%mul = aten::mul.Tensor(%add_1, %zeros_like) : f64[12]\n"
            "return %mul\n");
}

TEST_F(MakeFxTest, SameTensorIsOneNodeAndConstantsAreCaptured) {
  const Tensor bias = ops::randn({3});
  auto f = [&](const Tensor& x) { return ops::add(ops::mul(x, x), bias) + bias; };
  const Graph g = make_fx(f)(x1);
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[3]\n"
            "%mul = aten::mul.Tensor(%arg0_1, %arg0_1) : f32[3]\n"
            "%_tensor_constant0 = constant : f32[3]\n"
            "%add = aten::add.Tensor(%mul, %_tensor_constant0) : f32[3]\n"
            "%add_1 = aten::add.Tensor(%add, %_tensor_constant0) : f32[3]\n"
            "return %add_1\n");
  // The constant is the real tensor, so the graph runs.
  EXPECT_TRUE(g.find("_tensor_constant0")->constant().is_same(bias));
  EXPECT_EQ(run_graph(g, {x1})[0].to_vector<float>(), f(x1).to_vector<float>());
}

TEST_F(MakeFxTest, InPlaceOpsOrderLaterUses) {
  auto f = [](const Tensor& x) {
    Tensor y = ops::clone(x);
    ops::add_(y, ops::ones({3}));
    return ops::mul(y, 2.0);
  };
  EXPECT_EQ(make_fx(f)(x1).str(),
            "%arg0_1 = placeholder : f32[3]\n"
            "%clone = aten::clone(%arg0_1) : f32[3]\n"
            "%ones = aten::ones([3], device=cpu, pin_memory=False) : f32[3]\n"
            "%add_ = aten::add_.Tensor(%clone, %ones) : f32[3]\n"
            "%mul = aten::mul.Tensor(%add_, 2.0) : f32[3]\n"
            "return %mul\n");
}

// A program with views, in-place ops, reductions, several outputs and random
// numbers: its graph, run by the interpreter, equals eager bit for bit.
std::vector<Tensor> mixed_program(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor h = ops::gelu(ops::linear(x, w, b));
  Tensor y = ops::clone(h);
  ops::mul_(y, ops::sigmoid(h));
  const Tensor noise = ops::rand({4, 5});
  const Tensor s = ops::log_softmax(ops::add(y, noise), -1);
  return {ops::layer_norm(s, {5}), ops::sum(ops::t(s), {1}, true)};
}

TEST_F(MakeFxTest, InterpreterMatchesEagerBitForBit) {
  for (TracingMode mode : {TracingMode::kFake, TracingMode::kReal}) {
    const Graph g = make_fx(&mixed_program, {.tracing_mode = mode})(x2, w, b);
    manual_seed(7);
    const std::vector<Tensor> eager = mixed_program(x2, w, b);
    manual_seed(7);
    const std::vector<Tensor> traced = run_graph(g, {x2, w, b});
    ASSERT_EQ(traced.size(), 2u);
    for (size_t i = 0; i < 2; ++i) {
      EXPECT_EQ(traced[i].to_vector<float>(), eager[i].to_vector<float>()) << "output " << i;
    }
  }
}

// torch.tensor's lift_fresh is traced as lift_fresh_copy of a graph
// constant (PyTorch's proxy mode), under fake and real tracing alike, and the
// graph's result does not alias the constant.
TEST_F(MakeFxTest, LiftFreshIsTracedAsLiftFreshCopyOfAConstant) {
  auto f = [](const Tensor& x) { return ops::add(x, ops::lift_fresh(ops::tensor({10, 20}, {2}, DType::kFloat32))); };
  const Tensor x = ops::tensor({1, 2}, {2}, DType::kFloat32);
  for (TracingMode mode : {TracingMode::kFake, TracingMode::kReal}) {
    const Graph g = make_fx(f, {.tracing_mode = mode})(x);
    const std::string code = g.str();
    EXPECT_THAT(code, HasSubstr("aten::lift_fresh_copy(")) << code;
    EXPECT_THAT(code, ::testing::Not(HasSubstr("aten::lift_fresh("))) << code;
    EXPECT_EQ(run_graph(g, {x})[0].to_vector<float>(), (std::vector<float>{11, 22}));
  }
}

TEST_F(MakeFxTest, StructuralHashIdentifiesThePrograms) {
  const Graph a = make_fx(&mixed_program)(x2, w, b);
  const Graph again = make_fx(&mixed_program, {.input_names = {"x", "w", "b"}})(x2, w, b);
  EXPECT_EQ(a.structural_hash(), again.structural_hash());
  EXPECT_NE(a.str(), again.str());
  auto changed = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    std::vector<Tensor> out = mixed_program(x, w, b);
    out[1] = ops::relu(out[1]);
    return out;
  };
  EXPECT_NE(make_fx(changed)(x2, w, b).structural_hash(), a.structural_hash());
  // Other shapes give another graph too.
  EXPECT_NE(make_fx(&mixed_program)(ops::randn({4, 3}, {.dtype = DType::kFloat64}),
                                    ops::to(w, DType::kFloat64), ops::to(b, DType::kFloat64))
                .structural_hash(),
            a.structural_hash());
}

TEST_F(MakeFxTest, DeadCodeEliminationDropsUnusedFactoriesButNotRandomOnes) {
  auto f = [](const Tensor& x) {
    ops::ones({2});
    ops::randn({2});
    return ops::layer_norm(x, {3});
  };
  Graph g = make_fx(f)(x2);
  EXPECT_EQ(eliminate_dead_code(g), 3);  // ones and two unused getitems
  EXPECT_EQ(g.str(),
            "%arg0_1 = placeholder : f32[4, 3]\n"
            "%randn = aten::randn([2], device=cpu, pin_memory=False) : f32[2]\n"
            "%native_layer_norm = aten::native_layer_norm(%arg0_1, [3], None, None, 1e-05) : "
            "(f32[4, 3], f32[4, 1], f32[4, 1])\n"
            "%getitem = getitem(%native_layer_norm, 0) : f32[4, 3]\n"
            "return %getitem\n");
}

}  // namespace
}  // namespace opspec
