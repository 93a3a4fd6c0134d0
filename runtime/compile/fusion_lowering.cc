// fusion_lowering.cc: the fusion rule table and the lowering of elementwise
// nodes to FusedProgram instructions. See Note [Fusion] in fusion.h.
#include "runtime/compile/internal/fusion_lowering.h"

#include <cmath>
#include <limits>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "runtime/ops/elementwise_rules.h"
#include "runtime/ops/op_table.h"

namespace opspec::internal {
namespace {

using internal::FusedOp;
using internal::FusedProgram;

// Rule: how an op lowers; each mirrors its eager CPU kernel (unary.cc, binary.cc).
enum class Rule : uint8_t {
  kUnaryKeep,   // unary_ops.def rows with kKeepDtype(Bool): same dtype in and out
  kUnaryFloat,  // unary_ops.def rows with kFloating(Only): integers compute in f32 (or are refused)
  kGelu,
  kLogicalNot,
  kBitwiseNot,
  kAdd,
  kSub,
  kRsub,
  kMul,
  kDiv,
  kPow,
  kPowScalar,
  kArith,       // maximum, minimum
  kCompare,
  kLogical,
  kWhere,
  // See Note [Parametrized pointwise ops]
  kRemainder,   // remainder, fmod: promoted dtype, no b8
  kDivMode,     // div.Tensor_mode: true division, or trunc / floor rounding
  kAtan2,
  kBitwise,
  kClamp,       // Scalar bounds
  kClampTensor,
  kClampMin,    // clamp_min / clamp_max with a number bound
  kClampMax,
  kHardtanh,
  kLeakyRelu,
  kElu,
  kSoftplus,
  kIsnan,
  kIsinf,
  kNanToNum,
  // See Note [Fused ternary ops]
  kAddcmul,
  kAddcdiv,
  kLerpScalar,
  kLerpTensor,
};

struct FusionRule {
  Rule rule;
  FusedOp op;
  internal::UnaryKind unary = internal::UnaryKind::kKeepDtype;  // the dtype rule of a unary op
};

// rule_for: the fusion rule of op, or null when op never fuses (not a builtin
// elementwise op, or an in-place one).
const FusionRule* rule_for(const OperatorHandle* op) {
  static const std::vector<std::optional<FusionRule>> kTable = [] {
    std::vector<std::optional<FusionRule>> t(static_cast<size_t>(OpId::kNumBuiltinOps));
    auto set = [&](OpId id, Rule r, FusedOp f) { t[static_cast<size_t>(id)] = FusionRule{r, f}; };
    auto set_unary = [&](OpId id, internal::UnaryKind kind, FusedOp f) {
      const bool floating = kind == internal::UnaryKind::kFloating || kind == internal::UnaryKind::kFloatingOnly;
      t[static_cast<size_t>(id)] = FusionRule{floating ? Rule::kUnaryFloat : Rule::kUnaryKeep, f, kind};
    };
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  set_unary(OpId::name, internal::UnaryKind::dtype_rule, FusedOp::k##functor);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    t[static_cast<size_t>(OpId::gelu)] = FusionRule{Rule::kGelu, FusedOp::kGeluErf, internal::UnaryKind::kFloatingOnly};
    set(OpId::logical_not, Rule::kLogicalNot, FusedOp::kLogicalNot);
    set(OpId::bitwise_not, Rule::kBitwiseNot, FusedOp::kBitwiseNot);
    set(OpId::add_Tensor, Rule::kAdd, FusedOp::kAdd);
    set(OpId::add_Scalar, Rule::kAdd, FusedOp::kAdd);
    set(OpId::sub_Tensor, Rule::kSub, FusedOp::kSub);
    set(OpId::sub_Scalar, Rule::kSub, FusedOp::kSub);
    set(OpId::rsub_Scalar, Rule::kRsub, FusedOp::kSub);
    set(OpId::mul_Tensor, Rule::kMul, FusedOp::kMul);
    set(OpId::mul_Scalar, Rule::kMul, FusedOp::kMul);
    set(OpId::div_Tensor, Rule::kDiv, FusedOp::kDiv);
    set(OpId::div_Scalar, Rule::kDiv, FusedOp::kDiv);
    set(OpId::pow_Tensor_Tensor, Rule::kPow, FusedOp::kPow);
    set(OpId::pow_Tensor_Scalar, Rule::kPowScalar, FusedOp::kPowScalar);
    set(OpId::maximum, Rule::kArith, FusedOp::kMaximum);
    set(OpId::minimum, Rule::kArith, FusedOp::kMinimum);
    for (auto [tensor, scalar, f] : {std::tuple{OpId::eq_Tensor, OpId::eq_Scalar, FusedOp::kEq},
                                     std::tuple{OpId::ne_Tensor, OpId::ne_Scalar, FusedOp::kNe},
                                     std::tuple{OpId::lt_Tensor, OpId::lt_Scalar, FusedOp::kLt},
                                     std::tuple{OpId::le_Tensor, OpId::le_Scalar, FusedOp::kLe},
                                     std::tuple{OpId::gt_Tensor, OpId::gt_Scalar, FusedOp::kGt},
                                     std::tuple{OpId::ge_Tensor, OpId::ge_Scalar, FusedOp::kGe}}) {
      set(tensor, Rule::kCompare, f);
      set(scalar, Rule::kCompare, f);
    }
    set(OpId::logical_and, Rule::kLogical, FusedOp::kLogicalAnd);
    set(OpId::logical_or, Rule::kLogical, FusedOp::kLogicalOr);
    set(OpId::logical_xor, Rule::kLogical, FusedOp::kLogicalXor);
    set(OpId::where_self, Rule::kWhere, FusedOp::kWhere);
    set(OpId::pow_Scalar, Rule::kPow, FusedOp::kPow);
    set(OpId::remainder_Tensor, Rule::kRemainder, FusedOp::kRemainder);
    set(OpId::remainder_Scalar, Rule::kRemainder, FusedOp::kRemainder);
    set(OpId::fmod_Tensor, Rule::kRemainder, FusedOp::kFmod);
    set(OpId::fmod_Scalar, Rule::kRemainder, FusedOp::kFmod);
    set(OpId::div_Tensor_mode, Rule::kDivMode, FusedOp::kDiv);
    set(OpId::div_Scalar_mode, Rule::kDivMode, FusedOp::kDiv);
    set(OpId::atan2, Rule::kAtan2, FusedOp::kAtan2);
    set(OpId::bitwise_and_Tensor, Rule::kBitwise, FusedOp::kBitwiseAnd);
    set(OpId::bitwise_and_Scalar, Rule::kBitwise, FusedOp::kBitwiseAnd);
    set(OpId::bitwise_or_Tensor, Rule::kBitwise, FusedOp::kBitwiseOr);
    set(OpId::bitwise_or_Scalar, Rule::kBitwise, FusedOp::kBitwiseOr);
    set(OpId::bitwise_xor_Tensor, Rule::kBitwise, FusedOp::kBitwiseXor);
    set(OpId::bitwise_xor_Scalar, Rule::kBitwise, FusedOp::kBitwiseXor);
    set(OpId::clamp, Rule::kClamp, FusedOp::kMaximum);
    set(OpId::clamp_Tensor, Rule::kClampTensor, FusedOp::kMaximum);
    set(OpId::clamp_min, Rule::kClampMin, FusedOp::kMaximum);
    set(OpId::clamp_max, Rule::kClampMax, FusedOp::kMinimum);
    set(OpId::clamp_min_Tensor, Rule::kArith, FusedOp::kMaximum);  // maximum under its own name
    set(OpId::clamp_max_Tensor, Rule::kArith, FusedOp::kMinimum);
    set(OpId::hardtanh, Rule::kHardtanh, FusedOp::kMaximum);
    set(OpId::leaky_relu, Rule::kLeakyRelu, FusedOp::kWhere);
    set(OpId::elu, Rule::kElu, FusedOp::kWhere);
    set(OpId::softplus, Rule::kSoftplus, FusedOp::kWhere);
    set(OpId::isnan, Rule::kIsnan, FusedOp::kNe);
    set(OpId::isinf, Rule::kIsinf, FusedOp::kEq);
    set(OpId::nan_to_num, Rule::kNanToNum, FusedOp::kWhere);
    set(OpId::addcmul, Rule::kAddcmul, FusedOp::kFma);
    set(OpId::addcdiv, Rule::kAddcdiv, FusedOp::kDiv);
    set(OpId::lerp_Scalar, Rule::kLerpScalar, FusedOp::kFma);
    set(OpId::lerp_Tensor, Rule::kLerpTensor, FusedOp::kFma);
    return t;
  }();
  if (op == nullptr || op->schema().is_mutable()) return nullptr;
  const int id = op->id();
  if (id < 0 || id >= static_cast<int>(OpId::kNumBuiltinOps) || &builtin_op(static_cast<OpId>(id)) != op) {
    return nullptr;
  }
  const auto& rule = kTable[static_cast<size_t>(id)];
  return rule ? &*rule : nullptr;
}

// inplace_functional: the functional form of an in-place op that may fuse
// (See Note [In-place fusion]), or null.
const OperatorHandle* inplace_functional(const OperatorHandle* op) {
  static const absl::flat_hash_map<const OperatorHandle*, const OperatorHandle*> kForms = [] {
    absl::flat_hash_map<const OperatorHandle*, const OperatorHandle*> m;
    for (auto [in_place, functional] :
         {std::pair{OpId::add__Tensor, OpId::add_Tensor}, std::pair{OpId::sub__Tensor, OpId::sub_Tensor},
          std::pair{OpId::mul__Tensor, OpId::mul_Tensor}, std::pair{OpId::mul__Scalar, OpId::mul_Scalar},
          std::pair{OpId::div__Tensor, OpId::div_Tensor}, std::pair{OpId::div__Scalar, OpId::div_Scalar},
          std::pair{OpId::add__Scalar, OpId::add_Scalar},
          std::pair{OpId::logical_and_, OpId::logical_and}, std::pair{OpId::logical_or_, OpId::logical_or},
          std::pair{OpId::clamp_, OpId::clamp}, std::pair{OpId::clamp__Tensor, OpId::clamp_Tensor},
          std::pair{OpId::clamp_min_, OpId::clamp_min}, std::pair{OpId::clamp_min__Tensor, OpId::clamp_min_Tensor},
          std::pair{OpId::clamp_max_, OpId::clamp_max}, std::pair{OpId::clamp_max__Tensor, OpId::clamp_max_Tensor},
          std::pair{OpId::hardtanh_, OpId::hardtanh}, std::pair{OpId::leaky_relu_, OpId::leaky_relu},
          std::pair{OpId::elu_, OpId::elu}, std::pair{OpId::pow__Scalar, OpId::pow_Tensor_Scalar},
          std::pair{OpId::pow__Tensor, OpId::pow_Tensor_Tensor}, std::pair{OpId::addcmul_, OpId::addcmul},
          std::pair{OpId::addcdiv_, OpId::addcdiv}, std::pair{OpId::lerp__Scalar, OpId::lerp_Scalar},
          std::pair{OpId::lerp__Tensor, OpId::lerp_Tensor}}) {
      m[&builtin_op(in_place)] = &builtin_op(functional);
    }
    // The unary rows' in-place forms (relu_ among them; See Note [In-place unary ops]).
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) m[&builtin_op(OpId::name##_)] = &builtin_op(OpId::name);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    return m;
  }();
  auto it = kForms.find(op);
  return it == kForms.end() ? nullptr : it->second;
}


// fusion_op: the op node n lowers as: its functional form when in place.
const OperatorHandle* fusion_op(const Node& n) {
  const OperatorHandle* functional = inplace_functional(n.target());
  return functional != nullptr ? functional : n.target();
}


// ResolveFn: the operand for argument i of the node being lowered.
using ResolveFn = absl::FunctionRef<Operand(size_t i)>;

// scalar_operand: a wrapped number or Scalar argument as a constant register.
std::optional<Operand> scalar_operand(FusedProgram& p, const Value& v) {
  Tensor t;
  if (v.is_tensor() && v.to_tensor().defined() && v.to_tensor().is_wrapped_number() &&
      v.to_tensor().device().is_cpu() && v.to_tensor().dim() == 0) {
    t = v.to_tensor();
  } else if (v.is_scalar()) {
    t = internal::make_wrapped_number(v.to_scalar());
  } else {
    return std::nullopt;
  }
  return Operand{p.add_constant(internal::read_scalar(t), t.dtype()), t};
}

Operand cast(FusedProgram& p, const Operand& x, DType d) { return {p.add_cast(x.reg, d), x.proxy}; }

// float_rhs: a one-element right operand as eager's reduced-precision mul/div
// reads it: static_cast<float>(read_element_as_double(b)) (integers go
// through double, so an i64 rounds as eager rounds it).
int float_rhs(FusedProgram& p, const Operand& b) {
  const DType d = b.proxy.dtype();
  if (is_floating(d)) return p.add_cast(b.reg, DType::kFloat32);
  return p.add_cast(p.add_cast(b.reg, DType::kFloat64), DType::kFloat32);
}

// Note [Parametrized pointwise ops]
// Ops with scalar parameters (clamp, clamp_min, clamp_max, hardtanh,
// leaky_relu, elu, softplus, nan_to_num) and the NaN tests get no instruction
// of their own: they lower to the shared functors their eager functor is
// written in, in the same order (ClampOp is ClampMinOp then ClampMaxOp, ClampMinOp
// where(lt(x, lo), lo, x), EluOp is where(le(x, 0),
// expm1(x * ipt) * neg, x * pos), ...), computed in the eager compute type
// (f32 for f16/bf16, so nothing rounds in between) with the parameters as
// constants converted as eager converts them. Selections (where, maximum)
// and IEEE arithmetic make the results bit-identical to eager's. Rounding
// division, remainder, fmod, atan2 and the bitwise ops have their own
// functors and instructions. One difference is left: integer division,
// remainder and fmod by zero raise ZeroDivisionError in eager kernels, which
// can inspect the divisor first, while fused kernels give 0 (Inductor does
// not raise either).

// opmath: the dtype eager kernels compute a floating dtype in (f32 for f16/bf16).
DType opmath(DType d) { return d == DType::kFloat16 || d == DType::kBFloat16 ? DType::kFloat32 : d; }

// constant_in: s converted to dtype d as eager's `s.to<opmath_t>()`.
int constant_in(FusedProgram& p, double v, DType d) { return p.add_constant(Scalar(v), d); }

// coef: a product of parameters rounded as eager computes it in dtype d.
double coef(DType d, double a, double b = 1.0) {
  if (d == DType::kFloat64) return a * b;
  return static_cast<double>(static_cast<float>(a) * static_cast<float>(b));
}

// Note [Fused ternary ops]
// addcmul, addcdiv and lerp lower to the steps of their eager functors (See
// Note [Ternary pointwise ops]) in ternary.cc's compute type: every tensor is
// cast to the result dtype as ternary_into casts it, then widened to f32 for
// f16/bf16, so nothing rounds until the final cast, as eager rounds once on
// store. The number (value, a Scalar weight) is a constant converted as
// ternary_value converts it. addcmul is fma(value * t1, t2, self) and lerp
// fma(w', end - self, base) with w' and base selected by |w| < 0.5, both on
// FmaOp, the functor eager's AddcmulOp and LerpOp call, so the fma rounds
// alike by construction; addcdiv has no fma (self + value * t1 / t2).

// ternary_number: a ternary op's number as its eager functor holds it: the
// compute type's value (Scalar::to), or for integers static_cast<T>(to_int()).
int ternary_number(FusedProgram& p, const Scalar& v, DType c) {
  if (is_floating(c)) return p.add_constant(v, c);
  return p.add_constant(Scalar(v.to_int()), c);
}

std::optional<std::string_view> optional_string(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return std::string_view(v.to_string());
}

// lower_call: appends the instructions of call node n (See Note [Fusion]) and
// returns its result register; throws opspec::Error where eager would reject
// the call or the op is outside the rule table.
int lower_call(FusedProgram& p, const Node& n, ResolveFn operand) {
  const FusionRule* r = rule_for(fusion_op(n));
  OPSPEC_CHECK(r != nullptr, "fusion: ", n.target()->name(), " is not fusable");
  const std::string op_name = fusion_op(n)->schema().base_name();
  auto value = [&](size_t i) -> const Value& { return n.args().at(i).as_value(); };
  auto binary_arith = [&](const Operand& a, const Operand& b, internal::BinaryKind kind, FusedOp f) {
    const internal::ElementwiseMeta m = internal::binary_meta(a.proxy, b.proxy, kind, op_name);
    return p.add_op(f, {cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
  };
  // mul_or_div: as binary.cc's mul and div, with its f16/bf16 one-element right operand path.
  auto mul_or_div = [&](const Operand& a, const Operand& b, internal::BinaryKind kind, FusedOp f) {
    const internal::ElementwiseMeta m = internal::binary_meta(a.proxy, b.proxy, kind, op_name);
    const DType d = m.result_dtype;
    if ((d == DType::kFloat16 || d == DType::kBFloat16) && b.proxy.numel() == 1) {
      return p.add_op(f, {cast(p, a, d).reg, float_rhs(p, b)});
    }
    return p.add_op(f, {cast(p, a, d).reg, cast(p, b, d).reg});
  };
  auto true_divide = [&](const Operand& a, const Operand& b) {
    return mul_or_div(a, b, internal::BinaryKind::kTrueDivide, FusedOp::kDiv);
  };
  switch (r->rule) {
    case Rule::kUnaryKeep: {
      const Operand x = operand(0);
      internal::unary_meta(x.proxy, r->unary, op_name);
      return p.add_op(r->op, {x.reg});
    }
    case Rule::kUnaryFloat:
    case Rule::kGelu: {
      const Operand x = operand(0);
      const internal::ElementwiseMeta m = internal::unary_meta(x.proxy, r->unary, op_name);
      FusedOp f = r->op;
      if (r->rule == Rule::kGelu && internal::gelu_uses_tanh(value(1).to_string())) f = FusedOp::kGeluTanh;
      return p.add_op(f, {cast(p, x, m.compute_dtype).reg});
    }
    case Rule::kLogicalNot: return p.add_op(FusedOp::kLogicalNot, {operand(0).reg});
    case Rule::kBitwiseNot: {
      const Operand x = operand(0);
      internal::bitwise_not_meta(x.proxy);  // integers and b8 only, as eager
      return p.add_op(FusedOp::kBitwiseNot, {x.reg});
    }
    case Rule::kAdd:
    case Rule::kSub:
    case Rule::kRsub: {
      Operand a = operand(0), b = operand(1);
      if (r->rule == Rule::kRsub) std::swap(a, b);  // other - alpha * self
      const Scalar alpha = value(2).to_scalar();
      const bool sub = r->rule != Rule::kAdd;
      if (sub) internal::check_sub(a.proxy, b.proxy, op_name);
      const internal::ElementwiseMeta m =
          internal::binary_meta(a.proxy, b.proxy, internal::BinaryKind::kArithmetic, op_name);
      internal::check_alpha(m.result_dtype, alpha, op_name);
      const int x = cast(p, a, m.result_dtype).reg, y = cast(p, b, m.result_dtype).reg;
      if (alpha.to_double() == 1.0) return p.add_op(sub ? FusedOp::kSub : FusedOp::kAdd, {x, y});
      return p.add_op(sub ? FusedOp::kSubAlpha : FusedOp::kAddAlpha, {x, y}, alpha);
    }
    case Rule::kMul: return mul_or_div(operand(0), operand(1), internal::BinaryKind::kArithmetic, FusedOp::kMul);
    case Rule::kDiv: return true_divide(operand(0), operand(1));
    case Rule::kPow: {
      const Operand a = operand(0), b = operand(1);
      const internal::ElementwiseMeta m =
          internal::binary_meta(a.proxy, b.proxy, internal::BinaryKind::kArithmetic, op_name);
      internal::check_pow(m.result_dtype);
      return p.add_op(FusedOp::kPow, {cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
    }
    case Rule::kPowScalar: {
      const Operand x = operand(0);
      const Scalar exponent = value(1).to_scalar();
      internal::check_pow_scalar(x.proxy, exponent);
      const internal::ElementwiseMeta m = internal::binary_meta(
          x.proxy, internal::make_wrapped_number(exponent), internal::BinaryKind::kArithmetic, op_name);
      internal::check_pow(m.result_dtype);
      return p.add_op(FusedOp::kPowScalar, {cast(p, x, m.compute_dtype).reg}, exponent);
    }
    case Rule::kArith: return binary_arith(operand(0), operand(1), internal::BinaryKind::kArithmetic, r->op);
    case Rule::kCompare: return binary_arith(operand(0), operand(1), internal::BinaryKind::kComparison, r->op);
    case Rule::kLogical: return binary_arith(operand(0), operand(1), internal::BinaryKind::kLogical, r->op);
    case Rule::kWhere: {
      const Operand c = operand(0), a = operand(1), b = operand(2);
      const internal::ElementwiseMeta m = internal::where_meta(c.proxy, a.proxy, b.proxy);
      return p.add_op(FusedOp::kWhere, {c.reg, cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
    }
    case Rule::kRemainder: {
      const Operand a = operand(0), b = operand(1);
      const internal::ElementwiseMeta m = internal::remainder_meta(a.proxy, b.proxy, op_name);
      return p.add_op(r->op, {cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
    }
    case Rule::kDivMode: {
      const Operand a = operand(0), b = operand(1);
      const internal::RoundingMode mode = internal::parse_rounding_mode(optional_string(value(2)));
      if (mode == internal::RoundingMode::kNone) return true_divide(a, b);
      const internal::ElementwiseMeta m = internal::div_mode_meta(a.proxy, b.proxy, mode);
      const FusedOp f = mode == internal::RoundingMode::kTrunc ? FusedOp::kDivTrunc : FusedOp::kDivFloor;
      return p.add_op(f, {cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
    }
    case Rule::kAtan2: return binary_arith(operand(0), operand(1), internal::BinaryKind::kTrueDivide, r->op);
    case Rule::kBitwise: {
      const Operand a = operand(0), b = operand(1);
      const internal::ElementwiseMeta m = internal::integral_binary_meta(a.proxy, b.proxy, op_name);
      return p.add_op(r->op, {cast(p, a, m.compute_dtype).reg, cast(p, b, m.compute_dtype).reg});
    }
    case Rule::kClampTensor: {
      const Operand x = operand(0);
      std::optional<Operand> lo, hi;
      if (!n.args().at(1).is_value() || !value(1).is_none()) lo = operand(1);
      if (!n.args().at(2).is_value() || !value(2).is_none()) hi = operand(2);
      const DType d =
          internal::clamp_meta(x.proxy, lo ? &lo->proxy : nullptr, hi ? &hi->proxy : nullptr, op_name).compute_dtype;
      int reg = cast(p, x, d).reg;
      if (lo) reg = p.add_op(FusedOp::kMaximum, {reg, cast(p, *lo, d).reg});
      if (hi) reg = p.add_op(FusedOp::kMinimum, {reg, cast(p, *hi, d).reg});
      return reg;
    }
    case Rule::kClamp:
    case Rule::kHardtanh: {
      // ClampMinOp then ClampMaxOp as selections, each bound as eager applies it (See Note [clamp with number bounds]).
      const Operand x = operand(0);
      const auto number = [&](size_t i) {
        return value(i).is_none() ? std::optional<Scalar>() : std::optional<Scalar>(value(i).to_scalar());
      };
      DType d = x.proxy.dtype();
      internal::ClampBounds b;
      if (r->rule == Rule::kHardtanh) {
        OPSPEC_CHECK(d != DType::kBool, op_name, ": Bool inputs not supported for hardtanh");
        b = internal::hardtanh_bounds(value(1).to_scalar(), value(2).to_scalar(), d, op_name);
      } else {
        const std::optional<Operand> lo = number(1) ? operand(1) : std::optional<Operand>();
        const std::optional<Operand> hi = number(2) ? operand(2) : std::optional<Operand>();
        d = internal::clamp_meta(x.proxy, lo ? &lo->proxy : nullptr, hi ? &hi->proxy : nullptr, op_name)
                .compute_dtype;
        b = internal::clamp_bounds(number(1), number(2), d, op_name);
      }
      const int reg = cast(p, x, d).reg;
      // An integral bound as hardtanh_bounds truncated it; a floating one converted as eager converts it.
      const auto bound = [&](size_t i, const Scalar& s) {
        return is_floating(d) ? cast(p, operand(i), d).reg : p.add_constant(s, d);
      };
      if (!b.lo && !b.hi) return p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kNe, {reg, reg}), reg, reg});  // a copy
      const auto is_nan = [](const std::optional<Scalar>& s) { return s && std::isnan(s->to_double()); };
      if (is_nan(b.lo) || is_nan(b.hi)) {  // NaN everywhere
        return p.add_op(FusedOp::kMaximum, {reg, is_nan(b.lo) ? bound(1, *b.lo) : bound(2, *b.hi)});
      }
      int out = reg;
      if (b.lo) {
        const int k = bound(1, *b.lo);
        out = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kLt, {out, k}), k, out});
      }
      if (b.hi) {
        const int k = bound(2, *b.hi);
        out = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kGt, {out, k}), k, out});
      }
      return out;
    }
    case Rule::kClampMin:
    case Rule::kClampMax: {
      // std::max(x, lo) / std::min(x, hi) as selections (See Note [clamp_min and clamp_max]).
      const Operand x = operand(0);
      const bool lower = r->rule == Rule::kClampMin;
      const Scalar bound = value(1).to_scalar();
      const DType d = internal::clamp_bound_meta(x.proxy, bound, lower, op_name).compute_dtype;
      const int reg = cast(p, x, d).reg;
      if (!internal::clamp_bound_value(bound, d, lower, op_name)) {
        return p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kNe, {reg, reg}), reg, reg});  // dropped: a copy
      }
      const int k = cast(p, operand(1), d).reg;
      if (std::isnan(bound.to_double())) return p.add_op(r->op, {reg, k});  // NaN everywhere
      return p.add_op(FusedOp::kWhere, {p.add_op(lower ? FusedOp::kLt : FusedOp::kGt, {reg, k}), k, reg});
    }
    case Rule::kLeakyRelu:
    case Rule::kElu:
    case Rule::kSoftplus: {
      const Operand in = operand(0);
      const DType out = internal::floating_unary_meta(in.proxy, op_name).result_dtype;
      const DType c = opmath(out);
      const int x = cast(p, in, c).reg;
      const int zero = constant_in(p, 0.0, c);
      int reg = -1;
      if (r->rule == Rule::kLeakyRelu) {  // x > 0 ? x : x * slope
        const int slope = constant_in(p, coef(c, value(1).to_double()), c);
        reg = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kGt, {x, zero}), x, p.add_op(FusedOp::kMul, {x, slope})});
      } else if (r->rule == Rule::kElu) {  // x <= 0 ? expm1(x * ipt) * (alpha * scale) : x * scale
        const double alpha = value(1).to_double(), scale = value(2).to_double(), ipt = value(3).to_double();
        const int neg = constant_in(p, coef(c, alpha, scale), c), pos = constant_in(p, coef(c, scale), c);
        const int em1 = p.add_op(FusedOp::kExpm1, {p.add_op(FusedOp::kMul, {x, constant_in(p, coef(c, ipt), c)})});
        reg = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kLe, {x, zero}), p.add_op(FusedOp::kMul, {em1, neg}),
                                         p.add_op(FusedOp::kMul, {x, pos})});
      } else {  // x * beta > threshold ? x : log1p(exp(x * beta)) / beta
        const int beta = constant_in(p, coef(c, value(1).to_double()), c);
        const int threshold = constant_in(p, coef(c, value(2).to_double()), c);
        const int xb = p.add_op(FusedOp::kMul, {x, beta});
        const int soft = p.add_op(FusedOp::kDiv, {p.add_op(FusedOp::kLog1p, {p.add_op(FusedOp::kExp, {xb})}), beta});
        reg = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kGt, {xb, threshold}), x, soft});
      }
      return p.add_cast(reg, out);
    }
    case Rule::kIsnan: {
      const int x = operand(0).reg;
      return p.add_op(FusedOp::kNe, {x, x});  // only NaN differs from itself
    }
    case Rule::kIsinf: {
      const Operand x = operand(0);
      if (!is_floating(x.proxy.dtype())) return p.add_op(FusedOp::kNe, {x.reg, x.reg});  // all false
      const int inf = constant_in(p, std::numeric_limits<double>::infinity(), x.proxy.dtype());
      return p.add_op(FusedOp::kEq, {p.add_op(FusedOp::kAbs, {x.reg}), inf});
    }
    case Rule::kNanToNum: {
      const Operand x = operand(0);
      const DType d = x.proxy.dtype();
      if (!is_floating(d)) {  // a copy: where(x != x, x, x) selects x's own bits
        return p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kNe, {x.reg, x.reg}), x.reg, x.reg});
      }
      const double limit = internal::finite_max(d), inf = std::numeric_limits<double>::infinity();
      auto param = [&](size_t i, double dflt) { return constant_in(p, value(i).is_none() ? dflt : value(i).to_double(), d); };
      const int neg = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kEq, {x.reg, constant_in(p, -inf, d)}),
                                                 param(3, -limit), x.reg});
      const int pos = p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kEq, {x.reg, constant_in(p, inf, d)}),
                                                 param(2, limit), neg});
      return p.add_op(FusedOp::kWhere, {p.add_op(FusedOp::kNe, {x.reg, x.reg}), param(1, 0.0), pos});
    }
    case Rule::kAddcmul:
    case Rule::kAddcdiv: {  // See Note [Fused ternary ops]
      const Operand self = operand(0), t1 = operand(1), t2 = operand(2);
      const bool div = r->rule == Rule::kAddcdiv;
      const DType d = internal::addc_meta(self.proxy, t1.proxy, t2.proxy, div, op_name).result_dtype;
      const DType c = opmath(d);
      auto widened = [&](const Operand& x) { return p.add_cast(cast(p, x, d).reg, c); };
      const int s = widened(self), a = widened(t1), b = widened(t2);
      const int scaled = p.add_op(FusedOp::kMul, {ternary_number(p, value(3).to_scalar(), c), a});
      const int reg = div ? p.add_op(FusedOp::kAdd, {s, p.add_op(FusedOp::kDiv, {scaled, b})})
                          : p.add_op(FusedOp::kFma, {scaled, b, s});
      return p.add_cast(reg, d);
    }
    case Rule::kLerpScalar:
    case Rule::kLerpTensor: {  // See Note [Fused ternary ops]
      const Operand self = operand(0), end = operand(1);
      std::optional<Operand> weight;
      if (r->rule == Rule::kLerpTensor) weight = operand(2);
      const DType d = internal::lerp_meta(self.proxy, end.proxy, weight ? &weight->proxy : nullptr, op_name).result_dtype;
      const DType c = opmath(d);
      const int x = cast(p, self, c).reg, y = cast(p, end, c).reg;
      const int w = weight ? cast(p, *weight, c).reg : ternary_number(p, value(2).to_scalar(), c);
      const int small = p.add_op(FusedOp::kLt, {p.add_op(FusedOp::kAbs, {w}), constant_in(p, 0.5, c)});
      const int coef = p.add_op(FusedOp::kWhere, {small, w, p.add_op(FusedOp::kSub, {w, constant_in(p, 1.0, c)})});
      const int base = p.add_op(FusedOp::kWhere, {small, x, y});
      return p.add_cast(p.add_op(FusedOp::kFma, {coef, p.add_op(FusedOp::kSub, {y, x}), base}), d);
    }
  }
  OPSPEC_FAIL("fusion: unhandled rule for ", n.target()->name());
}


Tensor meta_proxy(const TensorMeta& m) { return internal::make_tensor(m.sizes, m.dtype, kMeta); }

}  // namespace

bool has_fusion_rule(const Node& n) { return n.op() == NodeOp::kCall && rule_for(fusion_op(n)) != nullptr; }

bool is_inplace_call(const Node& n) { return n.op() == NodeOp::kCall && inplace_functional(n.target()) != nullptr; }

const TensorMeta* single_tensor(const Node& n) {
  if (n.meta().size() != 1 || !n.meta()[0].has_value()) return nullptr;
  const Device d = n.meta()[0]->device;
  return d.is_cpu() || d.is_cuda() ? &*n.meta()[0] : nullptr;
}

Operand Lowerer::operand(const Node& n, size_t i) {
  const NodeArg& arg = n.args().at(i);
  if (arg.is_value()) {
    std::optional<Operand> s = scalar_operand(program, arg.as_value());
    OPSPEC_CHECK(s.has_value(), "fusion: argument ", i, " of %", n.name(), " is not a scalar or a node");
    return *s;
  }
  OPSPEC_CHECK(arg.is_node(), "fusion: argument ", i, " of %", n.name(), " is a node list");
  Node* src = arg.as_node();
  if (auto it = regs.find(src); it != regs.end()) return it->second;
  const TensorMeta* m = single_tensor(*src);
  OPSPEC_CHECK(m != nullptr && m->device == device, "fusion: %", src->name(), " is not a single ", device.str(),
               " tensor");
  Operand op{program.add_input(m->dtype, m->sizes), meta_proxy(*m)};
  regs.emplace(src, op);
  inputs.push_back(src);
  return op;
}

int Lowerer::lower(const Node& n) {
  const int reg = lower_call(program, n, [&](size_t i) { return operand(n, i); });
  const TensorMeta& m = n.tensor_meta();
  OPSPEC_CHECK(program.dtype(reg) == m.dtype, "fusion: %", n.name(), " lowers to ",
               dtype_short_name(program.dtype(reg)), " but was traced as ", m.str());
  regs[&n] = Operand{reg, meta_proxy(m)};
  return reg;
}

}  // namespace opspec::internal
