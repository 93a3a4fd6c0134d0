// DebugMode records the fused backend's kernels like PyTorch's triton kernel
// lines, between the aten ops that still run through the dispatcher.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/debug_mode.h"
#include "runtime/compile/backend.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec {
namespace fused_debug_mode_test {

TEST(FusedDebugModeTest, FusedKernelsAreKernelRecordsWithHashes) {
  const Tensor x = ops::tensor({1, -2, 3, -4}, {2, 2});
  const Tensor w = ops::tensor({1, 0, 0, 1}, {2, 2});
  const Tensor b = ops::tensor({0.5, -0.5}, {2});
  Graph g = make_fx([](const Tensor& x, const Tensor& w, const Tensor& b) {
    return ops::relu(ops::mm(x, w) * 2.0 + b);
  })(x, w, b);
  CompiledGraph run = fused_backend(g, {x, w, b});
  DebugMode dm;
  Tensor out;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    out = run({x, w, b})[0];
  }
  EXPECT_EQ(out.to_vector<float>(), (std::vector<float>{2.5f, 0.0f, 6.5f, 0.0f}));
  EXPECT_EQ(dm.debug_string(),
            "    aten::mm(t: f32[2, 2], t: f32[2, 2])  ->  t: f32[2, 2]  # {'input_hash': ((10.0, 2.0), {}), 'hash': 10.0}\n"
            "    [fused] fused_mul_add_relu_0(in0=t: f32[2, 2], in1=t: f32[2], out0=t: f32[2, 2], n=4)\n"
            "    # pre-kernel hashes: {in0: 10.0, in1: 1.0, out0: 0.0}\n"
            "    # post-kernel hashes: {in0: 10.0, in1: 1.0, out0: 9.0}\n");
}

TEST(FusedDebugModeTest, NoRecordsOutsideDebugMode) {
  const Tensor x = ops::tensor({1, -2}, {2});
  Graph g = make_fx([](const Tensor& x) { return ops::relu(x) * 2.0; })(x);
  CompiledGraph run = fused_backend(g, {x});
  DebugMode dm;
  {
    auto scope = dm.enter();
    ops::neg(x);
  }
  run({x});  // after the scope: not recorded
  ASSERT_EQ(dm.logs().size(), 1u);
  EXPECT_EQ(dm.logs()[0].name, "aten::neg");
}

// Empty outputs have no buffer: zeroing them for the pre-kernel hashes once
// called memset(nullptr, 0, 0), undefined behaviour UBSan reports (ci/sanitize).
TEST(FusedDebugModeTest, EmptyTensorsAreRecordedWithoutTouchingMemory) {
  const Tensor x = ops::zeros({0, 3});
  Graph g = make_fx([](const Tensor& x) { return ops::relu(x) * 2.0; })(x);
  CompiledGraph run = fused_backend(g, {x});
  DebugMode dm;
  Tensor out;
  {
    auto scope = dm.enter();
    auto hashes = DebugMode::log_tensor_hashes(HashKind::kNorm, /*hash_inputs=*/true);
    out = run({x})[0];
  }
  EXPECT_EQ(out.numel(), 0);
  EXPECT_THAT(out.sizes(), ::testing::ElementsAre(0, 3));
  EXPECT_THAT(dm.debug_string(), ::testing::HasSubstr("[fused] fused_relu_mul_0(in0=t: f32[0, 3], out0=t: f32[0, 3], n=0)"));
}

}  // namespace
}  // namespace opspec
