// binary.cc: CPU kernels of + - * / (add, sub, rsub, mul, div, rounding
// division) and the in-place add_/sub_/mul_/div_ (pow, remainder, fmod,
// atan2, bitwise ops, maximum and minimum are in binary_math.cc;
// comparisons, logical ops, where and masked_fill in compare.cc). Inputs are
// cast to the promoted dtype, then a shared functor (See Note [Shared
// elementwise functors]) runs over a TensorIterator (See Note [TensorIterator]).

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

// ---- Out-of-place arithmetic ----

Tensor add_sub_impl(const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub, std::string_view op) {
  if (sub) check_sub(a, b, op);
  const ElementwiseMeta m = binary_meta(a, b, BinaryKind::kArithmetic, op);
  check_alpha(m.result_dtype, alpha, op);
  Tensor out = elementwise_output(m, op);
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
  Tensor out = elementwise_output(binary_meta(a, b, BinaryKind::kArithmetic, "aten::mul"), "aten::mul");
  mul_into(out, a, b);
  return out;
}
Tensor mul_scalar_cpu(const Tensor& a, const Scalar& b) { return mul_cpu(a, make_wrapped_number(b)); }

Tensor div_cpu(const Tensor& a, const Tensor& b) {
  Tensor out = elementwise_output(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::div"), "aten::div");
  div_into(out, a, b);
  return out;
}
Tensor div_scalar_cpu(const Tensor& a, const Scalar& b) { return div_cpu(a, make_wrapped_number(b)); }

// ---- Rounding division ----

// div.Tensor_mode: true division without a mode (div.Tensor's kernel),
// otherwise rounded in the promoted dtype.
Tensor div_mode_cpu(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  const RoundingMode mode = parse_rounding_mode(rounding_mode);
  if (mode == RoundingMode::kNone) return div_cpu(a, b);
  constexpr std::string_view kOp = "aten::div";
  const ElementwiseMeta m = div_mode_meta(a, b, mode);
  check_nonzero_divisor(b, m.compute_dtype, kOp);
  Tensor out = elementwise_output(m, kOp);
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

// ---- In-place ----

Tensor add__cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::add_";
  const ElementwiseMeta m = add_sub_inplace_meta(self, other, alpha, /*sub=*/false, kOp);
  return inplace_apply(
      self, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) { add_sub_into(out, a, b, alpha, false, kOp); },
      other);
}

// add_.Scalar: C++'s `t.add_(s)` (rms_norm's eps).
Tensor add__scalar_cpu(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add__cpu(self, make_wrapped_number(other), alpha);
}

Tensor sub__cpu(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::sub_";
  const ElementwiseMeta m = add_sub_inplace_meta(self, other, alpha, /*sub=*/true, kOp);
  return inplace_apply(
      self, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) { add_sub_into(out, a, b, alpha, true, kOp); },
      other);
}

Tensor mul__cpu(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, m, "aten::mul_", &mul_into, other);
}

Tensor mul__scalar_cpu(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, m, "aten::mul_", &mul_into, b);
}

Tensor div__cpu(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, m, "aten::div_", &div_into, other);
}

Tensor div__scalar_cpu(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, m, "aten::div_", &div_into, b);
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
      .impl("div.Tensor_mode", kKey, &div_mode_cpu)
      .impl("div.Scalar_mode", kKey, &div_scalar_mode_cpu)
      .impl("add_.Tensor", kKey, &add__cpu)
      .impl("sub_.Tensor", kKey, &sub__cpu)
      .impl("mul_.Tensor", kKey, &mul__cpu)
      .impl("mul_.Scalar", kKey, &mul__scalar_cpu)
      .impl("div_.Tensor", kKey, &div__cpu)
      .impl("div_.Scalar", kKey, &div__scalar_cpu)
      .impl("add_.Scalar", kKey, &add__scalar_cpu);
}

}  // namespace opspec::internal
