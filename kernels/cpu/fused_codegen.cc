// fused_codegen.cc: C++ source for fused programs on the CPU, compiled at run
// time, and the policy for when fused kernels use it. See Note [Generated CPU
// kernels].
#include "kernels/cpu/fused_codegen.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/fused_source.h"
#include "kernels/cpu/cpu_jit.h"
#include "kernels/cpu/loops.h"

namespace opspec::internal {

// Note [Generated CPU kernels]
// The interpreter (fused.cc) runs each instruction as its own loop over a
// tile, storing every intermediate to an L1 buffer: on cheap ops those stores
// bound it (11 instructions of the cheap chain: 0.33 cycles an element each,
// where one read and one write of memory allow about 0.4 for the whole
// chain). A generated kernel is one loop over the tile that evaluates every
// instruction in registers and stores only the outputs, as Inductor's C++
// backend and MLX's compiled CPU kernels do. Its lines are the same text the
// CUDA generator emits (kernels/common/fused_source.h): each calls the shared
// functor on the same compute type and rounds f16/bf16 at the same points,
// so it is bit-identical to the interpreter and to eager. Functor fast paths
// (See Note [Functor fast paths]) are kept: the tile runs first with every
// fast path, OR-ing needs_exact over its inputs, and only a tile with an
// input that needs the exact path runs again with operator() alone; each
// element's value is the same either way. The host side of fused.cc is
// unchanged: tiles, threads, gathered (broadcast, strided) inputs, streamed
// outputs; the generated function sees contiguous tiles only, so one
// compiled kernel serves every layout and shape of a structure.
// When: compiling costs about half a second (once per structure per machine:
// the disk cache keeps it, See Note [Run-time CPU compilation]), so under the
// default policy (kAuto) a kernel compiles at its first run over
// kCodegenRunElements elements (64K: a real model's activations; a
// generated kernel saves ~1 ns an element, so a few thousand such runs repay
// the compile, and the disk cache makes later processes free), or once its
// runs total kCodegenTotalElements (a small kernel run often); the small
// programs of unit tests and specs stay interpreted. A missing or failing
// compiler leaves kAuto on the interpreter with one warning per compiler;
// kAlways (OPSPEC_CPU_CODEGEN=always) compiles every kernel when it is made
// and throws what the compiler said.

namespace {

// kCpuPrelude: "opspec/cpu_prelude.h", the names fused_source.h's lines use.
constexpr const char kCpuPrelude[] = R"cpp(// opspec/cpu_prelude.h: what generated CPU kernels include first.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kernels/common/elementwise_ops.h"
#include "kernels/common/opmath.h"
#include "runtime/core/half.h"

namespace opspec::internal::cpu_jit {

// load: a stored value widened to its compute type (loops.h's load).
template <class T> inline __attribute__((always_inline)) opmath_t<T> load(T v) { return static_cast<opmath_t<T>>(v); }
inline __attribute__((always_inline)) float load(opspec::Half v) { return half_bits_to_float(v.bits); }

// store<T>: a compute value rounded to storage type T (loops.h's store).
template <class T, class V> inline __attribute__((always_inline)) T store(V v) {
  if constexpr (std::is_same_v<T, opspec::Half>) {
    opspec::Half h;
    h.bits = float_to_half_bits(static_cast<float>(v));
    return h;
  } else {
    return static_cast<T>(v);
  }
}

// from_bits<T>: the value whose bytes are the low sizeof(T) bytes of b.
template <class T> inline T from_bits(unsigned long long b) {
  T v;
  std::memcpy(static_cast<void*>(&v), &b, sizeof(T));
  return v;
}

// apply<kFast>: f(x), through f's fast path when kFast and f has one for x
// (See Note [Functor fast paths]).
template <bool kFast, class F, class X>
inline __attribute__((always_inline)) auto apply(const F& f, X x) {
  if constexpr (kFast && requires { f.fast(x); f.needs_exact(x); }) {
    return f.fast(x);
  } else {
    return f(x);
  }
}

// needs_exact<kFast>: 1 when apply<kFast>(f, x) took a fast path x is outside of.
template <bool kFast, class F, class X>
inline __attribute__((always_inline)) unsigned needs_exact(const F& f, X x) {
  if constexpr (kFast && requires { f.fast(x); f.needs_exact(x); }) {
    return f.needs_exact(x) ? 1u : 0u;
  } else {
    return 0u;
  }
}

}  // namespace opspec::internal::cpu_jit
)cpp";

struct CompiledTiles {
  std::mutex mu;
  absl::flat_hash_map<std::string, FusedTileFn> kernels;  // by structure + name
};

CompiledTiles& compiled_tiles() {
  static CompiledTiles* c = new CompiledTiles;  // never destroyed: kernels may run during static destruction
  return *c;
}

// The policy: -1 until read from the environment, then a CpuFusedCodegen.
std::atomic<int> codegen_policy{-1};

CpuFusedCodegen policy_from_env() {
  const char* v = std::getenv("OPSPEC_CPU_CODEGEN");
  const std::string_view s = v == nullptr ? "" : v;
  if (s.empty() || s == "auto") return CpuFusedCodegen::kAuto;
  if (s == "always" || s == "1") return CpuFusedCodegen::kAlways;
  if (s == "never" || s == "0") return CpuFusedCodegen::kNever;
  OPSPEC_FAIL("OPSPEC_CPU_CODEGEN is '", shorten(s), "'; expected auto, always or never");
}

// kHeavy<F>: F is one of the transcendental functors, bound by arithmetic
// (kComputeBound in elementwise_ops.h).
template <class F>
constexpr bool kHeavy = requires { requires F::kComputeBound; };

// heavy: whether an instruction calls a compute-bound functor.
bool heavy(const FusedProgram::Instr& ins) {
  switch (ins.op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  case FusedOp::k##functor: return kHeavy<functor##Op>;
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    case FusedOp::kGeluErf: return kHeavy<GeluErfOp>;
    case FusedOp::kGeluTanh: return kHeavy<GeluTanhOp>;
    case FusedOp::kPowScalar:
    case FusedOp::kPow: return kHeavy<PowOp>;
    case FusedOp::kAtan2: return kHeavy<Atan2Op>;
    default: return false;
  }
}

// kFastPath<F>: F has a fast path for float, as cpu_kernel's loops check it.
template <class F>
constexpr bool kFastPath = loops_detail::HasFastPath<F, float>;

// has_fast_path: FusedSourceStyle::fast_path for the CPU: the unary functors
// with a fast path, on dtypes that compute in float.
bool has_fast_path(std::string_view functor, DType d) {
  if (d != DType::kFloat32 && d != DType::kFloat16 && d != DType::kBFloat16) return false;
#define OPSPEC_UNARY_OP(name, functor_name, dtype_rule, summary) \
  if (functor == #functor_name "Op{}") return kFastPath<functor_name##Op>;
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  if (functor == "GeluErfOp{}") return kFastPath<GeluErfOp>;
  if (functor == "GeluTanhOp{}") return kFastPath<GeluTanhOp>;
  if (functor == "SquareOp{}") return kFastPath<SquareOp>;
  if (functor == "CubeOp{}") return kFastPath<CubeOp>;
  if (functor == "InvSquareOp{}") return kFastPath<InvSquareOp>;
  return false;
}

// Segment: the per-element instructions (indices into instrs()) of one loop.
struct Segment {
  std::vector<int> instrs;
};

// split_loops: the per-element instructions as loops: runs of cheap ops
// share a loop, and each compute-bound functor gets one of its own (See
// Note [Generated CPU kernels]); always one loop at least.
std::vector<Segment> split_loops(const FusedProgram& p) {
  std::vector<Segment> segments(1);
  for (int i = 0; i < static_cast<int>(p.instrs().size()); ++i) {
    const FusedProgram::Instr& ins = p.instrs()[i];
    if (p.regs()[ins.out].uniform) continue;
    const bool alone = heavy(ins);
    if (alone && !segments.back().instrs.empty()) segments.emplace_back();
    segments.back().instrs.push_back(i);
    if (alone) segments.emplace_back();
  }
  if (segments.size() > 1 && segments.back().instrs.empty()) segments.pop_back();
  return segments;
}

}  // namespace

std::string fused_cpu_source(const FusedProgram& p, std::string_view name) {
  OPSPEC_CHECK(p.finalized(), "fused_cpu_source: the program is not finalized; call finalize() after building it");
  const auto& regs = p.regs();
  const std::string fn = cpu_jit_identifier(name);
  const std::vector<bool> used = fused_used_registers(p);
  const FusedSourceStyle style{.fast_path = &has_fast_path};
  const std::vector<Segment> segments = split_loops(p);
  const int last = static_cast<int>(segments.size()) - 1;
  // Where each per-element register is defined (-1: an input, read in any loop) and last read.
  std::vector<int> defined(regs.size(), -1), last_use(regs.size(), -1);
  for (int sgi = 0; sgi <= last; ++sgi) {
    for (int i : segments[sgi].instrs) {
      const FusedProgram::Instr& ins = p.instrs()[i];
      defined[ins.out] = sgi;
      for (int k = 0; k < ins.nargs; ++k) last_use[ins.args[k]] = std::max(last_use[ins.args[k]], sgi);
    }
  }
  // store_in: the loop that writes output k (where its register is defined, else the last).
  auto store_in = [&](int k) {
    const int r = p.output_reg(k);
    return regs[r].uniform || regs[r].input >= 0 ? last : defined[r];
  };
  // buffered: registers a later loop reads, kept in a tile buffer between loops.
  std::vector<bool> buffered(regs.size(), false);
  for (size_t r = 0; r < regs.size(); ++r) {
    buffered[r] = !regs[r].uniform && regs[r].input < 0 && defined[r] >= 0 && last_use[r] > defined[r];
  }

  std::string src;
  str_append(&src, "// ", fn, ": an opspec fused elementwise kernel for the CPU (kernels/cpu/fused_codegen.cc); program:\n",
             fused_program_comment(p), "#include \"opspec/cpu_prelude.h\"\n\n",
             "namespace {\nusing namespace opspec::internal;\nusing namespace opspec::internal::cpu_jit;\n\n",
             "// tile: the kernel over n elements, every functor through its fast path when kFast;\n",
             "// returns whether an input needed a functor's exact path.\n",
             "template <bool kFast>\ninline unsigned tile(const int64_t n, const void* const* in, void* const* out) {\n");
  // Inputs: per-element pointers, or the one value of a uniform input.
  for (int k = 0; k < p.num_inputs(); ++k) {
    const int r = p.input_reg(k);
    if (!used[static_cast<size_t>(r)]) continue;
    const std::string_view t = fused_storage_type(p.input_dtype(k));
    if (regs[r].uniform) {
      str_append(&src, "  const ", t, " ", fused_register(r), " = *static_cast<const ", t, "*>(in[", k, "]);\n");
    } else {
      str_append(&src, "  const ", t, "* __restrict__ in", k, " = static_cast<const ", t, "*>(in[", k, "]);\n");
    }
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    const std::string_view t = fused_storage_type(p.output_dtype(k));
    str_append(&src, "  ", t, "* __restrict__ out", k, " = static_cast<", t, "*>(out[", k, "]);\n");
  }
  str_append(&src, "  unsigned exact = 0;\n");
  for (size_t r = 0; r < regs.size(); ++r) {
    if (buffered[r]) {
      str_append(&src, "  alignas(64) ", fused_storage_type(regs[r].dtype), " ", fused_register(static_cast<int>(r)),
                 "_tile[", kFusedTile, "];  // n <= ", kFusedTile, ": fused.cc's tiles\n");
    }
  }
  // Uniform registers: constants, then the uniform instructions, once per tile.
  for (size_t r = 0; r < regs.size(); ++r) {
    if (regs[r].constant && used[r]) str_append(&src, fused_constant_line(p, static_cast<int>(r), "  "));
  }
  for (const FusedProgram::Instr& ins : p.instrs()) {
    if (regs[ins.out].uniform) str_append(&src, fused_instr_line(p, ins, "  ", style));
  }
  // The loops: loads, the per-element instructions, the stores.
  for (int sgi = 0; sgi <= last; ++sgi) {
    std::string body;
    // read_here: registers this loop reads that it does not define.
    std::vector<bool> read_here(regs.size(), false);
    for (int i : segments[sgi].instrs) {
      const FusedProgram::Instr& ins = p.instrs()[i];
      for (int k = 0; k < ins.nargs; ++k) read_here[ins.args[k]] = defined[ins.args[k]] != sgi;
    }
    for (int k = 0; k < p.num_outputs(); ++k) {
      if (store_in(k) == sgi && defined[p.output_reg(k)] != sgi) read_here[p.output_reg(k)] = true;
    }
    for (int k = 0; k < p.num_inputs(); ++k) {
      const int r = p.input_reg(k);
      if (read_here[r] && !regs[r].uniform) {
        str_append(&body, "    const ", fused_storage_type(p.input_dtype(k)), " ", fused_register(r), " = in", k, "[i];\n");
      }
    }
    for (size_t r = 0; r < regs.size(); ++r) {
      if (read_here[r] && buffered[r]) {
        const std::string reg = fused_register(static_cast<int>(r));
        str_append(&body, "    const ", fused_storage_type(regs[r].dtype), " ", reg, " = ", reg, "_tile[i];\n");
      }
    }
    for (int i : segments[sgi].instrs) {
      const FusedProgram::Instr& ins = p.instrs()[i];
      str_append(&body, fused_instr_line(p, ins, "    ", style));
      if (buffered[ins.out]) {
        const std::string reg = fused_register(ins.out);
        str_append(&body, "    ", reg, "_tile[i] = ", reg, ";\n");
      }
    }
    for (int k = 0; k < p.num_outputs(); ++k) {
      if (store_in(k) == sgi) str_append(&body, "    out", k, "[i] = ", fused_register(p.output_reg(k)), ";\n");
    }
    // The reduction clause only where a fast path is checked: GCC does not
    // vectorize a loop whose reduction variable it never updates.
    const bool checks = body.find("exact |=") != std::string::npos;
    str_append(&src, checks ? "#pragma omp simd reduction(| : exact)\n" : "#pragma omp simd\n",
               "  for (int64_t i = 0; i < n; ++i) {\n", body, "  }\n");
  }
  str_append(&src, "  return exact;\n}\n\n}  // namespace\n\n",
             "extern \"C\" __attribute__((visibility(\"default\"))) void ", fn,
             "(const int64_t n, const void* const* in, void* const* out) {\n",
             "  if (tile<true>(n, in, out) != 0) tile<false>(n, in, out);\n}\n");
  return src;
}

FusedTileFn compile_fused_cpu(const FusedProgram& p, std::string_view name) {
  OPSPEC_CHECK(p.finalized(), "compile_fused_cpu: the program is not finalized; call finalize() after building it");
  SourceFingerprint f;
  f.add(name);
  f.add_structure(p);
  const std::string key = f.digest();
  CompiledTiles& c = compiled_tiles();
  {
    std::lock_guard<std::mutex> lock(c.mu);
    if (auto it = c.kernels.find(key); it != c.kernels.end()) return it->second;
  }
  const std::shared_ptr<const CpuJitLibrary> lib =
      cpu_jit_compile(cpu_jit_identifier(name), fused_cpu_source(p, name), {{"opspec/cpu_prelude.h", kCpuPrelude}});
  const auto fn = reinterpret_cast<FusedTileFn>(lib->symbol(cpu_jit_identifier(name)));
  std::lock_guard<std::mutex> lock(c.mu);
  return c.kernels.try_emplace(key, fn).first->second;
}

CpuFusedCodegen cpu_fused_codegen() {
  int v = codegen_policy.load(std::memory_order_acquire);
  if (v < 0) {
    v = static_cast<int>(policy_from_env());
    int expected = -1;
    if (!codegen_policy.compare_exchange_strong(expected, v)) v = expected;  // another thread read it first
  }
  return static_cast<CpuFusedCodegen>(v);
}

void set_cpu_fused_codegen(CpuFusedCodegen p) { codegen_policy.store(static_cast<int>(p), std::memory_order_release); }

}  // namespace opspec::internal
