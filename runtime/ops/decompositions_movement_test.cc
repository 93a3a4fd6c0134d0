// The movement ops' decompositions (upsample_nearest2d.vec, group_norm,
// unflatten.int, movedim) recorded with a dispatch mode against PyTorch 2.x's
// C++ sequences, their values and errors, and the derivatives of the movement
// ops (formulas_movement.cc) against central differences and PyTorch's
// backward op sequences.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace decompositions_movement_test {

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


TEST(MovementDecompositionTest, UpsampleVecCallsUpsampleNearest2d) {
  const Tensor x = ops::randn({1, 2, 3, 3});
  EXPECT_THAT(ops_of([&] { ops::upsample_nearest2d_vec(x, std::nullopt, std::vector<double>{2, 2}); }),
              ElementsAre("upsample_nearest2d"));
  const std::vector<int64_t> size = {4, 5};
  EXPECT_THAT(ops_of([&] { ops::upsample_nearest2d_vec(x, IntArrayRef(size), std::nullopt); }),
              ElementsAre("upsample_nearest2d"));
}

TEST(MovementDecompositionTest, GroupNormIsNativeGroupNorm) {
  const Tensor x = ops::randn({2, 4, 3, 2}), w = ops::randn({4}), b = ops::randn({4});
  EXPECT_THAT(ops_of([&] { ops::group_norm(x, 2, w, b); }), ElementsAre("native_group_norm"));
  // HxW is the product of the trailing sizes: the same as a [2, 4, 6] input.
  const Tensor y = ops::group_norm(x, 2, w, b);
  const Tensor z = std::get<0>(ops::native_group_norm(ops::reshape(x, {2, 4, 6}), w, b, 2, 4, 6, 2, 1e-5));
  EXPECT_TRUE(ops::allclose(ops::reshape(y, {2, 4, 6}), z, 0, 0));
  EXPECT_THAT(ops::group_norm(ops::randn({3, 6}), 3).sizes(), ElementsAre(3, 6));
}

TEST(MovementDecompositionTest, UnflattenIsAView) {
  const Tensor x = ops::randn({2, 6});
  EXPECT_THAT(ops_of([&] { ops::unflatten(x, 1, {2, 3}); }), ElementsAre("view"));
  const Tensor u = ops::unflatten(x, -1, {-1, 3});
  EXPECT_THAT(u.sizes(), ElementsAre(2, 2, 3));
  EXPECT_TRUE(u.is_alias_of(x));
  EXPECT_THAT(ops::unflatten(x, 0, {1, 2, 1}).sizes(), ElementsAre(1, 2, 1, 6));
  EXPECT_THAT([&] { ops::unflatten(ops::randn({2, 3}), 1, {2, 2}); },
              ThrowsMessage<Error>(HasSubstr("unflatten: Provided sizes [2, 2] don't multiply up to the size of dim 1 "
                                             "(3) in the input tensor")));
  EXPECT_THAT([&] { ops::unflatten(x, 1, {}); }, ThrowsMessage<Error>(HasSubstr("unflatten: sizes must be non-empty")));
  EXPECT_THAT([&] { ops::unflatten(x, 1, {-1, -1}); },
              ThrowsMessage<Error>(HasSubstr("unflatten got an unexpected error:\nonly one dimension can be inferred")));
  EXPECT_THAT([&] { ops::unflatten(x, 3, {1, 6}); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 3)")));
}

TEST(MovementDecompositionTest, MovedimIsAPermute) {
  const Tensor x = ops::randn({2, 3, 4});
  EXPECT_THAT(ops_of([&] { ops::movedim(x, 0, 2); }), ElementsAre("permute"));
  EXPECT_THAT(ops_of([&] { ops::movedim(x, {0, 1}, {2, 0}); }), ElementsAre("permute"));
  const Tensor s = ops::scalar_tensor(1);
  EXPECT_THAT(ops_of([&] { ops::movedim(s, 0, 0); }), ElementsAre("alias"));
  EXPECT_THAT(ops::movedim(x, 0, 2).sizes(), ElementsAre(3, 4, 2));
  EXPECT_THAT(ops::movedim(x, -1, 0).sizes(), ElementsAre(4, 2, 3));
  // Sources (0, 1) to (2, 0): dim 1 first, then the free dim 2, then dim 0.
  const Tensor m = ops::movedim(x, {0, 1}, {2, 0});
  EXPECT_THAT(m.sizes(), ElementsAre(3, 4, 2));
  EXPECT_THAT(m.strides(), ElementsAre(4, 1, 12));
  EXPECT_THAT([&] { ops::movedim(x, {0, 0}, {0, 1}); },
              ThrowsMessage<Error>(HasSubstr("movedim: repeated dim in `source` ([0, 0])")));
  EXPECT_THAT([&] { ops::movedim(x, {0, 1}, {1, -2}); },
              ThrowsMessage<Error>(HasSubstr("movedim: repeated dim in `destination` ([1, -2])")));
  EXPECT_THAT([&] { ops::movedim(x, {0}, {0, 1}); },
              ThrowsMessage<Error>(HasSubstr("movedim: Invalid source or destination dims: source ([0] dims) should "
                                             "contain the same number of dims as destination ([0, 1] dims)")));
  EXPECT_THAT([&] { ops::movedim(x, 3, 0); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-3, 2], but got 3)")));
}

// ---- Derivatives (formulas_movement.cc) ----

TEST(MovementFormulaTest, GradientsMatchCentralDifferences) {
  autograd_test::expect_grads_match_central_differences({
      {"constant_pad_nd", {{2, 3}}, [](const auto& in) { return ops::constant_pad_nd(in[0], {1, -1, 2, 0}, 3); },
       "ConstantPadNdBackward0"},
      {"upsample_nearest2d", {{1, 2, 2, 3}},
       [](const auto& in) { return ops::upsample_nearest2d(in[0], {3, 5}); }, "UpsampleNearest2DBackward0"},
      {"upsample_nearest2d scales", {{1, 1, 3, 3}},
       [](const auto& in) { return ops::upsample_nearest2d(in[0], {4, 2}, 1.5, 0.7); }, "UpsampleNearest2DBackward0"},
      {"upsample_nearest2d_backward", {{1, 1, 3, 5}},
       [](const auto& in) { return ops::upsample_nearest2d_backward(in[0], {3, 5}, {1, 1, 2, 3}); },
       "UpsampleNearest2DBackwardBackward0"},
      {"native_group_norm", {{2, 4, 3}, {4}, {4}},
       [](const auto& in) { return std::get<0>(ops::native_group_norm(in[0], in[1], in[2], 2, 4, 3, 2, 1e-5)); },
       "NativeGroupNormBackward0"},
      {"group_norm", {{2, 6, 2}},
       [](const auto& in) { return ops::group_norm(in[0], 3); }, "NativeGroupNormBackward0"},
      {"flip", {{2, 3}}, [](const auto& in) { return ops::flip(in[0], {0, 1}); }, "FlipBackward0"},
      {"roll", {{2, 3}}, [](const auto& in) { return ops::roll(in[0], {1, -2}, {1, 0}); }, "RollBackward0"},
      {"roll flattened", {{2, 3}}, [](const auto& in) { return ops::roll(in[0], {2}); }, "RollBackward0"},
      {"repeat", {{2, 3}}, [](const auto& in) { return ops::repeat(in[0], {2, 1, 3}); }, "RepeatBackward0"},
      {"repeat zero", {{2}}, [](const auto& in) { return ops::repeat(in[0], {0, 2}); }, "RepeatBackward0"},
  });
}

// Gradients through mean and rstd take infinitely_differentiable_native_group_norm_backward
// (dmean and drstd count when both are defined), as does a create_graph backward.
TEST(MovementFormulaTest, GroupNormDifferentiablePath) {
  autograd_test::expect_grads_match_central_differences({
      {"native_group_norm mean and rstd", {{2, 4, 3}, {4}, {4}},
       [](const auto& in) {
         auto r = ops::native_group_norm(in[0], in[1], in[2], 2, 4, 3, 2, 1e-5);
         const Tensor stats = ops::sum(ops::mul(std::get<1>(r), ops::mul(std::get<2>(r), std::get<2>(r))));
         return ops::add(ops::sum(ops::mul(std::get<0>(r), std::get<0>(r))), stats);
       },
       "AddBackward0"},
  });
  // Second derivatives of group_norm through the create_graph backward, with and without affine.
  const Tensor w = autograd_test::random({2, 4, 3}, 5), v = autograd_test::random({2, 4, 3}, 6);
  autograd_test::expect_second_derivatives_match([](const Tensor& x) { return ops::group_norm(x, 2); }, w, v, 7,
                                                 1e-5);
  const Tensor gamma = autograd_test::random({4}, 8), beta = autograd_test::random({4}, 9);
  autograd_test::expect_second_derivatives_match(
      [&](const Tensor& x) { return ops::group_norm(x, 2, gamma, beta); }, w, v, 10, 1e-5);
}

// The differentiable path (a gradient for rstd) is FunctionsManual's
// infinitely_differentiable_native_group_norm_backward op for op: torch 1.13's
// recording, which 2.x keeps but for view in place of _reshape_alias, with its
// in-place unsqueeze_ and reciprocal_ and its clamp_min (var, computed unread).
TEST(MovementFormulaTest, GroupNormDifferentiableBackwardIsPyTorchsOpForOp) {
  const Tensor x = autograd_test::leaf({2, 4, 3}, 31);
  const auto out = ops::native_group_norm(x, std::nullopt, std::nullopt, 2, 4, 3, 2, 1e-5);
  const Tensor &y = std::get<0>(out), &rstd = std::get<2>(out);
  const std::vector<std::string> want = {
      "ones_like", "expand", "expand",                                        // the seeds of sum(rstd) and sum(y)
      "view", "view", "view", "view",                                         // X, mean, rstd, dY as [N, G, D, HxW]
      "mul.Tensor", "sum.dim_IntList", "unsqueeze_", "sum.dim_IntList", "unsqueeze_",  // ds, db
      "mul.Tensor", "reciprocal_", "sub.Scalar", "clamp_min",                 // var
      "mul.Tensor", "mul.Tensor",                                             // rstd_cube
      "view", "mul.Scalar", "mul.Tensor",                                     // dvar
      "sum.dim_IntList", "unsqueeze_", "sum.dim_IntList", "unsqueeze_",       // b, c
      "mul.Tensor", "sub.Tensor", "mul.Tensor", "mul.Scalar",                 // b
      "mul.Tensor", "mul.Scalar", "neg", "mul.Tensor", "sub.Tensor",          // c
      "mul.Tensor", "mul.Tensor", "add.Tensor", "add.Tensor", "view"};        // dX
  std::vector<std::string> got = autograd_test::backward_ops(ops::add(ops::sum(y), ops::sum(rstd)));
  for (std::string& op : got) op.erase(0, std::string_view("aten::").size());
  EXPECT_EQ(got, want);
  EXPECT_TRUE(x.grad().defined());
}

TEST(MovementFormulaTest, BackwardOpSequencesArePyTorchs) {
  autograd_test::expect_backward_sequences({
      {"constant_pad_nd", {{2, 3}}, [](const auto& in) { return ops::constant_pad_nd(in[0], {1, 1}); },
       {"constant_pad_nd"}},
      {"upsample_nearest2d", {{1, 1, 2, 2}}, [](const auto& in) { return ops::upsample_nearest2d(in[0], {4, 4}); },
       {"upsample_nearest2d_backward"}},
      {"flip", {{2, 3}}, [](const auto& in) { return ops::flip(in[0], {0}); }, {"flip"}},
      {"roll", {{2, 3}}, [](const auto& in) { return ops::roll(in[0], {1}, {1}); }, {"roll"}},
      // repeat_backward: the leading dim summed away, then one reshape (a view here) and one sum.
      {"repeat", {{2, 3}}, [](const auto& in) { return ops::repeat(in[0], {2, 2, 1}); },
       {"sum.dim_IntList", "view", "sum.dim_IntList"}},
      // All ones: the gradient passes through; the leaf's AccumulateGrad copies the expanded one (as PyTorch).
      {"repeat ones", {{2, 3}}, [](const auto& in) { return ops::repeat(in[0], {1, 1}); },
       {"new_empty_strided", "copy_"}},
      {"native_group_norm", {{2, 4, 3}},
       [](const auto& in) { return std::get<0>(ops::native_group_norm(in[0], std::nullopt, std::nullopt, 2, 4, 3, 2,
                                                                      1e-5)); },
       // derivatives.yaml's grads[0].contiguous(): the expanded gradient is cloned.
       {"clone", "native_group_norm_backward"}},
  });
}

}  // namespace
}  // namespace opspec
