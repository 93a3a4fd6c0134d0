// fused_source.cc: the C++ text of fused-program instructions, shared by the
// CPU and CUDA code generators. See Note [Fused kernels].
#include "kernels/common/fused_source.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "kernels/common/opmath.h"
#include "kernels/common/scalar_as.h"

namespace opspec::internal {
namespace {

using Instr = FusedProgram::Instr;

// compute_type / arith_type: opmath_t and arith_t of opmath.h, spelled out.
std::string_view compute_type(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? "float" : fused_storage_type(d);
}
std::string_view arith_type(DType d) { return d == DType::kBool ? "int32_t" : compute_type(d); }

// bits_literal: `from_bits<T>(0x...ull)`, the value whose bytes are those of v.
template <class V>
std::string bits_literal(std::string_view type, V v) {
  uint64_t bits = 0;
  std::memcpy(&bits, &v, sizeof(V));
  char hex[24];
  std::snprintf(hex, sizeof hex, "0x%llxull", static_cast<unsigned long long>(bits));
  return str_cat("from_bits<", type, ">(", hex, ")");
}

// scalar_literal: s converted to d's arithmetic compute type as the CPU's
// scalar_as<T> converts alpha and exponents.
std::string scalar_literal(DType d, const Scalar& s) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused source", [&] { return bits_literal(arith_type(d), scalar_as<scalar_t>(s)); });
}

std::string loaded(int r) { return str_cat("load(", fused_register(r), ")"); }
std::string as_type(std::string_view type, const std::string& v) { return str_cat("static_cast<", type, ">(", v, ")"); }

// Call: how this style applies functor text f to argument texts: a unary
// functor with a fast path for the operand dtype d as `apply<kFast>(F{}, x)`,
// with the check `needs_exact<kFast>(F{}, x)` (kCheck); every other call as
// `F{}(args...)`, with no check. Only unary functors: cpu_kernel passes them
// to its loops themselves and every other op through a lambda, so theirs are
// the only fast paths eager kernels take.
struct Call {
  enum Mode { kValue, kCheck };
  FusedSourceStyle style;
  DType d = DType::kFloat32;
  Mode mode = kValue;
  std::string operator()(std::string_view f, std::initializer_list<std::string> args, bool unary = false) const {
    const bool fast = unary && style.fast_path != nullptr && style.fast_path(f, d);
    if (mode == kCheck && !fast) return {};
    std::string text = !fast ? str_cat(f, "(") : str_cat(mode == kCheck ? "needs_exact" : "apply", "<kFast>(", f, ", ");
    bool first = true;
    for (const std::string& a : args) {
      str_append(&text, first ? "" : ", ", a);
      first = false;
    }
    return text + ")";
  }
};

// unary_functor: the elementwise_ops.h functor of a unary op.
std::string_view unary_functor(FusedOp op) {
  switch (op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  case FusedOp::k##functor: return #functor "Op{}";
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    case FusedOp::kGeluErf: return "GeluErfOp{}";
    case FusedOp::kGeluTanh: return "GeluTanhOp{}";
    default: return {};
  }
}

std::string_view binary_functor(FusedOp op) {
  switch (op) {
    case FusedOp::kAdd: return "AddOp{}";
    case FusedOp::kSub: return "SubOp{}";
    case FusedOp::kMul: return "MulOp{}";
    case FusedOp::kDiv: return "DivOp{}";
    case FusedOp::kPow: return "PowOp{}";
    case FusedOp::kMaximum: return "MaximumOp{}";
    case FusedOp::kMinimum: return "MinimumOp{}";
    case FusedOp::kDivTrunc: return "DivTruncOp{}";
    case FusedOp::kDivFloor: return "DivFloorOp{}";
    case FusedOp::kRemainder: return "RemainderOp{}";
    case FusedOp::kFmod: return "FmodOp{}";
    case FusedOp::kAtan2: return "Atan2Op{}";
    case FusedOp::kBitwiseAnd: return "BitwiseAndOp{}";
    case FusedOp::kBitwiseOr: return "BitwiseOrOp{}";
    case FusedOp::kBitwiseXor: return "BitwiseXorOp{}";
    case FusedOp::kEq: return "EqOp{}";
    case FusedOp::kNe: return "NeOp{}";
    case FusedOp::kLt: return "LtOp{}";
    case FusedOp::kLe: return "LeOp{}";
    case FusedOp::kGt: return "GtOp{}";
    case FusedOp::kGe: return "GeOp{}";
    case FusedOp::kLogicalAnd: return "LogicalAndOp{}";
    case FusedOp::kLogicalOr: return "LogicalOrOp{}";
    case FusedOp::kLogicalXor: return "LogicalXorOp{}";
    default: return {};
  }
}

// pow_scalar_expr: pow.Tensor_Scalar as fused.cc's pow_scalar_kernel picks
// its path: the same fast paths for the same exponents, else PowOp with the
// exponent converted as there.
std::string pow_scalar_expr(const Instr& ins, DType d, const Call& call) {
  const double e = ins.param.to_double();
  const std::string x = loaded(ins.args[0]);
  if (is_floating(d)) {
    const bool fast = d != DType::kFloat16;
    if (fast && e == 0.5) return call("SqrtOp{}", {x}, true);
    if (fast && e == -0.5) return call("RsqrtOp{}", {x}, true);
    if (fast && e == -1.0) return call("ReciprocalOp{}", {x}, true);
    if (fast && e == 2.0) return call("SquareOp{}", {x}, true);
    if (fast && e == 3.0) return call("CubeOp{}", {x}, true);
    if (fast && e == -2.0) return call("InvSquareOp{}", {x}, true);
    std::string ev;
    switch (d) {
      case DType::kFloat32: ev = bits_literal("float", ins.param.to<float>()); break;
      case DType::kFloat64: ev = bits_literal("double", ins.param.to<double>()); break;
      case DType::kFloat16: ev = scalar_literal(d, ins.param); break;
      default: ev = bits_literal("float", ins.param.to<float>()); break;  // bf16: exponent.to<float>()
    }
    return call("PowOp{}", {as_type(compute_type(d), x), ev});
  }
  if (e == 2.0) return call("SquareOp{}", {x});
  if (e == 3.0) return call("CubeOp{}", {x});
  return call("PowOp{}", {as_type(arith_type(d), x), scalar_literal(d, ins.param)});
}

// instr_expr: the value of one instruction, before rounding to its register's dtype.
std::string instr_expr(const FusedProgram& p, const Instr& ins, const Call& call) {
  const DType d = p.dtype(ins.args[0]);
  const std::string_view c = arith_type(d);
  switch (ins.op) {
    case FusedOp::kPowScalar: return pow_scalar_expr(ins, d, call);
    case FusedOp::kLogicalNot: return call("LogicalNotOp{}", {loaded(ins.args[0])});
    case FusedOp::kBitwiseNot:  // on the storage type, as the eager kernels (b8: !x)
      return call("BitwiseNotOp{}", {as_type(fused_storage_type(d), loaded(ins.args[0]))});
    case FusedOp::kAddAlpha:
    case FusedOp::kSubAlpha:
      return call(str_cat(ins.op == FusedOp::kAddAlpha ? "AddAlphaOp" : "SubAlphaOp", "<", c, ">{",
                          scalar_literal(d, ins.param), "}"),
                  {as_type(c, loaded(ins.args[0])), as_type(c, loaded(ins.args[1]))});
    case FusedOp::kWhere:
      return call("WhereOp{}", {fused_register(ins.args[0]), fused_register(ins.args[1]), fused_register(ins.args[2])});
    case FusedOp::kFma:
      return call("FmaOp{}", {as_type(c, loaded(ins.args[0])), as_type(c, loaded(ins.args[1])),
                              as_type(c, loaded(ins.args[2]))});
    case FusedOp::kCast:
      return call(str_cat("CastOp<", compute_type(p.dtype(ins.out)), ">{}"), {loaded(ins.args[0])});
    default: break;
  }
  if (std::string_view f = unary_functor(ins.op); !f.empty()) return call(f, {loaded(ins.args[0])}, true);
  const std::string_view f = binary_functor(ins.op);
  OPSPEC_INTERNAL_ASSERT(!f.empty());
  if (ins.op >= FusedOp::kEq) return call(f, {loaded(ins.args[0]), loaded(ins.args[1])});
  if (p.dtype(ins.args[1]) != d) {  // f16/bf16 mul/div by an f32 scalar (fused.cc's reduced_rhs_kernel)
    return call(f, {loaded(ins.args[0]), fused_register(ins.args[1])});
  }
  return call(f, {as_type(c, loaded(ins.args[0])), as_type(c, loaded(ins.args[1]))});
}

}  // namespace

std::string_view fused_storage_type(DType d) {
  switch (d) {
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kFloat16: return "opspec::Half";
    case DType::kBFloat16: return "opspec::BFloat16";
    case DType::kInt64: return "int64_t";
    case DType::kInt32: return "int32_t";
    case DType::kBool: return "bool";
  }
  OPSPEC_FAIL("fused source: unknown dtype");
}

std::string fused_register(int r) { return str_cat("r", r); }

std::string fused_instr_line(const FusedProgram& p, const Instr& ins, std::string_view indent, FusedSourceStyle style) {
  const std::string_view t = fused_storage_type(p.dtype(ins.out));
  std::string line = str_cat(indent, "const ", t, " ", fused_register(ins.out), " = store<", t, ">(",
                             instr_expr(p, ins, Call{style, p.dtype(ins.args[0])}), ");\n");
  if (const std::string check = instr_expr(p, ins, Call{style, p.dtype(ins.args[0]), Call::kCheck}); !check.empty()) {
    str_append(&line, indent, "exact |= ", check, ";\n");
  }
  return line;
}

std::string fused_constant_line(const FusedProgram& p, int r, std::string_view indent) {
  const FusedProgram::Reg& g = p.regs()[r];
  return OPSPEC_DISPATCH_ALL_DTYPES(g.dtype, "fused source", [&] {
    scalar_t v;
    std::memcpy(static_cast<void*>(&v), &g.constant_bits, sizeof(v));
    const std::string_view t = fused_storage_type(g.dtype);
    return str_cat(indent, "const ", t, " ", fused_register(r), " = ", bits_literal(t, v), ";  // ",
                   format_double(static_cast<double>(static_cast<opmath_t<scalar_t>>(v))), "\n");
  });
}

std::vector<bool> fused_used_registers(const FusedProgram& p) {
  std::vector<bool> used(p.regs().size(), false);
  for (const Instr& ins : p.instrs()) {
    for (int k = 0; k < ins.nargs; ++k) used[static_cast<size_t>(ins.args[k])] = true;
  }
  for (int k = 0; k < p.num_outputs(); ++k) used[static_cast<size_t>(p.output_reg(k))] = true;
  return used;
}

std::string fused_program_comment(const FusedProgram& p) {
  std::string text;
  for (int k = 0; k < p.num_inputs(); ++k) {
    str_append(&text, "//   ", fused_register(p.input_reg(k)), " = input ", k, " : ", dtype_short_name(p.input_dtype(k)),
               "\n");
  }
  const std::string listing = p.str();
  for (size_t at = 0; at < listing.size();) {
    const size_t end = std::min(listing.find('\n', at), listing.size());
    const std::string_view line = std::string_view(listing).substr(at, end - at);
    if (line.find(" = input ") == std::string_view::npos) str_append(&text, "//   ", line, "\n");
    at = end + 1;
  }
  return text;
}

void SourceFingerprint::add(std::string_view s) {
  add(s.size());
  bytes_.append(s);
}

void SourceFingerprint::add(const Scalar& s) {
  add(static_cast<uint8_t>(s.is_floating_point() ? 0 : s.is_integral() ? 1 : 2));
  s.is_floating_point() ? add(s.to_double()) : add(s.to_int());
}

void SourceFingerprint::add_structure(const FusedProgram& p) {
  for (const FusedProgram::Reg& r : p.regs()) {
    add(r.dtype);
    add(r.input);
    add(r.constant);
    add(r.constant_bits);
    add(r.uniform);
  }
  for (const Instr& ins : p.instrs()) {
    add(ins.op);
    add(ins.out);
    for (int k = 0; k < 3; ++k) add(ins.args[k]);
    add(ins.param);
  }
  for (int k = 0; k < p.num_inputs(); ++k) add(p.input_reg(k));
  for (int k = 0; k < p.num_outputs(); ++k) add(p.output_reg(k));
}

std::string SourceFingerprint::digest() const {
  const XXH128_hash_t h = XXH3_128bits(bytes_.data(), bytes_.size());
  return std::string(reinterpret_cast<const char*>(&h), sizeof h);
}

}  // namespace opspec::internal
