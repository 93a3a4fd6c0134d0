// fused_program.h: FusedProgram, the device-neutral IR of a fused elementwise
// kernel: a straight-line program over per-tile registers. The fused backend
// (runtime/compile/fusion.h) builds these from graphs; each device runs them
// through the FusedKernel it registers (fused_kernel.h): the CPU interprets
// them (kernels/cpu/fused.h) or generates C++ (kernels/cpu/fused_codegen.h),
// CUDA generates source (kernels/cuda/fused_codegen.h).
// See Note [Fused kernels].
#pragma once

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/core/tensor.h"

namespace opspec::internal {

// Note [Fused kernels]
// A fused kernel evaluates a chain (or DAG) of elementwise ops in one pass over
// its output shape: each input is read once and each output written once,
// instead of one full-size temporary per op. The program is a list of SSA
// instructions over registers; a register holds one value per element of a
// *tile* (kFusedTile consecutive output elements) in the register's storage
// dtype. Execution, per tile:
//   - inputs contiguous with the program's shape are read in place; any other
//     input (broadcast, transposed, sliced) is gathered into a scratch slot
//     with index arithmetic over its coalesced strides;
//   - each instruction runs one loop over the tile, written as the eager
//     kernels' loops (the same contiguous_loop of loops.h, so the compiler
//     vectorizes them the same way), reading its inputs from scratch slots or
//     input memory and writing a scratch slot, or the output tensor directly
//     when the register is an output (on the CPU, an output of 8 MiB or more
//     is written to a tile buffer and streamed out: See Note [Streaming
//     stores] in kernels/cpu/cache_hints.h).
// Registers whose value is the same for every element (scalar constants,
// one-element inputs, and anything computed only from those) are *uniform*:
// they are computed once per launch before the tiles and read as broadcast
// scalars, as cpu_kernel treats stride-0 operands. Scratch slots are reused
// once a register is dead, so a long chain touches a few tile-sized buffers
// that stay in L1. Tiles are split over OpenMP threads above kGrainSize
// elements; each element's value never depends on the split, so results are
// deterministic whatever the thread count.
//
// Bit-identity with eager. The instructions are exactly the steps eager kernels
// take: every op calls the shared functor of elementwise_ops.h (See Note
// [Shared elementwise functors]) on its compute type, f16/bf16 registers are
// widened on load and rounded on store at every instruction (See Note [Reduced
// precision math]), and kCast converts with CastOp as cast_for_compute does.
// The fuser emits one kCast wherever an eager kernel would have cast an input
// (type promotion, wrapped-number scalars), so a fused chain reproduces eager's
// rounding points one for one and its results are bit-identical in every dtype.

// kFusedTile: output elements per tile. A scratch slot holds a tile of 8-byte
// elements (4 KiB), so the slots a chain keeps live and the tile's input
// chunks stay in L1 while inputs stream from memory; long enough that the
// per-instruction overhead (one indirect call per op per tile) is small.
// Measured on the ten-op cheap chain (BM_ElementwiseChain/fused_cheap, 4M f32,
// 2 threads): 256: 3.6 ms, 512: 2.3 ms, 1024: 2.7 ms, 2048: 2.9 ms.
inline constexpr int64_t kFusedTile = 512;

// FusedOp: what one instruction computes: one enumerator per row of
// runtime/ops/unary_ops.def (See Note [One row per op]), then the rest. Operand dtypes (checked by
// FusedProgram::add_op), with D the dtype of the first value operand:
//   unary math (the unary_ops.def rows, kGeluErf .. kPowScalar): x: D (not
//     b8; floating only for kFloating rows and gelu) -> D;
//   kLogicalNot: x: any -> b8;
//   kBitwiseNot: x: integer or b8 -> D (~x; !x for b8);
//   arithmetic (kAdd .. kBitwiseXor): a: D, b: D -> D (b8 computes in int32 as
//     eager does); kMul and kDiv also take b: f32 with D f16/bf16, eager's
//     "original scalar value" path for a one-element right operand; kDiv and
//     kAtan2 take floating D, the bitwise ops integer or b8 D, kDivTrunc ..
//     kFmod no b8;
//   predicates (kEq .. kLogicalXor): a: D, b: D -> b8;
//   kWhere: cond: b8, a: D, b: D -> D (selects bits);
//   kFma: a: D, b: D, c: D -> D (not b8): a * b + c rounded once (FmaOp),
//     addcmul's and lerp's step (See Note [Ternary pointwise ops]);
//   kCast: x: any -> the requested dtype (CastOp, as copies convert).
// kAddAlpha / kSubAlpha take alpha, kPowScalar the exponent, as the param.
enum class FusedOp : uint8_t {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) k##functor,
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  kGeluErf, kGeluTanh, kPowScalar,
  kLogicalNot, kBitwiseNot,
  kAdd, kSub, kMul, kDiv, kPow, kMaximum, kMinimum, kAddAlpha, kSubAlpha,
  kDivTrunc, kDivFloor, kRemainder, kFmod, kAtan2, kBitwiseAnd, kBitwiseOr, kBitwiseXor,
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr, kLogicalXor,
  kWhere,
  kFma,
  kCast,
};

// fused_op_name: "neg", "gelu_tanh", "add_alpha", "where", "cast", ...
std::string_view fused_op_name(FusedOp op);

// FusedProgram: a fused kernel's instructions over one output shape, the same
// for every device. Build it with the add_* functions (each returns the
// register it defines), then call finalize() once; a finalized program is
// immutable, and a device's FusedKernel (fused_kernel.h) runs it. Errors (bad register, dtype or shape) throw
// opspec::Error naming the instruction.
class FusedProgram {
 public:
  explicit FusedProgram(IntArrayRef shape);

  // add_input: the register of input k (k = the number of inputs so far), a
  // tensor of dtype and sizes that broadcast to the program's shape.
  int add_input(DType dtype, IntArrayRef sizes);
  // add_constant: a uniform register holding value converted to dtype.
  int add_constant(const Scalar& value, DType dtype);
  // add_op: one elementwise op over registers; the result dtype follows the
  // operand rules of FusedOp. param: alpha or exponent where the op takes one.
  int add_op(FusedOp op, std::initializer_list<int> args, const Scalar& param = Scalar());
  // add_cast: x converted to dtype (x itself when it already has it).
  int add_cast(int x, DType dtype);
  // add_output: output k (in call order) is register reg, written contiguous
  // with the program's shape.
  void add_output(int reg);
  // finalize: plans the execution (dead-code removal, uniform registers,
  // scratch slots). Required before a kernel runs it.
  void finalize();

  IntArrayRef shape() const { return shape_; }
  int num_inputs() const { return static_cast<int>(input_regs_.size()); }
  int num_outputs() const { return static_cast<int>(outputs_.size()); }
  // dtype: a register's storage dtype.
  DType dtype(int reg) const;
  // input_dtype / input_sizes / output_dtype: what run_fused expects.
  DType input_dtype(int k) const { return dtype(input_regs_.at(k)); }
  IntArrayRef input_sizes(int k) const;
  DType output_dtype(int k) const { return dtype(outputs_.at(k)); }
  // num_instructions: ops and casts (after finalize: the live ones).
  int num_instructions() const { return static_cast<int>(instrs_.size()); }
  // num_scratch_slots: tile buffers each thread needs (after finalize).
  int num_scratch_slots() const { return num_slots_; }
  bool finalized() const { return finalized_; }
  // str: one line per instruction, e.g. "r3 = mul(r0, r2) : f32", "r1 = input 1 : f32[8, 1]".
  std::string str() const;

  // Reg: one register.
  struct Reg {
    DType dtype = DType::kFloat32;
    int input = -1;         // input index, for input registers
    bool constant = false;  // a scalar constant, whose bits are constant_bits
    uint64_t constant_bits = 0;
    bool uniform = false;   // one value for every element (set by finalize)
    int slot = -1;          // scratch slot (set by finalize)
  };
  // Instr: one instruction; uniform_mask marks its uniform operands (set by finalize).
  struct Instr {
    FusedOp op;
    int out = -1;
    int args[3] = {-1, -1, -1};
    int nargs = 0;
    Scalar param;
    unsigned uniform_mask = 0;
  };
  // regs / instrs / input_reg / output_reg: the planned program, for code
  // generators and executors; instrs are the live ones, in order.
  const std::vector<Reg>& regs() const { return regs_; }
  const std::vector<Instr>& instrs() const { return instrs_; }
  int input_reg(int k) const { return input_regs_.at(static_cast<size_t>(k)); }
  int output_reg(int k) const { return outputs_.at(static_cast<size_t>(k)); }
  int64_t numel() const { return numel_; }
  // prologue / body: indices into instrs() of the uniform instructions (run
  // once per launch) and of the per-tile ones, in order (set by finalize).
  const std::vector<int>& prologue() const { return prologue_; }
  const std::vector<int>& body() const { return body_; }
  // tile_inputs: the non-uniform input registers a tiled executor reads per tile.
  const std::vector<int>& tile_inputs() const { return tile_inputs_; }
  // direct_output: per register, the output its instruction writes in place, or -1.
  const std::vector<int>& direct_output() const { return direct_output_; }
  // stored_outputs: outputs copied (or filled, when uniform) from their register per tile.
  const std::vector<int>& stored_outputs() const { return stored_outputs_; }

 private:
  int new_reg(DType dtype);
  void check_reg(int reg, std::string_view what) const;

  SizeVec shape_;
  int64_t numel_ = 0;
  std::vector<Reg> regs_;
  std::vector<Instr> instrs_;
  std::vector<int> input_regs_;
  std::vector<SizeVec> input_sizes_;
  std::vector<int> outputs_;
  // Planned by finalize (see fused.cc).
  bool finalized_ = false;
  int num_slots_ = 0;
  std::vector<int> prologue_;        // uniform instructions, once per launch
  std::vector<int> body_;            // per-tile instructions
  std::vector<int> tile_inputs_;     // non-uniform input registers read per tile
  std::vector<int> direct_output_;   // per register: output written in place, or -1
  std::vector<int> stored_outputs_;  // outputs copied from their register per tile
};

}  // namespace opspec::internal
