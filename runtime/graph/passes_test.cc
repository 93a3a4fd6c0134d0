#include "runtime/graph/passes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/dispatch/dispatcher.h"
#include "runtime/graph/interpreter.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace passes_test {

const OperatorHandle& op(std::string_view name) { return Dispatcher::singleton().get(name); }
NodeArg N(Node* n) { return NodeArg::node(n); }
NodeArg V(Value v) { return NodeArg::value(std::move(v)); }
std::vector<OutputMeta> M(const Tensor& t) { return {TensorMeta::of(t)}; }

// x -> relu -> neg (dead chain), add_ (in-place, unused), randn (unused),
// native_dropout with both getitems unused, an unused constant, and the
// output mul(x, x).
Graph dce_graph() {
  Tensor x = ops::randn({4});
  auto [drop, mask] = ops::native_dropout(x, 0.5, true);
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* unused_input = g.add_placeholder("unused", TensorMeta::of(x));
  Node* relu = g.add_call(op("aten::relu"), {N(xn)}, M(x));
  g.add_call(op("aten::neg"), {N(relu)}, M(x));
  g.add_call(op("aten::add_.Tensor"), {N(unused_input), N(xn), V(1)}, M(x));
  g.add_call(op("aten::randn"), {V(std::vector<int64_t>{2}), V(std::nullopt), V(std::nullopt), V(std::nullopt),
                                 V(std::nullopt)},
             M(ops::randn({2})));
  Node* dropout = g.add_call(op("aten::native_dropout"), {N(xn), V(0.5), V(true)},
                             {TensorMeta::of(drop), TensorMeta::of(mask)});
  g.add_getitem(dropout, 0);
  g.add_getitem(dropout, 1);
  g.add_constant(ops::ones({4}));
  g.set_output({g.add_call(op("aten::mul.Tensor"), {N(xn), N(xn)}, M(x))});
  return g;
}

TEST(PassesTest, IsImpure) {
  Graph g = dce_graph();
  auto impure = [&](std::string_view name) { return is_impure(*g.find(name)); };
  EXPECT_TRUE(impure("x"));
  EXPECT_TRUE(impure("output"));
  EXPECT_TRUE(impure("add_"));
  EXPECT_TRUE(impure("randn"));
  EXPECT_TRUE(impure("native_dropout"));
  EXPECT_FALSE(impure("relu"));
  EXPECT_FALSE(impure("neg"));
  EXPECT_FALSE(impure("getitem"));
  EXPECT_FALSE(impure("_tensor_constant0"));
  EXPECT_FALSE(impure("mul"));
}

TEST(PassesTest, EliminateDeadCodeRemovesUnusedPureNodes) {
  Graph g = dce_graph();
  EXPECT_EQ(eliminate_dead_code(g), 5);  // neg, relu, getitem, getitem_1, _tensor_constant0
  g.lint();
  EXPECT_EQ(g.str(),
            "%x = placeholder : f32[4]\n"
            "%unused = placeholder : f32[4]\n"
            "%add_ = aten::add_.Tensor(%unused, %x) : f32[4]\n"
            "%randn = aten::randn([2]) : f32[2]\n"
            "%native_dropout = aten::native_dropout(%x, 0.5, True) : (f32[4], b8[4])\n"
            "%mul = aten::mul.Tensor(%x, %x) : f32[4]\n"
            "return %mul\n");
  EXPECT_EQ(eliminate_dead_code(g), 0);
  EXPECT_EQ(g.find("x")->users().size(), 3u);

  // The pruned graph still runs, and computes the same result.
  Tensor x = ops::randn({4}), unused = ops::zeros({4});
  std::vector<Tensor> out = run_graph(g, {x, unused});
  EXPECT_EQ(out[0].to_vector<float>(), ops::mul(x, x).to_vector<float>());
  EXPECT_EQ(unused.to_vector<float>(), x.to_vector<float>());  // add_ ran
}

TEST(PassesTest, EliminateDeadCodeKeepsEverythingUsed) {
  Tensor x = ops::randn({4});
  Graph g;
  Node* xn = g.add_placeholder("x", TensorMeta::of(x));
  Node* relu = g.add_call(op("aten::relu"), {N(xn)}, M(x));
  g.set_output({g.add_call(op("aten::neg"), {N(relu)}, M(x))});
  const std::string before = g.str();
  EXPECT_EQ(eliminate_dead_code(g), 0);
  EXPECT_EQ(g.str(), before);
  // Without an output everything pure is dead.
  g.erase(g.output());
  EXPECT_EQ(eliminate_dead_code(g), 2);
  EXPECT_EQ(g.str(), "%x = placeholder : f32[4]\n");
}

}  // namespace
}  // namespace opspec
