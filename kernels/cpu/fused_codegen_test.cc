#include "kernels/cpu/fused_codegen.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <limits>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "kernels/common/fused_test_programs.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/cpu_jit.h"
#include "kernels/cpu/fused.h"
#include "runtime/compile/compile.h"
#include "runtime/core/error.h"
#include "runtime/core/generator.h"
#include "runtime/fused/fused_kernel.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace cpu_fused_codegen_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

// ScopedEnv: sets (or, with nullopt, unsets) an environment variable for its scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, std::optional<std::string> value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? setenv(name, value->c_str(), 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

// CodegenTest: each test gets a fresh on-disk cache directory (so none
// writes to the user's cache) and an empty in-memory cache.
class CodegenTest : public ::testing::Test {
 protected:
  CodegenTest()
      : dir_(std::filesystem::temp_directory_path() /
             str_cat("opspec-codegen-test-", static_cast<int64_t>(getpid()), "-", counter_++)),
        env_("OPSPEC_CPU_CACHE_DIR", dir_.string()) {}
  void SetUp() override { cpu_jit_reset_memory_cache(); }
  ~CodegenTest() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path dir_;
  ScopedEnv env_;
};

// expect_bits_equal: same dtype, sizes and element bits (NaNs included).
void expect_bits_equal(const Tensor& got, const Tensor& want, std::string_view what) {
  ASSERT_EQ(got.dtype(), want.dtype()) << what;
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes())) << what;
  const Tensor a = contiguous_cpu(got), b = contiguous_cpu(want);
  EXPECT_EQ(std::memcmp(a.raw_data(), b.raw_data(), static_cast<size_t>(a.nbytes())), 0)
      << what << "\ngot " << got.str() << "\nwant " << want.str();
}

// expect_in_order: each of parts occurs in text, after the previous one.
void expect_in_order(const std::string& text, std::initializer_list<std::string_view> parts) {
  size_t at = 0;
  for (std::string_view part : parts) {
    const size_t found = text.find(part, at);
    ASSERT_NE(found, std::string::npos) << "missing, or out of order: " << part << "\nin:\n" << text;
    at = found + part.size();
  }
}

// outputs_of: fresh outputs for p.
std::vector<Tensor> outputs_of(const FusedProgram& p) {
  std::vector<Tensor> out;
  for (int k = 0; k < p.num_outputs(); ++k) out.push_back(make_tensor(p.shape(), p.output_dtype(k), kCPU));
  return out;
}

// interpreted / generated: p's outputs from run_fused, and from a kernel
// made under kAlways (its generated code).
std::vector<Tensor> interpreted(const FusedProgram& p, const std::vector<Tensor>& in) {
  std::vector<Tensor> out = outputs_of(p);
  run_fused(p, in, out);
  return out;
}
std::vector<Tensor> generated(const FusedProgram& p, std::string_view name, const std::vector<Tensor>& in) {
  CpuFusedCodegenGuard always(CpuFusedCodegen::kAlways);
  const std::unique_ptr<FusedKernel> k =
      make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), name);
  std::vector<Tensor> out = outputs_of(p);
  k->run(in, out);
  return out;
}

// operand: n values of dtype d with the special values of floating dtypes
// (signed zeros, infinities, NaN, huge, tiny) among scaled normals.
Tensor operand(IntArrayRef sizes, DType d) {
  Tensor t = ops::mul(ops::randn(sizes), 4.0);
  if (!is_floating(d)) return ops::to(ops::round(t), d);
  float* v = t.data_ptr<float>();
  const float special[] = {0.0f, -0.0f, std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::quiet_NaN(), 1e30f, -3e5f, 1e-40f, 0.5f, -1.0f};
  for (int64_t i = 0; i < t.numel(); i += 7) v[i] = special[(i / 7) % std::size(special)];
  return ops::to(t, d);
}

TEST_F(CodegenTest, SourceStructure) {
  FusedProgram p({4, 8});
  const int x = p.add_input(DType::kFloat32, {4, 8});
  const int b = p.add_input(DType::kFloat32, {8});
  const int s = p.add_input(DType::kFloat16, {});
  const int two = p.add_constant(2.0, DType::kFloat32);
  const int r = p.add_op(FusedOp::kRelu, {x});
  const int m = p.add_op(FusedOp::kMul, {r, two});
  const int e = p.add_cast(p.add_op(FusedOp::kSin, {s}), DType::kFloat32);
  p.add_output(p.add_op(FusedOp::kAdd, {p.add_op(FusedOp::kAdd, {m, b}), e}));
  p.finalize();
  const std::string src = fused_cpu_source(p, "fused_relu_mul_add_0");
  expect_in_order(src, {
      "// fused_relu_mul_add_0: an opspec fused elementwise kernel for the CPU",
      "//   r0 = input 0 : f32",
      "//   r1 = input 1 : f32",
      "//   r2 = input 2 : f16",
      "#include \"opspec/cpu_prelude.h\"",
      "template <bool kFast>",
      "inline unsigned tile(const int64_t n, const void* const* in, void* const* out) {",
      "  const float* __restrict__ in0 = static_cast<const float*>(in[0]);",
      "  const float* __restrict__ in1 = static_cast<const float*>(in[1]);",
      "  const opspec::Half r2 = *static_cast<const opspec::Half*>(in[2]);",
      "  float* __restrict__ out0 = static_cast<float*>(out[0]);",
      "  unsigned exact = 0;",
      "  const float r3 = from_bits<float>(0x40000000ull);  // 2.0",
      "  const opspec::Half r6 = store<opspec::Half>(apply<kFast>(SinOp{}, load(r2)));",
      "  exact |= needs_exact<kFast>(SinOp{}, load(r2));",
      "  const float r7 = store<float>(CastOp<float>{}(load(r6)));",
      "#pragma omp simd",
      "  for (int64_t i = 0; i < n; ++i) {",
      "    const float r0 = in0[i];",
      "    const float r1 = in1[i];",
      "    const float r4 = store<float>(ReluOp{}(load(r0)));",
      "    const float r5 = store<float>(MulOp{}(static_cast<float>(load(r4)), static_cast<float>(load(r3))));",
      "    out0[i] = r9;",
      "  }",
      "  return exact;",
      "extern \"C\" __attribute__((visibility(\"default\"))) void fused_relu_mul_add_0(const int64_t n, const void* const* in, void* const* out) {",
      "  if (tile<true>(n, in, out) != 0) tile<false>(n, in, out);"});
  // Deterministic, and the same text for every shape of the structure.
  EXPECT_EQ(src, fused_cpu_source(p, "fused_relu_mul_add_0"));
  FusedProgram q({1000, 8});
  const int qx = q.add_input(DType::kFloat32, {1000, 8});
  q.add_output(q.add_op(FusedOp::kNeg, {qx}));
  q.finalize();
  FusedProgram q2({3});
  q2.add_output(q2.add_op(FusedOp::kNeg, {q2.add_input(DType::kFloat32, {3})}));
  q2.finalize();
  EXPECT_EQ(fused_cpu_source(q, "fused_neg_0"), fused_cpu_source(q2, "fused_neg_0"));
}

// Cheap ops share a loop; each transcendental functor gets a loop of its
// own, its operand and result passing through tile buffers (See Note
// [Generated CPU kernels]); only loops that take a fast path reduce `exact`.
TEST_F(CodegenTest, ComputeBoundFunctorsGetLoopsOfTheirOwn) {
  FusedProgram p({64});
  const int x = p.add_input(DType::kFloat32, {64});
  const int r = p.add_op(FusedOp::kRelu, {x});
  const int sn = p.add_op(FusedOp::kSin, {r});
  const int e = p.add_op(FusedOp::kExp, {sn});
  p.add_output(sn);
  p.add_output(p.add_op(FusedOp::kAdd, {e, x}));
  p.finalize();
  const std::string src = fused_cpu_source(p, "fused_relu_sin_exp_add_0");
  expect_in_order(src, {
      "  alignas(64) float r1_tile[512];",
      "  alignas(64) float r2_tile[512];",
      "  alignas(64) float r3_tile[512];",
      "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) {\n    const float r0 = in0[i];\n"
      "    const float r1 = store<float>(ReluOp{}(load(r0)));\n    r1_tile[i] = r1;\n  }",
      "#pragma omp simd reduction(| : exact)\n  for (int64_t i = 0; i < n; ++i) {\n    const float r1 = r1_tile[i];\n"
      "    const float r2 = store<float>(apply<kFast>(SinOp{}, load(r1)));\n"
      "    exact |= needs_exact<kFast>(SinOp{}, load(r1));\n    r2_tile[i] = r2;\n    out0[i] = r2;\n  }",
      "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) {\n    const float r2 = r2_tile[i];\n"
      "    const float r3 = store<float>(ExpOp{}(load(r2)));\n    r3_tile[i] = r3;\n  }",
      "#pragma omp simd\n  for (int64_t i = 0; i < n; ++i) {\n    const float r0 = in0[i];\n    const float r3 = r3_tile[i];\n"
      "    const float r4 = store<float>(AddOp{}(static_cast<float>(load(r3)), static_cast<float>(load(r0))));\n"
      "    out1[i] = r4;\n  }"});
  const Tensor in = ops::mul(ops::randn({64}), 3.0);
  const std::vector<Tensor> got = generated(p, "fused_relu_sin_exp_add_0", {in});
  expect_bits_equal(got[0], ops::sin(ops::relu(in)), "sin");
  expect_bits_equal(got[1], ops::add(ops::exp(ops::sin(ops::relu(in))), in), "add");
}

// Every op in every dtype, with contiguous, broadcast and uniform inputs
// over several tiles: the generated kernel's bits are the interpreter's.
TEST_F(CodegenTest, AllOpsAllDTypesMatchTheInterpreterBitForBit) {
  manual_seed(3);
  std::set<FusedOp> covered;
  for (DType d : kFusedDTypes) {
    SCOPED_TRACE(dtype_short_name(d));
    const FusedProgram p = all_ops_program(d, 130);  // 1040 elements: two full tiles and a partial one
    for (const FusedProgram::Instr& ins : p.instrs()) covered.insert(ins.op);
    const std::vector<Tensor> in = {operand({130, 8}, d), operand({8}, d), operand({1}, d)};
    const std::vector<Tensor> want = interpreted(p, in);
    const std::vector<Tensor> got = generated(p, str_cat("fused_all_ops_", dtype_short_name(d)), in);
    ASSERT_EQ(got.size(), want.size());
    for (size_t k = 0; k < got.size(); ++k) expect_bits_equal(got[k], want[k], str_cat("output ", k));
  }
  EXPECT_EQ(covered.size(), static_cast<size_t>(FusedOp::kCast) + 1) << "every FusedOp is generated";
}

// On PATH: clang++, whose kernels must keep the library's bits too (See
// Note [Run-time CPU compilation]: -fno-builtin-pow keeps it from turning
// pow(x, 0.5) into sqrt). Skipped where clang++ is not installed.
TEST_F(CodegenTest, ClangKernelsMatchTheInterpreterBitForBit) {
  std::string clang;
  for (const char* name : {"clang++", "clang++-14", "clang++-15", "clang++-16"}) {
    for (const char* dir : {"/usr/bin/", "/usr/local/bin/"}) {
      if (clang.empty() && std::filesystem::exists(str_cat(dir, name))) clang = str_cat(dir, name);
    }
  }
  if (clang.empty()) GTEST_SKIP() << "clang++ is not installed";
  const ScopedEnv cxx("OPSPEC_CXX", clang);
  manual_seed(6);
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kInt32}) {
    SCOPED_TRACE(dtype_short_name(d));
    const FusedProgram p = all_ops_program(d, 70);
    const std::vector<Tensor> in = {operand({70, 8}, d), operand({8}, d), operand({1}, d)};
    const std::vector<Tensor> want = interpreted(p, in);
    const std::vector<Tensor> got = generated(p, str_cat("fused_all_ops_clang_", dtype_short_name(d)), in);
    for (size_t k = 0; k < got.size(); ++k) expect_bits_equal(got[k], want[k], str_cat("output ", k));
  }
}

// sin and cos take their fast path tile by tile and rerun a tile whose
// inputs need libm; eager's rows and the fused tiles are cut differently.
TEST_F(CodegenTest, TrigFastPathsMatchEagerBitForBit) {
  manual_seed(4);
  Tensor x = ops::mul(ops::randn({5000}), 3.0);
  x.data_ptr<float>()[700] = 1e30f;   // the second tile needs libm
  x.data_ptr<float>()[4999] = -8e5f;  // and the last, partial one
  for (DType d : {DType::kFloat32, DType::kFloat16, DType::kBFloat16, DType::kFloat64}) {
    SCOPED_TRACE(dtype_short_name(d));
    const Tensor xd = ops::to(x, d);
    FusedProgram p({5000});
    const int r = p.add_input(d, {5000});
    p.add_output(p.add_op(FusedOp::kSin, {r}));
    p.add_output(p.add_op(FusedOp::kCos, {p.add_op(FusedOp::kMul, {r, r})}));
    p.finalize();
    const std::vector<Tensor> got = generated(p, "fused_sin_cos", {xd});
    expect_bits_equal(got[0], ops::sin(xd), "sin");
    expect_bits_equal(got[1], ops::cos(ops::mul(xd, xd)), "cos");
  }
}

TEST_F(CodegenTest, OutputOverItsInputWaitsForTheTilesExactRerun) {
  // x = sin(x + 1) written over x (an in-place group, See Note [In-place
  // fusion]): tiles with a huge value rerun sin's exact path from x, so the
  // writes wait for the tile's end, generated or interpreted.
  manual_seed(5);
  Tensor x = ops::mul(ops::randn({5000}), 3.0);
  x.data_ptr<float>()[700] = 1e30f;
  x.data_ptr<float>()[4999] = -8e5f;
  const Tensor want = ops::sin(ops::add(x, 1.0));
  FusedProgram p({5000});
  const int r = p.add_input(DType::kFloat32, {5000});
  p.add_output(p.add_op(FusedOp::kSin, {p.add_op(FusedOp::kAdd, {r, p.add_constant(1.0, DType::kFloat32)})}));
  p.finalize();
  Tensor xi = ops::clone(x);
  run_fused(p, {xi}, {xi});
  expect_bits_equal(xi, want, "interpreted");
  CpuFusedCodegenGuard always(CpuFusedCodegen::kAlways);
  const std::unique_ptr<FusedKernel> k =
      make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), "fused_add_sin");
  Tensor xg = ops::clone(x);
  k->run({xg}, {xg});
  expect_bits_equal(xg, want, "generated");
  // An output over part of an input (shifted by one element) is refused.
  const Tensor buffer = ops::randn({5001});
  EXPECT_THAT([&] { k->run({ops::slice(buffer, 0, 0, 5000)}, {ops::slice(buffer, 0, 1, 5001)}); },
              ThrowsMessage<Error>(HasSubstr("shares memory with an input but is not that input")));
}

// The fused backend on strided, broadcast and large (streamed) operands:
// bit-identical to eager, through one generated kernel.
TEST_F(CodegenTest, FusedBackendMatchesEagerBitForBit) {
  manual_seed(5);
  CpuFusedCodegenGuard always(CpuFusedCodegen::kAlways);
  auto fn = [](const std::vector<Tensor>& in) {
    const Tensor a = ops::relu(ops::add(ops::mul(in[0], in[1]), 2));
    const Tensor b = ops::where(ops::gt(a, in[2]), ops::sub(a, in[2], 3), ops::maximum(in[0], ops::neg(in[2])));
    return std::vector<Tensor>{ops::mul(b, 0.5), ops::tanh(ops::exp(ops::sin(a)))};
  };
  for (int64_t rows : {37, 1023}) {  // 1023 x 2051 f32: outputs of 8 MiB, streamed
    SCOPED_TRACE(rows);
    const std::vector<Tensor> in = {ops::randn({rows, 2051}), ops::randn({2051}), ops::t(ops::randn({2051, rows}))};
    const CpuJitStats before = cpu_jit_stats();
    const CompiledFunction cf = compile(fn, {.backend = "fused", .name = "codegen_test"});
    const std::vector<Tensor> got = cf(in), want = fn(in);
    const CpuJitStats after = cpu_jit_stats();
    // One generated kernel, compiled for the first shape and reused by the second.
    EXPECT_EQ(after.compiles + after.memory_hits + after.disk_hits,
              before.compiles + before.memory_hits + before.disk_hits + (rows == 37 ? 1 : 0));
    ASSERT_EQ(got.size(), 2u);
    expect_bits_equal(got[0], want[0], "where chain");
    expect_bits_equal(got[1], want[1], "transcendentals");
  }
}

TEST_F(CodegenTest, AutoPolicyTiersUpAfterEnoughElements) {
  CpuFusedCodegenGuard automatic(CpuFusedCodegen::kAuto);
  // A small kernel: interpreted until its runs total kCodegenTotalElements.
  constexpr int64_t kSmall = kCodegenRunElements / 2;
  constexpr int64_t kRuns = kCodegenTotalElements / kSmall;
  FusedProgram p({kSmall});
  const int x = p.add_input(DType::kFloat32, {kSmall});
  p.add_output(p.add_op(FusedOp::kAbs, {p.add_op(FusedOp::kSub, {x, p.add_constant(1.5, DType::kFloat32)})}));
  p.finalize();
  const auto k = make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), "fused_sub_abs");
  const Tensor in = ops::randn({kSmall});
  const Tensor want = ops::abs(ops::sub(in, 1.5));
  for (int64_t run = 1; run <= kRuns + 1; ++run) {
    Tensor out = make_tensor({kSmall}, DType::kFloat32, kCPU);
    k->run({in}, {out});
    ASSERT_EQ(cpu_jit_stats().compiles, run >= kRuns ? 1 : 0) << "run " << run;
    if (run == 1 || run >= kRuns) expect_bits_equal(out, want, str_cat("run ", run));
  }
  // A large run: compiled at once (the same structure, another name: a new kernel).
  FusedProgram q({kCodegenRunElements});
  const int qx = q.add_input(DType::kFloat32, {kCodegenRunElements});
  q.add_output(q.add_op(FusedOp::kAbs, {q.add_op(FusedOp::kSub, {qx, q.add_constant(1.5, DType::kFloat32)})}));
  q.finalize();
  const auto big = make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(q), "fused_sub_abs_big");
  const Tensor in_big = ops::randn({kCodegenRunElements});
  Tensor out_big = make_tensor({kCodegenRunElements}, DType::kFloat32, kCPU);
  big->run({in_big}, {out_big});
  EXPECT_EQ(cpu_jit_stats().compiles, 2);
  expect_bits_equal(out_big, ops::abs(ops::sub(in_big, 1.5)), "large run");
}

// Threads running one kernel as it tiers up: one compile, every run right.
TEST_F(CodegenTest, ConcurrentRunsTierUpOnce) {
  CpuFusedCodegenGuard automatic(CpuFusedCodegen::kAuto);
  FusedProgram p({kCodegenRunElements});
  const int x = p.add_input(DType::kFloat32, {kCodegenRunElements});
  p.add_output(p.add_op(FusedOp::kNeg, {p.add_op(FusedOp::kAbs, {x})}));
  p.finalize();
  const auto k = make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), "fused_abs_neg");
  const Tensor in = ops::randn({kCodegenRunElements});
  const Tensor want = ops::neg(ops::abs(in));
  std::vector<Tensor> outs;
  for (int t = 0; t < 4; ++t) outs.push_back(make_tensor({kCodegenRunElements}, DType::kFloat32, kCPU));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back([&, t] { k->run({in}, {outs[t]}); });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(cpu_jit_stats().compiles, 1);
  for (int t = 0; t < 4; ++t) expect_bits_equal(outs[t], want, str_cat("thread ", t));
}

TEST_F(CodegenTest, NeverPolicyInterprets) {
  CpuFusedCodegenGuard never(CpuFusedCodegen::kNever);
  FusedProgram p({kCodegenRunElements});
  p.add_output(p.add_op(FusedOp::kNeg, {p.add_input(DType::kFloat32, {kCodegenRunElements})}));
  p.finalize();
  const auto k = make_fused_kernel(DeviceType::kCPU, std::make_shared<const FusedProgram>(p), "fused_neg");
  const Tensor in = ops::randn({kCodegenRunElements});
  Tensor out = make_tensor({kCodegenRunElements}, DType::kFloat32, kCPU);
  k->run({in}, {out});
  k->run({in}, {out});
  expect_bits_equal(out, ops::neg(in), "output");
  EXPECT_EQ(cpu_jit_stats().compiles, 0);
}

constexpr char kSquareSource[] = R"cpp(
#include <cstdint>
extern "C" __attribute__((visibility("default"))) int64_t square_kernel(int64_t x) { return x * x; }
)cpp";

TEST_F(CodegenTest, LibrariesAreCachedInMemoryAndOnDisk) {
  const auto first = cpu_jit_compile("square_kernel", kSquareSource);
  EXPECT_EQ(cpu_jit_stats().compiles, 1);
  EXPECT_EQ(cpu_jit_compile("square_kernel", kSquareSource), first);
  EXPECT_EQ(cpu_jit_stats().memory_hits, 1);
  auto* square = reinterpret_cast<int64_t (*)(int64_t)>(first->symbol("square_kernel"));
  EXPECT_EQ(square(-7), 49);
  // The source is kept beside the library, readable.
  std::set<std::string> extensions;
  for (const auto& entry : std::filesystem::directory_iterator(dir())) extensions.insert(entry.path().extension());
  EXPECT_THAT(extensions, ::testing::IsSupersetOf({".cc", ".so"}));
  // Another process (here: an empty memory cache) loads it from disk.
  cpu_jit_reset_memory_cache();
  const auto again = cpu_jit_compile("square_kernel", kSquareSource);
  EXPECT_EQ(cpu_jit_stats().disk_hits, 1);
  EXPECT_EQ(cpu_jit_stats().compiles, 0);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(again->symbol("square_kernel"))(5), 25);
  // A header's text is part of the key.
  cpu_jit_compile("square_kernel", kSquareSource, {{"unused.h", "// a different header\n"}});
  EXPECT_EQ(cpu_jit_stats().compiles, 1);
  // Generated kernels: one per structure and name.
  FusedProgram p({16});
  p.add_output(p.add_op(FusedOp::kSqrt, {p.add_input(DType::kFloat64, {16})}));
  p.finalize();
  EXPECT_EQ(compile_fused_cpu(p, "fused_sqrt"), compile_fused_cpu(p, "fused_sqrt"));
}

TEST_F(CodegenTest, WithoutADiskCacheNothingIsLeftBehind) {
  const ScopedEnv off("OPSPEC_CPU_CACHE_DIR", "off");
  EXPECT_EQ(cpu_jit_cache_dir(), "");
  const auto lib = cpu_jit_compile("square_kernel", kSquareSource);
  EXPECT_EQ(reinterpret_cast<int64_t (*)(int64_t)>(lib->symbol("square_kernel"))(3), 9);
  EXPECT_FALSE(std::filesystem::exists(dir()));
}

TEST_F(CodegenTest, CompileErrorsNameTheKernelAndShowTheCompilersOutput) {
  EXPECT_THAT([] { cpu_jit_compile("broken_kernel", "int f() { return undefined_name_42; }\n"); },
              ThrowsMessage<Error>(AllOf(HasSubstr("cpu_jit: compiling kernel broken_kernel failed"),
                                         HasSubstr("undefined_name_42"))));
  const auto lib = cpu_jit_compile("square_kernel", kSquareSource);
  EXPECT_THAT([&] { lib->symbol("no_such_symbol"); },
              ThrowsMessage<Error>(HasSubstr("kernel square_kernel defines no symbol 'no_such_symbol'")));
}

TEST_F(CodegenTest, WithoutACompilerAutoInterpretsAndAlwaysThrows) {
  const ScopedEnv missing("OPSPEC_CXX", "/nonexistent/bin/c++");
  std::string why;
  EXPECT_FALSE(cpu_jit_available(&why));
  EXPECT_THAT(why, HasSubstr("the C++ compiler '/nonexistent/bin/c++' does not run"));
  FusedProgram p({kCodegenRunElements});
  p.add_output(p.add_op(FusedOp::kAbs, {p.add_input(DType::kFloat32, {kCodegenRunElements})}));
  p.finalize();
  const auto program = std::make_shared<const FusedProgram>(p);
  {
    CpuFusedCodegenGuard always(CpuFusedCodegen::kAlways);
    EXPECT_THAT([&] { make_fused_kernel(DeviceType::kCPU, program, "fused_abs"); },
                ThrowsMessage<Error>(HasSubstr("set OPSPEC_CXX to a C++20 compiler")));
  }
  CpuFusedCodegenGuard automatic(CpuFusedCodegen::kAuto);
  const auto k = make_fused_kernel(DeviceType::kCPU, program, "fused_abs");
  const Tensor in = ops::randn({kCodegenRunElements});
  Tensor out = make_tensor({kCodegenRunElements}, DType::kFloat32, kCPU);
  testing::internal::CaptureStderr();
  k->run({in}, {out});
  k->run({in}, {out});
  EXPECT_THAT(testing::internal::GetCapturedStderr(),
              HasSubstr("code generation is off for /nonexistent/bin/c++, interpreting instead"));
  expect_bits_equal(out, ops::abs(in), "output");
}

TEST(CpuFusedCodegenPolicyTest, GuardSetsThePolicyAndRestoresIt) {
  const CpuFusedCodegen before = cpu_fused_codegen();
  {
    CpuFusedCodegenGuard never(CpuFusedCodegen::kNever);
    EXPECT_EQ(cpu_fused_codegen(), CpuFusedCodegen::kNever);
  }
  EXPECT_EQ(cpu_fused_codegen(), before);
}

}  // namespace cpu_fused_codegen_test
}  // namespace opspec::internal
