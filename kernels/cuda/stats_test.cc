// The statistics and mse_loss CUDA kernels (stats.cc, stats.cu) against the
// CPU kernels (skipped without a GPU): var/std/var_mean are the CPU's bits
// for rows one thread reduces (See Note [CUDA statistics] in stats.cu) and
// agree to rounding for longer ones; logsumexp agrees to rounding (CUDA's exp
// and log); any/all, mse_loss with reduction none and mse_loss_backward are
// exact; the reduced mse_loss agrees to rounding (reduce.cu's order); the
// CPU's error texts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_stats_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using testing::expect_close;
using testing::expect_same;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};
// kThreadRowLen: the longest row stats.cu reduces with one thread (the CPU's order).
constexpr int64_t kThreadRowLen = 64;

Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

// reduced_len: the elements feeding each output of a reduction of t over dims (every dim when empty).
int64_t reduced_len(const Tensor& t, const std::vector<int64_t>& dims) {
  if (dims.empty()) return t.numel();
  int64_t n = 1;
  for (const int64_t d : dims) n *= t.size(d < 0 ? d + t.dim() : d);
  return n;
}

// expect_stat: the CPU's bits for rows one thread reduces, else to rounding.
void expect_stat(const Tensor& got, const Tensor& want, int64_t len, const std::string& what) {
  if (len <= kThreadRowLen) {
    expect_same(got, want, what);
  } else {
    expect_close(got, want, what, 4);
  }
}

// check_moments: var, std and var_mean of t on both devices over dims.
void check_moments(const Tensor& t, const std::vector<int64_t>& dims, const std::optional<Scalar>& correction,
                   bool keepdim, const std::string& what) {
  const Tensor d = to_cuda(t);
  const int64_t len = reduced_len(t, dims);
  const OptionalIntArrayRef dim = dims.empty() ? OptionalIntArrayRef() : OptionalIntArrayRef(dims);
  expect_stat(ops::var(d, dim, correction, keepdim), ops::var(t, dim, correction, keepdim), len, "var " + what);
  expect_stat(ops::std(d, dim, correction, keepdim), ops::std(t, dim, correction, keepdim), len, "std " + what);
  auto [v, m] = ops::var_mean(d, dim, correction, keepdim);
  auto [rv, rm] = ops::var_mean(t, dim, correction, keepdim);
  expect_stat(v, rv, len, "var_mean var " + what);
  expect_stat(m, rm, len, "var_mean mean " + what);
}

TEST(CudaStatsTest, VarStdAndVarMeanMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::optional<Scalar> corrections[] = {std::nullopt, Scalar(0.0), Scalar(int64_t{2}), Scalar(2.5)};
  for (DType dt : kFloats) {
    const Tensor x = ops::add(input({6, 40, 5}, dt, 1), 3.0);  // a mean away from 0
    const Tensor xt = ops::permute(x, {2, 0, 1});                // [5, 6, 40], not contiguous
    for (const Tensor& t : {x, xt}) {
      for (const std::vector<int64_t>& dims :
           {std::vector<int64_t>{}, {0}, {1}, {2}, {-1}, {0, 2}, {1, 2}, {2, 0}}) {
        for (const std::optional<Scalar>& c : corrections) {
          for (bool keep : {false, true}) {
            check_moments(t, dims, c, keep,
                          str_cat(dtype_short_name(dt), " ", t.meta_str(), " dims ", dims.size() ? dims[0] : -9,
                                  dims.size() > 1 ? "+" : "", " correction ", c ? c->to_double() : -1.0,
                                  " keepdim ", keep));
          }
        }
      }
    }
    // Many short rows, and one long row, a block each.
    check_moments(input({3000, 7}, dt, 2), {1}, std::nullopt, false, "many rows");
    check_moments(input({2, 5000}, dt, 3), {1}, std::nullopt, false, "long rows");
  }
}

TEST(CudaStatsTest, VarEdgeCasesMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const double nan = std::nan("");
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16}) {
    const std::string n(dtype_short_name(dt));
    // Empty rows (mean NaN), an empty result, a 0-dim input.
    check_moments(ops::zeros({3, 0}, {.dtype = dt}), {1}, std::nullopt, false, "empty rows " + n);
    check_moments(ops::zeros({0, 4}, {.dtype = dt}), {0}, std::nullopt, true, "empty rows dim 0 " + n);
    check_moments(ops::zeros({3, 0}, {.dtype = dt}), {0}, std::nullopt, false, "empty result " + n);
    check_moments(ops::zeros({0}, {.dtype = dt}), {}, Scalar(0.0), false, "empty all " + n);
    check_moments(ops::full({}, 2.5, {.dtype = dt}), {}, std::nullopt, false, "0-D " + n);
    check_moments(ops::full({}, 2.5, {.dtype = dt}), {}, Scalar(0.0), false, "0-D correction 0 " + n);
    // A correction past the count (ss / 0), NaN and inf inputs, on both paths.
    for (int64_t len : {4, 300}) {
      std::vector<double> v(static_cast<size_t>(3 * len), 1.5);
      v[1] = 2.0;
      v[static_cast<size_t>(len) + 2] = nan;
      v[static_cast<size_t>(2 * len) + 3] = kInf;
      const Tensor t = ops::tensor(v, {3, len}, dt);
      check_moments(t, {1}, Scalar(int64_t{len + 3}), false, str_cat("correction past n ", len, " ", n));
      check_moments(t, {1}, std::nullopt, false, str_cat("nan and inf ", len, " ", n));
    }
  }
  const Tensor i = to_cuda(ops::ones({3}, {.dtype = DType::kInt64}));
  EXPECT_THAT([&] { ops::var(i); },
              ThrowsMessage<Error>(HasSubstr("aten::var: std and var only support floating point and complex dtypes")));
  EXPECT_THAT([&] { ops::std(i); }, ThrowsMessage<Error>(HasSubstr("aten::std: std and var only support")));
  EXPECT_THAT([&] { ops::var_mean(i); }, ThrowsMessage<Error>(HasSubstr("aten::var_mean: std and var only support")));
}

TEST(CudaStatsTest, LongRowsAreDeterministic) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor x = input({3, 200000}, DType::kFloat64, 4);
  const Tensor d = to_cuda(x);
  const std::vector<int64_t> dim1 = {1};
  const Tensor v1 = ops::var(d, dim1), v2 = ops::var(d, dim1);
  EXPECT_TRUE(ops::equal(to_cpu(v1), to_cpu(v2)));
  expect_close(v1, ops::var(x, dim1), "var 200000", 16);  // the CPU's long sequential sum errs most
  const Tensor l1 = ops::logsumexp(d, {1}), l2 = ops::logsumexp(d, {1});
  EXPECT_TRUE(ops::equal(to_cpu(l1), to_cpu(l2)));
  expect_close(l1, ops::logsumexp(x, {1}), "logsumexp 200000", 4, 1.0);
}

TEST(CudaStatsTest, LogsumexpMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = ops::to(ops::mul(input({6, 40, 100}, DType::kFloat64, 5), 3.0), dt);
    const std::string n(dtype_short_name(dt));
    for (const Tensor& t : {x, ops::transpose(x, 0, 2)}) {
      const Tensor d = to_cuda(t);
      for (const std::vector<int64_t>& dims : {std::vector<int64_t>{}, {0}, {1}, {2}, {-1}, {0, 2}}) {
        for (bool keep : {false, true}) {
          const std::string what = str_cat(n, " ", t.meta_str(), " dims ", dims.size(), " keepdim ", keep);
          // log(sum) + max: the error scales with the result's magnitude, at least 1.
          expect_close(ops::logsumexp(d, dims, keep), ops::logsumexp(t, dims, keep), "logsumexp " + what, 4, 1.0);
        }
      }
    }
    // Rows of only -inf (-inf), with a +inf (+inf), with a NaN (NaN), on both paths.
    for (int64_t len : {3, 200}) {
      std::vector<double> v(static_cast<size_t>(4 * len), -kInf);
      for (int64_t k = len; k < 4 * len; ++k) v[static_cast<size_t>(k)] = static_cast<double>(k % 7) - 3.0;
      v[static_cast<size_t>(len) + 1] = kInf;
      v[static_cast<size_t>(2 * len) + 2] = std::nan("");
      v[static_cast<size_t>(3 * len)] = -kInf;
      const Tensor t = ops::tensor(v, {4, len}, dt);
      expect_close(ops::logsumexp(to_cuda(t), {1}), ops::logsumexp(t, {1}), str_cat("logsumexp inf ", len, " ", n),
                   4, 1.0);
    }
    const Tensor e = ops::zeros({3, 0}, {.dtype = dt});
    expect_same(ops::logsumexp(to_cuda(e), {1}), ops::logsumexp(e, {1}), "logsumexp empty rows " + n);
  }
  // Integers and bools reduce in the default float.
  for (DType dt : {DType::kInt64, DType::kInt32, DType::kBool}) {
    const Tensor x = ops::to(ops::mul(input({5, 90}, DType::kFloat64, 6), 2.0), dt);
    for (int64_t dim : {0, 1}) {
      const int64_t dims[] = {dim};
      expect_close(ops::logsumexp(to_cuda(x), dims), ops::logsumexp(x, dims),
                   str_cat("logsumexp ", dtype_short_name(dt), " dim ", dim), 4, 1.0);
    }
  }
}

TEST(CudaStatsTest, AnyAndAllAreTheCpus) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor base = input({4, 100, 3}, DType::kFloat64, 7);
  const Tensor sparse = ops::where(ops::gt(ops::abs(base), 2.2), base, 0.0);  // mostly zero
  const Tensor dense = ops::add(ops::abs(base), 1.0);                          // never zero
  const Tensor holes = ops::where(ops::gt(base, 1.8), ops::zeros_like(dense), dense);  // a few zeros
  for (DType dt : kAllDTypes) {
    for (const Tensor& src : {sparse, dense, holes}) {
      const Tensor x = ops::to(ops::mul(src, 10.0), dt);
      for (const Tensor& t : {x, ops::permute(x, {2, 0, 1})}) {
        const Tensor d = to_cuda(t);
        const std::string n = str_cat(dtype_short_name(dt), " ", t.meta_str());
        expect_same(ops::any(d), ops::any(t), "any " + n);
        expect_same(ops::all(d), ops::all(t), "all " + n);
        for (int64_t dim : {0, 1, 2, -1}) {
          for (bool keep : {false, true}) {
            const std::string what = str_cat(n, " dim ", dim, " keepdim ", keep);
            expect_same(ops::any(d, dim, keep), ops::any(t, dim, keep), "any " + what);
            expect_same(ops::all(d, dim, keep), ops::all(t, dim, keep), "all " + what);
          }
        }
      }
    }
  }
  // NaN is nonzero, -0.0 is zero; one deciding element at the end of a long row.
  for (DType dt : kFloats) {
    for (int64_t len : {3, 1000}) {
      // Rows: all -0.0; -0.0 then NaN; 1.0 then NaN; 1.0 then 0.0.
      std::vector<double> v(static_cast<size_t>(4 * len), -0.0);
      for (int64_t k = 2 * len; k < 4 * len; ++k) v[static_cast<size_t>(k)] = 1.0;
      v[static_cast<size_t>(2 * len) - 1] = std::nan("");
      v[static_cast<size_t>(3 * len) - 1] = std::nan("");
      v[static_cast<size_t>(4 * len) - 1] = 0.0;
      const Tensor t = ops::tensor(v, {4, len}, dt);
      const std::string what = str_cat(dtype_short_name(dt), " len ", len);
      expect_same(ops::any(to_cuda(t), 1), ops::any(t, 1), "any nan " + what);
      expect_same(ops::all(to_cuda(t), 1), ops::all(t, 1), "all nan " + what);
      expect_same(ops::all(to_cuda(ops::abs(t)), 0), ops::all(ops::abs(t), 0), "all columns " + what);
    }
  }
  // Empty reductions: any is false, all is true.
  for (const Tensor& e : {ops::zeros({0}), ops::zeros({3, 0})}) {
    expect_same(ops::any(to_cuda(e)), ops::any(e), "any empty");
    expect_same(ops::all(to_cuda(e)), ops::all(e), "all empty");
    expect_same(ops::any(to_cuda(e), -1, true), ops::any(e, -1, true), "any empty dim");
    expect_same(ops::all(to_cuda(e), -1), ops::all(e, -1), "all empty dim");
  }
  const Tensor s = ops::full({}, 2.0);
  expect_same(ops::any(to_cuda(s), 0), ops::any(s, 0), "any 0-D");
}

TEST(CudaStatsTest, MseLossMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  constexpr ops::Reduction kReductions[] = {ops::Reduction::kNone, ops::Reduction::kMean, ops::Reduction::kSum};
  for (DType dt : kFloats) {
    // The large case takes reduce.cu's split reduction.
    for (const std::vector<int64_t>& sizes : {std::vector<int64_t>{7, 5}, {300, 300}}) {
      const Tensor a = input(sizes, dt, 8), b = input(sizes, dt, 9);
      for (bool transposed : {false, true}) {
        const Tensor x = transposed ? ops::transpose(a, 0, 1) : a;
        const Tensor y = transposed ? ops::transpose(b, 0, 1) : b;
        const Tensor dx = to_cuda(x), dy = to_cuda(y);
        for (ops::Reduction r : kReductions) {
          const std::string what = str_cat(dtype_short_name(dt), " ", x.meta_str(), " reduction ",
                                           static_cast<int>(r));
          const Tensor loss = ops::mse_loss(dx, dy, r), want = ops::mse_loss(x, y, r);
          if (r == ops::Reduction::kNone) {
            expect_same(loss, want, "mse_loss " + what);
          } else {
            expect_close(loss, want, "mse_loss " + what, 8);
          }
          const Tensor g = r == ops::Reduction::kNone ? input(x.sizes(), dt, 10) : ops::full({}, 0.75, {.dtype = dt});
          expect_same(ops::mse_loss_backward(to_cuda(g), dx, dy, r), ops::mse_loss_backward(g, x, y, r),
                      "mse_loss_backward " + what);
          if (r != ops::Reduction::kNone) {
            // A cpu scalar gradient, and a one-element gradient of another shape.
            expect_same(ops::mse_loss_backward(g, dx, dy, r), ops::mse_loss_backward(g, x, y, r),
                        "cpu scalar grad " + what);
            const Tensor g1 = ops::full({1, 1}, -1.25, {.dtype = dt});
            expect_same(ops::mse_loss_backward(to_cuda(g1), dx, dy, r), ops::mse_loss_backward(g1, x, y, r),
                        "[1, 1] grad " + what);
          }
        }
      }
    }
    // Empty: none is empty, mean NaN, sum 0.
    const Tensor e = ops::zeros({0, 3}, {.dtype = dt});
    for (ops::Reduction r : kReductions) {
      expect_same(ops::mse_loss(to_cuda(e), to_cuda(e), r), ops::mse_loss(e, e, r), "mse_loss empty");
    }
    expect_same(ops::mse_loss_backward(to_cuda(e), to_cuda(e), to_cuda(e), ops::Reduction::kNone),
                ops::mse_loss_backward(e, e, e, ops::Reduction::kNone), "mse_loss_backward empty");
    // 0-D operands, one of them a cpu scalar.
    const Tensor s = ops::full({}, 1.5, {.dtype = dt}), u = ops::full({}, -0.5, {.dtype = dt});
    expect_same(ops::mse_loss(to_cuda(s), u), ops::mse_loss(s, u), "mse_loss 0-D");
  }
  const Tensor a = to_cuda(ops::zeros({2, 3}));
  EXPECT_THAT([&] { ops::mse_loss(a, to_cuda(ops::zeros({3}))); },
              ThrowsMessage<Error>(HasSubstr("aten::mse_loss: input [2, 3] and target [3] must have the same shape")));
  EXPECT_THAT([&] { ops::mse_loss(a, to_cuda(ops::zeros({2, 3}, {.dtype = DType::kFloat64}))); },
              ThrowsMessage<Error>(HasSubstr("expected input and target of one floating dtype, got f32 and f64")));
  EXPECT_THAT([&] { ops::mse_loss_backward(to_cuda(ops::ones({2})), a, a, ops::Reduction::kMean); },
              ThrowsMessage<Error>(HasSubstr("aten::mse_loss_backward: grad_output [2] does not broadcast to input [2, 3]")));
}

}  // namespace
}  // namespace opspec
