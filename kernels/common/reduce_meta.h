// reduce_meta.h: shape and dtype rules of the reductions (sum, mean, amax,
// amin, linalg_vector_norm), softmax and layer norm, shared by their CPU and
// Meta kernels, plus the Meta kernels themselves.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/core/shape_utils.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"

namespace opspec::internal {

// ReductionGeometry: the dims a reduction covers and the sizes of its result.
struct ReductionGeometry {
  absl::InlinedVector<bool, 6> mask;  // mask[d]: dim d is reduced
  SizeVec out_sizes;                  // result sizes (reduced dims kept as 1 when keepdim)
  int64_t reduced_numel = 1;          // how many input elements feed each output
  bool all_dims = false;              // dim was None or [] (every dim reduced)
};

// reduction_geometry: wraps and checks dim for op ("aten::sum"); None or [] means every dim.
ReductionGeometry reduction_geometry(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::string_view op);

// check_nonempty_reduction: amax/amin have no identity, so reducing a zero-size dim is an
// error ("aten::amax(): Expected reduction dim 0 to have non-zero size.").
void check_nonempty_reduction(const Tensor& self, const ReductionGeometry& g, std::string_view name);

// sum_result_dtype: dtype, else i64 for bool and integer inputs, else self's dtype.
DType sum_result_dtype(DType self, std::optional<DType> dtype);
// mean_result_dtype: dtype or self's dtype, which must be floating ("mean(): could not infer output dtype...").
DType mean_result_dtype(DType self, std::optional<DType> dtype);
// norm_result_dtype: linalg_vector_norm's result dtype (floating input; dtype must not narrow it).
DType norm_result_dtype(DType self, std::optional<DType> dtype);
// check_norm_ord: inf, -inf and negative ords have no identity, so they need non-empty reduced dims.
void check_norm_ord(const Tensor& self, const ReductionGeometry& g, double ord);

// var_geometry: var/std/var_mean's reduction (dim None or [] is every dim);
// self must be floating ("std and var only support floating point and complex dtypes").
ReductionGeometry var_geometry(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::string_view op);
// reduced_dims_last: a view of self (no copy) with the kept dims first and
// the reduced dims last, so that once contiguous each output reduces one run
// of g.reduced_numel elements (the statistics kernels' rows).
Tensor reduced_dims_last(const Tensor& self, const ReductionGeometry& g);

// bool_reduction_geometry: any/all over one dim, or every dim when dim is None.
ReductionGeometry bool_reduction_geometry(const Tensor& self, std::optional<int64_t> dim, bool keepdim,
                                          std::string_view op);

// softmax_dim: dim wrapped against self; also checks half_to_float and the dtype. The result
// dtype is self's (f32 for half_to_float on an f16 input; only Meta accepts that).
int64_t softmax_dim(const Tensor& self, int64_t dim, bool half_to_float, bool is_cpu, std::string_view op);

// LayerNormGeometry: native_layer_norm's split of input into M rows of N normalised elements.
struct LayerNormGeometry {
  int64_t axis = 0;    // first normalised dim
  int64_t rows = 1;    // M: product of input.shape[:axis]
  int64_t cols = 1;    // N: product of normalized_shape
  SizeVec stat_sizes;  // shape of mean and rstd: input.shape[:axis] + [1] * len(normalized_shape)
  DType stat_dtype;    // input's dtype, or f32 for an f16/bf16 input with f32 weight/bias (PyTorch's mixed type)
};

// layer_norm_geometry: checks normalized_shape, weight and bias against input (PyTorch's messages).
LayerNormGeometry layer_norm_geometry(const Tensor& input, IntArrayRef normalized_shape,
                                      const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                                      std::string_view op = "aten::native_layer_norm");

// Meta kernels: outputs with the CPU kernels' sizes and dtypes, and no data.
Tensor sum_meta(const Tensor& self, std::optional<DType> dtype);
Tensor sum_dim_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype);
Tensor mean_meta(const Tensor& self, std::optional<DType> dtype);
Tensor mean_dim_meta(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype);
Tensor amax_meta(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor amin_meta(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor linalg_vector_norm_meta(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                               std::optional<DType> dtype);
Tensor softmax_meta(const Tensor& self, int64_t dim, bool half_to_float);
Tensor log_softmax_meta(const Tensor& self, int64_t dim, bool half_to_float);
Tensor var_correction_meta(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                           bool keepdim);
Tensor std_correction_meta(const Tensor& self, OptionalIntArrayRef dim, const std::optional<Scalar>& correction,
                           bool keepdim);
std::tuple<Tensor, Tensor> var_mean_correction_meta(const Tensor& self, OptionalIntArrayRef dim,
                                                    const std::optional<Scalar>& correction, bool keepdim);
Tensor logsumexp_meta(const Tensor& self, IntArrayRef dim, bool keepdim);
Tensor any_meta(const Tensor& self);
Tensor any_dim_meta(const Tensor& self, int64_t dim, bool keepdim);
Tensor all_meta(const Tensor& self);
Tensor all_dim_meta(const Tensor& self, int64_t dim, bool keepdim);
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_meta(const Tensor& input, IntArrayRef normalized_shape,
                                                          const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias, double eps);

}  // namespace opspec::internal
