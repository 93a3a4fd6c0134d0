// nn_meta.cc: See nn_meta.h.
#include "kernels/common/nn_meta.h"

#include <algorithm>
#include <cmath>

#include "runtime/core/error.h"

namespace opspec::internal {

void check_index_tensor(const Tensor& self, const Tensor& index, std::string_view op, std::string_view what) {
  OPSPEC_CHECK(index.dtype() == DType::kInt64 || index.dtype() == DType::kInt32, op, ": ", what,
               " Expected dtype int32 or int64 for index");
  const Tensor both[] = {self, index};
  check_same_device(both, op);
}

SizeVec index_select_shape(const Tensor& self, int64_t dim, const Tensor& index, int64_t* wrapped) {
  constexpr std::string_view kOp = "aten::index_select";
  OPSPEC_CHECK(index.dim() <= 1, kOp, ": index_select(): Index is supposed to be a vector");
  check_index_tensor(self, index, kOp, "index_select():");
  const int64_t d = wrap_dim(dim, self.dim(), kOp);
  if (wrapped != nullptr) *wrapped = d;
  SizeVec out(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) {
    OPSPEC_CHECK(index.numel() == 1, kOp, ": index_select(): Index to scalar can have only 1 value, got ",
                 index.numel(), " value(s)");
    return out;
  }
  out[static_cast<size_t>(d)] = index.numel();
  return out;
}

SizeVec embedding_shape(const Tensor& weight, const Tensor& indices) {
  constexpr std::string_view kOp = "aten::embedding";
  OPSPEC_CHECK(weight.dim() == 2, kOp, ": 'weight' must be 2-D");
  OPSPEC_CHECK(indices.dtype() == DType::kInt64 || indices.dtype() == DType::kInt32, kOp,
               ": Expected tensor for argument #1 'indices' to have one of the following scalar types: Long, Int; "
               "but got ", dtype_torch_name(indices.dtype()), " instead (while checking arguments for embedding)");
  const Tensor both[] = {weight, indices};
  check_same_device(both, kOp);
  SizeVec out(indices.sizes().begin(), indices.sizes().end());
  out.push_back(weight.size(1));
  return out;
}

void check_triangle_input(const Tensor& self, std::string_view name) {
  OPSPEC_CHECK(self.dim() >= 2, "aten::", name, ": ", name, ": input tensor must have at least 2 dimensions");
}

SizeVec arg_reduction_shape(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::string_view name) {
  const std::string op = str_cat("aten::", name);
  if (!dim) {
    OPSPEC_CHECK(self.numel() != 0, op, ": ", name,
                 "(): Expected reduction dim to be specified for input.numel() == 0.");
    return keepdim ? SizeVec(static_cast<size_t>(self.dim()), 1) : SizeVec{};
  }
  const int64_t d = wrap_dim(*dim, self.dim(), op);
  SizeVec out(self.sizes().begin(), self.sizes().end());
  if (self.dim() == 0) return out;
  OPSPEC_CHECK(self.size(d) != 0, op, ": ", name, "(): Expected reduction dim ", d, " to have non-zero size.");
  if (keepdim) out[static_cast<size_t>(d)] = 1;
  else out.erase(out.begin() + d);
  return out;
}

NllLossGeometry nll_loss_geometry(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                  int64_t reduction, std::string_view op) {
  OPSPEC_CHECK(self.dim() > 0 && self.dim() <= 2, op, ": input tensor should be 1D or 2D");
  OPSPEC_CHECK(target.dim() <= 1, op, ": 0D or 1D target tensor expected, multi-target not supported");
  const bool no_batch = self.dim() == 1 && target.dim() == 0;
  OPSPEC_CHECK(self.dim() != 1 || target.dim() == 0, op,
               ": Expected target to be 0D when input is 1D, but got target.dim =", target.dim());
  OPSPEC_CHECK(no_batch || self.size(0) == target.size(0), op, ": size mismatch (got input: ",
               format_sizes(self.sizes()), ", target: ", format_sizes(target.sizes()), ")");
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"nll_loss_forward_out_frame\" not implemented for '",
               scalar_type_name(self.dtype()), "'");
  OPSPEC_CHECK(target.dtype() == DType::kInt64, op, ": expected scalar type Long but found ",
               scalar_type_name(target.dtype()));
  OPSPEC_CHECK(reduction >= 0 && reduction <= 2, op, ": ", reduction, " is not a valid value for reduction");
  NllLossGeometry g;
  g.n_classes = self.size(-1);
  g.has_batch = self.dim() == 2;
  g.batch = g.has_batch ? self.size(0) : 1;
  if (weight) {
    OPSPEC_CHECK(weight->dim() == 1 && weight->numel() == g.n_classes, op,
                 ": weight tensor should be defined either for all ", g.n_classes,
                 " classes or no classes but got weight tensor of shape: ", format_sizes(weight->sizes()));
    OPSPEC_CHECK(weight->dtype() == self.dtype(), op, ": expected scalar type ", scalar_type_name(self.dtype()),
                 " but found ", scalar_type_name(weight->dtype()));
  }
  const Tensor all[] = {self, target, weight ? *weight : Tensor()};
  check_same_device(all, op);
  if (reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch) g.out_sizes = {g.batch};
  return g;
}

NllLossGeometry nll_loss2d_geometry(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight,
                                    int64_t reduction, std::string_view op) {
  // PyTorch's check_inputs_nll_loss2d, its words (the unclosed parenthesis too).
  OPSPEC_CHECK(target.dim() == 3, op, ": only batches of spatial targets supported (3D tensors) but got targets of "
               "dimension: ", target.dim());
  OPSPEC_CHECK(self.dim() == 4, op, ": only batches of spatial inputs supported (4D tensors), but got input of "
               "dimension: ", self.dim());
  OPSPEC_CHECK(!weight || weight->numel() == self.size(1), op,
               ": weight tensor should be defined either for all or no classes");
  OPSPEC_CHECK(self.size(0) == target.size(0) && self.size(2) == target.size(1) && self.size(3) == target.size(2), op,
               ": size mismatch (got input: ", format_sizes(self.sizes()), " , target: ", format_sizes(target.sizes()));
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"nll_loss2d_forward_out_frame\" not implemented for '",
               scalar_type_name(self.dtype()), "'");
  OPSPEC_CHECK(target.dtype() == DType::kInt64, op, ": expected scalar type Long but found ",
               scalar_type_name(target.dtype()));
  OPSPEC_CHECK(!weight || weight->dtype() == self.dtype(), op, ": expected scalar type ",
               scalar_type_name(self.dtype()), " but found ", scalar_type_name(weight->dtype()));
  OPSPEC_CHECK(reduction >= 0 && reduction <= 2, op, ": ", reduction, " is not a valid value for reduction");
  const Tensor all[] = {self, target, weight ? *weight : Tensor()};
  check_same_device(all, op);
  NllLossGeometry g;
  g.batch = self.size(0);
  g.n_classes = self.size(1);
  g.map = self.size(2) * self.size(3);
  g.has_batch = true;
  if (reduction == static_cast<int64_t>(Reduction::kNone)) g.out_sizes = {g.batch, self.size(2), self.size(3)};
  return g;
}

SdpaGeometry sdpa_geometry(const Tensor& query, const Tensor& key, const Tensor& value,
                           const std::optional<Tensor>& attn_mask, std::optional<double> scale, double dropout_p,
                           std::string_view op) {
  // PyTorch's CPU flash kernel's checks and words.
  constexpr std::string_view kWho = "scaled_dot_product_attention_flash_attention: ";
  OPSPEC_CHECK(is_floating(query.dtype()), op, ": ", kWho, "Expected data type in FP32, FP64, BF16, FP16, but got ",
               scalar_type_name(query.dtype()), " instead.");
  OPSPEC_CHECK(key.dtype() == query.dtype() && value.dtype() == query.dtype(), op,
               ": Expected query, key, and value to have the same dtype, but got query.dtype: ",
               dtype_torch_name(query.dtype()), " key.dtype: ", dtype_torch_name(key.dtype()),
               " and value.dtype: ", dtype_torch_name(value.dtype()), " instead.");
  OPSPEC_CHECK(query.dim() == 4 && key.dim() == 4 && value.dim() == 4, op, ": ", kWho,
               "Accept only 4 dims inputs shape of {B, H, T, K}");
  OPSPEC_CHECK(dropout_p == 0.0, op, ": ", kWho, "Currently do not support dropout > 0");
  const Tensor all[] = {query, key, value, attn_mask ? *attn_mask : Tensor()};
  check_same_device(all, op);
  SdpaGeometry g;
  g.batch = query.size(0);
  g.heads = query.size(1);
  g.q_len = query.size(2);
  g.head_dim = query.size(3);
  g.kv_len = key.size(2);
  g.v_head_dim = value.size(3);
  OPSPEC_CHECK(key.size(3) == g.head_dim && value.size(3) == g.head_dim, op, ": ", kWho,
               "Q/K/V should have the same head size");
  OPSPEC_CHECK(key.size(0) == g.batch && value.size(0) == g.batch && key.size(1) == g.heads &&
                   value.size(1) == g.heads && value.size(2) == g.kv_len,
               op, ": query ", format_sizes(query.sizes()), ", key ", format_sizes(key.sizes()), " and value ",
               format_sizes(value.sizes()), " do not match: expected (B, H, L, E), (B, H, S, E) and (B, H, S, E)");
  if (attn_mask) {
    OPSPEC_CHECK(attn_mask->dtype() == query.dtype() || attn_mask->dtype() == DType::kFloat32, op, ": ", kWho,
                 "Attention mask is the same data type as query");
    OPSPEC_CHECK(attn_mask->dim() == 2 || attn_mask->dim() == 4, op, ": ", kWho, "Attention mask dim in {2, 4}");
    const int64_t want[] = {g.batch, g.heads, g.q_len, g.kv_len};
    bool ok = true;
    for (int64_t i = 0; ok && i < attn_mask->dim(); ++i) {
      const int64_t s = attn_mask->size(attn_mask->dim() - 1 - i);
      ok = s == 1 || s == want[3 - i];
    }
    OPSPEC_CHECK(ok, op, ": attn_mask of shape ", format_sizes(attn_mask->sizes()), " does not broadcast to ",
                 format_sizes(want));
  }
  g.scale = scale ? *scale : 1.0 / std::sqrt(static_cast<double>(g.head_dim));
  return g;
}

namespace {

// dense_strides_like: t's strides when its elements fill their span exactly
// once with unit last stride (empty_like's preserve format), else row-major ones.
SizeVec dense_strides_like(const Tensor& t) {
  const int64_t n = t.dim();
  SizeVec order(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) order[static_cast<size_t>(i)] = i;
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return t.stride(a) > t.stride(b); });
  int64_t expected = 1;
  bool dense = n == 0 || t.stride(n - 1) == 1;
  for (int64_t k = n - 1; dense && k >= 0; --k) {
    const int64_t d = order[static_cast<size_t>(k)];
    if (t.size(d) == 1) continue;
    dense = t.stride(d) == expected;
    expected *= t.size(d);
  }
  if (!dense || t.numel() == 0) return contiguous_strides(t.sizes());
  return SizeVec(t.strides().begin(), t.strides().end());
}

}  // namespace

std::tuple<Tensor, Tensor> sdpa_outputs(const SdpaGeometry& g, const Tensor& query, Device device) {
  const DType acc = query.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const int64_t b = g.batch, h = g.heads, l = g.q_len;
  Tensor out = make_strided(query.sizes(), dense_strides_like(query), query.dtype(), device);
  // A (B, L, H) buffer seen as (B, H, L): logsumexp.transpose(1, 2), as PyTorch returns it.
  Tensor lse = make_strided({b, h, l}, {l * h, 1, h}, acc, device);
  return {out, lse};
}

SizeVec heads_last_strides(IntArrayRef sizes) {
  const int64_t h = sizes[1], l = sizes[2], e = sizes[3];
  return {l * h * e, e, h * e, 1};
}

Tensor safe_softmax_meta(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const DType out = dtype.value_or(self.dtype());
  OPSPEC_CHECK(is_floating(out), "aten::_safe_softmax: \"softmax\" not implemented for '", scalar_type_name(out), "'");
  wrap_dim(dim, self.dim(), "aten::_safe_softmax");
  return make_tensor(self.sizes(), out, kMeta);
}

SizeVec check_mse_loss(const Tensor& self, const Tensor& target, int64_t reduction, std::string_view op) {
  OPSPEC_CHECK(self.sizes() == target.sizes(), op, ": input ", format_sizes(self.sizes()), " and target ",
               format_sizes(target.sizes()), " must have the same shape (F.mse_loss broadcasts them first)");
  OPSPEC_CHECK(is_floating(self.dtype()) && self.dtype() == target.dtype(), op,
               ": expected input and target of one floating dtype, got ", dtype_short_name(self.dtype()), " and ",
               dtype_short_name(target.dtype()));
  OPSPEC_CHECK(reduction >= 0 && reduction <= 2, op, ": ", reduction, " is not a valid value for reduction");
  const Tensor both[] = {self, target};
  check_same_device(both, op);
  if (reduction == static_cast<int64_t>(Reduction::kNone)) return SizeVec(self.sizes().begin(), self.sizes().end());
  return {};
}

Tensor mse_loss_meta(const Tensor& self, const Tensor& target, int64_t reduction) {
  return make_tensor(check_mse_loss(self, target, reduction, "aten::mse_loss"), self.dtype(), kMeta);
}

Tensor mse_loss_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              int64_t reduction) {
  check_mse_loss(self, target, reduction, "aten::mse_loss_backward");
  // PyTorch's kernel broadcasts grad_output against self: self's shape or one element.
  OPSPEC_CHECK(grad_output.sizes() == self.sizes() || grad_output.numel() == 1, "aten::mse_loss_backward: grad_output ",
               format_sizes(grad_output.sizes()), " does not broadcast to input ", format_sizes(self.sizes()));
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

Tensor index_select_meta(const Tensor& self, int64_t dim, const Tensor& index) {
  return make_tensor(index_select_shape(self, dim, index, nullptr), self.dtype(), kMeta);
}

Tensor embedding_meta(const Tensor& weight, const Tensor& indices, int64_t, bool, bool) {
  return make_tensor(embedding_shape(weight, indices), weight.dtype(), kMeta);
}

Tensor embedding_dense_backward_meta(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                     int64_t, bool) {
  constexpr std::string_view kOp = "aten::embedding_dense_backward";
  check_index_tensor(grad_output, indices, kOp, "indices:");
  OPSPEC_CHECK(num_weights >= 0, kOp, ": num_weights must be non-negative, got ", num_weights);
  const int64_t width = grad_output.dim() == 0 ? 1 : grad_output.size(-1);
  OPSPEC_CHECK(grad_output.numel() == indices.numel() * width, kOp, ": grad_output of shape ",
               format_sizes(grad_output.sizes()), " does not match indices of shape ", format_sizes(indices.sizes()));
  return make_tensor({num_weights, width}, grad_output.dtype(), kMeta);
}

Tensor tril_meta(const Tensor& self, int64_t) {
  check_triangle_input(self, "tril");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

Tensor triu_meta(const Tensor& self, int64_t) {
  check_triangle_input(self, "triu");
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

Tensor argmax_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return make_tensor(arg_reduction_shape(self, dim, keepdim, "argmax"), DType::kInt64, kMeta);
}

Tensor argmin_meta(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return make_tensor(arg_reduction_shape(self, dim, keepdim, "argmin"), DType::kInt64, kMeta);
}

std::tuple<Tensor, Tensor> nll_loss_forward_meta(const Tensor& self, const Tensor& target,
                                                 const std::optional<Tensor>& weight, int64_t reduction, int64_t) {
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, "aten::nll_loss_forward");
  return {make_tensor(g.out_sizes, self.dtype(), kMeta), make_tensor({}, self.dtype(), kMeta)};
}

std::tuple<Tensor, Tensor> nll_loss2d_forward_meta(const Tensor& self, const Tensor& target,
                                                   const std::optional<Tensor>& weight, int64_t reduction, int64_t) {
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, "aten::nll_loss2d_forward");
  return {make_tensor(g.out_sizes, self.dtype(), kMeta), make_tensor({}, self.dtype(), kMeta)};
}

Tensor nll_loss2d_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                                const std::optional<Tensor>& weight, int64_t reduction, int64_t,
                                const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss2d_backward";
  const NllLossGeometry g = nll_loss2d_geometry(self, target, weight, reduction, kOp);
  OPSPEC_CHECK(total_weight.numel() == 1, kOp, ": expected total_weight to be a single element tensor, got: ",
               format_sizes(total_weight.sizes()), " (", total_weight.numel(), " elements)");
  if (reduction == static_cast<int64_t>(Reduction::kNone)) {
    for (int64_t d = 0; d < 3; ++d) {
      OPSPEC_CHECK(grad_output.dim() == 3 && grad_output.size(d) == g.out_sizes[d], kOp,
                   ": Expected a tensor of dimension 3 and tensor.size[", d, "] == ", g.out_sizes[d],
                   " but got: dimension ", grad_output.dim(), " and tensor.size[", d, "] == ",
                   grad_output.dim() > d ? grad_output.size(d) : 1);
    }
  } else {
    OPSPEC_CHECK(grad_output.dim() <= 1 && grad_output.numel() == 1, kOp,
                 ": Expected a single element grad_output tensor, but got: ", format_sizes(grad_output.sizes()));
  }
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

Tensor nll_loss_backward_meta(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction, int64_t,
                              const Tensor& total_weight) {
  constexpr std::string_view kOp = "aten::nll_loss_backward";
  const NllLossGeometry g = nll_loss_geometry(self, target, weight, reduction, kOp);
  OPSPEC_CHECK(total_weight.numel() == 1, kOp, ": expected total_weight to be a  single element tensor, got: ",
               format_sizes(total_weight.sizes()), " (", total_weight.numel(), " elements)");
  const bool elementwise = reduction == static_cast<int64_t>(Reduction::kNone) && g.has_batch;
  if (elementwise) {
    OPSPEC_CHECK(grad_output.dim() == 1 && grad_output.size(0) == g.batch, kOp,
                 ": Expected a tensor of dimension 1 and tensor.size[0] == ", g.batch, " but got: dimension ",
                 grad_output.dim(), " and tensor.size[0] == ", grad_output.dim() > 0 ? grad_output.size(0) : 1);
  } else {
    OPSPEC_CHECK(grad_output.numel() == 1, kOp, ": Expected a single element grad_output tensor, but got: ",
                 format_sizes(grad_output.sizes()));
  }
  return make_tensor(self.sizes(), self.dtype(), kMeta);
}

std::tuple<Tensor, Tensor> sdpa_flash_cpu_meta(const Tensor& query, const Tensor& key, const Tensor& value,
                                               double dropout_p, bool, const std::optional<Tensor>& attn_mask,
                                               std::optional<double> scale) {
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p,
                                       "aten::_scaled_dot_product_flash_attention_for_cpu");
  return sdpa_outputs(g, query, kMeta);
}

std::tuple<Tensor, Tensor, Tensor> sdpa_flash_cpu_backward_meta(const Tensor& grad_out, const Tensor& query,
                                                                const Tensor& key, const Tensor& value,
                                                                const Tensor& out, const Tensor& logsumexp,
                                                                double dropout_p, bool,
                                                                const std::optional<Tensor>& attn_mask,
                                                                std::optional<double> scale) {
  constexpr std::string_view kOp = "aten::_scaled_dot_product_flash_attention_for_cpu_backward";
  const SdpaGeometry g = sdpa_geometry(query, key, value, attn_mask, scale, dropout_p, kOp);
  const int64_t want_out[] = {g.batch, g.heads, g.q_len, g.v_head_dim};
  OPSPEC_CHECK(grad_out.sizes() == IntArrayRef(want_out) && out.sizes() == IntArrayRef(want_out), kOp,
               ": grad_out ", format_sizes(grad_out.sizes()), " and out ", format_sizes(out.sizes()),
               " must both be ", format_sizes(want_out));
  const int64_t want_lse[] = {g.batch, g.heads, g.q_len};
  OPSPEC_CHECK(logsumexp.sizes() == IntArrayRef(want_lse), kOp, ": logsumexp ", format_sizes(logsumexp.sizes()),
               " must be ", format_sizes(want_lse));
  return {make_strided(query.sizes(), heads_last_strides(query.sizes()), query.dtype(), kMeta),
          make_strided(key.sizes(), heads_last_strides(key.sizes()), key.dtype(), kMeta),
          make_strided(value.sizes(), heads_last_strides(value.sizes()), value.dtype(), kMeta)};
}

}  // namespace opspec::internal
