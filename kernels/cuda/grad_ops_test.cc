// CUDA kernels of autograd's backward ops against the CPU's (skipped without
// a GPU): the elementwise ones bit for bit or to a few ulps, softmax and
// layer norm backward to rounding (other summation orders), slice/select
// backward, dropout backward and masked_fill_ exactly; then a whole backward
// pass on CUDA tensors against the same pass on the CPU.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "kernels/cuda/cuda_test_util.h"
#include "runtime/autograd/engine.h"

namespace opspec {
namespace cuda_grad_ops_test {

using testing::expect_close;
using testing::expect_same;
using testing::to_cpu;
using testing::to_cuda;

constexpr auto& kFloats = testing::kFloatDTypes;
Tensor input(IntArrayRef sizes, DType dt, uint64_t seed) { return testing::seeded_input(sizes, dt, seed); }

TEST(CudaGradOpsTest, ElementwiseBackwardOpsMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    const Tensor g = input({5, 33}, dt, 1), x = input({5, 33}, dt, 2);
    const Tensor dg = to_cuda(g), dx = to_cuda(x);
    expect_same(ops::threshold_backward(dg, dx, 0), ops::threshold_backward(g, x, 0), "threshold_backward " + n);
    expect_close(ops::tanh_backward(dg, ops::tanh(dx)), ops::tanh_backward(g, ops::tanh(x)), "tanh_backward " + n, 8);
    expect_close(ops::sigmoid_backward(dg, ops::sigmoid(dx)), ops::sigmoid_backward(g, ops::sigmoid(x)),
                 "sigmoid_backward " + n, 8);
    expect_close(ops::gelu_backward(dg, dx), ops::gelu_backward(g, x), "gelu_backward " + n, 8);
    expect_close(ops::gelu_backward(dg, dx, "tanh"), ops::gelu_backward(g, x, "tanh"), "gelu_backward tanh " + n, 8);
    expect_close(ops::silu_backward(dg, dx), ops::silu_backward(g, x), "silu_backward " + n, 8);
    const Tensor mask = ops::gt(x, 0.0);
    expect_same(ops::native_dropout_backward(dg, to_cuda(mask), 1.25), ops::native_dropout_backward(g, mask, 1.25),
                "native_dropout_backward " + n);
    // A 0-dim cuda grad with a 0-dim cpu mask (the device check allows it): a host scalar operand.
    const Tensor one = ops::ones({}, {.dtype = DType::kBool}), g0 = ops::select(ops::view(g, {-1}), 0, 3);
    expect_same(ops::native_dropout_backward(to_cuda(g0), one, 1.25), ops::native_dropout_backward(g0, one, 1.25),
                "native_dropout_backward cpu 0-dim mask " + n);
    expect_same(ops::sgn(dx), ops::sgn(x), "sgn " + n);
    Tensor filled = ops::clone(x), dfilled = ops::clone(dx);
    ops::masked_fill_(filled, mask, 0.5);
    ops::masked_fill_(dfilled, to_cuda(mask), 0.5);
    expect_same(dfilled, filled, "masked_fill_ " + n);
    const Tensor row_mask = ops::gt(input({33}, DType::kFloat32, 9), 0.0);
    expect_same(ops::masked_fill(dx, to_cuda(row_mask), -2.0), ops::masked_fill(x, row_mask, -2.0), "masked_fill " + n);
    expect_same(ops::new_zeros(dx, {3, 5}), ops::new_zeros(x, {3, 5}), "new_zeros " + n);
    expect_same(ops::_efficientzerotensor({4}, {.dtype = dt, .device = testing::kCuda0}),
                ops::_efficientzerotensor({4}, {.dtype = dt}), "_efficientzerotensor " + n);
  }
}

// native_dropout_backward on cuda allocates as PyTorch's CUDA kernel does,
// empty_like(grad, grad.suggest_memory_format()): channels-last for a
// channels-last grad, row-major for a transposed one (PyTorch 2.x's meta
// decomposition too; its CPU kernel, TensorIterator's grad * mask * scale,
// keeps a transposed grad's strides).
TEST(CudaGradOpsTest, DropoutBackwardLaysOutAsPytorchsCudaKernel) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  using testing::strides_of;
  using testing::to_cuda_as_strided;
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    const Tensor cl = ops::contiguous(input({2, 3, 4, 5}, dt, 20), MemoryFormat::kChannelsLast);
    const Tensor cl_mask = ops::gt(cl, 0.0);  // channels-last too
    const Tensor got = ops::native_dropout_backward(to_cuda_as_strided(cl), to_cuda_as_strided(cl_mask), 2.0);
    EXPECT_EQ(strides_of(got), (std::vector<int64_t>{60, 1, 15, 3})) << n;
    expect_same(got, ops::native_dropout_backward(cl, cl_mask, 2.0), "native_dropout_backward cl " + n);
    const Tensor t = ops::t(input({5, 4}, dt, 21));
    const Tensor t_mask = ops::gt(t, 0.0);
    const Tensor got_t = ops::native_dropout_backward(to_cuda_as_strided(t), to_cuda_as_strided(t_mask), 0.5);
    EXPECT_EQ(strides_of(got_t), (std::vector<int64_t>{5, 1})) << n;
    expect_same(got_t, ops::native_dropout_backward(t, t_mask, 0.5), "native_dropout_backward t " + n);
  }
}

TEST(CudaGradOpsTest, SoftmaxAndLayerNormBackwardMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  for (DType dt : kFloats) {
    const std::string n(dtype_short_name(dt));
    const Tensor x = input({4, 6, 70}, dt, 3), g = input({4, 6, 70}, dt, 4);
    const Tensor dx = to_cuda(x), dg = to_cuda(g);
    for (int64_t dim : {0, 1, 2}) {
      const Tensor y = ops::_softmax(x, dim), ly = ops::_log_softmax(x, dim);
      expect_close(ops::_softmax_backward_data(dg, to_cuda(y), dim, dt), ops::_softmax_backward_data(g, y, dim, dt),
                   "softmax_backward " + n, 16, 1);
      expect_close(ops::_log_softmax_backward_data(dg, to_cuda(ly), dim, dt),
                   ops::_log_softmax_backward_data(g, ly, dim, dt), "log_softmax_backward " + n, 16, 1);
    }
    const Tensor w = input({70}, dt, 5), b = input({70}, dt, 6);
    auto [y, mean, rstd] = ops::native_layer_norm(x, {70}, w, b, 1e-5);
    auto [cx, cw, cb] = ops::native_layer_norm_backward(g, x, {70}, mean, rstd, w, b, {true, true, true});
    auto [gx, gw, gb] = ops::native_layer_norm_backward(dg, dx, {70}, to_cuda(mean), to_cuda(rstd), to_cuda(w),
                                                        to_cuda(b), {true, true, true});
    expect_close(gx, cx, "layer_norm_backward dx " + n, 64, 1);
    expect_close(gw, cw, "layer_norm_backward dw " + n, 64, 1);
    expect_close(gb, cb, "layer_norm_backward db " + n, 64, 1);
  }
}

TEST(CudaGradOpsTest, SliceAndSelectBackwardMatchTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const Tensor g = input({3, 4}, DType::kFloat32, 7);
  expect_same(ops::slice_backward(to_cuda(g), {3, 9}, 1, 1, 9, 2), ops::slice_backward(g, {3, 9}, 1, 1, 9, 2),
              "slice_backward");
  const Tensor r = input({4}, DType::kFloat32, 8);
  expect_same(ops::select_backward(to_cuda(r), {3, 4}, 0, -1), ops::select_backward(r, {3, 4}, 0, -1),
              "select_backward");
}

TEST(CudaGradOpsTest, ABackwardPassOnCudaTensorsMatchesTheCpu) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  // A transformer-ish block: layer norm, linear, gelu, attention scores, softmax, slice.
  auto run = [](Device dev) {
    manual_seed(11);
    Tensor x = ops::to(ops::randn({2, 8, 16}, {.dtype = DType::kFloat64}), dev);
    Tensor w = ops::to(ops::randn({16, 16}, {.dtype = DType::kFloat64}), dev);
    Tensor gamma = ops::to(ops::ones({16}, {.dtype = DType::kFloat64}), dev);
    for (Tensor* t : {&x, &w, &gamma}) t->requires_grad_();
    const Tensor h = ops::layer_norm(x, {16}, gamma, std::nullopt);
    const Tensor a = ops::gelu(ops::matmul(h, w));
    const Tensor s = ops::softmax(ops::matmul(a, ops::transpose(a, 1, 2)), -1);
    ops::sum(ops::slice(ops::mul(s, s), 1, 2, 6)).backward();
    return std::vector<Tensor>{x.grad(), w.grad(), gamma.grad()};
  };
  const std::vector<Tensor> cpu = run(kCPU), gpu = run(testing::kCuda0);
  for (size_t i = 0; i < cpu.size(); ++i) expect_close(gpu[i], cpu[i], "grad " + std::to_string(i), 64, 1);
}

}  // namespace
}  // namespace opspec
