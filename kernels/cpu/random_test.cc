#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "runtime/core/generator.h"
#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace random_test {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

double mean_of(const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0) / v.size(); }

double std_of(const std::vector<double>& v) {
  const double m = mean_of(v);
  double acc = 0;
  for (double x : v) acc += (x - m) * (x - m);
  return std::sqrt(acc / v.size());
}

TEST(RandomTest, RandIsUniformInUnitInterval) {
  manual_seed(0);
  const std::vector<double> v = ops::rand({100000}).to_vector<double>();
  for (double x : v) ASSERT_TRUE(x >= 0.0 && x < 1.0) << x;
  EXPECT_NEAR(mean_of(v), 0.5, 0.01);
  EXPECT_NEAR(std_of(v), std::sqrt(1.0 / 12), 0.01);
}

TEST(RandomTest, RandnIsStandardNormal) {
  manual_seed(1);
  const std::vector<double> v = ops::randn({100000}).to_vector<double>();
  EXPECT_NEAR(mean_of(v), 0.0, 0.02);
  EXPECT_NEAR(std_of(v), 1.0, 0.02);
  manual_seed(1);
  const std::vector<double> d = ops::randn({100000}, {.dtype = DType::kFloat64}).to_vector<double>();
  EXPECT_NEAR(mean_of(d), 0.0, 0.02);
  EXPECT_NEAR(std_of(d), 1.0, 0.02);
}

TEST(RandomTest, ElementIIsCounterFirstPlusI) {
  manual_seed(7);
  const std::vector<float> a = ops::rand({2, 3}).to_vector<float>();
  const std::vector<float> b = ops::rand({4}).to_vector<float>();  // continues at offset 6
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(a[i], internal::uniform_float(7, i));
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(b[i], internal::uniform_float(7, 6 + i));
  EXPECT_EQ(default_generator_state().offset, 10u);
  const std::vector<double> n = ops::randn({3}, {.dtype = DType::kFloat64}).to_vector<double>();
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(n[i], internal::normal_double(7, 10 + i));
  const std::vector<double> u = ops::rand({3}, {.dtype = DType::kFloat64}).to_vector<double>();
  for (uint64_t i = 0; i < 3; ++i) EXPECT_EQ(u[i], internal::uniform_double(7, 13 + i));
}

TEST(RandomTest, SameSeedSameValues) {
  manual_seed(42);
  Tensor a = ops::rand({1000});
  Tensor b = ops::rand({1000});
  manual_seed(42);
  Tensor c = ops::rand({1000});
  EXPECT_TRUE(ops::equal(a, c));
  EXPECT_FALSE(ops::equal(a, b));
  manual_seed(43);
  EXPECT_FALSE(ops::equal(a, ops::rand({1000})));
  // Saving and restoring the state replays a call.
  const GeneratorState s = default_generator_state();
  Tensor d = ops::randn({50});
  set_default_generator_state(s);
  EXPECT_TRUE(ops::equal(d, ops::randn({50})));
}

TEST(RandomTest, ValuesDoNotDependOnThreadCount) {
  const int64_t n = 200001;  // well above the parallel threshold
  auto run = [&](int threads) {
    NumThreadsGuard tc(threads);
    manual_seed(123);
    std::vector<Tensor> out;
    out.push_back(ops::rand({n}));
    out.push_back(ops::randn({n}, {.dtype = DType::kFloat64}));
    out.push_back(ops::rand({n}, {.dtype = DType::kBFloat16}));
    Tensor b = ops::empty({n});
    ops::bernoulli_(b, 0.3);
    out.push_back(b);
    auto [y, mask] = ops::native_dropout(ops::ones({n}), 0.4, true);
    out.push_back(y);
    out.push_back(mask);
    return out;
  };
  const std::vector<Tensor> one = run(1);
  const std::vector<Tensor> two = run(2);
  ASSERT_EQ(one.size(), two.size());
  for (size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(ops::equal(one[i], two[i])) << "output " << i;
}

TEST(RandomTest, ReducedPrecisionAndDoubleDtypes) {
  manual_seed(5);
  for (DType t : {DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_short_name(t));
    Tensor r = ops::rand({50000}, {.dtype = t});
    EXPECT_EQ(r.dtype(), t);
    const std::vector<double> v = r.to_vector<double>();
    for (double x : v) ASSERT_TRUE(x >= 0.0 && x < 1.0) << x;  // f16/bf16 must never round up to 1
    EXPECT_NEAR(mean_of(v), 0.5, 0.02);
    const std::vector<double> n = ops::randn({50000}, {.dtype = t}).to_vector<double>();
    EXPECT_NEAR(mean_of(n), 0.0, 0.03);
    EXPECT_NEAR(std_of(n), 1.0, 0.03);
  }
  // f16 randn is the f32 draw rounded.
  manual_seed(9);
  const std::vector<float> h = ops::randn({4}, {.dtype = DType::kFloat16}).to_vector<float>();
  for (uint64_t i = 0; i < 4; ++i) EXPECT_EQ(h[i], static_cast<float>(Half(internal::normal_float(9, i))));
}

TEST(RandomTest, IntegerDtypesAreRefused) {
  EXPECT_THAT([] { ops::randn({2}, {.dtype = DType::kInt64}); },
              ThrowsMessage<Error>(HasSubstr("\"normal_kernel_cpu\" not implemented for 'Long'")));
  EXPECT_THAT([] { ops::rand({2}, {.dtype = DType::kInt32}); },
              ThrowsMessage<Error>(HasSubstr("\"check_uniform_bounds\" not implemented for 'Int'")));
  EXPECT_THAT([] { ops::randn({2}, {.dtype = DType::kBool, .device = kMeta}); },
              ThrowsMessage<Error>(HasSubstr("not implemented for 'Bool'")));
  Tensor i = ops::zeros({2}, {.dtype = DType::kInt64});
  EXPECT_THAT([&] { ops::rand_like(i); }, ThrowsMessage<Error>(HasSubstr("not implemented for 'Long'")));
  EXPECT_EQ(ops::rand_like(i, {.dtype = DType::kFloat32}).dtype(), DType::kFloat32);
  EXPECT_THAT([] { ops::rand({-1, 2}); }, ThrowsMessage<Error>(HasSubstr("negative dimension -1: [-1, 2]")));
}

TEST(RandomTest, MetaRandHasNoDataAndDrawsNothing) {
  manual_seed(3);
  const AllocatorStats before = get_allocator(DeviceType::kCPU)->stats();
  Tensor r = ops::rand({1000, 1000}, {.device = kMeta});
  Tensor n = ops::randn({10}, {.dtype = DType::kFloat64, .device = kMeta});
  Tensor l = ops::randn_like(n);
  EXPECT_EQ(get_allocator(DeviceType::kCPU)->stats().allocation_count, before.allocation_count);
  EXPECT_TRUE(r.device().is_meta());
  EXPECT_THAT(vec(r.sizes()), ElementsAre(1000, 1000));
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_TRUE(l.device().is_meta());
  EXPECT_EQ(l.dtype(), DType::kFloat64);
  EXPECT_EQ(default_generator_state().offset, 0u);
  EXPECT_THAT([&] { r.to_vector<float>(); }, ThrowsMessage<Error>(HasSubstr("meta")));
}

TEST(RandomTest, RandLike) {
  manual_seed(11);
  Tensor base = ops::t(ops::zeros({3, 2}, {.dtype = DType::kFloat64}));
  Tensor r = ops::rand_like(base);
  EXPECT_THAT(vec(r.sizes()), ElementsAre(2, 3));
  EXPECT_EQ(r.dtype(), DType::kFloat64);
  // preserve_format keeps self's layout (torch.rand_like(torch.zeros(3, 2).t()).stride() == (1, 2));
  // the values still follow the logical index (See Note [Random draws per dtype]).
  EXPECT_EQ(r.strides(), base.strides());
  const std::vector<double> v = r.to_vector<double>();
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(v[i], internal::uniform_double(11, i));
  Tensor n = ops::randn_like(base, {.dtype = DType::kFloat16});
  EXPECT_EQ(n.dtype(), DType::kFloat16);
  Tensor m = ops::rand_like(base, {.device = kMeta});
  EXPECT_TRUE(m.device().is_meta());
  // A meta self with device=cpu draws real values.
  Tensor from_meta = ops::randn_like(m, {.device = kCPU});
  EXPECT_TRUE(from_meta.device().is_cpu());
  EXPECT_EQ(from_meta.dtype(), DType::kFloat64);
}

TEST(RandomTest, BernoulliInPlace) {
  manual_seed(2);
  Tensor x = ops::empty({100000});
  const uint64_t v0 = x.impl()->version();
  Tensor& r = ops::bernoulli_(x, 0.3);
  EXPECT_EQ(&r, &x);
  EXPECT_GT(x.impl()->version(), v0);
  const std::vector<double> v = x.to_vector<double>();
  for (double e : v) ASSERT_TRUE(e == 0.0 || e == 1.0);
  EXPECT_NEAR(mean_of(v), 0.3, 0.01);
  ops::bernoulli_(x, 0.0);
  EXPECT_THAT(x.to_vector<float>(), Each(0.0f));
  ops::bernoulli_(x, 1.0);
  EXPECT_THAT(x.to_vector<float>(), Each(1.0f));
  for (DType t : {DType::kInt64, DType::kBool, DType::kFloat16, DType::kFloat64}) {
    Tensor y = ops::zeros({1000}, {.dtype = t});
    ops::bernoulli_(y, 0.5);
    const std::vector<double> yv = y.to_vector<double>();
    for (double e : yv) ASSERT_TRUE(e == 0.0 || e == 1.0);
    EXPECT_NEAR(mean_of(yv), 0.5, 0.08);
  }
}

TEST(RandomTest, BernoulliFollowsLogicalOrderOnStridedSelf) {
  manual_seed(4);
  Tensor a = ops::zeros({3, 4});
  ops::bernoulli_(a, 0.5);
  manual_seed(4);
  Tensor base = ops::zeros({4, 3});
  Tensor b = ops::t(base);  // [3, 4], non-contiguous
  ops::bernoulli_(b, 0.5);
  EXPECT_EQ(a.to_vector<float>(), b.to_vector<float>());
  for (int64_t i = 0; i < 12; ++i) {
    EXPECT_EQ(a.to_vector<float>()[i], internal::uniform_double(4, i) < 0.5 ? 1.0f : 0.0f);
  }
}

TEST(RandomTest, BernoulliErrors) {
  Tensor x = ops::zeros({4});
  EXPECT_THAT([&] { ops::bernoulli_(x, 1.5); },
              ThrowsMessage<Error>(HasSubstr("bernoulli_ expects p to be in [0, 1], but got p=1.5")));
  EXPECT_THAT([&] { ops::bernoulli_(x, -0.1); }, ThrowsMessage<Error>(HasSubstr("but got p=-0.1")));
  Tensor ex = ops::expand(ops::zeros({1}), {4});
  EXPECT_THAT([&] { ops::bernoulli_(ex, 0.5); },
              ThrowsMessage<Error>(HasSubstr("more than one element of the written-to tensor refers to a single "
                                             "memory location")));
  Tensor m = ops::empty({4}, {.device = kMeta});
  EXPECT_THAT([&] { ops::bernoulli_(m, 2.0); }, ThrowsMessage<Error>(HasSubstr("expects p to be in [0, 1]")));
  EXPECT_NO_THROW(ops::bernoulli_(m, 0.5));
}

TEST(RandomTest, NativeDropoutTrain) {
  manual_seed(8);
  Tensor x = ops::full({100000}, 2.0);
  auto [y, mask] = ops::native_dropout(x, 0.25, true);
  EXPECT_EQ(mask.dtype(), DType::kBool);
  EXPECT_EQ(y.dtype(), DType::kFloat32);
  const std::vector<float> yv = y.to_vector<float>();
  const std::vector<int> mv = mask.to_vector<int>();
  double kept = 0;
  for (size_t i = 0; i < yv.size(); ++i) {
    ASSERT_EQ(yv[i], mv[i] ? 2.0f * static_cast<float>(1.0 / 0.75) : 0.0f);
    kept += mv[i];
  }
  EXPECT_NEAR(kept / yv.size(), 0.75, 0.01);
  // The mask is bernoulli_(1 - p) at the same offsets.
  manual_seed(8);
  Tensor b = ops::empty({100000}, {.dtype = DType::kBool});
  ops::bernoulli_(b, 0.75);
  EXPECT_TRUE(ops::equal(b, mask));
  // train = None trains too.
  manual_seed(8);
  auto [y2, mask2] = ops::native_dropout(x, 0.25, std::nullopt);
  EXPECT_TRUE(ops::equal(mask2, mask));
  EXPECT_TRUE(ops::equal(y2, y));
}

TEST(RandomTest, NativeDropoutEdgeCases) {
  Tensor x = ops::t(ops::view(ops::arange(6, {.dtype = DType::kFloat64}), {2, 3}));  // non-contiguous
  auto [all_dropped, none] = ops::native_dropout(x, 1.0, true);
  EXPECT_THAT(all_dropped.to_vector<double>(), Each(0.0));
  EXPECT_THAT(none.to_vector<int>(), Each(0));
  auto [kept, all] = ops::native_dropout(x, 0.0, true);
  EXPECT_THAT(kept.to_vector<double>(), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(all.to_vector<int>(), Each(1));
  auto [eval, eval_mask] = ops::native_dropout(x, 0.5, false);
  EXPECT_THAT(eval.to_vector<double>(), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_FALSE(eval.is_alias_of(x));
  EXPECT_EQ(eval_mask.dtype(), DType::kBool);
  EXPECT_THAT(eval_mask.to_vector<int>(), Each(1));
  auto [h, hm] = ops::native_dropout(ops::ones({8}, {.dtype = DType::kFloat16}), 0.5, true);
  EXPECT_EQ(h.dtype(), DType::kFloat16);
  for (float e : h.to_vector<float>()) EXPECT_TRUE(e == 0.0f || e == 2.0f);
  auto [e, em] = ops::native_dropout(ops::zeros({0, 3}), 0.5, true);
  EXPECT_THAT(vec(e.sizes()), ElementsAre(0, 3));
  EXPECT_EQ(em.dtype(), DType::kBool);
}

TEST(RandomTest, NativeDropoutErrorsAndMeta) {
  EXPECT_THAT([] { ops::native_dropout(ops::ones({2}), 1.5, true); },
              ThrowsMessage<Error>(HasSubstr("dropout probability has to be between 0 and 1, but got 1.5")));
  EXPECT_THAT([] { ops::native_dropout(ops::ones({2}, {.dtype = DType::kInt64}), 0.5, true); },
              ThrowsMessage<Error>(HasSubstr("expected a floating point input, got i64")));
  EXPECT_NO_THROW(ops::native_dropout(ops::ones({2}, {.dtype = DType::kInt64}), 0.5, false));
  manual_seed(0);
  auto [y, mask] = ops::native_dropout(ops::empty({2, 3}, {.dtype = DType::kFloat16, .device = kMeta}), 0.5, true);
  EXPECT_TRUE(y.device().is_meta());
  EXPECT_EQ(y.dtype(), DType::kFloat16);
  EXPECT_TRUE(mask.device().is_meta());
  EXPECT_EQ(mask.dtype(), DType::kBool);
  EXPECT_THAT(vec(mask.sizes()), ElementsAre(2, 3));
  EXPECT_EQ(default_generator_state().offset, 0u);
  EXPECT_THAT([] { ops::native_dropout(ops::empty({2}, {.device = kMeta}), -1, true); },
              ThrowsMessage<Error>(HasSubstr("dropout probability has to be between 0 and 1")));
}

}  // namespace
}  // namespace opspec
