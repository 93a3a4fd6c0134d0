// readme_example_test.cc: the examples users copy, compiled and run as they
// are written: the one in opspec_gtest.h's header comment (with only that
// header included and `using namespace opspec;`, as it shows) and the lines
// of the README's "Testing with opspec" block, each with the inputs it
// needs. If one of these stops compiling or passing, the docs are wrong.
// (The block's EXPECT_OPCHECK line runs in examples/downstream/tests/acme_test.cc,
// where acme::scaled_add is defined.)
#include "harness/gtest/opspec_gtest.h"

#include "runtime/compile/controls.h"
#include "runtime/trace/make_fx.h"

// ---- opspec_gtest.h's example, verbatim ----
using ::testing::ElementsAre;
using namespace opspec;

TEST(MyOp, Decomposes) {
  Tensor x = ops::randn({4, 4});
  EXPECT_OPS(ops::mm(ops::relu(x), x), ElementsAre("aten::relu", "aten::mm"));
  EXPECT_OPS({ auto h = ops::relu(x); ops::add(h, h); },
             OpsInOrder("relu", Op("add").WithShapes({{4, 4}, {4, 4}})));
  EXPECT_EAGER_COMPILED_EQUIVALENT([](const Tensor& a) { return ops::relu(a); }, {x},
                                   {.backend = "fused"});
}

// ---- the README's block, line by line ----
namespace readme_example_test {

using ::testing::HasSubstr;

TEST(ReadmeTestingBlock, OpSequences) {
  const Tensor x = ops::randn({8, 16}), w = ops::randn({4, 16}), b = ops::randn({4});
  EXPECT_OPS({ auto h = ops::relu(x); ops::mm(h, ops::t(x)); },
             ElementsAre(Op("aten::relu"), Op("aten::t"), Op("aten::mm")));
  EXPECT_OPS(ops::linear(x, w, b), OpsInOrder("aten::t", Op("aten::addmm").WithShapes({{4}, {8, 16}, {16, 4}})));
  EXPECT_FUNCTION_OPS(ops::linear(x, w, b), ElementsAre(Op("aten::linear")));
}

TEST(ReadmeTestingBlock, CompiledRuns) {
  const Tensor x = ops::randn({8}), y = ops::randn({8});
  {
    auto f = [](const Tensor& a, const Tensor& b) { return ops::relu(ops::add(a, b)); };
    EXPECT_EAGER_COMPILED_EQUIVALENT(f, {x, y}, {.backend = "fused"});
  }
  {
    disallow_in_graph("aten::neg");
    auto f = [](const Tensor& a) { return ops::relu(ops::neg(ops::sin(a))); };
    EXPECT_GRAPH_BREAKS(f, {x}, 1, HasSubstr("disallow"));
    allow_op_in_graph("aten::neg");
  }
}

TEST(ReadmeTestingBlock, TextAndTensors) {
  const Tensor x = ops::ones({2, 2});
  EXPECT_DEBUG_STRING(ops::relu(x), R"(    aten::relu(t: f32[2, 2])  ->  t: f32[2, 2])");  // OPSPEC_ACCEPT=1 rewrites it
  const Graph graph = make_fx([](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::mm(in[0], in[0])}; })(x);
  EXPECT_FILECHECK(graph.str(), "CHECK: aten::mm\nCHECK-NOT: aten::clone");
  const Tensor y = ops::mul(x, 3.0), ref = ops::full({2, 2}, 3.0);
  EXPECT_TENSOR_CLOSE(y, ref);                               // torch.testing's per-dtype tolerances
  EXPECT_TENSOR_EQ(ops::add(x, 0.0), x);                     // or .rtol = r, .atol = a for CLOSE
  auto t = opspec::testing::make_tensor({2, 3}, DType::kFloat32, kCPU, {.low = 0, .high = 1, .noncontiguous = true});
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(ops::all(ops::logical_and(ops::ge(t, 0.0), ops::lt(t, 1.0))).item().to_bool());
}

}  // namespace readme_example_test
