// Values read with item() and passed back to ops: named in the recompile
// reason, dynamic after one recompile (See Note [Values read with item()]).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/compile.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace item_values_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// scale_by_n: relu(x) * n + 2, n read from a one-element input with item().
std::vector<Tensor> scale_by_n(const std::vector<Tensor>& in) {
  const double n = in[1].item<double>();
  return {ops::add(ops::mul(ops::relu(in[0]), n), 2.0)};
}

std::vector<double> expected(const Tensor& x, double n) {
  std::vector<double> out;
  for (double v : x.to_vector<double>()) {
    const float product = static_cast<float>(std::max(v, 0.0)) * static_cast<float>(n);  // f32, as relu(x) * n
    out.push_back(product + 2.0f);
  }
  return out;
}

TEST(ItemValues, ANewValueRecompilesOnceNamingItThenTheGraphServesEveryValue) {
  // Issue 22.5: every value recompiled with "the program changed", and after
  // 8 calls the function ran eagerly for good.
  const Tensor x = ops::tensor({-1, 0.5, 2, 3}, {4});
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(&scale_by_n, {.backend = backend, .input_names = {"x", "n"}});
    for (int n = 1; n <= 12; ++n) {
      const std::vector<Tensor> out = cf({x, ops::tensor({static_cast<double>(n)}, {1})});
      EXPECT_EQ(out[0].to_vector<double>(), expected(x, n)) << "n = " << n;
    }
    const CompileStats s = cf.stats();
    EXPECT_EQ(s.recompiles, 1);
    ASSERT_EQ(s.recompile_reasons.size(), 1u);
    EXPECT_EQ(s.recompile_reasons[0], "L['n'].item() == 1.0 (the value read with item() is now 2.0)");
    EXPECT_FALSE(s.fell_back_to_eager);
  }
}

TEST(ItemValues, AHolePromotesTypesAsTheNumberItReplaces) {
  // An int tensor times a float read with item() is f32 (a wrapped number
  // does not promote past the default dtype), on every backend, hole or not.
  auto f = [](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::mul(in[0], in[1].item<double>())}; };
  const Tensor x = ops::tensor({1, 2, 3}, {3}, DType::kInt64);
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(f, {.backend = backend, .input_names = {"x", "n"}});
    for (double n : {1.5, 2.5, 4.0}) {
      const Tensor out = cf({x, ops::tensor({n}, {1})})[0];
      EXPECT_EQ(out.dtype(), DType::kFloat32) << n;
      EXPECT_EQ(out.to_vector<double>(), (std::vector<double>{n, 2 * n, 3 * n})) << n;
    }
    EXPECT_EQ(cf.stats().recompiles, 1);
  }
}

TEST(ItemValues, TheNumberThatNeverChangesStaysAConstant) {
  // Only the slot that changed becomes an input: relu(x) * n + 2 keeps its 2.
  auto cf = compile(&scale_by_n, {.input_names = {"x", "n"}});
  const Tensor x = ops::tensor({1, 2}, {2});
  cf({x, ops::tensor({2.0}, {1})});  // n == 2, the same number as the constant
  cf({x, ops::tensor({3.0}, {1})});
  const std::vector<Tensor> out = cf({x, ops::tensor({5.0}, {1})});
  EXPECT_EQ(out[0].to_vector<double>(), expected(x, 5));
  EXPECT_EQ(cf.stats().recompiles, 1);
  EXPECT_THAT(cf.stats().guards.back(), HasSubstr("scalar_0"));  // one hole, not two
  EXPECT_THAT(cf.stats().guards.back(), ::testing::Not(HasSubstr("scalar_1")));
}

TEST(ItemValues, ErrorOnRecompileNamesTheValue) {
  auto cf = compile(&scale_by_n, {.error_on_recompile = true, .input_names = {"x", "n"}});
  const Tensor x = ops::ones({2});
  cf({x, ops::tensor({1.0}, {1})});
  EXPECT_THAT([&] { cf({x, ops::tensor({4.0}, {1})}); },
              ThrowsMessage<RecompileError>(HasSubstr("L['n'].item() == 1.0 (the value read with item() is now 4.0)")));
}

TEST(ItemValues, ANumberFromElsewhereIsNamedByItsOpAndArgument) {
  double k = 1;
  auto cf = compile([&](const std::vector<Tensor>& in) { return std::vector<Tensor>{ops::mul(in[0], k)}; });
  const Tensor x = ops::ones({2});
  cf({x});
  k = 3;
  EXPECT_EQ(cf({x})[0].to_vector<double>(), (std::vector<double>{3, 3}));
  ASSERT_EQ(cf.stats().recompile_reasons.size(), 1u);
  EXPECT_EQ(cf.stats().recompile_reasons[0],
            "a number in the program changed: argument 1 of aten::mul.Tensor was 1.0, now 3.0");
}

}  // namespace
}  // namespace opspec
