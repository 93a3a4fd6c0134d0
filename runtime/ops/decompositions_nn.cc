// decompositions_nn.cc: the CompositeImplicit kernels of the model ops:
// cross_entropy_loss, nll_loss_nd, nll_loss, scaled_dot_product_attention and
// _scaled_dot_product_attention_math, op for op as PyTorch 2.x's C++ (See
// Note [Composite decompositions] in decompositions.cc). PyTorch's Linux
// builds (GCC) evaluate the operands of a C++ operator or call right to left,
// so where PyTorch writes `f(a(), b())` the ops of b() come first here too.
#include <cmath>
#include <limits>

#include "runtime/core/memory_format.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/internal/composite.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace {

using OptTensor = std::optional<Tensor>;
using Reduction = ops::Reduction;

// mul_scalar / div_scalar: C++'s `t * s` / `t / s`: the .Scalar overloads.
Tensor mul_scalar(const Tensor& t, const Scalar& s) {
  return Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&>(builtin_op(OpId::mul_Scalar), t, s);
}
Tensor div_scalar(const Tensor& t, const Scalar& s) {
  return Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&>(builtin_op(OpId::div_Scalar), t, s);
}
Tensor add_scalar(const Tensor& t, const Scalar& s) {
  return Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&, const Scalar&>(
      builtin_op(OpId::add_Scalar), t, s, Scalar(1));
}

// factory_with_options: at::<factory>(size, options) from C++, whose options
// name dtype, layout and device but not pin_memory.
Tensor ones_with_options(IntArrayRef size, DType dtype, Device device) {
  using Sig = Tensor(IntArrayRef, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                     std::optional<bool>);
  static const TypedOp<Sig> ones("aten::ones");
  constexpr int64_t kStrided = 0;
  return ones(size, dtype, kStrided, device, std::nullopt);
}
// scalar_tensor(s, options): options with dtype and device (layout when from t.options()).
Tensor scalar_tensor_with(const Scalar& s, DType dtype, std::optional<int64_t> layout, Device device) {
  using Sig = Tensor(const Scalar&, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                     std::optional<bool>);
  static const TypedOp<Sig> scalar_tensor("aten::scalar_tensor");
  return scalar_tensor(s, dtype, layout, device, std::nullopt);
}

Reduction reduction_of(int64_t r) {
  OPSPEC_CHECK(r >= 0 && r <= 2, "aten::cross_entropy_loss: Invalid reduction type encountered in cross_entropy: ", r);
  return static_cast<Reduction>(r);
}

// ---- Losses ----

Tensor nll_loss_kernel(const Tensor& self, const Tensor& target, const OptTensor& weight, int64_t reduction,
                       int64_t ignore_index) {
  return std::get<0>(ops::nll_loss_forward(self, target, weight, static_cast<ops::Reduction>(reduction),
                                           ignore_index));
}

Tensor nll_loss2d_kernel(const Tensor& self, const Tensor& target, const OptTensor& weight, int64_t reduction,
                         int64_t ignore_index) {
  return std::get<0>(ops::nll_loss2d_forward(self, target, weight, static_cast<ops::Reduction>(reduction),
                                             ignore_index));
}

// nll_loss_nd: as PyTorch 2.x's: 1-D and 2-D inputs are nll_loss, 4-D
// nll_loss2d; 3-D and wider than 4-D are made contiguous and viewed as
// [N, C, 1, -1] (targets [N, 1, -1]) for nll_loss2d, whose unreduced loss is
// viewed back to [N, d...].
Tensor nll_loss_nd_kernel(const Tensor& self, const Tensor& target, const OptTensor& weight, int64_t reduction,
                          int64_t ignore_index) {
  constexpr std::string_view kOp = "aten::nll_loss_nd";
  const auto r = static_cast<ops::Reduction>(reduction);
  OPSPEC_CHECK(self.dim() >= 1, kOp, ": Expected 1 or more dimensions (got ", self.dim(), ")");
  OPSPEC_CHECK(self.dim() == 1 || target.dim() == 0 || self.size(0) == target.size(0), kOp,
               ": Expected input batch_size (", self.size(0), ") to match target batch_size (",
               target.dim() == 0 ? 1 : target.size(0), ").");
  if (self.dim() <= 2) return ops::nll_loss(self, target, weight, r, ignore_index);
  if (self.dim() == 4) return ops::nll_loss2d(self, target, weight, r, ignore_index);
  const int64_t n = self.size(0), c = self.size(1);
  SizeVec out_size(self.sizes().begin() + 2, self.sizes().end());
  out_size.insert(out_size.begin(), n);
  OPSPEC_CHECK(target.dim() >= 1 && IntArrayRef(target.sizes()).subspan(1) == IntArrayRef(self.sizes()).subspan(2),
               kOp, ": Expected target size ", format_sizes(out_size), ", got ", format_sizes(target.sizes()));
  const Tensor input = ops::contiguous(self), tgt = ops::contiguous(target);
  // An empty batch views as [N, C, 0, 0] (PyTorch's #15870).
  const Tensor input4 = input.numel() > 0 ? ops::view(input, {n, c, 1, -1}) : ops::view(input, {n, c, 0, 0});
  const Tensor target3 = tgt.numel() > 0 ? ops::view(tgt, {n, 1, -1}) : ops::view(tgt, {n, 0, 0});
  const Tensor out = ops::nll_loss2d(input4, target3, weight, r, ignore_index);
  return r == ops::Reduction::kNone ? ops::view(out, out_size) : out;
}

// weight_view: weight viewed to broadcast along class_dim of an input of `dim` dims.
Tensor weight_view(const Tensor& weight, int64_t dim, int64_t class_dim) {
  SizeVec shape(static_cast<size_t>(dim), 1);
  shape[static_cast<size_t>(class_dim)] = weight.size(0);
  return ops::view(weight, shape);
}

// cross_entropy_loss_prob_target: soft targets (target has input's shape).
Tensor cross_entropy_prob_target(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                 Reduction reduction, double label_smoothing) {
  constexpr std::string_view kOp = "aten::cross_entropy_loss";
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const int64_t n_classes = self.size(class_dim);
  OPSPEC_CHECK(!weight || (weight->dim() == 1 && weight->numel() == n_classes), kOp,
               ": cross_entropy: weight tensor should be defined either for all ", n_classes,
               " classes or no classes but got weight tensor of shape: ", format_sizes(weight->sizes()));
  const Tensor input = ops::log_softmax(self, class_dim, self.dtype());
  Tensor target_ = target;
  if (label_smoothing > 0.0) {
    OPSPEC_CHECK(label_smoothing <= 1.0, kOp, ": label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    target_ = add_scalar(mul_scalar(target, 1 - label_smoothing), label_smoothing / static_cast<double>(n_classes));
  }
  Tensor product = ops::mul(input, target_);
  if (weight) product = ops::mul(product, weight_view(*weight, input.dim(), class_dim));
  switch (reduction) {
    case Reduction::kMean:
      if (input.numel() == 0) {
        Tensor s = ops::sum(product);
        ops::fill_(s, std::nan(""));
        return ops::neg(s);
      }
      return div_scalar(ops::neg(ops::sum(product)), input.numel() / n_classes);
    case Reduction::kSum: return ops::neg(ops::sum(product));
    case Reduction::kNone: return ops::neg(ops::sum(product, {class_dim}));
  }
  return Tensor();
}

// cross_entropy_loss_label_smoothing: class indices with label_smoothing > 0.
Tensor cross_entropy_label_smoothing(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                     Reduction reduction, int64_t ignore_index, double label_smoothing) {
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  const Tensor input = ops::log_softmax(self, class_dim, self.dtype());
  const Tensor nllloss = ops::nll_loss_nd(input, target, weight, static_cast<ops::Reduction>(reduction), ignore_index);
  const int64_t n_classes = input.size(class_dim);
  Tensor smooth_loss = weight ? ops::neg(ops::sum(ops::mul(input, weight_view(*weight, input.dim(), class_dim)),
                                                  {class_dim}))
                              : ops::neg(ops::sum(input, {class_dim}));
  const Tensor ignore_mask = ops::eq(target, ignore_index);
  ops::masked_fill_(smooth_loss, ignore_mask, 0.0);
  Tensor ret;
  switch (reduction) {
    case Reduction::kMean: {
      // Right operands first (See file comment). A class weight normalises by
      // the weights of the kept targets, as nll_loss_nd does.
      Tensor denominator;
      if (!weight) {
        denominator = ops::sum(ops::bitwise_not(ignore_mask));
      } else if (is_tensor_subclass_like(*weight)) {
        // Gathered from index 0 where ignored (always valid), then masked out.
        const Tensor filtered_target = ops::masked_fill(target, ignore_mask, 0);
        Tensor tgt_weights = ops::gather(*weight, 0, ops::flatten(filtered_target));
        const Tensor flat_mask = ops::flatten(ignore_mask);
        denominator = ops::sum(ops::masked_fill_(tgt_weights, flat_mask, 0));
      } else {
        const Tensor kept = ops::masked_select(target, ops::bitwise_not(ignore_mask));
        denominator = ops::sum(ops::gather(*weight, 0, ops::flatten(kept)));
      }
      ret = ops::div(ops::sum(smooth_loss), denominator);
      break;
    }
    case Reduction::kSum: ret = ops::sum(smooth_loss); break;
    case Reduction::kNone: ret = smooth_loss; break;
  }
  const Tensor smooth_part = mul_scalar(ret, label_smoothing / static_cast<double>(n_classes));
  return ops::add(mul_scalar(nllloss, 1 - label_smoothing), smooth_part);
}

Tensor cross_entropy_loss_kernel(const Tensor& self, const Tensor& target, const OptTensor& weight,
                                 int64_t reduction_int, int64_t ignore_index, double label_smoothing) {
  constexpr std::string_view kOp = "aten::cross_entropy_loss";
  const Reduction reduction = reduction_of(reduction_int);
  if (self.sizes() == target.sizes()) {
    OPSPEC_CHECK(is_floating(target.dtype()), kOp,
                 ": Expected floating point type for target with class probabilities, got ",
                 scalar_type_name(target.dtype()));
    OPSPEC_CHECK(ignore_index < 0, kOp, ": ignore_index is not supported for floating point target");
    return cross_entropy_prob_target(self, target, weight, reduction, label_smoothing);
  }
  if (label_smoothing > 0.0) {
    OPSPEC_CHECK(label_smoothing <= 1.0, kOp, ": label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
    return cross_entropy_label_smoothing(self, target, weight, reduction, ignore_index, label_smoothing);
  }
  const int64_t class_dim = self.dim() == 1 ? 0 : 1;
  return ops::nll_loss_nd(ops::log_softmax(self, class_dim, self.dtype()), target, weight,
                          static_cast<ops::Reduction>(reduction), ignore_index);
}

// ---- Attention ----

// Note [Attention dispatch]
// scaled_dot_product_attention picks a backend as PyTorch's CPU does
// (sdp_utils_cpp.cpp use_flash_attention_cpp): the flash kernel
// (_scaled_dot_product_flash_attention_for_cpu) when there is no dropout, q, k
// and v are 4-D with one batch, head count and head size, nonzero sequence
// lengths, unit last strides (the mask's too), and a 2-D or 4-D mask that
// does not require grad; else _scaled_dot_product_attention_math, whose parts
// modes see. A bool mask becomes an additive float one first. CUDA tensors
// take the math path: opspec has no fused attention kernel for CUDA, where
// PyTorch picks flash, memory-efficient or cuDNN attention on a GPU (and the
// math path when none is available: docs/pytorch-versions.md says when).
void validate_sdpa_input(const Tensor& q, const Tensor& k, const Tensor& v, const OptTensor& mask) {
  constexpr std::string_view kOp = "aten::scaled_dot_product_attention";
  OPSPEC_CHECK(q.dtype() == k.dtype() && q.dtype() == v.dtype(), kOp,
               ": Expected query, key, and value to have the same dtype, but got query.dtype: ",
               dtype_torch_name(q.dtype()), " key.dtype: ", dtype_torch_name(k.dtype()),
               " and value.dtype: ", dtype_torch_name(v.dtype()), " instead.");
  OPSPEC_CHECK(q.device() == k.device() && q.device() == v.device(), kOp,
               ": Expected query, key, and value to have the same device type, but got query.device: ",
               q.device().str(), " key.device: ", k.device().str(), " and value.device: ", v.device().str(),
               " instead.");
  OPSPEC_CHECK(q.dim() >= 2 && k.dim() >= 2 && v.dim() >= 2, kOp,
               ": Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: ", q.dim(),
               " key.dim: ", k.dim(), " and value.dim: ", v.dim(), " instead.");
  if (mask) {
    const DType m = mask->dtype();
    OPSPEC_CHECK(m == DType::kBool || m == DType::kFloat32 || m == q.dtype(), kOp,
                 ": Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: ",
                 dtype_torch_name(m), " and  query.dtype: ", dtype_torch_name(q.dtype()), " instead.");
  }
}

bool use_flash_attention_cpp(const Tensor& q, const Tensor& k, const Tensor& v, const OptTensor& mask,
                             double dropout_p, bool enable_gqa) {
  if (!q.device().is_cpu()) return false;
  if (dropout_p > 0.0) return false;
  if (q.dim() != 4 || k.dim() != 4 || v.dim() != 4) return false;
  if (q.size(0) != k.size(0) || q.size(0) != v.size(0)) return false;
  if (enable_gqa ? (k.size(1) != v.size(1) || k.size(1) == 0 || q.size(1) % k.size(1) != 0)
                 : (q.size(1) != k.size(1) || q.size(1) != v.size(1))) {
    return false;
  }
  if (mask) {
    if (mask->requires_grad()) return false;
    if (mask->size(-2) != q.size(2) && mask->size(-2) != 1) return false;
    if (mask->size(-1) != k.size(2) && mask->size(-1) != 1) return false;
    if (mask->dim() == 4) {
      if ((mask->size(0) != 1 && mask->size(0) != q.size(0)) || (mask->size(1) != 1 && mask->size(1) != q.size(1))) {
        return false;
      }
    } else if (mask->dim() != 2) {
      return false;
    }
  }
  if (q.size(3) != k.size(3) || q.size(3) != v.size(3)) return false;
  if (q.size(2) == 0 || k.size(2) == 0) return false;
  if (q.stride(-1) != 1 || k.stride(-1) != 1 || v.stride(-1) != 1) return false;
  if (mask && mask->stride(-1) != 1) return false;
  return is_floating(q.dtype());
}

// convert_boolean_attn_mask: where(mask.logical_not(), -inf, scalar_tensor(0.0)):
// scalar_tensor(0.0) is built first (the right operand), then logical_not, then
// where.ScalarSelf's scalar_tensor(-inf) from other.options().
OptTensor convert_boolean_attn_mask(const OptTensor& mask, DType dtype) {
  if (!mask || mask->dtype() != DType::kBool) return mask;
  const Tensor zero = scalar_tensor_with(0.0, dtype, std::nullopt, mask->device());
  const Tensor masked_out = ops::logical_not(*mask);
  constexpr int64_t kStrided = 0;
  const Tensor neg_inf =
      scalar_tensor_with(-std::numeric_limits<double>::infinity(), zero.dtype(), kStrided, zero.device());
  return ops::where(masked_out, neg_inf, zero);
}

std::tuple<Tensor, Tensor> sdpa_math_kernel(const Tensor& query_, const Tensor& key, const Tensor& value,
                                            const OptTensor& attn_mask_, double dropout_p, bool is_causal,
                                            const OptTensor& dropout_mask, std::optional<double> scale,
                                            bool enable_gqa) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_attention_math";
  const DType origin_dtype = query_.dtype();
  const bool reduced = origin_dtype == DType::kFloat16 || origin_dtype == DType::kBFloat16;
  const Tensor query_acc = reduced ? ops::to(query_, DType::kFloat32) : query_;
  const Tensor key_acc = reduced ? ops::to(key, DType::kFloat32) : key;
  const Tensor value_acc = reduced ? ops::to(value, DType::kFloat32) : value;
  OptTensor attn_mask = attn_mask_;
  // Scale q and k each by sqrt(scale) before the product, for stability.
  const bool negative = scale && *scale < 0.0;
  const double softmax_scale =
      scale ? std::abs(*scale) : 1.0 / std::sqrt(static_cast<double>(query_acc.size(-1)));
  const double scaling_factor = std::sqrt(softmax_scale);
  const Tensor query = mul_scalar(query_acc, negative ? 0.0 - scaling_factor : scaling_factor);
  if (is_causal) {
    OPSPEC_CHECK(!attn_mask, kOp, ": _scaled_dot_product_attention: Explicit attn_mask should not be set when "
                 "is_causal=True");
    const int64_t L = query.size(-2), S = key_acc.size(-2);
    attn_mask = ops::tril(ones_with_options({L, S}, DType::kBool, query.device()));
    attn_mask = convert_boolean_attn_mask(attn_mask, query.dtype());
  }
  OPSPEC_CHECK(!enable_gqa || query.size(-3) == key_acc.size(-3), kOp,
               ": enable_gqa with fewer key/value heads needs repeat_interleave, which opspec does not have yet");
  Tensor attn = ops::matmul(query, mul_scalar(ops::transpose(key_acc, -2, -1), scaling_factor));
  if (attn_mask) {
    if (is_tensor_subclass_like(attn) || is_tensor_subclass_like(*attn_mask)) {
      attn = ops::add(attn, *attn_mask);
    } else {
      ops::add_(attn, *attn_mask);
    }
  }
  attn = ops::_safe_softmax(attn, -1);
  if (dropout_p > 0.0) {
    OPSPEC_CHECK(!dropout_mask, kOp, ": an explicit dropout_mask is not supported");
    attn = ops::dropout(attn, dropout_p, true);
  }
  // make_tuple(matmul(attn, v).to(dtype), attn.to(dtype)): right to left.
  Tensor weights = ops::to(attn, origin_dtype);
  Tensor out = ops::to(ops::matmul(attn, value_acc), origin_dtype);
  return {out, weights};
}

Tensor sdpa_kernel(const Tensor& query, const Tensor& key, const Tensor& value, const OptTensor& attn_mask_,
                   double dropout_p, bool is_causal, std::optional<double> scale, bool enable_gqa) {
  validate_sdpa_input(query, key, value, attn_mask_);
  const bool flash = use_flash_attention_cpp(query, key, value, attn_mask_, dropout_p, enable_gqa);
  const OptTensor attn_mask = convert_boolean_attn_mask(attn_mask_, query.dtype());
  if (flash) {
    return std::get<0>(ops::_scaled_dot_product_flash_attention_for_cpu(query, key, value, dropout_p, is_causal,
                                                                        attn_mask, scale));
  }
  return std::get<0>(ops::_scaled_dot_product_attention_math(query, key, value, attn_mask, dropout_p, is_causal,
                                                             std::nullopt, scale, enable_gqa));
}

// ---- Convolution, pooling, batch norm ----

// conv2d / conv1d / conv_transpose2d / conv_transpose1d: batchify (an
// unbatched input is unsqueezed and the result squeezed), then convolution
// (transposed with its output_padding, or not with zeros).
Tensor conv_nd(const Tensor& input, const Tensor& weight, const OptTensor& bias, IntArrayRef stride,
               IntArrayRef padding, IntArrayRef dilation, int64_t groups, int64_t spatial, std::string_view name,
               bool transposed = false, IntArrayRef output_padding = {}) {
  const std::string op = str_cat("aten::", name);
  OPSPEC_CHECK(!bias || bias->dtype() == input.dtype(), op, ": Input type (", scalar_type_name(input.dtype()),
               ") and bias type (", scalar_type_name(bias->dtype()), ") should be the same");
  const int64_t batched = spatial + 2;
  OPSPEC_CHECK(input.dim() == batched || input.dim() == batched - 1, op, ": Expected ", batched - 1,
               "D (unbatched) or ", batched, "D (batched) input to ", name, ", but got input of size: ",
               format_sizes(input.sizes()));
  const bool is_batched = input.dim() == batched;
  const Tensor x = is_batched ? input : ops::unsqueeze(input, 0);
  const SizeVec zeros(static_cast<size_t>(spatial), 0);
  const Tensor out = ops::convolution(x, weight, bias, stride, padding, dilation, transposed,
                                      transposed ? output_padding : IntArrayRef(zeros), groups);
  return is_batched ? out : ops::squeeze(out, 0);
}

Tensor conv2d_kernel(const Tensor& input, const Tensor& weight, const OptTensor& bias, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}

Tensor conv1d_kernel(const Tensor& input, const Tensor& weight, const OptTensor& bias, IntArrayRef stride,
                     IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}

Tensor conv_transpose2d_kernel(const Tensor& input, const Tensor& weight, const OptTensor& bias, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv_transpose2d", true, output_padding);
}

Tensor conv_transpose1d_kernel(const Tensor& input, const Tensor& weight, const OptTensor& bias, IntArrayRef stride,
                               IntArrayRef padding, IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv_transpose1d", true, output_padding);
}

// max_pool2d: PyTorch 2.x's CPU path is max_pool2d_with_indices with or
// without grad (the mkldnn and xnnpack paths are for their layouts and mobile).
Tensor max_pool2d_kernel(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(ops::max_pool2d_with_indices(self, kernel_size, stride, padding, dilation, ceil_mode));
}

// adaptive_avg_pool2d: a [1, 1] output is the mean over the last two dims
// (mean.dim, keepdim), restrided in place to channels-last when the input
// suggests it (as_strided_, as PyTorch 2.x and 1.13); other sizes are
// _adaptive_avg_pool2d.
Tensor adaptive_avg_pool2d_kernel(const Tensor& input, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::adaptive_avg_pool2d";
  OPSPEC_CHECK(output_size.size() == 2, kOp, ": adaptive_avg_pool2d: output_size must be 2");
  OPSPEC_CHECK(output_size[0] >= 0 && output_size[1] >= 0, kOp,
               ": adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {",
               output_size[0], ", ", output_size[1], "}");
  if (output_size[0] == 1 && output_size[1] == 1) {
    Tensor out = ops::mean(input, {-1, -2}, true);
    if (suggest_memory_format(input) == MemoryFormat::kChannelsLast) {
      const int64_t n = input.sizes()[0], c = input.sizes()[1];
      ops::as_strided_(out, {n, c, 1, 1}, {c, 1, c, c});
    }
    return out;
  }
  return ops::_adaptive_avg_pool2d(input, output_size);
}

// batch_norm (_batch_norm_impl_index on CPU): the (empty, u8) reserve the
// native backend does not use, then native_batch_norm.
Tensor batch_norm_kernel(const Tensor& input, const OptTensor& weight, const OptTensor& bias,
                         const OptTensor& running_mean, const OptTensor& running_var, bool training, double momentum,
                         double eps, bool) {
  constexpr std::string_view kOp = "aten::batch_norm";
  const int64_t c = input.dim() >= 2 ? input.size(1) : 0;
  const std::pair<const char*, const OptTensor*> params[] = {
      {"running_mean", &running_mean}, {"running_var", &running_var}, {"weight", &weight}, {"bias", &bias}};
  for (const auto& [name, t] : params) {
    if (t->has_value()) {
      OPSPEC_CHECK((*t)->numel() == c, kOp, ": ", name, " should contain ", c, " elements not ", (*t)->numel());
    }
  }
  OPSPEC_CHECK(training || running_mean, kOp, ": running_mean must be defined in evaluation mode");
  OPSPEC_CHECK(training || running_var, kOp, ": running_var must be defined in evaluation mode");
  using EmptySig = Tensor(IntArrayRef, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                          std::optional<bool>, std::optional<int64_t>);
  static const TypedOp<EmptySig> empty("aten::empty.memory_format");
  constexpr int64_t kStrided = 0;
  // PyTorch has no u8; b8 is the one-byte dtype here (the reserve is never read).
  empty({0}, DType::kBool, kStrided, input.device(), std::nullopt, std::nullopt);
  return std::get<0>(ops::native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

}  // namespace

void register_nn_decompositions(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kKey = DispatchKey::kCompositeImplicit;
  lib.impl("nll_loss", kKey, &nll_loss_kernel)
      .impl("nll_loss_nd", kKey, &nll_loss_nd_kernel)
      .impl("nll_loss2d", kKey, &nll_loss2d_kernel)
      .impl("cross_entropy_loss", kKey, &cross_entropy_loss_kernel)
      .impl("scaled_dot_product_attention", kKey, &sdpa_kernel)
      .impl("_scaled_dot_product_attention_math", kKey, &sdpa_math_kernel)
      .impl("conv2d", kKey, &conv2d_kernel)
      .impl("conv1d", kKey, &conv1d_kernel)
      .impl("conv_transpose2d.input", kKey, &conv_transpose2d_kernel)
      .impl("conv_transpose1d", kKey, &conv_transpose1d_kernel)
      .impl("max_pool2d", kKey, &max_pool2d_kernel)
      .impl("adaptive_avg_pool2d", kKey, &adaptive_avg_pool2d_kernel)
      .impl("batch_norm", kKey, &batch_norm_kernel);
}

}  // namespace opspec::internal
