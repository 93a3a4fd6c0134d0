// AOT autograd in compile(): gradients of compiled graphs equal eager's
// (bitwise for the eager and fused backends), the joint graph is partitioned
// into forward and backward graphs, backward() inside a compiled function is
// Dynamo's graph break, and graph breaks chain one node per graph.
#include "runtime/compile/aot_autograd.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/autograd/engine.h"
#include "runtime/autograd/node.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/compile/explain.h"
#include "runtime/core/generator.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"
#include "runtime/dispatch/op_names_test_util.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace aot_autograd_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Leaves: fresh leaves with the same values each call.
std::vector<Tensor> leaves(uint64_t seed) {
  manual_seed(seed);
  std::vector<Tensor> t = {ops::randn({8, 4}), ops::randn({16, 4}), ops::randn({16}), ops::randn({3, 16})};
  for (size_t i = 1; i < t.size(); ++i) t[i].requires_grad_();
  return t;
}

// mlp: linear, gelu, linear, log_softmax, mean: a loss.
std::vector<Tensor> mlp(const std::vector<Tensor>& in) {
  const Tensor h = ops::gelu(ops::linear(in[0], in[1], in[2]));
  return {ops::mean(ops::log_softmax(ops::mm(h, ops::t(in[3])), -1))};
}

// grads_of: the loss and each leaf's gradient after backward, as vectors.
std::vector<std::vector<double>> grads_of(const TracedFunction& f, uint64_t seed) {
  std::vector<Tensor> in = leaves(seed);
  const Tensor loss = f(in)[0];
  EXPECT_TRUE(loss.requires_grad());
  loss.backward();
  autograd::NoGradGuard no_grad;
  std::vector<std::vector<double>> out = {loss.to_vector<double>()};
  for (size_t i = 1; i < in.size(); ++i) out.push_back(in[i].grad().to_vector<double>());
  return out;
}

// make_fx of a function that calls autograd::grad records the joint graph:
// the forward ops, then the backward ops the engine dispatches (the Autograd
// key sits above the tracer), as PyTorch's make_fx does.
TEST(AotAutograd, MakeFxOfAFunctionThatCallsGradTracesTheJointGraph) {
  Tensor x = ops::randn({4, 3}), w = ops::randn({2, 3});
  w.requires_grad_();
  const Graph g = make_fx([](const std::vector<Tensor>& in) {
    const Tensor loss = ops::sum(ops::tanh(ops::mm(in[0], ops::t(in[1]))));
    return autograd::grad({loss}, {in[1]});
  })(std::vector<Tensor>{x, w});
  std::vector<std::string> ops;
  for (Node* n : g.nodes()) {
    if (n->op() == NodeOp::kCall) ops.push_back(n->target()->name());
  }
  EXPECT_THAT(ops, ::testing::ElementsAre("aten::t", "aten::mm", "aten::tanh", "aten::sum", "aten::ones_like",
                                          "aten::expand", "aten::tanh_backward", "aten::t", "aten::mm", "aten::t",
                                          "aten::t"));
  // tanh_backward reads tanh's result: the saved output is traced as that node.
  EXPECT_THAT(g.str(), ::testing::HasSubstr("aten::tanh_backward(%expand, %tanh)"));
}

TEST(AotAutograd, CompiledGradientsEqualEagerBitForBit) {
  const auto eager = grads_of(&mlp, 1);
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    CompiledFunction f(&mlp, {.backend = backend});
    EXPECT_EQ(grads_of(f, 1), eager);
    EXPECT_EQ(grads_of(f, 1), eager);  // a warm call
    EXPECT_EQ(f.stats().aot_graphs.size(), 1u);
    EXPECT_EQ(f.stats().compiles, 1);
  }
}

TEST(AotAutograd, TheResultsGradFnIsTheCompiledGraphsNode) {
  CompiledFunction f(&mlp, {.backend = "aot_eager"});
  std::vector<Tensor> in = leaves(2);
  const Tensor loss = f(in)[0];
  ASSERT_NE(loss.grad_fn(), nullptr);
  EXPECT_EQ(loss.grad_fn()->name(), "CompiledFunctionBackward");
  // No input requiring grad, or grad mode off: the inference graph, no node.
  autograd::NoGradGuard no_grad;
  EXPECT_FALSE(f(in)[0].requires_grad());
}

TEST(AotAutograd, JointGraphIsPartitionedIntoForwardAndBackward) {
  CompiledFunction f(&mlp, {.backend = "eager"});
  std::vector<Tensor> in = leaves(3);
  f(in);
  const std::vector<std::string> graphs = f.stats().aot_graphs;
  ASSERT_EQ(graphs.size(), 1u);
  const std::string& code = graphs[0];
  const size_t split = code.find("backward:");
  ASSERT_NE(split, std::string::npos);
  const std::string fwd = code.substr(0, split), bwd = code.substr(split);
  EXPECT_THAT(fwd, HasSubstr("aten::gelu"));
  EXPECT_THAT(fwd, ::testing::Not(HasSubstr("gelu_backward")));
  EXPECT_THAT(bwd, HasSubstr("aten::gelu_backward"));
  EXPECT_THAT(bwd, HasSubstr("aten::_log_softmax_backward_data"));
  EXPECT_THAT(bwd, HasSubstr("tangents_1"));
  EXPECT_THAT(bwd, ::testing::Not(HasSubstr("aten::gelu(")));  // forward values are saved, not recomputed
}

TEST(AotAutograd, BackwardInsideACompiledFunctionBreaksTheGraph) {
  auto step = [](const std::vector<Tensor>& in) {
    const Tensor loss = mlp(in)[0];
    loss.backward();
    return std::vector<Tensor>{loss, ops::mul(in[1].grad(), 2.0)};
  };
  std::vector<Tensor> a = leaves(4), b = leaves(4);
  const std::vector<Tensor> eager = step(a);
  CompiledFunction f(step, {.backend = "fused"});
  const std::vector<Tensor> compiled = f(b);
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(compiled[0].to_vector<double>(), eager[0].to_vector<double>());
  EXPECT_EQ(compiled[1].to_vector<double>(), eager[1].to_vector<double>());
  for (size_t i = 1; i < a.size(); ++i) EXPECT_EQ(b[i].grad().to_vector<double>(), a[i].grad().to_vector<double>());
  ASSERT_EQ(f.stats().breaks.size(), 1u);
  EXPECT_EQ(f.stats().breaks[0].reason, "Unsupported Tensor.backward() call");
  CompiledFunction strict(step, {.backend = "eager", .fullgraph = true});
  std::vector<Tensor> c = leaves(4);
  EXPECT_THAT([&] { strict(c); }, ::testing::ThrowsMessage<GraphBreakError>(HasSubstr("Tensor.backward()")));
}

TEST(AotAutograd, ExplainShowsTheForwardAndBackwardGraphs) {
  std::vector<Tensor> in = leaves(8);
  const std::string text = explain(&mlp)(in).str();
  EXPECT_THAT(text, HasSubstr("AOT Graphs (forward and backward, for inputs that require grad):\n  AOT 1:\n"
                              "    forward:\n    %x0 = placeholder : f32[8, 4]\n"));
  EXPECT_THAT(text, HasSubstr("    backward:\n"));
  EXPECT_THAT(text, HasSubstr("aten::gelu_backward"));
}

TEST(AotAutograd, GraphBreaksChainOneNodePerGraph) {
  auto broken = [](const std::vector<Tensor>& in) {
    const Tensor h = ops::gelu(ops::linear(in[0], in[1], in[2]));
    graph_break();
    return std::vector<Tensor>{ops::mean(ops::log_softmax(ops::mm(h, ops::t(in[3])), -1))};
  };
  CompiledFunction f(broken, {.backend = "fused"});
  EXPECT_EQ(grads_of(f, 5), grads_of(&mlp, 5));
  EXPECT_EQ(f.stats().aot_graphs.size(), 2u);
  EXPECT_EQ(f.stats().breaks.size(), 1u);
}

TEST(AotAutograd, ABackwardBackendCompilesTheBackwardHalf) {
  int forward_compiles = 0, backward_compiles = 0;
  CompileOptions o;
  o.backend_fn = [&](const Graph& g, const std::vector<Tensor>& ex) {
    ++forward_compiles;
    return eager_backend(g, ex);
  };
  o.backward_backend_fn = [&](const Graph& g, const std::vector<Tensor>& ex) {
    ++backward_compiles;
    return eager_backend(g, ex);
  };
  CompiledFunction f(&mlp, o);
  EXPECT_EQ(grads_of(f, 6), grads_of(&mlp, 6));
  EXPECT_EQ(forward_compiles, 2);  // the inference graph, then the forward half
  EXPECT_EQ(backward_compiles, 1);
}

// Modes around a compiled call see the ops that run on real tensors, never
// the joint trace's fake ones; modes active during backward see the backward
// graph's ops, as in PyTorch.
TEST(AotAutograd, ModesSeeTheBackwardGraphsOps) {
  test_util::OpNames names;
  CompiledFunction f([](const std::vector<Tensor>& in) { return std::vector{ops::sum(ops::tanh(in[1]))}; },
                     {.backend = "aot_eager"});
  std::vector<Tensor> in = leaves(7);
  Tensor loss;
  {
    ModeGuard g(names);
    loss = f(in)[0];  // the first call: compiles the inference and AOT graphs
  }
  EXPECT_THAT(names.names, ElementsAre("aten::tanh", "aten::sum"));
  names.names.clear();
  {
    ModeGuard g(names);
    loss.backward();
  }
  EXPECT_THAT(names.names, ::testing::Contains("aten::tanh_backward"));
}

// A dynamic dim with inputs that require grad: each new size traces its own
// joint graph, whose tangents have that call's sizes (they had the captured
// graph's, so the first new size failed in backward's shape check).
TEST(AotAutograd, DynamicSizesGetTangentsOfTheirOwnSize) {
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    CompiledFunction f([](const std::vector<Tensor>& in) { return std::vector{ops::exp(in[0])}; },
                       {.backend = backend});
    for (int64_t n : {4, 6, 8}) {
      Tensor x = ops::arange(static_cast<double>(n * 3));
      x = ops::div(ops::view(x, {n, 3}), 10.0);
      x.requires_grad_();
      const Tensor y = f({x})[0];
      ops::sum(y).backward();
      autograd::NoGradGuard no_grad;
      EXPECT_EQ(x.grad().to_vector<double>(), ops::exp(x).to_vector<double>()) << "n = " << n;
    }
  }
}

// A compiled graph may write in place an input that is a non-leaf requiring
// grad, as eager code may: its history becomes the compiled node, whose
// gradient reaches the leaf behind it (See Note [Primals of non-leaf inputs]).
// A leaf input is refused, as in eager.
TEST(AotAutograd, ANonLeafInputWrittenInPlaceKeepsItsGradient) {
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    CompiledFunction f(
        [](const std::vector<Tensor>& in) {
          Tensor y = in[0];
          ops::mul_(y, ops::scalar_tensor(3.0));
          return std::vector{y};
        },
        {.backend = backend});
    Tensor x = ops::ones({4});
    x.requires_grad_();
    const Tensor y = ops::mul(x, 2.0);
    f({y});
    ops::sum(y).backward();
    EXPECT_EQ(x.grad().to_vector<double>(), std::vector<double>(4, 6.0));
    EXPECT_THAT([&] { f({x}); }, ::testing::ThrowsMessage<Error>(HasSubstr(
                                     "a leaf Variable that requires grad is being used in an in-place operation")));
  }
}

// A result the backward graph also needs (exp's, saved for exp's gradient)
// is saved as an output, holding its node weakly: saved as an input it made
// a cycle (result -> node -> result) that leaked when backward never ran.
TEST(AotAutograd, ASavedResultDoesNotKeepItsNodeAlive) {
  CompiledFunction f([](const std::vector<Tensor>& in) { return std::vector{ops::exp(in[0])}; },
                     {.backend = "aot_eager"});
  Tensor x = ops::ones({3});
  x.requires_grad_();
  std::vector<Tensor> out = f({x});
  const std::weak_ptr<autograd::Node> node = out[0].grad_fn();
  ASSERT_FALSE(node.expired());
  EXPECT_EQ(node.lock()->name(), "CompiledFunctionBackward");
  ops::sum(out[0]).backward({}, /*retain_graph=*/true);  // the saved output still unpacks
  EXPECT_EQ(x.grad().to_vector<double>(), ops::exp(ops::ones({3})).to_vector<double>());
  out.clear();
  EXPECT_TRUE(node.expired());
}

}  // namespace
}  // namespace opspec
