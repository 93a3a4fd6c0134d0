// Tests of autograd's backward ops (CPU and Meta): _softmax_backward_data,
// _log_softmax_backward_data, native_layer_norm_backward,
// native_dropout_backward, slice_backward, select_backward, and of
// masked_fill_ and sgn, which their formulas call.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "runtime/ops/ops.h"

namespace opspec {
namespace grad_ops_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

Tensor randn_t(IntArrayRef shape, uint32_t seed, DType dtype = DType::kFloat64) {
  std::mt19937 gen(seed);
  std::normal_distribution<double> dist(0, 1);
  std::vector<double> v(static_cast<size_t>(compute_numel(shape)));
  for (double& x : v) x = dist(gen);
  return ops::tensor(v, shape, dtype);
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// ref_softmax_backward: the formulas in double over [outer, len, inner].
std::vector<double> ref_softmax_backward(const Tensor& g, const Tensor& y, int64_t dim, bool log) {
  const std::vector<double> gv = values(g), yv = values(y);
  int64_t outer = 1, inner = 1;
  const int64_t len = g.sizes()[dim];
  for (int64_t i = 0; i < g.dim(); ++i) {
    if (i < dim) outer *= g.sizes()[i];
    if (i > dim) inner *= g.sizes()[i];
  }
  std::vector<double> out(gv.size());
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      double s = 0;
      for (int64_t k = 0; k < len; ++k) {
        const size_t at = static_cast<size_t>((o * len + k) * inner + i);
        s += log ? gv[at] : gv[at] * yv[at];
      }
      for (int64_t k = 0; k < len; ++k) {
        const size_t at = static_cast<size_t>((o * len + k) * inner + i);
        out[at] = log ? gv[at] - std::exp(yv[at]) * s : yv[at] * (gv[at] - s);
      }
    }
  }
  return out;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], tol) << "element " << i;
}

TEST(SoftmaxBackward, MatchesTheFormulaAlongEveryDim) {
  const Tensor x = randn_t({3, 4, 5}, 1);
  for (int64_t dim : {0, 1, 2}) {
    SCOPED_TRACE(dim);
    const Tensor g = randn_t({3, 4, 5}, 2);
    const Tensor y = ops::_softmax(x, dim);
    expect_near(values(ops::_softmax_backward_data(g, y, dim, DType::kFloat64)), ref_softmax_backward(g, y, dim, false),
                1e-12);
    const Tensor ly = ops::_log_softmax(x, dim);
    expect_near(values(ops::_log_softmax_backward_data(g, ly, dim - 3, DType::kFloat64)),
                ref_softmax_backward(g, ly, dim, true), 1e-12);
  }
}

TEST(SoftmaxBackward, StridedInputsF32AndMetaAgree) {
  const Tensor x = ops::transpose(randn_t({6, 40}, 3, DType::kFloat32), 0, 1);  // [40, 6], strided
  const Tensor g = ops::transpose(randn_t({6, 40}, 4, DType::kFloat32), 0, 1);
  const Tensor y = ops::_softmax(x, 1);
  const Tensor gi = ops::_softmax_backward_data(g, y, 1, DType::kFloat32);
  EXPECT_EQ(gi.dtype(), DType::kFloat32);
  EXPECT_TRUE(gi.is_contiguous());
  expect_near(values(gi), ref_softmax_backward(ops::contiguous(g), y, 1, false), 1e-5);
  const Tensor m = ops::_softmax_backward_data(ops::to(g, Device::parse("meta")), ops::to(y, Device::parse("meta")), 1,
                                               DType::kFloat32);
  EXPECT_EQ(m.sizes(), gi.sizes());
  EXPECT_TRUE(m.device().is_meta());
}

TEST(SoftmaxBackward, ShapeAndDimErrorsArePyTorchs) {
  const Tensor g = randn_t({2, 3}, 5), y = randn_t({3}, 6);
  EXPECT_THAT([&] { ops::_softmax_backward_data(g, y, 0, DType::kFloat64); },
              ThrowsMessage<Error>(HasSubstr("Expected tensor for argument #1 'grad' to have same size as tensor for "
                                             "argument #2 'output'; but [2, 3] does not equal [3] (while checking "
                                             "arguments for softmax_backward)")));
  EXPECT_THAT([&] { ops::_log_softmax_backward_data(g, g, 2, DType::kFloat64); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  const Tensor i = ops::ones({2}, {.dtype = DType::kInt64});
  EXPECT_THAT([&] { ops::_softmax_backward_data(i, i, 0, DType::kInt64); },
              ThrowsMessage<Error>(HasSubstr("\"softmax_backward\" not implemented for 'Long'")));
}

// ref_layer_norm_backward: dx, dw, db in double from the definition.
void ref_layer_norm_backward(const Tensor& dy, const Tensor& x, const Tensor& w, int64_t rows, int64_t n,
                             std::vector<double>* dx, std::vector<double>* dw, std::vector<double>* db) {
  const std::vector<double> g = values(dy), xv = values(x), wv = values(w);
  dx->assign(g.size(), 0);
  dw->assign(static_cast<size_t>(n), 0);
  db->assign(static_cast<size_t>(n), 0);
  for (int64_t r = 0; r < rows; ++r) {
    double mu = 0, var = 0;
    for (int64_t j = 0; j < n; ++j) mu += xv[static_cast<size_t>(r * n + j)];
    mu /= static_cast<double>(n);
    for (int64_t j = 0; j < n; ++j) var += std::pow(xv[static_cast<size_t>(r * n + j)] - mu, 2);
    const double rs = 1 / std::sqrt(var / static_cast<double>(n) + 1e-5);
    double sg = 0, sgx = 0;
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(r * n + j);
      const double xh = (xv[at] - mu) * rs, gw = g[at] * wv[static_cast<size_t>(j)];
      sg += gw;
      sgx += gw * xh;
      (*dw)[static_cast<size_t>(j)] += g[at] * xh;
      (*db)[static_cast<size_t>(j)] += g[at];
    }
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(r * n + j);
      const double xh = (xv[at] - mu) * rs;
      (*dx)[at] = rs * (g[at] * wv[static_cast<size_t>(j)] - sg / static_cast<double>(n) -
                        xh * sgx / static_cast<double>(n));
    }
  }
}

TEST(LayerNormBackward, MatchesTheDefinitionWithAndWithoutAffine) {
  const Tensor x = randn_t({4, 3, 8}, 7), dy = randn_t({4, 3, 8}, 8), w = randn_t({8}, 9), b = randn_t({8}, 10);
  auto [y, mean, rstd] = ops::native_layer_norm(x, {8}, w, b, 1e-5);
  auto [dx, dw, db] = ops::native_layer_norm_backward(dy, x, {8}, mean, rstd, w, b, {true, true, true});
  std::vector<double> rdx, rdw, rdb;
  ref_layer_norm_backward(dy, x, w, 12, 8, &rdx, &rdw, &rdb);
  expect_near(values(dx), rdx, 1e-10);
  expect_near(values(dw), rdw, 1e-10);
  expect_near(values(db), rdb, 1e-10);
  // Masked-off outputs are undefined; without weight the formula uses ones.
  auto [dx2, dw2, db2] =
      ops::native_layer_norm_backward(dy, x, {8}, mean, rstd, std::nullopt, std::nullopt, {true, false, false});
  EXPECT_FALSE(dw2.defined());
  EXPECT_FALSE(db2.defined());
  ref_layer_norm_backward(dy, x, ops::ones({8}, {.dtype = DType::kFloat64}), 12, 8, &rdx, &rdw, &rdb);
  expect_near(values(dx2), rdx, 1e-10);
  auto [dx3, dw3, db3] = ops::native_layer_norm_backward(dy, x, {8}, mean, rstd, w, b, {false, false, true});
  EXPECT_FALSE(dx3.defined());
  EXPECT_EQ(values(db3), values(db));
}

TEST(LayerNormBackward, F32ParallelRowsAndMetaShapes) {
  // Enough rows for several threads: the column sums must not depend on them.
  const Tensor x = randn_t({512, 96}, 11, DType::kFloat32), dy = randn_t({512, 96}, 12, DType::kFloat32);
  const Tensor w = randn_t({96}, 13, DType::kFloat32);
  auto [y, mean, rstd] = ops::native_layer_norm(x, {96}, w, std::nullopt, 1e-5);
  auto [dx, dw, db] = ops::native_layer_norm_backward(dy, x, {96}, mean, rstd, w, std::nullopt, {true, true, false});
  std::vector<double> rdx, rdw, rdb;
  ref_layer_norm_backward(dy, x, w, 512, 96, &rdx, &rdw, &rdb);
  expect_near(values(dx), rdx, 1e-4);
  expect_near(values(dw), rdw, 1e-3);
  const Device meta = Device::parse("meta");
  auto [mx, mw, mb] = ops::native_layer_norm_backward(ops::to(dy, meta), ops::to(x, meta), {96}, ops::to(mean, meta),
                                                      ops::to(rstd, meta), ops::to(w, meta), std::nullopt,
                                                      {true, true, true});
  EXPECT_EQ(mx.sizes(), x.sizes());
  EXPECT_EQ(mw.sizes(), w.sizes());
  EXPECT_FALSE(mb.defined());  // no bias: nothing to give a gradient
}

TEST(LayerNormBackward, ChecksItsArguments) {
  const Tensor x = randn_t({2, 3}, 14);
  auto [y, mean, rstd] = ops::native_layer_norm(x, {3}, std::nullopt, std::nullopt, 1e-5);
  EXPECT_THAT([&] { ops::native_layer_norm_backward(randn_t({3, 2}, 1), x, {3}, mean, rstd, {}, {}, {true, true, true}); },
              ThrowsMessage<Error>(HasSubstr("aten::native_layer_norm_backward: Expected tensor for argument #1 "
                                             "'grad_out' to have same size as tensor for argument #2 'input'")));
  EXPECT_THAT([&] { ops::native_layer_norm_backward(x, x, {2}, mean, rstd, {}, {}, {true, true, true}); },
              ThrowsMessage<Error>(HasSubstr("Given normalized_shape=[2], expected input with shape [*, 2]")));
  EXPECT_THAT([&] { ops::native_layer_norm_backward(x, x, {3}, x, rstd, {}, {}, {true, true, true}); },
              ThrowsMessage<Error>(HasSubstr("expected mean to hold one floating value per normalised row (2)")));
}

TEST(DropoutBackward, ScalesByTheMaskAndKeepsNaN) {
  const Tensor g = ops::tensor({1, 2, kNaN, 4}, {4}, DType::kFloat32);
  const Tensor m = ops::tensor({1, 0, 0, 1}, {4}, DType::kBool);
  const std::vector<double> out = values(ops::native_dropout_backward(g, m, 2.0));
  EXPECT_EQ(out[0], 2.0);
  EXPECT_EQ(out[1], 0.0);
  EXPECT_TRUE(std::isnan(out[2]));  // NaN * 0 is NaN, as grad * mask * scale
  EXPECT_EQ(out[3], 8.0);
  EXPECT_THAT([&] { ops::native_dropout_backward(g, g, 2.0); },
              ThrowsMessage<Error>(HasSubstr("Mask should be Bool Scalar Type")));
}

// The CPU's is a TensorIterator op (grad decides the layout), and Meta answers
// as the CPU (2.x's meta takes grad's suggested format). Strides from torch 1.13.
TEST(DropoutBackward, LayoutsAsPyTorchs) {
  auto strides = [](const Tensor& t) { return std::vector<int64_t>(t.strides().begin(), t.strides().end()); };
  const Tensor gt = ops::t(ops::randn({4, 6}));
  const Tensor ones = ops::ones({6, 4}, {.dtype = DType::kBool});
  EXPECT_THAT(strides(ops::native_dropout_backward(gt, ones, 2.0)), ElementsAre(1, 6));
  const Tensor mt = ops::t(ops::ones({4, 6}, {.dtype = DType::kBool}));
  EXPECT_THAT(strides(ops::native_dropout_backward(ops::randn({6, 4}), mt, 2.0)), ElementsAre(4, 1));
  const Tensor gc = ops::contiguous(ops::randn({2, 3, 4, 5}), MemoryFormat::kChannelsLast);
  const Tensor mc = ops::ones({2, 3, 4, 5}, {.dtype = DType::kBool});
  EXPECT_THAT(strides(ops::native_dropout_backward(gc, mc, 2.0)), ElementsAre(60, 1, 15, 3));
  EXPECT_TRUE(ops::equal(ops::native_dropout_backward(gt, ones, 2.0), ops::mul(gt, 2.0)));
  const Tensor meta_gc = ops::empty_like(gc, {.device = kMeta});
  EXPECT_THAT(strides(ops::native_dropout_backward(meta_gc, ops::empty_like(mc, {.device = kMeta}), 2.0)),
              ElementsAre(60, 1, 15, 3));
  const Tensor meta_gt = ops::t(ops::empty({4, 6}, {.device = kMeta}));
  EXPECT_THAT(strides(ops::native_dropout_backward(meta_gt, ops::empty({6, 4}, {.dtype = DType::kBool, .device = kMeta}), 2.0)),
              ElementsAre(1, 6));
}

TEST(SliceSelectBackward, WriteTheGradientIntoZeros) {
  const Tensor g = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kFloat32);
  EXPECT_THAT(values(ops::slice_backward(g, {2, 5}, 1, 1, std::numeric_limits<int64_t>::max(), 2)),
              ElementsAre(0, 1, 0, 2, 0, 0, 3, 0, 4, 0));
  EXPECT_THAT(values(ops::select_backward(ops::tensor({7, 8}, {2}), {3, 2}, 0, -1)), ElementsAre(0, 0, 0, 0, 7, 8));
  EXPECT_THAT([&] { ops::slice_backward(g, {2, 5}, 1, 0, 5, 1); },
              ThrowsMessage<Error>(HasSubstr("aten::slice_backward: grad_output of shape [2, 2] does not match the "
                                             "slice [0:5:1] of dim 1 of input_sizes [2, 5], which has shape [2, 5]")));
  EXPECT_THAT([&] { ops::select_backward(g, {-1, 2}, 0, 0); },
              ThrowsMessage<Error>(HasSubstr("negative dimension")));
  const Tensor m = ops::slice_backward(ops::to(g, Device::parse("meta")), {4, 2}, 0, 0, 4, 2);
  EXPECT_EQ(m.sizes(), (SizeVec{4, 2}));
}

TEST(MaskedFill, FillsWhereTheMaskIsTrueBroadcastingIt) {
  Tensor t = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kInt32);
  const Tensor m = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  const uint64_t v0 = t.impl()->version();
  ops::masked_fill_(t, m, -7);
  EXPECT_THAT(values(t), ElementsAre(-7, 2, -7, -7, 5, -7));
  EXPECT_GT(t.impl()->version(), v0);
  Tensor f = ops::tensor({1.5, 2.5}, {2}, DType::kFloat16);
  ops::masked_fill_(f, ops::tensor({0, 1}, {2}, DType::kBool), 0.25);
  EXPECT_THAT(values(f), ElementsAre(1.5, 0.25));
  EXPECT_THAT([&] { ops::masked_fill_(t, ops::ones({3}), 0); },
              ThrowsMessage<Error>(HasSubstr("masked_fill_ only supports boolean masks, but got mask with dtype Float")));
  EXPECT_THAT([&] { ops::masked_fill_(t, m, 1e10); },
              ThrowsMessage<Error>(HasSubstr("value cannot be converted to type int32_t without overflow")));
  Tensor small = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  EXPECT_THAT([&] { ops::masked_fill_(small, ops::ones({2, 3}, {.dtype = DType::kBool}), true); },
              ThrowsMessage<Error>(HasSubstr("doesn't match the broadcast shape [2, 3]")));
}

TEST(MaskedFill, TheOutOfPlaceFormBroadcastsSelfWithTheMask) {
  const Tensor self = ops::tensor({1, 2, 3}, {3});
  const Tensor mask = ops::tensor({1, 0, 0, 0, 0, 1}, {2, 3}, DType::kBool);
  const Tensor out = ops::masked_fill(self, mask, -1);
  EXPECT_EQ(out.sizes(), (SizeVec{2, 3}));
  EXPECT_THAT(values(out), ElementsAre(-1, 2, 3, 1, 2, -1));
  EXPECT_THAT(values(self), ElementsAre(1, 2, 3));  // self is untouched
  EXPECT_EQ(ops::masked_fill(ops::to(self, Device::parse("meta")), ops::to(mask, Device::parse("meta")), 0).sizes(),
            (SizeVec{2, 3}));
  EXPECT_THAT([&] { ops::masked_fill(self, self, 0); },
              ThrowsMessage<Error>(HasSubstr("masked_fill only supports boolean masks, but got mask with dtype Float")));
}

TEST(ZeroFactories, NewZerosTakesSelfsDtypeAndEfficientZeroTensorIsZeros) {
  const Tensor self = ops::ones({2}, {.dtype = DType::kFloat64});
  const Tensor z = ops::new_zeros(self, {2, 3});
  EXPECT_EQ(z.dtype(), DType::kFloat64);
  EXPECT_THAT(values(z), ElementsAre(0, 0, 0, 0, 0, 0));
  EXPECT_EQ(ops::new_zeros(self, {4}, {.dtype = DType::kInt32}).dtype(), DType::kInt32);
  EXPECT_THAT([&] { ops::new_zeros(self, {-1}); }, ThrowsMessage<Error>(HasSubstr("negative dimension")));
  EXPECT_THAT(values(ops::_efficientzerotensor({3}, {.dtype = DType::kFloat32})), ElementsAre(0, 0, 0));
}

TEST(Sgn, IsMinusOneZeroOrOneAndZeroForNaNAndKeepsB8) {
  EXPECT_THAT(values(ops::sgn(ops::tensor({-2.5, -0.0, 0.0, 3, kNaN}, {5}))), ElementsAre(-1, 0, 0, 1, 0));
  EXPECT_THAT(values(ops::sgn(ops::tensor({-3, 0, 4}, {3}, DType::kInt64))), ElementsAre(-1, 0, 1));
  // PyTorch's sign of a b8 is itself (sign_kernel's Bool branch; sgn is sign for real tensors).
  const Tensor b = ops::sgn(ops::tensor({1, 0}, {2}, DType::kBool));
  EXPECT_EQ(b.dtype(), DType::kBool);
  EXPECT_THAT(values(b), ElementsAre(1, 0));
}

}  // namespace
}  // namespace opspec
