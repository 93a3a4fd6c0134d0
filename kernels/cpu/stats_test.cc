// Tests of var, std, var_mean, logsumexp, any, all and mse_loss (CPU and
// Meta) against hand-computed values, and their errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/ops/ops.h"

namespace opspec {
namespace stats_test {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kInf = std::numeric_limits<double>::infinity();

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

TEST(StatsTest, VarStdAndVarMean) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 2, 2, 2, 2}, {2, 4}, DType::kFloat64);
  EXPECT_DOUBLE_EQ(ops::var(x).item<double>(), 5.5 / 7);  // mean 2.25, squared deviations 5.5, / 7
  EXPECT_THAT(values(ops::var(x, IntArrayRef{1})), ElementsAre(5.0 / 3, 0));
  EXPECT_THAT(values(ops::var(x, IntArrayRef{1}, 0)), ElementsAre(1.25, 0));
  EXPECT_THAT(values(ops::std(x, IntArrayRef{1})), ElementsAre(std::sqrt(5.0 / 3), 0));
  EXPECT_THAT(ops::var(x, IntArrayRef{1}, std::nullopt, true).sizes(), ElementsAre(2, 1));
  auto [v, m] = ops::var_mean(x, IntArrayRef{0});
  EXPECT_THAT(values(v), ElementsAre(0.5, 0, 0.5, 2));
  EXPECT_THAT(values(m), ElementsAre(1.5, 2, 2.5, 3));
  // n == correction divides by zero, as PyTorch: inf, or NaN for 0 / 0.
  EXPECT_TRUE(std::isnan(ops::var(ops::tensor({3}, {1}, DType::kFloat64)).item<double>()));
  EXPECT_THAT(ops::var(ops::empty({2, 0}, {.device = kMeta}), IntArrayRef{0}).sizes(), ElementsAre(0));
  EXPECT_THAT([&] { ops::var(ops::tensor({1, 2}, {2}, DType::kInt64)); },
              ThrowsMessage<Error>(HasSubstr("std and var only support floating point and complex dtypes")));
}

TEST(StatsTest, LogSumExpIsStable) {
  const Tensor x = ops::tensor({0, std::log(3.0), 1000, 1000}, {2, 2}, DType::kFloat64);
  EXPECT_THAT(values(ops::logsumexp(x, {1})), ElementsAre(DoubleNear(std::log(4.0), 1e-12),
                                                           DoubleNear(1000 + std::log(2.0), 1e-9)));
  EXPECT_THAT(values(ops::logsumexp(ops::tensor({-kInf, -kInf}, {2}), {0})), ElementsAre(-kInf));
  EXPECT_THAT(values(ops::logsumexp(ops::tensor({kInf, 1}, {2}), {0})), ElementsAre(kInf));
  const Tensor i = ops::logsumexp(ops::tensor({0, 0}, {2}, DType::kInt64), {0}, true);
  EXPECT_EQ(i.dtype(), DType::kFloat32);
  EXPECT_THAT(values(i), ElementsAre(DoubleNear(std::log(2.0), 1e-6)));
}

TEST(StatsTest, AnyAndAll) {
  const Tensor x = ops::tensor({0, 0, 1, 2, 3, std::nan("")}, {2, 3});
  EXPECT_TRUE(ops::any(x).item<bool>());
  EXPECT_FALSE(ops::all(x).item<bool>());
  EXPECT_THAT(values(ops::any(x, 1)), ElementsAre(1, 1));
  EXPECT_THAT(values(ops::all(x, 1)), ElementsAre(0, 1));  // NaN is nonzero
  EXPECT_THAT(values(ops::all(x, 0, true)), ElementsAre(0, 0, 1));
  EXPECT_EQ(ops::any(x).dtype(), DType::kBool);
  EXPECT_FALSE(ops::any(ops::empty({0})).item<bool>());
  EXPECT_TRUE(ops::all(ops::empty({0})).item<bool>());
}

TEST(StatsTest, MseLossAndBackward) {
  const Tensor x = ops::tensor({1, 2, 3}, {3}), t = ops::tensor({1, 1, 1}, {3});
  EXPECT_THAT(values(ops::mse_loss(x, t, ops::Reduction::kNone)), ElementsAre(0, 1, 4));
  EXPECT_THAT(ops::mse_loss(x, t).item<double>(), DoubleNear(5.0 / 3, 1e-7));
  EXPECT_DOUBLE_EQ(ops::mse_loss(x, t, ops::Reduction::kSum).item<double>(), 5);
  const Tensor g = ops::mse_loss_backward(ops::full({}, 3.0), x, t, ops::Reduction::kMean);
  EXPECT_THAT(values(g), ElementsAre(0, 2, 4));  // 2 (x - t) / 3 * 3
  EXPECT_THAT(values(ops::mse_loss_backward(ops::ones({3}), x, t, ops::Reduction::kNone)), ElementsAre(0, 2, 4));
  EXPECT_THAT([&] { ops::mse_loss(x, ops::ones({2})); }, ThrowsMessage<Error>(HasSubstr("must have the same shape")));
}

}  // namespace
}  // namespace opspec
