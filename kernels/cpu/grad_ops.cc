// grad_ops.cc: CPU kernels of the backward ops that are neither elementwise
// math nor normalisation: native_dropout_backward, slice_backward and
// select_backward.
#include <cstring>

#include "kernels/common/backward_meta.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/factory_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/core/memory_format.h"

namespace opspec::internal {

namespace {

// zeros_cpu_of: a contiguous zero tensor (every dtype's zero is all-zero bits).
Tensor zeros_cpu_of(IntArrayRef sizes, DType dtype, std::string_view op) {
  check_factory_size(sizes, op);
  Tensor out = make_tensor(sizes, dtype, kCPU);
  char* data = static_cast<char*>(out.raw_data());
  parallel_for(out.nbytes(), 1 << 20, [&](int64_t begin, int64_t end) {
    std::memset(data + begin, 0, static_cast<size_t>(end - begin));
  });
  return out;
}

}  // namespace

// native_dropout_backward: PyTorch's `grad * mask * scale` (See DropoutBackwardOp),
// a TensorIterator op on the CPU, so laid out as (grad, mask) lay out an
// elementwise result (grad decides; torch 1.13's strides), and so is Meta's;
// CUDA follows grad's suggested format, as PyTorch's CUDA kernel.
Tensor native_dropout_backward_cpu(const Tensor& grad, const Tensor& mask, double scale) {
  constexpr std::string_view kOp = "aten::native_dropout_backward";
  require_cpu_device(grad.device(), kOp);
  check_dropout_backward(grad, mask);
  const Tensor* operands[] = {&grad, &mask};
  Tensor out = make_tensor_with_strides(grad.sizes(), elementwise_output_strides(grad.sizes(), operands),
                                        grad.dtype(), kCPU);
  if (out.numel() == 0) return out;
  const Tensor in[] = {grad, mask};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_FLOATING_DTYPES(grad.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const DropoutBackwardOp f{scale};
    cpu_kernel<scalar_t, scalar_t, bool>(iter, [f](C g, bool m) { return f(g, static_cast<C>(m)); });
  });
  return out;
}

Tensor slice_backward_cpu(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                          int64_t step) {
  require_cpu_device(grad.device(), "aten::slice_backward");
  Tensor out = zeros_cpu_of(input_sizes, grad.dtype(), "aten::slice_backward");
  copy_into(slice_backward_target(out, grad, dim, start, end, step), grad);
  return out;
}

Tensor select_backward_cpu(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t index) {
  require_cpu_device(grad.device(), "aten::select_backward");
  Tensor out = zeros_cpu_of(input_sizes, grad.dtype(), "aten::select_backward");
  copy_into(select_backward_target(out, grad, dim, index), grad);
  return out;
}

}  // namespace opspec::internal
