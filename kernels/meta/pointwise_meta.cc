// pointwise_meta.cc: the Meta kernels of the elementwise ops with scalar
// parameters or rounding modes (kernels/cpu/pointwise.cc and the newer rows of
// kernels/cpu/binary.cc): each runs the CPU kernel's shape and dtype rule.
#include <optional>

#include "kernels/common/backward_meta.h"
#include "kernels/meta/elementwise_meta.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// as_wrapped: a Scalar operand as the wrapped-number tensor the CPU kernels take.
Tensor as_wrapped(const Scalar& s) { return make_wrapped_number(s); }

Tensor clamp_meta_kernel(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  const Tensor lo = min ? as_wrapped(*min) : Tensor(), hi = max ? as_wrapped(*max) : Tensor();
  return meta_out(clamp_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, "aten::clamp"));
}
Tensor clamp_tensor_meta(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  return meta_out(clamp_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, "aten::clamp"));
}
// clamp_min / clamp_max: the CPU's rules without its bound-range check (a
// value check, which PyTorch's meta functions leave to the kernels).
template <bool kLower>
Tensor clamp_bound_meta_kernel(const Tensor& self, const Scalar& bound) {
  return meta_out(clamp_bound_meta(self, bound, kLower, kLower ? "aten::clamp_min" : "aten::clamp_max"));
}
template <bool kLower>
Tensor clamp_bound_tensor_meta(const Tensor& self, const Tensor& bound) {
  return meta_out(binary_meta(self, bound, BinaryKind::kArithmetic, kLower ? "aten::clamp_min" : "aten::clamp_max"));
}
Tensor hardtanh_meta(const Tensor& self, const Scalar&, const Scalar&) {
  OPSPEC_CHECK(self.dtype() != DType::kBool, "aten::hardtanh: Bool inputs not supported for hardtanh");
  return meta_out(unary_meta(self, UnaryKind::kKeepDtype, "aten::hardtanh"));
}
Tensor leaky_relu_meta(const Tensor& self, const Scalar&) {
  return meta_out(floating_unary_meta(self, "aten::leaky_relu"));
}
Tensor elu_meta(const Tensor& self, const Scalar&, const Scalar&, const Scalar&) {
  return meta_out(floating_unary_meta(self, "aten::elu"));
}
Tensor softplus_meta(const Tensor& self, const Scalar&, const Scalar&) {
  return meta_out(floating_unary_meta(self, "aten::softplus"));
}
Tensor bool_test_meta(const Tensor& self) {
  return meta_out(unary_meta(self, UnaryKind::kLogical, "aten::isnan"));
}
Tensor nan_to_num_meta(const Tensor& self, std::optional<double>, std::optional<double>, std::optional<double>) {
  ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, "aten::nan_to_num");
  m.result_dtype = self.dtype();
  return meta_out(m);
}

Tensor backward_meta(const Tensor& grad, const Tensor& saved, std::string_view op) {
  const ElementwiseMeta m = binary_meta(grad, saved, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(is_floating(m.result_dtype), op, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  return meta_out(m);
}

Tensor pow_scalar_base_meta(const Scalar& self, const Tensor& exponent) {
  const ElementwiseMeta m = binary_meta(as_wrapped(self), exponent, BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  return meta_out(m);
}
Tensor div_mode_meta_kernel(const Tensor& a, const Tensor& b, std::optional<std::string_view> mode) {
  return meta_out(div_mode_meta(a, b, parse_rounding_mode(mode)));
}

// inplace_done: an in-place Meta kernel's end once its rules passed.
Tensor inplace_done(const Tensor& self) {
  self.impl()->bump_version();
  return self;
}
Tensor clamp__meta(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  const Tensor lo = min ? as_wrapped(*min) : Tensor(), hi = max ? as_wrapped(*max) : Tensor();
  clamp_inplace_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, "aten::clamp_");
  return inplace_done(self);
}
Tensor clamp__tensor_meta(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  clamp_inplace_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, "aten::clamp_");
  return inplace_done(self);
}
template <bool kLower>
Tensor clamp_bound__meta(const Tensor& self, const Scalar& bound) {
  clamp_bound_inplace_meta(self, bound, kLower, kLower ? "aten::clamp_min_" : "aten::clamp_max_");
  return inplace_done(self);
}
template <bool kLower>
Tensor clamp_bound_tensor__meta(const Tensor& self, const Tensor& bound) {
  inplace_meta(self, bound, BinaryKind::kArithmetic, kLower ? "aten::clamp_min_" : "aten::clamp_max_");
  return inplace_done(self);
}
Tensor pow__tensor_meta(const Tensor& self, const Tensor& exponent) {
  check_pow(inplace_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow_").compute_dtype);
  return inplace_done(self);
}
Tensor round__decimals_meta(const Tensor& self, int64_t decimals) {
  check_no_internal_overlap(self, "aten::round_");
  round_decimals_meta(self, decimals, "aten::round_");
  self.impl()->bump_version();
  return self;
}
Tensor logical_inplace_meta(const Tensor& self, const Tensor& other, std::string_view op) {
  inplace_meta(self, other, BinaryKind::kLogical, op);
  self.impl()->bump_version();
  return self;
}

}  // namespace

void register_pointwise_meta_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kMeta;
  lib.impl("clamp", kKey, &clamp_meta_kernel)
      .impl("clamp.Tensor", kKey, &clamp_tensor_meta)
      .impl("clamp_min", kKey, &clamp_bound_meta_kernel<true>)
      .impl("clamp_min.Tensor", kKey, &clamp_bound_tensor_meta<true>)
      .impl("clamp_max", kKey, &clamp_bound_meta_kernel<false>)
      .impl("clamp_max.Tensor", kKey, &clamp_bound_tensor_meta<false>)
      .impl("hardtanh", kKey, &hardtanh_meta)
      .impl("leaky_relu", kKey, &leaky_relu_meta)
      .impl("elu", kKey, &elu_meta)
      .impl("softplus", kKey, &softplus_meta)
      .impl("isnan", kKey, &bool_test_meta)
      .impl("isinf", kKey, &bool_test_meta)
      .impl("nan_to_num", kKey, &nan_to_num_meta)
      .impl("hardtanh_backward", kKey,
            [](const Tensor& g, const Tensor& x, const Scalar&, const Scalar&) {
              return backward_meta(g, x, "aten::hardtanh_backward");
            })
      .impl("leaky_relu_backward", kKey,
            [](const Tensor& g, const Tensor& x, const Scalar& slope, bool is_result) {
              check_negative_slope_in_place(is_result, slope.to_double(), "leakyReLu", "aten::leaky_relu_backward");
              return backward_meta(g, x, "aten::leaky_relu_backward");
            })
      .impl("elu_backward", kKey,
            [](const Tensor& g, const Scalar& alpha, const Scalar&, const Scalar&, bool is_result, const Tensor& x) {
              check_negative_slope_in_place(is_result, alpha.to_double(), "elu", "aten::elu_backward");
              return backward_meta(g, x, "aten::elu_backward");
            })
      .impl("softplus_backward", kKey,
            [](const Tensor& g, const Tensor& x, const Scalar&, const Scalar&) {
              return backward_meta(g, x, "aten::softplus_backward");
            })
      .impl("pow.Scalar", kKey, &pow_scalar_base_meta)
      .impl("round.decimals", kKey,
            [](const Tensor& self, int64_t decimals) {
              return meta_out(round_decimals_meta(self, decimals, "aten::round"));
            })
      .impl("round_.decimals", kKey, &round__decimals_meta)
      .impl("clamp_", kKey, &clamp__meta)
      .impl("clamp_.Tensor", kKey, &clamp__tensor_meta)
      .impl("clamp_min_", kKey, &clamp_bound__meta<true>)
      .impl("clamp_min_.Tensor", kKey, &clamp_bound_tensor__meta<true>)
      .impl("clamp_max_", kKey, &clamp_bound__meta<false>)
      .impl("clamp_max_.Tensor", kKey, &clamp_bound_tensor__meta<false>)
      .impl("hardtanh_", kKey,
            [](const Tensor& self, const Scalar&, const Scalar&) {
              activation_inplace_meta(self, "aten::hardtanh_");
              return inplace_done(self);
            })
      .impl("leaky_relu_", kKey,
            [](const Tensor& self, const Scalar&) {
              activation_inplace_meta(self, "aten::leaky_relu_");
              return inplace_done(self);
            })
      .impl("elu_", kKey,
            [](const Tensor& self, const Scalar&, const Scalar&, const Scalar&) {
              activation_inplace_meta(self, "aten::elu_");
              return inplace_done(self);
            })
      .impl("pow_.Scalar", kKey,
            [](const Tensor& self, const Scalar& exponent) {
              pow_scalar_inplace_meta(self, exponent, "aten::pow_");
              return inplace_done(self);
            })
      .impl("pow_.Tensor", kKey, &pow__tensor_meta)
      .impl("logical_and_", kKey,
            [](const Tensor& a, const Tensor& b) { return logical_inplace_meta(a, b, "aten::logical_and_"); })
      .impl("logical_or_", kKey,
            [](const Tensor& a, const Tensor& b) { return logical_inplace_meta(a, b, "aten::logical_or_"); })
      .impl("remainder.Tensor", kKey,
            [](const Tensor& a, const Tensor& b) { return meta_out(remainder_meta(a, b, "aten::remainder")); })
      .impl("remainder.Scalar", kKey,
            [](const Tensor& a, const Scalar& b) {
              return meta_out(remainder_meta(a, as_wrapped(b), "aten::remainder"));
            })
      .impl("fmod.Tensor", kKey,
            [](const Tensor& a, const Tensor& b) { return meta_out(remainder_meta(a, b, "aten::fmod")); })
      .impl("fmod.Scalar", kKey,
            [](const Tensor& a, const Scalar& b) { return meta_out(remainder_meta(a, as_wrapped(b), "aten::fmod")); })
      .impl("div.Tensor_mode", kKey, &div_mode_meta_kernel)
      .impl("div.Scalar_mode", kKey,
            [](const Tensor& a, const Scalar& b, std::optional<std::string_view> mode) {
              return div_mode_meta_kernel(a, as_wrapped(b), mode);
            })
      .impl("atan2", kKey,
            [](const Tensor& a, const Tensor& b) {
              return meta_out(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::atan2"));
            })
      .impl("logical_xor", kKey,
            [](const Tensor& a, const Tensor& b) {
              return meta_out(binary_meta(a, b, BinaryKind::kLogical, "aten::logical_xor"));
            });
#define OPSPEC_BITWISE_META(name)                                                                           \
  lib.impl(#name ".Tensor", kKey,                                                                         \
           [](const Tensor& a, const Tensor& b) { return meta_out(integral_binary_meta(a, b, "aten::" #name)); }) \
      .impl(#name ".Scalar", kKey, [](const Tensor& a, const Scalar& b) {                                   \
        return meta_out(integral_binary_meta(a, as_wrapped(b), "aten::" #name));                            \
      });
  OPSPEC_BITWISE_META(bitwise_and)
  OPSPEC_BITWISE_META(bitwise_or)
  OPSPEC_BITWISE_META(bitwise_xor)
#undef OPSPEC_BITWISE_META
}

}  // namespace opspec::internal
