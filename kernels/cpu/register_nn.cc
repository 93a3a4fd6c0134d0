// register_nn.cc: registers the CPU and Meta kernels of the model ops:
// indexing and embeddings (indexing.cc), losses (loss.cc), attention
// (attention.cc), convolution (convolution.cc) and pooling (pooling.cc); their
// Meta kernels and checks are kernels/common/nn_meta.h and conv_meta.h.
#include <array>
#include <optional>
#include <tuple>

#include "kernels/common/conv_meta.h"
#include "kernels/common/nn_meta.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"
#include "runtime/fused/cross_entropy_rows.h"

namespace opspec::internal {

Tensor safe_softmax_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype);  // softmax.cc
Tensor index_select_cpu(const Tensor& self, int64_t dim, const Tensor& index);
Tensor embedding_cpu(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                     bool sparse);
Tensor embedding_dense_backward_cpu(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq);
Tensor tril_cpu(const Tensor& self, int64_t diagonal);
Tensor triu_cpu(const Tensor& self, int64_t diagonal);
Tensor argmax_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim);
Tensor argmin_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim);
std::tuple<Tensor, Tensor> nll_loss_forward_cpu(const Tensor& self, const Tensor& target,
                                                const std::optional<Tensor>& weight, int64_t reduction,
                                                int64_t ignore_index);
Tensor nll_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                             const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                             const Tensor& total_weight);
std::tuple<Tensor, Tensor> nll_loss2d_forward_cpu(const Tensor& self, const Tensor& target,
                                                  const std::optional<Tensor>& weight, int64_t reduction,
                                                  int64_t ignore_index);
Tensor nll_loss2d_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                               const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                               const Tensor& total_weight);
Tensor mse_loss_cpu(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor mse_loss_backward_cpu(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction);
std::tuple<Tensor, Tensor> sdpa_flash_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                                          double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
                                          std::optional<double> scale);
std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cpu_backward(const Tensor& grad_out, const Tensor& query,
                                                           const Tensor& key, const Tensor& value, const Tensor& out,
                                                           const Tensor& logsumexp, double dropout_p, bool is_causal,
                                                           const std::optional<Tensor>& attn_mask,
                                                           std::optional<double> scale);

Tensor convolution_cpu(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                       IntArrayRef output_padding, int64_t groups);
std::tuple<Tensor, Tensor, Tensor> convolution_backward_cpu(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, OptionalIntArrayRef bias_sizes,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask);
std::tuple<Tensor, Tensor> max_pool2d_with_indices_cpu(const Tensor& self, IntArrayRef kernel_size,
                                                       IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                       bool ceil_mode);
Tensor max_pool2d_with_indices_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                            IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                            bool ceil_mode, const Tensor& indices);
Tensor avg_pool2d_cpu(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                      bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override);
Tensor avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                               IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                               std::optional<int64_t> divisor_override);
Tensor adaptive_avg_pool2d_cpu(const Tensor& self, IntArrayRef output_size);
Tensor adaptive_avg_pool2d_backward_cpu(const Tensor& grad_output, const Tensor& self);
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_cpu(const Tensor& input, const std::optional<Tensor>& weight,
                                                         const std::optional<Tensor>& bias,
                                                         const std::optional<Tensor>& running_mean,
                                                         const std::optional<Tensor>& running_var, bool training,
                                                         double momentum, double eps);
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_cpu(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask);

bool cross_entropy_rows_cpu(const Tensor& rows, const Tensor& target, int64_t reduction, int64_t ignore_index,
                            const Tensor& loss, absl::FunctionRef<void()> start);  // loss.cc

void register_nn_kernels(Dispatcher& d) {
  register_cross_entropy_rows(DeviceType::kCPU, &cross_entropy_rows_cpu);  // See Note [Cross-entropy over rows]
  Library lib("aten", d);
  lib.impl("_safe_softmax", DispatchKey::kCPU, &safe_softmax_cpu)
      .impl("_safe_softmax", DispatchKey::kMeta, &safe_softmax_meta)
      .impl("index_select", DispatchKey::kCPU, &index_select_cpu)
      .impl("index_select", DispatchKey::kMeta, &index_select_meta)
      .impl("embedding", DispatchKey::kCPU, &embedding_cpu)
      .impl("embedding", DispatchKey::kMeta, &embedding_meta)
      .impl("embedding_dense_backward", DispatchKey::kCPU, &embedding_dense_backward_cpu)
      .impl("embedding_dense_backward", DispatchKey::kMeta, &embedding_dense_backward_meta)
      .impl("tril", DispatchKey::kCPU, &tril_cpu)
      .impl("tril", DispatchKey::kMeta, &tril_meta)
      .impl("triu", DispatchKey::kCPU, &triu_cpu)
      .impl("triu", DispatchKey::kMeta, &triu_meta)
      .impl("argmax", DispatchKey::kCPU, &argmax_cpu)
      .impl("argmax", DispatchKey::kMeta, &argmax_meta)
      .impl("argmin", DispatchKey::kCPU, &argmin_cpu)
      .impl("argmin", DispatchKey::kMeta, &argmin_meta)
      .impl("nll_loss_forward", DispatchKey::kCPU, &nll_loss_forward_cpu)
      .impl("nll_loss_forward", DispatchKey::kMeta, &nll_loss_forward_meta)
      .impl("mse_loss", DispatchKey::kCPU, &mse_loss_cpu)
      .impl("mse_loss", DispatchKey::kMeta, &mse_loss_meta)
      .impl("mse_loss_backward", DispatchKey::kCPU, &mse_loss_backward_cpu)
      .impl("mse_loss_backward", DispatchKey::kMeta, &mse_loss_backward_meta)
      .impl("nll_loss_backward", DispatchKey::kCPU, &nll_loss_backward_cpu)
      .impl("nll_loss_backward", DispatchKey::kMeta, &nll_loss_backward_meta)
      .impl("nll_loss2d_forward", DispatchKey::kCPU, &nll_loss2d_forward_cpu)
      .impl("nll_loss2d_forward", DispatchKey::kMeta, &nll_loss2d_forward_meta)
      .impl("nll_loss2d_backward", DispatchKey::kCPU, &nll_loss2d_backward_cpu)
      .impl("nll_loss2d_backward", DispatchKey::kMeta, &nll_loss2d_backward_meta)
      .impl("_scaled_dot_product_flash_attention_for_cpu", DispatchKey::kCPU, &sdpa_flash_cpu)
      .impl("_scaled_dot_product_flash_attention_for_cpu", DispatchKey::kMeta, &sdpa_flash_cpu_meta)
      .impl("_scaled_dot_product_flash_attention_for_cpu_backward", DispatchKey::kCPU, &sdpa_flash_cpu_backward)
      .impl("_scaled_dot_product_flash_attention_for_cpu_backward", DispatchKey::kMeta,
            &sdpa_flash_cpu_backward_meta)
      .impl("convolution", DispatchKey::kCPU, &convolution_cpu)
      .impl("convolution", DispatchKey::kMeta, &convolution_meta)
      .impl("convolution_backward", DispatchKey::kCPU, &convolution_backward_cpu)
      .impl("convolution_backward", DispatchKey::kMeta, &convolution_backward_meta)
      .impl("max_pool2d_with_indices", DispatchKey::kCPU, &max_pool2d_with_indices_cpu)
      .impl("max_pool2d_with_indices", DispatchKey::kMeta, &max_pool2d_with_indices_meta)
      .impl("max_pool2d_with_indices_backward", DispatchKey::kCPU, &max_pool2d_with_indices_backward_cpu)
      .impl("max_pool2d_with_indices_backward", DispatchKey::kMeta, &max_pool2d_with_indices_backward_meta)
      .impl("avg_pool2d", DispatchKey::kCPU, &avg_pool2d_cpu)
      .impl("avg_pool2d", DispatchKey::kMeta, &avg_pool2d_meta)
      .impl("avg_pool2d_backward", DispatchKey::kCPU, &avg_pool2d_backward_cpu)
      .impl("avg_pool2d_backward", DispatchKey::kMeta, &avg_pool2d_backward_meta)
      .impl("_adaptive_avg_pool2d", DispatchKey::kCPU, &adaptive_avg_pool2d_cpu)
      .impl("_adaptive_avg_pool2d", DispatchKey::kMeta, &adaptive_avg_pool2d_meta)
      .impl("_adaptive_avg_pool2d_backward", DispatchKey::kCPU, &adaptive_avg_pool2d_backward_cpu)
      .impl("_adaptive_avg_pool2d_backward", DispatchKey::kMeta, &adaptive_avg_pool2d_backward_meta)
      .impl("native_batch_norm", DispatchKey::kCPU, &native_batch_norm_cpu)
      .impl("native_batch_norm", DispatchKey::kMeta, &native_batch_norm_meta)
      .impl("native_batch_norm_backward", DispatchKey::kCPU, &native_batch_norm_backward_cpu)
      .impl("native_batch_norm_backward", DispatchKey::kMeta, &native_batch_norm_backward_meta);
}

}  // namespace opspec::internal
