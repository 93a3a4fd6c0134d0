// Layouts and values of clone and _to_copy (kernels/cpu/conversion.cc and
// their Meta kernels in kernels/meta/elementwise_meta.cc): preserve_format
// keeps a dense self's strides and a strided self's dims' order, an explicit
// format sets its own, as PyTorch 1.13's results show. See Note [Memory formats].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "runtime/ops/layout_cases_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace conversion_test {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using layout_cases::as_int;
using layout_cases::Expect;
using layout_cases::expect_result;
using layout_cases::LayoutInput;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

TEST(ConversionLayoutTest, CloneAndToCopyFollowPyTorchsStrides) {
  for (const layout_cases::LayoutCase& c : layout_cases::cases()) {
    SCOPED_TRACE(layout_cases::case_name(c));
    const Tensor self = layout_cases::input(c.input);
    const Tensor meta = layout_cases::on_meta(self);
    expect_result([&] { return ops::clone(self, as_int(c.format)); }, c.like);
    expect_result([&] { return ops::clone(meta, as_int(c.format)); }, c.like);
    for (DType dt : {DType::kFloat32, DType::kFloat64}) {
      expect_result([&] { return ops::_to_copy(self, {.dtype = dt, .memory_format = c.format}); }, c.like);
      expect_result([&] { return ops::_to_copy(meta, {.dtype = dt, .memory_format = c.format}); }, c.like);
      expect_result([&] { return ops::_to_copy(self, {.dtype = dt, .device = kMeta, .memory_format = c.format}); },
                    c.like);
    }
    if (!c.like.error.empty()) continue;
    // The copies hold self's values, element for element, in any layout.
    const std::vector<float> want = self.to_vector<float>();
    const Tensor cloned = ops::clone(self, as_int(c.format));
    EXPECT_EQ(cloned.to_vector<float>(), want);
    EXPECT_FALSE(cloned.is_alias_of(self));
    const Tensor wide = ops::_to_copy(self, {.dtype = DType::kFloat64, .memory_format = c.format});
    const std::vector<double> got = wide.to_vector<double>();
    EXPECT_EQ(std::vector<float>(got.begin(), got.end()), want);
    EXPECT_EQ(ops::_to_copy(self, {.memory_format = c.format}).to_vector<float>(), want);
  }
}

TEST(ConversionLayoutTest, CloneTakesAMemoryFormat) {
  const Tensor x = layout_cases::input("transposed");  // [2, 5, 4, 3] (60, 1, 5, 20)
  EXPECT_THAT(vec(ops::clone(x).strides()), ElementsAre(60, 1, 5, 20));
  EXPECT_THAT(vec(ops::clone(x, MemoryFormat::kContiguous).strides()), ElementsAre(60, 12, 3, 1));
  EXPECT_THAT(vec(ops::clone(x, MemoryFormat::kChannelsLast).strides()), ElementsAre(60, 1, 15, 5));
  EXPECT_THAT(vec(ops::clone(x, MemoryFormat::kPreserve).strides()), ElementsAre(60, 1, 5, 20));
  EXPECT_THAT([&] { ops::clone(ops::t(ops::ones({2, 3})), MemoryFormat::kChannelsLast); },
              ThrowsMessage<Error>(HasSubstr("aten::clone: required rank 4 tensor to use channels_last format")));
  EXPECT_THAT([&] { ops::clone(x, int64_t{7}); },
              ThrowsMessage<Error>(HasSubstr("aten::clone: 7 is not a memory format")));
}

// A 0-dim tensor and empty tensors take the same paths.
TEST(ConversionLayoutTest, ScalarsAndEmptyTensors) {
  const Tensor s = ops::scalar_tensor(2.5);
  EXPECT_EQ(ops::clone(s).item<float>(), 2.5f);
  EXPECT_EQ(ops::_to_copy(s, {.dtype = DType::kFloat64}).item<double>(), 2.5);
  const Tensor e = ops::t(ops::empty({0, 3}));  // [3, 0] (1, 3)
  const Tensor c = ops::clone(e);
  EXPECT_THAT(vec(c.sizes()), ElementsAre(3, 0));
  EXPECT_THAT(vec(c.strides()), ElementsAre(1, 3));  // torch: (1, 3), an empty tensor counts as dense
  EXPECT_EQ(c.numel(), 0);
  const Tensor cl = ops::clone(ops::empty({2, 0, 4, 5}), MemoryFormat::kChannelsLast);
  EXPECT_THAT(vec(cl.strides()), ElementsAre(0, 1, 0, 0));  // torch: (0, 1, 0, 0)
}

}  // namespace conversion_test
}  // namespace opspec
