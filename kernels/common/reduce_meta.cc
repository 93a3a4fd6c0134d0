#include "kernels/common/reduce_meta.h"

#include <cmath>

namespace opspec::internal {

ReductionGeometry reduction_geometry(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::string_view op) {
  ReductionGeometry g;
  g.mask = reduction_mask(dim, self.dim(), op);
  g.out_sizes = reduced_shape(self.sizes(), g.mask, keepdim);
  g.all_dims = !dim || dim->empty();
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (g.mask[d]) g.reduced_numel *= self.sizes()[d];
  }
  return g;
}

void check_nonempty_reduction(const Tensor& self, const ReductionGeometry& g, std::string_view name) {
  if (g.all_dims) {
    OPSPEC_CHECK(self.numel() != 0, "aten::", name, "(): Expected reduction dim to be specified for input.numel() == 0. ",
                 "Specify the reduction dim with the 'dim' argument.");
    return;
  }
  for (int64_t d = 0; d < self.dim(); ++d) {
    OPSPEC_CHECK(!g.mask[d] || self.sizes()[d] != 0, "aten::", name, "(): Expected reduction dim ", d,
                 " to have non-zero size.");
  }
}

DType sum_result_dtype(DType self, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  return is_integral(self, /*include_bool=*/true) ? DType::kInt64 : self;
}

DType mean_result_dtype(DType self, std::optional<DType> dtype) {
  if (dtype) {
    OPSPEC_CHECK(is_floating(*dtype), "aten::mean(): could not infer output dtype. Optional dtype must be either a ",
                 "floating point or complex dtype. Got: ", scalar_type_name(*dtype));
    return *dtype;
  }
  OPSPEC_CHECK(is_floating(self), "aten::mean(): could not infer output dtype. Input dtype must be either a ",
               "floating point or complex dtype. Got: ", scalar_type_name(self));
  return self;
}

DType norm_result_dtype(DType self, std::optional<DType> dtype) {
  OPSPEC_CHECK(is_floating(self), "aten::linalg_vector_norm: Expected a floating point or complex tensor as input. Got ",
               scalar_type_name(self));
  if (!dtype) return self;
  OPSPEC_CHECK(is_floating(*dtype), "aten::linalg_vector_norm: dtype should be floating point or complex. Got ",
               scalar_type_name(*dtype));
  OPSPEC_CHECK(promote_types(self, *dtype) == *dtype, "aten::linalg_vector_norm: the dtype of the input (",
               scalar_type_name(self), ") should be convertible without narrowing to the specified dtype (",
               scalar_type_name(*dtype), ")");
  return *dtype;
}

void check_norm_ord(const Tensor& self, const ReductionGeometry& g, double ord) {
  if (!(ord < 0 || std::isinf(ord))) return;
  bool empty = false;
  if (g.all_dims) {
    empty = self.numel() == 0;
  } else {
    for (int64_t d = 0; d < self.dim(); ++d) empty |= g.mask[d] && self.sizes()[d] == 0;
  }
  OPSPEC_CHECK(!empty, "aten::linalg_vector_norm: linalg.vector_norm cannot compute the ", format_double(ord),
               " norm on an empty tensor because the operation does not have an identity");
}

int64_t softmax_dim(const Tensor& self, int64_t dim, bool half_to_float, bool is_cpu, std::string_view op) {
  const int64_t d = wrap_dim(dim, self.dim(), op);
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"", op == "aten::_softmax" ? "softmax" : "log_softmax",
               "\" not implemented for '", scalar_type_name(self.dtype()), "'");
  if (half_to_float) {
    // PyTorch's CPU kernels reject half_to_float; its meta function (which
    // models the CUDA kernels) accepts it for f16 inputs.
    OPSPEC_CHECK(!is_cpu, op, ": ", op == "aten::_softmax" ? "softmax" : "log_softmax",
                 " with half to float conversion is not supported on CPU");
    OPSPEC_CHECK(self.dtype() == DType::kFloat16, op, ": conversion is supported for Half type only, got ",
                 scalar_type_name(self.dtype()));
  }
  return d;
}

LayerNormGeometry layer_norm_geometry(const Tensor& input, IntArrayRef normalized_shape,
                                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                      std::string_view kOp) {
  const Tensor tensors[] = {input, weight.value_or(Tensor()), bias.value_or(Tensor())};
  check_same_device(tensors, kOp);
  const IntArrayRef weight_sizes = weight ? weight->sizes() : IntArrayRef();
  const IntArrayRef bias_sizes = bias ? bias->sizes() : IntArrayRef();
  check_normalized_shape(input.sizes(), normalized_shape, weight ? &weight_sizes : nullptr,
                         bias ? &bias_sizes : nullptr, kOp);
  OPSPEC_CHECK(is_floating(input.dtype()), kOp, ": \"LayerNormKernelImpl\" not implemented for '",
               scalar_type_name(input.dtype()), "'");
  // Mixed type (PyTorch's is_mixed_type): a reduced-precision input with f32
  // parameters; mean and rstd are then f32.
  const bool reduced = input.dtype() == DType::kFloat16 || input.dtype() == DType::kBFloat16;
  const bool mixed = reduced && ((weight && weight->dtype() == DType::kFloat32) ||
                                 (bias && bias->dtype() == DType::kFloat32));
  const DType param_dtype = mixed ? DType::kFloat32 : input.dtype();
  for (const auto* p : {&weight, &bias}) {
    if (!*p) continue;
    OPSPEC_CHECK((*p)->dtype() == param_dtype, kOp, ": expected ", p == &weight ? "weight" : "bias",
                 " to have dtype ", dtype_short_name(param_dtype), " to match input ", input.meta_str(),
                 ", but got ", (*p)->meta_str());
  }
  const IntArrayRef in = input.sizes();
  const int64_t in_nd = input.dim();
  LayerNormGeometry g;
  g.axis = in_nd - static_cast<int64_t>(normalized_shape.size());
  g.stat_dtype = param_dtype;
  for (int64_t d = 0; d < in_nd; ++d) {
    if (d < g.axis) {
      g.rows *= in[d];
      g.stat_sizes.push_back(in[d]);
    } else {
      g.cols *= in[d];
      g.stat_sizes.push_back(1);
    }
  }
  return g;
}

// ---- Meta kernels ----

Tensor sum_dim_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::sum");
  return make_tensor(g.out_sizes, sum_result_dtype(self.dtype(), dtype), kMeta);
}

Tensor sum_meta(const Tensor& self, std::optional<DType> dtype) {
  return sum_dim_meta(self, std::nullopt, false, dtype);
}

Tensor mean_dim_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const DType out = mean_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::mean");
  return make_tensor(g.out_sizes, out, kMeta);
}

Tensor mean_meta(const Tensor& self, std::optional<DType> dtype) {
  return mean_dim_meta(self, std::nullopt, false, dtype);
}

Tensor amax_meta(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::amax");
  check_nonempty_reduction(self, g, "amax");
  return make_tensor(g.out_sizes, self.dtype(), kMeta);
}

Tensor amin_meta(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::amin");
  check_nonempty_reduction(self, g, "amin");
  return make_tensor(g.out_sizes, self.dtype(), kMeta);
}

Tensor linalg_vector_norm_meta(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                               std::optional<DType> dtype) {
  const DType out = norm_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::linalg_vector_norm");
  check_norm_ord(self, g, ord.to_double());
  return make_tensor(g.out_sizes, out, kMeta);
}

Tensor softmax_meta(const Tensor& self, int64_t dim, bool half_to_float) {
  softmax_dim(self, dim, half_to_float, /*is_cpu=*/false, "aten::_softmax");
  return make_tensor(self.sizes(), half_to_float ? DType::kFloat32 : self.dtype(), kMeta);
}

Tensor log_softmax_meta(const Tensor& self, int64_t dim, bool half_to_float) {
  softmax_dim(self, dim, half_to_float, /*is_cpu=*/false, "aten::_log_softmax");
  return make_tensor(self.sizes(), half_to_float ? DType::kFloat32 : self.dtype(), kMeta);
}

std::tuple<Tensor, Tensor, Tensor> native_layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, double eps) {
  const LayerNormGeometry g = layer_norm_geometry(input, normalized_shape, weight, bias);
  return {make_tensor(input.sizes(), input.dtype(), kMeta), make_tensor(g.stat_sizes, g.stat_dtype, kMeta),
          make_tensor(g.stat_sizes, g.stat_dtype, kMeta)};
}

ReductionGeometry var_geometry(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::string_view op) {
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": std and var only support floating point and complex dtypes");
  return reduction_geometry(self, dim, keepdim, op);
}

Tensor reduced_dims_last(const Tensor& self, const ReductionGeometry& g) {
  SizeVec sizes, strides;
  for (int pass = 0; pass < 2; ++pass) {
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (g.mask[d] == (pass == 1)) {
        sizes.push_back(self.size(d));
        strides.push_back(self.stride(d));
      }
    }
  }
  return make_view(self, sizes, strides, self.storage_offset());
}

ReductionGeometry bool_reduction_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                          std::string_view op) {
  if (!dim) return reduction_geometry(self, std::nullopt, false, op);
  const int64_t one[] = {*dim};
  return reduction_geometry(self, IntArrayRef(one), keepdim, op);
}

Tensor var_correction_meta(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>&, bool keepdim) {
  return make_tensor(var_geometry(self, dim, keepdim, "aten::var").out_sizes, self.dtype(), kMeta);
}

Tensor std_correction_meta(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>&, bool keepdim) {
  return make_tensor(var_geometry(self, dim, keepdim, "aten::std").out_sizes, self.dtype(), kMeta);
}

std::tuple<Tensor, Tensor> var_mean_correction_meta(const Tensor& self, OptionalIntArrayRef dim,
                                                    const std::optional<Scalar>&, bool keepdim) {
  const ReductionGeometry g = var_geometry(self, dim, keepdim, "aten::var_mean");
  return {make_tensor(g.out_sizes, self.dtype(), kMeta), make_tensor(g.out_sizes, self.dtype(), kMeta)};
}

Tensor logsumexp_meta(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::logsumexp");
  return make_tensor(g.out_sizes, is_floating(self.dtype()) ? self.dtype() : kDefaultFloat, kMeta);
}

Tensor any_meta(const Tensor& self) {
  return make_tensor(bool_reduction_geometry(self, std::nullopt, false, "aten::any").out_sizes, DType::kBool, kMeta);
}
Tensor any_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return make_tensor(bool_reduction_geometry(self, dim, keepdim, "aten::any").out_sizes, DType::kBool, kMeta);
}
Tensor all_meta(const Tensor& self) {
  return make_tensor(bool_reduction_geometry(self, std::nullopt, false, "aten::all").out_sizes, DType::kBool, kMeta);
}
Tensor all_dim_meta(const Tensor& self, int64_t dim, bool keepdim) {
  return make_tensor(bool_reduction_geometry(self, dim, keepdim, "aten::all").out_sizes, DType::kBool, kMeta);
}

}  // namespace opspec::internal
