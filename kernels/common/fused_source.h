// fused_source.h: C++ text for the instructions of a FusedProgram
// (runtime/fused/fused_program.h), shared by the backends that generate code
// for fused kernels: the CPU's (kernels/cpu/fused_codegen.h) and CUDA's
// (kernels/cuda/fused_codegen.h). Each instruction becomes one line that calls
// the shared functor of elementwise_ops.h exactly as fused.cc's typed loops
// do (See Note [Fused kernels]).
#pragma once

#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "runtime/fused/fused_program.h"

namespace opspec::internal {

// The generated lines use these names, which each backend's prelude defines:
//   rN              register N (a local of its storage type);
//   load(v)         a stored value widened to its compute type (loops.h's load);
//   store<T>(v)     a compute value rounded to storage type T (loops.h's store);
//   from_bits<T>(b) the value whose bytes are the low sizeof(T) bytes of b;
//   apply<kFast>(f, x), needs_exact<kFast>(f, x)  only with FusedSourceStyle::fast_path.

// FusedSourceStyle: how generated lines call functors.
struct FusedSourceStyle {
  // fast_path: whether unary functor F (its text, "SinOp{}") has a fast path
  // for values of dtype d (See Note [Functor fast paths]). Where it does, its
  // value is `apply<kFast>(F{}, x)` and the line after it
  // `exact |= needs_exact<kFast>(F{}, x);`, so a prelude can take the fast
  // path; every other call is `F{}(args...)`. Null: no fast paths.
  bool (*fast_path)(std::string_view functor, DType d) = nullptr;
};

// fused_storage_type: the C++ type of a register of dtype d ("float", "opspec::Half", "bool", ...).
std::string_view fused_storage_type(DType d);

// fused_register: "rN".
std::string fused_register(int r);

// fused_instr_line: `<indent>const T rN = store<T>(expr);\n` for one
// instruction of p (and its needs_exact line, See FusedSourceStyle).
std::string fused_instr_line(const FusedProgram& p, const FusedProgram::Instr& ins, std::string_view indent,
                             FusedSourceStyle style = {});

// fused_constant_line: `<indent>const T rN = from_bits<T>(0x...ull);  // value\n` for constant register r.
std::string fused_constant_line(const FusedProgram& p, int r, std::string_view indent);

// fused_used_registers: per register, whether a live instruction or an output reads it.
std::vector<bool> fused_used_registers(const FusedProgram& p);

// fused_program_comment: the program listing as `//   ` comment lines, inputs
// without their sizes, so a kernel's text is the same for every shape.
std::string fused_program_comment(const FusedProgram& p);

// SourceFingerprint: a 128-bit digest of what a generated kernel's text
// depends on, so a warm launch finds its compiled kernel without generating
// and hashing the source.
class SourceFingerprint {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void add(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void add(std::string_view s);
  void add(const Scalar& s);
  // add_structure: p's registers, instructions, inputs and outputs (not its shape).
  void add_structure(const FusedProgram& p);
  // digest: 16 bytes.
  std::string digest() const;

 private:
  std::string bytes_;
};

}  // namespace opspec::internal
