// Tests of the CPU's cross_entropy over rows (See Note [Cross-entropy over
// rows] in runtime/fused/cross_entropy_rows.h): eager's bits for rows read
// where they lie, eager's error for a target out of range, and what it declines.
#include "runtime/fused/cross_entropy_rows.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>

#include "runtime/core/error.h"
#include "runtime/core/generator.h"
#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace cross_entropy_rows_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// Result: one call of the CPU's kernel: whether it accepted, how often start ran, the loss.
struct Result {
  bool accepted = false;
  int starts = 0;
  Tensor loss;
};

Result run(const Tensor& rows, const Tensor& target, int64_t reduction = 1, int64_t ignore_index = -100) {
  const CrossEntropyRowsFn fn = cross_entropy_rows(DeviceType::kCPU);
  EXPECT_NE(fn, nullptr);
  Result r;
  r.loss = make_tensor({}, rows.dtype(), kCPU);
  r.accepted = fn(rows, target, reduction, ignore_index, r.loss, [&] { ++r.starts; });
  return r;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.numel() == 1 && b.numel() == 1 &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.element_size())) == 0;
}

// GPT-2's loss: the logits but the last position, as rows of a [B, T - 1, V]
// slice; and plain [N, C] matrices. Mean and sum, some targets ignored, f32
// and f64, one and two threads.
TEST(CrossEntropyRowsTest, MatchesEagerBitForBit) {
  for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const int64_t vocab : {64, 512, 1000}) {
      manual_seed(21);
      const Tensor logits = ops::to(ops::mul(ops::randn({4, 128, vocab}), 3.0), dtype);
      const Tensor sliced = ops::slice(logits, 1, 0, 127);
      Tensor target = ops::remainder(ops::arange(4 * 127, {.dtype = DType::kInt64}), vocab);
      target.data_ptr<int64_t>()[5] = -100;
      target.data_ptr<int64_t>()[300] = -100;
      const Tensor flat = ops::reshape(ops::slice(ops::randn({300, vocab + 3}), 1, 0, vocab), {300, vocab});
      const Tensor flat_target = ops::remainder(ops::arange(300, {.dtype = DType::kInt64}), vocab);
      for (const int64_t reduction : {1, 2}) {
        for (const int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message() << dtype_short_name(dtype) << " vocab " << vocab << " reduction "
                                          << reduction << ", " << threads << " thread(s)");
          NumThreadsGuard guard(threads);
          const Result r = run(sliced, target, reduction);
          ASSERT_TRUE(r.accepted);
          EXPECT_EQ(r.starts, 1);
          const auto red = static_cast<ops::Reduction>(reduction);
          const Tensor want = ops::cross_entropy(ops::reshape(sliced, {-1, vocab}), target, std::nullopt, red);
          EXPECT_TRUE(same_bits(r.loss, ops::to(want, dtype))) << r.loss.item<double>() << " vs " << want.item<double>();
          const Tensor flat_rows = ops::to(flat, dtype);
          const Result f = run(flat_rows, flat_target, reduction, 7);
          ASSERT_TRUE(f.accepted);
          EXPECT_TRUE(same_bits(f.loss, ops::cross_entropy(flat_rows, flat_target, std::nullopt, red, 7)));
        }
      }
    }
  }
}

TEST(CrossEntropyRowsTest, ATargetOutOfRangeIsRefusedAsNllLossRefusesIt) {
  const Tensor rows = ops::randn({3, 4, 10});
  Tensor target = ops::zeros({12}, {.dtype = DType::kInt64});
  target.data_ptr<int64_t>()[7] = 10;
  EXPECT_THAT([&] { run(rows, target); },
              ThrowsMessage<Error>(HasSubstr("aten::nll_loss_forward: Target 10 is out of bounds.")));
  EXPECT_THAT([&] { ops::cross_entropy(ops::reshape(rows, {-1, 10}), target); },
              ThrowsMessage<Error>(HasSubstr("aten::nll_loss_forward: Target 10 is out of bounds.")));
}

TEST(CrossEntropyRowsTest, DeclinesWhatEagerComputesAnotherWay) {
  const Tensor rows = ops::randn({6, 5}), target = ops::zeros({6}, {.dtype = DType::kInt64});
  const Tensor half = ops::to(rows, DType::kFloat16);
  const Tensor columns = ops::t(ops::randn({5, 6}));  // classes not contiguous
  const Tensor empty = ops::randn({0, 5});
  EXPECT_FALSE(run(rows, target, /*reduction=*/0).accepted);  // one loss per item
  EXPECT_FALSE(run(half, target).accepted);
  EXPECT_FALSE(run(columns, target).accepted);
  EXPECT_FALSE(run(rows, ops::zeros({5}, {.dtype = DType::kInt64})).accepted);
  EXPECT_FALSE(run(rows, ops::zeros({6}, {.dtype = DType::kInt32})).accepted);
  const Result e = run(empty, ops::zeros({0}, {.dtype = DType::kInt64}));
  EXPECT_FALSE(e.accepted);
  EXPECT_EQ(e.starts, 0);
}

}  // namespace cross_entropy_rows_test
}  // namespace opspec::internal
