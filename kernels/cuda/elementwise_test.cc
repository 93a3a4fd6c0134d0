// CUDA elementwise kernels against the CPU kernels (skipped without a GPU):
// exact wherever the math is IEEE arithmetic, within a few ulps for the
// transcendental functions (libdevice versus the CPU's vec_math).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"

namespace opspec {
namespace cuda_elementwise_test {

using testing::expect_close;
using testing::expect_same;
using testing::kCuda0;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
constexpr DType kAll[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                          DType::kInt64,   DType::kInt32,   DType::kBool};

// inputs: 1000 normal values times 3 and the special values, in dtype (cpu).
Tensor inputs(DType dtype, uint64_t seed = 1) {
  manual_seed(seed);
  const Tensor r = ops::mul(ops::randn({1000}, {.dtype = DType::kFloat64}), 3.0);
  const double inf = std::numeric_limits<double>::infinity();
  const Tensor special = ops::tensor({0.0, -0.0, 1.0, -1.0, inf, -inf, std::nan(""), 1e30, -7.5, 2.0}, {10},
                                     DType::kFloat64);
  return ops::to(ops::cat({r, special}), dtype);
}

using Unary = std::function<Tensor(const Tensor&)>;

TEST(CudaElementwiseTest, ExactUnaryOpsMatchTheCpuBitForBit) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, Unary>> ops_list = {
      {"neg", [](const Tensor& x) { return ops::neg(x); }},
      {"abs", [](const Tensor& x) { return ops::abs(x); }},
      {"relu", [](const Tensor& x) { return ops::relu(x); }},
      {"square", [](const Tensor& x) { return ops::pow(x, 2); }},
      {"cube", [](const Tensor& x) { return ops::pow(x, 3); }},
  };
  for (DType dt : kAll) {
    if (dt == DType::kBool) continue;  // neg/abs/relu refuse bool
    const Tensor x = inputs(dt);
    for (const auto& [name, f] : ops_list) {
      const std::string what = name + " " + std::string(dtype_short_name(dt));
      // f16 has no pow fast paths (PyTorch's rule): it calls powf, which differs on the device.
      if (dt == DType::kFloat16 && name != "neg" && name != "abs" && name != "relu") {
        expect_close(f(to_cuda(x)), f(x), what);
      } else {
        expect_same(f(to_cuda(x)), f(x), what);
      }
    }
  }
  for (DType dt : kFloats) {
    const Tensor x = inputs(dt);
    for (const auto& [name, f] : std::vector<std::pair<std::string, Unary>>{
             {"sqrt", [](const Tensor& x) { return ops::sqrt(x); }},
             {"rsqrt", [](const Tensor& x) { return ops::rsqrt(x); }},
             {"reciprocal", [](const Tensor& x) { return ops::reciprocal(x); }},
             {"pow(-2)", [](const Tensor& x) { return ops::pow(x, -2); }}}) {
      const std::string what = name + " " + std::string(dtype_short_name(dt));
      if (dt == DType::kFloat16 && name == "pow(-2)") {
        expect_close(f(to_cuda(x)), f(x), what);
      } else {
        expect_same(f(to_cuda(x)), f(x), what);
      }
    }
  }
  for (DType dt : kAll) {
    const Tensor x = inputs(dt);
    expect_same(ops::logical_not(to_cuda(x)), ops::logical_not(x), "logical_not");
    // sign and sgn take b8 too, returning it as it is.
    expect_same(ops::sign(to_cuda(x)), ops::sign(x), "sign " + std::string(dtype_short_name(dt)));
    expect_same(ops::sgn(to_cuda(x)), ops::sgn(x), "sgn " + std::string(dtype_short_name(dt)));
  }
  // Integer inputs of floating ops compute in f32, as on the CPU.
  const Tensor i = ops::arange(-5, 20, {.dtype = DType::kInt64});
  expect_same(ops::sqrt(to_cuda(i)), ops::sqrt(i), "sqrt i64");
}

TEST(CudaElementwiseTest, TranscendentalOpsAgreeWithTheCpuToAFewUlps) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const std::vector<std::pair<std::string, Unary>> ops_list = {
      {"sin", [](const Tensor& x) { return ops::sin(x); }},
      {"cos", [](const Tensor& x) { return ops::cos(x); }},
      {"exp", [](const Tensor& x) { return ops::exp(x); }},
      {"log", [](const Tensor& x) { return ops::log(ops::abs(x)); }},
      {"tanh", [](const Tensor& x) { return ops::tanh(x); }},
      {"sigmoid", [](const Tensor& x) { return ops::sigmoid(x); }},
      {"erf", [](const Tensor& x) { return ops::erf(x); }},
      {"gelu", [](const Tensor& x) { return ops::gelu(x); }},
      {"gelu_tanh", [](const Tensor& x) { return ops::gelu(x, "tanh"); }},
      {"silu", [](const Tensor& x) { return ops::silu(x); }},
      {"pow(1.7)", [](const Tensor& x) { return ops::pow(ops::abs(x), 1.7); }},
  };
  for (DType dt : kFloats) {
    const Tensor x = inputs(dt);
    for (const auto& [name, f] : ops_list) {
      const Tensor got = f(to_cuda(x));
      EXPECT_TRUE(got.device().is_cuda());
      // gelu's 1 + erf(x / sqrt 2) cancels for negative x: its error scales with |x| (inputs reach ~10).
      const bool cancels = name.starts_with("gelu");
      expect_close(got, f(x), name + " " + std::string(dtype_short_name(dt)), name == "pow(1.7)" ? 4 : 1,
                   cancels ? 10.0 : 1e-3);
    }
  }
}

// add/sub with alpha are one fma on both devices (See Note [Add with alpha]).
TEST(CudaElementwiseTest, AddWithAlphaRoundsOnceAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const Tensor x = inputs(dt, 11), y = inputs(dt, 12);
    const Tensor xc = to_cuda(x), yc = to_cuda(y);
    const std::string n(dtype_short_name(dt));
    expect_same(ops::add(xc, yc, 0.3), ops::add(x, y, 0.3), "add alpha " + n);
    expect_same(ops::sub(xc, yc, 0.3), ops::sub(x, y, 0.3), "sub alpha " + n);
    expect_same(ops::add(xc, 1.7, 0.3), ops::add(x, 1.7, 0.3), "add scalar alpha " + n);
    Tensor a = ops::clone(x), ac = to_cuda(x);
    ops::add_(a, y, -0.1);
    ops::add_(ac, yc, -0.1);
    expect_same(ac, a, "add_ alpha " + n);
  }
}

// Elementwise results take their inputs' layout as on the CPU (TensorIterator's
// output strides, See Note [Memory formats]): channels-last, permuted and
// non-dense inputs give strided outputs, which the kernels write through
// make_args, with the CPU's values in every dtype (the first input decides;
// a cpu scalar and a dtype change take no part in the layout).
TEST(CudaElementwiseTest, ResultsKeepTheInputsLayoutAsOnTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::expect_like_cpu;
  using Args = std::vector<Tensor>;
  for (DType dt : kAll) {
    const std::string n(dtype_short_name(dt));
    // 1000 values (the specials among them) as [2, 5, 10, 10].
    const Tensor x = ops::view(ops::slice(inputs(dt), 0, 10, 1010), {2, 5, 10, 10});
    const Tensor y = ops::view(ops::slice(inputs(dt, 2), 0, 10, 1010), {2, 5, 10, 10});
    const Tensor cl = ops::contiguous(x, MemoryFormat::kChannelsLast);  // (500, 1, 50, 5)
    const Tensor tr = ops::transpose(x, 1, 3);                           // [2, 10, 10, 5] (500, 1, 10, 100)
    const Tensor sliced = ops::slice(x, 3, 0, 10, 3);                    // not dense: (500, 100, 10, 3)
    const Tensor scalar = ops::select(ops::select(ops::select(ops::select(x, 0, 1), 0, 2), 0, 3), 0, 4);  // 0-dim
    const Tensor row = ops::slice(ops::view(y, {1000}), 0, 0, 10);  // [10], broadcast over cl
    for (const Tensor& t : {cl, tr, sliced, scalar}) {
      const std::string what = n + " " + t.meta_str();
      expect_like_cpu("logical_not " + what, [](const Args& a) { return ops::logical_not(a[0]); }, {t});
      expect_like_cpu("sign " + what, [](const Args& a) { return ops::sign(a[0]); }, {t});
      expect_like_cpu("eq " + what, [](const Args& a) { return ops::eq(a[0], a[0]); }, {t});
      if (dt == DType::kBool) continue;
      expect_like_cpu("neg " + what, [](const Args& a) { return ops::neg(a[0]); }, {t});
      expect_like_cpu("relu " + what, [](const Args& a) { return ops::relu(a[0]); }, {t});
      expect_like_cpu("mul scalar " + what, [](const Args& a) { return ops::mul(a[0], 3); }, {t});
      // i64/i32 exp computes in f32: a new dtype, the same layout.
      expect_like_cpu("exp " + what, [](const Args& a) { return ops::exp(a[0]); }, {t}, 1);
    }
    if (dt == DType::kBool) {
      expect_like_cpu("logical_and cl, x " + n, [](const Args& a) { return ops::logical_and(a[0], a[1]); }, {cl, y});
      continue;
    }
    // Two inputs: the first one's layout, broadcast rows and a cpu 0-dim operand included.
    expect_like_cpu("add cl, y " + n, [](const Args& a) { return ops::add(a[0], a[1]); }, {cl, y});
    expect_like_cpu("add y, cl " + n, [](const Args& a) { return ops::add(a[0], a[1]); }, {y, cl});
    expect_like_cpu("add row, cl " + n, [](const Args& a) { return ops::add(a[0], a[1]); }, {row, cl});
    expect_like_cpu("sub alpha cl, y " + n, [](const Args& a) { return ops::sub(a[0], a[1], 2); }, {cl, y});
    expect_like_cpu("mul tr, cpu 0-dim " + n,
                    [](const Args& a) { return ops::mul(a[0], ops::scalar_tensor(0.5, {.dtype = a[0].dtype()})); },
                    {tr});
    expect_like_cpu("lt cl, y " + n, [](const Args& a) { return ops::lt(a[0], a[1]); }, {cl, y});
    expect_like_cpu("where " + n, [](const Args& a) { return ops::where(ops::gt(a[1], a[0]), a[0], a[1]); },
                    {cl, y});
    expect_like_cpu("maximum sliced " + n, [](const Args& a) { return ops::maximum(a[0], a[0]); }, {sliced});
    expect_like_cpu("pow 2 cl " + n, [](const Args& a) { return ops::pow(a[0], 2); }, {cl},
                    dt == DType::kFloat16 ? 1 : 0);  // f16 has no pow fast path
    // Promotion: an f64 second input, the first's layout.
    expect_like_cpu("add cl, f64 " + n, [](const Args& a) { return ops::add(a[0], ops::to(a[1], DType::kFloat64)); },
                    {cl, y});
  }
}

TEST(CudaElementwiseTest, BinaryOpsPromoteBroadcastAndMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using Binary = std::function<Tensor(const Tensor&, const Tensor&)>;
  const std::vector<std::pair<std::string, Binary>> ops_list = {
      {"add", [](const Tensor& a, const Tensor& b) { return ops::add(a, b); }},
      {"add_alpha", [](const Tensor& a, const Tensor& b) { return ops::add(a, b, 3); }},
      {"sub", [](const Tensor& a, const Tensor& b) { return ops::sub(a, b); }},
      {"mul", [](const Tensor& a, const Tensor& b) { return ops::mul(a, b); }},
      {"div", [](const Tensor& a, const Tensor& b) { return ops::div(a, b); }},
      {"maximum", [](const Tensor& a, const Tensor& b) { return ops::maximum(a, b); }},
      {"minimum", [](const Tensor& a, const Tensor& b) { return ops::minimum(a, b); }},
      {"eq", [](const Tensor& a, const Tensor& b) { return ops::eq(a, b); }},
      {"lt", [](const Tensor& a, const Tensor& b) { return ops::lt(a, b); }},
      {"ge", [](const Tensor& a, const Tensor& b) { return ops::ge(a, b); }},
      {"logical_and", [](const Tensor& a, const Tensor& b) { return ops::logical_and(a, b); }},
      {"logical_or", [](const Tensor& a, const Tensor& b) { return ops::logical_or(a, b); }},
  };
  for (DType da : kAll) {
    for (DType db : {DType::kFloat32, DType::kInt32, DType::kFloat16, DType::kBool}) {
      // [10, 101] against a broadcast [101] row and a transposed [10, 101].
      const Tensor a = ops::view(ops::slice(inputs(da, 2), 0, 0, 1010), {10, 101});
      const Tensor row = ops::slice(inputs(db, 3), 0, 0, 101);
      const Tensor tr = ops::t(ops::view(ops::slice(inputs(db, 4), 0, 0, 1010), {101, 10}));
      for (const auto& [name, f] : ops_list) {
        if (name == "sub" && (da == DType::kBool || db == DType::kBool)) continue;  // refused on both
        if (name == "add_alpha" && da == DType::kBool && db == DType::kBool) continue;
        const std::string what = name + " " + std::string(dtype_short_name(da)) + "," + std::string(dtype_short_name(db));
        expect_same(f(to_cuda(a), to_cuda(row)), f(a, row), what + " row");
        expect_same(f(to_cuda(a), to_cuda(tr)), f(a, tr), what + " transposed");
      }
    }
  }
}

TEST(CudaElementwiseTest, ScalarOperandsIncludingCpuScalarTensors) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    const Tensor x = inputs(dt);
    const Tensor xc = to_cuda(x);
    const std::string name(dtype_short_name(dt));
    if (dt != DType::kBool) {
      expect_same(ops::add(xc, 2.5), ops::add(x, 2.5), "add scalar " + name);
      expect_same(ops::rsub(xc, 1), ops::rsub(x, 1), "rsub " + name);
      expect_same(ops::mul(xc, 0.1), ops::mul(x, 0.1), "mul scalar " + name);  // f16/bf16 keep 0.1 in float
      expect_same(ops::div(xc, 3), ops::div(x, 3), "div scalar " + name);
      expect_same(ops::sub(xc, 1, 2), ops::sub(x, 1, 2), "sub alpha " + name);
    }
    expect_same(ops::gt(xc, 0.5), ops::gt(x, 0.5), "gt scalar " + name);
    // A 0-dim cpu tensor joins a cuda op as a scalar, on either side.
    const Tensor s = ops::scalar_tensor(1.25, {.dtype = DType::kFloat64});
    expect_same(ops::mul(xc, s), ops::mul(x, s), "mul cpu scalar tensor " + name);
    expect_same(ops::maximum(s, xc), ops::maximum(s, x), "maximum cpu scalar tensor first " + name);
    // A 0-dim cuda tensor broadcasts like any other.
    expect_same(ops::mul(xc, to_cuda(s)), ops::mul(x, s), "mul cuda scalar tensor " + name);
  }
  const Tensor f = inputs(DType::kFloat32);
  // powf is libdevice's on the device: close, not exact.
  expect_close(ops::pow(to_cuda(f), to_cuda(ops::abs(f))), ops::pow(f, ops::abs(f)), "pow tensor f32", 4);
  const Tensor i = ops::arange(-6, 6, {.dtype = DType::kInt32});
  expect_same(ops::pow(to_cuda(i), 5), ops::pow(i, 5), "pow i32 scalar");
  expect_same(ops::pow(to_cuda(i), to_cuda(ops::abs(i))), ops::pow(i, ops::abs(i)), "pow i32 tensor");
}

TEST(CudaElementwiseTest, WhereSelectsBitsAndPromotes) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kAll) {
    const Tensor x = inputs(dt, 5), y = inputs(DType::kFloat16, 6);
    const Tensor cond = ops::gt(inputs(DType::kFloat32, 7), 0.0);
    expect_same(ops::where(to_cuda(cond), to_cuda(x), to_cuda(y)), ops::where(cond, x, y),
                "where " + std::string(dtype_short_name(dt)));
    expect_same(ops::where(to_cuda(cond), to_cuda(x), 2.0), ops::where(cond, x, 2.0), "where scalar");
  }
}

TEST(CudaElementwiseTest, InPlaceOpsWriteThroughViewsAndCast) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : {DType::kFloat32, DType::kFloat16, DType::kInt64}) {
    Tensor cpu = ops::to(ops::view(ops::slice(inputs(DType::kFloat64, 8), 0, 0, 1000), {20, 50}), dt);
    Tensor dev = to_cuda(cpu);
    Tensor cpu_view = ops::t(cpu), dev_view = ops::t(dev);
    const Tensor other = ops::to(ops::slice(inputs(DType::kFloat32, 9), 0, 0, 20), DType::kFloat32);
    if (dt != DType::kInt64) {
      ops::add_(cpu_view, other, 0.5);  // f32 other into self's dtype, through a transposed view
      ops::add_(dev_view, to_cuda(other), 0.5);
      ops::mul_(cpu_view, ops::scalar_tensor(3.0));
      ops::mul_(dev_view, ops::scalar_tensor(3.0));
      ops::div_(cpu, 7);
      ops::div_(dev, 7);
      ops::div_(cpu_view, ops::full({20}, 4.0));  // aten::div_.Tensor
      ops::div_(dev_view, to_cuda(ops::full({20}, 4.0)));
    } else {
      ops::add_(cpu_view, ops::full({20}, 3, {.dtype = DType::kInt64}), 2);
      ops::add_(dev_view, to_cuda(ops::full({20}, 3, {.dtype = DType::kInt64})), 2);
    }
    expect_same(dev, cpu, "in-place " + std::string(dtype_short_name(dt)));
  }
  // x.add_(x); a partially overlapping other is refused as on the CPU, and one
  // PyTorch cannot judge (a column, not dense) is read whole first (See Note
  // [Memory overlap]).
  const Tensor base = inputs(DType::kFloat32, 10);
  Tensor a = ops::clone(base), b = to_cuda(base);
  ops::add_(a, a);
  ops::add_(b, b);
  expect_same(b, a, "add_ self");
  Tensor dhead = ops::slice(b, 0, 1, 1001);
  EXPECT_THAT([&] { ops::add_(dhead, ops::slice(b, 0, 0, 1000)); },
              ::testing::ThrowsMessage<Error>(::testing::HasSubstr("refer to a single memory location")));
  expect_same(b, a, "nothing written");
  // m[:, :10][:, 3] += m[:, :10][3] * 0.5: they share m[3][3].
  const Tensor m = ops::slice(ops::view(ops::slice(a, 0, 0, 1000), {10, 100}), 1, 0, 10);
  const Tensor dm = ops::slice(ops::view(ops::slice(b, 0, 0, 1000), {10, 100}), 1, 0, 10);
  Tensor col = ops::select(m, 1, 3), dcol = ops::select(dm, 1, 3);
  ops::add_(col, ops::select(m, 0, 3), 0.5);
  ops::add_(dcol, ops::select(dm, 0, 3), 0.5);
  expect_same(b, a, "add_ column and row");
}

}  // namespace
}  // namespace opspec
