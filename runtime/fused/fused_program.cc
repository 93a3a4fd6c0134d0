// fused_program.cc: FusedProgram: building, validating and planning fused
// elementwise programs. See Note [Fused kernels].
#include "runtime/fused/fused_program.h"

#include <algorithm>
#include <cstring>
#include <iterator>
#include <type_traits>

#include "absl/strings/str_join.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {
namespace {

using Instr = FusedProgram::Instr;
using Reg = FusedProgram::Reg;

// ---- Op classes ----

// kUnaryAny takes any dtype but b8, kUnaryAnyBool b8 too (sign, sgn),
// kUnaryIntegral integers and b8 only (bitwise_not).
enum class OpClass : uint8_t {
  kUnaryAny, kUnaryAnyBool, kUnaryFloating, kUnaryIntegral, kLogicalNot, kArith, kPredicate, kWhere, kFma, kCast
};

// kOpInfo: each FusedOp's name and class, in enum order.
struct OpInfo {
  std::string_view name;
  OpClass cls;
};
constexpr OpClass unary_class(UnaryKind rule) {
  if (rule == UnaryKind::kFloating || rule == UnaryKind::kFloatingOnly) return OpClass::kUnaryFloating;
  return rule == UnaryKind::kKeepDtypeBool ? OpClass::kUnaryAnyBool : OpClass::kUnaryAny;
}
constexpr OpInfo kOpInfo[] = {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) {#name, unary_class(UnaryKind::dtype_rule)},
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    {"gelu", OpClass::kUnaryFloating},   {"gelu_tanh", OpClass::kUnaryFloating},
    {"pow_scalar", OpClass::kUnaryAny},  {"logical_not", OpClass::kLogicalNot},
    {"bitwise_not", OpClass::kUnaryIntegral},
    {"add", OpClass::kArith},            {"sub", OpClass::kArith},
    {"mul", OpClass::kArith},            {"div", OpClass::kArith},
    {"pow", OpClass::kArith},            {"maximum", OpClass::kArith},
    {"minimum", OpClass::kArith},        {"add_alpha", OpClass::kArith},
    {"sub_alpha", OpClass::kArith},      {"div_trunc", OpClass::kArith},
    {"div_floor", OpClass::kArith},      {"remainder", OpClass::kArith},
    {"fmod", OpClass::kArith},           {"atan2", OpClass::kArith},
    {"bitwise_and", OpClass::kArith},    {"bitwise_or", OpClass::kArith},
    {"bitwise_xor", OpClass::kArith},    {"eq", OpClass::kPredicate},
    {"ne", OpClass::kPredicate},         {"lt", OpClass::kPredicate},
    {"le", OpClass::kPredicate},         {"gt", OpClass::kPredicate},
    {"ge", OpClass::kPredicate},         {"logical_and", OpClass::kPredicate},
    {"logical_or", OpClass::kPredicate}, {"logical_xor", OpClass::kPredicate},
    {"where", OpClass::kWhere},
    {"fma", OpClass::kFma},
    {"cast", OpClass::kCast},
};
// The hand-written rows must stay in enum order: spot-check both ends of them.
static_assert(kOpInfo[static_cast<size_t>(FusedOp::kGeluErf)].name == "gelu");
static_assert(kOpInfo[static_cast<size_t>(FusedOp::kBitwiseNot)].name == "bitwise_not");
static_assert(kOpInfo[static_cast<size_t>(FusedOp::kLogicalOr)].name == "logical_or");
static_assert(kOpInfo[static_cast<size_t>(FusedOp::kFma)].name == "fma");
static_assert(std::size(kOpInfo) == static_cast<size_t>(FusedOp::kCast) + 1, "kOpInfo must list every FusedOp");

OpClass op_class(FusedOp op) { return kOpInfo[static_cast<size_t>(op)].cls; }

int op_arity(FusedOp op) {
  switch (op_class(op)) {
    case OpClass::kArith:
    case OpClass::kPredicate: return 2;
    case OpClass::kWhere:
    case OpClass::kFma: return 3;
    default: return 1;
  }
}

std::string reg_name(int r) { return str_cat("r", r); }

}  // namespace

std::string_view fused_op_name(FusedOp op) { return kOpInfo[static_cast<size_t>(op)].name; }

FusedProgram::FusedProgram(IntArrayRef shape) : shape_(shape.begin(), shape.end()), numel_(compute_numel(shape)) {
  for (int64_t s : shape) OPSPEC_CHECK(s >= 0, "FusedProgram: negative size in shape ", format_sizes(shape));
}

int FusedProgram::new_reg(DType dtype) {
  OPSPEC_CHECK(!finalized_, "FusedProgram: the program is finalized; build a new one to add instructions");
  regs_.push_back(Reg{.dtype = dtype});
  return static_cast<int>(regs_.size()) - 1;
}

void FusedProgram::check_reg(int reg, std::string_view what) const {
  OPSPEC_CHECK(reg >= 0 && reg < static_cast<int>(regs_.size()), "FusedProgram: ", what, ": register ", reg,
               " does not exist (the program has ", regs_.size(), ")");
}

DType FusedProgram::dtype(int reg) const {
  check_reg(reg, "dtype");
  return regs_[reg].dtype;
}

IntArrayRef FusedProgram::input_sizes(int k) const { return input_sizes_.at(static_cast<size_t>(k)); }

int FusedProgram::add_input(DType dtype, IntArrayRef sizes) {
  bool broadcasts = sizes.size() <= shape_.size();
  for (size_t d = 0; broadcasts && d < sizes.size(); ++d) {
    const int64_t s = sizes[sizes.size() - 1 - d];
    broadcasts = s == 1 || s == shape_[shape_.size() - 1 - d];
  }
  OPSPEC_CHECK(broadcasts, "FusedProgram: input ",
               input_regs_.size(), " has sizes ", format_sizes(sizes), ", which do not broadcast to the shape ",
               format_sizes(shape_));
  const int r = new_reg(dtype);
  regs_[r].input = static_cast<int>(input_regs_.size());
  input_regs_.push_back(r);
  input_sizes_.emplace_back(sizes.begin(), sizes.end());
  return r;
}

int FusedProgram::add_constant(const Scalar& value, DType dtype) {
  const int r = new_reg(dtype);
  regs_[r].constant = true;
  OPSPEC_DISPATCH_ALL_DTYPES(dtype, "FusedProgram", [&] {
    const scalar_t v = value.to<scalar_t>();
    std::memcpy(&regs_[r].constant_bits, &v, sizeof(v));
  });
  return r;
}

int FusedProgram::add_cast(int x, DType dtype) {
  check_reg(x, "cast");
  if (regs_[x].dtype == dtype) return x;
  return add_op(FusedOp::kCast, {x}, Scalar(static_cast<int64_t>(dtype)));
}

int FusedProgram::add_op(FusedOp op, std::initializer_list<int> args, const Scalar& param) {
  const std::string_view name = fused_op_name(op);
  OPSPEC_CHECK(static_cast<int>(args.size()) == op_arity(op), "FusedProgram: ", name, " takes ", op_arity(op),
               " operand(s) but ", args.size(), " were given");
  Instr ins{.op = op, .nargs = static_cast<int>(args.size()), .param = param};
  int k = 0;
  for (int a : args) {
    check_reg(a, name);
    ins.args[k++] = a;
  }
  auto dt = [&](int i) { return regs_[ins.args[i]].dtype; };
  auto dname = [&](int i) { return dtype_short_name(dt(i)); };
  const DType d = dt(0);
  DType out = d;
  switch (op_class(op)) {
    case OpClass::kUnaryAny:
      OPSPEC_CHECK(d != DType::kBool, "FusedProgram: ", name, " does not take b8 operands");
      break;
    case OpClass::kUnaryAnyBool: break;
    case OpClass::kUnaryFloating:
      OPSPEC_CHECK(is_floating(d), "FusedProgram: ", name, " takes a floating operand, got ", dname(0));
      break;
    case OpClass::kUnaryIntegral:
      OPSPEC_CHECK(is_integral(d, /*include_bool=*/true), "FusedProgram: ", name,
                   " takes an integer or b8 operand, got ", dname(0));
      break;
    case OpClass::kLogicalNot: out = DType::kBool; break;
    case OpClass::kArith: {
      const bool reduced = (op == FusedOp::kMul || op == FusedOp::kDiv) &&
                           (d == DType::kFloat16 || d == DType::kBFloat16) && dt(1) == DType::kFloat32;
      OPSPEC_CHECK(dt(1) == d || reduced, "FusedProgram: ", name, " takes operands of one dtype, got ", dname(0),
                   " and ", dname(1));
      OPSPEC_CHECK(op != FusedOp::kDiv || is_floating(d), "FusedProgram: div takes floating operands, got ",
                   dname(0));
      OPSPEC_CHECK(op != FusedOp::kAtan2 || is_floating(d), "FusedProgram: atan2 takes floating operands, got ",
                   dname(0));
      OPSPEC_CHECK((op != FusedOp::kPow && op != FusedOp::kDivTrunc && op != FusedOp::kDivFloor &&
                    op != FusedOp::kRemainder && op != FusedOp::kFmod) ||
                       d != DType::kBool,
                   "FusedProgram: ", name, " does not take b8 operands");
      OPSPEC_CHECK((op != FusedOp::kBitwiseAnd && op != FusedOp::kBitwiseOr && op != FusedOp::kBitwiseXor) ||
                       is_integral(d, /*include_bool=*/true),
                   "FusedProgram: ", name, " takes integer or b8 operands, got ", dname(0));
      break;
    }
    case OpClass::kPredicate:
      OPSPEC_CHECK(dt(1) == d, "FusedProgram: ", name, " takes operands of one dtype, got ", dname(0), " and ",
                   dname(1));
      out = DType::kBool;
      break;
    case OpClass::kWhere:
      OPSPEC_CHECK(d == DType::kBool, "FusedProgram: where takes a b8 condition, got ", dname(0));
      OPSPEC_CHECK(dt(1) == dt(2), "FusedProgram: where takes values of one dtype, got ", dname(1), " and ",
                   dname(2));
      out = dt(1);
      break;
    case OpClass::kFma:
      OPSPEC_CHECK(d != DType::kBool, "FusedProgram: fma does not take b8 operands");
      OPSPEC_CHECK(dt(1) == d && dt(2) == d, "FusedProgram: fma takes operands of one dtype, got ", dname(0), ", ",
                   dname(1), " and ", dname(2));
      break;
    case OpClass::kCast: {
      const int64_t code = param.to_int();
      OPSPEC_CHECK(param.is_integral() && code >= 0 && code < kNumDTypes,
                   "FusedProgram: cast takes the target dtype as its param");
      out = static_cast<DType>(code);
      break;
    }
  }
  ins.out = new_reg(out);
  instrs_.push_back(ins);
  return ins.out;
}

void FusedProgram::add_output(int reg) {
  check_reg(reg, "output");
  OPSPEC_CHECK(!finalized_, "FusedProgram: the program is finalized; build a new one to add outputs");
  outputs_.push_back(reg);
}

void FusedProgram::finalize() {
  OPSPEC_CHECK(!finalized_, "FusedProgram: finalize called twice");
  const int nregs = static_cast<int>(regs_.size());
  // Dead code: only instructions an output depends on run.
  std::vector<bool> live(static_cast<size_t>(nregs), false);
  for (int r : outputs_) live[r] = true;
  for (auto it = instrs_.rbegin(); it != instrs_.rend(); ++it) {
    if (!live[it->out]) continue;
    for (int k = 0; k < it->nargs; ++k) live[it->args[k]] = true;
  }
  std::erase_if(instrs_, [&](const Instr& ins) { return !live[ins.out]; });

  // Uniform registers: constants, one-element inputs, and what only they feed.
  for (int r : input_regs_) regs_[r].uniform = compute_numel(input_sizes_[regs_[r].input]) == 1;
  for (Reg& reg : regs_) reg.uniform = reg.uniform || reg.constant;
  for (size_t i = 0; i < instrs_.size(); ++i) {
    Instr& ins = instrs_[i];
    bool uniform = true;
    for (int k = 0; k < ins.nargs; ++k) {
      if (regs_[ins.args[k]].uniform) {
        ins.uniform_mask |= 1u << k;
      } else {
        uniform = false;
      }
    }
    regs_[ins.out].uniform = uniform;
    (uniform ? prologue_ : body_).push_back(static_cast<int>(i));
  }

  // Outputs: the first output of a per-tile instruction's register is written
  // in place by it; the others are copied (or filled, when uniform) per tile.
  direct_output_.assign(static_cast<size_t>(nregs), -1);
  std::vector<bool> computed(static_cast<size_t>(nregs), false);
  for (int i : body_) computed[instrs_[i].out] = true;
  for (int k = 0; k < num_outputs(); ++k) {
    const int r = outputs_[k];
    if (computed[r] && direct_output_[r] < 0) {
      direct_output_[r] = k;
    } else {
      stored_outputs_.push_back(k);
    }
  }

  // Scratch slots: tile inputs first, then each per-tile result not written in
  // place; a slot is freed after its register's last reader, never within one
  // instruction (so no loop reads the buffer it writes).
  const int nbody = static_cast<int>(body_.size());
  std::vector<int> last_use(static_cast<size_t>(nregs), -1);
  for (int j = 0; j < nbody; ++j) {
    const Instr& ins = instrs_[body_[j]];
    for (int k = 0; k < ins.nargs; ++k) last_use[ins.args[k]] = j;
  }
  for (int k : stored_outputs_) last_use[outputs_[k]] = nbody;
  std::vector<int> free_slots;
  auto alloc = [&]() {
    if (free_slots.empty()) return num_slots_++;
    const int s = free_slots.back();
    free_slots.pop_back();
    return s;
  };
  for (int r : input_regs_) {
    if (!regs_[r].uniform && last_use[r] >= 0) {
      tile_inputs_.push_back(r);
      regs_[r].slot = alloc();
    }
  }
  for (int j = 0; j < nbody; ++j) {
    const Instr& ins = instrs_[body_[j]];
    if (direct_output_[ins.out] < 0) regs_[ins.out].slot = alloc();
    for (int k = 0; k < ins.nargs; ++k) {
      const int a = ins.args[k];
      const bool first = std::find(ins.args, ins.args + k, a) == ins.args + k;
      if (first && regs_[a].slot >= 0 && last_use[a] == j) free_slots.push_back(regs_[a].slot);
    }
  }
  finalized_ = true;
}

std::string FusedProgram::str() const {
  std::string out;
  for (size_t r = 0; r < regs_.size(); ++r) {
    const Reg& reg = regs_[r];
    if (reg.input >= 0) {
      str_append(&out, reg_name(static_cast<int>(r)), " = input ", reg.input, " : ", dtype_short_name(reg.dtype),
                 format_sizes(input_sizes_[reg.input]), "\n");
    } else if (reg.constant) {
      double v = 0;
      OPSPEC_DISPATCH_ALL_DTYPES(reg.dtype, "FusedProgram", [&] {
        scalar_t x;
        std::memcpy(static_cast<void*>(&x), &reg.constant_bits, sizeof(x));
        if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
          v = static_cast<double>(static_cast<float>(x));
        } else {
          v = static_cast<double>(x);
        }
      });
      str_append(&out, reg_name(static_cast<int>(r)), " = constant ", format_double(v), " : ",
                 dtype_short_name(reg.dtype), "\n");
    }
  }
  for (const Instr& ins : instrs_) {
    std::vector<std::string> args;
    for (int k = 0; k < ins.nargs; ++k) args.push_back(reg_name(ins.args[k]));
    const bool has_param = ins.op == FusedOp::kAddAlpha || ins.op == FusedOp::kSubAlpha || ins.op == FusedOp::kPowScalar;
    if (has_param) args.push_back(ins.param.str());
    str_append(&out, reg_name(ins.out), " = ", fused_op_name(ins.op), "(", absl::StrJoin(args, ", "), ") : ",
               dtype_short_name(regs_[ins.out].dtype), "\n");
  }
  for (size_t k = 0; k < outputs_.size(); ++k) str_append(&out, "output ", k, " = ", reg_name(outputs_[k]), "\n");
  return out;
}

}  // namespace opspec::internal
