// random_ops_test.cc: randint, uniform_, normal_, bernoulli and bernoulli.p:
// element i from counter first + i (Note [Random draws per dtype]), their
// distributions, dtypes, strided selves, PyTorch's errors, Meta, the schema's
// dtype=long default, tags, autograd, and eager == compiled.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "kernels/common/random_values.h"
#include "runtime/autograd/autograd_test_util.h"
#include "runtime/compile/compile.h"
#include "runtime/core/generator.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace random_ops_test {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
namespace rv = internal::random_values;

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }
double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double acc = 0;
  for (double x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / v.size());
}

TEST(RandomOpsTest, RandintDefaultsToLongAndCoversTheRange) {
  manual_seed(0);
  Tensor r = ops::randint(3, 8, {20000});
  EXPECT_EQ(r.dtype(), DType::kInt64);
  const std::vector<int64_t> v = r.to_vector<int64_t>();
  std::vector<int> counts(8, 0);
  for (int64_t x : v) {
    ASSERT_TRUE(x >= 3 && x < 8) << x;
    ++counts[static_cast<size_t>(x)];
  }
  for (int k = 3; k < 8; ++k) EXPECT_NEAR(counts[k], 4000, 300) << k;
  // Element i is low + bits(counter i) mod range.
  manual_seed(4);
  const std::vector<int64_t> w = ops::randint(-5, 1000, {6}).to_vector<int64_t>();
  for (uint64_t i = 0; i < 6; ++i) {
    const auto b = internal::philox::philox4x32_10(i, 4);
    EXPECT_EQ(w[i], -5 + static_cast<int64_t>((uint64_t{b.w[0]} << 32 | b.w[1]) % 1005));
  }
  EXPECT_EQ(default_generator_state().offset, 6u);
  // randint(high) is randint.low(0, high).
  manual_seed(4);
  const std::vector<int64_t> h = ops::randint(10, {6}).to_vector<int64_t>();
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(h[i], (rv::randint<int64_t>(4, i, 0, 10)));
}

TEST(RandomOpsTest, RandintDtypesAndSchemaDefault) {
  manual_seed(1);
  for (DType t : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32, DType::kBool}) {
    SCOPED_TRACE(dtype_short_name(t));
    Tensor r = ops::randint(0, 2, {1000}, {.dtype = t});
    EXPECT_EQ(r.dtype(), t);
    const std::vector<double> v = r.to_vector<double>();
    for (double x : v) ASSERT_TRUE(x == 0 || x == 1) << x;
    EXPECT_NEAR(mean_of(v), 0.5, 0.08);
  }
  // The schema's `ScalarType? dtype=long` parses to i64 and prints back as written (SymInt prints as int).
  const OperatorHandle& op = builtin_op(OpId::randint);
  EXPECT_EQ(op.schema().arguments()[2].default_value->to_dtype(), DType::kInt64);
  EXPECT_EQ(op.schema().str(),
            "randint(int high, int[] size, *, ScalarType? dtype=long, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None) -> Tensor");
  Stack boxed = op.schema().bind({Value(int64_t{5}), Value(std::vector<int64_t>{3})}, {});
  Dispatcher::singleton().call_boxed(op, boxed);
  EXPECT_EQ(boxed[0].to_tensor().dtype(), DType::kInt64);
  EXPECT_TRUE(op.has_tag(OpTag::kNondeterministicSeeded));
}

TEST(RandomOpsTest, RandintErrors) {
  EXPECT_THAT([] { ops::randint(5, 5, {3}); },
              ThrowsMessage<Error>(HasSubstr("random_ expects 'from' to be less than 'to', but got from=5 >= to=5")));
  EXPECT_THAT([] { ops::randint(0, {3}); },
              ThrowsMessage<Error>(HasSubstr("but got from=0 >= to=0")));
  EXPECT_THAT([] { ops::randint(0, 300, {3}, {.dtype = DType::kBool}); },
              ThrowsMessage<Error>(HasSubstr("to - 1 is out of bounds for bool")));
  EXPECT_THAT([] { ops::randint(0, 3, {-1}); },
              ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -1: [-1]")));
  EXPECT_TRUE(ops::randint(0, 3, {2}, {.device = kMeta}).device().is_meta());
}

TEST(RandomOpsTest, UniformAndNormalInPlace) {
  manual_seed(2);
  Tensor x = ops::empty({100000});
  const uint64_t v0 = x.impl()->version();
  Tensor& r = ops::uniform_(x, -2.0, 3.0);
  EXPECT_EQ(&r, &x);
  EXPECT_GT(x.impl()->version(), v0);
  std::vector<double> v = x.to_vector<double>();
  for (double e : v) ASSERT_TRUE(e >= -2.0 && e < 3.0) << e;
  EXPECT_NEAR(mean_of(v), 0.5, 0.03);
  EXPECT_NEAR(std_of(v), 5.0 / std::sqrt(12.0), 0.03);
  ops::normal_(x, 4.0, 0.5);
  v = x.to_vector<double>();
  EXPECT_NEAR(mean_of(v), 4.0, 0.01);
  EXPECT_NEAR(std_of(v), 0.5, 0.01);
  // uniform_(0, 1) and normal_(0, 1) draw what rand and randn draw.
  manual_seed(3);
  const std::vector<float> a = ops::rand({5}).to_vector<float>();
  const std::vector<float> n = ops::randn({5}).to_vector<float>();
  manual_seed(3);
  Tensor u = ops::empty({5});
  EXPECT_EQ(ops::uniform_(u).to_vector<float>(), a);
  Tensor z = ops::empty({5});
  EXPECT_EQ(ops::normal_(z).to_vector<float>(), n);
  // Values: fma(to - from, u, from) and fma(std, z, mean) in double.
  manual_seed(6);
  Tensor d = ops::empty({3}, {.dtype = DType::kFloat64});
  ops::uniform_(d, 1.0, 2.5);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(d.to_vector<double>()[i], std::fma(1.5, internal::uniform_double(6, i), 1.0));
  ops::normal_(d, -1.0, 2.0);
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(d.to_vector<double>()[i], std::fma(2.0, internal::normal_double(6, 3 + i), -1.0));
  for (DType t : {DType::kFloat16, DType::kBFloat16}) {
    Tensor h = ops::empty({2000}, {.dtype = t});
    ops::uniform_(h, 0.0, 4.0);
    for (double e : h.to_vector<double>()) ASSERT_TRUE(e >= 0.0 && e <= 4.0) << e;
    ops::normal_(h);
    EXPECT_NEAR(mean_of(h.to_vector<double>()), 0.0, 0.1);
  }
}

TEST(RandomOpsTest, StridedSelfFollowsLogicalOrder) {
  manual_seed(8);
  Tensor a = ops::empty({3, 4});
  ops::uniform_(a, 0, 10);
  manual_seed(8);
  Tensor base = ops::empty({4, 3});
  Tensor b = ops::t(base);
  ops::uniform_(b, 0, 10);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  manual_seed(8);
  ops::normal_(a);
  manual_seed(8);
  ops::normal_(b);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
}

TEST(RandomOpsTest, UniformAndNormalErrors) {
  Tensor x = ops::zeros({3});
  EXPECT_THAT([&] { ops::uniform_(x, 1, 0); },
              ThrowsMessage<Error>(HasSubstr("uniform_ expects to return a [from, to) range, but found from=1 > to=0")));
  Tensor i = ops::zeros({3}, {.dtype = DType::kInt64});
  EXPECT_THAT([&] { ops::uniform_(i); },
              ThrowsMessage<Error>(HasSubstr("\"check_uniform_bounds\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::normal_(x, 0, -1); },
              ThrowsMessage<Error>(HasSubstr("normal expects std >= 0.0, but found std -1")));
  EXPECT_THAT([&] { ops::normal_(i); },
              ThrowsMessage<Error>(HasSubstr("\"normal_kernel_cpu\" not implemented for 'Long'")));
  Tensor ex = ops::expand(ops::zeros({1}), {4});
  EXPECT_THAT([&] { ops::normal_(ex); }, ThrowsMessage<Error>(HasSubstr("refers to a single memory location")));
  // Meta: the same checks, no data, no offsets taken.
  manual_seed(0);
  Tensor m = ops::empty({4}, {.device = kMeta});
  EXPECT_THAT([&] { ops::uniform_(m, 2, 1); }, ThrowsMessage<Error>(HasSubstr("[from, to) range")));
  EXPECT_NO_THROW(ops::normal_(m));
  EXPECT_EQ(default_generator_state().offset, 0u);
}

TEST(RandomOpsTest, BernoulliDrawsOnePerElementProbability) {
  manual_seed(5);
  Tensor p = ops::tensor({0.0, 1.0, 0.25, 0.75}, {4}, DType::kFloat64);
  Tensor r = ops::bernoulli(p);
  EXPECT_EQ(r.dtype(), DType::kFloat64);
  const std::vector<double> v = r.to_vector<double>();
  const std::vector<double> pv = p.to_vector<double>();
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(v[i], internal::uniform_double(5, i) < pv[i] ? 1.0 : 0.0);
  EXPECT_EQ(v[0], 0.0);
  EXPECT_EQ(v[1], 1.0);
  // Statistics, and a strided p read in logical order.
  Tensor half = ops::full({200, 100}, 0.3);
  EXPECT_NEAR(mean_of(ops::bernoulli(ops::t(half)).to_vector<double>()), 0.3, 0.02);
  manual_seed(9);
  Tensor probs = ops::t(ops::tensor({0.1, 0.9, 0.2, 0.8, 0.3, 0.7}, {2, 3}));
  const std::vector<float> got = ops::bernoulli(probs).to_vector<float>();
  const std::vector<float> pl = ops::contiguous(probs).to_vector<float>();
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(got[i], internal::uniform_double(9, i) < double(pl[i]) ? 1.0f : 0.0f);
  // bernoulli.p: any dtype, self's shape.
  manual_seed(10);
  Tensor l = ops::bernoulli(ops::zeros({3000}, {.dtype = DType::kInt64}), 0.4);
  EXPECT_EQ(l.dtype(), DType::kInt64);
  EXPECT_NEAR(mean_of(l.to_vector<double>()), 0.4, 0.03);
  EXPECT_THAT(ops::bernoulli(ops::zeros({8}), 1.0).to_vector<float>(), Each(1.0f));
}

TEST(RandomOpsTest, BernoulliErrors) {
  EXPECT_THAT([] { ops::bernoulli(ops::tensor({0.5, 1.5}, {2})); },
              ThrowsMessage<Error>(HasSubstr("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")));
  EXPECT_THAT([] { ops::bernoulli(ops::zeros({2}, {.dtype = DType::kInt64})); },
              ThrowsMessage<Error>(HasSubstr("\"bernoulli_tensor_cpu_p_\" not implemented for 'Long'")));
  EXPECT_THAT([] { ops::bernoulli(ops::zeros({2}), 1.5); },
              ThrowsMessage<Error>(HasSubstr("bernoulli_ expects p to be in [0, 1], but got p=1.5")));
  Tensor m = ops::bernoulli(ops::empty({2, 5}, {.device = kMeta}));
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_EQ(m.dim(), 2);
}

TEST(RandomOpsTest, GradientsAreZeros) {
  using namespace autograd_test;
  Tensor x = leaf({4}, 1);
  Tensor y = ops::mul(x, x);
  ops::uniform_(y);
  ops::sum(y).backward();
  EXPECT_THAT(x.grad().to_vector<double>(), Each(0.0));
  EXPECT_EQ(y.grad_fn()->name(), "UniformBackward0");
  Tensor p = leaf({4}, 2);
  Tensor b = ops::bernoulli(ops::mul(p, ops::full({4}, 0.5, {.dtype = DType::kFloat64})));
  EXPECT_EQ(b.grad_fn()->name(), "BernoulliBackward0");
  ops::sum(b).backward();
  EXPECT_THAT(p.grad().to_vector<double>(), Each(0.0));
  Tensor q = leaf({4}, 3);
  Tensor z = ops::mul(q, q);
  ops::normal_(z);
  ops::sum(z).backward();
  EXPECT_THAT(q.grad().to_vector<double>(), Each(0.0));
  // bernoulli.p has no derivatives.yaml entry.
  Tensor c = ops::bernoulli(leaf({2}, 4), 0.5);
  EXPECT_THAT([&] { ops::sum(c).backward(); }, ThrowsMessage<Error>(HasSubstr("not implemented")));
}

TEST(RandomOpsTest, CompiledDrawsWhatEagerDraws) {
  auto f = [](const Tensor& x) {
    ops::bernoulli(x, 0.5);  // unused: the graph must still draw it (tagged nondeterministic_seeded)
    Tensor u = ops::empty_like(x);
    ops::uniform_(u, -1, 1);
    Tensor n = ops::empty_like(x);
    ops::normal_(n, 2, 3);
    return std::vector<Tensor>{ops::add(x, u), ops::mul(n, ops::bernoulli(ops::sigmoid(x))),
                               ops::randint(0, 100, {5}), ops::bernoulli(x, 0.5)};
  };
  const Tensor x = ops::ones({3, 4});
  manual_seed(12);
  const std::vector<Tensor> want = f(x);
  for (const char* backend : {"eager", "aot_eager", "fused"}) {
    SCOPED_TRACE(backend);
    auto cf = compile(f, {.backend = backend, .input_names = {"x"}});
    for (int call = 0; call < 2; ++call) {
      manual_seed(12);
      const std::vector<Tensor> got = cf(x);
      ASSERT_EQ(got.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i) EXPECT_TRUE(ops::equal(got[i], want[i])) << i;
    }
  }
}

}  // namespace
}  // namespace opspec
