// elementwise.cc: CUDA kernels of the elementwise unary and binary ops,
// comparisons, where and the in-place add_/mul_/div_. Each mirrors its CPU
// kernel (kernels/cpu/unary.cc, binary.cc): the same meta function decides
// shape, dtype and device, and the same functor does the math on the device
// (See Note [Shared elementwise functors]).
#include <type_traits>
#include <vector>

#include "kernels/common/backward_meta.h"
#include "kernels/common/scalar_as.h"
#include "kernels/common/views.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/elementwise_args.h"
#include "kernels/cuda/inplace_apply.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal::cuda {
namespace {

// param_for: a Scalar in the arithmetic type of storage dtype (PyTorch's
// scalar.to<scalar_t>(), rounded to the dtype first).
Param param_for(DType storage, const Scalar& s) {
  Param p;
  OPSPEC_DISPATCH_ALL_DTYPES(storage, "param", [&] {
    const auto v = scalar_as<scalar_t>(s);
    using V = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<V, double>) p.f = v;
    else if constexpr (std::is_same_v<V, float>) p.f32 = v;
    else p.i = static_cast<int64_t>(v);
  });
  return p;
}

// new_output: the op's output on the operands' device.
Tensor new_output(const ElementwiseMeta& m, std::string_view op) {
  return make_elementwise_output(m, require_device(m.device, op));
}

// ---- Unary ----

Tensor unary_impl(const Tensor& self, UnaryKind kind, UnaryOp op, std::string_view name) {
  const ElementwiseMeta m = unary_meta(self, kind, name);
  Tensor out = new_output(m, name);
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  // logical_not reads self as stored; the others convert self to the compute dtype.
  const DType storage = kind == UnaryKind::kLogical ? self.dtype() : m.compute_dtype;
  launch_unary(op, code_of(storage), make_args(out, {self}, {storage}), {});
  return out;
}

#define OPSPEC_UNARY_CUDA(name, kind, op)                                                    \
  Tensor name##_cuda(const Tensor& self) { return unary_impl(self, kind, op, "aten::" #name); }
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  OPSPEC_UNARY_CUDA(name, UnaryKind::dtype_rule, UnaryOp::k##functor)
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
OPSPEC_UNARY_CUDA(logical_not, UnaryKind::kLogical, UnaryOp::kLogicalNot)
#undef OPSPEC_UNARY_CUDA

// unary_inplace_impl: a row's in-place op (See Note [In-place unary ops]),
// computed in self's dtype over self.
Tensor unary_inplace_impl(const Tensor& self, UnaryKind kind, UnaryOp op, std::string_view name) {
  unary_inplace_meta(self, kind, name);
  require_device(self.device(), name);
  if (self.numel() != 0) {
    DeviceGuard guard(self.device());
    launch_unary(op, code_of(self.dtype()), make_args(self, {self}, {self.dtype()}), {});
  }
  self.impl()->bump_version();
  return self;
}
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                                                    \
  Tensor name##__cuda(const Tensor& self) {                                                                      \
    return unary_inplace_impl(self, UnaryKind::dtype_rule, UnaryOp::k##functor, "aten::" #name "_");            \
  }
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP

Tensor gelu_cuda(const Tensor& self, std::string_view approximate) {
  return unary_impl(self, UnaryKind::kFloatingOnly, gelu_uses_tanh(approximate) ? UnaryOp::kGeluTanh : UnaryOp::kGeluErf,
                    "aten::gelu");
}

// ---- Binary arithmetic ----

// arith_into: out = op(a, b) in out's dtype (kernels/cpu/binary.cc's arith_into).
void arith_into(const Tensor& out, const Tensor& a, const Tensor& b, BinaryOp op, Param p = {}) {
  if (out.numel() == 0) return;
  DeviceGuard guard(out.device());
  launch_binary(op, code_of(out.dtype()), make_args(out, {a, b}, {out.dtype(), out.dtype()}), p);
}

// reduced_scalar_rhs: f16/bf16 mul and div by a one-element cpu operand keep
// its original value in float, as PyTorch does (and the CPU kernels).
bool reduced_scalar_rhs(const Tensor& out, const Tensor& a, const Tensor& b, BinaryOp op) {
  const DType dt = out.dtype();
  if ((dt != DType::kFloat16 && dt != DType::kBFloat16) || b.numel() != 1 || !b.device().is_cpu()) return false;
  DeviceGuard guard(out.device());
  const float bv = static_cast<float>(read_element_as_double(b, 0));
  launch_binary_scalar_rhs(op, code_of(dt), make_args(out, {a}, {dt}), bv);
  return true;
}

void add_sub_into(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub) {
  if (alpha.to_double() == 1.0) return arith_into(out, a, b, sub ? BinaryOp::kSub : BinaryOp::kAdd);
  arith_into(out, a, b, sub ? BinaryOp::kSubAlpha : BinaryOp::kAddAlpha, param_for(out.dtype(), alpha));
}

void mul_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0 || reduced_scalar_rhs(out, a, b, BinaryOp::kMul)) return;
  arith_into(out, a, b, BinaryOp::kMul);
}

void div_into(const Tensor& out, const Tensor& a, const Tensor& b) {
  if (out.numel() == 0 || reduced_scalar_rhs(out, a, b, BinaryOp::kDiv)) return;
  arith_into(out, a, b, BinaryOp::kDiv);
}

Tensor add_sub_impl(const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub, std::string_view op) {
  if (sub) check_sub(a, b, op);
  const ElementwiseMeta m = binary_meta(a, b, BinaryKind::kArithmetic, op);
  check_alpha(m.result_dtype, alpha, op);
  Tensor out = new_output(m, op);
  add_sub_into(out, a, b, alpha, sub);
  return out;
}

Tensor add_cuda(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_sub_impl(a, b, alpha, false, "aten::add"); }
Tensor add_scalar_cuda(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_sub_impl(a, make_wrapped_number(b), alpha, false, "aten::add");
}
Tensor sub_cuda(const Tensor& a, const Tensor& b, const Scalar& alpha) { return add_sub_impl(a, b, alpha, true, "aten::sub"); }
Tensor sub_scalar_cuda(const Tensor& a, const Scalar& b, const Scalar& alpha) {
  return add_sub_impl(a, make_wrapped_number(b), alpha, true, "aten::sub");
}
Tensor rsub_scalar_cuda(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add_sub_impl(make_wrapped_number(other), self, alpha, true, "aten::rsub");
}

Tensor mul_cuda(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kArithmetic, "aten::mul"), "aten::mul");
  mul_into(out, a, b);
  return out;
}
Tensor mul_scalar_cuda(const Tensor& a, const Scalar& b) { return mul_cuda(a, make_wrapped_number(b)); }

Tensor div_cuda(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::div"), "aten::div");
  div_into(out, a, b);
  return out;
}
Tensor div_scalar_cuda(const Tensor& a, const Scalar& b) { return div_cuda(a, make_wrapped_number(b)); }

Tensor pow_cuda(const Tensor& self, const Tensor& exponent) {
  const ElementwiseMeta m = binary_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = new_output(m, "aten::pow");
  arith_into(out, self, exponent, BinaryOp::kPow);
  return out;
}

// pow.Tensor_Scalar: the CPU kernel's fast paths (none for f16) and parameter rounding.
Tensor pow_scalar_cuda(const Tensor& self, const Scalar& exponent) {
  check_pow_scalar(self, exponent);
  const ElementwiseMeta m = binary_meta(self, make_wrapped_number(exponent), BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  Tensor out = new_output(m, "aten::pow");
  if (out.numel() == 0) return out;
  const DType dt = m.compute_dtype;
  const double e = exponent.to_double();
  UnaryOp op = UnaryOp::kPowScalar;
  Param p;
  if (is_floating(dt)) {
    const bool fast = dt != DType::kFloat16;
    if (fast && e == 0.5) op = UnaryOp::kSqrt;
    else if (fast && e == -0.5) op = UnaryOp::kRsqrt;
    else if (fast && e == -1.0) op = UnaryOp::kReciprocal;
    else if (fast && e == 2.0) op = UnaryOp::kSquare;
    else if (fast && e == 3.0) op = UnaryOp::kCube;
    else if (fast && e == -2.0) op = UnaryOp::kInvSquare;
    if (dt == DType::kFloat16) p = param_for(dt, exponent);
    else if (dt == DType::kFloat64) p.f = exponent.to<double>();
    else p.f32 = exponent.to<float>();
  } else {
    if (e == 2.0) op = UnaryOp::kSquare;
    else if (e == 3.0) op = UnaryOp::kCube;
    p = param_for(dt, exponent);
  }
  DeviceGuard guard(out.device());
  launch_unary(op, code_of(dt), make_args(out, {self}, {dt}), p);
  return out;
}

// Autograd's backward ops: floating-point (grad, saved) pairs.
Tensor backward_op_cuda(const Tensor& grad, const Tensor& saved, BinaryOp op, Param p, std::string_view name) {
  const ElementwiseMeta m = binary_meta(grad, saved, BinaryKind::kArithmetic, name);
  OPSPEC_CHECK(is_floating(m.result_dtype), name, " expects floating-point tensors, got ",
               dtype_short_name(m.result_dtype));
  Tensor out = new_output(m, name);
  arith_into(out, grad, saved, op, p);
  return out;
}
Tensor threshold_backward_cuda(const Tensor& grad, const Tensor& self, const Scalar& threshold) {
  return backward_op_cuda(grad, self, BinaryOp::kThresholdBackward, Param{.f = threshold.to_double()},
                          "aten::threshold_backward");
}
Tensor tanh_backward_cuda(const Tensor& grad, const Tensor& output) {
  return backward_op_cuda(grad, output, BinaryOp::kTanhBackward, {}, "aten::tanh_backward");
}
Tensor sigmoid_backward_cuda(const Tensor& grad, const Tensor& output) {
  return backward_op_cuda(grad, output, BinaryOp::kSigmoidBackward, {}, "aten::sigmoid_backward");
}
Tensor gelu_backward_cuda(const Tensor& grad, const Tensor& self, std::string_view approximate) {
  return backward_op_cuda(grad, self, gelu_uses_tanh(approximate) ? BinaryOp::kGeluBackwardTanh : BinaryOp::kGeluBackwardErf,
                          {}, "aten::gelu_backward");
}
Tensor silu_backward_cuda(const Tensor& grad, const Tensor& self) {
  return backward_op_cuda(grad, self, BinaryOp::kSiluBackward, {}, "aten::silu_backward");
}

Tensor native_dropout_backward_cuda(const Tensor& grad, const Tensor& mask, double scale) {
  constexpr std::string_view kOp = "aten::native_dropout_backward";
  check_dropout_backward(grad, mask);
  require_device(grad.device(), kOp);
  // 0 or 1 of grad's dtype; a 0-dim cpu mask (the device check allows one) stays a
  // host scalar operand, converted on the host.
  Tensor m;
  if (mask.device().is_cpu()) {
    m = make_tensor(mask.sizes(), grad.dtype(), kCPU);
    copy_between(m, mask);
  } else {
    m = contiguous_cuda(mask, grad.dtype());
  }
  ElementwiseMeta meta = binary_meta(grad, m, BinaryKind::kArithmetic, kOp);
  // PyTorch's CUDA kernel allocates empty_like(grad, grad.suggest_memory_format()),
  // not TensorIterator's layout: a transposed grad gives a row-major result.
  meta.strides = strides_for(grad.sizes(), suggest_memory_format(grad), kOp);
  Tensor out = new_output(meta, kOp);
  arith_into(out, grad, m, BinaryOp::kDropoutBackward, Param{.f = scale});
  return out;
}

Tensor maximum_cuda(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kArithmetic, "aten::maximum"), "aten::maximum");
  arith_into(out, a, b, BinaryOp::kMaximum);
  return out;
}
Tensor minimum_cuda(const Tensor& a, const Tensor& b) {
  Tensor out = new_output(binary_meta(a, b, BinaryKind::kArithmetic, "aten::minimum"), "aten::minimum");
  arith_into(out, a, b, BinaryOp::kMinimum);
  return out;
}

// ---- pow.Scalar, rounding division, remainder, fmod, atan2, bitwise ----
// (kernels/cpu/binary.cc's; integer division by zero is not checked on CUDA, as in PyTorch)

Tensor pow_scalar_base_cuda(const Scalar& self, const Tensor& exponent) {
  return pow_cuda(make_wrapped_number(self), exponent);
}

Tensor arith_op_cuda(const ElementwiseMeta& m, const Tensor& a, const Tensor& b, BinaryOp op, std::string_view name) {
  Tensor out = new_output(m, name);
  arith_into(out, a, b, op);
  return out;
}
Tensor remainder_cuda(const Tensor& a, const Tensor& b) {
  return arith_op_cuda(remainder_meta(a, b, "aten::remainder"), a, b, BinaryOp::kRemainder, "aten::remainder");
}
Tensor remainder_scalar_cuda(const Tensor& a, const Scalar& b) { return remainder_cuda(a, make_wrapped_number(b)); }
Tensor fmod_cuda(const Tensor& a, const Tensor& b) {
  return arith_op_cuda(remainder_meta(a, b, "aten::fmod"), a, b, BinaryOp::kFmod, "aten::fmod");
}
Tensor fmod_scalar_cuda(const Tensor& a, const Scalar& b) { return fmod_cuda(a, make_wrapped_number(b)); }
Tensor div_mode_cuda(const Tensor& a, const Tensor& b, std::optional<std::string_view> rounding_mode) {
  const RoundingMode mode = parse_rounding_mode(rounding_mode);
  if (mode == RoundingMode::kNone) return div_cuda(a, b);
  return arith_op_cuda(div_mode_meta(a, b, mode), a, b,
                       mode == RoundingMode::kTrunc ? BinaryOp::kDivTrunc : BinaryOp::kDivFloor, "aten::div");
}
Tensor div_scalar_mode_cuda(const Tensor& a, const Scalar& b, std::optional<std::string_view> rounding_mode) {
  return div_mode_cuda(a, make_wrapped_number(b), rounding_mode);
}
Tensor atan2_cuda(const Tensor& a, const Tensor& b) {
  return arith_op_cuda(binary_meta(a, b, BinaryKind::kTrueDivide, "aten::atan2"), a, b, BinaryOp::kAtan2,
                       "aten::atan2");
}
#define OPSPEC_BITWISE_CUDA(name, op)                                                                     \
  Tensor name##_cuda(const Tensor& a, const Tensor& b) {                                                  \
    return arith_op_cuda(integral_binary_meta(a, b, "aten::" #name), a, b, op, "aten::" #name);           \
  }                                                                                                       \
  Tensor name##_scalar_cuda(const Tensor& a, const Scalar& b) { return name##_cuda(a, make_wrapped_number(b)); }
OPSPEC_BITWISE_CUDA(bitwise_and, BinaryOp::kBitwiseAnd)
OPSPEC_BITWISE_CUDA(bitwise_or, BinaryOp::kBitwiseOr)
OPSPEC_BITWISE_CUDA(bitwise_xor, BinaryOp::kBitwiseXor)
#undef OPSPEC_BITWISE_CUDA

// ---- Comparisons, logical ops, where ----

Tensor predicate_cuda(const Tensor& a, const Tensor& b, BinaryKind kind, BinaryOp op, std::string_view name) {
  const ElementwiseMeta m = binary_meta(a, b, kind, name);
  Tensor out = new_output(m, name);
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  launch_compare(op, code_of(m.compute_dtype), make_args(out, {a, b}, {m.compute_dtype, m.compute_dtype}));
  return out;
}

#define OPSPEC_COMPARE_CUDA(name, op)                                                                      \
  Tensor name##_cuda(const Tensor& a, const Tensor& b) {                                                  \
    return predicate_cuda(a, b, BinaryKind::kComparison, op, "aten::" #name);                             \
  }                                                                                                       \
  Tensor name##_scalar_cuda(const Tensor& a, const Scalar& b) {                                           \
    return predicate_cuda(a, make_wrapped_number(b), BinaryKind::kComparison, op, "aten::" #name);        \
  }
OPSPEC_COMPARE_CUDA(eq, BinaryOp::kEq)
OPSPEC_COMPARE_CUDA(ne, BinaryOp::kNe)
OPSPEC_COMPARE_CUDA(lt, BinaryOp::kLt)
OPSPEC_COMPARE_CUDA(le, BinaryOp::kLe)
OPSPEC_COMPARE_CUDA(gt, BinaryOp::kGt)
OPSPEC_COMPARE_CUDA(ge, BinaryOp::kGe)
#undef OPSPEC_COMPARE_CUDA

Tensor logical_and_cuda(const Tensor& a, const Tensor& b) {
  return predicate_cuda(a, b, BinaryKind::kLogical, BinaryOp::kLogicalAnd, "aten::logical_and");
}
Tensor logical_or_cuda(const Tensor& a, const Tensor& b) {
  return predicate_cuda(a, b, BinaryKind::kLogical, BinaryOp::kLogicalOr, "aten::logical_or");
}
Tensor logical_xor_cuda(const Tensor& a, const Tensor& b) {
  return predicate_cuda(a, b, BinaryKind::kLogical, BinaryOp::kLogicalXor, "aten::logical_xor");
}

Tensor where_cuda(const Tensor& condition, const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = where_meta(condition, self, other);
  Tensor out = new_output(m, "aten::where");
  if (out.numel() == 0) return out;
  DeviceGuard guard(out.device());
  launch_where(code_of(m.compute_dtype),
               make_args(out, {condition, self, other}, {DType::kBool, m.compute_dtype, m.compute_dtype}));
  return out;
}

// ---- In-place ----

Tensor add__cuda(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::add_";
  const ElementwiseMeta m = add_sub_inplace_meta(self, other, alpha, /*sub=*/false, kOp);
  return inplace_apply(
      self, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) { add_sub_into(out, a, b, alpha, false); },
      other);
}

Tensor sub__cuda(const Tensor& self, const Tensor& other, const Scalar& alpha) {
  constexpr std::string_view kOp = "aten::sub_";
  const ElementwiseMeta m = add_sub_inplace_meta(self, other, alpha, /*sub=*/true, kOp);
  return inplace_apply(
      self, m, kOp, [&](const Tensor& out, const Tensor& a, const Tensor& b) { add_sub_into(out, a, b, alpha, true); },
      other);
}

Tensor mul__cuda(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, m, "aten::mul_", &mul_into, other);
}

Tensor div__cuda(const Tensor& self, const Tensor& other) {
  const ElementwiseMeta m = inplace_meta(self, other, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, m, "aten::div_", &div_into, other);
}

// masked_fill_: where(mask, value, self) written back into self; value is
// checked and rounded to self's dtype on the host as the CPU kernel does.
// Into an expanded self the mask is OR-ed (amax) over the expanded dims and
// self's distinct elements filled where it is set, so each address holds
// what PyTorch's kernel leaves in it (See Note [Memory overlap]).
Tensor masked_fill__cuda(const Tensor& self, const Tensor& mask, const Scalar& value) {
  constexpr std::string_view kOp = "aten::masked_fill_";
  check_masked_fill(self, mask);
  const Device dev = require_device(self.device(), kOp);
  Tensor v = make_tensor({}, self.dtype(), kCPU);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), kOp, [&] {
    *static_cast<scalar_t*>(v.raw_data()) = checked_scalar_cast<scalar_t>(value, kOp);
  });
  if (self.numel() != 0 && has_internal_overlap(self)) {
    SizeVec sizes(self.sizes().begin(), self.sizes().end());
    std::vector<int64_t> dims;
    for (int64_t d = 0; d < self.dim(); ++d) {
      if (sizes[d] > 1 && self.strides()[d] == 0) {
        dims.push_back(d);
        sizes[d] = 1;
      }
    }
    const Tensor m = expand_kernel(on_device(mask, DType::kBool, dev), self.sizes(), /*implicit=*/false);
    const Tensor any = Dispatcher::singleton().redispatch<Tensor, const Tensor&, IntArrayRef, bool>(
        builtin_op(OpId::amax), DispatchKeySet(DispatchKey::kCUDA), m, dims, true);
    const Tensor distinct = make_view(self, sizes, self.strides(), self.storage_offset());
    device_copy(distinct, where_cuda(any, v, distinct));
  } else if (self.numel() != 0) {
    device_copy(self, where_cuda(mask, v, self));
  }
  self.impl()->bump_version();
  return self;
}

// pow_.Scalar / pow_.Tensor (See Note [In-place pointwise ops]): the CPU's
// rules, then the functional kernel's result (computed from inputs read
// whole) copied into self.
Tensor pow__scalar_cuda(const Tensor& self, const Scalar& exponent) {
  pow_scalar_inplace_meta(self, exponent, "aten::pow_");
  require_device(self.device(), "aten::pow_");
  if (self.numel() != 0) device_copy(self, pow_scalar_cuda(self, exponent));
  self.impl()->bump_version();
  return self;
}
Tensor pow__tensor_cuda(const Tensor& self, const Tensor& exponent) {
  check_pow(inplace_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow_").compute_dtype);
  require_device(self.device(), "aten::pow_");
  if (self.numel() != 0) device_copy(self, pow_cuda(self, exponent));
  self.impl()->bump_version();
  return self;
}

Tensor masked_fill_cuda(const Tensor& self, const Tensor& mask, const Scalar& value) {
  const SizeVec sizes = masked_fill_sizes(self, mask);
  Tensor out = empty_cuda(sizes, self.dtype(), require_device(self.device(), "aten::masked_fill"));
  device_copy(out, expand_kernel(self, sizes, /*implicit=*/false));
  return masked_fill__cuda(out, mask, value);
}

Tensor mul__scalar_cuda(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kArithmetic, "aten::mul_");
  return inplace_apply(self, m, "aten::mul_", &mul_into, b);
}

Tensor add__scalar_cuda(const Tensor& self, const Scalar& other, const Scalar& alpha) {
  return add__cuda(self, make_wrapped_number(other), alpha);
}

Tensor div__scalar_cuda(const Tensor& self, const Scalar& other) {
  const Tensor b = make_wrapped_number(other);
  const ElementwiseMeta m = inplace_meta(self, b, BinaryKind::kTrueDivide, "aten::div_");
  return inplace_apply(self, m, "aten::div_", &div_into, b);
}

}  // namespace

void register_elementwise_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  lib.impl(#name, kKey, &name##_cuda).impl(#name "_", kKey, &name##__cuda);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  lib.impl("gelu", kKey, &gelu_cuda).impl("logical_not", kKey, &logical_not_cuda);
  lib.impl("add.Tensor", kKey, &add_cuda)
      .impl("add.Scalar", kKey, &add_scalar_cuda)
      .impl("sub.Tensor", kKey, &sub_cuda)
      .impl("sub.Scalar", kKey, &sub_scalar_cuda)
      .impl("rsub.Scalar", kKey, &rsub_scalar_cuda)
      .impl("mul.Tensor", kKey, &mul_cuda)
      .impl("mul.Scalar", kKey, &mul_scalar_cuda)
      .impl("div.Tensor", kKey, &div_cuda)
      .impl("div.Scalar", kKey, &div_scalar_cuda)
      .impl("pow.Tensor_Tensor", kKey, &pow_cuda)
      .impl("pow.Tensor_Scalar", kKey, &pow_scalar_cuda)
      .impl("pow_.Scalar", kKey, &pow__scalar_cuda)
      .impl("pow_.Tensor", kKey, &pow__tensor_cuda)
      .impl("maximum", kKey, &maximum_cuda)
      .impl("threshold_backward", kKey, &threshold_backward_cuda)
      .impl("tanh_backward", kKey, &tanh_backward_cuda)
      .impl("sigmoid_backward", kKey, &sigmoid_backward_cuda)
      .impl("gelu_backward", kKey, &gelu_backward_cuda)
      .impl("silu_backward", kKey, &silu_backward_cuda)
      .impl("native_dropout_backward", kKey, &native_dropout_backward_cuda)
      .impl("minimum", kKey, &minimum_cuda)
      .impl("pow.Scalar", kKey, &pow_scalar_base_cuda)
      .impl("remainder.Tensor", kKey, &remainder_cuda)
      .impl("remainder.Scalar", kKey, &remainder_scalar_cuda)
      .impl("fmod.Tensor", kKey, &fmod_cuda)
      .impl("fmod.Scalar", kKey, &fmod_scalar_cuda)
      .impl("div.Tensor_mode", kKey, &div_mode_cuda)
      .impl("div.Scalar_mode", kKey, &div_scalar_mode_cuda)
      .impl("atan2", kKey, &atan2_cuda)
      .impl("bitwise_and.Tensor", kKey, &bitwise_and_cuda)
      .impl("bitwise_or.Tensor", kKey, &bitwise_or_cuda)
      .impl("bitwise_xor.Tensor", kKey, &bitwise_xor_cuda)
      .impl("bitwise_and.Scalar", kKey, &bitwise_and_scalar_cuda)
      .impl("bitwise_or.Scalar", kKey, &bitwise_or_scalar_cuda)
      .impl("bitwise_xor.Scalar", kKey, &bitwise_xor_scalar_cuda)
      .impl("logical_xor", kKey, &logical_xor_cuda)
      .impl("eq.Tensor", kKey, &eq_cuda)
      .impl("ne.Tensor", kKey, &ne_cuda)
      .impl("lt.Tensor", kKey, &lt_cuda)
      .impl("le.Tensor", kKey, &le_cuda)
      .impl("gt.Tensor", kKey, &gt_cuda)
      .impl("ge.Tensor", kKey, &ge_cuda)
      .impl("eq.Scalar", kKey, &eq_scalar_cuda)
      .impl("ne.Scalar", kKey, &ne_scalar_cuda)
      .impl("lt.Scalar", kKey, &lt_scalar_cuda)
      .impl("le.Scalar", kKey, &le_scalar_cuda)
      .impl("gt.Scalar", kKey, &gt_scalar_cuda)
      .impl("ge.Scalar", kKey, &ge_scalar_cuda)
      .impl("logical_and", kKey, &logical_and_cuda)
      .impl("logical_or", kKey, &logical_or_cuda)
      .impl("where.self", kKey, &where_cuda)
      .impl("add_.Tensor", kKey, &add__cuda)
      .impl("sub_.Tensor", kKey, &sub__cuda)
      .impl("mul_.Tensor", kKey, &mul__cuda)
      .impl("mul_.Scalar", kKey, &mul__scalar_cuda)
      .impl("div_.Tensor", kKey, &div__cuda)
      .impl("div_.Scalar", kKey, &div__scalar_cuda)
      .impl("add_.Scalar", kKey, &add__scalar_cuda)
      .impl("masked_fill_.Scalar", kKey, &masked_fill__cuda)
      .impl("masked_fill.Scalar", kKey, &masked_fill_cuda);
}

}  // namespace opspec::internal::cuda
