// cuBLAS matrix products against the CPU kernels. Device tests skip without a GPU.
#include "kernels/cuda/blas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/core/generator.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace cuda_blas_test {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;


const Device kCuda(DeviceType::kCUDA, 0);

Tensor on_cuda(const Tensor& t) { return ops::to(t, kCuda); }
Tensor on_cpu(const Tensor& t) { return ops::to(t, kCPU); }

// expect_close: got (cuda) equals want (cpu) to a tolerance scaled by the
// reduction length k (the summation order differs).
void expect_close(const Tensor& got, const Tensor& want, int64_t k) {
  ASSERT_TRUE(got.device().is_cuda()) << got.meta_str();
  ASSERT_EQ(got.dtype(), want.dtype());
  ASSERT_EQ(format_sizes(got.sizes()), format_sizes(want.sizes()));
  const std::vector<double> g = on_cpu(got).to_vector<double>(), w = want.to_vector<double>();
  const double eps = want.dtype() == DType::kFloat64 ? 1e-15
                     : want.dtype() == DType::kFloat32 ? 1e-6
                     : want.dtype() == DType::kFloat16 ? 1e-3
                                                       : 8e-3;
  for (size_t i = 0; i < g.size(); ++i) {
    ASSERT_NEAR(g[i], w[i], eps * (1.0 + std::abs(w[i])) * std::max<int64_t>(k, 1) * 4) << "element " << i;
  }
}

Tensor randn(IntArrayRef sizes, DType d) { return ops::to(ops::randn(sizes), d); }

TEST(CudaBlasTest, ProductsHaveCudaKernels) {
  // Registration only (no GPU needed): the products dispatch to cuBLAS at the CUDA key.
  for (const char* op : {"aten::mm", "aten::bmm", "aten::addmm", "aten::dot", "aten::mv"}) {
    const std::string dump = Dispatcher::singleton().dump_dispatch_table(Dispatcher::singleton().get(op));
    EXPECT_THAT(dump, HasSubstr("CUDA: kernel")) << dump;
  }
}

TEST(CudaBlasTest, MatchesCpuForFloatDTypesAndLayouts) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(1);
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_short_name(d));
    const Tensor a = randn({33, 17}, d), b = randn({17, 45}, d);
    expect_close(ops::mm(on_cuda(a), on_cuda(b)), ops::mm(a, b), 17);
    // Transposed operands (passed with CUBLAS_OP_T) and a strided slice (copied).
    const Tensor at = randn({17, 33}, d), bt = randn({45, 17}, d);
    expect_close(ops::mm(ops::t(on_cuda(at)), ops::t(on_cuda(bt))), ops::mm(ops::t(at), ops::t(bt)), 17);
    const Tensor wide = randn({33, 34}, d), rhs = randn({17, 5}, d);
    expect_close(ops::mm(ops::slice(on_cuda(wide), 1, 0, 34, 2), on_cuda(rhs)),
                 ops::mm(ops::slice(wide, 1, 0, 34, 2), rhs), 17);
  }
}

TEST(CudaBlasTest, BmmAddmmDotMv) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(2);
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    SCOPED_TRACE(dtype_short_name(d));
    const Tensor x = randn({4, 6, 7}, d), y = randn({4, 7, 3}, d);
    expect_close(ops::bmm(on_cuda(x), on_cuda(y)), ops::bmm(x, y), 7);
    // A batch-broadcast operand (batch stride 0).
    const Tensor y1 = ops::expand(randn({1, 7, 3}, d), {4, 7, 3});
    expect_close(ops::bmm(on_cuda(x), ops::expand(on_cuda(ops::slice(y1, 0, 0, 1)), {4, 7, 3})), ops::bmm(x, y1), 7);
    const Tensor bias = randn({3}, d), m1 = randn({5, 7}, d), m2 = randn({7, 3}, d);
    expect_close(ops::addmm(on_cuda(bias), on_cuda(m1), on_cuda(m2), 0.5, 2.0), ops::addmm(bias, m1, m2, 0.5, 2.0), 7);
    const Tensor v = randn({7}, d), w = randn({7}, d);
    expect_close(ops::dot(on_cuda(v), on_cuda(w)), ops::dot(v, w), 7);
    expect_close(ops::mv(on_cuda(m1), on_cuda(v)), ops::mv(m1, v), 7);
  }
}

TEST(CudaBlasTest, EmptyAndZeroBeta) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor a = randn({3, 0}, DType::kFloat32), b = randn({0, 4}, DType::kFloat32);
  expect_close(ops::mm(on_cuda(a), on_cuda(b)), ops::mm(a, b), 0);  // zeros
  // beta == 0 ignores a NaN addend; k == 0 with beta keeps beta * self.
  const Tensor nan_bias = ops::full({4}, std::nan(""));
  const Tensor m1 = randn({3, 2}, DType::kFloat32), m2 = randn({2, 4}, DType::kFloat32);
  expect_close(ops::addmm(on_cuda(nan_bias), on_cuda(m1), on_cuda(m2), 0.0, 1.0), ops::addmm(nan_bias, m1, m2, 0.0, 1.0),
               2);
  const Tensor bias = randn({4}, DType::kFloat32);
  expect_close(ops::addmm(on_cuda(bias), on_cuda(a), on_cuda(b), 3.0, 1.0), ops::addmm(bias, a, b, 3.0, 1.0), 0);
}

TEST(CudaBlasTest, IntegerProductsAreNotImplemented) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor a = on_cuda(ops::ones({2, 2}, {.dtype = DType::kInt64}));
  EXPECT_THAT([&] { ops::mm(a, a); },
              ThrowsMessage<NotImplementedError>(HasSubstr("\"addmm_cuda\" not implemented for 'Long'")));
}

}  // namespace
}  // namespace opspec::internal
