// Tests of mm, bmm, addmm, dot and mv (CPU and Meta).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "kernels/cpu/copy.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace blas_test {

using internal::make_tensor;
using internal::make_view;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();


Tensor random(IntArrayRef shape, DType dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(-1, 1);
  std::vector<double> v(static_cast<size_t>(compute_numel(shape)));
  for (double& x : v) x = dtype == DType::kInt64 || dtype == DType::kInt32 ? std::round(dist(gen) * 50) : dist(gen);
  return ops::tensor(v, shape, dtype);
}

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

// transposed: t.t() of a matrix (a view).
Tensor transposed(const Tensor& t) {
  return make_view(t, {t.sizes()[1], t.sizes()[0]}, {t.strides()[1], t.strides()[0]}, t.storage_offset());
}

// naive_mm: the triple loop in double on logical values.
std::vector<double> naive_mm(const Tensor& a, const Tensor& b) {
  const int64_t n = a.sizes()[0], k = a.sizes()[1], m = b.sizes()[1];
  const std::vector<double> av = values(a), bv = values(b);
  std::vector<double> c(static_cast<size_t>(n * m), 0);
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      double s = 0;
      for (int64_t kk = 0; kk < k; ++kk) s += av[i * k + kk] * bv[kk * m + j];
      c[i * m + j] = s;
    }
  }
  return c;
}

void expect_near(const std::vector<double>& got, const std::vector<double>& want, double atol) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], atol) << "at " << i;
}

TEST(MmTest, HandComputed) {
  const Tensor a = ops::tensor({1, 2, 3, 4}, {2, 2});
  const Tensor b = ops::tensor({5, 6, 7, 8}, {2, 2});
  const Tensor c = ops::mm(a, b);
  EXPECT_EQ(c.dtype(), DType::kFloat32);
  EXPECT_THAT(values(c), ElementsAre(19, 22, 43, 50));
  EXPECT_THAT(values(ops::mm(transposed(a), b)), ElementsAre(26, 30, 38, 44));
}

TEST(MmTest, RandomAgainstNaiveWithEveryLayout) {
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    const double tol = dt == DType::kFloat32 ? 1e-4 : 1e-12;
    const Tensor a = random({37, 53}, dt, 1);
    const Tensor b = random({53, 29}, dt, 2);
    SCOPED_TRACE(dtype_short_name(dt));
    expect_near(values(ops::mm(a, b)), naive_mm(a, b), tol);
    // Transposed operands (BLAS reads them with CblasTrans).
    const Tensor at = transposed(random({53, 37}, dt, 3));
    const Tensor bt = transposed(random({29, 53}, dt, 4));
    expect_near(values(ops::mm(at, bt)), naive_mm(at, bt), tol);
    expect_near(values(ops::mm(a, bt)), naive_mm(a, bt), tol);
    // Row/column slices with a leading dimension larger than the width.
    const Tensor big = random({60, 80}, dt, 5);
    const Tensor a_slice = make_view(big, {37, 53}, {80, 1}, 2 * 80 + 3);   // big[2:39, 3:56]
    const Tensor b_slice = make_view(big, {53, 29}, {80, 1}, 7);            // big[0:53, 7:36]
    expect_near(values(ops::mm(a_slice, b_slice)), naive_mm(a_slice, b_slice), tol);
    // Neither stride 1 (a stepped slice) and a zero stride (expanded): copied first.
    const Tensor stepped = make_view(big, {37, 29}, {80, 2}, 1);            // big[:37, 1::2][:, :29]
    const Tensor b2 = random({29, 11}, dt, 6);
    expect_near(values(ops::mm(stepped, b2)), naive_mm(stepped, b2), tol);
    const Tensor row = random({1, 11}, dt, 7);
    const Tensor expanded = make_view(row, {29, 11}, {0, 1}, 0);
    expect_near(values(ops::mm(stepped, expanded)), naive_mm(stepped, expanded), tol);
  }
}

// mm reads BLAS-readable 2-D operands in place; bmm on the same operands as
// batches of one goes through the batched path. Same gemm call, same bits.
TEST(MmTest, InPlaceGemmMatchesTheBatchedPathBitForBit) {
  auto as_batch = [](const Tensor& m) {
    return make_view(m, {1, m.sizes()[0], m.sizes()[1]}, {0, m.strides()[0], m.strides()[1]}, m.storage_offset());
  };
  for (DType dt : {DType::kFloat32, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(dt));
    const Tensor big = random({60, 80}, dt, 8);
    const std::vector<std::pair<Tensor, Tensor>> pairs = {
        {random({8, 8}, dt, 9), random({8, 8}, dt, 10)},
        {transposed(random({53, 37}, dt, 11)), random({53, 29}, dt, 12)},
        {make_view(big, {37, 53}, {80, 1}, 3), transposed(random({29, 53}, dt, 13))},
        {random({1, 5}, dt, 14), random({5, 1}, dt, 15)},
    };
    for (const auto& [a, b] : pairs) {
      EXPECT_EQ(values(ops::mm(a, b)), values(ops::bmm(as_batch(a), as_batch(b))));
    }
  }
}

// k_order_mm: each element summed in k order in float, one rounding per
// multiply and per add: the bits every machine must give for small products.
std::vector<float> k_order_mm(const Tensor& a, const Tensor& b) {
  const int64_t n = a.sizes()[0], k = a.sizes()[1], m = b.sizes()[1];
  const std::vector<float> av = ops::contiguous(a).to_vector<float>(), bv = ops::contiguous(b).to_vector<float>();
  std::vector<float> c(static_cast<size_t>(n * m));
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < m; ++j) {
      float s = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float p = av[i * k + kk] * bv[kk * m + j];
        s += p;
      }
      c[i * m + j] = s;
    }
  }
  return c;
}

TEST(MmTest, SmallProductsAreTheSameBitsOnEveryMachine) {
  // See Note [Small matrix products]: BLAS kernels differ by CPU model.
  const Tensor a = random({8, 48}, DType::kFloat32, 21), b = random({48, 10}, DType::kFloat32, 22);
  EXPECT_EQ(ops::mm(a, b).to_vector<float>(), k_order_mm(a, b));
  EXPECT_EQ(ops::mm(transposed(transposed(a)), transposed(ops::contiguous(transposed(b)))).to_vector<float>(),
            k_order_mm(a, b));
  EXPECT_EQ(ops::bmm(ops::unsqueeze(a, 0), ops::unsqueeze(b, 0)).to_vector<float>(), k_order_mm(a, b));
  const Tensor v = ops::slice(b, 1, 0, 1);  // [48, 1]
  EXPECT_EQ(ops::mv(a, ops::view(ops::contiguous(v), {48})).to_vector<float>(), k_order_mm(a, v));
  EXPECT_EQ(ops::dot(ops::select(a, 0, 3), ops::view(ops::contiguous(v), {48})).item<float>(),
            k_order_mm(ops::slice(a, 0, 3, 4), v)[0]);
  // Widths around the loop's eight fixed columns (the rest of a row takes the general loop).
  for (int64_t m : {1, 7, 8, 9, 16, 17, 31}) {
    const Tensor x = random({5, 12}, DType::kFloat32, 30 + static_cast<uint32_t>(m));
    const Tensor y = random({12, m}, DType::kFloat32, 60 + static_cast<uint32_t>(m));
    EXPECT_EQ(ops::mm(x, y).to_vector<float>(), k_order_mm(x, y)) << "m = " << m;
    EXPECT_EQ(ops::mm(x, transposed(ops::contiguous(transposed(y)))).to_vector<float>(), k_order_mm(x, y))
        << "m = " << m << ", B transposed";
  }
}

TEST(MmTest, ReducedPrecisionAndIntegers) {
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor a = random({9, 17}, dt, 8);
    const Tensor b = random({17, 5}, dt, 9);
    const Tensor c = ops::mm(a, transposed(transposed(b)));
    EXPECT_EQ(c.dtype(), dt);
    expect_near(values(c), naive_mm(a, b), dt == DType::kFloat16 ? 1e-2 : 5e-2);
  }
  for (DType dt : {DType::kInt64, DType::kInt32}) {
    const Tensor a = random({7, 13}, dt, 10);
    const Tensor b = transposed(random({6, 13}, dt, 11));
    const Tensor c = ops::mm(a, b);
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_EQ(values(c), naive_mm(a, b));  // exact
  }
}

TEST(MmTest, EmptyDims) {
  const Tensor z = ops::mm(make_tensor({3, 0}, DType::kFloat32, kCPU), make_tensor({0, 4}, DType::kFloat32, kCPU));
  EXPECT_THAT(z.sizes(), ElementsAre(3, 4));
  EXPECT_THAT(values(z), ::testing::Each(0.0));
  const Tensor zi = ops::mm(make_tensor({2, 0}, DType::kInt64, kCPU), make_tensor({0, 2}, DType::kInt64, kCPU));
  EXPECT_THAT(values(zi), ElementsAre(0, 0, 0, 0));
  EXPECT_THAT(ops::mm(make_tensor({0, 3}, DType::kFloat64, kCPU), random({3, 4}, DType::kFloat64, 1)).sizes(),
              ElementsAre(0, 4));
  EXPECT_THAT(ops::bmm(make_tensor({0, 2, 3}, DType::kFloat32, kCPU), make_tensor({0, 3, 4}, DType::kFloat32, kCPU))
                  .sizes(),
              ElementsAre(0, 2, 4));
}

TEST(BmmTest, RandomAgainstNaive) {
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kBFloat16, DType::kInt64}) {
    const Tensor a = random({3, 8, 6}, dt, 12);
    const Tensor braw = random({3, 5, 6}, dt, 13);
    const Tensor b = make_view(braw, {3, 6, 5}, {30, 1, 6}, 0);  // braw.transpose(1, 2)
    const Tensor c = ops::bmm(a, b);
    EXPECT_EQ(c.dtype(), dt);
    EXPECT_THAT(c.sizes(), ElementsAre(3, 8, 5));
    const std::vector<double> cv = values(c);
    for (int64_t i = 0; i < 3; ++i) {
      const Tensor ai = make_view(a, {8, 6}, {6, 1}, i * 48);
      const Tensor bi = make_view(braw, {6, 5}, {1, 6}, i * 30);
      const std::vector<double> want = naive_mm(ai, bi);
      const std::vector<double> got(cv.begin() + i * 40, cv.begin() + (i + 1) * 40);
      expect_near(got, want, dt == DType::kBFloat16 ? 5e-2 : 1e-5);
    }
  }
  // An expanded batch (stride 0).
  const Tensor one = random({1, 4, 3}, DType::kFloat32, 14);
  const Tensor ex = make_view(one, {2, 4, 3}, {0, 3, 1}, 0);
  const Tensor c = ops::bmm(ex, random({2, 3, 2}, DType::kFloat32, 15));
  EXPECT_THAT(c.sizes(), ElementsAre(2, 4, 2));
}

TEST(AddmmTest, BroadcastBiasAlphaBeta) {
  const Tensor m1 = random({4, 6}, DType::kFloat64, 16);
  const Tensor m2 = random({6, 3}, DType::kFloat64, 17);
  const std::vector<double> prod = naive_mm(m1, m2);
  const Tensor bias_row = ops::tensor({1, 2, 3}, {3}, DType::kFloat64);
  const Tensor bias_col = ops::tensor({10, 20, 30, 40}, {4, 1}, DType::kFloat64);
  const Tensor full = random({4, 3}, DType::kFloat64, 18);
  const std::vector<double> fv = values(full);
  std::vector<double> want_row(12), want_col(12), want_full(12);
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 3; ++j) {
      want_row[i * 3 + j] = 0.5 * (j + 1) + 2 * prod[i * 3 + j];
      want_col[i * 3 + j] = 10 * (i + 1) + prod[i * 3 + j];
      want_full[i * 3 + j] = fv[i * 3 + j] + prod[i * 3 + j];
    }
  }
  expect_near(values(ops::addmm(bias_row, m1, m2, 0.5, 2)), want_row, 1e-12);
  expect_near(values(ops::addmm(bias_col, m1, m2)), want_col, 1e-12);
  expect_near(values(ops::addmm(full, m1, m2)), want_full, 1e-12);
  expect_near(values(ops::addmm(transposed(transposed(full)), transposed(transposed(m1)), m2)), want_full, 1e-12);
  // A 0-dim self broadcasts too.
  const Tensor c = ops::addmm(ops::tensor({1}, {}, DType::kFloat64), m1, m2);
  EXPECT_NEAR(values(c)[5], 1 + prod[5], 1e-12);
  // beta = 0 ignores NaN in self.
  const Tensor nan_self = ops::tensor(std::vector<double>(12, kNaN), {4, 3}, DType::kFloat64);
  expect_near(values(ops::addmm(nan_self, m1, m2, 0, 1)), prod, 1e-12);
  // k = 0: only beta * self remains.
  const Tensor e = ops::addmm(bias_row, make_tensor({2, 0}, DType::kFloat64, kCPU),
                              make_tensor({0, 3}, DType::kFloat64, kCPU), 2, 1);
  EXPECT_THAT(values(e), ElementsAre(2, 4, 6, 2, 4, 6));
  // f16 and integers.
  const Tensor h = ops::addmm(ops::tensor({1, 1}, {2}, DType::kFloat16), ops::tensor({1, 2}, {1, 2}, DType::kFloat16),
                              ops::tensor({3, 4, 5, 6}, {2, 2}, DType::kFloat16));
  EXPECT_THAT(values(h), ElementsAre(14, 17));
  const Tensor i = ops::addmm(ops::tensor({1, 1}, {2}, DType::kInt32), ops::tensor({1, 2}, {1, 2}, DType::kInt32),
                              ops::tensor({3, 4, 5, 6}, {2, 2}, DType::kInt32), 2, 3);
  EXPECT_EQ(i.dtype(), DType::kInt32);
  EXPECT_THAT(values(i), ElementsAre(41, 50));
}

TEST(DotMvTest, Values) {
  const Tensor x = ops::tensor({1, 2, 3}, {3});
  const Tensor y = ops::tensor({4, 5, 6}, {3});
  const Tensor d = ops::dot(x, y);
  EXPECT_EQ(d.dim(), 0);
  EXPECT_EQ(d.item<double>(), 32);
  // A strided vector (every other element) and an expanded one.
  const Tensor big = ops::tensor({1, 0, 2, 0, 3, 0}, {6}, DType::kFloat64);
  const Tensor stepped = make_view(big, {3}, {2}, 0);
  EXPECT_EQ(ops::dot(stepped, ops::tensor({1, 1, 1}, {3}, DType::kFloat64)).item<double>(), 6);
  EXPECT_EQ(ops::dot(stepped, make_view(ops::tensor({2}, {1}, DType::kFloat64), {3}, {0}, 0)).item<double>(), 12);
  EXPECT_EQ(ops::dot(ops::tensor({1, 2}, {2}, DType::kInt64), ops::tensor({3, 4}, {2}, DType::kInt64)).item<int64_t>(), 11);
  EXPECT_EQ(ops::dot(ops::tensor({1, 2}, {2}, DType::kBFloat16), ops::tensor({3, 4}, {2}, DType::kBFloat16)).item<double>(), 11);
  EXPECT_EQ(ops::dot(make_tensor({0}, DType::kFloat32, kCPU), make_tensor({0}, DType::kFloat32, kCPU)).item<double>(),
            0);

  const Tensor a = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  EXPECT_THAT(values(ops::mv(a, x)), ElementsAre(14, 32));
  EXPECT_THAT(values(ops::mv(transposed(a), ops::tensor({1, 1}, {2}))), ElementsAre(5, 7, 9));
  const Tensor stepped_f = make_view(ops::tensor({1, 0, 2, 0, 3, 0}, {6}), {3}, {2}, 0);
  EXPECT_THAT(values(ops::mv(a, stepped_f)), ElementsAre(14, 32));
  const Tensor ai = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kInt32);
  EXPECT_THAT(values(ops::mv(ai, ops::tensor({1, 1, 1}, {3}, DType::kInt32))), ElementsAre(6, 15));
  EXPECT_THAT(values(ops::mv(make_tensor({2, 0}, DType::kFloat32, kCPU), make_tensor({0}, DType::kFloat32, kCPU))),
              ElementsAre(0, 0));
  const Tensor m = random({40, 30}, DType::kFloat64, 19);
  const Tensor v = random({30, 1}, DType::kFloat64, 20);
  expect_near(values(ops::mv(m, make_view(v, {30}, {1}, 0))), naive_mm(m, v), 1e-12);
}

TEST(MatmulErrorsTest, Messages) {
  const Tensor a = make_tensor({2, 4}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { ops::mm(a, make_tensor({5, 3}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: mat1 and mat2 shapes cannot be multiplied (2x4 and 5x3)")));
  EXPECT_THAT([&] { ops::mm(make_tensor({2, 3, 4}, DType::kFloat32, kCPU), a); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: self must be a matrix, got a 3-D tensor of shape [2, 3, 4]")));
  EXPECT_THAT([&] { ops::mm(a, make_tensor({4}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: mat2 must be a matrix, got a 1-D tensor of shape [4]")));
  EXPECT_THAT([&] { ops::mm(a, make_tensor({4, 3}, DType::kFloat64, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::mm: expected self and mat2 to have the same dtype, but got f32 != f64")));
  EXPECT_THAT([&] { ops::mm(a, make_tensor({4, 3}, DType::kFloat32, kMeta)); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
  EXPECT_THAT([&] { ops::mm(make_tensor({2, 2}, DType::kBool, kCPU), make_tensor({2, 2}, DType::kBool, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Bool'")));
  EXPECT_THAT([&] { ops::bmm(a, a); },
              ThrowsMessage<Error>(HasSubstr("aten::bmm: self must be a 3-D tensor, got a 2-D tensor of shape [2, 4]")));
  EXPECT_THAT([&] { ops::bmm(make_tensor({2, 3, 4}, DType::kFloat32, kCPU), make_tensor({3, 4, 5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::bmm: mat2 has shape [3, 4, 5]; expected batch size 2")));
  EXPECT_THAT([&] { ops::bmm(make_tensor({2, 3, 4}, DType::kFloat32, kCPU), make_tensor({2, 5, 5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::bmm: mat2 has shape [2, 5, 5]; expected 4 rows to match self [2, 3, 4]")));
  EXPECT_THAT([&] { ops::addmm(make_tensor({3}, DType::kFloat32, kCPU), a, make_tensor({4, 5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::addmm: self has shape [3]; expected it to broadcast to [2, 5]")));
  EXPECT_THAT([&] { ops::addmm(make_tensor({5}, DType::kFloat64, kCPU), a, make_tensor({4, 5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::addmm: expected self and mat1 to have the same dtype")));
  EXPECT_THAT([&] { ops::addmm(make_tensor({5}, DType::kFloat32, kCPU), a, make_tensor({3, 5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::addmm: mat1 and mat2 shapes cannot be multiplied (2x4 and 3x5)")));
  EXPECT_THAT([&] { ops::addmm(ops::tensor({1}, {1}, DType::kInt64), ops::tensor({1}, {1, 1}, DType::kInt64),
                               ops::tensor({1}, {1, 1}, DType::kInt64), 0.5, 1); },
              ThrowsMessage<Error>(HasSubstr("argument beta must not be a floating point number")));
  EXPECT_THAT([&] { ops::dot(a, a); },
              ThrowsMessage<Error>(HasSubstr("aten::dot: self must be a 1-D tensor, got a 2-D tensor of shape [2, 4]")));
  EXPECT_THAT([&] { ops::dot(make_tensor({3}, DType::kFloat32, kCPU), make_tensor({4}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::dot: tensor has shape [4]; expected 3 elements to match self [3]")));
  EXPECT_THAT([&] { ops::mv(make_tensor({3}, DType::kFloat32, kCPU), make_tensor({3}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::mv: self must be a matrix, got a 1-D tensor of shape [3]")));
  EXPECT_THAT([&] { ops::mv(a, a); },
              ThrowsMessage<Error>(HasSubstr("aten::mv: vec must be a 1-D tensor, got a 2-D tensor of shape [2, 4]")));
  EXPECT_THAT([&] { ops::mv(a, make_tensor({5}, DType::kFloat32, kCPU)); },
              ThrowsMessage<Error>(HasSubstr("aten::mv: vec has shape [5]; expected 4 elements to match self [2, 4]")));
}

TEST(MatmulMetaTest, ShapesAndDtypes) {
  const Tensor a = make_tensor({2, 4}, DType::kBFloat16, kMeta);
  const Tensor b = make_tensor({4, 7}, DType::kBFloat16, kMeta);
  const Tensor c = ops::mm(a, b);
  EXPECT_TRUE(c.device().is_meta());
  EXPECT_THAT(c.sizes(), ElementsAre(2, 7));
  EXPECT_EQ(c.dtype(), DType::kBFloat16);
  EXPECT_THAT(ops::bmm(make_tensor({3, 2, 4}, DType::kFloat32, kMeta), make_tensor({3, 4, 5}, DType::kFloat32, kMeta))
                  .sizes(),
              ElementsAre(3, 2, 5));
  EXPECT_THAT(ops::addmm(make_tensor({7}, DType::kBFloat16, kMeta), a, b).sizes(), ElementsAre(2, 7));
  EXPECT_EQ(ops::dot(make_tensor({3}, DType::kInt64, kMeta), make_tensor({3}, DType::kInt64, kMeta)).dim(), 0);
  EXPECT_THAT(ops::mv(a, make_tensor({4}, DType::kBFloat16, kMeta)).sizes(), ElementsAre(2));
  EXPECT_THAT([&] { ops::mm(a, a); }, ThrowsMessage<Error>(HasSubstr("shapes cannot be multiplied (2x4 and 2x4)")));
}

}  // namespace
}  // namespace opspec
