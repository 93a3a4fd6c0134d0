// Tests of Note [Fused ternary ops]: addcmul, addcdiv and lerp (and their
// in-place forms) in fused groups on the CPU, interpreted and generated,
// bit for bit against the eager kernels of ternary.cc, in every dtype eager
// takes, with broadcasting, 0-dim and number operands, views and NaN/inf.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cpu/fused_codegen.h"
#include "runtime/compile/backend.h"
#include "runtime/compile/fusion.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec::internal {
namespace fused_ternary_test {

using ::testing::HasSubstr;

using Fn3 = std::function<Tensor(const Tensor&, const Tensor&, const Tensor&)>;

using fusion_test::bits_equal;

// operand: random values of dtype d (integers in [-9, 9]), with a NaN and an
// inf in floating operands of two or more elements.
Tensor operand(IntArrayRef sizes, DType d, double scale = 1.0) {
  if (!is_floating(d)) return ops::randint(-9, 10, sizes, {.dtype = d});
  Tensor x = ops::mul(ops::randn(sizes, {.dtype = DType::kFloat64}), scale);
  if (x.numel() >= 2) {
    x.data_ptr<double>()[0] = std::numeric_limits<double>::quiet_NaN();
    x.data_ptr<double>()[x.numel() - 1] = std::numeric_limits<double>::infinity();
  }
  return ops::to(x, d);
}

// clones: fresh copies, so in-place functions see the same inputs every run.
std::vector<Tensor> clones(const std::vector<Tensor>& in) {
  std::vector<Tensor> out;
  for (const Tensor& t : in) out.push_back(ops::clone(t));
  return out;
}

// expect_fused_like_eager: fn traced, partitioned into groups whose names
// contain `op`, then run by the fused backend interpreted and with generated
// kernels: both bit-identical to fn run eagerly (inputs cloned for each run).
void expect_fused_like_eager(const Fn3& fn, const std::vector<Tensor>& in, std::string_view op) {
  const Tensor want = fn(ops::clone(in[0]), ops::clone(in[1]), ops::clone(in[2]));
  std::vector<Tensor> traced_in = clones(in);
  Graph g = make_fx(fn)(traced_in);
  const std::vector<FusionGroup> groups = partition_graph(g);
  ASSERT_EQ(groups.size(), 1u) << g.str();
  EXPECT_THAT(groups[0].name, HasSubstr(str_cat("_", op, "_"))) << g.str();
  for (CpuFusedCodegen policy : {CpuFusedCodegen::kNever, CpuFusedCodegen::kAlways}) {
    SCOPED_TRACE(policy == CpuFusedCodegen::kNever ? "interpreted" : "generated");
    const CpuFusedCodegenGuard codegen(policy);
    const std::vector<Tensor> run_in = clones(in);
    const std::vector<Tensor> got = fused_backend(g, run_in)(run_in);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_TRUE(bits_equal(got[0], want));
  }
}

// twice: the group's second op (NegOfAnFmaKeepsEagersNaNs has neg).
Tensor twice(const Tensor& x) { return ops::mul(x, 2); }

constexpr DType kFloatingTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16};

TEST(FusedTernaryTest, AddcmulBroadcastsInEveryDtype) {
  manual_seed(0);
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64, DType::kInt32}) {
    SCOPED_TRACE(dtype_short_name(d));
    // 16 x 33 = 528 elements: a full tile and a partial one.
    const std::vector<Tensor> in = {operand({16, 33}, d), operand({33}, d), operand({16, 1}, d)};
    const Scalar value = is_floating(d) ? Scalar(0.37) : Scalar(int64_t{3});
    expect_fused_like_eager(
        [&](const Tensor& s, const Tensor& a, const Tensor& b) { return twice(ops::addcmul(s, a, b, value)); }, in,
        "addcmul");
  }
}

// neg right after an fma: GCC would fold -fma(a, b, c) into one fnmadd,
// keeping the sign of the NaN that inf * 0 makes where eager's neg flips it;
// wrap_neg flips the bit itself (elementwise_ops.h).
TEST(FusedTernaryTest, NegOfAnFmaKeepsEagersNaNs) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> big(67, 1.5), zero(67, 0.0);
  for (size_t i = 0; i < big.size(); i += 3) big[i] = inf;  // inf * 0: NaN from the fma itself
  for (DType d : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(d));
    const Tensor s = ops::tensor(std::vector<double>(67, 0.25), {67}, d);
    const Tensor a = ops::tensor(big, {67}, d), b = ops::tensor(zero, {67}, d);
    expect_fused_like_eager([](const Tensor& x, const Tensor& y, const Tensor& z) {
      return ops::neg(ops::addcmul(x, y, z, 0.5));
    }, {s, a, b}, "addcmul");
    expect_fused_like_eager([](const Tensor& x, const Tensor& y, const Tensor& w) {
      return ops::neg(ops::lerp(x, y, w));
    }, {a, b, s}, "lerp");  // fma(0.25, 0 - inf, inf): -inf + inf, a NaN the fma makes
  }
}

TEST(FusedTernaryTest, AddcdivBroadcastsInEveryDtype) {
  manual_seed(1);
  for (DType d : kFloatingTypes) {
    SCOPED_TRACE(dtype_short_name(d));
    const std::vector<Tensor> in = {operand({16, 33}, d), operand({16, 33}, d), operand({33}, d)};
    expect_fused_like_eager(
        [](const Tensor& s, const Tensor& a, const Tensor& b) { return twice(ops::addcdiv(s, a, b, -0.1)); }, in,
        "addcdiv");
  }
}

TEST(FusedTernaryTest, MixedDtypesPromoteAndCastAsEager) {
  manual_seed(2);
  // An integer self and t1 with a floating t2 promote to f32 (addcdiv's allowed mix).
  expect_fused_like_eager([](const Tensor& s, const Tensor& a,
                             const Tensor& b) { return twice(ops::addcdiv(s, a, b, 2)); },
                          {operand({40}, DType::kInt64), operand({40}, DType::kInt64), operand({40}, DType::kFloat32)},
                          "addcdiv");
  // An f32 0-dim t1 keeps an f16 result: t1 rounds to f16 before the f32 math.
  expect_fused_like_eager([](const Tensor& s, const Tensor& a,
                             const Tensor& b) { return twice(ops::addcmul(s, a, b, 1.3)); },
                          {operand({40}, DType::kFloat16), ops::full({}, 0.1), operand({40}, DType::kFloat16)},
                          "addcmul");
  // i32 with i64 computes in i64; value 0.5 is 0 there, as Scalar::to<int64_t>.
  expect_fused_like_eager([](const Tensor& s, const Tensor& a,
                             const Tensor& b) { return twice(ops::addcmul(s, a, b, 0.5)); },
                          {operand({40}, DType::kInt32), operand({40}, DType::kInt64), operand({40}, DType::kInt32)},
                          "addcmul");
}

TEST(FusedTernaryTest, LerpScalarAndTensorWeightsOnBothBranches) {
  manual_seed(3);
  for (DType d : kFloatingTypes) {
    SCOPED_TRACE(dtype_short_name(d));
    // Weights around +-0.5, where lerp switches the end it starts from.
    const std::vector<Tensor> in = {operand({16, 33}, d), operand({16, 33}, d), operand({16, 33}, d, 0.6)};
    expect_fused_like_eager([](const Tensor& s, const Tensor& e,
                               const Tensor& w) { return twice(ops::lerp(s, e, w)); },
                            in, "lerp");
    for (double w : {0.1, 0.5, -0.7, 0.9999}) {
      expect_fused_like_eager([w](const Tensor& s, const Tensor& e,
                                  const Tensor&) { return twice(ops::lerp(s, e, w)); },
                              in, "lerp");
    }
    // A 0-dim weight: one value for every element (a uniform register).
    expect_fused_like_eager([](const Tensor& s, const Tensor& e,
                               const Tensor& w) { return twice(ops::lerp(s, e, w)); },
                            {in[0], in[1], ops::to(ops::full({}, 0.3), d)}, "lerp");
  }
}

TEST(FusedTernaryTest, InPlaceFormsWriteOverTheirRoot) {
  manual_seed(4);
  for (DType d : kFloatingTypes) {
    SCOPED_TRACE(dtype_short_name(d));
    const std::vector<Tensor> in = {operand({8, 70}, d), operand({70}, d), operand({8, 70}, d, 0.6)};
    // Over a value of the group.
    expect_fused_like_eager(
        [](const Tensor& s, const Tensor& a, const Tensor& b) {
          Tensor t = twice(s);
          return ops::addcmul_(t, a, b, 0.01);
        },
        in, "addcmul_");
    expect_fused_like_eager(
        [](const Tensor& s, const Tensor& a, const Tensor& b) {
          Tensor t = twice(s);
          return ops::addcdiv_(t, b, a, -0.5);
        },
        in, "addcdiv_");
    // Over a graph input (the optimizers' exp_avg.lerp_(grad, 1 - beta1)).
    expect_fused_like_eager(
        [](const Tensor& s, const Tensor&, const Tensor& e) {
          Tensor self = s;
          ops::lerp_(self, twice(e), 0.1);
          return self;
        },
        in, "lerp_");
    expect_fused_like_eager(
        [](const Tensor& s, const Tensor&, const Tensor& w) {
          Tensor self = s;
          ops::lerp_(self, ops::abs(w), w);
          return self;
        },
        in, "lerp_");
  }
}

TEST(FusedTernaryTest, ViewsAsSelf) {
  manual_seed(5);
  for (DType d : {DType::kFloat32, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_short_name(d));
    // A transposed self is gathered; the result takes eager's layout.
    const std::vector<Tensor> in = {operand({33, 16}, d), operand({16, 33}, d), operand({16, 1}, d)};
    expect_fused_like_eager([](const Tensor& s, const Tensor& a,
                               const Tensor& b) { return twice(ops::addcmul(ops::t(s), a, b, 0.2)); },
                            in, "addcmul");
    expect_fused_like_eager([](const Tensor& s, const Tensor& e,
                               const Tensor&) { return twice(ops::lerp(ops::t(s), e, 0.7)); },
                            in, "lerp");
  }
}

TEST(FusedTernaryTest, LoweringMirrorsEagerSteps) {
  const Tensor s = ops::randn({4}, {.dtype = DType::kFloat16}), e = ops::randn({4}, {.dtype = DType::kFloat16});
  Graph g = make_fx([](const Tensor& a, const Tensor& b) { return twice(ops::lerp(a, b, 0.25)); })(s, e);
  const std::vector<FusionGroup> groups = partition_graph(g);
  ASSERT_EQ(groups.size(), 1u);
  // f16 widens to f32, one fma from the nearer end, one rounding at the end.
  const std::string program = groups[0].program->str();
  EXPECT_THAT(program, HasSubstr("= fma("));
  EXPECT_THAT(program, HasSubstr("= cast(")) << program;
  EXPECT_THAT(program, ::testing::Not(HasSubstr("lerp"))) << program;
}

}  // namespace fused_ternary_test
}  // namespace opspec::internal
