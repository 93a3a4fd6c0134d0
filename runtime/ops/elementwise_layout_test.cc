// Elementwise results keep their inputs' layout as PyTorch's TensorIterator
// does (See Note [Memory formats]), on the CPU and on Meta alike, and the op
// sequences that depend on it follow: strides below were printed by
// python3-torch 1.13, whose TensorIterator rules 2.x keeps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/dispatch/op_names_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace {

using ::testing::ElementsAre;

SizeVec strides_of(const Tensor& t) { return SizeVec(t.strides().begin(), t.strides().end()); }

template <class F>
std::vector<std::string> ops_of(F&& f) {
  test_util::OpNames mode;
  {
    ModeGuard g(mode);
    f();
  }
  return mode.names;
}

// A [4, 3] tensor laid out transposed (strides [1, 4]) on device.
Tensor transposed(Device device) {
  if (device.is_meta()) return ops::t(ops::empty({3, 4}, {.device = device}));
  return ops::t(ops::randn({3, 4}));
}

// A [2, 3, 4, 5] tensor laid out channels-last (strides [60, 1, 15, 3]).
Tensor channels_last(Device device) {
  Tensor base = device.is_meta() ? ops::empty({2, 4, 5, 3}, {.device = device}) : ops::randn({2, 4, 5, 3});
  return ops::permute(base, {0, 3, 1, 2});
}

class ElementwiseLayoutTest : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override { manual_seed(3); }
};

TEST_P(ElementwiseLayoutTest, UnaryResultsKeepALayout) {
  const Tensor x = transposed(GetParam());
  for (const Tensor& y : {ops::relu(x), ops::neg(x), ops::sin(x), ops::isnan(x), ops::logical_not(x), x * 2.0}) {
    EXPECT_THAT(strides_of(y), ElementsAre(1, 4)) << y.meta_str();
  }
  const Tensor c = channels_last(GetParam());
  for (const Tensor& y : {ops::exp(c), ops::sigmoid(c), ops::isinf(c), c + 1.0}) {
    EXPECT_THAT(strides_of(y), ElementsAre(60, 1, 15, 3)) << y.meta_str();
    EXPECT_TRUE(is_contiguous(y, MemoryFormat::kChannelsLast));
  }
}

TEST_P(ElementwiseLayoutTest, NonDenseInputsGetDenseResultsInTheirDimOrder) {
  // x[:, ::2] of a transposed [4, 6]: sizes [6, 2], strides [1, 12]: dense result [1, 6].
  const Tensor base = GetParam().is_meta() ? ops::empty({4, 6}, {.device = GetParam()}) : ops::randn({4, 6});
  const Tensor x = ops::slice(ops::t(base), 1, 0, 4, 2);
  ASSERT_THAT(strides_of(x), ElementsAre(1, 12));
  EXPECT_THAT(strides_of(ops::neg(x)), ElementsAre(1, 6));
  EXPECT_THAT(strides_of(x + 1.0), ElementsAre(1, 6));
}

TEST_P(ElementwiseLayoutTest, TheFirstInputDecidesBetweenLayouts) {
  const Tensor a = transposed(GetParam());
  const Tensor b = GetParam().is_meta() ? ops::empty({4, 3}, {.device = GetParam()}) : ops::randn({4, 3});
  EXPECT_THAT(strides_of(a + b), ElementsAre(1, 4));
  EXPECT_THAT(strides_of(b + a), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(ops::eq(a, b)), ElementsAre(1, 4));
  EXPECT_THAT(strides_of(ops::maximum(b, a)), ElementsAre(3, 1));
  // A broadcast input defers to the next on the dims it broadcasts over.
  const Tensor row = GetParam().is_meta() ? ops::empty({3}, {.device = GetParam()}) : ops::randn({3});
  EXPECT_THAT(strides_of(row + a), ElementsAre(1, 4));
  const Tensor col = GetParam().is_meta() ? ops::empty({4, 1}, {.device = GetParam()}) : ops::randn({4, 1});
  EXPECT_THAT(strides_of(col * a), ElementsAre(1, 4));
  // where iterates condition, self, other: a contiguous condition decides.
  EXPECT_THAT(strides_of(ops::where(ops::gt(b, 0.0), a, a)), ElementsAre(3, 1));
  EXPECT_THAT(strides_of(ops::where(ops::gt(a, 0.0), b, b)), ElementsAre(1, 4));
}

TEST_P(ElementwiseLayoutTest, InPlaceOpsKeepTheirSelf) {
  Tensor a = transposed(GetParam());
  const Tensor one = GetParam().is_meta() ? ops::empty({3}, {.device = GetParam()}) : ops::ones({3});
  const Tensor r = ops::add_(a, one);
  EXPECT_TRUE(r.is_same(a));
  EXPECT_THAT(strides_of(a), ElementsAre(1, 4));
}

INSTANTIATE_TEST_SUITE_P(Devices, ElementwiseLayoutTest, ::testing::Values(kCPU, kMeta),
                         [](const auto& info) { return std::string(info.param.is_cpu() ? "cpu" : "meta"); });

TEST(ElementwiseLayout, ValuesAreThoseOfTheRowMajorComputation) {
  manual_seed(4);
  const Tensor a = transposed(kCPU), b = ops::randn({4, 3});
  const Tensor a_rows = ops::contiguous(a);
  EXPECT_TRUE(ops::equal(a + b, a_rows + b));
  EXPECT_TRUE(ops::equal(ops::tanh(a), ops::tanh(a_rows)));
  const Tensor c = channels_last(kCPU);
  EXPECT_TRUE(ops::equal(ops::mul(c, c), ops::mul(ops::contiguous(c), ops::contiguous(c))));
}

TEST(ElementwiseLayout, ReshapeOfATransposedResultCopiesAsPyTorchDoes) {
  // python3-torch 1.13: (x.t() + 1).reshape(-1) dispatches t, add, clone, _unsafe_view;
  // relu(x.t()).view(4, 3) is a view of the transposed result.
  const Tensor x = ops::randn({3, 4});
  EXPECT_THAT(ops_of([&] { ops::reshape(ops::t(x) + 1.0, {-1}); }),
              ElementsAre("aten::t", "aten::add.Tensor", "aten::clone", "aten::_unsafe_view"));
  EXPECT_THAT(ops_of([&] { ops::view(ops::relu(ops::t(x)), {4, 3}); }),
              ElementsAre("aten::t", "aten::relu", "aten::view"));
  EXPECT_THROW(ops::view(ops::t(x) * 2.0, {-1}), Error);
}

}  // namespace
}  // namespace opspec
