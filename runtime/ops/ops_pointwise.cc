// ops_pointwise.cc: the public API of the elementwise ops with scalar
// parameters or rounding modes (clamp, clamp_min, clamp_max, the parametrized
// activations and their backward ops, isnan/isinf/nan_to_num, remainder, fmod,
// div with a rounding mode, round.decimals, atan2, bitwise and logical_xor) and
// the in-place forms of clamp, clamp_min, clamp_max, hardtanh, leaky_relu, elu,
// pow, round.decimals, logical_and and logical_or; see ops.h.
#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/ops.h"

namespace opspec::ops {
namespace {

using internal::call;
using internal::wrap;
using OptScalar = std::optional<Scalar>;
using OptTensor = std::optional<Tensor>;
using OptDouble = std::optional<double>;
using OptStr = std::optional<std::string_view>;
using BinarySig = Tensor(const Tensor&, const Tensor&);
using ScalarSig = Tensor(const Tensor&, const Scalar&);


}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

Tensor clamp(const Tensor& self, const OptScalar& min, const OptScalar& max, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const OptScalar&, const OptScalar&)>(OpId::clamp, self, min, max);
}
Tensor clamp(const Tensor& self, const OptTensor& min, const OptTensor& max, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const OptTensor&, const OptTensor&)>(OpId::clamp_Tensor, self, min, max);
}
Tensor clamp_min(const Tensor& self, const Scalar& min, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<ScalarSig>(OpId::clamp_min, self, min);
}
Tensor clamp_min(const Tensor& self, const Tensor& min, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::clamp_min_Tensor, self, min);
}
Tensor clamp_max(const Tensor& self, const Scalar& max, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<ScalarSig>(OpId::clamp_max, self, max);
}
Tensor clamp_max(const Tensor& self, const Tensor& max, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::clamp_max_Tensor, self, max);
}
Tensor hardtanh(const Tensor& self, const Scalar& min_val, const Scalar& max_val, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Scalar&, const Scalar&)>(OpId::hardtanh, self, min_val, max_val);
}
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<ScalarSig>(OpId::leaky_relu, self, negative_slope);
}
Tensor elu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
           const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&);
  return call<Sig>(OpId::elu, self, alpha, scale, input_scale);
}
Tensor softplus(const Tensor& self, const Scalar& beta, const Scalar& threshold, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Scalar&, const Scalar&)>(OpId::softplus, self, beta, threshold);
}
Tensor isnan(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::isnan, self);
}
Tensor isinf(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&)>(OpId::isinf, self);
}
Tensor nan_to_num(const Tensor& self, OptDouble nan, OptDouble posinf, OptDouble neginf,
                  const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptDouble, OptDouble, OptDouble)>(OpId::nan_to_num, self, nan, posinf, neginf);
}

// ---- Binary ----
Tensor pow(const Scalar& self, const Tensor& exponent, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Scalar&, const Tensor&)>(OpId::pow_Scalar, self, exponent);
}
// As PyTorch's Python frontend: a number operand takes the .Scalar overload
// of remainder, fmod and the bitwise ops, but div's .Tensor_mode with a
// wrapped number (torch.div(x, 2, rounding_mode='floor') logs div.Tensor_mode).
#define OPSPEC_BINARY_PAIR(name, tensor_id, scalar_id)                                            \
  Tensor name(const Tensor& self, const Tensor& other, const std::source_location& loc) {         \
    OPSPEC_SITE;                                                                                  \
    return call<BinarySig>(OpId::tensor_id, self, other);                                         \
  }                                                                                               \
  Tensor name(const Tensor& self, const Scalar& other, const std::source_location& loc) {         \
    OPSPEC_SITE;                                                                                  \
    return call<ScalarSig>(OpId::scalar_id, self, other);                                         \
  }
OPSPEC_BINARY_PAIR(remainder, remainder_Tensor, remainder_Scalar)
OPSPEC_BINARY_PAIR(fmod, fmod_Tensor, fmod_Scalar)
OPSPEC_BINARY_PAIR(bitwise_and, bitwise_and_Tensor, bitwise_and_Scalar)
OPSPEC_BINARY_PAIR(bitwise_or, bitwise_or_Tensor, bitwise_or_Scalar)
OPSPEC_BINARY_PAIR(bitwise_xor, bitwise_xor_Tensor, bitwise_xor_Scalar)
#undef OPSPEC_BINARY_PAIR

Tensor div(const Tensor& self, const Tensor& other, OptStr rounding_mode, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, OptStr)>(OpId::div_Tensor_mode, self, other, rounding_mode);
}
Tensor div(const Tensor& self, const Scalar& other, OptStr rounding_mode, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, OptStr)>(OpId::div_Tensor_mode, self, wrap(other),
                                                            rounding_mode);
}
Tensor round(const Tensor& self, int64_t decimals, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::round_decimals, self, decimals);
}
Tensor atan2(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::atan2, self, other);
}
Tensor logical_xor(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::logical_xor, self, other);
}

// ---- In-place ----
Tensor& clamp_(Tensor& self, const OptScalar& min, const OptScalar& max, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const OptScalar&, const OptScalar&)>(OpId::clamp_, self, min, max);
  return self;
}
Tensor& clamp_(Tensor& self, const OptTensor& min, const OptTensor& max, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const OptTensor&, const OptTensor&)>(OpId::clamp__Tensor, self, min, max);
  return self;
}
Tensor& clamp_min_(Tensor& self, const Scalar& min, const std::source_location& loc) {
  OPSPEC_SITE;
  call<ScalarSig>(OpId::clamp_min_, self, min);
  return self;
}
Tensor& clamp_min_(Tensor& self, const Tensor& min, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::clamp_min__Tensor, self, min);
  return self;
}
Tensor& clamp_max_(Tensor& self, const Scalar& max, const std::source_location& loc) {
  OPSPEC_SITE;
  call<ScalarSig>(OpId::clamp_max_, self, max);
  return self;
}
Tensor& clamp_max_(Tensor& self, const Tensor& max, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::clamp_max__Tensor, self, max);
  return self;
}
Tensor& hardtanh_(Tensor& self, const Scalar& min_val, const Scalar& max_val, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const Scalar&, const Scalar&)>(OpId::hardtanh_, self, min_val, max_val);
  return self;
}
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope, const std::source_location& loc) {
  OPSPEC_SITE;
  call<ScalarSig>(OpId::leaky_relu_, self, negative_slope);
  return self;
}
Tensor& elu_(Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
             const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&)>(OpId::elu_, self, alpha, scale,
                                                                            input_scale);
  return self;
}
Tensor& pow_(Tensor& self, const Scalar& exponent, const std::source_location& loc) {
  OPSPEC_SITE;
  call<ScalarSig>(OpId::pow__Scalar, self, exponent);
  return self;
}
Tensor& pow_(Tensor& self, const Tensor& exponent, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::pow__Tensor, self, exponent);
  return self;
}
Tensor& round_(Tensor& self, int64_t decimals, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, int64_t)>(OpId::round__decimals, self, decimals);
  return self;
}
Tensor& logical_and_(Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::logical_and_, self, other);
  return self;
}
Tensor& logical_or_(Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::logical_or_, self, other);
  return self;
}

// ---- Backward ops of the parametrized activations ----
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val, const Scalar& max_val,
                         const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  return call<Sig>(OpId::hardtanh_backward, grad_output, self, min_val, max_val);
}
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, const Scalar& negative_slope,
                           bool self_is_result, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Scalar&, bool);
  return call<Sig>(OpId::leaky_relu_backward, grad_output, self, negative_slope, self_is_result);
}
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Scalar&, const Scalar&, const Scalar&, bool, const Tensor&);
  return call<Sig>(OpId::elu_backward, grad_output, alpha, scale, input_scale, is_result, self_or_result);
}
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self, const Scalar& beta, const Scalar& threshold,
                         const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  return call<Sig>(OpId::softplus_backward, grad_output, self, beta, threshold);
}

}  // namespace opspec::ops
