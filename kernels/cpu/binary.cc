// binary.cc: CPU kernels of the elementwise binary ops (arithmetic, rounding
// division, remainder, fmod, atan2, bitwise, comparisons, logical), where,
// and the in-place add_/mul_/div_. Inputs are
// cast to the promoted dtype, then a shared functor (See Note [Shared
// elementwise functors]) runs over a TensorIterator (See Note [TensorIterator]).
#include <bit>
#include <type_traits>

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

// reduced_scalar_rhs: PyTorch's mul and div of an f16/bf16 tensor by a
// one-element second operand use that operand's original value in float
// (`original_scalar_value`) rather than rounding it to f16/bf16 first.
template <class Op>
bool reduced_scalar_rhs(const Tensor& out, const Tensor& a, const Tensor& b, Op op) {
  const DType dt = out.dtype();
  if ((dt != DType::kFloat16 && dt != DType::kBFloat16) || b.numel() != 1 || !b.device().is_cpu()) return false;
  const float bv = static_cast<float>(read_element_as_double(b, 0));
  const Tensor in[] = {cast_for_compute(a, dt)};
  TensorIterator iter(out, in);
  if (dt == DType::kFloat16) {
    unary_into<Half>(iter, [op, bv](float x) { return op(x, bv); });
  } else {
    unary_into<BFloat16>(iter, [op, bv](float x) { return op(x, bv); });
  }
  return true;
}

void add_sub_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub,
                  std::string_view op) {
  if (alpha.to_double() == 1.0) {
    if (sub) {
      arith_into(out, a, b, op, []<class T>() { return SubOp{}; });
    } else {
      arith_into(out, a, b, op, []<class T>() { return AddOp{}; });
    }
  } else if (sub) {
    arith_into(out, a, b, op, [&]<class T>() { return SubAlphaOp<arith_t<T>>{scalar_as<T>(alpha)}; });
  } else {
    arith_into(out, a, b, op, [&]<class T>() { return AddAlphaOp<arith_t<T>>{scalar_as<T>(alpha)}; });
  }
}

void mul_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0 || reduced_scalar_rhs(out, a, b, MulOp{})) return;
  arith_into(out, a, b, "aten::mul", []<class T>() { return MulOp{}; });
}

void div_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0 || reduced_scalar_rhs(out, a, b, DivOp{})) return;
  arith_into</*kFloatingOnly=*/true>(out, a, b, "aten::div", []<class T>() { return DivOp{}; });
}

Tensor new_output(const ElementwiseMeta& m, std::string_view op) {
  require_cpu_device(m.device, op);
  return make_tensor(m.sizes, m.result_dtype, kCPU);
}

// ---- Out-of-place arithmetic ----

Tensor add_sub_impl(const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub, std::string_view op) {
  if (sub) check_sub(a, b, op);
  const ElementwiseMeta m = binary_meta(a, b, BinaryKind::kArithmetic, op);
  check_alpha(m.result_dtype, alpha, op);
  Tensor out = new_output(m, op);
  add_sub_into(out, a, b, alpha, sub, op);
  return out;
}

Tensor add_cpu(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_sub_impl(a, b, alpha, false, "aten::add");
}
Tensor add_scalar_cpu(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_sub_impl(a, make_wrapped_number(b), alpha, false, "aten::add");
}
Tensor sub_cpu(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  return add_sub_impl(a, b, alpha, true, "aten::sub");
}
Tensor sub_scalar_cpu(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_sub_impl(a, make_wrapped_number(b), alpha, true, "aten::sub");
}
// rsub.Scalar: other - alpha * self.
Tensor rsub_scalar_cpu(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_sub_impl(make_wrapped_number(other), self, alpha, true, "aten::rsub");
}

Tensor mul_cpu(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kArithmetic, "aten::mul"), "aten::mul");
  mul_into(out, a, b);
  return out;
}
Tensor mul_scalar_cpu(const Tensor& a, const Scalar& b) { return mul_cpu(a, make_wrapped_number(b)); }

Tensor div_cpu(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::div"), "aten::div");
  div_into(out, a, b);
  return out;
}
Tensor div_scalar_cpu(const Tensor& a, const Scalar& b) { return div_cpu(a, make_wrapped_number(b)); }

Tensor pow_cpu(const Tensor& self, const Tensor& exponent) {
  const ElementwiseMeta m = binary_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = new_output(m, "aten::pow");
  arith_into(out, self, exponent, "aten::pow", []<class T>() { return PowOp{}; });
  return out;
}

// pow.Tensor_Scalar: PyTorch's fast paths for common exponents (not for f16,
// which always calls pow with the exponent rounded to f16).
Tensor pow_scalar_cpu(const Tensor& self, const Scalar& exponent) {
  check_pow_scalar(self, exponent);
  const ElementwiseMeta m =
      binary_meta(self, make_wrapped_number(exponent), BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = new_output(m, "aten::pow");
  if (out.numel() == 0) return out;
  const Tensor in[] = {cast_for_compute(self, m.compute_dtype)};
  TensorIterator iter(out, in);
  const double e = exponent.to_double();
  OPSPEC_DISPATCH_ALL_DTYPES(m.compute_dtype, "aten::pow", [&] {
    using C = arith_t<scalar_t>;
    if constexpr (std::is_same_v<scalar_t, bool>) {
      OPSPEC_INTERNAL_ASSERT(false);
    } else if constexpr (std::is_floating_point_v<C>) {
      const bool fast = !std::is_same_v<scalar_t, Half>;
      if (fast && e == 0.5) return unary_into<scalar_t>(iter, SqrtOp{});
      if (fast && e == -0.5) return unary_into<scalar_t>(iter, RsqrtOp{});
      if (fast && e == -1.0) return unary_into<scalar_t>(iter, ReciprocalOp{});
      if (fast && e == 2.0) return unary_into<scalar_t>(iter, SquareOp{});
      if (fast && e == 3.0) return unary_into<scalar_t>(iter, CubeOp{});
      if (fast && e == -2.0) return unary_into<scalar_t>(iter, InvSquareOp{});
      const C ev = std::is_same_v<scalar_t, Half> ? scalar_as<scalar_t>(exponent) : exponent.to<C>();
      return unary_into<scalar_t>(iter, [ev](C x) { return PowOp{}(x, ev); });
    } else {
      if (e == 2.0) return unary_into<scalar_t>(iter, SquareOp{});
      if (e == 3.0) return unary_into<scalar_t>(iter, CubeOp{});
      const C ev = scalar_as<scalar_t>(exponent);
      return unary_into<scalar_t>(iter, [ev](C x) { return PowOp{}(x, ev); });
    }
  });
  return out;
}

// pow.Scalar: a number base, as pow.Tensor_Tensor of a wrapped number
// (PyTorch fills ones for base 1, which pow gives too).
Tensor pow_scalar_base_cpu(const Scalar& self, const Tensor& exponent) {
  return pow_cpu(make_wrapped_number(self), exponent);
}

// ---- Rounding division, remainder, fmod, atan2, bitwise ----

template <class Op>
Tensor remainder_like_cpu(const Tensor& a, const Tensor& b, std::string_view op) {
  const ElementwiseMeta m = remainder_meta(a, b, op);
  check_nonzero_divisor(b, m.compute_dtype, op);
  Tensor out = new_output(m, op);
  arith_into(out, a, b, op, []<class T>() { return Op{}; });
  return out;
}
Tensor remainder_cpu(const Tensor& a, const Tensor& b) { return remainder_like_cpu<RemainderOp>(a, b, "aten::remainder"); }
Tensor remainder_scalar_cpu(const Tensor& a, const Scalar& b) { return remainder_cpu(a, make_wrapped_number(b)); }
Tensor fmod_cpu(const Tensor& a, const Tensor& b) { return remainder_like_cpu<FmodOp>(a, b, "aten::fmod"); }
Tensor fmod_scalar_cpu(const Tensor& a, const Scalar& b) { return fmod_cpu(a, make_wrapped_number(b)); }

// div.Tensor_mode: true division without a mode (div.Tensor's kernel),
// otherwise rounded in the promoted dtype.
Tensor div_mode_cpu(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  const RoundingMode mode = parse_rounding_mode(rounding_mode);
  if (mode == RoundingMode::kNone) return div_cpu(a, b);
  constexpr std::string_view kOp = "aten::div";
  const ElementwiseMeta m = div_mode_meta(a, b, mode);
  check_nonzero_divisor(b, m.compute_dtype, kOp);
  Tensor out = new_output(m, kOp);
  if (mode == RoundingMode::kTrunc) {
    arith_into(out, a, b, kOp, []<class T>() { return DivTruncOp{}; });
  } else {
    arith_into(out, a, b, kOp, []<class T>() { return DivFloorOp{}; });
  }
  return out;
}
Tensor div_scalar_mode_cpu(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  return div_mode_cpu(a, make_wrapped_number(b), rounding_mode);
}

Tensor atan2_cpu(const Tensor& a, const Tensor& b) {
  // Integers compute in the default float dtype, as true division does.
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::atan2"), "aten::atan2");
  arith_into</*kFloatingOnly=*/true>(out, a, b, "aten::atan2", []<class T>() { return Atan2Op{}; });
  return out;
}

template <class Op>
Tensor bitwise_cpu(const Tensor& a, const Tensor& b, std::string_view op) {
  Tensor out = new_output(integral_binary_meta(a, b, op), op);
  arith_into(out, a, b, op, []<class T>() { return Op{}; });
  return out;
}
#define OPSPEC_BITWISE_CPU(name, Op)                                                                  \
  Tensor name##_cpu(const Tensor& a, const Tensor& b) { return bitwise_cpu<Op>(a, b, "aten::" #name); } \
  Tensor name##_scalar_cpu(const Tensor& a, const Scalar& b) { return name##_cpu(a, make_wrapped_number(b)); }
OPSPEC_BITWISE_CPU(bitwise_and, BitwiseAndOp)
OPSPEC_BITWISE_CPU(bitwise_or, BitwiseOrOp)
OPSPEC_BITWISE_CPU(bitwise_xor, BitwiseXorOp)
#undef OPSPEC_BITWISE_CPU

template <class Op>
Tensor min_max_cpu(const Tensor& a, const Tensor& b, std::string_view op) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kArithmetic, op), op);
  arith_into(out, a, b, op, []<class T>() { return Op{}; });
  return out;
}
Tensor maximum_cpu(const Tensor& a, const Tensor& b) { return min_max_cpu<MaximumOp>(a, b, "aten::maximum"); }
Tensor minimum_cpu(const Tensor& a, const Tensor& b) { return min_max_cpu<MinimumOp>(a, b, "aten::minimum"); }

// ---- Autograd's backward ops: (grad, saved) in the promoted dtype ----

Tensor threshold_backward_cpu(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  constexpr std::string_view op = "aten::threshold_backward";
  Tensor out = new_output(binary_meta(grad, self, BinaryKind::kArithmetic, op), op);
  const double th = threshold.to_double();
  arith_into(out, grad, self, op, [th]<class T>() { return ThresholdBackwardOp{th}; });
  return out;
}
template <class Op>
Tensor saved_output_backward_cpu(const Tensor& grad, const Tensor& output, std::string_view op) {
  const ElementwiseMeta m = binary_meta(grad, output, BinaryKind::kArithmetic, op);
  OPSPEC_CHECK(is_floating(m.result_dtype), op, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  Tensor out = new_output(m, op);
  arith_into</*kFloatingOnly=*/true>(out, grad, output, op, []<class T>() { return Op{}; });
  return out;
}
Tensor tanh_backward_cpu(const Tensor& grad, const Tensor& output) {
  return saved_output_backward_cpu<TanhBackwardOp>(grad, output, "aten::tanh_backward");
}
Tensor sigmoid_backward_cpu(const Tensor& grad, const Tensor& output) {
  return saved_output_backward_cpu<SigmoidBackwardOp>(grad, output, "aten::sigmoid_backward");
}
Tensor gelu_backward_cpu(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  if (gelu_uses_tanh(approximate)) {
    return saved_output_backward_cpu<GeluBackwardTanhOp>(grad, self, "aten::gelu_backward");
  }
  return saved_output_backward_cpu<GeluBackwardErfOp>(grad, self, "aten::gelu_backward");
}
Tensor silu_backward_cpu(const Tensor& grad, const Tensor& self) {
  return saved_output_backward_cpu<SiluBackwardOp>(grad, self, "aten::silu_backward");
}

// ---- Comparisons and logical ops: compute in the promoted dtype, b8 out ----

template <class Op>
Tensor predicate_cpu(const Tensor& a, const Tensor& b, BinaryKind kind, std::string_view op) {
  const ElementwiseMeta m = binary_meta(a, b, kind, op);
  Tensor out = new_output(m, op);
  predicate_into<Op>(out, a, b, m.compute_dtype, op);
  return out;
}

#define OPSPEC_COMPARE_CPU(name, Op)                                                         \
  Tensor name##_cpu(const Tensor& a, const Tensor& b) {                                      \
    return predicate_cpu<Op>(a, b, BinaryKind::kComparison, "aten::" #name);                 \
  }                                                                                          \
  Tensor name##_scalar_cpu(const Tensor& a, const Scalar& b) {                               \
    return predicate_cpu<Op>(a, make_wrapped_number(b), BinaryKind::kComparison, "aten::" #name); \
  }
OPSPEC_COMPARE_CPU(eq, EqOp)
OPSPEC_COMPARE_CPU(ne, NeOp)
OPSPEC_COMPARE_CPU(lt, LtOp)
OPSPEC_COMPARE_CPU(le, LeOp)
OPSPEC_COMPARE_CPU(gt, GtOp)
OPSPEC_COMPARE_CPU(ge, GeOp)
#undef OPSPEC_COMPARE_CPU

Tensor logical_and_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalAndOp>(a, b, BinaryKind::kLogical, "aten::logical_and");
}
Tensor logical_or_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalOrOp>(a, b, BinaryKind::kLogical, "aten::logical_or");
}
Tensor logical_xor_cpu(const Tensor& a, const Tensor& b) {
  return predicate_cpu<LogicalXorOp>(a, b, BinaryKind::kLogical, "aten::logical_xor");
}

// where: selects element bits, so one loop per element size serves every dtype.
template <class U>
void where_bits(const TensorIterator& iter) {
  cpu_kernel<U, bool, U, U>(iter, [](bool c, U x, U y) { return WhereOp{}(c, x, y); });
}

Tensor where_cpu(const Tensor& condition, const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = where_meta(condition, self, other);
  Tensor out = new_output(m, "aten::where");
  if (out.numel() == 0) return out;
  const Tensor in[] = {condition, cast_for_compute(self, m.compute_dtype), cast_for_compute(other, m.compute_dtype)};
  TensorIterator iter(out, in);
  switch (out.element_size()) {
    case 1: where_bits<uint8_t>(iter); break;
    case 2: where_bits<uint16_t>(iter); break;
    case 4: where_bits<uint32_t>(iter); break;
    case 8: where_bits<uint64_t>(iter); break;
    default: OPSPEC_INTERNAL_ASSERT(false);
  }
  return out;
}

// ---- In-place ----

// inplace_apply: self = kernel(self, other) computed in m.compute_dtype and
// cast to self's dtype; an `other` that partially overlaps self is copied
// first so no element is read after it was written.
template <class Kernel>
Tensor inplace_apply(const Tensor& self, const Tensor& other, const ElementwiseMeta& m, std::string_view op,
                     const Kernel& kernel) {
  require_cpu_device(self.device(), op);
  if (self.numel() != 0) {
    Tensor b = other;
    if (partial_overlap(self, other)) {
      b = make_tensor(other.sizes(), other.dtype(), kCPU);
      copy_into(b, other);
    }
    if (m.compute_dtype == self.dtype()) {
      kernel(self, self, b);
    } else {
      Tensor tmp = make_tensor(self.sizes(), m.compute_dtype, kCPU);
      kernel(tmp, self, b);
      copy_into(self, tmp);
    }
  }
  self.impl()->bump_version();
  return self;
}

Tensor add__cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::add_";
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, kOp);
  check_alpha(m.compute_dtype, alpha, kOp);
  return inplace_apply(self, other, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) {
    add_sub_into(out, a, b, alpha, false, kOp);
  });
}

Tensor sub__cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::sub_";
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, kOp);
  check_alpha(m.compute_dtype, alpha, kOp);
  return inplace_apply(self, other, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) {
    add_sub_into(out, a, b, alpha, true, kOp);
  });
}

Tensor mul__cpu(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, other, m, "aten::mul_", &mul_into);
}

Tensor mul__scalar_cpu(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, b, m, "aten::mul_", &mul_into);
}

Tensor div__cpu(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, other, m, "aten::div_", &div_into);
}

Tensor div__scalar_cpu(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, b, m, "aten::div_", &div_into);
}

// masked_fill_: self = mask ? value : self, selecting element bits (value
// converted once, with PyTorch's overflow check, to self's dtype).
template <class U>
void masked_fill_bits(const TensorIterator& iter, U v) {
  cpu_kernel<U, U, bool>(iter, [v](U x, bool m) { return m ? v : x; });
}

Tensor masked_fill__cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  require_cpu_device(self.device(), kOp);
  check_masked_fill(self, mask);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    const scalar_t v = checked_scalar_cast<scalar_t>(value, kOp);
    if (self.numel() == 0) return;
    // A mask that partially overlaps self is copied first (See inplace_apply).
    Tensor m = mask;
    if (partial_overlap(self, mask)) {
      m = make_tensor(mask.sizes(), mask.dtype(), kCPU);
      copy_into(m, mask);
    }
    const Tensor in[] = {self, m};
    TensorIterator iter(self, in);
    using U = std::conditional_t<sizeof(scalar_t) == 1, uint8_t,
                                 std::conditional_t<sizeof(scalar_t) == 2, uint16_t,
                                                    std::conditional_t<sizeof(scalar_t) == 4, uint32_t, uint64_t>>>;
    masked_fill_bits<U>(iter, std::bit_cast<U>(v));
  });
  self.impl()->bump_version();
  return self;
}

// masked_fill: self broadcast with mask, copied, then filled (PyTorch's
// CompositeExplicit kernel: clone then masked_fill_, with no dispatch).
Tensor masked_fill_cpu(const Tensor& self, const Tensor& mask, const Scalar& value) {
  require_cpu_device(self.device(), "aten::masked_fill");
  Tensor out = make_tensor(masked_fill_sizes(self, mask), self.dtype(), kCPU);
  copy_into(out, self);
  return masked_fill__cpu(out, mask, value);
}

}  // namespace

void register_binary_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("add.Tensor", kKey, &add_cpu)
      .impl("add.Scalar", kKey, &add_scalar_cpu)
      .impl("sub.Tensor", kKey, &sub_cpu)
      .impl("sub.Scalar", kKey, &sub_scalar_cpu)
      .impl("rsub.Scalar", kKey, &rsub_scalar_cpu)
      .impl("mul.Tensor", kKey, &mul_cpu)
      .impl("mul.Scalar", kKey, &mul_scalar_cpu)
      .impl("div.Tensor", kKey, &div_cpu)
      .impl("div.Scalar", kKey, &div_scalar_cpu)
      .impl("pow.Tensor_Tensor", kKey, &pow_cpu)
      .impl("pow.Tensor_Scalar", kKey, &pow_scalar_cpu)
      .impl("maximum", kKey, &maximum_cpu)
      .impl("minimum", kKey, &minimum_cpu)
      .impl("pow.Scalar", kKey, &pow_scalar_base_cpu)
      .impl("remainder.Tensor", kKey, &remainder_cpu)
      .impl("remainder.Scalar", kKey, &remainder_scalar_cpu)
      .impl("fmod.Tensor", kKey, &fmod_cpu)
      .impl("fmod.Scalar", kKey, &fmod_scalar_cpu)
      .impl("div.Tensor_mode", kKey, &div_mode_cpu)
      .impl("div.Scalar_mode", kKey, &div_scalar_mode_cpu)
      .impl("atan2", kKey, &atan2_cpu)
      .impl("bitwise_and.Tensor", kKey, &bitwise_and_cpu)
      .impl("bitwise_or.Tensor", kKey, &bitwise_or_cpu)
      .impl("bitwise_xor.Tensor", kKey, &bitwise_xor_cpu)
      .impl("bitwise_and.Scalar", kKey, &bitwise_and_scalar_cpu)
      .impl("bitwise_or.Scalar", kKey, &bitwise_or_scalar_cpu)
      .impl("bitwise_xor.Scalar", kKey, &bitwise_xor_scalar_cpu)
      .impl("logical_xor", kKey, &logical_xor_cpu)
      .impl("threshold_backward", kKey, &threshold_backward_cpu)
      .impl("tanh_backward", kKey, &tanh_backward_cpu)
      .impl("sigmoid_backward", kKey, &sigmoid_backward_cpu)
      .impl("gelu_backward", kKey, &gelu_backward_cpu)
      .impl("silu_backward", kKey, &silu_backward_cpu)
      .impl("eq.Tensor", kKey, &eq_cpu)
      .impl("ne.Tensor", kKey, &ne_cpu)
      .impl("lt.Tensor", kKey, &lt_cpu)
      .impl("le.Tensor", kKey, &le_cpu)
      .impl("gt.Tensor", kKey, &gt_cpu)
      .impl("ge.Tensor", kKey, &ge_cpu)
      .impl("eq.Scalar", kKey, &eq_scalar_cpu)
      .impl("ne.Scalar", kKey, &ne_scalar_cpu)
      .impl("lt.Scalar", kKey, &lt_scalar_cpu)
      .impl("le.Scalar", kKey, &le_scalar_cpu)
      .impl("gt.Scalar", kKey, &gt_scalar_cpu)
      .impl("ge.Scalar", kKey, &ge_scalar_cpu)
      .impl("logical_and", kKey, &logical_and_cpu)
      .impl("logical_or", kKey, &logical_or_cpu)
      .impl("where.self", kKey, &where_cpu)
      .impl("add_.Tensor", kKey, &add__cpu)
      .impl("sub_.Tensor", kKey, &sub__cpu)
      .impl("mul_.Tensor", kKey, &mul__cpu)
      .impl("mul_.Scalar", kKey, &mul__scalar_cpu)
      .impl("div_.Tensor", kKey, &div__cpu)
      .impl("div_.Scalar", kKey, &div__scalar_cpu)
      .impl("masked_fill_.Scalar", kKey, &masked_fill__cpu)
      .impl("masked_fill.Scalar", kKey, &masked_fill_cpu);
}

}  // namespace opspec::internal
