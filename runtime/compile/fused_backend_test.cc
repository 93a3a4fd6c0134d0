#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "runtime/compile/backend.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/fusion.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/compile/logging.h"
#include "runtime/core/error.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace fused_backend_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

using fusion_test::bits_equal;
using fusion_test::names;

// compile_and_run: traces fn on inputs (fake), compiles with the fused backend
// and runs it on inputs.
template <class Fn>
std::vector<Tensor> compile_and_run(Fn fn, const std::vector<Tensor>& inputs) {
  Graph g = make_fx(fn)(inputs);
  return fused_backend(g, inputs)(inputs);
}

TEST(FusedBackendTest, ChainBecomesOneNamedKernel) {
  manual_seed(0);
  const Tensor x = ops::randn({64, 32}), y = ops::randn({64, 32}), z = ops::randn({32});
  auto fn = [](const Tensor& a, const Tensor& b, const Tensor& c) { return ops::relu(a * b + c) * 0.5; };
  Graph g = make_fx(fn)(x, y, z);
  const std::vector<FusionGroup> groups = partition_graph(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "fused_mul_add_relu_mul_0");
  EXPECT_EQ(groups[0].inputs.size(), 3u);
  EXPECT_EQ(groups[0].outputs.size(), 1u);
  const std::vector<Tensor> got = fused_backend(g, {x, y, z})({x, y, z});
  ASSERT_EQ(got.size(), 1u);
  EXPECT_TRUE(bits_equal(got[0], fn(x, y, z)));
}

TEST(FusedBackendTest, LongGroupNamesAreCut) {
  const Tensor x = ops::randn({4});
  Graph g = make_fx([](const Tensor& a) {
    Tensor t = a;
    for (int k = 0; k < 5; ++k) t = ops::neg(ops::relu(t));
    return t;
  })(x);
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_relu_neg_relu_neg_relu_neg_relu_etc_0"));
}

TEST(FusedBackendTest, LogsOneLinePerGroup) {
  const Tensor x = ops::randn({8}), y = ops::randn({8});
  Graph g = make_fx([](const Tensor& a, const Tensor& b) { return ops::relu(a) * b + 1.0; })(x, y);
  const std::string log = fusion_test::fusion_log([&] { fused_backend(g, {x, y}); });
  EXPECT_THAT(log, HasSubstr("[opspec:fusion] fused_relu_mul_add_0: aten::relu, aten::mul.Tensor, aten::add.Tensor "
                             "-> 1 kernel, 2 inputs, 1 output\n"));
  EXPECT_THAT(log, HasSubstr("1 fused kernel(s) for 3 of 3 call node(s)"));
}

TEST(FusedBackendTest, SingleOpsAreNotFusedAndInPlaceOpsJoinAsTheirFunctionalForms) {
  const Tensor x = ops::randn({4, 4});
  Graph single = make_fx([](const Tensor& a) { return ops::relu(a); })(x);
  EXPECT_TRUE(partition_graph(single).empty());
  Graph inplace = make_fx([](const Tensor& a) {
    Tensor b = ops::mul(a, 2.0);
    ops::add_(b, a);
    return ops::relu(b);
  })(x);
  for (const Node* n : inplace.nodes()) {
    if (n->op() == NodeOp::kCall && n->target()->schema().is_mutable()) {
      EXPECT_TRUE(is_fusable(*n));  // add_ lowers as add (See Note [In-place fusion])
    }
  }
  // add_ writes over mul's result, a value of the group: one kernel.
  EXPECT_THAT(names(partition_graph(inplace)), ElementsAre("fused_mul_add__relu_0"));
  const Tensor want = ops::relu(ops::add(ops::mul(x, 2.0), x));
  EXPECT_TRUE(bits_equal(fused_backend(inplace, {x})({x})[0], want));
}

TEST(FusedBackendTest, MultiOutputGroupsAndDiamonds) {
  manual_seed(1);
  const Tensor x = ops::randn({16, 8}), y = ops::randn({16, 8});
  auto fn = [](const Tensor& a, const Tensor& b) {
    Tensor ra = ops::relu(a), eb = ops::exp(b);
    Tensor s = ra + eb;  // joins both producers' groups
    Tensor t = ops::sigmoid(s) * ra;
    return std::vector<Tensor>{t, s, eb};
  };
  Graph g = make_fx(fn)(x, y);
  const std::vector<FusionGroup> groups = partition_graph(g);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].name, "fused_relu_exp_add_sigmoid_mul_0");
  EXPECT_EQ(groups[0].outputs.size(), 3u);
  const std::vector<Tensor> got = fused_backend(g, {x, y})({x, y});
  const std::vector<Tensor> want = fn(x, y);
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << k;
}

TEST(FusedBackendTest, NonFusableOpsRunNormallyBetweenGroups) {
  manual_seed(2);
  const Tensor x = ops::randn({12, 12}), w = ops::randn({12, 12}), b = ops::randn({12});
  auto fn = [](const Tensor& a, const Tensor& w, const Tensor& bias) {
    Tensor h = ops::relu(a * 2.0 + 1.0);
    Tensor total = ops::sum(h);             // reads h before the group's last member
    Tensor hb = ops::tanh(h) - bias;
    Tensor m = ops::mm(hb, w);              // a barrier for shapes only: m's chain is a new group
    Tensor v = ops::t(m);                   // a view feeding the next group
    Tensor out = ops::sigmoid(v) * m + total;
    return std::vector<Tensor>{out, ops::sum(out, {1}), h};
  };
  Graph g = make_fx(fn)(x, w, b);
  const std::vector<FusionGroup> groups = partition_graph(g);
  EXPECT_THAT(names(groups), ElementsAre("fused_mul_add_relu_tanh_sub_0", "fused_sigmoid_mul_add_1"));
  const std::vector<Tensor> got = fused_backend(g, {x, w, b})({x, w, b});
  const std::vector<Tensor> want = fn(x, w, b);
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << k;
}

TEST(FusedBackendTest, GroupsNeverWaitForThemselves) {
  // c = a + mm(a, w): c cannot join a's group (mm needs a first and c needs mm).
  const Tensor x = ops::randn({6, 6}), w = ops::randn({6, 6});
  auto fn = [](const Tensor& a, const Tensor& w) {
    Tensor r = ops::neg(ops::relu(a));
    return ops::exp(r + ops::mm(r, w));
  };
  Graph g = make_fx(fn)(x, w);
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_relu_neg_0", "fused_add_exp_1"));
  EXPECT_TRUE(bits_equal(fused_backend(g, {x, w})({x, w})[0], fn(x, w)));
}

TEST(FusedBackendTest, MutationsCloseEarlierGroups) {
  manual_seed(3);
  const Tensor x0 = ops::randn({5, 7}), y = ops::randn({5, 7});
  auto fn = [](const Tensor& a, const Tensor& b) {
    Tensor r = ops::relu(a) * b;  // reads a before the mutation
    Tensor m = a;
    ops::mul_(m, b);
    Tensor s = ops::sin(m) + r;   // reads the mutated a
    return ops::cos(s) * 3.0;
  };
  Graph g = make_fx(fn)(ops::clone(x0), y);
  // mul_ closes relu * b (which read a before it) and starts a group over a
  // that the ops reading its result join (See Note [In-place fusion]).
  EXPECT_THAT(names(partition_graph(g)), ElementsAre("fused_relu_mul_0", "fused_mul__sin_add_cos_mul_1"));
  const Tensor xa = ops::clone(x0), xb = ops::clone(x0);
  const Tensor got = fused_backend(g, {xa, y})({xa, y})[0];
  EXPECT_TRUE(bits_equal(got, fn(xb, y)));
  EXPECT_TRUE(bits_equal(xa, xb));
}

TEST(FusedBackendTest, ReducedPrecisionScalarOperandsMatchEager) {
  // f16/bf16 mul and div by a one-element right operand read it in float,
  // unrounded (PyTorch's original_scalar_value): 0.1, an f64 0-dim tensor and
  // an i64 past 2^24 must all reach the fused kernel the same way.
  manual_seed(4);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = ops::to(ops::randn({33, 17}), dt);
    const Tensor d = ops::tensor({0.3}, {}, DType::kFloat64);
    const Tensor i = ops::tensor({16777217.0}, {1}, DType::kInt64);
    auto fn = [](const Tensor& x, const Tensor& d, const Tensor& i) {
      return ops::relu(x) * 0.1 / d * i / 3 + ops::sigmoid(x) / 1e-3;
    };
    Graph g = make_fx(fn)(x, d, i);
    ASSERT_EQ(partition_graph(g).size(), 1u);
    EXPECT_TRUE(bits_equal(fused_backend(g, {x, d, i})({x, d, i})[0], fn(x, d, i))) << dtype_short_name(dt);
  }
}

// clamp and hardtanh with number bounds lower to eager's selections (See Note
// [clamp with number bounds]): -0.0 (from +0.0 * -1) stays -0.0 against a 0
// bound, a NaN bound fills, and an i32 bound outside i32 is dropped or refused.
TEST(FusedBackendTest, ClampWithNumberBoundsFollowsEagersRule) {
  const Tensor x = ops::tensor({0.0, -0.0, -2.0, 3.0, 0.5, std::nan("")}, {6});
  auto floats = [](const Tensor& a) {
    const Tensor n = ops::mul(a, -1.0);
    return std::vector<Tensor>{ops::clamp(n, 0.0, 1.0), ops::hardtanh(n, 0, 6), ops::clamp(ops::exp(a), std::nullopt,
                                                                                             std::nan(""))};
  };
  std::vector<Tensor> got = compile_and_run(floats, {x});
  const std::vector<Tensor> want = floats(x);
  for (size_t k = 0; k < want.size(); ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << k;
  EXPECT_TRUE(std::signbit(got[0].to_vector<double>()[0]));  // clamp(-0.0, 0, 1) is -0.0
  EXPECT_TRUE(std::signbit(got[1].to_vector<double>()[0]));
  EXPECT_TRUE(std::isnan(got[2].to_vector<double>()[3]));
  const Tensor i = ops::tensor({-5, 0, 7}, {3}, DType::kInt32);
  const Scalar huge = int64_t{1} << 40, tiny = -(int64_t{1} << 40);
  auto ints = [&](const Tensor& a) {
    const Tensor b = ops::add(a, 1);
    return std::vector<Tensor>{ops::clamp(b, tiny, 3), ops::hardtanh(b, -2.5, huge), ops::clamp(b, tiny, huge)};
  };
  got = compile_and_run(ints, {i});
  EXPECT_THAT(got[0].to_vector<double>(), ElementsAre(-4, 1, 3));
  EXPECT_THAT(got[1].to_vector<double>(), ElementsAre(-2, 1, 8));
  EXPECT_THAT(got[2].to_vector<double>(), ElementsAre(-4, 1, 8));
  EXPECT_EQ(got[2].dtype(), DType::kInt32);
  EXPECT_THAT([&] { compile_and_run([&](const Tensor& a) { return ops::clamp(ops::add(a, 1), huge); }, {i}); },
              ThrowsMessage<Error>(HasSubstr("Clamp min value 1.09951e+12 is outside the representable range of Int")));
}

// Integer and b8 chains: bitwise_not joins the bitwise and logical ops in one
// kernel whose bits are eager's, on i64, i32 (with a broadcast operand) and b8.
TEST(FusedBackendTest, BitwiseAndLogicalChainsOfIntegersAndMasksFuse) {
  auto ints = [](const Tensor& a, const Tensor& b) {
    const Tensor n = ops::bitwise_not(ops::bitwise_and(a, b));
    const Tensor m = ops::bitwise_xor(ops::bitwise_or(n, 5), ops::bitwise_not(b));
    return std::vector<Tensor>{m, ops::logical_and(ops::bitwise_not(m), ops::logical_not(a))};
  };
  for (DType dt : {DType::kInt64, DType::kInt32}) {
    SCOPED_TRACE(dtype_short_name(dt));
    const Tensor a = ops::randint(-100, 100, {8, 16}, {.dtype = dt});
    const Tensor b = ops::randint(-100, 100, {16}, {.dtype = dt});
    Graph g = make_fx([&](const Tensor& x, const Tensor& y) { return ints(x, y); })(a, b);
    const std::vector<FusionGroup> groups = partition_graph(g);
    ASSERT_EQ(groups.size(), 1u);
    EXPECT_THAT(groups[0].name, HasSubstr("fused_bitwise_and_bitwise_not_bitwise_or"));
    const std::vector<Tensor> got = fused_backend(g, {a, b})({a, b}), want = ints(a, b);
    ASSERT_EQ(got.size(), 2u);
    EXPECT_TRUE(bits_equal(got[0], want[0]));
    EXPECT_TRUE(bits_equal(got[1], want[1]));
  }
  auto masks = [](const Tensor& a, const Tensor& b) {
    return ops::bitwise_or(ops::bitwise_not(ops::bitwise_xor(a, b)), ops::logical_or(ops::bitwise_not(a), b));
  };
  const Tensor p = ops::lt(ops::rand({8, 16}), 0.5), q = ops::lt(ops::rand({8, 16}), 0.5);
  Graph g = make_fx(masks)(p, q);
  EXPECT_EQ(partition_graph(g).size(), 1u);
  EXPECT_TRUE(bits_equal(fused_backend(g, {p, q})({p, q})[0], masks(p, q)));
}

TEST(FusedBackendTest, EmptyAndZeroDimTensors) {
  auto fn = [](const Tensor& a, const Tensor& b) { return ops::exp(a) * b - 1.0; };
  const Tensor e = ops::randn({0, 3}), eb = ops::randn({3});
  std::vector<Tensor> got = compile_and_run(fn, {e, eb});
  EXPECT_EQ(format_sizes(got[0].sizes()), "[0, 3]");
  const Tensor s = ops::tensor({0.25}, {}), t = ops::tensor({-2.0}, {});
  got = compile_and_run(fn, {s, t});
  EXPECT_TRUE(bits_equal(got[0], fn(s, t)));
}

TEST(FusedBackendTest, BadInputsGiveClearErrors) {
  const Tensor x = ops::randn({4, 4});
  Graph g = make_fx([](const Tensor& a, const Tensor& b) { return ops::relu(a) + b; }, {.input_names = {"x", "y"}})(x, x);
  CompiledGraph run = fused_backend(g, {x, x});
  EXPECT_THAT([&] { run({x}); },
              ThrowsMessage<Error>(HasSubstr("fused_backend: the graph takes 2 input(s) (%x, %y) but 1 were given")));
  EXPECT_THAT([&] { run({x, ops::randn({4, 4}, {.dtype = DType::kFloat64})}); },
              ThrowsMessage<Error>(HasSubstr("input 1 (%y) is f64[4, 4] but the graph was traced with f32[4, 4]")));
  EXPECT_THAT([&] { run({ops::randn({4}), x}); },
              ThrowsMessage<Error>(HasSubstr("input 0 (%x) is f32[4] but the graph was traced with f32[4, 4]")));
  EXPECT_THAT([&] { fused_backend(g, {x}); },
              ThrowsMessage<Error>(HasSubstr("the graph takes 2 input(s) but 1 example input(s) were given")));
}

TEST(FusedBackendTest, KernelLaunchesAreReportedToObservers) {
  const Tensor x = ops::randn({3, 3});
  Graph g = make_fx([](const Tensor& a) { return ops::relu(a) * 2.0; })(x);
  CompiledGraph run = fused_backend(g, {x});
  auto recorder = std::make_shared<fusion_test::KernelRecorder>(/*done_lines=*/true);
  {
    KernelObserverGuard guard(recorder);
    run({x});
  }
  run({x});  // no observer: nothing recorded
  ASSERT_EQ(recorder->lines.size(), 2u);
  EXPECT_THAT(recorder->lines[0], HasSubstr("[fused] fused_relu_mul_0(in0="));
  EXPECT_THAT(recorder->lines[0], HasSubstr("out0="));
  EXPECT_THAT(recorder->lines[0], HasSubstr("n=9 )"));
  EXPECT_EQ(recorder->lines[1], "done");
}

TEST(FusedBackendTest, WorksAsACompileBackend) {
  manual_seed(5);
  const Tensor x = ops::randn({32, 16}), w = ops::randn({16, 16}), b = ops::randn({16});
  auto fn = [](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ops::sum(ops::gelu(ops::linear(x, w, b) * 0.5 + x), {1});
  };
  CompiledFunction cf = compile(fn, {.backend_fn = fused_backend});
  for (int call = 0; call < 2; ++call) {
    const std::vector<Tensor> got = cf(x, w, b);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(bits_equal(got[0], fn(x, w, b))) << call;
  }
  EXPECT_EQ(cf.stats().compiles, 1);
}

// OutputsSeen: the tensors each launch was given as its outputs.
struct OutputsSeen : KernelObserver {
  std::vector<std::vector<Tensor>> outs;
  std::function<void()> on_launch(std::string_view, std::string_view, const KernelArgs& kwargs) override {
    outs.emplace_back();
    for (const auto& [name, v] : kwargs) {
      if (name.starts_with("out")) outs.back().push_back(v.to_tensor());
    }
    return {};
  }
};

TEST(FusedBackendTest, ResultsKeepEagersLayout) {
  // A group over a transposed input writes its results where eager lays them
  // out (See Note [Memory formats]): the kernel's outputs are the results, no
  // copy follows (See Note [Fused outputs in eager's layout]); a channels-last group too.
  manual_seed(5);
  const Tensor x = ops::t(ops::randn({6, 5})), y = ops::randn({5, 6});
  auto fn = [](const Tensor& a, const Tensor& b) {
    return std::vector<Tensor>{ops::sigmoid(a) * b + 1.0, ops::relu(b + a)};
  };
  const Graph g = make_fx(fn)(x, y);
  ASSERT_THAT(names(partition_graph(g)), ElementsAre("fused_sigmoid_mul_add_0", "fused_add_relu_1"));
  CompiledFunction cf = compile(fn, {.backend_fn = fused_backend});
  const std::vector<Tensor> want = fn(x, y);
  for (int call = 0; call < 2; ++call) {
    auto seen = std::make_shared<OutputsSeen>();
    std::vector<Tensor> got;
    {
      KernelObserverGuard guard(seen);
      got = cf(x, y);
    }
    ASSERT_EQ(got.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
      EXPECT_TRUE(bits_equal(got[k], want[k])) << call << " " << k;
      EXPECT_EQ(got[k].strides(), want[k].strides()) << call << " " << k;
    }
    ASSERT_EQ(seen->outs.size(), 2u);
    ASSERT_EQ(seen->outs[0].size(), 1u);
    EXPECT_EQ(seen->outs[0][0].raw_data(), got[0].raw_data()) << call;  // the transposed result, written in place
  }
  EXPECT_EQ(want[0].strides()[0], 1);  // transposed, as the first input
  EXPECT_EQ(want[1].strides()[1], 1);  // row-major, as b
  const Tensor c = ops::permute(ops::randn({2, 4, 4, 3}), {0, 3, 1, 2});
  auto act = [](const Tensor& a) { return ops::relu(a * 2.0 - 1.0); };
  auto seen = std::make_shared<OutputsSeen>();
  Tensor got;
  {
    KernelObserverGuard guard(seen);
    got = compile(act, {.backend_fn = fused_backend})(c)[0];
  }
  EXPECT_TRUE(bits_equal(got, act(c)));
  EXPECT_EQ(got.strides(), act(c).strides());
  ASSERT_EQ(seen->outs.size(), 1u);
  EXPECT_EQ(seen->outs[0][0].raw_data(), got.raw_data());
}

// ---- Randomized bit-identity against eager ----

// Recipe: a random program over a pool of tensors that all broadcast to one
// shape: unary, binary, scalar, comparison/where and logical steps.
struct Recipe {
  struct Step {
    int kind, op, a, b, c;
    double scalar;
  };
  std::vector<Step> steps;
  std::vector<int> outputs;  // pool indices
};

// floating: x, or x * 0.5 for the int32 input (leaky_relu, elu, softplus, silu and gelu take floats only).
Tensor floating(const Tensor& x) { return x.is_floating_point() ? x : ops::mul(x, 0.5); }

Tensor unary(int op, const Tensor& x) {
  switch (op) {
    case 0: return ops::relu(x);
    case 1: return ops::neg(x);
    case 2: return ops::abs(x);
    case 3: return ops::sin(x);
    case 4: return ops::cos(x);
    case 5: return ops::exp(x);
    case 6: return ops::tanh(x);
    case 7: return ops::sigmoid(x);
    case 8: return ops::silu(floating(x));
    case 9: return ops::gelu(floating(x));
    case 10: return ops::gelu(floating(x), "tanh");
    case 11: return ops::erf(x);
    case 12: return ops::sqrt(ops::abs(x));
    case 13: return ops::rsqrt(x);
    case 14: return ops::reciprocal(x);
    case 15: return ops::log(x);
    // The parametrized ops, which fuse as compositions (See Note [Parametrized pointwise ops]).
    case 23: return ops::clamp(x, -0.5, 1.25);
    case 24: return ops::clamp(x, std::nullopt, 0.3);
    case 25: return ops::hardtanh(x);
    case 26: return ops::leaky_relu(floating(x), 0.2);
    case 27: return ops::elu(floating(x), 1.3, 0.7, 1.1);
    case 28: return ops::softplus(floating(x), 2.0, 3.0);
    case 29: return ops::nan_to_num(ops::log(x), 0.5, std::nullopt, -7.0);
    case 30: return ops::where(ops::isnan(ops::log(x)), x, ops::neg(x));
    case 31: return ops::where(ops::isinf(ops::reciprocal(ops::trunc(x))), x, ops::abs(x));
    // std::max / std::min as selections (See Note [clamp_min and clamp_max]); an int32 x promotes.
    case 32: return ops::clamp_min(x, 0.0);
    case 33: return ops::clamp_max(x, -0.25);
    default: {
      static constexpr double kExponents[] = {2.0, 3.0, 0.5, -0.5, -1.0, -2.0, 1.7};
      return ops::pow(x, kExponents[(op - 16) % 7]);
    }
  }
}
constexpr int kNumUnary = 34;

bool any_floating(const Tensor& a, const Tensor& b) { return a.is_floating_point() || b.is_floating_point(); }

Tensor binary(int op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case 0: return ops::add(a, b);
    case 1: return ops::sub(a, b);
    case 2: return ops::mul(a, b);
    case 3: return ops::div(a, b);
    case 4: return ops::maximum(a, b);
    case 5: return ops::minimum(a, b);
    case 6: return a.is_floating_point() || b.is_floating_point() ? ops::add(a, b, 0.5) : ops::add(a, b, 2);
    case 7: return ops::sub(a, b, 2);
    // Integer division by zero raises in eager only, so two integer operands divide by 3.
    case 9: return any_floating(a, b) ? ops::remainder(a, b) : ops::remainder(a, 3);
    case 10: return any_floating(a, b) ? ops::fmod(a, b) : ops::fmod(a, -3);
    case 11: return any_floating(a, b) ? ops::div(a, b, "floor") : ops::div(a, 3, "floor");
    case 12: return any_floating(a, b) ? ops::div(a, b, "trunc") : ops::div(a, -3, "trunc");
    case 13: return ops::atan2(a, b);
    case 14: return any_floating(a, b) ? ops::clamp(a, ops::neg(ops::abs(b)), ops::abs(b)) : ops::bitwise_xor(a, b);
    case 15: return ops::clamp_min(a, b);
    case 16: return ops::clamp_max(a, b);
    default: return ops::pow(ops::abs(a), b);
  }
}
constexpr int kNumBinary = 17;

Tensor with_scalar(int op, const Tensor& a, double s) {
  switch (op) {
    case 0: return ops::add(a, s);
    case 1: return ops::sub(a, s);
    case 2: return ops::mul(a, s);
    case 3: return ops::div(a, s);
    case 4: return ops::rsub(a, s);
    case 5: return ops::add(a, int64_t{3});
    default: return ops::mul(a, int64_t{-2});
  }
}

Tensor compare(int op, const Tensor& a, const Tensor& b) {
  switch (op) {
    case 0: return ops::gt(a, b);
    case 1: return ops::lt(a, b);
    case 2: return ops::ge(a, b);
    case 3: return ops::le(a, b);
    case 4: return ops::eq(a, b);
    default: return ops::ne(a, b);
  }
}

std::vector<Tensor> run_recipe(const Recipe& r, const std::vector<Tensor>& inputs) {
  std::vector<Tensor> pool = inputs;
  for (const Recipe::Step& s : r.steps) {
    const Tensor& a = pool[s.a];
    const Tensor& b = pool[s.b];
    const Tensor& c = pool[s.c];
    switch (s.kind) {
      case 0: pool.push_back(unary(s.op, a)); break;
      case 1: pool.push_back(binary(s.op, a, b)); break;
      case 2: pool.push_back(with_scalar(s.op, a, s.scalar)); break;
      case 3: pool.push_back(ops::where(compare(s.op, a, b), b, c)); break;
      case 4: pool.push_back(ops::where(ops::gt(a, s.scalar), a, s.scalar)); break;
      default: {
        Tensor m = s.op % 3 == 0   ? ops::logical_and(ops::lt(a, b), ops::ge(c, s.scalar))
                   : s.op % 3 == 1 ? ops::logical_or(ops::lt(a, b), ops::logical_not(ops::ge(c, s.scalar)))
                                   : ops::logical_not(compare(s.op % 6, a, c));
        pool.push_back(ops::where(m, a, ops::neg(c)));
      }
    }
  }
  std::vector<Tensor> out;
  for (int k : r.outputs) out.push_back(pool[k]);
  return out;
}

Recipe random_recipe(std::mt19937& rng, int num_inputs) {
  Recipe r;
  const int nsteps = std::uniform_int_distribution<int>(2, 12)(rng);
  auto pick = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
  // Mostly chain on the newest value, so long chains form.
  auto operand = [&](int pool) { return pick(3) != 0 ? pool - 1 : pick(pool); };
  static constexpr double kScalars[] = {0.5, -1.25, 2.0, 0.0, 3.0, 0.1, 1.0 / 3.0, 1e-3};
  for (int k = 0; k < nsteps; ++k) {
    const int pool = num_inputs + k;
    Recipe::Step s{pick(6), 0, operand(pool), pick(pool), pick(pool), kScalars[pick(8)]};
    s.op = pick(s.kind == 0 ? kNumUnary : s.kind == 1 ? kNumBinary : 7);
    r.steps.push_back(s);
  }
  const int pool = num_inputs + nsteps;
  r.outputs = {pool - 1};
  if (pick(2) != 0) r.outputs.push_back(num_inputs + pick(nsteps));  // an intermediate escapes too
  return r;
}

// random_inputs: one full tensor, a row, a column, a 0-dim tensor, a
// transposed and a sliced one (non-contiguous), and an int32 tensor that
// exercises type promotion.
std::vector<Tensor> random_inputs(std::mt19937& rng, DType dt) {
  const bool large = std::uniform_int_distribution<int>(0, 4)(rng) == 0;  // several tiles and threads
  const int64_t rows = large ? 301 : std::uniform_int_distribution<int64_t>(1, 40)(rng);
  const int64_t cols = large ? 263 : std::uniform_int_distribution<int64_t>(1, 40)(rng);
  auto rand = [&](IntArrayRef sizes) { return ops::to(ops::randn(sizes), dt); };
  return {rand({rows, cols}),
          rand({cols}),
          rand({rows, 1}),
          rand({}),
          ops::t(rand({cols, rows})),
          ops::slice(rand({rows, 2 * cols}), 1, 1, 2 * cols, 2),
          ops::to(ops::mul(ops::randn({rows, cols}), 4.0), DType::kInt32)};
}

TEST(FusedBackendTest, RandomChainsAreBitIdenticalToEager) {
  std::mt19937 rng(20240611);
  manual_seed(7);
  int64_t fused_nodes = 0, trials = 0;
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    for (int trial = 0; trial < 40; ++trial, ++trials) {
      const std::vector<Tensor> inputs = random_inputs(rng, dt);
      const Recipe recipe = random_recipe(rng, static_cast<int>(inputs.size()));
      auto fn = [&](const std::vector<Tensor>& in) { return run_recipe(recipe, in); };
      Graph g = make_fx(fn)(inputs);
      for (const FusionGroup& group : partition_graph(g)) fused_nodes += static_cast<int64_t>(group.nodes.size());
      const std::vector<Tensor> got = fused_backend(g, inputs)(inputs);
      const std::vector<Tensor> want = fn(inputs);
      ASSERT_EQ(got.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        ASSERT_TRUE(bits_equal(got[k], want[k])) << dtype_short_name(dt) << " trial " << trial << " output " << k
                                                 << "\n" << g.str();
      }
    }
  }
  EXPECT_GT(fused_nodes, trials * 2);  // the property is about fused kernels: most chains must fuse
}

}  // namespace
}  // namespace opspec
