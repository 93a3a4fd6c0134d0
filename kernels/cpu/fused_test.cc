#include "kernels/cpu/fused.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <limits>
#include <vector>

#include "kernels/cpu/cache_hints.h"
#include "kernels/cpu/copy.h"
#include "runtime/core/error.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace fused_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// expect_bits_equal: same dtype, sizes and element bits (NaNs included).
void expect_bits_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes()));
  const Tensor a = contiguous_cpu(got), b = contiguous_cpu(want);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0)
      << "got " << got.str() << "\nwant " << want.str();
}

Tensor out_like(const FusedProgram& p, int k) { return make_tensor(p.shape(), p.output_dtype(k), kCPU); }

Tensor randn(IntArrayRef sizes, DType dtype = DType::kFloat32) {
  Tensor t = ops::randn(sizes);
  return dtype == DType::kFloat32 ? t : ops::to(t, dtype);
}

TEST(FusedKernelTest, ChainMatchesEagerBitForBit) {
  manual_seed(1);
  const Tensor x = randn({37, 53}), y = randn({37, 53}), z = randn({37, 53});
  FusedProgram p({37, 53});
  const int rx = p.add_input(DType::kFloat32, x.sizes());
  const int ry = p.add_input(DType::kFloat32, y.sizes());
  const int rz = p.add_input(DType::kFloat32, z.sizes());
  const int half = p.add_cast(p.add_constant(0.5, DType::kFloat64), DType::kFloat32);
  const int relu = p.add_op(FusedOp::kRelu, {p.add_op(FusedOp::kAdd, {p.add_op(FusedOp::kMul, {rx, ry}), rz})});
  p.add_output(p.add_op(FusedOp::kMul, {relu, half}));
  p.finalize();
  Tensor out = out_like(p, 0);
  run_fused(p, {x, y, z}, {out});
  expect_bits_equal(out, ops::mul(ops::relu(ops::add(ops::mul(x, y), z)), 0.5));
}

// The transcendental functors: vectorized (wide clones), with sin and cos
// taking libm per element beyond vec_math's fast range in blocks the fused
// tiles cut differently from eager rows; the bits still agree with eager.
TEST(FusedKernelTest, TranscendentalsMatchEagerBitForBit) {
  manual_seed(2);
  Tensor x = ops::mul(randn({3001}), 3.0);
  x.data_ptr<float>()[10] = 1e30f;
  x.data_ptr<float>()[1500] = -3e7f;
  x.data_ptr<float>()[2999] = std::numeric_limits<float>::quiet_NaN();
  FusedProgram p(x.sizes());
  const int r = p.add_input(DType::kFloat32, x.sizes());
  const FusedOp kOps[] = {FusedOp::kSin,     FusedOp::kCos,  FusedOp::kExp,    FusedOp::kTanh,     FusedOp::kErf,
                          FusedOp::kSigmoid, FusedOp::kSilu, FusedOp::kGeluErf, FusedOp::kGeluTanh};
  for (FusedOp op : kOps) p.add_output(p.add_op(op, {r}));
  p.add_output(p.add_op(FusedOp::kLog, {p.add_op(FusedOp::kAbs, {r})}));
  p.finalize();
  std::vector<Tensor> outs;
  for (int k = 0; k < p.num_outputs(); ++k) outs.push_back(out_like(p, k));
  run_fused(p, {x}, outs);
  const std::vector<Tensor> want = {ops::sin(x),          ops::cos(x),    ops::exp(x),  ops::tanh(x),
                                    ops::erf(x),          ops::sigmoid(x), ops::silu(x), ops::gelu(x),
                                    ops::gelu(x, "tanh"), ops::log(ops::abs(x))};
  for (size_t k = 0; k < want.size(); ++k) expect_bits_equal(outs[k], want[k]);
}

TEST(FusedKernelTest, BroadcastTransposedAndSlicedInputs) {
  manual_seed(2);
  // Large enough for several tiles and threads; rows that do not divide a tile.
  const int64_t rows = 301, cols = 257;
  const Tensor full = randn({rows, cols});
  const Tensor row = randn({cols});
  const Tensor col = randn({rows, 1});
  const Tensor scalar = randn({});
  const Tensor transposed = ops::t(randn({cols, rows}));
  const Tensor sliced = ops::slice(randn({rows, 2 * cols}), 1, 0, 2 * cols, 2);
  const Tensor expanded = ops::expand(randn({1, cols}), {rows, cols});
  FusedProgram p({rows, cols});
  std::vector<int> r;
  for (const Tensor& t : {full, row, col, scalar, transposed, sliced, expanded}) {
    r.push_back(p.add_input(DType::kFloat32, t.sizes()));
  }
  int acc = r[0];
  acc = p.add_op(FusedOp::kAdd, {acc, r[1]});
  acc = p.add_op(FusedOp::kMul, {acc, r[2]});
  acc = p.add_op(FusedOp::kSub, {acc, r[3]});
  acc = p.add_op(FusedOp::kMaximum, {acc, r[4]});
  acc = p.add_op(FusedOp::kDiv, {acc, r[5]});
  acc = p.add_op(FusedOp::kAddAlpha, {acc, r[6]}, 2.5);
  p.add_output(acc);
  p.finalize();
  Tensor out = out_like(p, 0);
  run_fused(p, {full, row, col, scalar, transposed, sliced, expanded}, {out});
  Tensor want = ops::add(ops::div(ops::maximum(ops::sub(ops::mul(ops::add(full, row), col), scalar), transposed),
                                  sliced),
                         expanded, 2.5);
  expect_bits_equal(out, want);
}

// See Note [Fused outputs in eager's layout]: outputs dense in another order
// (transposed, channels-last) are written where they lie, with eager's bits,
// whichever order the inputs lie in; an in-place output keeps its input's layout.
TEST(FusedKernelTest, OutputsInAnyDenseOrderAreWrittenInPlace) {
  manual_seed(3);
  const int64_t n = 3, c = 37, h = 29, w = 31;  // several tiles, sizes that divide nothing
  const Tensor x = ops::contiguous(randn({n, c, h, w}), MemoryFormat::kChannelsLast);
  const Tensor y = randn({n, c, h, w});        // row-major
  const Tensor bias = randn({c, 1, 1});        // broadcast
  FusedProgram p({n, c, h, w});
  const int rx = p.add_input(DType::kFloat32, x.sizes());
  const int ry = p.add_input(DType::kFloat32, y.sizes());
  const int rb = p.add_input(DType::kFloat32, bias.sizes());
  const int sum = p.add_op(FusedOp::kAdd, {p.add_op(FusedOp::kMul, {rx, ry}), rb});
  p.add_output(p.add_op(FusedOp::kRelu, {sum}));
  p.add_output(p.add_op(FusedOp::kGt, {sum, ry}));
  p.finalize();
  const Tensor want_sum = ops::add(ops::mul(x, y), bias);
  for (MemoryFormat f : {MemoryFormat::kChannelsLast, MemoryFormat::kContiguous}) {
    Tensor o0 = ops::empty({n, c, h, w}, {.memory_format = f});
    Tensor o1 = ops::empty({n, c, h, w}, {.dtype = DType::kBool, .memory_format = f});
    const std::vector<int64_t> strides0(o0.strides().begin(), o0.strides().end());
    run_fused(p, {x, y, bias}, {o0, o1});
    EXPECT_EQ(std::vector<int64_t>(o0.strides().begin(), o0.strides().end()), strides0);
    expect_bits_equal(o0, ops::relu(want_sum));
    expect_bits_equal(o1, ops::gt(want_sum, y));
  }
  // A transposed matrix written over itself, as an in-place group's input.
  FusedProgram q({301, 257});
  const int r = q.add_input(DType::kFloat32, {301, 257});
  q.add_output(q.add_op(FusedOp::kTanh, {r}));
  q.finalize();
  const Tensor m = ops::t(randn({257, 301}));
  const Tensor want = ops::tanh(m);
  Tensor over = ops::clone(m);  // clone keeps m's transposed layout
  ASSERT_FALSE(over.is_contiguous());
  run_fused(q, {over}, {over});
  expect_bits_equal(over, want);
  Tensor fresh = ops::t(ops::empty({257, 301}));
  run_fused(q, {m}, {fresh});
  expect_bits_equal(fresh, want);
  // Empty outputs are written nowhere: any strides do.
  FusedProgram e({0, 3});
  const int re = e.add_input(DType::kFloat32, {0, 3});
  e.add_output(e.add_op(FusedOp::kTanh, {re}));
  e.add_output(e.add_op(FusedOp::kNeg, {re}));
  e.finalize();
  EXPECT_NO_THROW(run_fused(e, {ops::empty({0, 3})}, {ops::t(ops::empty({3, 0})), ops::empty({0, 3})}));
}

TEST(FusedKernelTest, ReducedPrecisionRoundsAtEveryStep) {
  manual_seed(3);
  for (DType dt : {DType::kFloat16, DType::kBFloat16}) {
    const Tensor x = randn({1000}, dt), y = randn({1000}, dt);
    FusedProgram p({1000});
    const int rx = p.add_input(dt, x.sizes()), ry = p.add_input(dt, y.sizes());
    const int s = p.add_op(FusedOp::kTanh, {p.add_op(FusedOp::kMul, {rx, ry})});
    // x * 0.1 as eager computes it: the wrapped 0.1 is read in float, not rounded to f16 first.
    const int tenth = p.add_cast(p.add_constant(0.1, DType::kFloat64), DType::kFloat32);
    p.add_output(p.add_op(FusedOp::kAdd, {s, p.add_op(FusedOp::kMul, {rx, tenth})}));
    p.finalize();
    Tensor out = out_like(p, 0);
    run_fused(p, {x, y}, {out});
    expect_bits_equal(out, ops::add(ops::tanh(ops::mul(x, y)), ops::mul(x, 0.1)));
  }
}

TEST(FusedKernelTest, ComparisonsWhereAndCasts) {
  manual_seed(4);
  const Tensor x = randn({64, 9}), i = ops::to(ops::mul(randn({9}), 10.0), DType::kInt64);
  FusedProgram p({64, 9});
  const int rx = p.add_input(DType::kFloat32, x.sizes()), ri = p.add_input(DType::kInt64, i.sizes());
  const int fi = p.add_cast(ri, DType::kFloat32);
  const int cond = p.add_op(FusedOp::kGt, {rx, fi});
  const int sel = p.add_op(FusedOp::kWhere, {cond, rx, p.add_op(FusedOp::kNeg, {fi})});
  p.add_output(sel);
  p.add_output(cond);
  p.add_output(p.add_op(FusedOp::kLogicalNot, {cond}));
  p.finalize();
  Tensor o0 = out_like(p, 0), o1 = out_like(p, 1), o2 = out_like(p, 2);
  run_fused(p, {x, i}, {o0, o1, o2});
  const Tensor cmp = ops::gt(x, ops::to(i, DType::kFloat32));
  expect_bits_equal(o0, ops::where(cmp, x, ops::neg(ops::to(i, DType::kFloat32))));
  expect_bits_equal(o1, cmp);
  expect_bits_equal(o2, ops::logical_not(cmp));
}

TEST(FusedKernelTest, IntegerAndBoolArithmeticWrapLikeEager) {
  // 2^62 + 2^62 wraps to the int64 minimum; 2^62 cubed wraps to 0.
  const Tensor a = ops::tensor({4611686018427387904.0, -3, 7, 0}, {4}, DType::kInt64);
  const Tensor b = ops::tensor({4611686018427387904.0, 2, -3, 5}, {4}, DType::kInt64);
  const Tensor m = ops::tensor({1, 0, 1, 0}, {4}, DType::kBool), n = ops::tensor({1, 1, 0, 0}, {4}, DType::kBool);
  FusedProgram p({4});
  const int ra = p.add_input(DType::kInt64, {4}), rb = p.add_input(DType::kInt64, {4});
  const int rm = p.add_input(DType::kBool, {4}), rn = p.add_input(DType::kBool, {4});
  p.add_output(p.add_op(FusedOp::kAdd, {ra, rb}));
  p.add_output(p.add_op(FusedOp::kPowScalar, {rb}, int64_t{3}));
  p.add_output(p.add_op(FusedOp::kAdd, {rm, rn}));
  p.add_output(p.add_op(FusedOp::kMul, {rm, rn}));
  p.finalize();
  std::vector<Tensor> outs;
  for (int k = 0; k < 4; ++k) outs.push_back(out_like(p, k));
  run_fused(p, {a, b, m, n}, outs);
  expect_bits_equal(outs[0], ops::add(a, b));
  expect_bits_equal(outs[1], ops::pow(b, 3));
  expect_bits_equal(outs[2], ops::add(m, n));
  expect_bits_equal(outs[3], ops::mul(m, n));
}

TEST(FusedKernelTest, UniformProgramsZeroDimAndEmptyShapes) {
  // Everything one element: computed once, before any tile.
  const Tensor s = ops::tensor({2.0}, {});
  FusedProgram p({});
  p.add_output(p.add_op(FusedOp::kExp, {p.add_input(DType::kFloat32, {})}));
  p.finalize();
  EXPECT_EQ(p.num_scratch_slots(), 0);
  Tensor out = out_like(p, 0);
  run_fused(p, {s}, {out});
  expect_bits_equal(out, ops::exp(s));

  // A uniform register as the output of a larger shape is broadcast.
  FusedProgram fill({3, 2});
  fill.add_output(fill.add_cast(fill.add_constant(1.5, DType::kFloat64), DType::kFloat32));
  fill.finalize();
  Tensor filled = out_like(fill, 0);
  run_fused(fill, {}, {filled});
  EXPECT_EQ(filled.to_vector<float>(), std::vector<float>(6, 1.5f));

  // Empty: nothing runs, nothing is read.
  FusedProgram empty({0, 3});
  empty.add_output(empty.add_op(FusedOp::kNeg, {empty.add_input(DType::kFloat32, {0, 3})}));
  empty.finalize();
  Tensor e = out_like(empty, 0);
  run_fused(empty, {ops::empty({0, 3})}, {e});
  EXPECT_EQ(e.numel(), 0);
}

TEST(FusedKernelTest, PassThroughDuplicateOutputsAndSlotReuse) {
  manual_seed(5);
  const Tensor x = ops::t(randn({40, 30}));
  FusedProgram p({30, 40});
  const int rx = p.add_input(DType::kFloat32, x.sizes());
  int acc = rx;
  for (int k = 0; k < 12; ++k) acc = p.add_op(k % 2 ? FusedOp::kSin : FusedOp::kCos, {acc});
  p.add_op(FusedOp::kExp, {rx});  // dead: no output uses it
  p.add_output(acc);
  p.add_output(acc);
  p.add_output(rx);
  p.finalize();
  EXPECT_EQ(p.num_instructions(), 12);
  EXPECT_LE(p.num_scratch_slots(), 3);  // the input, and two buffers the chain alternates between
  Tensor o0 = out_like(p, 0), o1 = out_like(p, 1), o2 = out_like(p, 2);
  run_fused(p, {x}, {o0, o1, o2});
  Tensor want = x;
  for (int k = 0; k < 12; ++k) want = k % 2 ? ops::sin(want) : ops::cos(want);
  expect_bits_equal(o0, want);
  expect_bits_equal(o1, want);
  expect_bits_equal(o2, x);
}

// Outputs of kStreamMinBytes and more are computed into a tile buffer and
// streamed (See Note [Streaming stores]): a direct output, a duplicate of it
// and a passed-through input are streamed, a bool output below the size is
// not; the odd shape leaves a partial last tile. Values as eager's.
TEST(FusedKernelTest, StreamedLargeOutputsMatchEagerBitForBit) {
  manual_seed(6);
  const Tensor x = randn({1023, 2051}), y = randn({1023, 2051});
  ASSERT_GE(x.numel() * 4, kStreamMinBytes);
  ASSERT_LT(x.numel(), kStreamMinBytes);  // the bool output is not streamed
  FusedProgram p({1023, 2051});
  const int rx = p.add_input(DType::kFloat32, x.sizes());
  const int ry = p.add_input(DType::kFloat32, y.sizes());
  const int sum = p.add_op(FusedOp::kAdd, {p.add_op(FusedOp::kMul, {rx, ry}), rx});
  const int result = p.add_op(FusedOp::kTanh, {sum});
  p.add_output(result);
  p.add_output(result);
  p.add_output(rx);
  p.add_output(p.add_op(FusedOp::kGt, {sum, ry}));
  p.finalize();
  Tensor o0 = out_like(p, 0), o1 = out_like(p, 1), o2 = out_like(p, 2), o3 = out_like(p, 3);
  run_fused(p, {x, y}, {o0, o1, o2, o3});
  const Tensor want_sum = ops::add(ops::mul(x, y), x);
  expect_bits_equal(o0, ops::tanh(want_sum));
  expect_bits_equal(o1, ops::tanh(want_sum));
  expect_bits_equal(o2, x);
  expect_bits_equal(o3, ops::gt(want_sum, y));
}

TEST(FusedKernelTest, StrPrintsOneLinePerInstruction) {
  FusedProgram p({4});
  const int x = p.add_input(DType::kFloat16, {4});
  const int c = p.add_cast(p.add_constant(2, DType::kInt64), DType::kFloat16);
  p.add_output(p.add_op(FusedOp::kSubAlpha, {x, c}, 3));
  EXPECT_EQ(p.str(),
            "r0 = input 0 : f16[4]\n"
            "r1 = constant 2.0 : i64\n"
            "r2 = cast(r1) : f16\n"
            "r3 = sub_alpha(r0, r2, 3) : f16\n"
            "output 0 = r3\n");
}

TEST(FusedKernelTest, BuildErrorsNameTheProblem) {
  FusedProgram p({2, 3});
  const int f = p.add_input(DType::kFloat32, {3});
  const int d = p.add_input(DType::kFloat64, {2, 1});
  const int b = p.add_input(DType::kBool, {2, 3});
  EXPECT_THAT([&] { p.add_input(DType::kFloat32, {4}); },
              ThrowsMessage<Error>(HasSubstr("input 3 has sizes [4], which do not broadcast to the shape [2, 3]")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kAdd, {f, d}); },
              ThrowsMessage<Error>(HasSubstr("add takes operands of one dtype, got f32 and f64")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kAdd, {f}); }, ThrowsMessage<Error>(HasSubstr("add takes 2 operand(s) but 1")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kSin, {b}); },
              ThrowsMessage<Error>(HasSubstr("sin takes a floating operand, got b8")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kNeg, {b}); }, ThrowsMessage<Error>(HasSubstr("neg does not take b8")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kWhere, {f, f, f}); },
              ThrowsMessage<Error>(HasSubstr("where takes a b8 condition, got f32")));
  EXPECT_THAT([&] { p.add_op(FusedOp::kRelu, {17}); }, ThrowsMessage<Error>(HasSubstr("register 17 does not exist")));
  p.add_output(p.add_op(FusedOp::kMul, {f, p.add_cast(d, DType::kFloat32)}));
  EXPECT_THAT([&] { run_fused(p, {}, {}); }, ThrowsMessage<Error>(HasSubstr("not finalized")));
  p.finalize();
  EXPECT_THAT([&] { p.add_op(FusedOp::kRelu, {f}); }, ThrowsMessage<Error>(HasSubstr("finalized")));
}

TEST(FusedKernelTest, RunErrorsNameTheArgument) {
  FusedProgram p({2, 3});
  const int x = p.add_input(DType::kFloat32, {2, 3});
  p.add_output(p.add_op(FusedOp::kRelu, {x}));
  p.finalize();
  const Tensor in = ops::zeros({2, 3});
  Tensor out = ops::empty({2, 3});
  EXPECT_THAT([&] { run_fused(p, {}, {out}); },
              ThrowsMessage<Error>(HasSubstr("run_fused: the program takes 1 input(s) but 0 were given")));
  EXPECT_THAT([&] { run_fused(p, {in}, {}); }, ThrowsMessage<Error>(HasSubstr("has 1 output(s) but 0 were given")));
  EXPECT_THAT([&] { run_fused(p, {ops::zeros({2, 3}, {.dtype = DType::kFloat64})}, {out}); },
              ThrowsMessage<Error>(HasSubstr("input 0 is f64[2, 3] but the program expects f32[2, 3]")));
  EXPECT_THAT([&] { run_fused(p, {ops::zeros({3, 2})}, {out}); },
              ThrowsMessage<Error>(HasSubstr("input 0 is f32[3, 2] but the program expects f32[2, 3]")));
  EXPECT_THAT([&] { run_fused(p, {ops::zeros({2, 3}, {.device = kMeta})}, {out}); },
              ThrowsMessage<Error>(HasSubstr("has no cpu data")));
  EXPECT_THAT([&] { run_fused(p, {in}, {ops::slice(ops::empty({2, 6}), 1, 0, 6, 2)}); },
              ThrowsMessage<Error>(HasSubstr("output 0 (f32[2, 3]) must be a cpu tensor dense in some order of its dims")));
  EXPECT_THAT([&] { run_fused(p, {in}, {ops::expand(ops::empty({1, 3}), {2, 3})}); },
              ThrowsMessage<Error>(HasSubstr("must be a cpu tensor dense in some order")));
  FusedProgram two({2, 3});
  const int y = two.add_input(DType::kFloat32, {2, 3});
  two.add_output(two.add_op(FusedOp::kRelu, {y}));
  two.add_output(two.add_op(FusedOp::kNeg, {y}));
  two.finalize();
  EXPECT_THAT([&] { run_fused(two, {in}, {ops::t(ops::empty({3, 2})), ops::empty({2, 3})}); },
              ThrowsMessage<Error>(HasSubstr("output 1 (strides [3, 1]) is laid out unlike output 0 (strides [1, 2])")));
  EXPECT_THAT([&] { run_fused(p, {in}, {ops::empty({2, 3}, {.dtype = DType::kFloat16})}); },
              ThrowsMessage<Error>(HasSubstr("output 0 is f16[2, 3] but the program writes f32[2, 3]")));
  // An output may be an input itself (See Note [In-place fusion]), not part of one.
  Tensor over = ops::zeros({2, 3});
  EXPECT_NO_THROW(run_fused(p, {over}, {over}));
  const Tensor flat = ops::randn({7});
  EXPECT_THAT([&] { run_fused(p, {ops::view(ops::slice(flat, 0, 0, 6), {2, 3})}, {ops::view(ops::slice(flat, 0, 1, 7), {2, 3})}); },
              ThrowsMessage<Error>(HasSubstr("shares memory with an input but is not that input")));
}

}  // namespace
}  // namespace opspec::internal
