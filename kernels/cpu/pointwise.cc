// pointwise.cc: CPU kernels of the elementwise ops with scalar parameters:
// clamp (Scalar and Tensor bounds), clamp_min, clamp_max, hardtanh,
// leaky_relu, elu, softplus, round.decimals, isnan, isinf, nan_to_num, the
// backward ops of the activations, and the in-place forms of clamp,
// clamp_min, clamp_max, hardtanh, leaky_relu, elu, round.decimals,
// logical_and and logical_or. Each runs one shared functor
// (kernels/common/elementwise_ops.h) whose parameters are in the compute
// type, as ATen's `Scalar.to<opmath_t>()`.
#include <limits>
#include <optional>

#include "kernels/common/backward_meta.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/scalar_as.h"
#include "kernels/cpu/binary_loops.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// bound_as<T>: a clamp bound as T's compute type; integer tensors only meet
// integral bounds (others promote the result; hardtanh_bounds truncates its own).
template <class T>
arith_t<T> bound_as(const Scalar& s) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    return s.is_floating_point() ? static_cast<T>(s.to_double()) : static_cast<T>(s.to_int());
  } else {
    return scalar_as<T>(s);
  }
}

// map_unary_into: out = make<T>()(self) elementwise, self cast to out's
// dtype first; make receives T and returns the functor over T's compute type.
// out may be self (an in-place op: each element is read before it is written).
template <bool kFloatingOnly, class Make>
void map_unary_into(const Tensor& out, const ElementwiseMeta& m, const Tensor& self, std::string_view op,
                    const Make& make) {
  if (out.numel() == 0) return;
  const Tensor in[] = {cast_for_compute(self, m.compute_dtype)};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(m.compute_dtype, op, [&] {
    if constexpr (std::is_same_v<scalar_t, bool> ||
                  (kFloatingOnly && !std::is_floating_point_v<opmath_t<scalar_t>>)) {
      OPSPEC_INTERNAL_ASSERT(false);
    } else {
      const auto f = make.template operator()<scalar_t>();
      unary_into<scalar_t>(iter, f);
    }
  });
}

// map_unary: map_unary_into a fresh output.
template <bool kFloatingOnly, class Make>
Tensor map_unary(const ElementwiseMeta& m, const Tensor& self, std::string_view op, const Make& make) {
  Tensor out = elementwise_output(m, op);
  map_unary_into<kFloatingOnly>(out, m, self, op, make);
  return out;
}

// map_unary_inplace: self = make<T>()(self) under an in-place rule's m (See
// Note [In-place pointwise ops]: m's compute dtype is self's).
template <bool kFloatingOnly, class Make>
Tensor map_unary_inplace(const ElementwiseMeta& m, const Tensor& self, std::string_view op, const Make& make) {
  require_cpu_device(self.device(), op);
  OPSPEC_INTERNAL_ASSERT(m.compute_dtype == self.dtype());
  map_unary_into<kFloatingOnly>(self, m, self, op, make);
  self.impl()->bump_version();
  return self;
}

// ---- clamp and hardtanh ----

// clamp_functor: make<T> for clamp with number bounds b (clamp_bounds' or
// hardtanh_bounds'; See Note [clamp with number bounds]).
auto clamp_functor(ClampBounds b) {
  return [b = std::move(b)]<class T>() {
    using C = arith_t<T>;
    return ClampOp<C>{b.lo ? bound_as<T>(*b.lo) : C(0), b.hi ? bound_as<T>(*b.hi) : C(0), b.lo.has_value(),
                      b.hi.has_value()};
  };
}

Tensor clamp_cpu(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  constexpr std::string_view kOp = "aten::clamp";
  const Tensor lo = min ? make_wrapped_number(*min) : Tensor();
  const Tensor hi = max ? make_wrapped_number(*max) : Tensor();
  const ElementwiseMeta m = clamp_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, kOp);
  return map_unary<false>(m, self, kOp, clamp_functor(clamp_bounds(min, max, m.compute_dtype, kOp)));
}
Tensor clamp__cpu(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max) {
  constexpr std::string_view kOp = "aten::clamp_";
  const Tensor lo = min ? make_wrapped_number(*min) : Tensor();
  const Tensor hi = max ? make_wrapped_number(*max) : Tensor();
  const ElementwiseMeta m = clamp_inplace_meta(self, min ? &lo : nullptr, max ? &hi : nullptr, kOp);
  return map_unary_inplace<false>(m, self, kOp, clamp_functor(clamp_bounds(min, max, m.compute_dtype, kOp)));
}

// clamp.Tensor: self broadcast and cast into the output, then maximum with
// min and minimum with max in place (the order ClampOp applies them).
Tensor clamp_tensor_cpu(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  constexpr std::string_view kOp = "aten::clamp";
  const ElementwiseMeta m = clamp_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, kOp);
  Tensor out = elementwise_output(m, kOp);
  copy_into(out, self);
  if (min) arith_into(out, out, *min, kOp, []<class T>() { return MaximumOp{}; });
  if (max) arith_into(out, out, *max, kOp, []<class T>() { return MinimumOp{}; });
  return out;
}

// clamp_.Tensor: the functional kernel's result, then copied into self (its
// bounds are read whole before self changes, overlapping or not).
Tensor clamp__tensor_cpu(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max) {
  constexpr std::string_view kOp = "aten::clamp_";
  clamp_inplace_meta(self, min ? &*min : nullptr, max ? &*max : nullptr, kOp);
  require_cpu_device(self.device(), kOp);
  if (self.numel() != 0) copy_into(self, clamp_tensor_cpu(self, min, max));
  self.impl()->bump_version();
  return self;
}

// ---- clamp_min and clamp_max (See Note [clamp_min and clamp_max]) ----

// clamp_bound_functor: make<T> for clamp_min (kLower) or clamp_max with a
// number bound in compute dtype d; a dropped bound is the type's own extreme.
template <bool kLower>
auto clamp_bound_functor(const Scalar& bound, DType d, std::string_view op) {
  return [b = clamp_bound_value(bound, d, kLower, op)]<class T>() {
    using C = arith_t<T>;
    if constexpr (kLower) {
      return ClampMinOp<C>{b ? bound_as<T>(*b) : std::numeric_limits<C>::lowest()};
    } else {
      return ClampMaxOp<C>{b ? bound_as<T>(*b) : std::numeric_limits<C>::max()};
    }
  };
}

template <bool kLower>
Tensor clamp_bound_cpu(const Tensor& self, const Scalar& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min" : "aten::clamp_max";
  const ElementwiseMeta m = clamp_bound_meta(self, bound, kLower, kOp);
  return map_unary<false>(m, self, kOp, clamp_bound_functor<kLower>(bound, m.compute_dtype, kOp));
}
template <bool kLower>
Tensor clamp_bound__cpu(const Tensor& self, const Scalar& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min_" : "aten::clamp_max_";
  const ElementwiseMeta m = clamp_bound_inplace_meta(self, bound, kLower, kOp);
  return map_unary_inplace<false>(m, self, kOp, clamp_bound_functor<kLower>(bound, m.compute_dtype, kOp));
}

// clamp_min.Tensor / clamp_max.Tensor: maximum / minimum under their own names.
template <bool kLower>
Tensor clamp_bound_tensor_cpu(const Tensor& self, const Tensor& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min" : "aten::clamp_max";
  Tensor out = elementwise_output(binary_meta(self, bound, BinaryKind::kArithmetic, kOp), kOp);
  if constexpr (kLower) {
    arith_into(out, self, bound, kOp, []<class T>() { return MaximumOp{}; });
  } else {
    arith_into(out, self, bound, kOp, []<class T>() { return MinimumOp{}; });
  }
  return out;
}
// clamp_min_.Tensor / clamp_max_.Tensor: the functional result copied into
// self (the bound is read whole before self changes, as clamp_.Tensor).
template <bool kLower>
Tensor clamp_bound_tensor__cpu(const Tensor& self, const Tensor& bound) {
  constexpr std::string_view kOp = kLower ? "aten::clamp_min_" : "aten::clamp_max_";
  inplace_meta(self, bound, BinaryKind::kArithmetic, kOp);
  require_cpu_device(self.device(), kOp);
  if (self.numel() != 0) copy_into(self, clamp_bound_tensor_cpu<kLower>(self, bound));
  self.impl()->bump_version();
  return self;
}

Tensor hardtanh_cpu(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  constexpr std::string_view kOp = "aten::hardtanh";
  OPSPEC_CHECK(self.dtype() != DType::kBool, kOp, ": Bool inputs not supported for hardtanh");
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kKeepDtype, kOp);
  return map_unary<false>(m, self, kOp, clamp_functor(hardtanh_bounds(min_val, max_val, m.compute_dtype, kOp)));
}
Tensor hardtanh__cpu(const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  constexpr std::string_view kOp = "aten::hardtanh_";
  const ElementwiseMeta m = activation_inplace_meta(self, kOp);
  return map_unary_inplace<false>(m, self, kOp, clamp_functor(hardtanh_bounds(min_val, max_val, m.compute_dtype, kOp)));
}

// ---- Floating activations ----

auto leaky_relu_functor(const Scalar& negative_slope) {
  return [&negative_slope]<class T>() {
    using C = opmath_t<T>;
    return LeakyReluOp<C>{negative_slope.to<C>()};
  };
}
Tensor leaky_relu_cpu(const Tensor& self, const Scalar& negative_slope) {
  constexpr std::string_view kOp = "aten::leaky_relu";
  return map_unary<true>(floating_unary_meta(self, kOp), self, kOp, leaky_relu_functor(negative_slope));
}
Tensor leaky_relu__cpu(const Tensor& self, const Scalar& negative_slope) {
  constexpr std::string_view kOp = "aten::leaky_relu_";
  return map_unary_inplace<true>(activation_inplace_meta(self, kOp), self, kOp, leaky_relu_functor(negative_slope));
}

auto elu_functor(const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  return [&alpha, &scale, &input_scale]<class T>() {
    using C = opmath_t<T>;
    return EluOp<C>{alpha.to<C>() * scale.to<C>(), scale.to<C>(), input_scale.to<C>()};
  };
}
Tensor elu_cpu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  constexpr std::string_view kOp = "aten::elu";
  return map_unary<true>(floating_unary_meta(self, kOp), self, kOp, elu_functor(alpha, scale, input_scale));
}
Tensor elu__cpu(const Tensor& self, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale) {
  constexpr std::string_view kOp = "aten::elu_";
  return map_unary_inplace<true>(activation_inplace_meta(self, kOp), self, kOp,
                                 elu_functor(alpha, scale, input_scale));
}

Tensor softplus_cpu(const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  constexpr std::string_view kOp = "aten::softplus";
  return map_unary<true>(floating_unary_meta(self, kOp), self, kOp, [&]<class T>() {
    using C = opmath_t<T>;
    return SoftplusOp<C>{beta.to<C>(), threshold.to<C>()};
  });
}

// ---- round.decimals ----

// round_decimals_op: RoundDecimalsOp over T's compute type (f32 for f16/bf16,
// as ATen 2.x's opmath; decimals = 0 gives round's nearbyint exactly).
template <class T>
RoundDecimalsOp<opmath_t<T>> round_decimals_op(int64_t decimals) {
  return {static_cast<opmath_t<T>>(round_decimals_scale(decimals)), decimals < 0};
}

Tensor round_decimals_cpu(const Tensor& self, int64_t decimals) {
  constexpr std::string_view kOp = "aten::round";
  return map_unary<true>(round_decimals_meta(self, decimals, kOp), self, kOp,
                         [&]<class T>() { return round_decimals_op<T>(decimals); });
}

// ---- NaN and infinity ----

template <class Op>
Tensor float_test_cpu(const Tensor& self, std::string_view op) {
  require_cpu_device(self.device(), op);
  Tensor out = make_elementwise_output(unary_meta(self, UnaryKind::kLogical, op), kCPU);  // b8, self's layout
  if (out.numel() == 0) return out;
  const Tensor in[] = {self};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    cpu_kernel<bool, scalar_t>(iter, [](opmath_t<scalar_t> x) { return Op{}(x); });
  });
  return out;
}
Tensor isnan_cpu(const Tensor& self) { return float_test_cpu<IsnanOp>(self, "aten::isnan"); }
Tensor isinf_cpu(const Tensor& self) { return float_test_cpu<IsinfOp>(self, "aten::isinf"); }

// nan_to_num: integers and b8 are copied unchanged (PyTorch's early return).
Tensor nan_to_num_cpu(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                      std::optional<double> neginf) {
  constexpr std::string_view kOp = "aten::nan_to_num";
  const ElementwiseMeta m = unary_meta(self, UnaryKind::kLogical, kOp);
  if (!is_floating(self.dtype())) {
    require_cpu_device(self.device(), kOp);
    ElementwiseMeta same = m;
    same.result_dtype = self.dtype();
    Tensor out = make_elementwise_output(same, kCPU);
    copy_into(out, self);
    return out;
  }
  ElementwiseMeta keep = m;
  keep.compute_dtype = keep.result_dtype = self.dtype();
  return map_unary<true>(keep, self, kOp, [&]<class T>() {
    using C = opmath_t<T>;
    // Each replacement is rounded to T, as static_cast<scalar_t> in ATen.
    const auto as_t = [](double v) { return static_cast<C>(static_cast<T>(v)); };
    const double limit = finite_max(self.dtype());
    return NanToNumOp<C>{as_t(nan.value_or(0.0)), as_t(posinf.value_or(limit)), as_t(neginf.value_or(-limit))};
  });
}

// ---- Backward ops: (grad, saved) in the promoted floating dtype ----

template <class Make>
Tensor activation_backward_cpu(const Tensor& grad, const Tensor& saved, std::string_view op, const Make& make) {
  const ElementwiseMeta m = binary_meta(grad, saved, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(is_floating(m.result_dtype), op, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  Tensor out = elementwise_output(m, op);
  if (out.numel() == 0) return out;
  const Tensor in[] = {cast_for_compute(grad, m.compute_dtype), cast_for_compute(saved, m.compute_dtype)};
  TensorIterator iter(out, in);
  OPSPEC_DISPATCH_FLOATING_DTYPES(m.compute_dtype, op, [&] {
    const auto f = make.template operator()<opmath_t<scalar_t>>();
    cpu_kernel<scalar_t, scalar_t, scalar_t>(iter, f);
  });
  return out;
}

Tensor hardtanh_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& min_val, const Scalar& max_val) {
  return activation_backward_cpu(grad, self, "aten::hardtanh_backward", [&]<class C>() {
    return HardtanhBackwardOp<C>{min_val.to<C>(), max_val.to<C>()};
  });
}
Tensor leaky_relu_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& negative_slope,
                               bool self_is_result) {
  check_negative_slope_in_place(self_is_result, negative_slope.to_double(), "leakyReLu", "aten::leaky_relu_backward");
  return activation_backward_cpu(grad, self, "aten::leaky_relu_backward", [&]<class C>() {
    return LeakyReluBackwardOp<C>{negative_slope.to<C>()};
  });
}
Tensor elu_backward_cpu(const Tensor& grad, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                        bool is_result, const Tensor& self_or_result) {
  check_negative_slope_in_place(is_result, alpha.to_double(), "elu", "aten::elu_backward");
  return activation_backward_cpu(grad, self_or_result, "aten::elu_backward", [&]<class C>() {
    return EluBackwardOp<C>{alpha.to<C>() * scale.to<C>(), scale.to<C>(), input_scale.to<C>(), is_result};
  });
}
Tensor softplus_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& beta, const Scalar& threshold) {
  return activation_backward_cpu(grad, self, "aten::softplus_backward", [&]<class C>() {
    return SoftplusBackwardOp<C>{beta.to<C>(), threshold.to<C>()};
  });
}

// ---- In-place ----

// round_.decimals: self = round(self, decimals=decimals), each element read before it is written.
Tensor round__decimals_cpu(const Tensor& self, int64_t decimals) {
  constexpr std::string_view kOp = "aten::round_";
  check_no_internal_overlap(self, kOp);
  round_decimals_meta(self, decimals, kOp);
  require_cpu_device(self.device(), kOp);
  if (self.numel() != 0) {
    const Tensor in[] = {self};
    TensorIterator iter(self, in);
    OPSPEC_DISPATCH_FLOATING_DTYPES(self.dtype(), kOp,
                                    [&] { unary_into<scalar_t>(iter, round_decimals_op<scalar_t>(decimals)); });
  }
  self.impl()->bump_version();
  return self;
}

// logical_and_ / logical_or_: the b8 result into a fresh mask, then copied
// into self's dtype (so an overlapping other is read before self changes).
template <class Op>
Tensor logical_inplace_cpu(const Tensor& self, const Tensor& other, std::string_view op) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kLogical, op);
  require_cpu_device(self.device(), op);
  if (self.numel() != 0) {
    const Tensor mask = make_tensor(self.sizes(), DType::kBool, kCPU);
    predicate_into<Op>(mask, self, other, m.compute_dtype, op);
    copy_into(self, mask);
  }
  self.impl()->bump_version();
  return self;
}
Tensor logical_and__cpu(const Tensor& self, const Tensor& other) {
  return logical_inplace_cpu<LogicalAndOp>(self, other, "aten::logical_and_");
}
Tensor logical_or__cpu(const Tensor& self, const Tensor& other) {
  return logical_inplace_cpu<LogicalOrOp>(self, other, "aten::logical_or_");
}

}  // namespace

void register_pointwise_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("clamp", kKey, &clamp_cpu)
      .impl("clamp.Tensor", kKey, &clamp_tensor_cpu)
      .impl("clamp_min", kKey, &clamp_bound_cpu<true>)
      .impl("clamp_min.Tensor", kKey, &clamp_bound_tensor_cpu<true>)
      .impl("clamp_max", kKey, &clamp_bound_cpu<false>)
      .impl("clamp_max.Tensor", kKey, &clamp_bound_tensor_cpu<false>)
      .impl("hardtanh", kKey, &hardtanh_cpu)
      .impl("leaky_relu", kKey, &leaky_relu_cpu)
      .impl("elu", kKey, &elu_cpu)
      .impl("clamp_", kKey, &clamp__cpu)
      .impl("clamp_.Tensor", kKey, &clamp__tensor_cpu)
      .impl("clamp_min_", kKey, &clamp_bound__cpu<true>)
      .impl("clamp_min_.Tensor", kKey, &clamp_bound_tensor__cpu<true>)
      .impl("clamp_max_", kKey, &clamp_bound__cpu<false>)
      .impl("clamp_max_.Tensor", kKey, &clamp_bound_tensor__cpu<false>)
      .impl("hardtanh_", kKey, &hardtanh__cpu)
      .impl("leaky_relu_", kKey, &leaky_relu__cpu)
      .impl("elu_", kKey, &elu__cpu)
      .impl("softplus", kKey, &softplus_cpu)
      .impl("isnan", kKey, &isnan_cpu)
      .impl("isinf", kKey, &isinf_cpu)
      .impl("nan_to_num", kKey, &nan_to_num_cpu)
      .impl("hardtanh_backward", kKey, &hardtanh_backward_cpu)
      .impl("leaky_relu_backward", kKey, &leaky_relu_backward_cpu)
      .impl("elu_backward", kKey, &elu_backward_cpu)
      .impl("softplus_backward", kKey, &softplus_backward_cpu)
      .impl("round.decimals", kKey, &round_decimals_cpu)
      .impl("round_.decimals", kKey, &round__decimals_cpu)
      .impl("logical_and_", kKey, &logical_and__cpu)
      .impl("logical_or_", kKey, &logical_or__cpu);
}

}  // namespace opspec::internal
