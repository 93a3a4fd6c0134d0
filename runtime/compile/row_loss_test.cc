// Tests of the fused backend's cross_entropy over rows (See Note
// [Cross-entropy over rows] in runtime/fused/cross_entropy_rows.h): a
// language model's loss read through its reshape, eager's bits, the kernel
// record, and eager's ops when the device declines.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/compile/backend.h"
#include "runtime/compile/compile.h"
#include "runtime/compile/fusion_test_util.h"
#include "runtime/compile/logging.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/kernel_record.h"
#include "runtime/fused/cross_entropy_rows.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace row_loss_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using fusion_test::bits_equal;

// lm_loss: GPT-2's head and loss: logits, and the next-token cross_entropy.
std::vector<Tensor> lm_loss(const Tensor& h, const Tensor& w, const Tensor& idx) {
  const Tensor logits = ops::linear(h, w);
  const int64_t t = idx.size(1), vocab = logits.size(2);
  const Tensor pred = ops::reshape(ops::slice(logits, 1, 0, t - 1), {-1, vocab});
  const Tensor next = ops::reshape(ops::slice(idx, 1, 1, t), {-1});
  return {logits, ops::cross_entropy(pred, next)};
}

TEST(RowLossTest, LanguageModelLossReadsTheLogitsWhereTheyLie) {
  manual_seed(31);
  const Tensor h = ops::randn({4, 32, 48}), w = ops::randn({200, 48});
  const Tensor idx = ops::view(ops::remainder(ops::arange(4 * 32, {.dtype = DType::kInt64}), 200), {4, 32});
  CompiledFunction cf = compile(lm_loss, {.backend_fn = fused_backend});
  const std::vector<Tensor> want = lm_loss(h, w, idx);
  cf(h, w, idx);  // compiles
  auto recorder = std::make_shared<fusion_test::KernelRecorder>(/*done_lines=*/false);
  std::vector<Tensor> got;
  {
    KernelObserverGuard guard(recorder);
    got = cf(h, w, idx);
  }
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(bits_equal(got[0], want[0]));
  EXPECT_TRUE(bits_equal(got[1], want[1]));
  EXPECT_THAT(recorder->lines,
              ElementsAre("[fused] fused_cross_entropy_loss_0(in0=f32[4, 31, 200] in1=i64[124] out0=f32[] )"));
  EXPECT_TRUE(bits_equal(cf(h, w, idx)[1], want[1]));  // unobserved
}

TEST(RowLossTest, LogsTheLossAsAKernel) {
  const Tensor h = ops::randn({2, 8, 16}), w = ops::randn({40, 16});
  const Tensor idx = ops::view(ops::remainder(ops::arange(16, {.dtype = DType::kInt64}), 40), {2, 8});
  CompiledFunction cf = compile(lm_loss, {.backend_fn = fused_backend});
  const std::string log = fusion_test::fusion_log([&] { cf(h, w, idx); });
  EXPECT_THAT(log, HasSubstr("[opspec:fusion] fused_cross_entropy_loss_0: aten::reshape, aten::cross_entropy_loss -> "
                             "1 kernel, 2 inputs, 1 output, reads %slice's rows where they lie\n"));
  EXPECT_THAT(log, HasSubstr("1 fused kernel(s) for 2 of "));
}

TEST(RowLossTest, AReshapeUsedElsewhereStillRunsAndTheLossReadsIt) {
  manual_seed(32);
  const Tensor x = ops::randn({3, 9, 20}), target = ops::remainder(ops::arange(24, {.dtype = DType::kInt64}), 20);
  auto fn = [](const Tensor& x, const Tensor& target) {
    const Tensor rows = ops::reshape(ops::slice(x, 1, 1, 9), {-1, 20});
    return std::vector<Tensor>{ops::cross_entropy(rows, target, std::nullopt, ops::Reduction::kSum, 3), rows};
  };
  CompiledFunction cf = compile(fn, {.backend_fn = fused_backend});
  const std::vector<Tensor> want = fn(x, target), got = cf(x, target);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(bits_equal(got[0], want[0]));
  EXPECT_TRUE(bits_equal(got[1], want[1]));
}

TEST(RowLossTest, WeightsSmoothingAndUnreducedLossesRunAsEager) {
  manual_seed(33);
  const Tensor x = ops::randn({12, 7}), target = ops::remainder(ops::arange(12, {.dtype = DType::kInt64}), 7);
  const Tensor weight = ops::rand({7});
  auto fn = [](const Tensor& x, const Tensor& target, const Tensor& weight) {
    return std::vector<Tensor>{ops::cross_entropy(x, target, weight),
                               ops::cross_entropy(x, target, std::nullopt, ops::Reduction::kMean, -100, 0.1),
                               ops::cross_entropy(x, target, std::nullopt, ops::Reduction::kNone)};
  };
  CompiledFunction cf = compile(fn, {.backend_fn = fused_backend});
  cf(x, target, weight);
  auto recorder = std::make_shared<fusion_test::KernelRecorder>(/*done_lines=*/false);
  std::vector<Tensor> got;
  {
    KernelObserverGuard guard(recorder);
    got = cf(x, target, weight);
  }
  const std::vector<Tensor> want = fn(x, target, weight);
  ASSERT_EQ(got.size(), 3u);
  for (size_t k = 0; k < 3; ++k) EXPECT_TRUE(bits_equal(got[k], want[k])) << k;
  for (const std::string& line : recorder->lines) EXPECT_THAT(line, ::testing::Not(HasSubstr("cross_entropy")));
}

TEST(RowLossTest, WithoutADeviceKernelTheReshapeAndTheLossRunAsEager) {
  manual_seed(34);
  const Tensor h = ops::randn({2, 16, 24}), w = ops::randn({50, 24});
  const Tensor idx = ops::view(ops::remainder(ops::arange(32, {.dtype = DType::kInt64}), 50), {2, 16});
  CompiledFunction cf = compile(lm_loss, {.backend_fn = fused_backend});
  const internal::CrossEntropyRowsFn saved = internal::cross_entropy_rows(DeviceType::kCPU);
  internal::register_cross_entropy_rows(DeviceType::kCPU, nullptr);
  std::vector<Tensor> got;
  try {
    got = cf(h, w, idx);
  } catch (...) {
    internal::register_cross_entropy_rows(DeviceType::kCPU, saved);
    throw;
  }
  internal::register_cross_entropy_rows(DeviceType::kCPU, saved);
  const std::vector<Tensor> want = lm_loss(h, w, idx);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_TRUE(bits_equal(got[1], want[1]));
}

TEST(RowLossTest, ATargetOutOfRangeFailsAsInEager) {
  const Tensor x = ops::randn({2, 5, 6});
  Tensor target = ops::zeros({8}, {.dtype = DType::kInt64});
  target.data_ptr<int64_t>()[3] = 6;
  auto fn = [](const Tensor& x, const Tensor& target) {
    return ops::cross_entropy(ops::reshape(ops::slice(x, 1, 0, 4), {-1, 6}), target);
  };
  CompiledFunction cf = compile(fn, {.backend_fn = fused_backend});
  EXPECT_THAT([&] { cf(x, target); }, ::testing::ThrowsMessage<Error>(HasSubstr("Target 6 is out of bounds.")));
}

}  // namespace row_loss_test
}  // namespace opspec
