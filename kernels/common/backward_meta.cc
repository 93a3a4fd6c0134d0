// backward_meta.cc: rules and Meta kernels of autograd's backward ops. See backward_meta.h.
#include "kernels/common/backward_meta.h"

#include "kernels/common/layout_format.h"
#include "kernels/common/views.h"
#include "runtime/core/memory_format.h"
#include "runtime/core/meta_stand_in.h"
#include "runtime/core/shape_utils.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

namespace {

// check_same_size: PyTorch's checkSameSize message for two tensor arguments.
void check_same_size(const Tensor& a, std::string_view a_name, int a_pos, const Tensor& b, std::string_view b_name,
                     int b_pos, std::string_view checking, std::string_view op) {
  OPSPEC_CHECK(a.sizes() == b.sizes(), op, ": Expected tensor for argument #", a_pos, " '", a_name,
               "' to have same size as tensor for argument #", b_pos, " '", b_name, "'; but ",
               format_sizes(a.sizes()), " does not equal ", format_sizes(b.sizes()), " (while checking arguments for ",
               checking, ")");
}

}  // namespace

SoftmaxBackwardGeometry softmax_backward_geometry(const Tensor& grad, const Tensor& output, int64_t dim,
                                                  DType input_dtype, std::string_view op) {
  const bool log = op == "aten::_log_softmax_backward_data";
  const Tensor both[] = {grad, output};
  check_same_device(both, op);
  check_same_size(grad, "grad", 1, output, "output", 2, log ? "log_softmax_backward" : "softmax_backward", op);
  OPSPEC_CHECK(is_floating(grad.dtype()), op, ": \"", log ? "log_softmax_backward" : "softmax_backward",
               "\" not implemented for '", scalar_type_name(grad.dtype()), "'");
  OPSPEC_CHECK(grad.dtype() == output.dtype(), op, ": expected grad_output and output to have one dtype, got ",
               grad.meta_str(), " and ", output.meta_str());
  SoftmaxBackwardGeometry g;
  g.dim = wrap_dim(dim, grad.dim(), op);
  // half_to_float's backward: an f32 gradient of an f16 input comes back as f16.
  g.result_dtype = grad.dtype() == DType::kFloat32 && input_dtype == DType::kFloat16 ? DType::kFloat16 : grad.dtype();
  for (int64_t i = 0; i < grad.dim(); ++i) {
    if (i < g.dim) g.outer *= grad.sizes()[i];
    if (i == g.dim) g.len = grad.sizes()[i];
    if (i > g.dim) g.inner *= grad.sizes()[i];
  }
  return g;
}

LayerNormGeometry layer_norm_backward_geometry(const Tensor& grad_out, const Tensor& input,
                                               IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
                                               const std::optional<Tensor>& weight,
                                               const std::optional<Tensor>& bias) {
  constexpr std::string_view kOp = "aten::native_layer_norm_backward";
  const Tensor all[] = {grad_out, input, mean, rstd};
  check_same_device(all, kOp);
  const LayerNormGeometry g = layer_norm_geometry(input, normalized_shape, weight, bias, kOp);
  check_same_size(grad_out, "grad_out", 1, input, "input", 2, "layer_norm_backward", kOp);
  OPSPEC_CHECK(grad_out.dtype() == input.dtype(), kOp, ": expected grad_out to have input's dtype ",
               dtype_short_name(input.dtype()), ", got ", grad_out.meta_str());
  for (const Tensor* s : {&mean, &rstd}) {
    OPSPEC_CHECK(s->numel() == g.rows && is_floating(s->dtype()), kOp, ": expected ", s == &mean ? "mean" : "rstd",
                 " to hold one floating value per normalised row (", g.rows, "), got ", s->meta_str());
  }
  return g;
}

Tensor slice_backward_target(const Tensor& out, const Tensor& grad, int64_t dim, int64_t start, int64_t end,
                             int64_t step) {
  const Tensor view = slice_kernel(out, dim, start, end, step);
  OPSPEC_CHECK(view.sizes() == grad.sizes(), "aten::slice_backward: grad_output of shape ",
               format_sizes(grad.sizes()), " does not match the slice [", start, ":", end, ":", step, "] of dim ", dim,
               " of input_sizes ", format_sizes(out.sizes()), ", which has shape ", format_sizes(view.sizes()));
  return view;
}

Tensor select_backward_target(const Tensor& out, const Tensor& grad, int64_t dim, int64_t index) {
  const Tensor view = select_kernel(out, dim, index);
  OPSPEC_CHECK(view.sizes() == grad.sizes(), "aten::select_backward: grad_output of shape ",
               format_sizes(grad.sizes()), " does not match index ", index, " of dim ", dim, " of input_sizes ",
               format_sizes(out.sizes()), ", which has shape ", format_sizes(view.sizes()));
  return view;
}

void check_negative_slope_in_place(bool is_result, double slope, std::string_view what, std::string_view op) {
  // The text of ATen's TORCH_META_FUNC(leaky_relu_backward) and (elu_backward).
  OPSPEC_CHECK(!is_result || slope >= 0.0, op, ": In-place ", what,
               " backward calculation is triggered with a negative slope which is not supported. This is caused by "
               "calling in-place forward function with a negative slope, please call out-of-place version instead.");
}

void check_dropout_backward(const Tensor& grad, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::native_dropout_backward";
  const Tensor both[] = {grad, mask};
  check_same_device(both, kOp);
  OPSPEC_CHECK(mask.dtype() == DType::kBool, kOp, ": Mask should be Bool Scalar Type", ", got ", mask.meta_str());
  OPSPEC_CHECK(is_floating(grad.dtype()), kOp, ": expected a floating grad_output, got ", grad.meta_str());
  check_same_size(grad, "grad_output", 1, mask, "mask", 2, "native_dropout_backward", kOp);
}

void check_masked_fill(const Tensor& self, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  OPSPEC_CHECK(mask.dtype() == DType::kBool, kOp, ": masked_fill_ only supports boolean masks, but got mask with dtype ",
               scalar_type_name(mask.dtype()));
  const Tensor both[] = {self, mask};
  check_same_device(both, kOp);
  // An expanded self is allowed (PyTorch warns); a mask partially overlapping self is not (See Note [Memory overlap]).
  check_no_partial_overlap(self, mask, kOp);
  const SizeVec shape = broadcast_shapes(self.sizes(), mask.sizes(), kOp);
  OPSPEC_CHECK(std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end()), kOp,
               ": output with shape ", format_sizes(self.sizes()), " doesn't match the broadcast shape ",
               format_sizes(shape));
}

SizeVec masked_fill_sizes(const Tensor& self, const Tensor& mask) {
  constexpr std::string_view kOp = "aten::masked_fill";
  OPSPEC_CHECK(mask.dtype() == DType::kBool, kOp, ": masked_fill only supports boolean masks, but got mask with dtype ",
               scalar_type_name(mask.dtype()));
  const Tensor both[] = {self, mask};
  check_same_device(both, kOp);
  return broadcast_shapes(self.sizes(), mask.sizes(), kOp);
}

Tensor softmax_backward_data_meta(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  const auto g = softmax_backward_geometry(grad, output, dim, input_dtype, "aten::_softmax_backward_data");
  return make_tensor(grad.sizes(), g.result_dtype, kMeta);
}

Tensor log_softmax_backward_data_meta(const Tensor& grad, const Tensor& output, int64_t dim, DType input_dtype) {
  const auto g = softmax_backward_geometry(grad, output, dim, input_dtype, "aten::_log_softmax_backward_data");
  return make_tensor(grad.sizes(), g.result_dtype, kMeta);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward_meta(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask) {
  layer_norm_backward_geometry(grad_out, input, normalized_shape, mean, rstd, weight, bias);
  Tensor dx, dw, db;
  if (output_mask[0]) dx = make_tensor(input.sizes(), input.dtype(), kMeta);
  if (output_mask[1] && weight) dw = make_tensor(weight->sizes(), weight->dtype(), kMeta);
  if (output_mask[2] && bias) db = make_tensor(bias->sizes(), bias->dtype(), kMeta);
  return {dx, dw, db};
}

// native_dropout_backward_meta: the CPU's layout, so a fake cpu tensor has
// the real one's strides (2.x's meta decomposition and the CUDA kernel take
// grad's suggested format instead: docs/pytorch-versions.md); standing in for
// CUDA (Note [Meta kernels standing in for a device]) the CUDA kernel's.
Tensor native_dropout_backward_meta(const Tensor& grad, const Tensor& mask, double /*scale*/) {
  check_dropout_backward(grad, mask);
  if (meta_stand_in_device().is_cuda()) {
    return meta_in_format(grad.sizes(), grad.dtype(), suggest_memory_format(grad), "aten::native_dropout_backward");
  }
  const Tensor* operands[] = {&grad, &mask};
  return make_tensor_with_strides(grad.sizes(), elementwise_output_strides(grad.sizes(), operands), grad.dtype(),
                                  kMeta);
}

Tensor slice_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                           int64_t step) {
  Tensor out = make_tensor(input_sizes, grad.dtype(), kMeta);
  slice_backward_target(out, grad, dim, start, end, step);
  return out;
}

Tensor select_backward_meta(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t index) {
  Tensor out = make_tensor(input_sizes, grad.dtype(), kMeta);
  select_backward_target(out, grad, dim, index);
  return out;
}

Tensor masked_fill__meta(const Tensor& self, const Tensor& mask, const Scalar& /*value*/) {
  check_masked_fill(self, mask);
  return self;
}

Tensor masked_fill_meta(const Tensor& self, const Tensor& mask, const Scalar& /*value*/) {
  return make_tensor(masked_fill_sizes(self, mask), self.dtype(), kMeta);
}

}  // namespace opspec::internal
