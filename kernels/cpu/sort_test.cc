// Tests of prod, max/min (full and .dim), cumsum/cumprod, sort (and .stable)
// and topk (CPU and Meta) against hand-computed values, their errors, and
// their derivatives' values and backward op sequences (PyTorch 2.x's).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "runtime/autograd/autograd_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace sort_test {

using ::opspec::autograd_test::backward_ops;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const double kNaN = std::nan("");

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }
std::vector<int64_t> ints(const Tensor& t) { return t.to_vector<int64_t>(); }

// same: elementwise equality that treats NaN as equal to NaN.
::testing::AssertionResult same(const std::vector<double>& got, const std::vector<double>& want) {
  if (got.size() != want.size()) return ::testing::AssertionFailure() << "sizes differ";
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]) ? !std::isnan(got[i]) : got[i] != want[i]) {
      return ::testing::AssertionFailure() << "element " << i << ": " << got[i] << " vs " << want[i];
    }
  }
  return ::testing::AssertionSuccess();
}

TEST(SortTest, Prod) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kFloat64);
  EXPECT_DOUBLE_EQ(ops::prod(x).item<double>(), 720);
  EXPECT_THAT(values(ops::prod(x, 1)), ElementsAre(6, 120));
  EXPECT_THAT(values(ops::prod(x, -2)), ElementsAre(4, 10, 18));
  EXPECT_THAT(ops::prod(x, 1, true).sizes(), ElementsAre(2, 1));
  // Integers and bools give i64 (as sum); dtype= converts first.
  const Tensor i = ops::prod(ops::tensor({2, 3, 7}, {3}, DType::kInt32));
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_EQ(i.item<int64_t>(), 42);
  EXPECT_EQ(ops::prod(ops::tensor({1, 1, 0}, {3}, DType::kBool), 0).dtype(), DType::kInt64);
  EXPECT_EQ(ops::prod(ops::tensor({1, 1, 0}, {3}, DType::kBool), 0).item<int64_t>(), 0);
  const Tensor h = ops::prod(ops::tensor({2, 3}, {2}, DType::kInt64), DType::kFloat16);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  EXPECT_EQ(h.item<double>(), 6);
  EXPECT_EQ(ops::prod(ops::tensor({1.5, 2.5}, {2}), DType::kInt64).item<int64_t>(), 2);  // 1 * 2
  // Empty products are 1; NaN propagates; 0-D keeps its value.
  EXPECT_EQ(ops::prod(ops::empty({0})).item<double>(), 1);
  EXPECT_THAT(values(ops::prod(ops::empty({2, 0}), 1)), ElementsAre(1, 1));
  EXPECT_TRUE(std::isnan(ops::prod(ops::tensor({2, kNaN}, {2})).item<double>()));
  EXPECT_EQ(ops::prod(ops::full({}, 5.0), 0).item<double>(), 5);
  // A non-contiguous input reads its logical order.
  EXPECT_THAT(values(ops::prod(ops::t(x), 1)), ElementsAre(4, 10, 18));
  EXPECT_THAT([&] { ops::prod(x, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

TEST(SortTest, MaxMinDim) {
  const Tensor x = ops::tensor({1, kNaN, 3, 2, 2, 0}, {2, 3});
  auto [v, i] = ops::max(x, 1);
  EXPECT_TRUE(same(values(v), {kNaN, 2}));  // NaN wins; the first of tied maxima
  EXPECT_THAT(ints(i), ElementsAre(1, 0));
  auto [mv, mi] = ops::min(x, 1);
  EXPECT_TRUE(same(values(mv), {kNaN, 0}));
  EXPECT_THAT(ints(mi), ElementsAre(1, 2));
  auto [cv, ci] = ops::max(x, 0, true);
  EXPECT_THAT(cv.sizes(), ElementsAre(1, 3));
  EXPECT_TRUE(same(values(cv), {2, kNaN, 3}));
  EXPECT_THAT(ints(ci), ElementsAre(1, 0, 0));
  EXPECT_EQ(ci.dtype(), DType::kInt64);
  // Ties keep the first index; bools and integers are allowed.
  EXPECT_THAT(ints(std::get<1>(ops::max(ops::tensor({1, 3, 3, 1}, {4}), 0))), ElementsAre(1));
  EXPECT_THAT(ints(std::get<1>(ops::min(ops::tensor({1, 3, 3, 1}, {4}), 0))), ElementsAre(0));
  auto [bv, bi] = ops::max(ops::tensor({0, 1, 1}, {3}, DType::kBool), 0);
  EXPECT_EQ(bv.dtype(), DType::kBool);
  EXPECT_TRUE(bv.item<bool>());
  EXPECT_EQ(bi.item<int64_t>(), 1);
  EXPECT_EQ(std::get<0>(ops::min(ops::tensor({5, -7, 2}, {3}, DType::kInt32), 0)).item<int64_t>(), -7);
  // 0-D takes dim 0 and -1; an empty kept dim is fine, an empty reduced dim is an error.
  auto [zv, zi] = ops::max(ops::full({}, 3.0), -1);
  EXPECT_EQ(zv.item<double>(), 3);
  EXPECT_EQ(zi.item<int64_t>(), 0);
  EXPECT_THAT(std::get<0>(ops::max(ops::empty({0, 2}), 1)).sizes(), ElementsAre(0));
  EXPECT_THAT([&] { ops::max(ops::empty({2, 0}), 1); },
              ThrowsMessage<Error>(HasSubstr("max(): Expected reduction dim 1 to have non-zero size.")));
  EXPECT_THAT([&] { ops::min(x, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
  // Meta: sizes and dtypes only.
  auto [meta_v, meta_i] = ops::max(ops::empty({2, 5}, {.device = kMeta}), 1);
  EXPECT_THAT(meta_v.sizes(), ElementsAre(2));
  EXPECT_EQ(meta_i.dtype(), DType::kInt64);
}

TEST(SortTest, MaxMinAll) {
  const Tensor x = ops::tensor({1, 5, -2, 4}, {2, 2});
  EXPECT_EQ(ops::max(x).item<double>(), 5);
  EXPECT_EQ(ops::min(x).item<double>(), -2);
  EXPECT_THAT(ops::max(x).sizes(), ElementsAre());
  EXPECT_TRUE(std::isnan(ops::max(ops::tensor({1, kNaN, 9}, {3})).item<double>()));
  EXPECT_TRUE(std::isnan(ops::min(ops::tensor({1, kNaN, -9}, {3})).item<double>()));
  EXPECT_FALSE(ops::min(ops::tensor({1, 0}, {2}, DType::kBool)).item<bool>());
  EXPECT_EQ(ops::max(ops::tensor({3, 9}, {2}, DType::kInt64)).dtype(), DType::kInt64);
  EXPECT_THAT([&] { ops::max(ops::empty({0})); },
              ThrowsMessage<Error>(HasSubstr("max(): Expected reduction dim to be specified for input.numel() == 0.")));
  EXPECT_THAT([&] { ops::min(ops::empty({0}, {.device = kMeta})); },
              ThrowsMessage<Error>(HasSubstr("min(): Expected reduction dim to be specified")));
}

TEST(SortTest, CumsumAndCumprod) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kFloat64);
  EXPECT_THAT(values(ops::cumsum(x, 1)), ElementsAre(1, 3, 6, 4, 9, 15));
  EXPECT_THAT(values(ops::cumsum(x, 0)), ElementsAre(1, 2, 3, 5, 7, 9));
  EXPECT_THAT(values(ops::cumsum(ops::t(x), -1)), ElementsAre(1, 5, 2, 7, 3, 9));
  EXPECT_THAT(values(ops::cumprod(x, 1)), ElementsAre(1, 2, 6, 4, 20, 120));
  const Tensor i = ops::cumsum(ops::tensor({1, 2, 3}, {3}, DType::kInt32), 0);
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(ints(i), ElementsAre(1, 3, 6));
  EXPECT_THAT(ints(ops::cumsum(ops::tensor({1, 1, 0, 1}, {4}, DType::kBool), 0)), ElementsAre(1, 2, 2, 3));
  EXPECT_THAT(ints(ops::cumprod(ops::tensor({1, 2, 3}, {3}, DType::kInt32), 0)), ElementsAre(1, 2, 6));
  // dtype= converts before summing: 1.5, 2.5 -> 1, 2.
  EXPECT_THAT(ints(ops::cumsum(ops::tensor({1.5, 2.5}, {2}), 0, DType::kInt64)), ElementsAre(1, 3));
  EXPECT_TRUE(same(values(ops::cumsum(ops::tensor({1, kNaN, 2}, {3}), 0)), {1, kNaN, kNaN}));
  EXPECT_EQ(ops::cumsum(ops::full({}, 2.0), 0).item<double>(), 2);
  EXPECT_THAT(ops::cumsum(ops::empty({2, 0}), 1).sizes(), ElementsAre(2, 0));
  EXPECT_EQ(ops::cumsum(ops::empty({4}, {.dtype = DType::kInt32, .device = kMeta}), 0).dtype(), DType::kInt64);
  EXPECT_THAT([&] { ops::cumsum(x, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

TEST(SortTest, ResultsTakeTheInputsLayout) {
  // PyTorch 2.x's sort.stable meta (and python3-torch 1.13): a dense self's
  // strides, else dense strides in self's dim order (See Note [Memory formats]).
  const Tensor x = ops::t(ops::tensor({3, 1, 2, 9, 8, 7, 0, 5, 4, 6, 11, 10}, {3, 4}));
  const Tensor empty_x = ops::t(ops::empty({3, 4}, {.device = kMeta}));
  for (const Tensor& in : {x, empty_x}) {
    auto [v, i] = ops::sort(in, 1);
    EXPECT_THAT(v.strides(), ElementsAre(1, 4)) << in.meta_str();
    EXPECT_THAT(i.strides(), ElementsAre(1, 4)) << in.meta_str();
  }
  auto [v, i] = ops::sort(x, 1);
  auto [vc, ic] = ops::sort(ops::contiguous(x), 1);
  EXPECT_EQ(values(v), values(vc));
  EXPECT_EQ(ints(i), ints(ic));
  const Tensor sliced = ops::slice(ops::randn({4, 6}), 1, 0, 6, 2);  // strides [6, 2]: not dense
  EXPECT_THAT(std::get<0>(ops::sort(sliced, 0)).strides(), ElementsAre(3, 1));
}

TEST(SortTest, SortOrdersNaNLargestAndIsStable) {
  const Tensor x = ops::tensor({3, kNaN, 1, kNaN, 2}, {5});
  auto [v, i] = ops::sort(x);
  EXPECT_TRUE(same(values(v), {1, 2, 3, kNaN, kNaN}));
  EXPECT_THAT(ints(i), ElementsAre(2, 4, 0, 1, 3));
  auto [dv, di] = ops::sort(x, -1, /*descending=*/true);
  EXPECT_TRUE(same(values(dv), {kNaN, kNaN, 3, 2, 1}));
  EXPECT_THAT(ints(di), ElementsAre(1, 3, 0, 4, 2));
  // Ties keep their input order, ascending and descending.
  const Tensor t = ops::tensor({1, 0, 1, 0, 1}, {5}, DType::kInt64);
  auto [sv, si] = ops::sort(t, /*stable=*/true, 0, /*descending=*/true);
  EXPECT_THAT(ints(sv), ElementsAre(1, 1, 1, 0, 0));
  EXPECT_THAT(ints(si), ElementsAre(0, 2, 4, 1, 3));
  EXPECT_THAT(ints(std::get<1>(ops::sort(t, std::optional<bool>(true)))), ElementsAre(1, 3, 0, 2, 4));
  auto [bv, bi] = ops::sort(ops::tensor({1, 0, 1}, {3}, DType::kBool));
  EXPECT_THAT(values(bv), ElementsAre(0, 1, 1));
  EXPECT_THAT(ints(bi), ElementsAre(1, 0, 2));
  // Along a non-innermost dim.
  const Tensor m = ops::tensor({3, 1, 1, 2, 2, 0}, {3, 2});
  auto [mv, mi] = ops::sort(m, 0);
  EXPECT_THAT(values(mv), ElementsAre(1, 0, 2, 1, 3, 2));
  EXPECT_THAT(ints(mi), ElementsAre(1, 2, 2, 0, 0, 1));
  EXPECT_EQ(std::get<0>(ops::sort(ops::full({}, 4.0))).item<double>(), 4);
  EXPECT_THAT(std::get<1>(ops::sort(ops::empty({2, 0}))).sizes(), ElementsAre(2, 0));
  EXPECT_EQ(std::get<1>(ops::sort(ops::empty({3, 4}, {.device = kMeta}))).dtype(), DType::kInt64);
  EXPECT_THAT([&] { ops::sort(m, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

TEST(SortTest, Topk) {
  const Tensor x = ops::tensor({1, 5, kNaN, 3, 5}, {5});
  auto [v, i] = ops::topk(x, 3);
  EXPECT_TRUE(same(values(v), {kNaN, 5, 5}));
  EXPECT_THAT(ints(i), ElementsAre(2, 1, 4));
  auto [sv, si] = ops::topk(x, 2, -1, /*largest=*/false);
  EXPECT_THAT(values(sv), ElementsAre(1, 3));
  EXPECT_THAT(ints(si), ElementsAre(0, 3));
  const Tensor m = ops::tensor({3, 1, 1, 2, 2, 0}, {3, 2});
  auto [mv, mi] = ops::topk(m, 1, 0);
  EXPECT_THAT(mv.sizes(), ElementsAre(1, 2));
  EXPECT_THAT(values(mv), ElementsAre(3, 2));
  EXPECT_THAT(ints(mi), ElementsAre(0, 1));
  EXPECT_THAT(std::get<0>(ops::topk(m, 0)).sizes(), ElementsAre(3, 0));
  EXPECT_EQ(std::get<0>(ops::topk(ops::full({}, 3.0), 1)).item<double>(), 3);
  EXPECT_EQ(std::get<0>(ops::topk(ops::full({}, 3.0), 0)).item<double>(), 3);  // 0-D: itself whatever k
  EXPECT_THAT(std::get<0>(ops::topk(ops::empty({4, 6}, {.device = kMeta}), 2)).sizes(), ElementsAre(4, 2));
  EXPECT_THAT([&] { ops::topk(x, 6); }, ThrowsMessage<Error>(HasSubstr("selected index k out of range")));
  EXPECT_THAT([&] { ops::topk(x, -1); }, ThrowsMessage<Error>(HasSubstr("selected index k out of range")));
  EXPECT_THAT([&] { ops::topk(ops::full({}, 3.0), 2); },
              ThrowsMessage<Error>(HasSubstr("selected index k out of range")));
  EXPECT_THAT([&] { ops::topk(ops::tensor({1, 0}, {2}, DType::kBool), 1); },
              ThrowsMessage<Error>(HasSubstr("\"topk_cpu\" not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::topk(m, 1, 2); },
              ThrowsMessage<Error>(HasSubstr("Dimension out of range (expected to be in range of [-2, 1], but got 2)")));
}

// ---- Derivatives: values as PyTorch's, and the ops PyTorch 2.x's backward
// dispatches under a dispatch mode (its subclass-like paths). ----

Tensor leaf_of(std::vector<double> v, IntArrayRef shape) {
  Tensor t = ops::tensor(std::move(v), shape, DType::kFloat64);
  t.requires_grad_();
  return t;
}

TEST(SortTest, MaxMinGradients) {
  Tensor x = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  EXPECT_THAT(backward_ops(ops::sum(std::get<0>(ops::max(x, 1)))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::unsqueeze", "aten::unsqueeze", "aten::zeros",
                          "aten::scatter.src"));
  EXPECT_THAT(values(x.grad()), ElementsAre(0, 1, 0, 1, 0, 0));  // the first of tied maxima
  Tensor y = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  EXPECT_THAT(backward_ops(ops::max(y)),
              ElementsAre("aten::ones_like", "aten::isnan", "aten::isnan", "aten::logical_and", "aten::eq.Tensor",
                          "aten::logical_or_", "aten::sum", "aten::div.Tensor", "aten::mul.Tensor"));
  EXPECT_THAT(values(y.grad()), ElementsAre(0, 0, 0, 0.5, 0, 0.5));  // split between ties
  // Without a mode PyTorch's CPU branch runs (masked_fill_); the values agree.
  Tensor z = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::min(z).backward();
  EXPECT_THAT(values(z.grad()), ElementsAre(0, 0, 0, 0, 1, 0));
  Tensor w = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::sum(std::get<0>(ops::min(w, 0, true))).backward();
  EXPECT_THAT(values(w.grad()), ElementsAre(1, 0, 1, 0, 1, 0));  // column minima 1, 0.5, 2
}

TEST(SortTest, SortAndTopkGradients) {
  Tensor x = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  const Tensor w = ops::tensor({0, 1, 2}, {3}, DType::kFloat64);
  EXPECT_THAT(backward_ops(ops::sum(ops::mul(std::get<0>(ops::sort(x, 1)), w))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::zeros", "aten::scatter.src"));
  EXPECT_THAT(values(x.grad()), ElementsAre(0, 2, 1, 1, 0, 2));
  Tensor y = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::sum(ops::mul(std::get<0>(ops::topk(y, 2)), ops::tensor({1, 10}, {2}, DType::kFloat64))).backward();
  EXPECT_THAT(values(y.grad()), ElementsAre(0, 1, 10, 1, 0, 10));
  Tensor s = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::sum(std::get<0>(ops::sort(s, std::optional<bool>(true), 0))).backward();
  EXPECT_THAT(values(s.grad()), ElementsAre(1, 1, 1, 1, 1, 1));
}

TEST(SortTest, CumsumGradient) {
  Tensor x = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  const Tensor w = ops::tensor({1, 10, 100}, {3}, DType::kFloat64);
  EXPECT_THAT(backward_ops(ops::sum(ops::mul(ops::cumsum(x, 1), w))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::flip", "aten::cumsum",
                          "aten::flip"));
  EXPECT_THAT(values(x.grad()), ElementsAre(111, 110, 100, 111, 110, 100));
}

TEST(SortTest, CumprodGradient) {
  // Under a mode: the omitted products, one slice at a time, then stack.
  Tensor x = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  EXPECT_THAT(backward_ops(ops::sum(ops::cumprod(x, 1))),
              ElementsAre("aten::ones_like", "aten::expand", "aten::mul.Tensor", "aten::eq.Scalar", "aten::ones",
                          "aten::expand", "aten::slice.Tensor", "aten::cumprod", "aten::cat", "aten::slice.Tensor",
                          "aten::mul.Tensor", "aten::sum.dim_IntList", "aten::slice.Tensor", "aten::prod.dim_int",
                          "aten::slice.Tensor", "aten::cumprod", "aten::expand", "aten::mul.Tensor", "aten::cat",
                          "aten::slice.Tensor", "aten::mul.Tensor", "aten::sum.dim_IntList", "aten::slice.Tensor",
                          "aten::prod.dim_int", "aten::slice.Tensor", "aten::mul.Tensor", "aten::sum.dim_IntList",
                          "aten::stack"));
  EXPECT_THAT(values(x.grad()), ElementsAre(10, 3, 3, 3.5, 20, 2));
  // Without a mode: reversed cumsum of y * grad over x, or the slices around zeros.
  Tensor y = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::sum(ops::mul(ops::cumprod(y, 1), ops::tensor({1, 10, 100}, {3}, DType::kFloat64))).backward();
  EXPECT_THAT(values(y.grad()), ElementsAre(631, 210, 300, 206, 1640, 200));
  Tensor z = leaf_of({1, 0, 2, 0, 3, 0}, {2, 3});
  ops::sum(ops::cumprod(z, 1)).backward();
  EXPECT_THAT(values(z.grad()), ElementsAre(1, 3, 0, 4, 0, 0));
}

TEST(SortTest, ProdGradients) {
  // Under a mode PyTorch takes the safe (exclusive cumprod) path.
  Tensor x = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  EXPECT_THAT(backward_ops(ops::prod(x)),
              ElementsAre("aten::ones_like", "aten::view", "aten::ones", "aten::slice.Tensor", "aten::cat",
                          "aten::cumprod", "aten::slice.Tensor", "aten::flip", "aten::cat", "aten::cumprod",
                          "aten::flip", "aten::mul.Tensor", "aten::mul.Tensor", "aten::view"));
  EXPECT_THAT(values(x.grad()), ElementsAre(48, 16, 24, 12, 96, 12));
  // Without a mode: result / input, or the safe path around zeros.
  Tensor z = leaf_of({1, 0, 2, 3, 4, 5}, {2, 3});
  ops::prod(z).backward();
  EXPECT_THAT(values(z.grad()), ElementsAre(0, 120, 0, 0, 0, 0));
  Tensor d = leaf_of({1, 0, 2, 3, 4, 5}, {2, 3});
  ops::sum(ops::prod(d, 1)).backward();
  EXPECT_THAT(values(d.grad()), ElementsAre(0, 2, 0, 20, 15, 12));
  Tensor n = leaf_of({1, 3, 2, 4, 0.5, 4}, {2, 3});
  ops::sum(ops::prod(n, 1)).backward();
  EXPECT_THAT(values(n.grad()), ElementsAre(6, 2, 3, 2, 16, 2));
  // Two zeros without grad mode: all-zero gradients.
  Tensor two = leaf_of({0, 0, 2}, {3});
  ops::prod(two).backward();
  EXPECT_THAT(values(two.grad()), ElementsAre(0, 0, 0));
}

TEST(SortTest, ProdAndCumprodDoubleBackward) {
  // create_graph keeps grad mode on: prod's safe path around the zero and
  // cumprod's slice path are differentiated again (values from PyTorch 1.13).
  Tensor x = leaf_of({1, 0, 2, 3}, {4});
  const std::vector<Tensor> g = autograd::grad({ops::prod(x)}, {x}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_THAT(values(g[0]), ElementsAre(0, 6, 0, 0));
  EXPECT_THAT(values(autograd::grad({ops::sum(g[0])}, {x})[0]), ElementsAre(6, 11, 3, 2));
  Tensor y = leaf_of({1, 0, 2, 3, 1, 2}, {2, 3});
  const std::vector<Tensor> h =
      autograd::grad({ops::sum(ops::cumprod(y, 1))}, {y}, {}, std::nullopt, /*create_graph=*/true);
  EXPECT_THAT(values(h[0]), ElementsAre(1, 3, 0, 4, 9, 3));
  EXPECT_THAT(values(autograd::grad({ops::sum(h[0])}, {y})[0]), ElementsAre(3, 4, 1, 4, 6, 4));
}

}  // namespace
}  // namespace opspec
