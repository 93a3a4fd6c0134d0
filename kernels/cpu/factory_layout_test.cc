// Layouts of the factories' results (kernels/cpu/factory.cc, random.cc, their
// Meta kernels in kernels/common/factory_meta.cc): empty in a memory format,
// and the *_like factories in self's layout or the format asked for, checked
// against the strides and errors of PyTorch 1.13. See Note [Memory formats].
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>

#include "runtime/core/generator.h"
#include "runtime/ops/layout_cases_test_util.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace factory_layout_test {

using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;
using layout_cases::Expect;
using layout_cases::expect_result;
using layout_cases::LayoutInput;

std::vector<int64_t> vec(IntArrayRef r) { return {r.begin(), r.end()}; }

TEST(FactoryLayoutTest, EmptyInAMemoryFormat) {
  for (Device device : {kCPU, kMeta}) {
    SCOPED_TRACE(device.str());
    auto empty = [&](IntArrayRef size, std::optional<MemoryFormat> format) {
      return ops::empty(size, {.device = device, .memory_format = format});
    };
    // torch.empty(2, 3, 4, 5, memory_format=torch.channels_last).stride() and the like.
    EXPECT_THAT(vec(empty({2, 3, 4, 5}, MemoryFormat::kChannelsLast).strides()), ElementsAre(60, 1, 15, 3));
    EXPECT_THAT(vec(empty({2, 3, 4, 5, 6}, MemoryFormat::kChannelsLast3d).strides()),
                ElementsAre(360, 1, 90, 18, 3));
    EXPECT_THAT(vec(empty({2, 3, 1, 5}, MemoryFormat::kChannelsLast).strides()), ElementsAre(15, 1, 15, 3));
    EXPECT_THAT(vec(empty({2, 3, 0, 5}, MemoryFormat::kChannelsLast).strides()), ElementsAre(0, 1, 15, 3));
    EXPECT_THAT(vec(empty({2, 3}, MemoryFormat::kContiguous).strides()), ElementsAre(3, 1));
    EXPECT_THAT(vec(empty({2, 3}, std::nullopt).strides()), ElementsAre(3, 1));
    EXPECT_THAT([&] { empty({2, 3, 4}, MemoryFormat::kChannelsLast); },
                ThrowsMessage<Error>(HasSubstr(
                    "aten::empty.memory_format: required rank 4 tensor to use channels_last format")));
    EXPECT_THAT([&] { empty({2, 3, 4, 5}, MemoryFormat::kChannelsLast3d); },
                ThrowsMessage<Error>(HasSubstr("required rank 5 tensor to use channels_last_3d format")));
    EXPECT_THAT([&] { empty({2, 3, 4, 5}, MemoryFormat::kPreserve); },
                ThrowsMessage<Error>(HasSubstr("aten::empty.memory_format: unsupported memory format Preserve")));
    // A negative size is refused before the format is looked at, as in PyTorch.
    EXPECT_THAT([&] { empty({-1, 3, 4}, MemoryFormat::kChannelsLast); },
                ThrowsMessage<Error>(HasSubstr("Trying to create tensor with negative dimension -1")));
  }
  // The storage is exactly the elements: a dense layout allocates numel.
  const Tensor e = ops::empty({2, 3, 4, 5}, {.memory_format = MemoryFormat::kChannelsLast});
  EXPECT_EQ(e.impl()->storage()->nbytes(), static_cast<size_t>(e.nbytes()));
}

// Every *_like factory, on a cpu or a meta self, against PyTorch's strides.
TEST(FactoryLayoutTest, LikeFactoriesKeepOrSetTheLayoutAsPyTorch) {
  using Like = std::function<Tensor(const Tensor&, TensorOptions)>;
  const std::vector<std::pair<std::string, Like>> likes = {
      {"empty_like", [](const Tensor& t, TensorOptions o) { return ops::empty_like(t, o); }},
      {"zeros_like", [](const Tensor& t, TensorOptions o) { return ops::zeros_like(t, o); }},
      {"ones_like", [](const Tensor& t, TensorOptions o) { return ops::ones_like(t, o); }},
      {"full_like", [](const Tensor& t, TensorOptions o) { return ops::full_like(t, 7, o); }},
      {"rand_like", [](const Tensor& t, TensorOptions o) { return ops::rand_like(t, o); }},
      {"randn_like", [](const Tensor& t, TensorOptions o) { return ops::randn_like(t, o); }},
  };
  for (const layout_cases::LayoutCase& c : layout_cases::cases()) {
    SCOPED_TRACE(layout_cases::case_name(c));
    const Tensor self = layout_cases::input(c.input);
    for (const auto& [name, like] : likes) {
      SCOPED_TRACE(name);
      expect_result([&] { return like(self, {.memory_format = c.format}); }, c.like);
      expect_result([&] { return like(layout_cases::on_meta(self), {.memory_format = c.format}); }, c.like);
      // Across devices the target's kernel lays the result out the same way.
      expect_result([&] { return like(self, {.device = kMeta, .memory_format = c.format}); }, c.like);
      expect_result([&] { return like(layout_cases::on_meta(self), {.device = kCPU, .memory_format = c.format}); },
                    c.like);
    }
  }
}

// A dense but permuted result is filled everywhere: the constant fills cover
// the whole storage, whatever the dims' order.
TEST(FactoryLayoutTest, FillsCoverEveryElementOfAPermutedResult) {
  for (const LayoutInput& in : layout_cases::inputs()) {
    SCOPED_TRACE(in.name);
    for (std::optional<MemoryFormat> f : {std::optional<MemoryFormat>(), std::optional(MemoryFormat::kContiguous)}) {
      EXPECT_THAT(ops::zeros_like(in.tensor, {.dtype = DType::kInt32, .memory_format = f}).to_vector<int32_t>(),
                  Each(0));
      EXPECT_THAT(ops::ones_like(in.tensor, {.memory_format = f}).to_vector<float>(), Each(1.0f));
      EXPECT_THAT(ops::full_like(in.tensor, 2.5, {.dtype = DType::kFloat64, .memory_format = f}).to_vector<double>(),
                  Each(2.5));
    }
  }
  const Tensor cl = layout_cases::input("channels_last");
  const Tensor z = ops::zeros_like(cl, {.dtype = DType::kFloat16});
  EXPECT_THAT(vec(z.strides()), ElementsAre(60, 1, 15, 3));
  EXPECT_THAT(z.to_vector<float>(), Each(0.0f));
  // fill_ on a dense permuted view takes the flat path too, and only touches the view.
  Tensor base = ops::zeros({4, 6});
  Tensor view = ops::t(ops::slice(base, 0, 0, 2));  // [6, 2] (1, 6): dense, inside base
  ops::fill_(view, 3);
  const std::vector<float> b = base.to_vector<float>();
  EXPECT_THAT(std::vector<float>(b.begin(), b.begin() + 12), Each(3.0f));
  EXPECT_THAT(std::vector<float>(b.begin() + 12, b.end()), Each(0.0f));
}

// rand_like / randn_like draw element i (row-major logical index) from
// counter first + i whatever the layout: a channels-last result holds the
// values of a contiguous one (See Note [Random draws per dtype]).
TEST(FactoryLayoutTest, RandomLikeValuesFollowTheLogicalIndex) {
  const Tensor contiguous = layout_cases::input("contiguous");
  for (const LayoutInput& in : layout_cases::inputs()) {
    if (in.tensor.dim() != 4 || in.tensor.sizes() != contiguous.sizes()) continue;
    SCOPED_TRACE(in.name);
    for (auto like : {&ops::rand_like, &ops::randn_like}) {
      manual_seed(3);
      const Tensor got = like(in.tensor, {.memory_format = MemoryFormat::kChannelsLast}, {});
      const uint64_t offset = default_generator_state().offset;
      manual_seed(3);
      const Tensor want = like(contiguous, {}, {});
      EXPECT_EQ(default_generator_state().offset, offset);  // numel offsets either way
      EXPECT_THAT(vec(got.strides()), ElementsAre(60, 1, 15, 3));
      EXPECT_EQ(got.to_vector<float>(), want.to_vector<float>());
    }
  }
  manual_seed(9);
  const Tensor r = ops::rand_like(layout_cases::input("matrix_t"), {.dtype = DType::kFloat64});  // [3, 2] (1, 3)
  EXPECT_THAT(vec(r.strides()), ElementsAre(1, 3));
  const std::vector<double> v = r.to_vector<double>();
  for (uint64_t i = 0; i < 6; ++i) EXPECT_EQ(v[i], internal::uniform_double(9, i));
}

}  // namespace factory_layout_test
}  // namespace opspec
