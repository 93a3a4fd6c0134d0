#include "kernels/cuda/fused_codegen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness/debug_mode.h"
#include "harness/filecheck.h"
#include "kernels/common/fused_test_programs.h"
#include "kernels/cuda/cuda_test_util.h"
#include "runtime/compile/backend.h"
#include "runtime/core/error.h"
#include "runtime/core/generator.h"
#include "runtime/fused/fused_kernel.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/ops.h"
#include "runtime/trace/make_fx.h"

namespace opspec::internal {
namespace cuda_fused_codegen_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::ThrowsMessage;

// CacheOffTest: tests that compile with the on-disk cache off, so they
// compile with NVRTC every time and never write to the user's cache.
class CacheOffTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("OPSPEC_CUDA_CACHE_DIR")) old_ = old;
    setenv("OPSPEC_CUDA_CACHE_DIR", "off", 1);
  }
  void TearDown() override {
    if (old_) {
      setenv("OPSPEC_CUDA_CACHE_DIR", old_->c_str(), 1);
    } else {
      unsetenv("OPSPEC_CUDA_CACHE_DIR");
    }
  }

 private:
  std::optional<std::string> old_;
};
using FusedCodegenTest = CacheOffTest;
using FusedCudaBackendTest = CacheOffTest;

TEST_F(FusedCodegenTest, AllOpsAllDTypesCompileToPtx) {
  std::set<FusedOp> covered;
  for (DType d : kFusedDTypes) {
    SCOPED_TRACE(dtype_short_name(d));
    const FusedProgram p = all_ops_program(d);
    for (const FusedProgram::Instr& ins : p.instrs()) covered.insert(ins.op);
    const Tensor x = make_tensor({4, 8}, d, kCPU), y = make_tensor({8}, d, kCPU), s = make_tensor({1}, d, kCPU);
    const FusedCudaLayout layout = fused_cuda_layout(p, {x, y, s});
    EXPECT_EQ(layout.str(), "c_s2_u_i32");
    const std::string name = str_cat("fused_all_ops_", dtype_short_name(d), "_0");
    const std::string source = fused_cuda_source(p, name, layout);
    std::shared_ptr<const CompiledKernel> k;
    ASSERT_NO_THROW(k = nvrtc_compile(name, source)) << source;
    EXPECT_THAT(k->ptx, HasSubstr(str_cat(".entry ", name)));
    EXPECT_TRUE(k->cubin.empty());
  }
  EXPECT_EQ(covered.size(), static_cast<size_t>(FusedOp::kCast) + 1) << "every FusedOp is generated";
}

TEST_F(FusedCodegenTest, KernelStructure) {
  FusedProgram p({4, 8});
  const int x = p.add_input(DType::kFloat32, {4, 8});
  const int b = p.add_input(DType::kFloat32, {8});
  const int two = p.add_constant(2.0, DType::kFloat32);
  const int r = p.add_op(FusedOp::kRelu, {x});
  const int m = p.add_op(FusedOp::kMul, {r, two});
  p.add_output(p.add_op(FusedOp::kAdd, {m, b}));
  p.finalize();
  const Tensor xt = make_tensor({4, 8}, DType::kFloat32, kCPU), bt = make_tensor({8}, DType::kFloat32, kCPU);
  const std::string src = fused_cuda_source(p, "fused_relu_mul_add_0", fused_cuda_layout(p, {xt, bt}));
  const CheckResult check = file_check(src, R"(
CHECK: // fused_relu_mul_add_0: an opspec fused elementwise kernel
CHECK: // layout c_s2_i32; program:
CHECK-NEXT: //   r0 = input 0 : f32
CHECK-NEXT: //   r1 = input 1 : f32
CHECK-NEXT: //   r2 = constant 2.0 : f32
CHECK-NEXT: //   r3 = relu(r0) : f32
CHECK: #include "opspec/nvrtc_prelude.h"
CHECK: typedef int32_t index_t;
CHECK: __device__ __forceinline__ void fused_relu_mul_add_0_element(const index_t i, const float r2, const float r0, const float r1, float* __restrict__ out0) {
CHECK-NEXT:   const float r3 = store<float>(ReluOp{}(load(r0)));
CHECK-NEXT:   const float r4 = store<float>(MulOp{}(static_cast<float>(load(r3)), static_cast<float>(load(r2))));
CHECK-NEXT:   const float r5 = store<float>(AddOp{}(static_cast<float>(load(r4)), static_cast<float>(load(r1))));
CHECK-NEXT:   out0[i] = r5;
CHECK-NEXT: }
CHECK: extern "C" __global__ void __launch_bounds__(256) fused_relu_mul_add_0(const index_t n, const float* __restrict__ in0, const float* __restrict__ in1, const Geometry<index_t, 2> in1_geometry, float* __restrict__ out0) {
CHECK-NEXT:   const float r2 = from_bits<float>(0x40000000ull);  // 2.0
CHECK: for (; i + 3 * step < n; i += 4 * step) {
CHECK-NEXT: const index_t i1 = i + step, i2 = i + 2 * step, i3 = i + 3 * step;
CHECK-NEXT: const float r0_0 = in0[i], r0_1 = in0[i1], r0_2 = in0[i2], r0_3 = in0[i3];
CHECK-NEXT: const float r1_0 = in1[in1_geometry.offset(i)], r1_1 = in1[in1_geometry.offset(i1)], r1_2 = in1[in1_geometry.offset(i2)], r1_3 = in1[in1_geometry.offset(i3)];
CHECK-NEXT: fused_relu_mul_add_0_element(i, r2, r0_0, r1_0, out0);
CHECK-NEXT: fused_relu_mul_add_0_element(i1, r2, r0_1, r1_1, out0);
CHECK-NEXT: fused_relu_mul_add_0_element(i2, r2, r0_2, r1_2, out0);
CHECK-NEXT: fused_relu_mul_add_0_element(i3, r2, r0_3, r1_3, out0);
CHECK: for (; i < n; i += step) fused_relu_mul_add_0_element(i, r2, in0[i], in1[in1_geometry.offset(i)], out0);
)");
  EXPECT_TRUE(check.ok) << check.message;
  // Deterministic: the same arguments give the same text.
  EXPECT_EQ(src, fused_cuda_source(p, "fused_relu_mul_add_0", fused_cuda_layout(p, {xt, bt})));
}

TEST_F(FusedCodegenTest, SourceDependsOnStructureNotShape) {
  // One kernel (one cache entry) serves every shape of a structure.
  auto source = [](int64_t rows, DType d) {
    FusedProgram p({rows, 8});
    const int x = p.add_input(d, {rows, 8});
    const int b = p.add_input(d, {8});
    p.add_output(p.add_op(FusedOp::kMul, {p.add_op(FusedOp::kExp, {x}), b}));
    p.finalize();
    return fused_cuda_source(p, "fused_exp_mul_0",
                             fused_cuda_layout(p, {make_tensor({rows, 8}, d, kCPU), make_tensor({8}, d, kCPU)}));
  };
  EXPECT_EQ(source(4, DType::kFloat32), source(1000, DType::kFloat32));
  EXPECT_NE(source(4, DType::kFloat32), source(4, DType::kFloat64));
}

TEST_F(FusedCodegenTest, UniformRegistersAreComputedBeforeTheLoop) {
  FusedProgram p({16});
  const int x = p.add_input(DType::kFloat16, {16});
  const int s = p.add_input(DType::kFloat16, {});
  const int e = p.add_op(FusedOp::kExp, {s});
  p.add_output(p.add_op(FusedOp::kMul, {x, e}));
  p.add_output(e);  // a uniform output: every element gets the one value
  p.finalize();
  const Tensor xt = make_tensor({16}, DType::kFloat16, kCPU), st = make_tensor({}, DType::kFloat16, kCPU);
  const std::string src = fused_cuda_source(p, "fused_exp_mul_0", fused_cuda_layout(p, {xt, st}));
  const CheckResult check = file_check(src, R"(
CHECK: void fused_exp_mul_0_element(const index_t i, const opspec::Half r2, const opspec::Half r0, opspec::Half* __restrict__ out0, opspec::Half* __restrict__ out1) {
CHECK-NOT: ExpOp
CHECK: out1[i] = r2;
CHECK: __global__
CHECK-NEXT: const opspec::Half r1 = in1[0];
CHECK-NEXT: const opspec::Half r2 = store<opspec::Half>(ExpOp{}(load(r1)));
CHECK-NEXT: const index_t step
)");
  EXPECT_TRUE(check.ok) << check.message;
  EXPECT_NO_THROW(nvrtc_compile("fused_exp_mul_0", src));
}

TEST_F(FusedCodegenTest, StridedInputsAndLayouts) {
  FusedProgram p({3, 4, 5});
  const int a = p.add_input(DType::kFloat32, {3, 4, 5});
  const int b = p.add_input(DType::kFloat32, {1, 4, 5});
  const int unused = p.add_input(DType::kFloat32, {5});
  (void)unused;
  p.add_output(p.add_op(FusedOp::kSub, {a, b}));
  p.finalize();
  // a: a transposed view; b: broadcast along dim 0; the third input is dead.
  const Tensor base = make_tensor({5, 4, 3}, DType::kFloat32, kCPU);
  const Tensor at = ops::permute(base, {2, 1, 0});
  const Tensor bt = make_tensor({1, 4, 5}, DType::kFloat32, kCPU), ct = make_tensor({5}, DType::kFloat32, kCPU);
  const FusedCudaLayout layout = fused_cuda_layout(p, {at, bt, ct});
  EXPECT_EQ(layout.str(), "s3_s2_x_i32");
  const std::string src = fused_cuda_source(p, "fused_sub_0", layout);
  EXPECT_THAT(src, HasSubstr("const Geometry<index_t, 3> in0_geometry"));
  EXPECT_THAT(src, HasSubstr("r1_3 = in1[in1_geometry.offset(i3)];"));
  EXPECT_THAT(src, Not(HasSubstr("in2[")));
  EXPECT_NO_THROW(nvrtc_compile("fused_sub_0", src));

  // Arguments: n, in0 + geometry (sizes then strides), in1 + geometry, in2 (unused), out0.
  const Tensor out = make_tensor({3, 4, 5}, DType::kFloat32, kCPU);
  FusedCudaArgs args = fused_cuda_args(p, layout, {at, bt, ct}, {out});
  ASSERT_EQ(args.size(), 7u);
  auto ints = [&](size_t k) {
    std::vector<int32_t> v(args.bytes(k).size() / 4);
    std::memcpy(v.data(), args.bytes(k).data(), args.bytes(k).size());
    return v;
  };
  EXPECT_EQ(ints(0), (std::vector<int32_t>{60}));
  EXPECT_EQ(ints(2), (std::vector<int32_t>{3, 4, 5, 1, 3, 12}));
  EXPECT_EQ(ints(4), (std::vector<int32_t>{3, 20, 0, 1}));
  const void* p0 = nullptr;
  std::memcpy(&p0, args.bytes(1).data(), sizeof p0);
  EXPECT_EQ(p0, at.raw_data());
  std::memcpy(&p0, args.bytes(5).data(), sizeof p0);
  EXPECT_EQ(p0, ct.raw_data());
  std::memcpy(&p0, args.bytes(6).data(), sizeof p0);
  EXPECT_EQ(p0, out.raw_data());
  EXPECT_EQ(args.pointers()[6], static_cast<const void*>(args.bytes(6).data()));
}

TEST_F(FusedCodegenTest, LargeShapesIndexIn64Bits) {
  const int64_t n = int64_t{1} << 30;
  FusedProgram p({2, n});
  const int x = p.add_input(DType::kFloat32, {2, 1});  // broadcast: 2^31 elements from two stored ones
  p.add_output(p.add_op(FusedOp::kNeg, {x}));
  p.finalize();
  const Tensor big = make_tensor({2, 1}, DType::kFloat32, kCPU);
  const FusedCudaLayout layout = fused_cuda_layout(p, {big});
  EXPECT_FALSE(layout.index32);
  const std::string src = fused_cuda_source(p, "fused_neg_0", layout);
  EXPECT_THAT(src, HasSubstr("typedef int64_t index_t;"));
  EXPECT_NO_THROW(nvrtc_compile("fused_neg_0", src));
  EXPECT_EQ(fused_cuda_launch_config(2 * n, 132).grid, 132u * 8u);
  EXPECT_EQ(fused_cuda_launch_config(1000, 132).grid, 1u);
  EXPECT_EQ(fused_cuda_launch_config(1 << 20, 100000).grid, 4096u / 4u);
}

TEST_F(FusedCodegenTest, ConstantsKeepTheirBits) {
  FusedProgram p({8});
  const int x = p.add_input(DType::kFloat64, {8});
  const int c = p.add_constant(0.1, DType::kFloat64);
  const int h = p.add_constant(-0.0, DType::kFloat16);
  p.add_output(p.add_op(FusedOp::kAddAlpha, {x, c}, Scalar(1.0 / 3.0)));
  p.add_output(p.add_op(FusedOp::kAdd, {p.add_cast(x, DType::kFloat16), h}));
  p.finalize();
  const std::string src = fused_cuda_source(p, "fused_add_0", fused_cuda_layout(p, {make_tensor({8}, DType::kFloat64, kCPU)}));
  EXPECT_THAT(src, HasSubstr("from_bits<double>(0x3fb999999999999aull);  // 0.1"));
  EXPECT_THAT(src, HasSubstr("from_bits<opspec::Half>(0x8000ull);  // -0.0"));
  EXPECT_THAT(src, HasSubstr("AddAlphaOp<double>{from_bits<double>(0x3fd5555555555555ull)}"));
}

TEST_F(FusedCodegenTest, Errors) {
  FusedProgram p({4});
  const int x = p.add_input(DType::kFloat32, {4});
  p.add_output(p.add_op(FusedOp::kNeg, {x}));
  const Tensor t = make_tensor({4}, DType::kFloat32, kCPU);
  EXPECT_THAT([&] { fused_cuda_layout(p, {t}); }, ThrowsMessage<Error>(HasSubstr("not finalized")));
  p.finalize();
  EXPECT_THAT([&] { fused_cuda_layout(p, {}); }, ThrowsMessage<Error>(HasSubstr("takes 1 input(s) but 0")));
  EXPECT_THAT([&] { fused_cuda_layout(p, {make_tensor({5}, DType::kFloat32, kCPU)}); },
              ThrowsMessage<Error>(HasSubstr("input 0 is f32[5] but the program expects f32[4]")));
  EXPECT_THAT([&] { run_fused_cuda(p, "fused_neg_0", {t}, {make_tensor({4}, DType::kFloat32, kCPU)}); },
              ThrowsMessage<Error>(HasSubstr("run_fused_cuda: input 0 (f32[4]) is not a cuda tensor")));
}

// ---- On the device (skipped without a GPU) ----


const Device kCuda(DeviceType::kCUDA, 0);

// expect_bits_equal: got (any device) has want's dtype, sizes and element bits.
void expect_bits_equal(const Tensor& got, const Tensor& want) {
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes()));
  const Tensor a = ops::contiguous(ops::to(got, kCPU)), b = ops::contiguous(want);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0)
      << "got " << a.str() << "\nwant " << b.str();
}

TEST_F(FusedCudaBackendTest, ArithmeticChainsAreBitIdenticalToEagerCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(1);
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32}) {
    SCOPED_TRACE(dtype_short_name(d));
    // x contiguous, y broadcast, z transposed; wrapped-number constants; two outputs.
    const Tensor x = ops::to(ops::mul(ops::randn({37, 53}), 4.0), d), y = ops::to(ops::randn({53}), d);
    const Tensor z = ops::t(ops::to(ops::randn({53, 37}), d));
    auto fn = [](const Tensor& x, const Tensor& y, const Tensor& z) {
      const Tensor a = ops::relu(ops::add(ops::mul(x, y), 2));
      const Tensor b = ops::where(ops::gt(a, z), ops::sub(a, z, 3), ops::maximum(x, ops::neg(z)));
      return std::vector<Tensor>{ops::mul(b, 0.5), ops::abs(ops::pow(a, 2))};
    };
    const std::vector<Tensor> want = fn(x, y, z);
    const Tensor xc = ops::to(x, kCuda), yc = ops::to(y, kCuda), zc = ops::t(ops::to(ops::t(z), kCuda));
    const Graph g = make_fx(fn)(xc, yc, zc);
    const std::vector<Tensor> got = fused_backend(g, {xc, yc, zc})({xc, yc, zc});
    ASSERT_EQ(got.size(), 2u);
    expect_bits_equal(got[0], want[0]);
    expect_bits_equal(got[1], want[1]);
  }
}

TEST_F(FusedCudaBackendTest, TranscendentalChainsMatchEagerCpuToLibdeviceUlps) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(2);
  const Tensor x = ops::randn({4096});
  auto fn = [](const Tensor& x) {  // the elementwise_chain fixture
    Tensor y = ops::mul(ops::relu(x), 2);
    y = ops::exp(ops::sin(ops::add(y, 1)));
    y = ops::tanh(ops::sub(y, 0.5));
    return ops::add(ops::abs(ops::mul(y, y)), x);
  };
  const Tensor xc = ops::to(x, kCuda);
  const Tensor got = ops::to(fused_backend(make_fx(fn)(xc), {xc})({xc})[0], kCPU);
  const std::vector<float> g = got.to_vector<float>(), w = fn(x).to_vector<float>();
  for (size_t i = 0; i < g.size(); ++i) ASSERT_NEAR(g[i], w[i], 4e-6f * (1.0f + std::fabs(w[i]))) << i;
}

TEST_F(FusedCudaBackendTest, DebugModeReportsCudaKernelsWithDeviceHashes) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  // fused_debug_mode_test's graph on cuda: the same kernel and hashes, with the [cuda] prefix.
  const Tensor x = ops::to(ops::tensor({1, -2, 3, -4}, {2, 2}), kCuda);
  const Tensor w = ops::to(ops::tensor({1, 0, 0, 1}, {2, 2}), kCuda);
  const Tensor b = ops::to(ops::tensor({0.5, -0.5}, {2}), kCuda);
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
  EXPECT_EQ(ops::to(out, kCPU).to_vector<float>(), (std::vector<float>{2.5f, 0.0f, 6.5f, 0.0f}));
  const CheckResult check = file_check(dm.debug_string(), R"(
CHECK: aten::mm(
CHECK-NEXT: [cuda] fused_mul_add_relu_0(in0=t: f32[2, 2], in1=t: f32[2], out0=t: f32[2, 2], n=4)
CHECK-NEXT: # pre-kernel hashes: {in0: 10.0, in1: 1.0, out0: 0.0}
CHECK-NEXT: # post-kernel hashes: {in0: 10.0, in1: 1.0, out0: 9.0}
)");
  EXPECT_TRUE(check.ok) << check.message;
}

TEST_F(FusedCudaBackendTest, LaunchesEveryLayout) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  // run_fused_cuda directly: strided, broadcast, uniform inputs and a uniform output.
  FusedProgram p({3, 4, 5});
  const int a = p.add_input(DType::kFloat32, {3, 4, 5});
  const int b = p.add_input(DType::kFloat32, {1, 4, 5});
  const int s = p.add_input(DType::kFloat32, {});
  const int e = p.add_op(FusedOp::kExp, {s});
  p.add_output(p.add_op(FusedOp::kSub, {p.add_op(FusedOp::kMul, {a, e}), b}));
  p.add_output(e);
  p.finalize();
  manual_seed(3);
  const Tensor base = ops::randn({5, 4, 3}), bt = ops::randn({1, 4, 5}), st = ops::randn({});
  const Tensor at = ops::permute(base, {2, 1, 0});
  const Tensor ac = ops::permute(ops::to(base, kCuda), {2, 1, 0}), bc = ops::to(bt, kCuda), sc = ops::to(st, kCuda);
  Tensor o0 = make_tensor({3, 4, 5}, DType::kFloat32, kCuda), o1 = make_tensor({3, 4, 5}, DType::kFloat32, kCuda);
  run_fused_cuda(p, "fused_layouts_0", {ac, bc, sc}, {o0, o1});
  Tensor w0 = make_tensor({3, 4, 5}, DType::kFloat32, kCPU), w1 = make_tensor({3, 4, 5}, DType::kFloat32, kCPU);
  // The CPU's kernel for the same program, through the per-device table.
  make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), "fused_layouts_0")
      ->run({at, bt, st}, {w0, w1});
  const std::vector<float> g0 = ops::to(o0, kCPU).to_vector<float>(), x0 = w0.to_vector<float>();
  for (size_t i = 0; i < g0.size(); ++i) ASSERT_NEAR(g0[i], x0[i], 1e-6f * (1.0f + std::fabs(x0[i]))) << i;
  const std::vector<float> g1 = ops::to(o1, kCPU).to_vector<float>(), x1 = w1.to_vector<float>();
  for (size_t i = 0; i < g1.size(); ++i) {  // one value everywhere: exp(s)
    ASSERT_EQ(g1[i], g1[0]) << i;
    ASSERT_NEAR(g1[i], x1[i], 1e-6f * (1.0f + std::fabs(x1[i]))) << i;
  }
}

}  // namespace
}  // namespace opspec::internal
