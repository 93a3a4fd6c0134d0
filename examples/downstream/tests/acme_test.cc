// acme_test.cc: acme's op, backends and fixture, tested with opspec's gtest
// macros (EXPECT_OPS, EXPECT_EAGER_COMPILED_EQUIVALENT, EXPECT_GRAPH_BREAKS,
// EXPECT_DEBUG_STRING, EXPECT_FILECHECK, ...) and plain gtest. The spec cases of specs/ are registered as tests too
// (see acme_test_main.cc).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "acme/acme.h"
#include "harness/gtest/opspec_gtest.h"
#include "harness/program/fixture.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/controls.h"
#include "runtime/fake/fake_tensor.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace acme_test {

using ::opspec::CompileOptions;
using ::opspec::DType;
using ::opspec::NoOp;
using ::opspec::Op;
using ::opspec::OpsInOrder;
using ::opspec::Tensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace ops = ::opspec::ops;

Tensor residual(const Tensor& x, const Tensor& y) { return acme::scaled_add(x, ops::relu(y), 0.5); }

TEST(ScaledAdd, ComputesSelfPlusAlphaTimesOther) {
  const Tensor x = ops::arange(4.0);
  const Tensor y = ops::full({4}, 10.0);
  EXPECT_THAT(acme::scaled_add(x, y, -0.5).to_vector<double>(), ElementsAre(-5, -4, -3, -2));
  EXPECT_THAT(acme::scaled_add(ops::arange(2.0, {.dtype = DType::kFloat64}), ops::ones({2}, {.dtype = DType::kFloat64}),
                               3.0)
                  .to_vector<double>(),
              ElementsAre(3, 4));
}

TEST(ScaledAdd, PassesOpcheckAndGradcheck) {
  // The README's EXPECT_OPCHECK line, as written there: schema, Meta, fake,
  // autograd registration and compile, on one sample call.
  const Tensor x = ops::randn({3, 2}), y = ops::randn({3, 2});
  EXPECT_OPCHECK("acme::scaled_add", {{{x, y, 2.0}}});
  const Tensor a = ops::randn({3}, {.dtype = DType::kFloat64}).requires_grad_();
  const Tensor b = ops::randn({3}, {.dtype = DType::kFloat64}).requires_grad_();
  EXPECT_GRADCHECK([](const std::vector<Tensor>& in) { return std::vector<Tensor>{acme::scaled_add(in[0], in[1], -1.5)}; },
                   {a, b});
}

TEST(ScaledAdd, IsOneOpInTheLog) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_OPS(acme::scaled_add(x, x, 2.0), ElementsAre(Op("acme::scaled_add")));
  EXPECT_OPS(residual(x, x), ElementsAre(Op("aten::relu"), Op("acme::scaled_add").WithShapes({{2, 3}, {2, 3}})));
  // Its kernel allocates below the dispatcher: no aten op shows up inside it.
  EXPECT_OPS(acme::scaled_add(x, x, 2.0), NoOp("aten::empty"));
}

TEST(ScaledAdd, DebugModeShowsTheCallSite) {
  const Tensor x = ops::ones({2});
  opspec::DebugMode dm({.record_stack_trace = true});
  {
    opspec::DebugMode::Scope scope(dm);
    acme::scaled_add(x, x, 2.0);  // the line DebugMode reports
  }
  EXPECT_FILECHECK(dm.debug_string(), R"(
    CHECK: # File: {{.*}}acme_test.cc:{{[0-9]+}}
    CHECK-NEXT: acme::scaled_add(t: f32[2], t: f32[2], 2.0))");
}

TEST(ScaledAdd, BadArgumentsNameTheOp) {
  EXPECT_THAT([] { acme::scaled_add(ops::ones({4}), ops::ones({3}), 1.0); },
              ::testing::ThrowsMessage<opspec::Error>(
                  HasSubstr("acme::scaled_add: self has shape [4] but other has shape [3]")));
  EXPECT_THAT([] { acme::scaled_add(ops::ones({2}, {.dtype = DType::kInt64}), ops::ones({2}, {.dtype = DType::kInt64}), 1.0); },
              ::testing::ThrowsMessage<opspec::Error>(HasSubstr("expected f32 or f64 tensors, got i64")));
}

TEST(ScaledAdd, MetaKernelGivesShapesWithoutData) {
  opspec::FakeTensorMode fake;
  opspec::ModeGuard guard(fake);
  const Tensor big = ops::randn({1 << 14, 1 << 14});  // 1 GiB if real
  const Tensor out = acme::scaled_add(big, big, 2.0);
  EXPECT_TRUE(opspec::is_fake(out));
  EXPECT_THAT(out.sizes(), ElementsAre(1 << 14, 1 << 14));
}

TEST(ScaledAdd, DecompositionTracesToAtenAdd) {
  auto f = [](const Tensor& x, const Tensor& y) { return acme::scaled_add(x, y, 2.0); };
  const Tensor x = ops::randn({3}), y = ops::randn({3});
  const opspec::Graph kept = opspec::make_fx(f)(x, y);
  EXPECT_THAT(kept.str(), HasSubstr("acme::scaled_add(%arg0_1, %arg1_1, 2.0)"));
  const opspec::Graph decomposed = opspec::make_fx(f, {.decomposition_table = &acme::decompositions()})(x, y);
  EXPECT_THAT(decomposed.str(), HasSubstr("aten::add.Tensor(%arg0_1, %arg1_1"));
  EXPECT_THAT(decomposed.str(), ::testing::Not(HasSubstr("acme::scaled_add")));
}

TEST(AcmeBackends, CompiledEqualsEager) {
  const Tensor x = ops::randn({4, 8}), y = ops::randn({4, 8});
  // Bitwise: the interpreter runs the same kernels, and the decomposition
  // computes a + alpha * b exactly as the CPU kernel does.
  EXPECT_EAGER_COMPILED_EQUIVALENT(residual, {x, y}, {.compile = {.backend = "acme_eager"}, .close = {.bitwise = true}});
  EXPECT_EAGER_COMPILED_EQUIVALENT(residual, {x, y},
                                   {.compile = {.backend = "acme_decomposed"}, .close = {.bitwise = true}});
  EXPECT_EAGER_COMPILED_EQUIVALENT(residual, {x, y}, CompileOptions{.backend = "fused"});
}

TEST(AcmeBackends, AcmeEagerCountsGraphs) {
  const Tensor x = ops::randn({4});
  const int before = acme::acme_eager_graphs();
  auto f = opspec::compile(
      [](const Tensor& t) {
        const Tensor a = acme::scaled_add(t, t, 1.0);
        opspec::graph_break();
        return acme::scaled_add(a, t, 1.0);
      },
      {.backend = "acme_eager"});
  f(x);
  f(x);  // cached: nothing compiles again
  EXPECT_EQ(acme::acme_eager_graphs() - before, 2);
  EXPECT_GRAPHS(residual, {x, x}, 1, CompileOptions{.backend = "acme_eager"});
}

TEST(AcmeBackends, GraphBreaks) {
  auto two_graphs = [](const Tensor& t) {
    const Tensor a = acme::scaled_add(t, t, 0.5);
    opspec::graph_break();
    return ops::neg(a);
  };
  const Tensor x = ops::randn({4});
  EXPECT_GRAPH_BREAKS(two_graphs, {x}, 1, "graph_break()", CompileOptions{.backend = "acme_eager"});
  EXPECT_GRAPH_BREAKS(residual, {x, x}, 0, CompileOptions{.backend = "acme_eager"});
}

TEST(AcmeFixture, IsRegisteredWithItsDefaultInput) {
  const opspec::Fixture* f = opspec::find_fixture("acme_residual");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(f->inputs.size(), 1u);
  EXPECT_THAT(f->inputs[0].shape, ElementsAre(4, 8));
  const opspec::FixtureFn fn = f->make();
  const Tensor x = ops::randn({4, 8});
  EXPECT_OPS(fn({x}), OpsInOrder("aten::mm", "aten::relu", "acme::scaled_add"));
}

}  // namespace
