#include "kernels/cuda/nvrtc.h"

#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "harness/gtest/gtest_test_util.h"
#include "runtime/core/error.h"

namespace opspec::internal {
namespace cuda_nvrtc_test {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr char kSaxpy[] = R"(#include "opspec/nvrtc_prelude.h"
extern "C" __global__ void saxpy_0(int n, float a, const float* x, float* y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = opspec::internal::AddOp{}(opspec::internal::MulOp{}(a, x[i]), y[i]);
}
)";

bool has_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

using testing_util::ScopedEnv;

// TempDir: a fresh directory, removed with its contents at the end of the scope.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "opspec_nvrtc_test_XXXXXX").string();
    path_ = mkdtemp(tmpl.data());
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::vector<std::filesystem::path> files_in(const std::string& dir) {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path());
  return out;
}

TEST(NvrtcTest, CompilesToPtxWithoutADevice) {
  TempDir dir;
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", dir.path());
  const auto k = nvrtc_compile("saxpy_0", kSaxpy);
  EXPECT_EQ(k->name, "saxpy_0");
  EXPECT_THAT(k->ptx, AllOf(HasSubstr(".entry saxpy_0"), HasSubstr(".target sm_90")));
  EXPECT_TRUE(k->cubin.empty());
  EXPECT_THAT(k->options, AllOf(HasSubstr("-arch=compute_90"), HasSubstr("--fmad=false"), HasSubstr("-default-device")));
  EXPECT_EQ(k->key.size(), 32u);
  // --fmad=false: a * x + y stays a separate multiply and add.
  EXPECT_THAT(k->ptx, AllOf(HasSubstr("mul.rn.f32"), HasSubstr("add.rn.f32")));
  EXPECT_THAT(k->ptx, ::testing::Not(HasSubstr("fma.rn.f32")));
}

TEST(NvrtcTest, RealArchGivesACubin) {
  TempDir dir;
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", dir.path());
  const auto k = nvrtc_compile("saxpy_0", kSaxpy, NvrtcOptions{.arch = "sm_90"});
  EXPECT_FALSE(k->cubin.empty());
  EXPECT_EQ(k->cubin.substr(0, 4), "\x7f" "ELF");
  EXPECT_TRUE(k->ptx.empty());
  EXPECT_THAT(nvrtc_supported_archs(), ::testing::Contains(90));
}

TEST(NvrtcTest, MemoryCacheHitsOnTheSameNameSourceAndOptions) {
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", "off");
  nvrtc_reset_memory_cache();
  const auto a = nvrtc_compile("saxpy_0", kSaxpy);
  const auto b = nvrtc_compile("saxpy_0", kSaxpy);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(nvrtc_cache_stats().compiles, 1);
  EXPECT_EQ(nvrtc_cache_stats().memory_hits, 1);
  // Another option, name or source is another kernel.
  const auto c = nvrtc_compile("saxpy_0", kSaxpy, NvrtcOptions{.extra = {"-DOPSPEC_TEST=1"}});
  EXPECT_NE(a->key, c->key);
  const std::string renamed = std::string(kSaxpy).replace(std::string(kSaxpy).find("saxpy_0"), 7, "saxpy_1");
  const auto d = nvrtc_compile("saxpy_1", renamed);
  EXPECT_NE(a->key, d->key);
  EXPECT_EQ(nvrtc_cache_stats().compiles, 3);
}

TEST(NvrtcTest, DiskCacheHitsInAFreshProcessState) {
  TempDir dir;
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", dir.path() + "/nested/cache");
  nvrtc_reset_memory_cache();
  const auto a = nvrtc_compile("saxpy_0", kSaxpy);
  EXPECT_EQ(nvrtc_cache_stats().compiles, 1);
  const auto files = files_in(dir.path() + "/nested/cache");
  ASSERT_EQ(files.size(), 1u);  // no temporary file left behind
  EXPECT_EQ(files[0].filename().string(), "saxpy_0-" + a->key + ".ptx");

  nvrtc_reset_memory_cache();  // as a new process would start
  const auto b = nvrtc_compile("saxpy_0", kSaxpy);
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(b->ptx, a->ptx);
  EXPECT_EQ(b->key, a->key);
  EXPECT_EQ(nvrtc_cache_stats().disk_hits, 1);
  EXPECT_EQ(nvrtc_cache_stats().compiles, 0);
  const auto c = nvrtc_compile("saxpy_0", kSaxpy);  // now in memory again
  EXPECT_EQ(c.get(), b.get());
  EXPECT_EQ(nvrtc_cache_stats().memory_hits, 1);
}

TEST(NvrtcTest, UnwritableCacheDirectoryOnlyCostsACompile) {
  TempDir dir;
  const std::string file = dir.path() + "/not_a_dir";
  { std::FILE* f = std::fopen(file.c_str(), "w"); std::fclose(f); }
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", file + "/cache");
  nvrtc_reset_memory_cache();
  EXPECT_NO_THROW(nvrtc_compile("saxpy_0", kSaxpy));
  EXPECT_EQ(nvrtc_cache_stats().compiles, 1);
}

TEST(NvrtcTest, CacheDirectoryFromTheEnvironment) {
  {
    ScopedEnv a("OPSPEC_CUDA_CACHE_DIR", "/tmp/x");
    EXPECT_EQ(nvrtc_cache_dir(), "/tmp/x");
  }
  {
    ScopedEnv a("OPSPEC_CUDA_CACHE_DIR", "off");
    EXPECT_EQ(nvrtc_cache_dir(), "");
  }
  {
    ScopedEnv a("OPSPEC_CUDA_CACHE_DIR", std::nullopt), b("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(nvrtc_cache_dir(), "/xdg/opspec/cuda");
  }
  {
    ScopedEnv a("OPSPEC_CUDA_CACHE_DIR", std::nullopt), b("XDG_CACHE_HOME", std::nullopt), c("HOME", "/home/u");
    EXPECT_EQ(nvrtc_cache_dir(), "/home/u/.cache/opspec/cuda");
  }
}

TEST(NvrtcTest, CompileErrorsReportTheKernelAndTheLog) {
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", "off");
  const char* bad = "extern \"C\" __global__ void broken_0(float* x) { x[0] = undefined_name; }\n";
  EXPECT_THAT([&] { nvrtc_compile("broken_0", bad); },
              ThrowsMessage<Error>(AllOf(HasSubstr("NVRTC failed to compile CUDA kernel broken_0"),
                                         HasSubstr("identifier \"undefined_name\" is undefined"),
                                         HasSubstr("--- source of broken_0.cu ---"),
                                         HasSubstr("    1  extern \"C\" __global__ void broken_0"))));
}

TEST(NvrtcTest, EmbeddedHeadersAreTheSourceTree) {
  const auto& headers = nvrtc_embedded_headers();
  auto text = [&](std::string_view name) -> std::string {
    for (const auto& [n, t] : headers) {
      if (n == name) return t;
    }
    return "";
  };
  EXPECT_THAT(text("kernels/common/elementwise_ops.h"), HasSubstr("struct GeluTanhOp {"));
  EXPECT_THAT(text("kernels/common/vec_math.h"), HasSubstr("namespace opspec::internal::vec_math"));
  EXPECT_THAT(text("runtime/core/half.h"), HasSubstr("struct BFloat16 {"));
  EXPECT_THAT(text("opspec/nvrtc_prelude.h"), HasSubstr("#include \"kernels/common/elementwise_ops.h\""));
  EXPECT_EQ(nvrtc_version().find('.') != std::string::npos, true);
}

TEST(NvrtcTest, LaunchesOnTheDevice) {
  if (!has_device()) GTEST_SKIP() << "no CUDA device available";
  ScopedEnv env("OPSPEC_CUDA_CACHE_DIR", "off");
  const auto k = nvrtc_compile("saxpy_0", kSaxpy, nvrtc_options_for_current_device());
  constexpr int kN = 1000;
  std::vector<float> x(kN), y(kN);
  for (int i = 0; i < kN; ++i) {
    x[i] = static_cast<float>(i);
    y[i] = 1.0f;
  }
  void *dx = nullptr, *dy = nullptr;
  ASSERT_EQ(cudaMalloc(&dx, kN * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMalloc(&dy, kN * sizeof(float)), cudaSuccess);
  cudaMemcpy(dx, x.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
  cudaMemcpy(dy, y.data(), kN * sizeof(float), cudaMemcpyHostToDevice);
  int n = kN;
  float a = 2.0f;
  void* args[] = {&n, &a, &dx, &dy};
  launch_compiled_kernel(*k, LaunchConfig{(kN + 255) / 256, 256}, args);
  ASSERT_EQ(cudaMemcpy(y.data(), dy, kN * sizeof(float), cudaMemcpyDeviceToHost), cudaSuccess);
  for (int i = 0; i < kN; ++i) ASSERT_EQ(y[i], 2.0f * static_cast<float>(i) + 1.0f) << i;
  cudaFree(dx);
  cudaFree(dy);
  EXPECT_GT(cuda_multiprocessor_count(), 0);
}

TEST(NvrtcTest, NoDeviceIsAClearError) {
  if (has_device()) GTEST_SKIP() << "a CUDA device is available";
  EXPECT_THAT([] { nvrtc_options_for_current_device(); },
              ThrowsMessage<Error>(HasSubstr("CUDA requested but no device is available")));
}

}  // namespace
}  // namespace opspec::internal
