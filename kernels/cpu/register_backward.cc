// register_backward.cc: registers the CPU and Meta kernels of autograd's
// backward ops that are not elementwise (register_backward_kernels); the
// elementwise ones (threshold_backward, tanh_backward, ...) are in
// register_elementwise.cc.
#include <array>
#include <optional>
#include <tuple>

#include "kernels/common/backward_meta.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

// CPU kernels, defined in softmax.cc, layer_norm.cc and grad_ops.cc.
Tensor softmax_backward_data_cpu(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype);
Tensor log_softmax_backward_data_cpu(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_cpu(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask);
Tensor native_dropout_backward_cpu(const Tensor& grad, const Tensor& mask, double scale);
Tensor slice_backward_cpu(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                          int64_t step);
Tensor select_backward_cpu(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t index);

void register_backward_kernels(Dispatcher& d) {
  Library lib("aten", d);
  lib.impl("_softmax_backward_data", DispatchKey::kCPU, &softmax_backward_data_cpu)
      .impl("_softmax_backward_data", DispatchKey::kMeta, &softmax_backward_data_meta)
      .impl("_log_softmax_backward_data", DispatchKey::kCPU, &log_softmax_backward_data_cpu)
      .impl("_log_softmax_backward_data", DispatchKey::kMeta, &log_softmax_backward_data_meta)
      .impl("native_layer_norm_backward", DispatchKey::kCPU, &native_layer_norm_backward_cpu)
      .impl("native_layer_norm_backward", DispatchKey::kMeta, &native_layer_norm_backward_meta)
      .impl("native_dropout_backward", DispatchKey::kCPU, &native_dropout_backward_cpu)
      .impl("native_dropout_backward", DispatchKey::kMeta, &native_dropout_backward_meta)
      .impl("slice_backward", DispatchKey::kCPU, &slice_backward_cpu)
      .impl("slice_backward", DispatchKey::kMeta, &slice_backward_meta)
      .impl("select_backward", DispatchKey::kCPU, &select_backward_cpu)
      .impl("select_backward", DispatchKey::kMeta, &select_backward_meta);
}

}  // namespace opspec::internal
