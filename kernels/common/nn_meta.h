// nn_meta.h: shape, dtype and device rules of the model ops (index_select,
// embedding, tril/triu, argmax/argmin, nll_loss, CPU flash attention), shared
// by their CPU, CUDA and Meta kernels, plus the Meta kernels themselves.
// Error texts are PyTorch's, prefixed with the op.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/core/shape_utils.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"

namespace opspec::internal {

// check_index_tensor: an integer (i64 or i32) index tensor on self's device.
void check_index_tensor(const Tensor& self, const Tensor& index, std::string_view op, std::string_view what);
// index_select_shape: self's sizes with dim replaced by index's length
// (index is 0-D or 1-D); returns the wrapped dim through *wrapped.
SizeVec index_select_shape(const Tensor& self, int64_t dim, const Tensor& index, int64_t* wrapped);
// embedding_shape: indices' sizes followed by weight's row width (weight is 2-D).
SizeVec embedding_shape(const Tensor& weight, const Tensor& indices);
// check_triangle_input: tril/triu need at least two dims.
void check_triangle_input(const Tensor& self, std::string_view name);
// arg_reduction_shape: argmax/argmin's result sizes (every dim when dim is None).
SizeVec arg_reduction_shape(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::string_view name);

// NllLossGeometry: nll_loss_forward's view of its input: batch samples of
// n_classes x map values (map = 1, or H x W for nll_loss2d), so the
// log-probability of item i = b * map + e for class c lies at
// (b * n_classes + c) * map + e and its target at i; and the result sizes.
struct NllLossGeometry {
  int64_t batch = 1;       // samples (1 for a 1-D input)
  int64_t n_classes = 0;   // input's dim 1 (dim 0 for a 1-D input)
  int64_t map = 1;         // positions per sample: nll_loss2d's H x W
  bool has_batch = false;  // input has a batch dim: reduction none gives one loss per item
  SizeVec out_sizes;       // [batch] or [N, H, W] for reduction none with a batch, else []
  int64_t items() const { return batch * map; }
};
// at::Reduction: how a loss reduces (None 0, Mean 1, Sum 2).
enum class Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };
// nll_loss_geometry: checks input (1-D or 2-D floating), target (0-D or 1-D
// i64 matching input's batch), weight (n_classes values) and reduction.
NllLossGeometry nll_loss_geometry(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                  int64_t reduction, std::string_view op);
// nll_loss2d_geometry: nll_loss2d's checks: input [N, C, H, W] floating,
// target [N, H, W] i64, weight (C values) and reduction.
NllLossGeometry nll_loss2d_geometry(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                    int64_t reduction, std::string_view op);

// SdpaGeometry: the sizes of an attention call: query (B, H, L, E), key
// (B, H, S, E), value (B, H, S, Ev); the mask broadcasts to (B, H, L, S).
struct SdpaGeometry {
  int64_t batch = 0, heads = 0, q_len = 0, kv_len = 0, head_dim = 0, v_head_dim = 0;
  double scale = 0;  // scale or 1 / sqrt(E)
};
// sdpa_geometry: checks the operands of the CPU flash kernels (4-D, one
// floating dtype, one device, one head size; a 2-D or 4-D float mask).
SdpaGeometry sdpa_geometry(const Tensor& query, const Tensor& key, const Tensor& value,
                           const std::optional<Tensor>& attn_mask, std::optional<double> scale, double dropout_p,
                           std::string_view op);
// sdpa_outputs: output (B, H, L, E) and logsumexp (B, H, L) (f32 for reduced
// floats) on device, laid out as PyTorch's CPU kernel lays them: the output
// with query's strides (empty_like), logsumexp a transpose of a (B, L, H) buffer.
std::tuple<Tensor, Tensor> sdpa_outputs(const SdpaGeometry& g, const Tensor& query, Device device);
// heads_last_strides: strides of a (B, H, N, E) tensor over a (B, N, H, E)
// buffer, the layout of the flash backward's gradients.
SizeVec heads_last_strides(IntArrayRef sizes);

// check_mse_loss: self and target of one floating dtype, shape and device;
// returns the loss's sizes (self's for reduction none, else []).
SizeVec check_mse_loss(const Tensor& self, const Tensor& target, int64_t reduction, std::string_view op);

// Meta kernels.
Tensor mse_loss_meta(const Tensor& self, const Tensor& target, int64_t reduction);
Tensor mse_loss_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target, int64_t reduction);
Tensor safe_softmax_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype);
Tensor index_select_meta(const Tensor& self, int64_t dim, const Tensor& index);
Tensor embedding_meta(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                      bool sparse);
Tensor embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t padding_idx, bool scale_grad_by_freq);
Tensor tril_meta(const Tensor& self, int64_t diagonal);
Tensor triu_meta(const Tensor& self, int64_t diagonal);
Tensor argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim);
Tensor argmin_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim);
std::tuple<Tensor, Tensor> nll_loss_forward_meta(const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight, int64_t reduction,
                                                 int64_t ignore_index);
Tensor nll_loss_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                              const Tensor& total_weight);
std::tuple<Tensor, Tensor> nll_loss2d_forward_meta(const Tensor& self, const Tensor& target,
                                                   const std::optional<Tensor>& weight, int64_t reduction,
                                                   int64_t ignore_index);
Tensor nll_loss2d_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                const std::optional<Tensor>& weight, int64_t reduction, int64_t ignore_index,
                                const Tensor& total_weight);
std::tuple<Tensor, Tensor> sdpa_flash_cpu_meta(const Tensor& query, const Tensor& key, const Tensor& value,
                                               double dropout_p, bool is_causal,
                                               const std::optional<Tensor>& attn_mask, std::optional<double> scale);
std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cpu_backward_meta(const Tensor& grad_out, const Tensor& query,
                                                                const Tensor& key, const Tensor& value,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                double dropout_p, bool is_causal,
                                                                const std::optional<Tensor>& attn_mask,
                                                                std::optional<double> scale);

}  // namespace opspec::internal
