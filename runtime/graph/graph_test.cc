#include "runtime/graph/graph.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/error.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace graph_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const OperatorHandle& op(std::string_view name) { return Dispatcher::singleton().get(name); }
NodeArg N(Node* n) { return NodeArg::node(n); }
NodeArg V(Value v) { return NodeArg::value(std::move(v)); }
std::vector<OutputMeta> M(const Tensor& t) { return {TensorMeta::of(t)}; }

// A graph exercising every printer case; metadata comes from running the same
// ops eagerly.
Graph printer_graph() {
  Tensor x = ops::randn({4, 5}), w = ops::randn({5, 5}), b = ops::randn({5});
  Graph g;
  Node* arg0 = g.add_placeholder("arg0_1", TensorMeta::of(x));
  Node* arg1 = g.add_placeholder("arg1_1", TensorMeta::of(w));
  Node* arg2 = g.add_placeholder("arg2_1", TensorMeta::of(b));
  g.add_constant(ops::tensor({1, 2, 3}, {3}));
  Tensor t = ops::t(w);
  Node* tn = g.add_call(op("aten::t"), {N(arg1)}, M(t));
  Tensor addmm = ops::addmm(b, x, t);
  Node* addmm_n = g.add_call(op("aten::addmm"), {N(arg2), N(arg0), N(tn), V(1), V(1)}, M(addmm));
  Tensor add = ops::add(addmm, x, 2);
  Node* add_n = g.add_call(op("aten::add.Tensor"), {N(addmm_n), N(arg0), V(2)}, M(add));
  Tensor add1 = ops::add(add, 1.0);
  Node* add1_n = g.add_call(op("aten::add.Tensor"),
                            {N(add_n), V(internal::make_wrapped_number(Scalar(1.0))), V(1)}, M(add1));
  Tensor cat = ops::cat({add, add1}, 1);
  Node* cat_n = g.add_call(op("aten::cat"), {NodeArg::nodes({add_n, add1_n}), V(1)}, M(cat));
  auto [y, mean, rstd] = ops::native_layer_norm(add1, {5}, std::nullopt, std::nullopt, 1e-5);
  Node* ln = g.add_call(op("aten::native_layer_norm"),
                        {N(add1_n), V(std::vector<int64_t>{5}), V(std::nullopt), V(std::nullopt), V(1e-5)},
                        {TensorMeta::of(y), TensorMeta::of(mean), TensorMeta::of(rstd)});
  Node* item0 = g.add_getitem(ln, 0);
  g.add_getitem(ln, 2);
  Tensor ones = ops::ones({2});
  g.add_call(op("aten::ones"), {V(std::vector<int64_t>{2}), V(std::nullopt), V(std::nullopt), V(kCPU), V(false)},
             M(ones));
  Tensor s = ops::sum(cat, {1});
  Node* sum_n =
      g.add_call(op("aten::sum.dim_IntList"), {N(cat_n), V(std::vector<int64_t>{1}), V(false), V(std::nullopt)}, M(s));
  Tensor s1 = ops::sum(s);
  Node* sum1_n = g.add_call(op("aten::sum"), {N(sum_n), V(std::nullopt)}, M(s1));
  g.add_call(op("aten::_local_scalar_dense"), {N(sum1_n)}, {std::nullopt});
  g.set_output({item0, cat_n});
  return g;
}

constexpr std::string_view kPrinterGolden =
    "%arg0_1 = placeholder : f32[4, 5]\n"
    "%arg1_1 = placeholder : f32[5, 5]\n"
    "%arg2_1 = placeholder : f32[5]\n"
    "%_tensor_constant0 = constant : f32[3]\n"
    "%t = aten::t(%arg1_1) : f32[5, 5]\n"
    "%addmm = aten::addmm(%arg2_1, %arg0_1, %t) : f32[4, 5]\n"
    "%add = aten::add.Tensor(%addmm, %arg0_1, alpha=2) : f32[4, 5]\n"
    "%add_1 = aten::add.Tensor(%add, 1.0) : f32[4, 5]\n"
    "%cat = aten::cat([%add, %add_1], 1) : f32[4, 10]\n"
    "%native_layer_norm = aten::native_layer_norm(%add_1, [5], None, None, 1e-05) : "
    "(f32[4, 5], f32[4, 1], f32[4, 1])\n"
    "%getitem = getitem(%native_layer_norm, 0) : f32[4, 5]\n"
    "%getitem_1 = getitem(%native_layer_norm, 2) : f32[4, 1]\n"
    "%ones = aten::ones([2], device=cpu, pin_memory=False) : f32[2]\n"
    "%sum = aten::sum.dim_IntList(%cat, [1]) : f32[4]\n"
    "%sum_1 = aten::sum(%sum) : f32[]\n"
    "%_local_scalar_dense = aten::_local_scalar_dense(%sum_1) : Scalar\n"
    "return (%getitem, %cat)\n";

TEST(GraphTest, PrinterGolden) {
  Graph g = printer_graph();
  EXPECT_EQ(g.str(), kPrinterGolden);
  EXPECT_NO_THROW(g.lint());
  EXPECT_EQ(g.find("cat")->str(), "%cat = aten::cat([%add, %add_1], 1) : f32[4, 10]");
}

TEST(GraphTest, OutputForms) {
  Graph g;
  Node* x = g.add_placeholder("x", TensorMeta::of(ops::zeros({2})));
  Node* y = g.add_placeholder("x", TensorMeta::of(ops::zeros({2}, {.dtype = DType::kInt64})));
  EXPECT_EQ(g.output(), nullptr);
  g.set_output({});
  EXPECT_EQ(g.output()->str(), "return ()");
  g.set_output({x});
  EXPECT_EQ(g.output()->str(), "return %x");
  g.set_output({x, y});
  EXPECT_EQ(g.str(), "%x = placeholder : f32[2]\n%x_1 = placeholder : i64[2]\nreturn (%x, %x_1)\n");
  // Nodes added after set_output go before the output node, which stays last.
  g.add_call(op("aten::neg"), {N(x)}, M(ops::zeros({2})));
  EXPECT_EQ(g.nodes().back(), g.output());
  EXPECT_EQ(x->users().size(), 2u);
  EXPECT_EQ(x->users()[0]->name(), "neg");
  EXPECT_EQ(x->users()[1], g.output());
  EXPECT_NO_THROW(g.lint());
}

TEST(GraphTest, TensorMetaStr) {
  EXPECT_EQ(TensorMeta::of(ops::zeros({8, 8})).str(), "f32[8, 8]");
  EXPECT_EQ(TensorMeta::of(ops::zeros({3}, {.dtype = DType::kFloat16, .device = kMeta})).str(), "f16[3] (meta)");
  EXPECT_EQ(TensorMeta::of(ops::zeros({})).str(), "f32[]");
  const TensorMeta m = TensorMeta::of(ops::t(ops::zeros({2, 3})));
  EXPECT_EQ(m.strides, (SizeVec{1, 3}));
}

TEST(GraphTest, UniqueNames) {
  Graph g;
  Tensor x = ops::zeros({2});
  Node* a = g.add_placeholder("x", TensorMeta::of(x));
  Node* b = g.add_placeholder("x", TensorMeta::of(x));
  Node* c = g.add_placeholder("x", TensorMeta::of(x));
  EXPECT_EQ(a->name(), "x");
  EXPECT_EQ(b->name(), "x_1");
  EXPECT_EQ(c->name(), "x_2");
  std::vector<std::string> names;
  for (int i = 0; i < 3; ++i) names.push_back(g.add_call(op("aten::add.Tensor"), {N(a), N(b), V(1)}, M(x))->name());
  names.push_back(g.add_call(op("aten::add_.Tensor"), {N(a), N(b), V(1)}, M(x))->name());
  names.push_back(g.add_constant(x)->name());
  names.push_back(g.add_constant(x)->name());
  names.push_back(g.add_constant(x, "weight")->name());
  EXPECT_THAT(names, ::testing::ElementsAre("add", "add_1", "add_2", "add_", "_tensor_constant0",
                                            "_tensor_constant1", "weight"));
  EXPECT_EQ(g.find("add_1"), g.nodes()[4]);
  EXPECT_EQ(g.find("nope"), nullptr);
  EXPECT_EQ(g.placeholders(), (std::vector<Node*>{a, b, c}));
  EXPECT_EQ(a->users().size(), 4u);
  EXPECT_EQ(g.nodes()[3]->input_nodes(), (std::vector<Node*>{a, b}));
  // Freed names are not reused (FX keeps a counter per base name), and a name
  // taken by hand is skipped.
  g.erase(g.find("add_1"));
  g.add_placeholder("add_4", TensorMeta::of(x));
  EXPECT_EQ(g.add_call(op("aten::add.Tensor"), {N(a), N(b), V(1)}, M(x))->name(), "add_3");
  EXPECT_EQ(g.add_call(op("aten::add.Tensor"), {N(a), N(b), V(1)}, M(x))->name(), "add_5");
  EXPECT_NO_THROW(g.lint());
}

TEST(GraphTest, AddCallChecksArityMetaAndOwnership) {
  Graph g, other;
  Tensor x = ops::zeros({2});
  Node* a = g.add_placeholder("a", TensorMeta::of(x));
  Node* foreign = other.add_placeholder("a", TensorMeta::of(x));
  EXPECT_THAT([&] { g.add_call(op("aten::add.Tensor"), {N(a), N(a)}, M(x)); },
              ThrowsMessage<Error>(HasSubstr("aten::add.Tensor takes 3 argument(s) but 2 were given")));
  EXPECT_THAT([&] { g.add_call(op("aten::neg"), {N(a)}, {}); },
              ThrowsMessage<Error>(HasSubstr("aten::neg returns 1 value(s) but metadata for 0 was given")));
  EXPECT_THAT([&] { g.add_call(op("aten::neg"), {N(foreign)}, M(x)); },
              ThrowsMessage<Error>(HasSubstr("refers to %a, which is not a node of this graph")));
  EXPECT_THAT([&] { g.add_call(op("aten::cat"), {NodeArg::nodes({a, foreign}), V(0)}, M(x)); },
              ThrowsMessage<Error>(HasSubstr("which is not a node of this graph")));
  EXPECT_THAT([&] { g.add_call(op("aten::neg"), {V(3)}, M(x)); },
              ThrowsMessage<Error>(HasSubstr("argument 'self' (position 1) must be Tensor, not int")));
  EXPECT_THAT([&] { g.add_getitem(a, 0); }, ThrowsMessage<Error>(HasSubstr("%a is a placeholder, not a call")));
  EXPECT_THAT([&] { g.set_output({foreign}); }, ThrowsMessage<Error>(HasSubstr("not a node of this graph")));
  EXPECT_EQ(g.size(), 1u);
  EXPECT_TRUE(a->users().empty());
}

TEST(GraphTest, EraseRefusesNodesWithUsers) {
  Graph g;
  Tensor x = ops::zeros({2});
  Node* a = g.add_placeholder("a", TensorMeta::of(x));
  Node* relu = g.add_call(op("aten::relu"), {N(a)}, M(x));
  Node* neg = g.add_call(op("aten::neg"), {N(a)}, M(x));
  EXPECT_THAT([&] { g.erase(a); },
              ThrowsMessage<Error>(HasSubstr("cannot erase %a: it is still used by %relu, %neg")));
  g.erase(relu);
  EXPECT_EQ(a->users(), (std::vector<Node*>{neg}));
  EXPECT_EQ(g.find("relu"), nullptr);
  EXPECT_EQ(g.size(), 2u);
  EXPECT_NO_THROW(g.lint());
  Graph other;
  Node* foreign = other.add_placeholder("z", TensorMeta::of(x));
  EXPECT_THAT([&] { g.erase(foreign); }, ThrowsMessage<Error>(HasSubstr("%z is not a node of this graph")));
}

TEST(GraphTest, LintAcceptsValidGraphsAndCatchesBrokenSequences) {
  Graph g = printer_graph();
  EXPECT_NO_THROW(g.lint());
  EXPECT_NO_THROW(g.clone().lint());
  std::vector<Node*> nodes = g.nodes();
  EXPECT_NO_THROW(internal::lint_nodes(nodes));

  std::vector<Node*> swapped = nodes;
  std::swap(swapped[4], swapped[5]);  // %addmm before the %t it uses
  EXPECT_THAT([&] { internal::lint_nodes(swapped); },
              ThrowsMessage<Error>(HasSubstr("node %addmm uses %t before it is defined")));

  std::vector<Node*> dropped = nodes;
  dropped.erase(dropped.begin() + 4);  // %t missing
  EXPECT_THAT([&] { internal::lint_nodes(dropped); },
              ThrowsMessage<Error>(HasSubstr("node %addmm uses %t, which is not in this graph")));

  std::vector<Node*> duplicated = nodes;
  duplicated.insert(duplicated.begin() + 1, nodes[0]);
  EXPECT_THAT([&] { internal::lint_nodes(duplicated); },
              ThrowsMessage<Error>(HasSubstr("node %arg0_1 (position 1) has a duplicate name")));

  std::vector<Node*> output_first = nodes;
  std::rotate(output_first.rbegin(), output_first.rbegin() + 1, output_first.rend());
  EXPECT_THAT([&] { internal::lint_nodes(output_first); },
              ThrowsMessage<Error>(HasSubstr("output node %output is at position 0")));

  std::vector<Node*> no_users = nodes;
  no_users.pop_back();  // %getitem and %cat list the output as a user
  EXPECT_THAT([&] { internal::lint_nodes(no_users); },
              ThrowsMessage<Error>(HasSubstr("node %cat lists users [%sum, %output] but is used by [%sum]")));
}

TEST(GraphTest, CloneIsDeepAndIndependent) {
  Graph g = printer_graph();
  Graph c = g.clone();
  EXPECT_EQ(c.str(), g.str());
  EXPECT_EQ(c.structural_hash(), g.structural_hash());
  EXPECT_EQ(c.to_dot(), g.to_dot());
  const std::vector<Node*> a = g.nodes(), b = c.nodes();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_NE(a[i], b[i]);
    for (Node* in : b[i]->input_nodes()) EXPECT_EQ(c.find(in->name()), in) << b[i]->str();
    for (Node* u : b[i]->users()) EXPECT_EQ(c.find(u->name()), u) << b[i]->str();
  }
  EXPECT_TRUE(c.find("_tensor_constant0")->constant().is_same(g.find("_tensor_constant0")->constant()));
  // Erasing in the clone leaves the original as it was.
  const std::string before = g.str();
  c.erase(c.find("_local_scalar_dense"));
  c.erase(c.find("ones"));
  EXPECT_EQ(g.str(), before);
  EXPECT_EQ(g.find("sum_1")->users().size(), 1u);
  EXPECT_TRUE(c.find("sum_1")->users().empty());
  EXPECT_NE(c.structural_hash(), g.structural_hash());
  EXPECT_NO_THROW(c.lint());
  // The clone's constant counter continues where the original's stopped.
  EXPECT_EQ(c.add_constant(ops::zeros({1}))->name(), "_tensor_constant1");
}

// Builds x -> op(x, scalar) -> relu with a constant, varying one thing at a time.
struct HashSpec {
  std::string placeholder = "x";
  std::string binary = "aten::mul.Scalar";
  double scalar = 2.0;
  DType dtype = DType::kFloat32;
  int64_t size = 4;
  double constant_value = 1.0;
  bool wire_constant = true;
};

Graph hash_graph(const HashSpec& s) {
  Tensor x = ops::zeros({s.size}, {.dtype = s.dtype});
  Graph g;
  Node* p = g.add_placeholder(s.placeholder, TensorMeta::of(x));
  Node* c = g.add_constant(ops::full({s.size}, s.constant_value, {.dtype = s.dtype}));
  Node* m = g.add_call(op(s.binary), {N(p), V(s.scalar)}, M(x));
  Node* add = g.add_call(op("aten::add.Tensor"), {N(m), N(s.wire_constant ? c : p), V(1)}, M(x));
  g.set_output({g.add_call(op("aten::relu"), {N(add)}, M(x))});
  return g;
}

TEST(GraphTest, StructuralHash) {
  const uint64_t base = hash_graph({}).structural_hash();
  EXPECT_EQ(hash_graph({}).structural_hash(), base);
  EXPECT_EQ(hash_graph({.placeholder = "input"}).structural_hash(), base);
  EXPECT_NE(hash_graph({.binary = "aten::div.Scalar"}).structural_hash(), base);
  EXPECT_NE(hash_graph({.scalar = 3.0}).structural_hash(), base);
  EXPECT_NE(hash_graph({.dtype = DType::kFloat64}).structural_hash(), base);
  EXPECT_NE(hash_graph({.size = 5}).structural_hash(), base);
  EXPECT_NE(hash_graph({.constant_value = 1.5}).structural_hash(), base);
  EXPECT_NE(hash_graph({.wire_constant = false}).structural_hash(), base);

  // Wrapped numbers hash by value; equal constants hash equal whatever their layout.
  auto wrapped = [](double v, Tensor constant) {
    Graph g;
    Node* p = g.add_placeholder("x", TensorMeta::of(ops::zeros({2, 2})));
    Node* c = g.add_constant(constant);
    Node* add = g.add_call(op("aten::add.Tensor"), {N(p), V(internal::make_wrapped_number(Scalar(v))), V(1)},
                           M(ops::zeros({2, 2})));
    g.set_output({add, c});
    return g.structural_hash();
  };
  Tensor k = ops::tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(wrapped(1.0, k), wrapped(1.0, ops::clone(k)));
  EXPECT_NE(wrapped(1.0, k), wrapped(2.0, k));
  EXPECT_NE(wrapped(1.0, k), wrapped(1.0, ops::contiguous(ops::t(k))));
  EXPECT_NE(wrapped(1.0, ops::t(k)), wrapped(1.0, ops::contiguous(ops::t(k))));  // strides differ
  // A meta constant hashes by metadata alone.
  EXPECT_EQ(wrapped(1.0, ops::zeros({2}, {.device = kMeta})), wrapped(1.0, ops::ones({2}, {.device = kMeta})));
}

TEST(GraphTest, ToDot) {
  Graph g;
  Tensor x = ops::zeros({4});
  Node* p = g.add_placeholder("x", TensorMeta::of(x));
  Node* m = g.add_call(op("aten::mul.Tensor"), {N(p), N(p)}, M(x));
  Node* r = g.add_call(op("aten::relu"), {N(m)}, M(x));
  g.set_output({r, m});
  const std::string dot = g.to_dot("my \"graph\"");
  EXPECT_EQ(dot,
            "digraph \"my \\\"graph\\\"\" {\n"
            "  n0 [shape=box, label=\"%x\\nplaceholder\\nf32[4]\"];\n"
            "  n1 [shape=box, label=\"%mul\\naten::mul.Tensor\\nf32[4]\"];\n"
            "  n2 [shape=box, label=\"%relu\\naten::relu\\nf32[4]\"];\n"
            "  n3 [shape=box, label=\"%output\\noutput\"];\n"
            "  n0 -> n1;\n"
            "  n1 -> n2;\n"
            "  n2 -> n3;\n"
            "  n1 -> n3;\n"
            "}\n");
  EXPECT_THAT(g.to_dot(), HasSubstr("digraph \"graph\" {"));
}

}  // namespace
}  // namespace opspec
