// Tests of in-place ops in fused groups (See Note [In-place fusion]): which
// chains fuse, which stay apart, and that every result, and every buffer
// the ops write over, has eager's bits.
#include <functional>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/backend.h"
#include "runtime/compile/fusion.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace inplace_fusion_test {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

using fusion_test::bits_equal;
using fusion_test::names;

// BasicBlock's tail: a fresh result (softmax stands for batch_norm), += identity, relu_.
std::vector<Tensor> block_tail(const std::vector<Tensor>& in) {
  Tensor out = ops::softmax(in[0], 1);
  ops::add_(out, in[1]);
  ops::relu_(out);
  return {out};
}

TEST(InplaceFusionTest, AddThenReluOverAFreshResultIsOneKernel) {
  manual_seed(0);
  const Tensor x = ops::randn({64, 48}), identity = ops::randn({64, 48});
  Graph g = make_fx(block_tail)({x, identity});
  const std::vector<FusionGroup> groups = partition_graph(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "fused_add__relu__0");
  EXPECT_EQ(groups[0].inplace_chain.size(), 2u);
  EXPECT_THAT(groups[0].outputs, IsEmpty());  // the result is the root itself
  ASSERT_GE(groups[0].inplace_input, 0);
  EXPECT_EQ(groups[0].inputs[static_cast<size_t>(groups[0].inplace_input)]->target()->name(), "aten::_softmax");
  const std::vector<Tensor> got = fused_backend(g, {x, identity})({x, identity});
  EXPECT_TRUE(bits_equal(got[0], block_tail({x, identity})[0]));
}

TEST(InplaceFusionTest, LaterOpsJoinThroughTheChainsLatestValue) {
  // relu_'s result read by mul joins; the root read after the chain does not
  // (its buffer holds the chain's value, which mul of the root must see).
  manual_seed(1);
  const Tensor x = ops::randn({32, 40}), y = ops::randn({32, 40});
  auto joins = [](const std::vector<Tensor>& in) {
    Tensor out = ops::softmax(in[0], 1);
    ops::add_(out, in[1]);
    const Tensor r = ops::relu_(out);
    return std::vector<Tensor>{ops::mul(r, 3.0), out};
  };
  Graph g = make_fx(joins)({x, y});
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_add__relu__mul_0"));
  std::vector<Tensor> got = fused_backend(g, {x, y})({x, y}), want = joins({x, y});
  EXPECT_TRUE(bits_equal(got[0], want[0]));
  EXPECT_TRUE(bits_equal(got[1], want[1]));

  // Tracing reads a mutated tensor through its latest node; a graph built by
  // hand can read the root itself after the chain: then mul stays out.
  Graph h;
  const TensorMeta meta = TensorMeta::of(x);
  Node* a = h.add_placeholder("a", meta);
  Node* b = h.add_placeholder("b", meta);
  Node* sum = h.add_call(builtin_op(OpId::add__Tensor), {NodeArg::node(a), NodeArg::node(b), NodeArg::value(Scalar(1))},
                         {meta});
  h.add_call(builtin_op(OpId::relu_), {NodeArg::node(sum)}, {meta});
  Node* twice = h.add_call(builtin_op(OpId::mul_Scalar), {NodeArg::node(a), NodeArg::value(Scalar(3.0))}, {meta});
  h.set_output({twice});
  EXPECT_THAT(names(partition_graph(h)), ElementsAre("fused_add__relu__0"));
  Tensor xe = ops::clone(x), xf = ops::clone(x);
  ops::add_(xe, y);
  ops::relu_(xe);
  EXPECT_TRUE(bits_equal(fused_backend(h, {xf, y})({xf, y})[0], ops::mul(xe, 3.0)));
  EXPECT_TRUE(bits_equal(xf, xe));
}

TEST(InplaceFusionTest, AChainOverOneOfTheGroupsOwnValues) {
  // b = x * 2; b += x; relu_(b): the group allocates b's buffer and leaves
  // the chain's value in it, as eager's ops leave it.
  manual_seed(5);
  const Tensor x = ops::randn({16, 32});
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor b = ops::mul(in[0], 2.0);
    const Tensor before = ops::neg(b);  // read before the chain: b's old value
    ops::add_(b, in[0]);
    ops::relu_(b);
    return std::vector<Tensor>{b, before, ops::exp(b)};
  };
  Graph g = make_fx(fn)({x});
  const std::vector<FusionGroup> groups = partition_graph(g);
  EXPECT_THAT(names(groups), ElementsAre("fused_mul_neg_add__relu__exp_0"));
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].inplace_input, -1);
  ASSERT_NE(groups[0].inplace_root, nullptr);
  EXPECT_EQ(groups[0].inplace_root->target()->name(), "aten::mul.Tensor");
  std::vector<Tensor> got = fused_backend(g, {x})({x}), want = fn({x});
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << "output " << k;
}

TEST(InplaceFusionTest, AReaderBetweenTheLinksOrAViewOfTheRootKeepsThemApart) {
  manual_seed(2);
  const Tensor x = ops::randn({16, 24}), y = ops::randn({16, 24});
  // sum sees the buffer between add_ and relu_: the links cannot be one kernel.
  auto between = [](const std::vector<Tensor>& in) {
    Tensor out = ops::softmax(in[0], 1);
    ops::add_(out, in[1]);
    const Tensor s = ops::sum(out, {1});
    ops::relu_(out);
    return std::vector<Tensor>{out, s};
  };
  Graph g = make_fx(between)({x, y});
  EXPECT_THAT(partition_graph(g), IsEmpty());
  std::vector<Tensor> got = fused_backend(g, {x, y})({x, y}), want = between({x, y});
  EXPECT_TRUE(bits_equal(got[0], want[0]));
  EXPECT_TRUE(bits_equal(got[1], want[1]));
  // A view taken of the root would see the writes: no chain over it.
  auto viewed = [](const std::vector<Tensor>& in) {
    Tensor out = ops::softmax(in[0], 1);
    const Tensor flat = ops::view(out, {-1});
    ops::add_(out, in[1]);
    ops::relu_(out);
    return std::vector<Tensor>{ops::mul(flat, 2.0)};
  };
  Graph gv = make_fx(viewed)({x, y});
  EXPECT_THAT(partition_graph(gv), IsEmpty());
  EXPECT_TRUE(bits_equal(fused_backend(gv, {x, y})({x, y})[0], viewed({x, y})[0]));
}

TEST(InplaceFusionTest, AGraphInputWrittenOverShowsTheWrites) {
  manual_seed(3);
  const Tensor x = ops::randn({8, 8}), y = ops::randn({8, 8});
  auto mutate = [](const std::vector<Tensor>& in) {
    Tensor a = in[0];
    ops::add_(a, in[1]);
    ops::relu_(a);
    return std::vector<Tensor>{ops::neg(a)};
  };
  Graph g = make_fx(mutate)({ops::clone(x), y});
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_add__relu__neg_0"));
  Tensor xe = ops::clone(x), xf = ops::clone(x);
  const Tensor want = mutate({xe, y})[0];
  const Tensor got = fused_backend(g, {xf, y})({xf, y})[0];
  EXPECT_TRUE(bits_equal(got, want));
  EXPECT_TRUE(bits_equal(xf, xe));  // the caller's tensor holds what eager left there
  // The same tensor as both arguments: x += x, element for element.
  Tensor xs = ops::clone(x), xe2 = ops::clone(x);
  const Tensor same = fused_backend(g, {xs, xs})({xs, xs})[0];
  EXPECT_TRUE(bits_equal(same, mutate({xe2, xe2})[0]));
  EXPECT_TRUE(bits_equal(xs, xe2));
}

// CountingObserver: counts kernel launches.
class CountingObserver : public KernelObserver {
 public:
  std::function<void()> on_launch(std::string_view, std::string_view, const KernelArgs&) override {
    ++launches;
    return {};
  }
  int launches = 0;
};

TEST(InplaceFusionTest, ObserversSeeTheKernelAndTheRootKeepsItsValues) {
  // Observed launches zero their fresh outputs first (for deterministic
  // hashes), never the root, whose values the kernel reads.
  manual_seed(4);
  const Tensor x = ops::randn({128, 1024}), y = ops::mul(ops::randn({128, 1024}), 1e6);
  auto fn = [](const std::vector<Tensor>& in) {
    Tensor out = ops::softmax(in[0], 1);
    ops::add_(out, in[1]);
    return std::vector<Tensor>{ops::sin(ops::relu_(out))};
  };
  Graph g = make_fx(fn)({x, y});
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_add__relu__sin_0"));
  auto observer = std::make_shared<CountingObserver>();
  CompiledGraph compiled = fused_backend(g, {x, y});
  {
    KernelObserverGuard observe(observer);
    EXPECT_TRUE(bits_equal(compiled({x, y})[0], fn({x, y})[0]));
  }
  EXPECT_EQ(observer->launches, 1);
}

// Every unary row's in-place form joins a group as its functional op (See
// Note [In-place unary ops]): b = x * 3; name_(b); b + 1 is one kernel
// leaving eager's bits in b's buffer and in the sum.
TEST(InplaceFusionTest, EveryUnaryRowsInPlaceFormFusesWithEagersValues) {
  using InPlaceFn = Tensor& (*)(Tensor&);
  const std::vector<std::pair<std::string, InPlaceFn>> rows = {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  {#name, [](Tensor& t) -> Tensor& { return ops::name##_(t); }},
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  };
  manual_seed(6);
  const Tensor x = ops::randn({24, 40});
  for (const auto& [name, in_place] : rows) {
    SCOPED_TRACE(name + "_");
    auto fn = [&](const std::vector<Tensor>& in) {
      Tensor b = ops::mul(in[0], 3.0);
      in_place(b);
      return std::vector<Tensor>{b, ops::add(b, 1.0)};
    };
    Graph g = make_fx(fn)({x});
    const std::vector<FusionGroup> groups = partition_graph(g);
    EXPECT_THAT(names(groups), ElementsAre("fused_mul_" + name + "__add_0"));
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_EQ(groups[0].inplace_chain.size(), 1u);
    const std::vector<Tensor> got = fused_backend(g, {x})({x}), want = fn({x});
    for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << "output " << k;
  }
}

// The hand-written in-place forms join as their functional ops too (See Note
// [In-place pointwise ops]).
TEST(InplaceFusionTest, ParametrizedInPlaceFormsFuseWithEagersValues) {
  manual_seed(7);
  const Tensor x = ops::randn({24, 40}), row = ops::abs(ops::randn({40}));
  using InPlace = std::function<void(Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, InPlace>> cases = {
      {"clamp_", [](Tensor& b, const Tensor&) { ops::clamp_(b, -0.5, 0.5); }},
      {"clamp_", [](Tensor& b, const Tensor& r) { ops::clamp_(b, std::optional<Tensor>(r), std::nullopt); }},
      {"clamp_min_", [](Tensor& b, const Tensor&) { ops::clamp_min_(b, -0.5); }},
      {"clamp_max_", [](Tensor& b, const Tensor& r) { ops::clamp_max_(b, r); }},
      {"hardtanh_", [](Tensor& b, const Tensor&) { ops::hardtanh_(b); }},
      {"leaky_relu_", [](Tensor& b, const Tensor&) { ops::leaky_relu_(b, 0.2); }},
      {"elu_", [](Tensor& b, const Tensor&) { ops::elu_(b, 0.5); }},
      {"pow_", [](Tensor& b, const Tensor&) { ops::pow_(b, 2); }},
      {"pow_", [](Tensor& b, const Tensor& r) { ops::pow_(b, r); }},
  };
  for (const auto& [name, in_place] : cases) {
    SCOPED_TRACE(name);
    auto fn = [&](const std::vector<Tensor>& in) {
      Tensor b = ops::mul(in[0], 3.0);
      in_place(b, in[1]);
      return std::vector<Tensor>{b, ops::add(b, 1.0)};
    };
    Graph g = make_fx(fn)({x, row});
    const std::vector<FusionGroup> groups = partition_graph(g);
    ASSERT_FALSE(groups.empty());
    EXPECT_EQ(groups.back().inplace_chain.size(), 1u);
    EXPECT_NE(groups.back().name.find(name), std::string::npos) << groups.back().name;
    const std::vector<Tensor> got = fused_backend(g, {x, row})({x, row}), want = fn({x, row});
    for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << "output " << k;
  }
}

}  // namespace inplace_fusion_test
}  // namespace opspec
