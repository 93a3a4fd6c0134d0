// The model ops' decompositions (cross_entropy_loss, nll_loss_nd,
// scaled_dot_product_attention, _scaled_dot_product_attention_math) recorded
// with a dispatch mode against PyTorch 2.x's C++ sequences, and their
// derivatives against central differences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace decompositions_nn_test {

using autograd_test::GradCase;
using autograd_test::SequenceCase;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

class Names : public DispatchMode {
 public:
  bool dispatch(OpCall& call) override {
    std::string n = call.name();
    names.push_back(n.substr(n.find("::") + 2));
    call.proceed();
    return true;
  }
  std::vector<std::string> names;
};

template <class F>
std::vector<std::string> ops_of(F&& f) {
  Names mode;
  ModeGuard g(mode);
  f();
  return mode.names;
}

Tensor ints(std::vector<double> v, IntArrayRef shape) { return ops::tensor(std::move(v), shape, DType::kInt64); }

class NnDecompositionTest : public ::testing::Test {
 protected:
  void SetUp() override { manual_seed(0); }
  Tensor logits = ops::randn({4, 5});
  Tensor target = ints({1, 0, 4, -100}, {4});
};

TEST_F(NnDecompositionTest, CrossEntropyIsLogSoftmaxThenNllLossForward) {
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(logits, target); }), ElementsAre("_log_softmax", "nll_loss_forward"));
  const Tensor row = ops::randn({5}), label = ints({2}, {});
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(row, label); }), ElementsAre("_log_softmax", "nll_loss_forward"));
  // [N, C, d...] inputs: PyTorch 2.x's nll_loss_nd views 3-D and wider-than-4-D
  // inputs as [N, C, 1, -1] for nll_loss2d (1.13's sequence too).
  const Tensor seq = ops::randn({2, 5, 3}), seq_target = ops::zeros({2, 3}, {.dtype = DType::kInt64});
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(seq, seq_target); }),
              ElementsAre("_log_softmax", "view", "view", "nll_loss2d_forward"));
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(seq, seq_target, std::nullopt, ops::Reduction::kNone); }),
              ElementsAre("_log_softmax", "view", "view", "nll_loss2d_forward", "view"));
  const Tensor image = ops::randn({2, 5, 3, 4}), image_target = ops::zeros({2, 3, 4}, {.dtype = DType::kInt64});
  EXPECT_THAT(ops_of([&] { ops::nll_loss_nd(image, image_target); }), ElementsAre("nll_loss2d_forward"));
  // Values: the mean over non-ignored rows of -log_softmax at the target.
  const std::vector<double> lp = ops::log_softmax(logits, 1).to_vector<double>();
  const double want = -(lp[1] + lp[5] + lp[14]) / 3;
  EXPECT_NEAR(ops::cross_entropy(logits, target).item<double>(), want, 1e-6);
}

TEST_F(NnDecompositionTest, CrossEntropyWithLabelSmoothing) {
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(logits, target, std::nullopt, ops::Reduction::kMean, -100, 0.1); }),
              ElementsAre("_log_softmax", "nll_loss_forward", "sum.dim_IntList", "neg", "eq.Scalar",
                          "masked_fill_.Scalar", "bitwise_not", "sum", "sum", "div.Tensor", "mul.Scalar",
                          "mul.Scalar", "add.Tensor"));
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(logits, target, std::nullopt, ops::Reduction::kSum, -100, 0.1); }),
              ElementsAre("_log_softmax", "nll_loss_forward", "sum.dim_IntList", "neg", "eq.Scalar",
                          "masked_fill_.Scalar", "sum", "mul.Scalar", "mul.Scalar", "add.Tensor"));
  // (1 - ls) * nll + ls / C * mean over kept rows of -sum(log_softmax).
  const std::vector<double> lp = ops::log_softmax(logits, 1).to_vector<double>();
  double smooth = 0;
  for (int r = 0; r < 3; ++r) {
    for (int c = 0; c < 5; ++c) smooth -= lp[static_cast<size_t>(r * 5 + c)];
  }
  const double nll = -(lp[1] + lp[5] + lp[14]) / 3;
  EXPECT_NEAR(ops::cross_entropy(logits, target, std::nullopt, ops::Reduction::kMean, -100, 0.1).item<double>(),
              0.9 * nll + 0.1 / 5 * smooth / 3, 1e-5);
}

// A class weight with label smoothing and reduction='mean' normalises by the
// kept targets' weights (it was refused): without a mode through
// masked_select, under one through PyTorch's subclass-like path (masked_fill,
// gather, masked_fill_). Values from the formula, with one row ignored too.
TEST_F(NnDecompositionTest, CrossEntropyWithAWeightAndLabelSmoothing) {
  const Tensor x = ops::tensor({1, 2, 3, 0.5, 0, -2}, {2, 3});
  const Tensor t = ints({2, 0}, {2});
  const Tensor w = ops::tensor({1, 2, 3}, {3});
  EXPECT_NEAR(ops::cross_entropy(x, t, w, ops::Reduction::kMean, -100, 0.1).item<double>(), 0.54375598, 1e-6);
  EXPECT_NEAR(ops::cross_entropy(x, t, w, ops::Reduction::kMean, 2, 0.1).item<double>(), 0.85963330, 1e-6);
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(x, t, w, ops::Reduction::kMean, -100, 0.1); }),
              ElementsAre("_log_softmax", "nll_loss_forward", "view", "mul.Tensor", "sum.dim_IntList", "neg",
                          "eq.Scalar", "masked_fill_.Scalar", "masked_fill.Scalar", "gather", "masked_fill_.Scalar",
                          "sum", "sum", "div.Tensor", "mul.Scalar", "mul.Scalar", "add.Tensor"));
}

TEST_F(NnDecompositionTest, CrossEntropyWithProbabilities) {
  const Tensor probs = ops::softmax(ops::randn({4, 5}), 1);
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(logits, probs); }),
              ElementsAre("_log_softmax", "mul.Tensor", "sum", "neg", "div.Scalar"));
  EXPECT_THAT(ops_of([&] { ops::cross_entropy(logits, probs, std::nullopt, ops::Reduction::kNone, -100, 0.2); }),
              ElementsAre("_log_softmax", "mul.Scalar", "add.Scalar", "mul.Tensor", "sum.dim_IntList", "neg"));
  EXPECT_THAT([&] { ops::cross_entropy(logits, probs, std::nullopt, ops::Reduction::kMean, 0); },
              ThrowsMessage<Error>(HasSubstr("ignore_index is not supported for floating point target")));
  EXPECT_THAT([&] { ops::cross_entropy(logits, ops::zeros({4, 5}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("Expected floating point type for target with class probabilities, got Long")));
  EXPECT_THAT([&] { ops::cross_entropy(logits, ints({1, 2, 3}, {3})); },
              ThrowsMessage<Error>(HasSubstr("Expected input batch_size (4) to match target batch_size (3).")));
  EXPECT_THAT([&] { ops::cross_entropy(logits, target, std::nullopt, ops::Reduction::kMean, -100, 1.5); },
              ThrowsMessage<Error>(HasSubstr("label_smoothing must be between 0.0 and 1.0. Got: 1.5")));
}

TEST(SdpaDecompositionTest, FourDimInputsTakeTheCpuFlashKernel) {
  manual_seed(1);
  const Tensor q = ops::randn({2, 2, 3, 4}), k = ops::randn({2, 2, 5, 4}), v = ops::randn({2, 2, 5, 4});
  EXPECT_THAT(ops_of([&] { ops::scaled_dot_product_attention(q, k, v); }),
              ElementsAre("_scaled_dot_product_flash_attention_for_cpu"));
  const Tensor mask = ops::ones({3, 5}, {.dtype = DType::kBool});
  EXPECT_THAT(ops_of([&] { ops::scaled_dot_product_attention(q, k, v, mask); }),
              ElementsAre("scalar_tensor", "logical_not", "scalar_tensor", "where.self",
                          "_scaled_dot_product_flash_attention_for_cpu"));
}

TEST(SdpaDecompositionTest, ThreeDimInputsAndDropoutTakeTheMathPath) {
  manual_seed(2);
  const Tensor q = ops::randn({2, 3, 4}), k = ops::randn({2, 3, 4}), v = ops::randn({2, 3, 4});
  EXPECT_THAT(ops_of([&] { ops::scaled_dot_product_attention(q, k, v, std::nullopt, 0.0, true); }),
              ElementsAre("mul.Scalar", "ones", "tril", "scalar_tensor", "logical_not", "scalar_tensor", "where.self",
                          "transpose.int", "mul.Scalar", "expand", "view", "expand", "view", "bmm", "_unsafe_view",
                          "add.Tensor", "_safe_softmax", "expand", "view", "expand", "view", "bmm", "_unsafe_view"));
  const Tensor q1 = ops::unsqueeze(q, 0), k1 = ops::unsqueeze(k, 0), v1 = ops::unsqueeze(v, 0);
  const std::vector<std::string> dropout =
      ops_of([&] { ops::scaled_dot_product_attention(q1, k1, v1, std::nullopt, 0.5); });
  EXPECT_THAT(dropout, ::testing::Contains("_safe_softmax"));
  EXPECT_THAT(dropout, ::testing::Contains("bernoulli_.float"));
  // The math and flash paths agree (up to rounding: the math path scales q and k by sqrt(scale) each).
  const Tensor q4 = ops::randn({1, 2, 3, 4}), k4 = ops::randn({1, 2, 3, 4}), v4 = ops::randn({1, 2, 3, 4});
  const std::vector<double> flash = ops::scaled_dot_product_attention(q4, k4, v4, std::nullopt, 0.0, true).to_vector<double>();
  const std::vector<double> math =
      std::get<0>(ops::_scaled_dot_product_attention_math(q4, k4, v4, std::nullopt, 0.0, true)).to_vector<double>();
  ASSERT_EQ(flash.size(), math.size());
  for (size_t i = 0; i < flash.size(); ++i) EXPECT_NEAR(flash[i], math[i], 1e-5);
  EXPECT_THAT([&] { ops::_scaled_dot_product_attention_math(q, k, v, ops::zeros({3, 3}), 0.0, true); },
              ThrowsMessage<Error>(HasSubstr("Explicit attn_mask should not be set when is_causal=True")));
  EXPECT_THAT([&] { ops::scaled_dot_product_attention(q, ops::to(k, DType::kFloat64), v); },
              ThrowsMessage<Error>(HasSubstr("Expected query, key, and value to have the same dtype")));
  EXPECT_THAT([&] { ops::scaled_dot_product_attention(q, k, v, ops::zeros({3, 3}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("Expected attn_mask dtype to be bool or float or to match query dtype")));
}

TEST(ConvDecompositionTest, ConvPoolAndBatchNormSequences) {
  manual_seed(3);
  const Tensor x = ops::randn({2, 3, 6, 6}), w = ops::randn({4, 3, 3, 3}), u = ops::randn({3, 6, 6});
  EXPECT_THAT(ops_of([&] { ops::conv2d(x, w, std::nullopt, {1}, {1}); }), ElementsAre("convolution"));
  EXPECT_THAT(ops_of([&] { ops::conv2d(u, w); }), ElementsAre("unsqueeze", "convolution", "squeeze.dim"));
  // conv_transpose2d / conv_transpose1d: convolution with transposed=True, as PyTorch's composites.
  const Tensor wt = ops::randn({3, 2, 3, 3}), x1 = ops::randn({2, 3, 5}), w1 = ops::randn({3, 2, 3});
  EXPECT_THAT(ops_of([&] { ops::conv_transpose2d(x, wt, std::nullopt, {2}, {1}, {1}); }), ElementsAre("convolution"));
  EXPECT_THAT(ops_of([&] { ops::conv_transpose2d(u, wt); }), ElementsAre("unsqueeze", "convolution", "squeeze.dim"));
  EXPECT_THAT(ops_of([&] { ops::conv_transpose1d(x1, w1); }), ElementsAre("convolution"));
  EXPECT_THAT(ops_of([&] { ops::max_pool2d(x, {3}, {2}, {1}); }), ElementsAre("max_pool2d_with_indices"));
  EXPECT_THAT(ops_of([&] { ops::adaptive_avg_pool2d(x, {1}); }), ElementsAre("mean.dim"));
  EXPECT_THAT(ops_of([&] { ops::adaptive_avg_pool2d(x, {2, 3}); }), ElementsAre("_adaptive_avg_pool2d"));
  const Tensor rm = ops::zeros({3}), rv = ops::ones({3});
  EXPECT_THAT(ops_of([&] { ops::batch_norm(x, std::nullopt, std::nullopt, rm, rv, true); }),
              ElementsAre("empty.memory_format", "native_batch_norm"));
}

TEST(ModelFormulasTest, ConvPoolAndBatchNormGradients) {
  const Tensor rm = ops::tensor({0.1, -0.2}, {2}, DType::kFloat64), rv = ops::tensor({0.5, 2}, {2}, DType::kFloat64);
  autograd_test::expect_grads_match_central_differences(
      {
          {"conv2d", {{1, 2, 4, 4}, {3, 2, 3, 3}, {3}},
           [](const auto& x) { return ops::conv2d(x[0], x[1], x[2], {1}, {1}); }, "ConvolutionBackward0"},
          {"conv2d strided grouped", {{2, 4, 5, 5}, {2, 2, 2, 2}},
           [](const auto& x) { return ops::conv2d(x[0], x[1], std::nullopt, {2}, {1}, {1}, 2); },
           "ConvolutionBackward0"},
          {"conv_transpose2d", {{1, 2, 3, 3}, {2, 3, 3, 2}, {3}},
           [](const auto& x) { return ops::conv_transpose2d(x[0], x[1], x[2], {2, 1}, {1, 0}, {1, 0}); },
           "ConvolutionBackward0"},
          {"conv_transpose1d grouped dilated", {{2, 4, 3}, {4, 1, 2}},
           [](const auto& x) { return ops::conv_transpose1d(x[0], x[1], std::nullopt, {2}, {0}, {1}, 2, {2}); },
           "ConvolutionBackward0"},
          {"max_pool2d", {{1, 2, 4, 4}}, [](const auto& x) { return ops::max_pool2d(x[0], {3}, {2}, {1}); },
           "MaxPool2DWithIndicesBackward0"},
          {"avg_pool2d", {{1, 2, 4, 4}}, [](const auto& x) { return ops::avg_pool2d(x[0], {3}, {2}, {1}); },
           "AvgPool2DBackward0"},
          {"adaptive_avg_pool2d", {{1, 2, 5, 4}},
           [](const auto& x) { return ops::adaptive_avg_pool2d(x[0], {2, 3}); }, "AdaptiveAvgPool2DBackward0"},
          {"batch_norm training", {{3, 2, 2, 2}, {2}, {2}},
           [](const auto& x) { return ops::batch_norm(x[0], x[1], x[2], std::nullopt, std::nullopt, true); },
           "NativeBatchNormBackward0"},
          {"batch_norm eval", {{3, 2, 2, 2}, {2}, {2}},
           [&](const auto& x) { return ops::batch_norm(x[0], x[1], x[2], rm, rv, false); },
           "NativeBatchNormBackward0"},
      },
      1e-5);
}

TEST(ModelFormulasTest, GradientsMatchCentralDifferences) {
  const Tensor idx = ints({0, 3, 3, 1, 4, 0}, {2, 3});
  const Tensor t = ints({1, 0, 4}, {3});
  autograd_test::expect_grads_match_central_differences({
      {"embedding", {{5, 3}}, [&](const auto& x) { return ops::embedding(x[0], idx); }, "EmbeddingBackward0"},
      {"tril", {{3, 4}}, [](const auto& x) { return ops::tril(x[0], 1); }, "TrilBackward0"},
      {"triu", {{2, 3, 3}}, [](const auto& x) { return ops::triu(x[0], -1); }, "TriuBackward0"},
      {"cross_entropy", {{3, 5}}, [&](const auto& x) { return ops::cross_entropy(x[0], t); }, "NllLossBackward0"},
      {"cross_entropy sum", {{3, 5}},
       [&](const auto& x) { return ops::cross_entropy(x[0], t, std::nullopt, ops::Reduction::kSum); },
       "NllLossBackward0"},
      {"cross_entropy over [N, C, L] weighted", {{2, 3, 4}},
       [&](const auto& x) {
         return ops::cross_entropy(x[0], ints({0, 2, 1, -100, 1, 1, 0, 2}, {2, 4}),
                                   ops::tensor({0.5, 2, 1}, {3}, DType::kFloat64));
       },
       "NllLoss2DBackward0"},
      {"nll_loss2d none", {{1, 3, 2, 2}},
       [&](const auto& x) {
         return ops::nll_loss2d(x[0], ints({2, 0, 1, 1}, {1, 2, 2}), std::nullopt, ops::Reduction::kNone);
       },
       "NllLoss2DBackward0"},
      {"cross_entropy smoothing", {{3, 5}},
       [&](const auto& x) { return ops::cross_entropy(x[0], t, std::nullopt, ops::Reduction::kMean, -100, 0.2); },
       "AddBackward0"},
      {"_safe_softmax", {{3, 4}}, [](const auto& x) { return ops::_safe_softmax(x[0], 1); }, "SafeSoftmaxBackward0"},
      {"flash attention", {{1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}},
       [](const auto& x) { return ops::scaled_dot_product_attention(x[0], x[1], x[2]); },
       "ScaledDotProductFlashAttentionForCpuBackward0"},
      {"causal attention on 3-D inputs (the math path: add_ into matmul's result)", {{2, 3, 4}, {2, 5, 4}, {2, 5, 4}},
       [](const auto& x) { return ops::scaled_dot_product_attention(x[0], x[1], x[2], std::nullopt, 0.0, true); },
       "UnsafeViewBackward0"},
      {"attention with a mask that requires grad (the math path)", {{1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 4}, {3, 5}},
       [](const auto& x) { return ops::scaled_dot_product_attention(x[0], x[1], x[2], x[3]); },
       "UnsafeViewBackward0"},
      {"flash attention causal scale", {{1, 1, 4, 2}, {1, 1, 4, 2}, {1, 1, 4, 2}},
       [](const auto& x) { return ops::scaled_dot_product_attention(x[0], x[1], x[2], std::nullopt, 0.0, true, 0.7); },
       "ScaledDotProductFlashAttentionForCpuBackward0"},
      {"embedding_dense_backward", {{6, 3}},
       [&](const auto& x) { return ops::embedding_dense_backward(ops::view(x[0], {2, 3, 3}), idx, 5, 0, false); },
       "EmbeddingDenseBackwardBackward0"},
  });
}

TEST(ModelFormulasTest, NllLossWeightMayNotRequireGrad) {
  // PyTorch's derivatives.yaml has no formula for nll_loss's weight, so its
  // codegen refuses a weight that requires grad at the call (check_no_requires_grad);
  // a silent zero gradient is what the gradcheck sweep saw before.
  const Tensor x = autograd_test::leaf({3, 4}, 5), w = autograd_test::leaf({4}, 6);
  const Tensor t = ints({1, 0, 3}, {3});
  EXPECT_THAT([&] { ops::cross_entropy(x, t, w); },
              ThrowsMessage<Error>(HasSubstr("The function 'nll_loss_forward' is not differentiable with respect to "
                                             "argument 'weight'. This input cannot have requires_grad True.")));
  EXPECT_THAT([&] { ops::nll_loss2d(ops::view(x, {1, 3, 2, 2}), ints({0, 1, 2, 0}, {1, 2, 2}), ops::narrow(w, 0, 0, 3)); },
              ThrowsMessage<Error>(HasSubstr("The function 'nll_loss2d_forward' is not differentiable with respect to "
                                             "argument 'weight'")));
  // A weight that does not require grad is fine.
  EXPECT_NO_THROW(ops::cross_entropy(x, t, ops::detach(w)).backward());
}

TEST(ModelFormulasTest, FlashAttentionMaskMayNotRequireGrad) {
  // derivatives.yaml differentiates the CPU flash kernel in query, key and
  // value only, so a mask that requires grad is refused there (it got a silent
  // zero gradient before); PyTorch's check_attn_mask_shape sends such a mask
  // to the math path, whose gradient GradientsMatchCentralDifferences checks.
  const Tensor q = autograd_test::leaf({1, 2, 3, 4}, 1), k = autograd_test::leaf({1, 2, 5, 4}, 2);
  const Tensor v = autograd_test::leaf({1, 2, 5, 4}, 3), mask = autograd_test::leaf({3, 5}, 4);
  EXPECT_THAT([&] { ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, mask); },
              ThrowsMessage<Error>(HasSubstr("The function '_scaled_dot_product_flash_attention_for_cpu' is not "
                                             "differentiable with respect to argument 'attn_mask'. This input "
                                             "cannot have requires_grad True.")));
  const std::vector<std::string> seq = ops_of([&] { ops::scaled_dot_product_attention(q, k, v, mask); });
  EXPECT_THAT(seq, ::testing::Contains("_safe_softmax"));
  EXPECT_THAT(seq, ::testing::Not(::testing::Contains("_scaled_dot_product_flash_attention_for_cpu")));
  EXPECT_NO_THROW(ops::_scaled_dot_product_flash_attention_for_cpu(q, k, v, 0.0, false, ops::detach(mask)));
}

TEST(ModelFormulasTest, EmbeddingLeavesThePaddingRowsGradientZero) {
  const Tensor w = autograd_test::leaf({5, 3}, 4);
  ops::sum(ops::embedding(w, ints({0, 3, 3, 1}, {4}), /*padding_idx=*/3)).backward();
  EXPECT_THAT(w.grad().to_vector<double>(), ElementsAre(1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0));
}

TEST(ModelFormulasTest, BackwardOpSequences) {
  const Tensor idx = ints({0, 3, 1}, {3});
  const Tensor t = ints({1, 0, 4}, {3});
  autograd_test::expect_backward_sequences({
      {"embedding", {{5, 3}}, [&](const auto& x) { return ops::embedding(x[0], idx); }, {"embedding_dense_backward"}},
      {"cross_entropy", {{3, 5}}, [&](const auto& x) { return ops::cross_entropy(x[0], t); },
       {"nll_loss_backward", "_log_softmax_backward_data"}},
      {"sdpa", {{1, 1, 2, 2}, {1, 1, 2, 2}, {1, 1, 2, 2}},
       [](const auto& x) { return ops::scaled_dot_product_attention(x[0], x[1], x[2]); },
       {"_scaled_dot_product_flash_attention_for_cpu_backward"}},
      {"tril", {{2, 2}}, [](const auto& x) { return ops::tril(x[0]); }, {"tril"}},
      {"conv2d", {{1, 2, 4, 4}, {3, 2, 3, 3}},
       [](const auto& x) { return ops::conv2d(x[0], x[1], std::nullopt, {1}, {1}); }, {"convolution_backward"}},
      {"batch_norm", {{2, 2, 2, 2}},
       [](const auto& x) { return ops::batch_norm(x[0], std::nullopt, std::nullopt, std::nullopt, std::nullopt, true); },
       {"native_batch_norm_backward"}},
      {"max_pool2d", {{1, 1, 4, 4}}, [](const auto& x) { return ops::max_pool2d(x[0], {2}); },
       {"max_pool2d_with_indices_backward"}},
  });
}

}  // namespace
}  // namespace opspec
