// binary_math.cc: CPU kernels of the binary ops beyond + - * /: pow (and its
// fast paths for common exponents; pow_ in place too), remainder, fmod, atan2, the bitwise ops,
// maximum and minimum. Inputs are cast to the promoted dtype, then a shared
// functor (See Note [Shared elementwise functors]) runs over a TensorIterator.
// Apart from binary.cc so that a one-kernel rebuild stays short.
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/common/scalar_as.h"
#include "kernels/cpu/binary_loops.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

// ---- Power ----

Tensor pow_cpu(const Tensor& self, const Tensor& exponent) {
  const ElementwiseMeta m = binary_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = elementwise_output(m, "aten::pow");
  arith_into(out, self, exponent, "aten::pow", []<class T>() { return PowOp{}; });
  return out;
}

// pow_scalar_into: out = pow(self, exponent) in m's compute dtype (out may be
// self), with PyTorch's fast paths for common exponents (not for f16, which
// always calls pow with the exponent rounded to f16).
void pow_scalar_into(const Tensor& out, const Tensor& self, const Scalar& exponent, const ElementwiseMeta& m) {
  if (out.numel() == 0) return;
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
}

Tensor pow_scalar_cpu(const Tensor& self, const Scalar& exponent) {
  check_pow_scalar(self, exponent);
  const ElementwiseMeta m =
      binary_meta(self, make_wrapped_number(exponent), BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = elementwise_output(m, "aten::pow");
  pow_scalar_into(out, self, exponent, m);
  return out;
}

// ---- In-place power (See Note [In-place pointwise ops]) ----

Tensor pow__scalar_cpu(const Tensor& self, const Scalar& exponent) {
  constexpr std::string_view kOp = "aten::pow_";
  const ElementwiseMeta m = pow_scalar_inplace_meta(self, exponent, kOp);
  require_cpu_device(self.device(), kOp);
  pow_scalar_into(self, self, exponent, m);
  self.impl()->bump_version();
  return self;
}

// pow_.Tensor: computed in the promoted dtype and cast to self's; an exponent
// sharing memory with self is read whole first (See Note [Memory overlap]).
Tensor pow__tensor_cpu(const Tensor& self, const Tensor& exponent) {
  constexpr std::string_view kOp = "aten::pow_";
  const ElementwiseMeta m = inplace_meta(self, exponent, BinaryKind::kArithmetic, kOp);
  check_pow(m.compute_dtype);
  require_cpu_device(self.device(), kOp);
  if (self.numel() != 0) {
    const Tensor e = partial_overlap(self, exponent) ? make_tensor(exponent.sizes(), exponent.dtype(), kCPU) : exponent;
    if (!e.is_same(exponent)) copy_into(e, exponent);
    const auto pow = []<class T>() { return PowOp{}; };
    if (m.compute_dtype == self.dtype()) {
      arith_into(self, self, e, kOp, pow);
    } else {
      const Tensor tmp = make_tensor(self.sizes(), m.compute_dtype, kCPU);
      arith_into(tmp, self, e, kOp, pow);
      copy_into(self, tmp);
    }
  }
  self.impl()->bump_version();
  return self;
}

// pow.Scalar: a number base, as pow.Tensor_Tensor of a wrapped number
// (PyTorch fills ones for base 1, which pow gives too).
Tensor pow_scalar_base_cpu(const Scalar& self, const Tensor& exponent) {
  return pow_cpu(make_wrapped_number(self), exponent);
}

// ---- Remainder, fmod, atan2, bitwise, maximum, minimum ----

template <class Op>
Tensor remainder_like_cpu(const Tensor& a, const Tensor& b, std::string_view op) {
  const ElementwiseMeta m = remainder_meta(a, b, op);
  check_nonzero_divisor(b, m.compute_dtype, op);
  Tensor out = elementwise_output(m, op);
  arith_into(out, a, b, op, []<class T>() { return Op{}; });
  return out;
}
Tensor remainder_cpu(const Tensor& a, const Tensor& b) { return remainder_like_cpu<RemainderOp>(a, b, "aten::remainder"); }
Tensor remainder_scalar_cpu(const Tensor& a, const Scalar& b) { return remainder_cpu(a, make_wrapped_number(b)); }
Tensor fmod_cpu(const Tensor& a, const Tensor& b) { return remainder_like_cpu<FmodOp>(a, b, "aten::fmod"); }
Tensor fmod_scalar_cpu(const Tensor& a, const Scalar& b) { return fmod_cpu(a, make_wrapped_number(b)); }

Tensor atan2_cpu(const Tensor& a, const Tensor& b) {
  // Integers compute in the default float dtype, as true division does.
  Tensor out = elementwise_output(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::atan2"), "aten::atan2");
  arith_into</*kFloatingOnly=*/true>(out, a, b, "aten::atan2", []<class T>() { return Atan2Op{}; });
  return out;
}

template <class Op>
Tensor bitwise_cpu(const Tensor& a, const Tensor& b, std::string_view op) {
  Tensor out = elementwise_output(integral_binary_meta(a, b, op), op);
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
  Tensor out = elementwise_output(binary_meta(a, b, BinaryKind::kArithmetic, op), op);
  arith_into(out, a, b, op, []<class T>() { return Op{}; });
  return out;
}
Tensor maximum_cpu(const Tensor& a, const Tensor& b) { return min_max_cpu<MaximumOp>(a, b, "aten::maximum"); }
Tensor minimum_cpu(const Tensor& a, const Tensor& b) { return min_max_cpu<MinimumOp>(a, b, "aten::minimum"); }

}  // namespace

void register_binary_math_cpu_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCPU;
  lib.impl("pow.Tensor_Tensor", kKey, &pow_cpu)
      .impl("pow.Tensor_Scalar", kKey, &pow_scalar_cpu)
      .impl("pow.Scalar", kKey, &pow_scalar_base_cpu)
      .impl("pow_.Scalar", kKey, &pow__scalar_cpu)
      .impl("pow_.Tensor", kKey, &pow__tensor_cpu)
      .impl("maximum", kKey, &maximum_cpu)
      .impl("minimum", kKey, &minimum_cpu)
      .impl("remainder.Tensor", kKey, &remainder_cpu)
      .impl("remainder.Scalar", kKey, &remainder_scalar_cpu)
      .impl("fmod.Tensor", kKey, &fmod_cpu)
      .impl("fmod.Scalar", kKey, &fmod_scalar_cpu)
      .impl("atan2", kKey, &atan2_cpu)
      .impl("bitwise_and.Tensor", kKey, &bitwise_and_cpu)
      .impl("bitwise_or.Tensor", kKey, &bitwise_or_cpu)
      .impl("bitwise_xor.Tensor", kKey, &bitwise_xor_cpu)
      .impl("bitwise_and.Scalar", kKey, &bitwise_and_scalar_cpu)
      .impl("bitwise_or.Scalar", kKey, &bitwise_or_scalar_cpu)
      .impl("bitwise_xor.Scalar", kKey, &bitwise_xor_scalar_cpu);
}

}  // namespace opspec::internal
