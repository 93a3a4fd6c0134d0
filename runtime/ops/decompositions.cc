// decompositions.cc: the CompositeImplicit kernels of composite ops. Each one
// calls the same aten ops, in the same order, as PyTorch's
// CompositeImplicitAutograd kernel, so a mode sees identical op sequences.
// See Note [Composite decompositions].
#include <numeric>

#include "runtime/core/memory_format.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/internal/composite.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {

// Note [Composite decompositions]
// Composite ops are decomposed above the Python key, so dispatch modes never
// see them, only their parts; function modes and pre-dispatch capture (above
// CompositeImplicit) see them whole. Where PyTorch's kernel branches on
// isTensorSubclassLike (a mode is active or a tensor has a subclass), so do we:
// that choice is visible in op logs (linear's bias add is add_ without a mode
// and add under one).

// PyTorch's isTensorSubclassLike: a mode is active, or the tensor is a subclass,
// meta or fake (FakeTensor is a subclass in PyTorch).
bool is_tensor_subclass_like(const Tensor& t) {
  constexpr DispatchKeySet kSubclassLike{DispatchKey::kPython, DispatchKey::kMeta, DispatchKey::kFake};
  return dispatch_mode_enabled() || (t.defined() && !(t.key_set() & kSubclassLike).empty());
}

// input.toType(dtype): a _to_copy that names dtype, layout and device.
Tensor to_type(const Tensor& self, DType dtype) {
  if (dtype == self.dtype()) return self;
  using Sig = Tensor(const Tensor&, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                     std::optional<bool>, bool, std::optional<int64_t>);
  static const TypedOp<Sig> to_copy("aten::_to_copy");
  return to_copy(self, dtype, int64_t{0}, self.device(), std::nullopt, false, std::nullopt);
}

namespace {

// clone_as: PyTorch's self.clone(format), which logs memory_format=<format>.
Tensor clone_as(const Tensor& self, MemoryFormat format) {
  return Dispatcher::singleton().call<Tensor, const Tensor&, std::optional<int64_t>>(
      builtin_op(OpId::clone), self, static_cast<int64_t>(format));
}

// clone_contiguous: self.clone(at::MemoryFormat::Contiguous) (reshape's copy path).
Tensor clone_contiguous(const Tensor& self) { return clone_as(self, MemoryFormat::kContiguous); }

// PyTorch's reshape: a view when strides allow, else clone + _unsafe_view.
Tensor reshape_impl(const Tensor& self, IntArrayRef proposed) {
  const SizeVec shape = infer_size(proposed, self.numel(), "aten::reshape");
  if (compute_view_strides(self.sizes(), self.strides(), shape)) return ops::view(self, shape);
  return ops::_unsafe_view(clone_contiguous(self), shape);
}

Tensor reshape_kernel(const Tensor& self, IntArrayRef shape) { return reshape_impl(self, shape); }

Tensor flatten_kernel(const Tensor& self, int64_t start_dim, int64_t end_dim) {
  start_dim = wrap_dim(start_dim, self.dim(), "aten::flatten");
  end_dim = wrap_dim(end_dim, self.dim(), "aten::flatten");
  OPSPEC_CHECK(start_dim <= end_dim, "aten::flatten: flatten() has invalid args: start_dim cannot come after end_dim");
  if (self.dim() == 0) return reshape_impl(self, {1});
  if (start_dim == end_dim) return self;
  SizeVec shape;
  for (int64_t d = 0; d < start_dim; ++d) shape.push_back(self.size(d));
  int64_t flat = 1;
  for (int64_t d = start_dim; d <= end_dim; ++d) flat *= self.size(d);
  shape.push_back(flat);
  for (int64_t d = end_dim + 1; d < self.dim(); ++d) shape.push_back(self.size(d));
  return reshape_impl(self, shape);
}

// PyTorch's narrow: a slice of `length` elements from `start` (which may
// count from the end); modes see aten::slice.Tensor.
Tensor narrow_kernel(const Tensor& self, int64_t dim, int64_t start, int64_t length) {
  OPSPEC_CHECK(self.dim() > 0, "aten::narrow: narrow() cannot be applied to a 0-dim tensor.");
  OPSPEC_CHECK(length >= 0, "aten::narrow: narrow(): length must be non-negative.");
  const int64_t size = self.size(wrap_dim(dim, self.dim(), "aten::narrow"));
  OPSPEC_CHECK(-size <= start && start <= size, "aten::narrow: start out of range (expected to be in range of [",
               -size, ", ", size, "], but got ", start, ")");
  if (start < 0) start += size;
  OPSPEC_CHECK(start <= size - length, "aten::narrow: start (", start, ") + length (", length,
               ") exceeds dimension size (", size, ").");
  return ops::slice(self, dim, start, start + length, 1);
}

Tensor numpy_T_kernel(const Tensor& self) {
  if (self.dim() < 2) return self;
  SizeVec dims(static_cast<size_t>(self.dim()));
  std::iota(dims.rbegin(), dims.rend(), 0);
  return ops::permute(self, dims);
}

// PyTorch's contiguous: self when already laid out in the format, else a
// clone in it. Preserve is no layout: c10's is_contiguous(Preserve) falls back
// to the row-major test, so a contiguous self passes and any other is refused.
Tensor contiguous_kernel(const Tensor& self, int64_t memory_format) {
  constexpr std::string_view kOp = "aten::contiguous";
  const MemoryFormat format = *to_memory_format(memory_format, kOp);
  const bool preserve = format == MemoryFormat::kPreserve;
  if (is_contiguous(self, preserve ? MemoryFormat::kContiguous : format)) return self;
  OPSPEC_CHECK(!preserve, kOp, ": preserve memory format is unsupported by the contiguous operator");
  return clone_as(self, format);
}

// PyTorch's _to_impl: self when nothing changes, no copy is asked for and the
// format is none, preserve or the one self suggests (to_will_alias); else a
// _to_copy passed the format. See Note [Memory formats].
Tensor to_impl(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device, bool copy,
               std::optional<int64_t> memory_format, std::string_view op) {
  const std::optional<MemoryFormat> format = to_memory_format(memory_format, op);
  const bool same_dtype = !dtype || *dtype == self.dtype();
  const bool same_device = !device || *device == self.device();
  const bool same_layout =
      !format || *format == MemoryFormat::kPreserve || suggest_memory_format(self) == *format;
  if (same_dtype && same_device && !copy && same_layout) return self;
  return ops::_to_copy(self, {.dtype = dtype, .device = device, .memory_format = format});
}

Tensor to_dtype_kernel(const Tensor& self, DType dtype, bool non_blocking, bool copy,
                       std::optional<int64_t> memory_format) {
  return to_impl(self, dtype, std::nullopt, copy, memory_format, "aten::to.dtype");
}

Tensor to_device_kernel(const Tensor& self, Device device, DType dtype, bool non_blocking, bool copy,
                        std::optional<int64_t> memory_format) {
  return to_impl(self, dtype, device, copy, memory_format, "aten::to.device");
}

// PyTorch's should_fold: fold a >=3-D operand into a matrix for mm/mv when that
// needs no copy. Note it calls mT on tensor2 (an observable transpose) first.
bool should_fold(const Tensor& tensor1, const Tensor& tensor2) {
  const bool tensor1_larger = tensor1.dim() >= tensor2.dim();
  const Tensor t1 = tensor1_larger ? tensor1 : ops::transpose(tensor2, -2, -1);
  const int64_t dim_t1 = t1.dim();
  const int64_t dim_t2 = tensor1_larger ? tensor2.dim() : tensor1.dim();
  if (!(dim_t1 >= 3 && dim_t2 <= 2)) return false;
  if (tensor1.dim() == 2) return false;
  if (t1.numel() == 0) return true;
  for (int64_t i = 0; i < dim_t1 - 2; ++i) {
    if (t1.stride(i) != t1.stride(i + 1) * t1.size(i + 1)) return false;
  }
  return true;
}

Tensor matmul_kernel(const Tensor& tensor1, const Tensor& tensor2) {
  const int64_t dim1 = tensor1.dim(), dim2 = tensor2.dim();
  OPSPEC_CHECK(dim1 != 0 && dim2 != 0, "aten::matmul: both arguments to matmul need to be at least 1D, but they are ",
               dim1, "D and ", dim2, "D");
  if (dim1 == 1 && dim2 == 1) return ops::dot(tensor1, tensor2);
  if (dim1 == 2 && dim2 == 1) return ops::mv(tensor1, tensor2);
  if (dim1 == 1 && dim2 == 2) {
    Tensor out = ops::mm(ops::unsqueeze(tensor1, 0), tensor2);
    return ops::squeeze_(out, 0);
  }
  if (dim1 == 2 && dim2 == 2) return ops::mm(tensor1, tensor2);
  if (should_fold(tensor1, tensor2)) {
    const bool transpose = dim2 > dim1;
    const Tensor t1 = transpose ? ops::transpose(tensor2, -2, -1) : tensor1;
    const Tensor t2 = !transpose ? tensor2 : (dim1 == 2 ? ops::t(tensor1) : tensor1);
    SizeVec output_shape(t1.sizes().begin(), t1.sizes().end() - 1);
    const int64_t folded_dim1 = compute_numel(output_shape);
    const bool t2_is_matrix = t2.dim() == 2;
    if (t2_is_matrix) output_shape.push_back(t2.size(1));
    const Tensor t1_folded = reshape_impl(t1, {folded_dim1, t1.sizes().back()});
    if (t2_is_matrix) {
      const Tensor output = ops::_unsafe_view(ops::mm(t1_folded, t2), output_shape);
      return transpose ? ops::contiguous(ops::transpose(output, -2, -1)) : output;
    }
    return ops::_unsafe_view(ops::mv(t1_folded, t2), output_shape);
  }
  // Batched: broadcast the batch dims, fold them, bmm, unfold.
  const int64_t n = dim1 > 1 ? tensor1.sizes()[dim1 - 2] : 1;
  const int64_t m1 = tensor1.sizes().back();
  const IntArrayRef batch1 = tensor1.sizes().subspan(0, std::max<int64_t>(dim1 - 2, 0));
  const int64_t m2 = dim2 > 1 ? tensor2.sizes()[dim2 - 2] : tensor2.sizes().front();
  const int64_t p = dim2 > 1 ? tensor2.sizes().back() : 1;
  const IntArrayRef batch2 = tensor2.sizes().subspan(0, std::max<int64_t>(dim2 - 2, 0));
  // PyTorch 2.x: a batch of one against a larger batch is squeezed and
  // matmul'd again when it requires grad or is subclass-like (a mode records),
  // so autograd does not keep the expanded copy.
  if (dim1 == 3 && dim2 == 3 && batch1[0] != batch2[0]) {
    if (batch1[0] == 1 && (tensor1.requires_grad() || is_tensor_subclass_like(tensor1))) {
      return matmul_kernel(ops::squeeze(tensor1, 0), tensor2);
    }
    if (batch2[0] == 1 && (tensor2.requires_grad() || is_tensor_subclass_like(tensor2))) {
      return matmul_kernel(tensor1, ops::squeeze(tensor2, 0));
    }
  }
  SizeVec output_shape = broadcast_shapes(batch1, batch2, "aten::matmul");
  const int64_t batch = compute_numel(output_shape);
  SizeVec expand1 = output_shape;
  expand1.push_back(n);
  expand1.push_back(m1);
  const Tensor t1_expanded = reshape_impl(ops::expand(tensor1, expand1), {batch, n, m1});
  const bool vector_rhs = dim2 == 1;
  SizeVec expand2 = output_shape;
  expand2.push_back(m2);
  if (!vector_rhs) expand2.push_back(p);
  Tensor t2_expanded = ops::expand(tensor2, expand2);
  t2_expanded = vector_rhs ? ops::unsqueeze(reshape_impl(t2_expanded, {batch, m2}), 2)
                           : reshape_impl(t2_expanded, {batch, m2, p});
  if (dim1 > 1) output_shape.push_back(n);
  if (dim2 > 1) output_shape.push_back(p);
  if (vector_rhs) return ops::_unsafe_view(ops::squeeze(ops::bmm(t1_expanded, t2_expanded), -1), output_shape);
  return ops::_unsafe_view(ops::bmm(t1_expanded, t2_expanded), output_shape);
}

// _flatten_nd_linear (PyTorch 2.5+): every leading dim folded into one addmm,
// the input viewed first (its own statement), then weight.t() as addmm's argument.
Tensor flatten_nd_linear(const Tensor& input, const Tensor& weight, const Tensor& bias) {
  const IntArrayRef sizes = input.sizes();
  const int64_t rows = compute_numel(sizes.subspan(0, sizes.size() - 1));  // no -1: a dim may be 0
  const Tensor flattened = ops::view(input, {rows, sizes.back()});
  const Tensor result = ops::addmm(bias, flattened, ops::t(weight));
  SizeVec result_sizes(sizes.begin(), sizes.end());
  result_sizes.back() = result.size(1);
  return ops::view(result, result_sizes);
}

// linear: PyTorch 2.x main's (Linear.cpp): addmm for a 2-D input; a bias
// that is a vector (or squeezes to one) and contiguous with a contiguous
// input of any other rank takes _flatten_nd_linear; otherwise matmul, then
// the bias added in place (out of place for a subclass).
Tensor linear_kernel(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias_opt) {
  const int64_t input_dim = input.dim(), weight_dim = weight.dim();
  OPSPEC_CHECK(input_dim != 0 && weight_dim != 0, "aten::linear: both arguments to linear need to be at least 1D, ",
               "but they are ", input_dim, "D and ", weight_dim, "D");
  const bool has_bias = bias_opt && bias_opt->defined();
  if (input_dim == 2 && has_bias) return ops::addmm(*bias_opt, input, ops::t(weight));
  const bool bias_fusable =
      has_bias && (bias_opt->dim() == 1 || ops::squeeze(*bias_opt).dim() == 1) && bias_opt->is_contiguous();
  if (bias_fusable && input.is_contiguous()) return flatten_nd_linear(input, weight, *bias_opt);
  Tensor output = ops::matmul(input, ops::t(weight));
  if (has_bias) {
    if (is_tensor_subclass_like(*bias_opt)) return ops::add(output, *bias_opt);
    ops::add_(output, *bias_opt);
  }
  return output;
}

Tensor softmax_kernel(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const Tensor converted = dtype ? to_type(self, *dtype) : self;
  return ops::_softmax(converted, dim, false);
}

Tensor log_softmax_kernel(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  const Tensor converted = dtype ? to_type(self, *dtype) : self;
  return ops::_log_softmax(converted, dim, false);
}

Tensor layer_norm_kernel(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                         const std::optional<Tensor>& bias, double eps, bool cudnn_enable) {
  return std::get<0>(ops::native_layer_norm(input, normalized_shape, weight, bias, eps));
}

// PyTorch's CPU dropout (_dropout_impl): the fused native_dropout is used only on
// accelerators, so on cpu the noise is built from empty_like + bernoulli_ + div_.
Tensor dropout_kernel(const Tensor& input, double p, bool train) {
  OPSPEC_CHECK(p >= 0 && p <= 1, "aten::dropout: dropout probability has to be between 0 and 1, but got ", p);
  if (train && input.device().is_cuda() && p > 0 && p < 1 && input.numel() > 0) {
    return std::get<0>(ops::native_dropout(input, p, train));
  }
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) {
    // at::zeros({}, input.options()): C++ options name dtype, layout and device (no pin_memory).
    using FactorySig = Tensor(IntArrayRef, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                              std::optional<bool>);
    static const TypedOp<FactorySig> zeros("aten::zeros");
    constexpr int64_t kStrided = 0;
    return ops::mul(input, zeros({}, input.dtype(), kStrided, input.device(), std::nullopt));
  }
  // at::empty_like(input, LEGACY_CONTIGUOUS_MEMORY_FORMAT)
  using LikeSig = Tensor(const Tensor&, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                         std::optional<bool>, std::optional<int64_t>);
  static const TypedOp<LikeSig> empty_like("aten::empty_like");
  Tensor noise = empty_like(input, std::nullopt, std::nullopt, std::nullopt, std::nullopt, int64_t{0});
  ops::bernoulli_(noise, 1 - p);
  // PyTorch's C++ composite calls noise.div_(1 - p): the C++-only .Scalar overload.
  Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&>(builtin_op(OpId::div__Scalar), noise,
                                                                     Scalar(1 - p));
  return ops::mul(input, noise);
}

}  // namespace

void register_decompositions(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kKey = DispatchKey::kCompositeImplicit;
  lib.impl("reshape", kKey, &reshape_kernel)
      .impl("flatten.using_ints", kKey, &flatten_kernel)
      .impl("numpy_T", kKey, &numpy_T_kernel)
      .impl("narrow", kKey, &narrow_kernel)
      .impl("contiguous", kKey, &contiguous_kernel)
      .impl("to.dtype", kKey, &to_dtype_kernel)
      .impl("to.device", kKey, &to_device_kernel)
      .impl("matmul", kKey, &matmul_kernel)
      .impl("linear", kKey, &linear_kernel)
      .impl("softmax.int", kKey, &softmax_kernel)
      .impl("log_softmax.int", kKey, &log_softmax_kernel)
      .impl("layer_norm", kKey, &layer_norm_kernel)
      .impl("dropout", kKey, &dropout_kernel)
      // max.other / min.other: PyTorch's BinaryOps.cpp forwards them to maximum / minimum.
      .impl("max.other", kKey, [](const Tensor& self, const Tensor& other) { return ops::maximum(self, other); })
      .impl("min.other", kKey, [](const Tensor& self, const Tensor& other) { return ops::minimum(self, other); });
}

}  // namespace opspec::internal
