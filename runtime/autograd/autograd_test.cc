// Tests of autograd: tensors' autograd state, gradients, PyTorch's backward
// op sequences and its errors. See runtime/autograd/README.md.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "runtime/autograd/accumulate_grad.h"
#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/autograd_test_util.h"
#include "runtime/autograd/engine.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/autograd/node.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace autograd_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using autograd_test::backward_ops;
using autograd_test::GradCase;
using autograd_test::leaf;
using autograd_test::random;
using autograd_test::Recorder;

TEST(Autograd, LeavesAndGradFns) {
  Tensor x = leaf({2, 3}, 1), w = leaf({3, 4}, 2);
  EXPECT_TRUE(x.requires_grad());
  EXPECT_TRUE(x.is_leaf());
  EXPECT_EQ(x.grad_fn(), nullptr);
  const Tensor y = ops::mm(x, w);
  EXPECT_TRUE(y.requires_grad());
  EXPECT_FALSE(y.is_leaf());
  ASSERT_NE(y.grad_fn(), nullptr);
  EXPECT_EQ(y.grad_fn()->name(), "MmBackward0");
  EXPECT_EQ(ops::relu(y).grad_fn()->name(), "ReluBackward0");
  EXPECT_EQ(ops::sum(y).grad_fn()->name(), "SumBackward0");
  // A C++ number becomes a wrapped 0-dim tensor, as Python's `y + 1` does: add.Tensor.
  EXPECT_EQ(ops::add(y, 1.0).grad_fn()->name(), "AddBackward0");
  const Tensor d = y.detach();
  EXPECT_FALSE(d.requires_grad());
  EXPECT_TRUE(d.is_alias_of(y));
  // Plain tensors record nothing, and factories of a tensor that requires grad neither.
  EXPECT_FALSE(ops::mm(random({2, 3}, 3), random({3, 4}, 4)).requires_grad());
  EXPECT_FALSE(ops::ones_like(x).requires_grad());
  // Integer results are not differentiable.
  EXPECT_FALSE(ops::gt(x, 1.0).requires_grad());
}

// See Note [Recycled tensors]: a recorded op's result is reused once dead,
// its history gone with it, so the next fresh tensor has none.
TEST(Autograd, ADeadRecordedResultIsReusedWithoutItsHistory) {
  const Tensor a = ops::ones({3});
  a.requires_grad_();
  const TensorImpl* dead = nullptr;
  std::weak_ptr<autograd::Node> node;
  {
    const Tensor y = ops::mul(a, a);
    dead = y.impl();
    node = y.grad_fn();
    ASSERT_FALSE(node.expired());
  }
  EXPECT_TRUE(node.expired());  // the graph went with the tensor
  const Tensor fresh = ops::zeros({3});
  ASSERT_EQ(fresh.impl(), dead);  // the thread's recycled pair
  EXPECT_FALSE(fresh.requires_grad());
  EXPECT_EQ(fresh.grad_fn(), nullptr);
  EXPECT_EQ(fresh.impl()->autograd_meta(), nullptr);
  EXPECT_FALSE(fresh.key_set().has(DispatchKey::kAutograd));
  EXPECT_FALSE(ops::add(fresh, 1).requires_grad());
}

TEST(Autograd, GradientsOfALinearLayerAreTheHandComputedOnes) {
  Tensor x = leaf({4, 3}, 5), w = leaf({3, 2}, 6), b = leaf({2}, 7);
  const Tensor loss = ops::sum(ops::relu(ops::add(ops::mm(x, w), b)));
  loss.backward();
  // By hand, without autograd: g = 1[relu input > 0]; dW = x^T g, db = sum_rows g, dx = g W^T.
  autograd::NoGradGuard no_grad;
  const Tensor pre = ops::add(ops::mm(x, w), b);
  const Tensor g = ops::_to_copy(ops::gt(pre, 0.0), {.dtype = DType::kFloat64});
  EXPECT_EQ(w.grad().to_vector<double>(), ops::mm(ops::t(x), g).to_vector<double>());
  EXPECT_EQ(b.grad().to_vector<double>(), ops::sum(g, {0}).to_vector<double>());
  EXPECT_EQ(x.grad().to_vector<double>(), ops::mm(g, ops::t(w)).to_vector<double>());
}

// The sequences below are PyTorch's: torch 1.13 under a TorchDispatchMode,
// with 2.x's dense in-place buffer accumulation (add_ where 1.13 used add),
// and derived from derivatives.yaml and engine.cpp (See Note [Engine order]).
TEST(Autograd, BroadcastAddReducesInTheEngine) {
  Tensor x = leaf({2, 3}, 8), y = leaf({3}, 9);
  int detaches = 0;
  EXPECT_THAT(backward_ops(ops::sum(ops::add(x, y)), &detaches),
              ElementsAre("aten::ones_like", "aten::expand", "aten::sum.dim_IntList", "aten::view",
                          "aten::new_empty_strided", "aten::copy_"));
  // x's gradient is the expanded ones (stride 0): copied into x's layout; y's is fresh: stolen.
  EXPECT_EQ(detaches, 1);
  EXPECT_THAT(x.grad().to_vector<double>(), ElementsAre(1, 1, 1, 1, 1, 1));
  EXPECT_THAT(y.grad().to_vector<double>(), ElementsAre(2, 2, 2));
  EXPECT_THAT(x.grad().strides(), ElementsAre(3, 1));
}

TEST(Autograd, MmComputesMat2FirstThenSelf) {
  Tensor a = leaf({4, 5}, 10), b = leaf({5, 3}, 11);
  int detaches = 0;
  EXPECT_THAT(backward_ops(ops::sum(ops::mm(a, b)), &detaches),
              ElementsAre("aten::ones_like", "aten::expand", "aten::t", "aten::mm", "aten::t", "aten::mm"));
  EXPECT_EQ(detaches, 2);
}

TEST(Autograd, ReluMeanAndMul) {
  Tensor a = leaf({4, 5}, 12);
  EXPECT_THAT(backward_ops(ops::sum(ops::relu(a))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::threshold_backward"));
  EXPECT_THAT(backward_ops(ops::sum(ops::mean(a, {1}))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::unsqueeze", "aten::expand", "aten::div.Scalar",
                          "aten::add_.Tensor"));
  // Two gradients into one leaf: summed in the engine's buffer (in place), then added to .grad.
  EXPECT_THAT(backward_ops(ops::sum(ops::mul(a, a))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::mul.Tensor",
                          "aten::add_.Tensor", "aten::add_.Tensor"));
}

TEST(Autograd, ColumnMajorWeightsTakeTheTransposedProduct) {
  // linear's t(weight) is column-major: its mat2 gradient is t(grad), mm, t (FunctionsManual's mm_mat2_backward).
  Tensor x = leaf({4, 3}, 13), w = leaf({2, 3}, 14), bias = leaf({2}, 15);
  EXPECT_THAT(backward_ops(ops::sum(ops::addmm(bias, x, ops::t(w)))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::t", "aten::mm", "aten::t", "aten::mm",
                          "aten::t", "aten::sum.dim_IntList", "aten::view", "aten::t"));
}

// Fresh leaves, sum() of each op's result, backward under a recording mode:
// torch 1.13's ops (TorchDispatchMode, detach left out), with 2.x's in-place
// add_ where two gradients meet in the engine (1.13 used add).
TEST(Autograd, BackwardOpSequencesMatchPyTorch) {
  using V = const std::vector<Tensor>&;
  const std::vector<autograd_test::SequenceCase> cases = {
      {"sqrt", {{3}}, [](V t) { return ops::sqrt(t[0]); }, {"mul.Scalar", "div.Tensor"}},
      {"rsqrt", {{3}}, [](V t) { return ops::rsqrt(t[0]); }, {"pow.Tensor_Scalar", "mul.Scalar", "mul.Tensor"}},
      {"pow", {{3}}, [](V t) { return ops::pow(t[0], 3.0); }, {"pow.Tensor_Scalar", "mul.Scalar", "mul.Tensor"}},
      {"reciprocal", {{3}}, [](V t) { return ops::reciprocal(t[0]); }, {"mul.Tensor", "neg", "mul.Tensor"}},
      {"cos", {{3}}, [](V t) { return ops::cos(t[0]); }, {"sin", "neg", "mul.Tensor"}},
      {"tanh", {{3}}, [](V t) { return ops::tanh(t[0]); }, {"tanh_backward"}},
      {"sigmoid", {{3}}, [](V t) { return ops::sigmoid(t[0]); }, {"sigmoid_backward"}},
      {"gelu", {{3}}, [](V t) { return ops::gelu(t[0]); }, {"gelu_backward"}},
      {"silu", {{3}}, [](V t) { return ops::silu(t[0]); }, {"silu_backward"}},
      {"div", {{3}, {3}}, [](V t) { return ops::div(t[0], t[1]); },
       {"div.Tensor", "div.Tensor", "neg", "mul.Tensor", "div.Tensor"}},
      {"sub_alpha", {{3}, {3}}, [](V t) { return ops::sub(t[0], t[1], 3); },
       {"neg", "mul.Scalar", "new_empty_strided", "copy_"}},
      {"addmm_alpha", {{4}, {2, 3}, {3, 4}}, [](V t) { return ops::addmm(t[0], t[1], t[2], 0.5, 2.0); },
       {"t", "mm", "mul.Scalar", "t", "mm", "mul.Scalar", "mul.Scalar", "sum.dim_IntList", "view"}},
      {"mean", {{2, 3}}, [](V t) { return ops::mean(t[0]); }, {"expand", "div.Scalar"}},
      {"mean_dim", {{2, 3}}, [](V t) { return ops::mean(t[0], {1}); }, {"unsqueeze", "expand", "div.Scalar"}},
      {"sum_dims", {{2, 3, 4}}, [](V t) { return ops::sum(t[0], {0, 2}); },
       {"unsqueeze", "unsqueeze", "expand", "new_empty_strided", "copy_"}},
      {"cat", {{2, 3}, {1, 3}}, [](V t) { return ops::cat({t[0], t[1]}, 0); },
       {"slice.Tensor", "slice.Tensor", "new_empty_strided", "copy_", "new_empty_strided", "copy_"}},
      {"stack", {{2, 3}, {2, 3}}, [](V t) { return ops::stack({t[0], t[1]}, 1); },
       {"select.int", "select.int", "new_empty_strided", "copy_", "new_empty_strided", "copy_"}},
      {"permute", {{2, 3, 4}}, [](V t) { return ops::permute(t[0], {1, 2, 0}); }, {"permute", "new_empty_strided", "copy_"}},
      {"squeeze", {{1, 3, 1}}, [](V t) { return ops::squeeze(t[0]); },
       {"unsqueeze", "unsqueeze", "new_empty_strided", "copy_"}},
      {"unsqueeze", {{3}}, [](V t) { return ops::unsqueeze(t[0], 0); }, {"squeeze.dim", "new_empty_strided", "copy_"}},
      {"transpose", {{2, 3}}, [](V t) { return ops::transpose(t[0], 0, 1); },
       {"transpose.int", "new_empty_strided", "copy_"}},
      {"dot", {{3}, {3}}, [](V t) { return ops::dot(t[0], t[1]); }, {"mul.Tensor", "mul.Tensor"}},
      {"bmm", {{2, 2, 3}, {2, 3, 2}}, [](V t) { return ops::bmm(t[0], t[1]); },
       {"transpose.int", "bmm", "transpose.int", "bmm"}},
      {"mul_self", {{3}}, [](V t) { return ops::mul(t[0], t[0]); }, {"mul.Tensor", "mul.Tensor", "add_.Tensor"}},
      {"exp_log", {{3}}, [](V t) { return ops::log(ops::exp(t[0])); }, {"div.Tensor", "mul.Tensor"}},
      // torch 2.x reshapes the expanded (non-contiguous) grad with _reshape_alias; opspec's reshape is a view.
      {"amax", {{2, 3}}, [](V t) { return ops::amax(t[0], {1}); },
       {"view", "eq.Tensor", "view", "sum.dim_IntList", "div.Tensor", "mul.Tensor"}},
      {"amax_keepdim", {{2, 3}}, [](V t) { return ops::amax(t[0], {1}, true); },
       {"eq.Tensor", "sum.dim_IntList", "div.Tensor", "mul.Tensor"}},
  };
  autograd_test::expect_backward_sequences(cases);
}

// The Autograd key's typed entries (See Note [Typed fallback entries]) record
// what its boxed kernel records: the node, the backward ops, the gradients,
// with inputs that need gradients and inputs that do not (whose metadata the
// node keeps itself) and the scalar arguments formulas read.
TEST(Autograd, TypedAndBoxedCallsRecordTheSameHistory) {
  using V = const std::vector<Tensor>&;
  struct Case {
    std::string op;
    std::vector<std::vector<int64_t>> shapes;
    std::vector<bool> requires_grad;
    std::function<Tensor(V)> typed;
    std::function<std::vector<Value>(V)> boxed_args;
  };
  const std::vector<Case> cases = {
      {"aten::add.Tensor", {{2, 3}, {3}}, {true, false}, [](V t) { return ops::add(t[0], t[1], 2.0); },
       [](V t) { return std::vector<Value>{t[0], t[1], Value(2.0)}; }},
      {"aten::sub.Tensor", {{3}, {2, 3}}, {false, true}, [](V t) { return ops::sub(t[0], t[1], 3.0); },
       [](V t) { return std::vector<Value>{t[0], t[1], Value(3.0)}; }},
      {"aten::mul.Tensor", {{2, 3}, {2, 3}}, {false, true}, [](V t) { return ops::mul(t[0], t[1]); },
       [](V t) { return std::vector<Value>{t[0], t[1]}; }},
      {"aten::relu", {{4}}, {true}, [](V t) { return ops::relu(t[0]); },
       [](V t) { return std::vector<Value>{t[0]}; }},
      {"aten::pow.Tensor_Scalar", {{4}}, {true}, [](V t) { return ops::pow(t[0], 3.0); },
       [](V t) { return std::vector<Value>{t[0], Value(3.0)}; }},
      {"aten::addmm", {{4}, {2, 3}, {3, 4}}, {true, false, true},
       [](V t) { return ops::addmm(t[0], t[1], t[2], 0.5, 2.0); },
       [](V t) { return std::vector<Value>{t[0], t[1], t[2], Value(0.5), Value(2.0)}; }},
      {"aten::sum.dim_IntList", {{2, 3}}, {true}, [](V t) { return ops::sum(t[0], {1}); },
       [](V t) { return std::vector<Value>{t[0], Value(std::vector<int64_t>{1}), Value(false), Value()}; }},
      {"aten::transpose.int", {{2, 3}}, {true}, [](V t) { return ops::transpose(t[0], 0, 1); },
       [](V t) { return std::vector<Value>{t[0], Value(0), Value(1)}; }},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.op);
    std::vector<std::string> grad_fns, sequences;
    std::vector<std::vector<double>> grads;
    for (const bool typed : {true, false}) {
      std::vector<Tensor> in;
      for (size_t i = 0; i < c.shapes.size(); ++i) {
        const auto seed = static_cast<uint32_t>(10 + i);
        in.push_back(c.requires_grad[i] ? leaf(c.shapes[i], seed) : random(c.shapes[i], seed));
      }
      Tensor y;
      if (typed) {
        y = c.typed(in);
      } else {
        const OperatorHandle& op = Dispatcher::singleton().get(c.op);
        const std::vector<Value> args = c.boxed_args(in);  // every schema argument, in order
        Stack s(args.begin(), args.end());
        op.call_boxed(s);
        y = s.at(0).to_tensor();
      }
      ASSERT_NE(y.grad_fn(), nullptr);
      grad_fns.push_back(y.grad_fn()->name());
      std::string sequence;
      for (const std::string& name : backward_ops(ops::sum(y))) sequence += name + " ";
      sequences.push_back(sequence);
      for (size_t i = 0; i < in.size(); ++i) {
        if (c.requires_grad[i]) grads.push_back(in[i].grad().to_vector<double>());
      }
    }
    EXPECT_EQ(grad_fns[0], grad_fns[1]);
    EXPECT_EQ(sequences[0], sequences[1]);
    const size_t half = grads.size() / 2;
    for (size_t i = 0; i < half; ++i) EXPECT_EQ(grads[i], grads[half + i]);
  }
}

// A recording hands its node to the op's last output (See Note [Autograd
// recording cost]): the output is then its node's only owner, on the typed
// entry and the boxed kernel, for a node that saves its output (which holds
// it weakly) and after an in-place op; and the graph still differentiates.
TEST(Autograd, AnOpsLastOutputIsItsNodesOnlyOwner) {
  const Tensor x = leaf({2, 3}, 50);
  Tensor in_place = ops::mul(x, 1.0);
  ops::mul_(in_place, x);  // the boxed kernel's in-place path
  const Tensor outs[] = {ops::add(x, x), ops::exp(x), ops::cat({x, x}), in_place};
  const char* names[] = {"AddBackward0", "ExpBackward0", "CatBackward0", "MulBackward0"};
  for (size_t i = 0; i < std::size(outs); ++i) {
    const std::weak_ptr<autograd::Node> node = outs[i].grad_fn();
    ASSERT_FALSE(node.expired()) << names[i];
    EXPECT_EQ(node.lock()->name(), names[i]);
    EXPECT_EQ(node.use_count(), 1) << names[i];
  }
  Tensor total = ops::sum(outs[0]);
  for (size_t i = 1; i < std::size(outs); ++i) total = ops::add(total, ops::sum(outs[i]));
  total.backward();
  // d/dx of 2x + exp(x) + 2x (cat of x twice) + x^2 (x * 1 * x): 4 + exp(x) + 2x.
  const std::vector<double> xs = x.to_vector<double>(), grad = x.grad().to_vector<double>();
  for (size_t k = 0; k < xs.size(); ++k) EXPECT_NEAR(grad[k], 4 + std::exp(xs[k]) + 2 * xs[k], 1e-5) << k;
}

// A leaf keeps one AccumulateGrad for its life, and a graph keeps its leaves
// alive (See Note [Autograd meta] and Note [Graphs keep their leaves]); a
// leaf reshaped in place under no_grad gets a new one.
TEST(Autograd, LeavesKeepTheirAccumulatorAndGraphsKeepTheirLeaves) {
  Tensor x = leaf({1, 3}, 40);
  const Tensor y1 = ops::mul(x, 2.0), y2 = ops::exp(x);
  const std::shared_ptr<autograd::Node> acc = y1.grad_fn()->next_edges()[0].function;
  ASSERT_NE(acc, nullptr);
  EXPECT_EQ(acc->name(), "AccumulateGrad");
  EXPECT_EQ(y2.grad_fn()->next_edges()[0].function, acc);
  {  // a graph made after the first one died still finds the same accumulator
    const Tensor tmp = ops::neg(x);
  }
  EXPECT_EQ(ops::neg(x).grad_fn()->next_edges()[0].function, acc);

  // Only the graph holds the leaf now: backward still accumulates into it.
  const TensorImpl* impl = x.impl();
  x = Tensor();
  const auto* held = dynamic_cast<const autograd::AccumulateGrad*>(acc.get());
  ASSERT_NE(held, nullptr);
  ASSERT_TRUE(held->variable().defined());
  EXPECT_EQ(held->variable().impl(), impl);
  ops::sum(y1).backward();
  EXPECT_EQ(held->variable().grad().to_vector<double>(), std::vector<double>({2, 2, 2}));

  Tensor z = leaf({1, 3}, 41);
  const Tensor before = ops::mul(z, 2.0);
  {
    autograd::NoGradGuard no_grad;
    ops::squeeze_(z, 0);
  }
  const Tensor after = ops::mul(z, 3.0);
  EXPECT_NE(after.grad_fn()->next_edges()[0].function, before.grad_fn()->next_edges()[0].function);
  ops::sum(after).backward();
  EXPECT_EQ(z.grad().sizes(), IntArrayRef({3}));
}

// A leaf whose handles are gone lives as long as something holds its
// accumulator, and no longer (See Note [Graphs keep their leaves]); a handle
// made again from the accumulator takes it back. Another tensor over the
// leaf's storage tells whether the leaf lives (the storage's count).
TEST(Autograd, AdoptedLeavesLiveAsLongAsTheirAccumulator) {
  Tensor x = leaf({3}, 42);
  const Tensor data = x.detach();
  const auto leaf_alive = [](const Tensor& d) { return d.impl()->storage()->use_count() == 2; };
  Tensor y = ops::mul(x, 2.0);
  x = Tensor();
  EXPECT_TRUE(leaf_alive(data));  // y's graph holds it
  auto* acc = dynamic_cast<autograd::AccumulateGrad*>(y.grad_fn()->next_edges()[0].function.get());
  ASSERT_NE(acc, nullptr);
  Tensor again = acc->variable();
  ASSERT_TRUE(again.defined());
  Tensor z = ops::exp(again);
  EXPECT_EQ(z.grad_fn()->next_edges()[0].function.get(), acc);  // taken back, not a second accumulator
  ops::sum(ops::add(y, z)).backward();
  const std::vector<double> xs = data.to_vector<double>(), grad = again.grad().to_vector<double>();
  for (size_t k = 0; k < xs.size(); ++k) EXPECT_NEAR(grad[k], 2 + std::exp(xs[k]), 1e-5) << k;
  again = Tensor();
  y = Tensor();
  EXPECT_TRUE(leaf_alive(data));  // z's graph holds it
  z = Tensor();
  EXPECT_FALSE(leaf_alive(data));  // gone with the last graph: no cycle kept it

  // A caller of grad_accumulator holds the leaf as a graph does.
  Tensor w = leaf({2}, 43);
  const Tensor w_data = w.detach();
  std::shared_ptr<autograd::Node> held = autograd::grad_accumulator(w);
  w = Tensor();
  EXPECT_TRUE(leaf_alive(w_data));
  held.reset();
  EXPECT_FALSE(leaf_alive(w_data));

  // A leaf whose graphs are gone dies with its last handle.
  Tensor v = leaf({2}, 44);
  const Tensor v_data = v.detach();
  { const Tensor tmp = ops::mul(v, 2.0); }
  v = Tensor();
  EXPECT_FALSE(leaf_alive(v_data));
}

// Each thread records and differentiates its own graphs; graphs made on one
// thread and released on another give their pooled nodes to the releasing
// thread's lists (See Note [Object pool]). ci/sanitize runs it under TSan.
TEST(Autograd, ThreadsRecordBackwardAndReleaseGraphsMadeElsewhere) {
  constexpr int kThreads = 4, kSteps = 20;
  const Tensor shared = random({8, 8}, 99);  // read by every thread, requires no grad
  auto train = [&](Tensor x) {
    for (int step = 0; step < kSteps; ++step) ops::sum(ops::relu(ops::add(ops::mm(x, shared), 1.0))).backward();
    return x.grad().to_vector<double>();
  };
  std::vector<std::vector<double>> grads(kThreads);
  std::vector<Tensor> handed(kThreads);  // graphs that outlive the threads that made them
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      const Tensor x = leaf({8, 8}, static_cast<uint32_t>(100 + i));
      grads[i] = train(x);
      handed[i] = ops::mul(ops::exp(x), 2.0);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    ASSERT_NE(handed[i].grad_fn(), nullptr);
    EXPECT_EQ(handed[i].grad_fn()->name(), "MulBackward0");
    EXPECT_EQ(grads[i], train(leaf({8, 8}, static_cast<uint32_t>(100 + i)))) << "thread " << i;
  }
  handed.clear();  // their nodes die here, on the main thread
}

// ---- Gradients against central differences, op by op ----

TEST(Autograd, EveryFormulaAgreesWithCentralDifferences) {
  using V = const std::vector<Tensor>&;
  const std::vector<GradCase> cases = {
      {"add", {{2, 3}, {3}}, [](V t) { return ops::add(t[0], t[1], 2.0); }, "AddBackward0"},
      {"sub", {{2, 3}, {2, 3}}, [](V t) { return ops::sub(t[0], t[1], 3.0); }, "SubBackward0"},
      {"rsub", {{3}}, [](V t) { return ops::rsub(t[0], 2.0, 3.0); }, "RsubBackward1"},
      {"mul", {{2, 3}, {2, 1}}, [](V t) { return ops::mul(t[0], t[1]); }, "MulBackward0"},
      {"mul_wrapped", {{3}}, [](V t) { return ops::mul(t[0], 2.5); }, "MulBackward0"},
      {"mul_scalar", {{3}}, [](V t) { return autograd::internal::mul_scalar(t[0], 2.5); }, "MulBackward1"},
      {"div", {{2, 3}, {3}}, [](V t) { return ops::div(t[0], t[1]); }, "DivBackward0"},
      {"div_scalar", {{3}}, [](V t) { return autograd::internal::div_scalar(t[0], 4.0); }, "DivBackward1"},
      {"neg", {{3}}, [](V t) { return ops::neg(t[0]); }, "NegBackward0"},
      {"exp", {{3}}, [](V t) { return ops::exp(t[0]); }, "ExpBackward0"},
      {"log", {{3}}, [](V t) { return ops::log(t[0]); }, "LogBackward0"},
      {"sin", {{3}}, [](V t) { return ops::sin(t[0]); }, "SinBackward0"},
      {"cos", {{3}}, [](V t) { return ops::cos(t[0]); }, "CosBackward0"},
      {"tanh", {{3}}, [](V t) { return ops::tanh(t[0]); }, "TanhBackward0"},
      {"sigmoid", {{3}}, [](V t) { return ops::sigmoid(t[0]); }, "SigmoidBackward0"},
      {"relu", {{4}}, [](V t) { return ops::relu(ops::sub(t[0], 1.0)); }, "ReluBackward0"},
      {"gelu", {{4}}, [](V t) { return ops::gelu(ops::sub(t[0], 1.0)); }, "GeluBackward0"},
      {"gelu_tanh", {{4}}, [](V t) { return ops::gelu(ops::sub(t[0], 1.0), "tanh"); }, "GeluBackward0"},
      {"silu", {{4}}, [](V t) { return ops::silu(ops::sub(t[0], 1.0)); }, "SiluBackward0"},
      {"sqrt", {{3}}, [](V t) { return ops::sqrt(t[0]); }, "SqrtBackward0"},
      {"rsqrt", {{3}}, [](V t) { return ops::rsqrt(t[0]); }, "RsqrtBackward0"},
      {"reciprocal", {{3}}, [](V t) { return ops::reciprocal(t[0]); }, "ReciprocalBackward0"},
      {"pow", {{3}}, [](V t) { return ops::pow(t[0], 3.0); }, "PowBackward0"},
      {"mm", {{2, 3}, {3, 4}}, [](V t) { return ops::mm(t[0], t[1]); }, "MmBackward0"},
      {"mm_column_major", {{3, 2}, {4, 3}}, [](V t) { return ops::mm(ops::t(t[0]), ops::t(t[1])); }, "MmBackward0"},
      {"bmm", {{2, 2, 3}, {2, 3, 2}}, [](V t) { return ops::bmm(t[0], t[1]); }, "BmmBackward0"},
      {"addmm", {{4}, {2, 3}, {3, 4}}, [](V t) { return ops::addmm(t[0], t[1], t[2], 0.5, 2.0); }, "AddmmBackward0"},
      {"dot", {{3}, {3}}, [](V t) { return ops::dot(t[0], t[1]); }, "DotBackward0"},
      {"mv", {{2, 3}, {3}}, [](V t) { return ops::mv(t[0], t[1]); }, "MvBackward0"},
      {"t", {{2, 3}}, [](V t) { return ops::t(t[0]); }, "TBackward0"},
      {"transpose", {{2, 3, 4}}, [](V t) { return ops::transpose(t[0], 0, 2); }, "TransposeBackward0"},
      {"permute", {{2, 3, 4}}, [](V t) { return ops::permute(t[0], {1, 2, 0}); }, "PermuteBackward0"},
      {"view", {{2, 3}}, [](V t) { return ops::view(t[0], {3, 2}); }, "ViewBackward0"},
      {"expand", {{3, 1}}, [](V t) { return ops::expand(t[0], {2, 3, 4}); }, "ExpandBackward0"},
      {"unsqueeze", {{3}}, [](V t) { return ops::unsqueeze(t[0], 0); }, "UnsqueezeBackward0"},
      {"squeeze_dim", {{3, 1}}, [](V t) { return ops::squeeze(t[0], 1); }, "SqueezeBackward1"},
      {"squeeze", {{1, 3, 1}}, [](V t) { return ops::squeeze(t[0]); }, "SqueezeBackward0"},
      {"cat", {{2, 3}, {1, 3}}, [](V t) { return ops::cat({t[0], t[1]}, 0); }, "CatBackward0"},
      {"stack", {{2, 3}, {2, 3}}, [](V t) { return ops::stack({t[0], t[1]}, 1); }, "StackBackward0"},
      {"sum", {{2, 3}}, [](V t) { return ops::sum(t[0]); }, "SumBackward0"},
      {"sum_dims", {{2, 3, 4}}, [](V t) { return ops::sum(t[0], {0, 2}); }, "SumBackward1"},
      {"mean", {{2, 3}}, [](V t) { return ops::mean(t[0]); }, "MeanBackward0"},
      {"mean_dim_keepdim", {{2, 3}}, [](V t) { return ops::mean(t[0], {-1}, true); }, "MeanBackward1"},
      {"clone", {{3}}, [](V t) { return ops::clone(t[0]); }, "CloneBackward0"},
      {"amax", {{2, 3}}, [](V t) { return ops::amax(t[0], {1}); }, "AmaxBackward0"},
      {"amin_keepdim", {{2, 3, 2}}, [](V t) { return ops::amin(t[0], {0, 2}, true); }, "AminBackward0"},
  };
  autograd_test::expect_grads_match_central_differences(cases);
}

// ---- The engine's bookkeeping ----

TEST(Autograd, GradReturnsWithoutAccumulatingAndRunsOnlyWhatItNeeds) {
  Tensor x = leaf({3}, 30), y = leaf({3}, 31);
  const Tensor out = ops::sum(ops::add(ops::exp(x), ops::sin(y)));
  Recorder r;
  std::vector<Tensor> g;
  {
    ModeGuard guard(r);
    g = autograd::grad({out}, {x});
  }
  EXPECT_FALSE(x.grad().defined());
  EXPECT_FALSE(y.grad().defined());
  // sin's backward (cos, mul) is not on the path to x.
  EXPECT_THAT(r.names, ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor"));
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(g[0].to_vector<double>(), ops::exp(x).to_vector<double>());
}

TEST(Autograd, RetainGraphAllowsASecondBackwardThatAccumulates) {
  Tensor x = leaf({3}, 32);
  const Tensor out = ops::sum(ops::exp(x));
  out.backward({}, /*retain_graph=*/true);
  const std::vector<double> once = x.grad().to_vector<double>();
  out.backward();
  for (size_t i = 0; i < once.size(); ++i) EXPECT_DOUBLE_EQ(x.grad().to_vector<double>()[i], 2 * once[i]);
  EXPECT_THAT([&] { out.backward(); },
              ThrowsMessage<Error>(HasSubstr("Trying to backward through the graph a second time")));
}

TEST(Autograd, RetainGradKeepsANonLeafsGradient) {
  Tensor x = leaf({3}, 33);
  Tensor h = ops::mul(x, 2.0);
  h.retain_grad();
  ops::sum(ops::exp(h)).backward();
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(h.grad().to_vector<double>(), ops::exp(ops::mul(x, 2.0)).to_vector<double>());
}

// PyTorch copies a retained gradient, and the first gradient of a leaf that is
// not dense, row-major (clone(memory_format=torch.contiguous_format)) now that
// a plain clone keeps layouts: torch 1.13 gives y.grad and leaf.grad (3, 1) here.
TEST(Autograd, RetainedAndNonDenseLeafGradientsAreRowMajor) {
  Tensor x = leaf({4, 3}, 36);
  const Tensor w = ops::randn({3, 4}, {.dtype = DType::kFloat64});
  Tensor y = ops::mul(x, 2.0);
  y.retain_grad();
  ops::sum(ops::mul(ops::t(y), w)).backward();  // y's gradient arrives transposed
  EXPECT_THAT(y.grad().strides(), ElementsAre(3, 1));
  const Tensor base = ops::randn({4, 6}, {.dtype = DType::kFloat64});
  Tensor sliced = ops::slice(base, 1, std::nullopt, std::nullopt, 2).detach();  // [4, 3] (6, 2)
  sliced.requires_grad_();
  ops::sum(ops::mul(ops::t(sliced), w)).backward();
  EXPECT_THAT(sliced.grad().strides(), ElementsAre(3, 1));
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(sliced.grad().to_vector<double>(), ops::t(w).to_vector<double>());
}

TEST(Autograd, RetainGradFollowsAnInPlaceOp) {
  // PyTorch 2.x (update_tensor_hooks_on_new_gradfn): the retains_grad hook
  // moves to the in-place op's node, so y.grad is the gradient of y after
  // mul_, [1, 1, 1]; it was the gradient of y before, [3, 3, 3].
  Tensor x = ops::ones({3}, {.dtype = DType::kFloat64});
  x.requires_grad_();
  Tensor y = ops::mul(x, 2.0);
  y.retain_grad();
  ops::mul_(y, ops::scalar_tensor(3.0, {.dtype = DType::kFloat64}));
  EXPECT_TRUE(y.retains_grad());
  // The retained gradient's clone runs before mul_'s backward, not after it.
  EXPECT_THAT(backward_ops(ops::sum(y)),
              ElementsAre("aten::ones_like", "aten::expand", "aten::clone", "aten::mul.Tensor", "aten::mul.Tensor"));
  EXPECT_THAT(y.grad().to_vector<double>(), ElementsAre(1, 1, 1));
  EXPECT_THAT(x.grad().to_vector<double>(), ElementsAre(6, 6, 6));
}

TEST(Autograd, RetainGradOfAViewAndItsBaseFollowInPlaceOpsOnTheView) {
  // PyTorch 2.x: the base's hook moves to its CopySlices, the view's to its
  // regenerated AsStridedBackward0: both get the gradients after mul_, and
  // the view's only when backward goes through the view as it is now.
  const Tensor three = ops::scalar_tensor(3.0, {.dtype = DType::kFloat64});
  const Tensor x = leaf({4}, 35);
  Tensor b = ops::mul(x, 1.0);
  b.retain_grad();
  Tensor v = ops::slice(b, 0, 0, 2);
  v.retain_grad();
  ops::mul_(v, three);
  ops::sum(ops::mul(b, 2.0)).backward();
  EXPECT_THAT(b.grad().to_vector<double>(), ElementsAre(2, 2, 2, 2));
  EXPECT_FALSE(v.grad().defined());  // was [6, 6], the old view's, from its old SliceBackward0
  EXPECT_THAT(x.grad().to_vector<double>(), ElementsAre(6, 6, 2, 2));

  const Tensor x2 = leaf({4}, 36);
  Tensor b2 = ops::mul(x2, 1.0);
  b2.retain_grad();
  Tensor v2 = ops::slice(b2, 0, 0, 2);
  v2.retain_grad();
  ops::mul_(v2, three);
  ops::add(ops::sum(ops::mul(b2, 2.0)), ops::sum(v2)).backward();
  EXPECT_THAT(v2.grad().to_vector<double>(), ElementsAre(1, 1));
  EXPECT_THAT(b2.grad().to_vector<double>(), ElementsAre(3, 3, 2, 2));
  EXPECT_THAT(x2.grad().to_vector<double>(), ElementsAre(9, 9, 2, 2));
}

TEST(Autograd, NoGradRecordsNothingAndAllowsInPlaceUpdatesOfLeaves) {
  Tensor w = leaf({3}, 34);
  ops::sum(ops::mul(w, w)).backward();
  {
    autograd::NoGradGuard no_grad;
    EXPECT_FALSE(autograd::is_grad_enabled());
    EXPECT_FALSE(ops::mul(w, 2.0).requires_grad());
    const std::vector<double> before = w.to_vector<double>();
    ops::add_(w, w.grad(), -0.1);  // an SGD step
    EXPECT_NEAR(w.to_vector<double>()[0], before[0] * (1 - 0.2), 1e-12);
    {
      autograd::EnableGradGuard on;
      EXPECT_TRUE(ops::mul(w, 2.0).requires_grad());
    }
  }
  EXPECT_TRUE(autograd::is_grad_enabled());
  EXPECT_TRUE(w.is_leaf());
}

TEST(Autograd, InPlaceOpsRebaseHistory) {
  Tensor x = leaf({3}, 35);
  Tensor h = ops::mul(x, 3.0);
  ops::add_(h, ops::exp(x));
  EXPECT_EQ(h.grad_fn()->name(), "AddBackward0");
  ops::sum(h).backward();
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(x.grad().to_vector<double>(), ops::add(ops::exp(x), 3.0).to_vector<double>());
}

TEST(Autograd, SeveralRootsAndExplicitGradients) {
  Tensor x = leaf({2}, 36);
  const Tensor a = ops::mul(x, 2.0), b = ops::exp(x);
  autograd::backward({a, b}, {ops::ones_like(a), ops::full_like(b, 0.5)});
  autograd::NoGradGuard no_grad;
  EXPECT_EQ(x.grad().to_vector<double>(), ops::add(ops::mul(ops::exp(x), 0.5), 2.0).to_vector<double>());
}

// ---- PyTorch's errors ----

TEST(Autograd, ErrorsAreTheOnesPyTorchGives) {
  Tensor x = leaf({2, 3}, 40);
  EXPECT_THAT([&] { ops::mul(x, 2.0).backward(); },
              ThrowsMessage<Error>(HasSubstr("grad can be implicitly created only for scalar outputs")));
  EXPECT_THAT([&] { random({2}, 41).backward(); },
              ThrowsMessage<Error>(HasSubstr("element 0 of tensors does not require grad and does not have a grad_fn")));
  EXPECT_THAT([&] { ops::ones({2}, {.dtype = DType::kInt64}).requires_grad_(); },
              ThrowsMessage<Error>(HasSubstr("Only Tensors of floating point and complex dtype can require gradients")));
  EXPECT_THAT([&] { ops::add_(x, ops::ones_like(x)); },
              ThrowsMessage<Error>(HasSubstr("a leaf Variable that requires grad is being used in an in-place operation.")));
  EXPECT_THAT([&] { ops::mul(x, 2.0).backward(ops::ones({3, 2}, {.dtype = DType::kFloat64})); },
              ThrowsMessage<Error>(HasSubstr("Mismatch in shape: grad_output[0] has a shape of torch.Size([3, 2]) and "
                                             "output[0] has a shape of torch.Size([2, 3]).")));
  Tensor y = leaf({3}, 42);
  EXPECT_THAT([&] { autograd::grad({ops::sum(ops::exp(x))}, {y}); },
              ThrowsMessage<Error>(HasSubstr("One of the differentiated Tensors appears to not have been used in the "
                                             "graph. Set allow_unused=True if this is the desired behavior.")));
  EXPECT_FALSE(autograd::grad({ops::sum(ops::exp(x))}, {y}, {}, {}, false, /*allow_unused=*/true)[0].defined());
}

TEST(Autograd, ASavedTensorChangedInPlaceFailsBackwardNamingIt) {
  Tensor x = leaf({2, 3}, 43);
  Tensor h = ops::mul(x, 2.0);
  const Tensor e = ops::exp(h);  // saves its result
  const Tensor loss = ops::sum(e);
  {
    autograd::NoGradGuard no_grad;
    Tensor alias = e;
    ops::add_(alias, ops::ones_like(e));
  }
  EXPECT_THAT([&] { loss.backward(); },
              ThrowsMessage<Error>(HasSubstr(
                  "one of the variables needed for gradient computation has been modified by an inplace operation: "
                  "[torch.DoubleTensor [2, 3]], which is output 0 of ExpBackward0, is at version 1; expected version "
                  "0 instead. Hint: enable anomaly detection")));
  // Nothing is left half-done: x has no gradient, and a fresh graph works.
  EXPECT_FALSE(x.grad().defined());
  ops::sum(ops::exp(x)).backward();
  EXPECT_TRUE(x.grad().defined());
}

TEST(Autograd, AnOpWithoutAFormulaFailsInBackwardNamingIt) {
  Tensor x = leaf({2, 3}, 44);
  // silu_backward has no formula, in PyTorch either (silu's create_graph
  // backward records differentiable ops instead).
  const Tensor y = ops::sum(ops::silu_backward(ops::ones({2, 3}, {.dtype = DType::kFloat64}), x));
  EXPECT_TRUE(y.requires_grad());
  EXPECT_EQ(y.grad_fn()->next_edges()[0].function->name(), "NotImplemented");
  EXPECT_THAT([&] { y.backward(); },
              ThrowsMessage<Error>(HasSubstr("the derivative for 'aten::silu_backward' is not implemented.")));
}

// A function mode (TorchFunctionMode) sees backward's seed (Python's
// torch.ones_like), never the engine's formulas: they are C++ calls in
// PyTorch. It saw expand, mul and the rest.
TEST(Autograd, AFunctionModeDoesNotSeeTheEnginesOps) {
  struct Names : FunctionMode {
    bool dispatch(OpCall& call) override {
      names.push_back(call.name());
      call.proceed();
      return true;
    }
    std::vector<std::string> names;
  } mode;
  const Tensor x = ops::ones({3});
  x.requires_grad_();
  const Tensor y = ops::sum(ops::mul(x, 2));
  {
    ModeGuard g(mode);
    y.backward();
  }
  EXPECT_THAT(mode.names, ElementsAre("aten::ones_like"));
  EXPECT_EQ(x.grad().to_vector<float>(), std::vector<float>(3, 2.0f));
}

}  // namespace
}  // namespace opspec
