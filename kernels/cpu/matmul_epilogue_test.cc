// Tests of the CPU's side of Note [Matmul epilogues]: linear's product by
// blocks (the bits of eager's linear, every element in exactly one block,
// start before any block, declines with nothing called) and fused programs
// run on one block of their output.
#include "runtime/fused/matmul_epilogue.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "kernels/cpu/copy.h"
#include "kernels/cpu/fused_codegen.h"
#include "runtime/core/generator.h"
#include "runtime/core/parallel.h"
#include "runtime/fused/fused_kernel.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace matmul_epilogue_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// bits_equal: same dtype, sizes and element bits.
::testing::AssertionResult bits_equal(const Tensor& got, const Tensor& want) {
  if (got.dtype() != want.dtype() || format_sizes(got.sizes()) != format_sizes(want.sizes())) {
    return ::testing::AssertionFailure() << "got " << got.meta_str() << ", want " << want.meta_str();
  }
  const Tensor a = contiguous_cpu(got), b = contiguous_cpu(want);
  if (std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())) != 0) {
    return ::testing::AssertionFailure() << "the bits differ";
  }
  return ::testing::AssertionSuccess();
}

// BlocksRun: one call of the CPU's runner: the product, how often each element's
// block finished, and how many blocks ran before start().
struct BlocksRun {
  bool accepted = false;
  Tensor out;
  std::vector<int> finished;  // per element of out
  int blocks = 0, early_blocks = 0, starts = 0;
};

BlocksRun run_linear_blocks(const Tensor& x, const Tensor& w, const Tensor* b) {
  const LinearBlocksFn fn = linear_blocks(DeviceType::kCPU);
  EXPECT_NE(fn, nullptr);
  BlocksRun r;
  const int64_t m = w.size(0), n = x.numel() / x.size(-1);
  r.out = make_tensor({n, m}, x.dtype(), kCPU);
  r.finished.assign(static_cast<size_t>(n * m), 0);
  std::mutex mu;
  std::atomic<bool> started{false};
  r.accepted = fn(
      r.out, x, w, b,
      [&] {
        ++r.starts;
        started = true;
      },
      [&](const MatrixBlock& blk) {
        std::lock_guard<std::mutex> lock(mu);
        ++r.blocks;
        if (!started) ++r.early_blocks;
        for (int64_t i = blk.row0; i < blk.row0 + blk.rows; ++i) {
          for (int64_t j = blk.col0; j < blk.col0 + blk.cols; ++j) ++r.finished[static_cast<size_t>(i * m + j)];
        }
      });
  return r;
}

// Products through every path of product() (a summed loop, one BLAS call, a
// grid of blocks: GPT-2's linears and a ragged one), with and without a bias,
// in f32 and f64: the bits of ops::linear, on one thread and on two.
TEST(LinearBlocksTest, MatchesLinearBitForBitOnEveryPath) {
  struct Shape {
    std::vector<int64_t> x;
    int64_t m;
  };
  const Shape shapes[] = {{{4, 8}, 8},         {{2, 3, 16}, 24},   {{64, 48}, 40},
                          {{4, 128, 256}, 1024}, {{512, 1024}, 256}, {{300, 200}, 520}};
  for (const DType dtype : {DType::kFloat32, DType::kFloat64}) {
    for (const Shape& s : shapes) {
      manual_seed(3);
      const Tensor x = ops::to(ops::randn(s.x), dtype), w = ops::to(ops::randn({s.m, s.x.back()}), dtype);
      const Tensor b = ops::to(ops::randn({s.m}), dtype);
      for (const bool with_bias : {true, false}) {
        for (const int threads : {1, 2}) {
          SCOPED_TRACE(testing::Message() << dtype_short_name(dtype) << format_sizes(s.x) << " x " << s.m
                                          << (with_bias ? " with bias, " : ", ") << threads << " thread(s)");
          NumThreadsGuard guard(threads);
          const BlocksRun r = run_linear_blocks(x, w, with_bias ? &b : nullptr);
          ASSERT_TRUE(r.accepted);
          const Tensor want = with_bias ? ops::linear(x, w, b) : ops::linear(x, w);
          EXPECT_TRUE(bits_equal(r.out, ops::reshape(want, {-1, s.m})));
          EXPECT_EQ(r.starts, 1);
          EXPECT_EQ(r.early_blocks, 0);
          EXPECT_GE(r.blocks, 1);
          EXPECT_EQ(std::count(r.finished.begin(), r.finished.end(), 1), static_cast<int64_t>(r.finished.size()));
        }
      }
    }
  }
}

TEST(LinearBlocksTest, TwoDimInputsMayBeStridedAsAddmmReadsThem) {
  manual_seed(4);
  const Tensor xt = ops::t(ops::randn({256, 512}));             // transposed: BLAS reads it as it is
  const Tensor xs = ops::slice(ops::randn({512, 600}), 1, 0, 512, 2);  // no unit stride: copied, as addmm copies
  const Tensor w = ops::randn({384, 256}), b = ops::randn({384});
  const Tensor w2 = ops::randn({384, 256});
  for (const Tensor* x : {&xt, &xs}) {
    const Tensor& weight = x == &xt ? w : w2;
    const BlocksRun r = run_linear_blocks(*x, weight, &b);
    ASSERT_TRUE(r.accepted);
    EXPECT_TRUE(bits_equal(r.out, ops::linear(*x, weight, b)));
  }
}

TEST(LinearBlocksTest, DeclinesWhatEagerComputesAnotherWay) {
  manual_seed(5);
  const Tensor x = ops::randn({4, 8, 16}), w = ops::randn({12, 16}), b = ops::randn({12});
  const Tensor strided3d = ops::transpose(ops::randn({8, 4, 16}), 0, 1);  // linear: matmul + add_, not addmm
  const Tensor b2d = ops::randn({1, 12});
  const Tensor xd = ops::to(x, DType::kFloat64);
  const Tensor xh = ops::to(x, DType::kFloat16), wh = ops::to(w, DType::kFloat16), bh = ops::to(b, DType::kFloat16);
  struct Case {
    const Tensor* x;
    const Tensor* w;
    const Tensor* b;
  };
  for (const Case& c : {Case{&strided3d, &w, &b}, Case{&x, &w, &b2d}, Case{&xd, &w, &b}, Case{&xh, &wh, &bh}}) {
    const BlocksRun r = run_linear_blocks(*c.x, *c.w, c.b);
    EXPECT_FALSE(r.accepted) << c.x->meta_str() << " " << c.b->meta_str();
    EXPECT_EQ(r.starts, 0);
    EXPECT_EQ(r.blocks, 0);
  }
}

// A program over [rows, width] run block by block, interpreted and generated:
// the same bits as one run, and nothing outside a block is written.
TEST(FusedRunBlockTest, BlocksAddUpToOneRun) {
  manual_seed(6);
  const int64_t rows = 70, width = 300;
  const Tensor x = ops::randn({rows, width}), y = ops::randn({width});
  auto program = std::make_shared<FusedProgram>(SizeVec{rows, width});
  const int rx = program->add_input(DType::kFloat32, x.sizes()), ry = program->add_input(DType::kFloat32, y.sizes());
  program->add_output(program->add_op(FusedOp::kGeluTanh, {program->add_op(FusedOp::kAdd, {rx, ry})}));
  program->finalize();
  const Tensor want = ops::gelu(ops::add(x, y), "tanh");
  for (const CpuFusedCodegen policy : {CpuFusedCodegen::kNever, CpuFusedCodegen::kAlways}) {
    CpuFusedCodegenGuard guard(policy);
    const auto kernel = make_fused_kernel(DeviceType::kCPU, program, "fused_add_gelu");
    // Written over its input, as an epilogue writes over the product.
    const Tensor io = ops::clone(x);
    const Tensor untouched = ops::full({rows, width}, 7.0);
    for (const MatrixBlock& blk : {MatrixBlock{0, 64, 0, 128}, MatrixBlock{0, 64, 128, 172}, MatrixBlock{64, 6, 0, 300}}) {
      kernel->run_block({io, y}, {io}, blk, width);
      kernel->run_block({x, y}, {untouched}, MatrixBlock{blk.row0, blk.rows, blk.col0, blk.cols / 2}, width);
    }
    EXPECT_TRUE(bits_equal(io, want));
    const std::vector<float> u = untouched.to_vector<float>(), w = want.to_vector<float>();
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < width; ++j) {
        const bool written = (i < 64 && (j < 64 || (j >= 128 && j < 128 + 86))) || (i >= 64 && j < 150);
        const float expected = written ? w[static_cast<size_t>(i * width + j)] : 7.0f;
        ASSERT_EQ(u[static_cast<size_t>(i * width + j)], expected) << i << ", " << j;
      }
    }
  }
}

TEST(FusedRunBlockTest, RefusesABlockOutsideTheOutput) {
  auto program = std::make_shared<FusedProgram>(SizeVec{4, 6});
  program->add_output(program->add_op(FusedOp::kNeg, {program->add_input(DType::kFloat32, {4, 6})}));
  program->finalize();
  const auto kernel = make_fused_kernel(DeviceType::kCPU, program, "fused_neg");
  const Tensor x = ops::randn({4, 6}), out = ops::empty({4, 6});
  EXPECT_THAT([&] { kernel->run_block({x}, {out}, MatrixBlock{3, 2, 0, 6}, 6); },
              ThrowsMessage<Error>(HasSubstr("rows [3, 5) x columns [0, 6) is not a block of 24 elements in rows of 6")));
  EXPECT_THAT([&] { kernel->run_block({x}, {out}, MatrixBlock{0, 1, 0, 6}, 5); },
              ThrowsMessage<Error>(HasSubstr("in rows of 5")));
}

}  // namespace matmul_epilogue_test
}  // namespace opspec::internal
