// pointwise.cc: CUDA kernels of the elementwise ops with scalar parameters
// (clamp, clamp_min, clamp_max, hardtanh, leaky_relu, elu, softplus,
// round.decimals, nan_to_num, the activations' backward ops, the in-place
// forms) and isnan/isinf. Each mirrors kernels/cpu/pointwise.cc: the same meta
// rule, and parameters converted as there (See Note [Shared elementwise functors]).
#include <limits>
#include <optional>
#include <type_traits>

#include "kernels/common/backward_meta.h"
#include "kernels/common/scalar_as.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/elementwise_args.h"
#include "kernels/cuda/pointwise_launch.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal::cuda {
namespace {

Tensor new_output(const ElementwiseMeta& m, std::string_view op) {
  return make_elementwise_output(m, require_device(m.device, op));
}

// run: out = op(self) or op(grad, saved), inputs converted to `storage`.
void run(const Tensor& out, const Tensor& self, DType storage, PointwiseOp op, const PointwiseParams& p) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  launch_pointwise(op, code_of(storage), make_args(out, {self}, {storage}), p);
}
void run(const Tensor& out, const Tensor& grad, const Tensor& saved, DType storage, PointwiseOp op,
         const PointwiseParams& p) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  launch_pointwise(op, code_of(storage), make_args(out, {grad, saved}, {storage, storage}), p);
}

// set_bound: clamp bound k as the CPU's bound_as<T> converts it for storage dtype d.
void set_bound(PointwiseParams& p, int k, DType d, const Scalar& s) {
  OPSPEC_DISPATCH_ALL_DTYPES(d, "clamp", [&] {
    if constexpr (std::is_integral_v<scalar_t> && !std::is_same_v<scalar_t, bool>) {
      p.i[k] = s.is_floating_point() ? static_cast<int64_t>(static_cast<scalar_t>(s.to_double())) : s.to_int();
    } else {
      p.f[k] = static_cast<double>(scalar_as<scalar_t>(s));
    }
  });
}

// clamp_params: bounds b (clamp_bounds' or hardtanh_bounds'), converted as
// clamp's kernel reads them in dtype d; a dropped bound is skipped.
PointwiseParams clamp_params(DType d, const ClampBounds& b) {
  PointwiseParams p;
  p.has_lo = b.lo.has_value();
  p.has_hi = b.hi.has_value();
  if (b.lo) set_bound(p, 0, d, *b.lo);
  if (b.hi) set_bound(p, 1, d, *b.hi);
  return p;
}

Tensor clamp_cuda(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  constexpr std::string_view kOp = "aten::clamp";
  const Tensor lo = min ? make_wrapped_number(*min) : Tensor(), hi = max ? make_wrapped_number(*max) : Tensor();
  const ElementwiseMeta m = clamp_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, kOp);
  const PointwiseParams p = clamp_params(m.compute_dtype, clamp_bounds(min, max, m.compute_dtype, kOp));
  Tensor out = new_output(m, kOp);
  run(out, self, m.compute_dtype, PointwiseOp::kClamp, p);
  return out;
}

// clamp.Tensor: self into the output, then maximum with min and minimum with max.
Tensor clamp_tensor_cuda(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  constexpr std::string_view kOp = "aten::clamp";
  const ElementwiseMeta m = clamp_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, kOp);
  Tensor out = new_output(m, kOp);
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  const DType d = m.result_dtype;
  launch_binary(BinaryOp::kMaximum, code_of(d), make_args(out, {self, self}, {d, d}), {});  // a cast copy of self
  if (min) launch_binary(BinaryOp::kMaximum, code_of(d), make_args(out, {out, *min}, {d, d}), {});
  if (max) launch_binary(BinaryOp::kMinimum, code_of(d), make_args(out, {out, *max}, {d, d}), {});
  return out;
}

// clamp_min / clamp_max (See Note [clamp_min and clamp_max]): the CPU's rule,
// bound and functor; a dropped integral bound is the dtype's own extreme.
PointwiseParams clamp_bound_params(DType d, const Scalar& bound, bool lower, std::string_view op) {
  PointwiseParams p;
  const int k = lower ? 0 : 1;
  if (const std::optional<Scalar> b = clamp_bound_value(bound, d, lower, op)) {
    set_bound(p, k, d, *b);
  } else {  // only an i32 bound is ever dropped
    p.i[k] = lower ? std::numeric_limits<int32_t>::min() : std::numeric_limits<int32_t>::max();
  }
  return p;
}
template <bool kLower>
Tensor clamp_bound_cuda(const Tensor& self, const Scalar& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min" : "aten::clamp_max";
  const ElementwiseMeta m = clamp_bound_meta(self, bound, kLower, kOp);
  const PointwiseParams p = clamp_bound_params(m.compute_dtype, bound, kLower, kOp);
  Tensor out = new_output(m, kOp);
  run(out, self, m.compute_dtype, kLower ? PointwiseOp::kClampMin : PointwiseOp::kClampMax, p);
  return out;
}
// clamp_min.Tensor / clamp_max.Tensor: maximum / minimum under their own names.
template <bool kLower>
Tensor clamp_bound_tensor_cuda(const Tensor& self, const Tensor& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min" : "aten::clamp_max";
  Tensor out = new_output(binary_meta(self, bound, BinaryKind::kArithmetic, kOp), kOp);
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  const DType d = out.dtype();
  launch_binary(kLower ? BinaryOp::kMaximum : BinaryOp::kMinimum, code_of(d), make_args(out, {self, bound}, {d, d}),
                {});
  return out;
}

Tensor hardtanh_cuda(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  constexpr std::string_view kOp = "aten::hardtanh";
  OPSPEC_CHECK(self.dtype() != DType::kBool, kOp, ": Bool inputs not supported for hardtanh");
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kKeepDtype, kOp);
  const PointwiseParams p = clamp_params(m.compute_dtype, hardtanh_bounds(min_val, max_val, m.compute_dtype, kOp));
  Tensor out = new_output(m, kOp);
  run(out, self, m.compute_dtype, PointwiseOp::kClamp, p);
  return out;
}

Tensor activation_cuda(const Tensor& self, PointwiseOp op, const PointwiseParams& p, std::string_view name) {
  const ElementwiseMeta m = floating_unary_meta(self, name);
  Tensor out = new_output(m, name);
  run(out, self, m.compute_dtype, op, p);
  return out;
}
Tensor leaky_relu_cuda(const Tensor& self, const Scalar& slope) {
  return activation_cuda(self, PointwiseOp::kLeakyRelu, {.f = {slope.to_double()}}, "aten::leaky_relu");
}
Tensor elu_cuda(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return activation_cuda(self, PointwiseOp::kElu, {.f = {alpha.to_double(), scale.to_double(), input_scale.to_double()}},
                         "aten::elu");
}
Tensor softplus_cuda(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return activation_cuda(self, PointwiseOp::kSoftplus, {.f = {beta.to_double(), threshold.to_double()}},
                         "aten::softplus");
}

// round.decimals: the CPU's rule and RoundDecimalsOp, 10^|decimals| converted on the device as there.
Tensor round_decimals_cuda(const Tensor& self, int64_t decimals) {
  constexpr std::string_view kOp = "aten::round";
  const ElementwiseMeta m = round_decimals_meta(self, decimals, kOp);
  Tensor out = new_output(m, kOp);
  run(out, self, m.compute_dtype, PointwiseOp::kRoundDecimals,
      {.f = {round_decimals_scale(decimals)}, .flag = decimals < 0});
  return out;
}

Tensor float_test_cuda(const Tensor& self, bool isinf, std::string_view op) {
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, op);  // b8, self's layout
  Tensor out = make_elementwise_output(m, require_device(self.device(), op));
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  launch_float_test(isinf, code_of(self.dtype()), make_args(out, {self}, {self.dtype()}));
  return out;
}
Tensor isnan_cuda(const Tensor& self) { return float_test_cuda(self, false, "aten::isnan"); }
Tensor isinf_cuda(const Tensor& self) { return float_test_cuda(self, true, "aten::isinf"); }

Tensor nan_to_num_cuda(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                       std::optional<double> neginf) {
  constexpr std::string_view kOp = "aten::nan_to_num";
  const Device device = require_device(self.device(), kOp);
  ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, kOp);
  m.result_dtype = self.dtype();
  Tensor out = make_elementwise_output(m, device);
  if (!is_floating(self.dtype())) {
    copy_between(out, self);
    return out;
  }
  const double limit = finite_max(self.dtype());
  PointwiseParams p;
  OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp, [&] {
    const auto as_t = [](double v) { return static_cast<double>(static_cast<opmath_t<scalar_t>>(static_cast<scalar_t>(v))); };
    p.f[0] = as_t(nan.value_or(0.0));
    p.f[1] = as_t(posinf.value_or(limit));
    p.f[2] = as_t(neginf.value_or(-limit));
  });
  run(out, self, self.dtype(), PointwiseOp::kNanToNum, p);
  return out;
}

Tensor backward_cuda(const Tensor& grad, const Tensor& saved, PointwiseOp op, const PointwiseParams& p,
                     std::string_view name) {
  const ElementwiseMeta m = binary_meta(grad, saved, BinaryKind::kArithmetic, name);
  OPSPEC_CHECK(is_floating(m.result_dtype), name, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  Tensor out = new_output(m, name);
  run(out, grad, saved, m.compute_dtype, op, p);
  return out;
}
Tensor hardtanh_backward_cuda(const Tensor& grad, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return backward_cuda(grad, self, PointwiseOp::kHardtanhBackward, {.f = {min_val.to_double(), max_val.to_double()}},
                       "aten::hardtanh_backward");
}
Tensor leaky_relu_backward_cuda(const Tensor& grad, const Tensor& self, const Scalar& slope, bool self_is_result) {
  check_negative_slope_in_place(self_is_result, slope.to_double(), "leakyReLu", "aten::leaky_relu_backward");
  return backward_cuda(grad, self, PointwiseOp::kLeakyReluBackward, {.f = {slope.to_double()}},
                       "aten::leaky_relu_backward");
}
Tensor elu_backward_cuda(const Tensor& grad, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                         bool is_result, const Tensor& self_or_result) {
  check_negative_slope_in_place(is_result, alpha.to_double(), "elu", "aten::elu_backward");
  PointwiseParams p{.f = {alpha.to_double(), scale.to_double(), input_scale.to_double()}};
  p.flag = is_result;
  return backward_cuda(grad, self_or_result, PointwiseOp::kEluBackward, p, "aten::elu_backward");
}
Tensor softplus_backward_cuda(const Tensor& grad, const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return backward_cuda(grad, self, PointwiseOp::kSoftplusBackward, {.f = {beta.to_double(), threshold.to_double()}},
                       "aten::softplus_backward");
}

// ---- In-place ----

// The in-place forms (See Note [In-place pointwise ops]): the CPU's rules,
// then the functional op's launch over self in self's dtype, or (clamp_.Tensor)
// the functional result copied into self.
Tensor inplace_run(const Tensor& self, PointwiseOp op, const PointwiseParams& p, std::string_view name) {
  require_device(self.device(), name);
  run(self, self, self.dtype(), op, p);
  self.impl()->bump_version();
  return self;
}
Tensor clamp__cuda(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  constexpr std::string_view kOp = "aten::clamp_";
  const Tensor lo = min ? make_wrapped_number(*min) : Tensor(), hi = max ? make_wrapped_number(*max) : Tensor();
  const ElementwiseMeta m = clamp_inplace_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, kOp);
  const PointwiseParams p = clamp_params(m.compute_dtype, clamp_bounds(min, max, m.compute_dtype, kOp));
  return inplace_run(self, PointwiseOp::kClamp, p, kOp);
}
Tensor clamp__tensor_cuda(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  constexpr std::string_view kOp = "aten::clamp_";
  clamp_inplace_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, kOp);
  require_device(self.device(), kOp);
  if (self.numel() != 0) device_copy(self, clamp_tensor_cuda(self, min, max));
  self.impl()->bump_version();
  return self;
}
template <bool kLower>
Tensor clamp_bound__cuda(const Tensor& self, const Scalar& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min_" : "aten::clamp_max_";
  const ElementwiseMeta m = clamp_bound_inplace_meta(self, bound, kLower, kOp);
  const PointwiseParams p = clamp_bound_params(m.compute_dtype, bound, kLower, kOp);
  return inplace_run(self, kLower ? PointwiseOp::kClampMin : PointwiseOp::kClampMax, p, kOp);
}
template <bool kLower>
Tensor clamp_bound_tensor__cuda(const Tensor& self, const Tensor& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min_" : "aten::clamp_max_";
  inplace_meta(self, bound, BinaryKind::kArithmetic, kOp);
  require_device(self.device(), kOp);
  if (self.numel() != 0) device_copy(self, clamp_bound_tensor_cuda<kLower>(self, bound));
  self.impl()->bump_version();
  return self;
}
Tensor hardtanh__cuda(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  constexpr std::string_view kOp = "aten::hardtanh_";
  const ElementwiseMeta m = activation_inplace_meta(self, kOp);
  const PointwiseParams p = clamp_params(m.compute_dtype, hardtanh_bounds(min_val, max_val, m.compute_dtype, kOp));
  return inplace_run(self, PointwiseOp::kClamp, p, kOp);
}
Tensor leaky_relu__cuda(const Tensor& self, const Scalar& slope) {
  activation_inplace_meta(self, "aten::leaky_relu_");
  return inplace_run(self, PointwiseOp::kLeakyRelu, {.f = {slope.to_double()}}, "aten::leaky_relu_");
}
Tensor elu__cuda(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  activation_inplace_meta(self, "aten::elu_");
  return inplace_run(self, PointwiseOp::kElu, {.f = {alpha.to_double(), scale.to_double(), input_scale.to_double()}},
                     "aten::elu_");
}

Tensor round__decimals_cuda(const Tensor& self, int64_t decimals) {
  constexpr std::string_view kOp = "aten::round_";
  check_no_internal_overlap(self, kOp);
  round_decimals_meta(self, decimals, kOp);
  require_device(self.device(), kOp);
  run(self, self, self.dtype(), PointwiseOp::kRoundDecimals,
      {.f = {round_decimals_scale(decimals)}, .flag = decimals < 0});
  self.impl()->bump_version();
  return self;
}

// logical_and_ / logical_or_: the b8 result into a fresh mask, then converted into self.
Tensor logical_inplace_cuda(const Tensor& self, const Tensor& other, BinaryOp op, std::string_view name) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kLogical, name);
  const Device device = require_device(self.device(), name);
  if (self.numel() != 0) {
    const Tensor mask = empty_cuda(self.sizes(), DType::kBool, device);
    DeviceGuard guard(device);
    launch_compare(op, code_of(m.compute_dtype), make_args(mask, {self, other}, {m.compute_dtype, m.compute_dtype}));
    device_copy(self, mask);
  }
  self.impl()->bump_version();
  return self;
}
Tensor logical_and__cuda(const Tensor& self, const Tensor& other) {
  return logical_inplace_cuda(self, other, BinaryOp::kLogicalAnd, "aten::logical_and_");
}
Tensor logical_or__cuda(const Tensor& self, const Tensor& other) {
  return logical_inplace_cuda(self, other, BinaryOp::kLogicalOr, "aten::logical_or_");
}

}  // namespace

void register_pointwise_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("clamp", kKey, &clamp_cuda)
      .impl("clamp.Tensor", kKey, &clamp_tensor_cuda)
      .impl("clamp_min", kKey, &clamp_bound_cuda<true>)
      .impl("clamp_min.Tensor", kKey, &clamp_bound_tensor_cuda<true>)
      .impl("clamp_max", kKey, &clamp_bound_cuda<false>)
      .impl("clamp_max.Tensor", kKey, &clamp_bound_tensor_cuda<false>)
      .impl("hardtanh", kKey, &hardtanh_cuda)
      .impl("leaky_relu", kKey, &leaky_relu_cuda)
      .impl("elu", kKey, &elu_cuda)
      .impl("softplus", kKey, &softplus_cuda)
      .impl("isnan", kKey, &isnan_cuda)
      .impl("isinf", kKey, &isinf_cuda)
      .impl("nan_to_num", kKey, &nan_to_num_cuda)
      .impl("hardtanh_backward", kKey, &hardtanh_backward_cuda)
      .impl("leaky_relu_backward", kKey, &leaky_relu_backward_cuda)
      .impl("elu_backward", kKey, &elu_backward_cuda)
      .impl("softplus_backward", kKey, &softplus_backward_cuda)
      .impl("round.decimals", kKey, &round_decimals_cuda)
      .impl("round_.decimals", kKey, &round__decimals_cuda)
      .impl("clamp_", kKey, &clamp__cuda)
      .impl("clamp_.Tensor", kKey, &clamp__tensor_cuda)
      .impl("clamp_min_", kKey, &clamp_bound__cuda<true>)
      .impl("clamp_min_.Tensor", kKey, &clamp_bound_tensor__cuda<true>)
      .impl("clamp_max_", kKey, &clamp_bound__cuda<false>)
      .impl("clamp_max_.Tensor", kKey, &clamp_bound_tensor__cuda<false>)
      .impl("hardtanh_", kKey, &hardtanh__cuda)
      .impl("leaky_relu_", kKey, &leaky_relu__cuda)
      .impl("elu_", kKey, &elu__cuda)
      .impl("logical_and_", kKey, &logical_and__cuda)
      .impl("logical_or_", kKey, &logical_or__cuda);
}

}  // namespace opspec::internal::cuda
