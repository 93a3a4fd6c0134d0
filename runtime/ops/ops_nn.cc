// ops_nn.cc: the public API of the model ops (indexing, embeddings,
// triangles, arg-reductions, losses, attention); see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using OptTensor = std::optional<Tensor>;
using OptInt = std::optional<int64_t>;
using OptDouble = std::optional<double>;

using internal::call;  // runtime/ops/internal/call.h

int64_t as_int(Reduction r) { return static_cast<int64_t>(r); }

// expand: an int[n] argument as the Python argument parser passes it (one value repeated).
SizeVec expand(IntArrayRef v, size_t n) {
  if (v.size() == 1 && n > 1) return SizeVec(n, v[0]);
  return SizeVec(v.begin(), v.end());
}

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, const Tensor&)>(OpId::index_select, self, dim, index);
}
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx, bool scale_grad_by_freq,
                 bool sparse, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, bool, bool);
  return call<Sig>(OpId::embedding, weight, indices, padding_idx, scale_grad_by_freq, sparse);
}
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, int64_t, bool);
  return call<Sig>(OpId::embedding_dense_backward, grad_output, indices, num_weights, padding_idx,
                   scale_grad_by_freq);
}
Tensor tril(const Tensor& self, int64_t diagonal, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::tril, self, diagonal);
}
Tensor triu(const Tensor& self, int64_t diagonal, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::triu, self, diagonal);
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt, bool)>(OpId::argmax, self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt, bool)>(OpId::argmin, self, dim, keepdim);
}

Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                     Reduction reduction, int64_t ignore_index, double label_smoothing,
                     const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t, double);
  return call<Sig>(OpId::cross_entropy_loss, self, target, weight, as_int(reduction), ignore_index, label_smoothing);
}
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, Reduction reduction,
                int64_t ignore_index, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t);
  return call<Sig>(OpId::nll_loss, self, target, weight, as_int(reduction), ignore_index);
}
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                   Reduction reduction, int64_t ignore_index, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t);
  return call<Sig>(OpId::nll_loss_nd, self, target, weight, as_int(reduction), ignore_index);
}
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight, Reduction reduction,
                  int64_t ignore_index, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t);
  return call<Sig>(OpId::nll_loss2d, self, target, weight, as_int(reduction), ignore_index);
}
std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target,
                                              const std::optional<Tensor>& weight, Reduction reduction,
                                              int64_t ignore_index, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t);
  return call<Sig>(OpId::nll_loss2d_forward, self, target, weight, as_int(reduction), ignore_index);
}
Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index,
                           const Tensor& total_weight, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t, const Tensor&);
  return call<Sig>(OpId::nll_loss2d_backward, grad_output, self, target, weight, as_int(reduction), ignore_index,
                   total_weight);
}
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, Reduction reduction,
                                            int64_t ignore_index, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t);
  return call<Sig>(OpId::nll_loss_forward, self, target, weight, as_int(reduction), ignore_index);
}
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index,
                         const Tensor& total_weight, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Tensor&, const OptTensor&, int64_t, int64_t, const Tensor&);
  return call<Sig>(OpId::nll_loss_backward, grad_output, self, target, weight, as_int(reduction), ignore_index,
                   total_weight);
}

Tensor _safe_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, std::optional<DType>)>(OpId::_safe_softmax, self, dim, dtype);
}
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask, double dropout_p, bool is_causal,
                                    std::optional<double> scale, bool enable_gqa, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Tensor&, const OptTensor&, double, bool, OptDouble, bool);
  return call<Sig>(OpId::scaled_dot_product_attention, query, key, value, attn_mask, dropout_p, is_causal, scale,
                   enable_gqa);
}
std::tuple<Tensor, Tensor> _scaled_dot_product_attention_math(const Tensor& query, const Tensor& key,
                                                              const Tensor& value,
                                                              const std::optional<Tensor>& attn_mask,
                                                              double dropout_p, bool is_causal,
                                                              const std::optional<Tensor>& dropout_mask,
                                                              std::optional<double> scale, bool enable_gqa,
                                                              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const OptTensor&, double, bool,
                                         const OptTensor&, OptDouble, bool);
  return call<Sig>(OpId::_scaled_dot_product_attention_math, query, key, value, attn_mask, dropout_p, is_causal,
                   dropout_mask, scale, enable_gqa);
}
std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(const Tensor& query, const Tensor& key,
                                                                       const Tensor& value, double dropout_p,
                                                                       bool is_causal,
                                                                       const std::optional<Tensor>& attn_mask,
                                                                       std::optional<double> scale,
                                                                       const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig =
      std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, double, bool, const OptTensor&, OptDouble);
  return call<Sig>(OpId::_scaled_dot_product_flash_attention_for_cpu, query, key, value, dropout_p, is_causal,
                   attn_mask, scale);
}
std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& out,
    const Tensor& logsumexp, double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask,
    std::optional<double> scale, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                                                 const Tensor&, const Tensor&, double, bool, const OptTensor&,
                                                 OptDouble);
  return call<Sig>(OpId::_scaled_dot_product_flash_attention_for_cpu_backward, grad_out, query, key, value, out,
                   logsumexp, dropout_p, is_causal, attn_mask, scale);
}

Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, IntArrayRef, IntArrayRef, IntArrayRef, int64_t);
  return call<Sig>(OpId::conv2d, input, weight, bias, expand(stride, 2), expand(padding, 2), expand(dilation, 2),
                   groups);
}
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
              IntArrayRef padding, IntArrayRef dilation, int64_t groups, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, IntArrayRef, IntArrayRef, IntArrayRef, int64_t);
  return call<Sig>(OpId::conv1d, input, weight, bias, stride, padding, dilation, groups);
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, IntArrayRef, IntArrayRef, IntArrayRef, int64_t,
                     IntArrayRef);
  return call<Sig>(OpId::conv_transpose2d_input, input, weight, bias, expand(stride, 2), expand(padding, 2),
                   expand(output_padding, 2), groups, expand(dilation, 2));
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef output_padding, int64_t groups,
                        IntArrayRef dilation, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, IntArrayRef, IntArrayRef, IntArrayRef, int64_t,
                     IntArrayRef);
  return call<Sig>(OpId::conv_transpose1d, input, weight, bias, stride, padding, output_padding, groups, dilation);
}
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const OptTensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool,
                     IntArrayRef, int64_t);
  return call<Sig>(OpId::convolution, input, weight, bias, stride, padding, dilation, transposed, output_padding,
                   groups);
}
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight, OptionalIntArrayRef bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask,
                                                        const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, OptionalIntArrayRef,
                                                 IntArrayRef, IntArrayRef, IntArrayRef, bool, IntArrayRef, int64_t,
                                                 std::array<bool, 3>);
  return call<Sig>(OpId::convolution_backward, grad_output, input, weight, bias_sizes, stride, padding, dilation,
                   transposed, output_padding, groups, output_mask);
}
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  IntArrayRef dilation, bool ceil_mode, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool);
  return call<Sig>(OpId::max_pool2d, self, expand(kernel_size, 2), expand(stride, 2), expand(padding, 2),
                   expand(dilation, 2), ceil_mode);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                                   const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool);
  return call<Sig>(OpId::max_pool2d_with_indices, self, expand(kernel_size, 2), expand(stride, 2),
                   expand(padding, 2), expand(dilation, 2), ceil_mode);
}
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
                     const Tensor&);
  return call<Sig>(OpId::max_pool2d_with_indices_backward, grad_output, self, kernel_size, stride, padding, dilation,
                   ceil_mode, indices);
}
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                  bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override,
                  const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, OptInt);
  return call<Sig>(OpId::avg_pool2d, self, expand(kernel_size, 2), expand(stride, 2), expand(padding, 2), ceil_mode,
                   count_include_pad, divisor_override);
}
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool, OptInt);
  return call<Sig>(OpId::avg_pool2d_backward, grad_output, self, kernel_size, stride, padding, ceil_mode,
                   count_include_pad, divisor_override);
}
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef)>(OpId::adaptive_avg_pool2d, self, expand(output_size, 2));
}
Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef)>(OpId::_adaptive_avg_pool2d, self, output_size);
}
Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&)>(OpId::_adaptive_avg_pool2d_backward, grad_output, self);
}

Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum, double eps, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&, const OptTensor&, bool,
                     double, double, bool);
  return call<Sig>(OpId::batch_norm, input, weight, bias, running_mean, running_var, training, momentum, eps, true);
}
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var, bool training,
                                                     double momentum, double eps, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const OptTensor&, const OptTensor&, const OptTensor&,
                                                 const OptTensor&, bool, double, double);
  return call<Sig>(OpId::native_batch_norm, input, weight, bias, running_mean, running_var, training, momentum, eps);
}
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const OptTensor&, const OptTensor&,
                                                 const OptTensor&, const OptTensor&, const OptTensor&, bool, double,
                                                 std::array<bool, 3>);
  return call<Sig>(OpId::native_batch_norm_backward, grad_out, input, weight, running_mean, running_var, save_mean,
                   save_invstd, train, eps, output_mask);
}

Tensor var(const Tensor& self, OptionalIntArrayRef dim, std::optional<Scalar> correction, bool keepdim,
           const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, OptionalIntArrayRef, std::optional<Scalar>, bool);
  return call<Sig>(OpId::var_correction, self, dim, correction, keepdim);
}
Tensor std(const Tensor& self, OptionalIntArrayRef dim, std::optional<Scalar> correction, bool keepdim,
           const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, OptionalIntArrayRef, std::optional<Scalar>, bool);
  return call<Sig>(OpId::std_correction, self, dim, correction, keepdim);
}
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim, std::optional<Scalar> correction,
                                    bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, OptionalIntArrayRef, std::optional<Scalar>, bool);
  return call<Sig>(OpId::var_mean_correction, self, dim, correction, keepdim);
}
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, bool)>(OpId::logsumexp, self, dim, keepdim);
}
Tensor any(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::any, self);
}
Tensor any(const Tensor& self, int64_t dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, bool)>(OpId::any_dim, self, dim, keepdim);
}
Tensor all(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::all, self);
}
Tensor all(const Tensor& self, int64_t dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, bool)>(OpId::all_dim, self, dim, keepdim);
}
Tensor mse_loss(const Tensor& self, const Tensor& target, Reduction reduction, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, int64_t)>(OpId::mse_loss, self, target, as_int(reduction));
}
Tensor mse_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, Reduction reduction,
                         const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t);
  return call<Sig>(OpId::mse_loss_backward, grad_output, self, target, as_int(reduction));
}

}  // namespace opspec::ops
