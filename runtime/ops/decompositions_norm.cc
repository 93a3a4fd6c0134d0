// decompositions_norm.cc: the CompositeImplicit kernels of rms_norm and
// _fused_rms_norm, op for op as PyTorch 2.x main's layer_norm.cpp (See Note
// [Composite decompositions] in decompositions.cc).
#include <cfloat>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/core/memory_format.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/internal/composite.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace {

using OptTensor = std::optional<Tensor>;

// Note [rms_norm's decomposition]
// PyTorch main's rms_norm (CompositeImplicitAutograd) checks its inputs and
// calls _fused_rms_norm, which has fused CUDA and MPS kernels and, for every
// other backend, the CompositeImplicitAutograd kernel rms_norm_composite: so on
// the CPU a dispatch mode (and autograd) sees its parts: the upcast to the
// opmath dtype (a _to_copy for f16/bf16 only), pow(x, 2), mean over the
// normalised dims (last first, keepdim), add_(eps), rsqrt, mul, mul(weight),
// then the downcast. eps=None is the opmath dtype's epsilon, and an eps given
// for a float opmath is rounded to float first (PyTorch's `float eps_val`), so
// add_ shows 9.999999974752427e-07 for 1e-6. A channels-last input, or a weight
// whose dtype differs from the input's, takes rms_norm_composite directly (no
// _fused_rms_norm; the same parts), and a channels-last result is not made
// contiguous. opspec decomposes on cuda too, where PyTorch runs its fused
// kernel (docs/pytorch-versions.md).

constexpr std::string_view kOp = "aten::rms_norm";

bool suggests_channels_last(const Tensor& t) {
  const MemoryFormat f = suggest_memory_format(t);
  return f == MemoryFormat::kChannelsLast || f == MemoryFormat::kChannelsLast3d;
}

// rms_norm_composite: (result in input's dtype, rsqrt of the mean square in the opmath dtype).
std::tuple<Tensor, Tensor> rms_norm_composite(const Tensor& input, IntArrayRef normalized_shape,
                                              const OptTensor& weight, std::optional<double> eps) {
  // AT_DISPATCH_FLOATING_AND_COMPLEX_TYPES_AND2(Half, BFloat16, ...).
  OPSPEC_CHECK(is_floating(input.dtype()), kOp, ": \"rms_norm\" not implemented for '",
               scalar_type_name(input.dtype()), "'");
  std::vector<int64_t> dims;
  for (int64_t i = 0; i < static_cast<int64_t>(normalized_shape.size()); ++i) dims.push_back(input.dim() - i - 1);
  const DType opmath = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  const Tensor upcast = ops::to(input, opmath);
  // A float opmath adds eps as a float (rounded), a double one as given.
  const double eps_val = opmath == DType::kFloat32 ? static_cast<double>(static_cast<float>(eps.value_or(FLT_EPSILON)))
                                                   : eps.value_or(std::numeric_limits<double>::epsilon());
  Tensor mean_sq = ops::mean(ops::pow(upcast, Scalar(int64_t{2})), dims, /*keepdim=*/true);
  Dispatcher::singleton().call<Tensor, const Tensor&, const Scalar&, const Scalar&>(
      builtin_op(OpId::add__Scalar), mean_sq, Scalar(eps_val), Scalar(int64_t{1}));
  const Tensor rstd = ops::rsqrt(mean_sq);
  Tensor result = ops::mul(upcast, rstd);
  if (weight.has_value() && weight->defined()) result = ops::mul(result, *weight);
  if (suggests_channels_last(input)) return {to_type(result, input.dtype()), rstd};
  result = ops::contiguous(result);
  return {to_type(result, input.dtype()), ops::contiguous(rstd)};
}

Tensor rms_norm_kernel(const Tensor& input, IntArrayRef normalized_shape, const OptTensor& weight,
                       std::optional<double> eps) {
  // PyTorch's _check_rms_norm_inputs_symint: layer_norm's checks without a bias.
  const bool has_weight = weight.has_value() && weight->defined();
  const IntArrayRef weight_sizes = has_weight ? weight->sizes() : IntArrayRef();
  check_normalized_shape(input.sizes(), normalized_shape, has_weight ? &weight_sizes : nullptr, nullptr, kOp);
  const bool weight_dtype_differs = weight.has_value() && weight->defined() && weight->dtype() != input.dtype();
  if (suggests_channels_last(input) || weight_dtype_differs) {
    return std::get<0>(rms_norm_composite(input, normalized_shape, weight, eps));
  }
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, const OptTensor&, std::optional<double>);
  static const TypedOp<Sig> fused("aten::_fused_rms_norm");
  return std::get<0>(fused(input, normalized_shape, weight, eps));
}

}  // namespace

void register_norm_decompositions(Dispatcher& d) {
  Library lib("aten", d);
  constexpr DispatchKey kKey = DispatchKey::kCompositeImplicit;
  lib.impl("rms_norm", kKey, &rms_norm_kernel).impl("_fused_rms_norm", kKey, &rms_norm_composite);
}

}  // namespace opspec::internal
