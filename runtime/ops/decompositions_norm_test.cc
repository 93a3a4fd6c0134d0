// rms_norm's decomposition (decompositions_norm.cc) recorded with a dispatch
// mode against PyTorch main's rms_norm_composite (Note [rms_norm's
// decomposition]): the parts per dtype, eps as PyTorch rounds it, the
// channels-last and mixed-dtype paths, values against the formula, PyTorch's
// input checks, and gradients through the parts against central differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <limits>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/core/memory_format.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace decompositions_norm_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Calls: each dispatched op's name (without `aten::`), and add_'s eps.
class Calls : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    std::string n = call.name();
    names.push_back(n.substr(n.find("::") + 2));
    if (n == "aten::add_.Scalar") eps = call.arg(1).to_double();
    if (n == "aten::mean.dim") mean_dims = call.arg(1).to_int_list();
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
  double eps = -1;
  std::vector<int64_t> mean_dims;
};

template <class F>
Calls calls_of(F&& f) {
  Calls mode;
  ModeGuard g(mode);
  f();
  return mode;
}

TEST(RmsNormDecompositionTest, FloatRecordsTheCompositesParts) {
  const Tensor x = ops::randn({2, 3, 4}), w = ops::randn({4});
  const Calls c = calls_of([&] { ops::rms_norm(x, {4}, w); });
  EXPECT_THAT(c.names, ElementsAre("pow.Tensor_Scalar", "mean.dim", "add_.Scalar", "rsqrt", "mul.Tensor", "mul.Tensor"));
  EXPECT_EQ(c.eps, static_cast<double>(FLT_EPSILON));  // eps=None: finfo(float32).eps
  EXPECT_THAT(c.mean_dims, ElementsAre(2));
  // Without a weight there is no second mul; the dims to reduce run last first.
  const Calls two = calls_of([&] { ops::rms_norm(x, {3, 4}); });
  EXPECT_THAT(two.names, ElementsAre("pow.Tensor_Scalar", "mean.dim", "add_.Scalar", "rsqrt", "mul.Tensor"));
  EXPECT_THAT(two.mean_dims, ElementsAre(2, 1));
}

TEST(RmsNormDecompositionTest, EpsIsRoundedToTheOpmathType) {
  const Tensor x = ops::randn({2, 4});
  EXPECT_EQ(calls_of([&] { ops::rms_norm(x, {4}, std::nullopt, 1e-6); }).eps,
            static_cast<double>(static_cast<float>(1e-6)));  // 9.999999974752427e-07, PyTorch's float eps_val
  const Tensor d = ops::randn({2, 4}, {.dtype = DType::kFloat64});
  EXPECT_EQ(calls_of([&] { ops::rms_norm(d, {4}, std::nullopt, 1e-6); }).eps, 1e-6);
  EXPECT_EQ(calls_of([&] { ops::rms_norm(d, {4}); }).eps, std::numeric_limits<double>::epsilon());
}

TEST(RmsNormDecompositionTest, HalfIsUpcastAndCastBack) {
  const Tensor h = ops::to(ops::randn({2, 4}), DType::kFloat16);
  const Calls c = calls_of([&] { ops::rms_norm(h, {4}); });
  EXPECT_THAT(c.names,
              ElementsAre("_to_copy", "pow.Tensor_Scalar", "mean.dim", "add_.Scalar", "rsqrt", "mul.Tensor", "_to_copy"));
  const Tensor y = ops::rms_norm(h, {4});
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  // rstd stays f32 (the opmath type) in _fused_rms_norm's second output.
  const auto [out, rstd] = ops::_fused_rms_norm(h, {4}, std::nullopt, std::nullopt);
  EXPECT_EQ(rstd.dtype(), DType::kFloat32);
  EXPECT_THAT(rstd.sizes(), ElementsAre(2, 1));
  EXPECT_TRUE(ops::equal(out, y));
}

TEST(RmsNormDecompositionTest, ValuesFollowTheFormula) {
  // Row [1, 7]: mean square 25, rsqrt 0.2; a zero row stays zero.
  const Tensor x = ops::tensor({1.0, 7.0, 0.0, 0.0}, {2, 2}, DType::kFloat64);
  const Tensor w = ops::tensor({2.0, -1.0}, {2}, DType::kFloat64);
  const std::vector<double> y = ops::rms_norm(x, {2}, w).to_vector<double>();
  ASSERT_EQ(y.size(), 4u);
  EXPECT_NEAR(y[0], 0.4, 1e-12);
  EXPECT_NEAR(y[1], -1.4, 1e-12);
  EXPECT_EQ(y[2], 0.0);
  EXPECT_EQ(y[3], 0.0);
  // Against the formula on random f32 input.
  const Tensor r = ops::randn({3, 5}), rw = ops::randn({5});
  const Tensor ms = ops::mean(ops::mul(r, r), {1}, true);
  const Tensor expected = ops::mul(ops::mul(r, ops::rsqrt(ops::add(ms, 1e-5))), rw);
  EXPECT_TRUE(ops::allclose(ops::rms_norm(r, {5}, rw, 1e-5), expected, 1e-6, 1e-6));
}

TEST(RmsNormDecompositionTest, ChannelsLastKeepsItsLayoutAndSkipsTheFusedOp) {
  const Tensor x = ops::contiguous(ops::randn({2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  const Tensor y = ops::rms_norm(x, {5});
  EXPECT_TRUE(is_contiguous(y, MemoryFormat::kChannelsLast));
  EXPECT_TRUE(ops::allclose(y, ops::rms_norm(ops::contiguous(x), {5}), 0, 0));
  // A transposed (non-contiguous, not channels-last) input's result is made contiguous by a clone.
  const Tensor t = ops::transpose(ops::randn({4, 3}), 0, 1);
  const Calls c = calls_of([&] { ops::rms_norm(t, {4}); });
  EXPECT_EQ(c.names.back(), "clone");
  EXPECT_TRUE(ops::rms_norm(t, {4}).is_contiguous());
}

TEST(RmsNormDecompositionTest, WeightOfAnotherDtypePromotes) {
  const Tensor h = ops::to(ops::randn({2, 4}), DType::kFloat16);
  const Tensor w = ops::randn({4});  // f32: the composite directly, result cast back to f16
  const Tensor y = ops::rms_norm(h, {4}, w);
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  const Tensor expected = ops::to(ops::rms_norm(ops::to(h, DType::kFloat32), {4}, w), DType::kFloat16);
  EXPECT_TRUE(ops::equal(y, expected));
}

TEST(RmsNormDecompositionTest, PyTorchsChecks) {
  const Tensor x = ops::randn({2, 3});
  EXPECT_THAT([&] { ops::rms_norm(x, {4}); },
              ThrowsMessage<Error>(HasSubstr("aten::rms_norm: Given normalized_shape=[4], expected input with shape "
                                             "[*, 4], but got input of size[2, 3]")));
  EXPECT_THAT([&] { ops::rms_norm(x, {}); },
              ThrowsMessage<Error>(HasSubstr("Expected normalized_shape to be at least 1-dimensional, i.e., "
                                             "containing at least one element, but got normalized_shape = []")));
  EXPECT_THAT([&] { ops::rms_norm(x, {3}, ops::ones({2})); },
              ThrowsMessage<Error>(HasSubstr("Expected weight to be of same shape as normalized_shape, but got "
                                             "weight of shape [2] and normalized_shape = [3]")));
  EXPECT_THAT([&] { ops::rms_norm(x, {2, 3, 1}); },
              ThrowsMessage<Error>(HasSubstr("expected input with shape [*, 2, 3, 1], but got input of size[2, 3]")));
  EXPECT_THAT([&] { ops::rms_norm(ops::ones({2, 3}, {.dtype = DType::kInt64}), {3}); },
              ThrowsMessage<Error>(HasSubstr("\"rms_norm\" not implemented for 'Long'")));
}

TEST(RmsNormDecompositionTest, GradientsMatchCentralDifferences) {
  autograd_test::expect_grads_match_central_differences({
      {"rms_norm with weight", {{2, 3, 4}, {4}},
       [](const auto& in) { return ops::rms_norm(in[0], {4}, in[1], 1e-3); }, "MulBackward0"},
      {"rms_norm over two dims", {{2, 3, 4}},
       [](const auto& in) { return ops::rms_norm(in[0], {3, 4}); }, "MulBackward0"},
  });
}

}  // namespace decompositions_norm_test
}  // namespace opspec
