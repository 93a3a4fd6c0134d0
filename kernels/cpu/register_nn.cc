// register_nn.cc: registers the CPU and Meta kernels of the model ops:
// indexing and embeddings (indexing.cc), losses (loss.cc) and attention
// (attention.cc); their Meta kernels and checks are kernels/common/nn_meta.h.
#include <optional>
#include <tuple>

#include "kernels/common/nn_meta.h"
#include "kernels/common/registration.h"
#include "runtime/dispatch/library.h"

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
std::tuple<Tensor, Tensor> sdpa_flash_cpu(const Tensor& query, const Tensor& key, const Tensor& value,
                                          double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
                                          std::optional<double> scale);
std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cpu_backward(const Tensor& grad_out, const Tensor& query,
                                                           const Tensor& key, const Tensor& value, const Tensor& out,
                                                           const Tensor& logsumexp, double dropout_p, bool is_causal,
                                                           const std::optional<Tensor>& attn_mask,
                                                           std::optional<double> scale);

void register_nn_kernels(Dispatcher& d) {
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
      .impl("nll_loss_backward", DispatchKey::kCPU, &nll_loss_backward_cpu)
      .impl("nll_loss_backward", DispatchKey::kMeta, &nll_loss_backward_meta)
      .impl("_scaled_dot_product_flash_attention_for_cpu", DispatchKey::kCPU, &sdpa_flash_cpu)
      .impl("_scaled_dot_product_flash_attention_for_cpu", DispatchKey::kMeta, &sdpa_flash_cpu_meta)
      .impl("_scaled_dot_product_flash_attention_for_cpu_backward", DispatchKey::kCPU, &sdpa_flash_cpu_backward)
      .impl("_scaled_dot_product_flash_attention_for_cpu_backward", DispatchKey::kMeta,
            &sdpa_flash_cpu_backward_meta);
}

}  // namespace opspec::internal
