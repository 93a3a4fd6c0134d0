// fused_codegen.cc: CUDA C++ generation for fused elementwise programs, their
// launch arguments, and run_fused_cuda. See Note [Fused CUDA kernels].
#include "kernels/cuda/fused_codegen.h"

#include <xxhash.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "kernels/common/coalesce.h"
#include "kernels/common/opmath.h"
#include "kernels/common/scalar_as.h"
#include "kernels/cuda/cuda_device.h"
#include "runtime/fused/fused_kernel.h"

namespace opspec::internal {

// Note [Fused CUDA kernels]
// A fused group on cuda tensors runs as one generated kernel: the program's
// instructions (See Note [Fused kernels]) become straight-line CUDA C++ over
// one output element, so each input is read once and each output written
// once, with every intermediate in registers. The text mirrors run_fused's
// typed loops one for one: each instruction calls the shared functor of
// elementwise_ops.h (the generated source includes the same header, See
// Note [Embedded NVRTC headers]) on the same compute type, f16/bf16 values
// are widened on load and rounded on store at every instruction with
// half.h's own conversions, constants and parameters (alpha, exponents) are
// converted on the host exactly as the CPU converts them and embedded as
// bit patterns, and pow's fast paths are picked by the same rules. So a
// fused CUDA kernel is bit-identical to the CPU except where libdevice's
// transcendental functions (exp, sin, tanh, ...) differ from the host's in
// the last ulps. Uniform registers (constants, one-element inputs and what
// only they feed) are computed once per thread before the loop.
// The kernel is a grid-stride loop over the output, four elements in flight
// per thread so loads overlap. Inputs contiguous with the program's shape
// are indexed directly; any other (broadcast, transposed, sliced) input is
// read through its coalesced sizes and strides, passed as kernel arguments,
// so one kernel serves every shape with the same structure. Indexing is
// 32-bit when every index and offset fits. The kernel's name is the fusion
// group's readable name (fused_relu_mul_add_0); NVRTC's caches key it by its
// source, which encodes the program and layout but no sizes (See Note
// [Run-time CUDA compilation]), and run_fused_cuda keeps the compiled
// kernel of each (program structure, layout, device arch) so a warm launch
// neither generates nor hashes source.

namespace {

using Instr = FusedProgram::Instr;

// kBlock: threads per block; kUnroll: elements in flight per thread.
constexpr uint32_t kBlock = 256;
constexpr int kUnroll = 4;
// kMaxBlocksPerSm / kMaxGrid: the grid-stride loop's grid (kMaxGrid keeps
// the 32-bit loop's i + kUnroll * step far from overflow).
constexpr int64_t kMaxBlocksPerSm = 8;
constexpr int64_t kMaxGrid = 4096;
// kIndex32Limit: numel and offsets below it use 32-bit indexing.
constexpr int64_t kIndex32Limit = int64_t{1} << 30;

std::string_view storage_type(DType d) {
  switch (d) {
    case DType::kFloat32: return "float";
    case DType::kFloat64: return "double";
    case DType::kFloat16: return "opspec::Half";
    case DType::kBFloat16: return "opspec::BFloat16";
    case DType::kInt64: return "int64_t";
    case DType::kInt32: return "int32_t";
    case DType::kBool: return "bool";
  }
  OPSPEC_FAIL("fused_cuda_source: unknown dtype");
}

// compute_type / arith_type: opmath_t and arith_t of loops.h, spelled out.
std::string_view compute_type(DType d) {
  return d == DType::kFloat16 || d == DType::kBFloat16 ? "float" : storage_type(d);
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

// compute_literal: s converted to T's arithmetic compute type as the CPU's
// scalar_as<T> converts alpha and exponents.
std::string scalar_literal(DType d, const Scalar& s) {
  return OPSPEC_DISPATCH_ALL_DTYPES(d, "fused_cuda_source", [&] {
    return bits_literal(arith_type(d), scalar_as<scalar_t>(s));
  });
}

std::string reg(int r) { return str_cat("r", r); }
std::string loaded(int r) { return str_cat("load(", reg(r), ")"); }
std::string as_type(std::string_view type, const std::string& v) { return str_cat("static_cast<", type, ">(", v, ")"); }

// functor: the elementwise_ops.h functor of a unary op.
std::string_view unary_functor(FusedOp op) {
  switch (op) {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) \
  case FusedOp::k##functor: return #functor "Op";
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
    case FusedOp::kGeluErf: return "GeluErfOp";
    case FusedOp::kGeluTanh: return "GeluTanhOp";
    default: return {};
  }
}

std::string_view binary_functor(FusedOp op) {
  switch (op) {
    case FusedOp::kAdd: return "AddOp";
    case FusedOp::kSub: return "SubOp";
    case FusedOp::kMul: return "MulOp";
    case FusedOp::kDiv: return "DivOp";
    case FusedOp::kPow: return "PowOp";
    case FusedOp::kMaximum: return "MaximumOp";
    case FusedOp::kMinimum: return "MinimumOp";
    case FusedOp::kDivTrunc: return "DivTruncOp";
    case FusedOp::kDivFloor: return "DivFloorOp";
    case FusedOp::kRemainder: return "RemainderOp";
    case FusedOp::kFmod: return "FmodOp";
    case FusedOp::kAtan2: return "Atan2Op";
    case FusedOp::kBitwiseAnd: return "BitwiseAndOp";
    case FusedOp::kBitwiseOr: return "BitwiseOrOp";
    case FusedOp::kBitwiseXor: return "BitwiseXorOp";
    case FusedOp::kEq: return "EqOp";
    case FusedOp::kNe: return "NeOp";
    case FusedOp::kLt: return "LtOp";
    case FusedOp::kLe: return "LeOp";
    case FusedOp::kGt: return "GtOp";
    case FusedOp::kGe: return "GeOp";
    case FusedOp::kLogicalAnd: return "LogicalAndOp";
    case FusedOp::kLogicalOr: return "LogicalOrOp";
    case FusedOp::kLogicalXor: return "LogicalXorOp";
    default: return {};
  }
}

// pow_scalar_expr: pow.Tensor_Scalar as fused.cc's pow_scalar_kernel picks
// its path: the same fast paths for the same exponents, else PowOp with the
// exponent converted as there.
std::string pow_scalar_expr(const Instr& ins, DType d) {
  const double e = ins.param.to_double();
  const std::string x = loaded(ins.args[0]);
  auto unary = [&](std::string_view f) { return str_cat(f, "{}(", x, ")"); };
  if (is_floating(d)) {
    const bool fast = d != DType::kFloat16;
    if (fast && e == 0.5) return unary("SqrtOp");
    if (fast && e == -0.5) return unary("RsqrtOp");
    if (fast && e == -1.0) return unary("ReciprocalOp");
    if (fast && e == 2.0) return unary("SquareOp");
    if (fast && e == 3.0) return unary("CubeOp");
    if (fast && e == -2.0) return unary("InvSquareOp");
    std::string ev;
    switch (d) {
      case DType::kFloat32: ev = bits_literal("float", ins.param.to<float>()); break;
      case DType::kFloat64: ev = bits_literal("double", ins.param.to<double>()); break;
      case DType::kFloat16: ev = scalar_literal(d, ins.param); break;
      default: ev = bits_literal("float", ins.param.to<float>()); break;  // bf16: exponent.to<float>()
    }
    return str_cat("PowOp{}(", as_type(compute_type(d), x), ", ", ev, ")");
  }
  if (e == 2.0) return unary("SquareOp");
  if (e == 3.0) return unary("CubeOp");
  return str_cat("PowOp{}(", as_type(arith_type(d), x), ", ", scalar_literal(d, ins.param), ")");
}

// instr_expr: the value of one instruction, before rounding to its register's dtype.
std::string instr_expr(const FusedProgram& p, const Instr& ins) {
  const DType d = p.dtype(ins.args[0]);
  const std::string_view c = arith_type(d);
  switch (ins.op) {
    case FusedOp::kPowScalar: return pow_scalar_expr(ins, d);
    case FusedOp::kLogicalNot: return str_cat("LogicalNotOp{}(", loaded(ins.args[0]), ")");
    case FusedOp::kAddAlpha:
    case FusedOp::kSubAlpha:
      return str_cat(ins.op == FusedOp::kAddAlpha ? "AddAlphaOp" : "SubAlphaOp", "<", c, ">{",
                     scalar_literal(d, ins.param), "}(", as_type(c, loaded(ins.args[0])), ", ",
                     as_type(c, loaded(ins.args[1])), ")");
    case FusedOp::kWhere:
      return str_cat("WhereOp{}(", reg(ins.args[0]), ", ", reg(ins.args[1]), ", ", reg(ins.args[2]), ")");
    case FusedOp::kCast:
      return str_cat("CastOp<", compute_type(p.dtype(ins.out)), ">{}(", loaded(ins.args[0]), ")");
    default: break;
  }
  if (std::string_view f = unary_functor(ins.op); !f.empty()) return str_cat(f, "{}(", loaded(ins.args[0]), ")");
  const std::string_view f = binary_functor(ins.op);
  OPSPEC_INTERNAL_ASSERT(!f.empty());
  if (ins.op >= FusedOp::kEq) return str_cat(f, "{}(", loaded(ins.args[0]), ", ", loaded(ins.args[1]), ")");
  if (p.dtype(ins.args[1]) != d) {  // f16/bf16 mul/div by an f32 scalar (fused.cc's reduced_rhs_kernel)
    return str_cat(f, "{}(", loaded(ins.args[0]), ", ", reg(ins.args[1]), ")");
  }
  return str_cat(f, "{}(", as_type(c, loaded(ins.args[0])), ", ", as_type(c, loaded(ins.args[1])), ")");
}

// instr_line: `const T rN = store<T>(expr);` (predicates and where need no rounding).
std::string instr_line(const FusedProgram& p, const Instr& ins, std::string_view indent) {
  const std::string_view t = storage_type(p.dtype(ins.out));
  return str_cat(indent, "const ", t, " ", reg(ins.out), " = store<", t, ">(", instr_expr(p, ins), ");\n");
}

// constant_line: a constant register, with its value in a comment.
std::string constant_line(const FusedProgram& p, int r, std::string_view indent) {
  const FusedProgram::Reg& g = p.regs()[r];
  return OPSPEC_DISPATCH_ALL_DTYPES(g.dtype, "fused_cuda_source", [&] {
    scalar_t v;
    std::memcpy(static_cast<void*>(&v), &g.constant_bits, sizeof(v));
    const std::string_view t = storage_type(g.dtype);
    return str_cat(indent, "const ", t, " ", reg(r), " = ", bits_literal(t, v), ";  // ",
                   format_double(static_cast<double>(static_cast<opmath_t<scalar_t>>(v))), "\n");
  });
}

// used_registers: registers a live instruction or an output reads.
std::vector<bool> used_registers(const FusedProgram& p) {
  std::vector<bool> used(p.regs().size(), false);
  for (const Instr& ins : p.instrs()) {
    for (int k = 0; k < ins.nargs; ++k) used[static_cast<size_t>(ins.args[k])] = true;
  }
  for (int k = 0; k < p.num_outputs(); ++k) used[static_cast<size_t>(p.output_reg(k))] = true;
  return used;
}

// Fingerprint: what a generated kernel's source depends on, hashed (128
// bits): the program's registers and instructions (not its shape), the
// name, the layout and the arch.
// run_fused_cuda keys its kernel cache with it instead of regenerating and
// hashing the source (tens of microseconds) on every launch.
class Fingerprint {
 public:
  template <class T>
    requires std::is_trivially_copyable_v<T>
  void add(const T& v) {
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
  }
  void add(std::string_view s) {
    add(s.size());
    bytes_.append(s);
  }
  void add(const Scalar& s) {
    add(static_cast<uint8_t>(s.is_floating_point() ? 0 : s.is_integral() ? 1 : 2));
    s.is_floating_point() ? add(s.to_double()) : add(s.to_int());
  }
  std::string digest() const {
    const XXH128_hash_t h = XXH3_128bits(bytes_.data(), bytes_.size());
    return std::string(reinterpret_cast<const char*>(&h), sizeof h);
  }

 private:
  std::string bytes_;
};

std::string kernel_fingerprint(const FusedProgram& p, std::string_view name, const FusedCudaLayout& layout,
                               std::string_view arch) {
  Fingerprint f;
  f.add(name);
  f.add(arch);
  f.add(layout.str());
  for (const FusedProgram::Reg& r : p.regs()) {
    f.add(r.dtype);
    f.add(r.input);
    f.add(r.constant);
    f.add(r.constant_bits);
    f.add(r.uniform);
  }
  for (const Instr& ins : p.instrs()) {
    f.add(ins.op);
    f.add(ins.out);
    for (int k = 0; k < 3; ++k) f.add(ins.args[k]);
    f.add(ins.param);
  }
  for (int k = 0; k < p.num_inputs(); ++k) f.add(p.input_reg(k));
  for (int k = 0; k < p.num_outputs(); ++k) f.add(p.output_reg(k));
  return f.digest();
}

void check_inputs(const FusedProgram& p, TensorList inputs, std::string_view fn) {
  OPSPEC_CHECK(p.finalized(), fn, ": the program is not finalized; call finalize() after building it");
  OPSPEC_CHECK(static_cast<int>(inputs.size()) == p.num_inputs(), fn, ": the program takes ", p.num_inputs(),
               " input(s) but ", inputs.size(), " were given");
  for (int k = 0; k < p.num_inputs(); ++k) {
    const Tensor& t = inputs[k];
    OPSPEC_CHECK(t.defined(), fn, ": input ", k, " is undefined");
    const IntArrayRef want = p.input_sizes(k);
    const bool same_sizes = std::equal(t.sizes().begin(), t.sizes().end(), want.begin(), want.end());
    OPSPEC_CHECK(t.dtype() == p.input_dtype(k) && same_sizes, fn, ": input ", k, " is ", t.meta_str(),
                 " but the program expects ", dtype_short_name(p.input_dtype(k)), format_sizes(want));
  }
}

}  // namespace

std::string FusedCudaLayout::str() const {
  std::vector<std::string> parts;
  for (size_t k = 0; k < inputs.size(); ++k) {
    switch (inputs[k]) {
      case FusedCudaInput::kContiguous: parts.push_back("c"); break;
      case FusedCudaInput::kStrided: parts.push_back(str_cat("s", dims[k])); break;
      case FusedCudaInput::kUniform: parts.push_back("u"); break;
      case FusedCudaInput::kUnused: parts.push_back("x"); break;
    }
  }
  parts.push_back(index32 ? "i32" : "i64");
  return absl::StrJoin(parts, "_");
}

FusedCudaLayout fused_cuda_layout(const FusedProgram& p, TensorList inputs) {
  check_inputs(p, inputs, "fused_cuda_layout");
  const std::vector<bool> used = used_registers(p);
  const int64_t numel = compute_numel(p.shape());
  FusedCudaLayout layout;
  layout.index32 = numel < kIndex32Limit;
  for (int k = 0; k < p.num_inputs(); ++k) {
    const int r = p.input_reg(k);
    FusedCudaInput kind = FusedCudaInput::kContiguous;
    int dims = 0;
    if (!used[static_cast<size_t>(r)]) {
      kind = FusedCudaInput::kUnused;
    } else if (p.regs()[r].uniform) {
      kind = FusedCudaInput::kUniform;
    } else {
      const CoalescedGeometry g = coalesce_over(inputs[k], p.shape());
      if (!g.dense()) {
        kind = FusedCudaInput::kStrided;
        dims = static_cast<int>(g.sizes.size());
        int64_t max_offset = 0;
        for (size_t d = 0; d < g.sizes.size(); ++d) max_offset += (g.sizes[d] - 1) * std::abs(g.strides[d]);
        layout.index32 = layout.index32 && max_offset < kIndex32Limit;
      }
    }
    layout.inputs.push_back(kind);
    layout.dims.push_back(dims);
  }
  return layout;
}

std::string fused_cuda_source(const FusedProgram& p, std::string_view name, const FusedCudaLayout& layout) {
  OPSPEC_CHECK(p.finalized(), "fused_cuda_source: the program is not finalized; call finalize() after building it");
  OPSPEC_CHECK(static_cast<int>(layout.inputs.size()) == p.num_inputs() && layout.dims.size() == layout.inputs.size(),
               "fused_cuda_source: the layout describes ", layout.inputs.size(), " input(s) but the program takes ",
               p.num_inputs());
  const auto& regs = p.regs();
  // Parameters: n, each input (and its geometry when strided), each output.
  std::vector<std::string> params;
  for (int k = 0; k < p.num_inputs(); ++k) {
    params.push_back(str_cat("const ", storage_type(p.input_dtype(k)), "* __restrict__ in", k));
    if (layout.inputs[k] == FusedCudaInput::kStrided) {
      params.push_back(str_cat("const Geometry<index_t, ", layout.dims[k], "> in", k, "_geometry"));
    }
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    params.push_back(str_cat(storage_type(p.output_dtype(k)), "* __restrict__ out", k));
  }
  // Uniform registers the per-element code reads, computed before the loop.
  std::vector<bool> needed(regs.size(), false);
  for (const Instr& ins : p.instrs()) {
    if (regs[ins.out].uniform) continue;
    for (int k = 0; k < ins.nargs; ++k) {
      if (regs[ins.args[k]].uniform) needed[static_cast<size_t>(ins.args[k])] = true;
    }
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    if (regs[p.output_reg(k)].uniform) needed[static_cast<size_t>(p.output_reg(k))] = true;
  }
  // The element function takes i, those uniform registers, the loaded
  // value of each per-element input and the outputs.
  std::vector<std::string> element_params = {"const index_t i"}, element_args = {"i"};
  for (size_t r = 0; r < regs.size(); ++r) {
    if (!needed[r]) continue;
    element_params.push_back(str_cat("const ", storage_type(regs[r].dtype), " ", reg(static_cast<int>(r))));
    element_args.push_back(reg(static_cast<int>(r)));
  }
  std::vector<int> loaded_inputs;  // inputs read per element
  for (int k = 0; k < p.num_inputs(); ++k) {
    const FusedCudaInput kind = layout.inputs[k];
    if (kind != FusedCudaInput::kContiguous && kind != FusedCudaInput::kStrided) continue;
    loaded_inputs.push_back(k);
    element_params.push_back(str_cat("const ", storage_type(p.input_dtype(k)), " ", reg(p.input_reg(k))));
    element_args.push_back(reg(p.input_reg(k)));
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    element_params.push_back(str_cat(storage_type(p.output_dtype(k)), "* __restrict__ out", k));
    element_args.push_back(str_cat("out", k));
  }
  // load: input k's element for output index `at`.
  auto load = [&](int k, std::string_view at) {
    return layout.inputs[k] == FusedCudaInput::kStrided ? str_cat("in", k, "[in", k, "_geometry.offset(", at, ")]")
                                                       : str_cat("in", k, "[", at, "]");
  };

  // The program as a comment, without sizes: the source (so the cache key)
  // is the same for every shape with this structure.
  std::string program_text;
  const std::string listing = p.str();
  for (size_t at = 0; at < listing.size();) {
    const size_t end = std::min(listing.find('\n', at), listing.size());
    const std::string_view line = std::string_view(listing).substr(at, end - at);
    if (line.find(" = input ") == std::string_view::npos) str_append(&program_text, "//   ", line, "\n");
    at = end + 1;
  }
  for (int k = p.num_inputs() - 1; k >= 0; --k) {
    program_text.insert(0, str_cat("//   ", reg(p.input_reg(k)), " = input ", k, " : ",
                                   dtype_short_name(p.input_dtype(k)), "\n"));
  }
  std::string src;
  str_append(&src, "// ", name, ": an opspec fused elementwise kernel (kernels/cuda/fused_codegen.cc).\n",
             "// layout ", layout.str(), "; program:\n", program_text,
             "#include \"opspec/nvrtc_prelude.h\"\n\n",
             "using namespace opspec::internal;\nusing namespace opspec::internal::nvrtc;\n",
             "typedef ", layout.index32 ? "int32_t" : "int64_t", " index_t;\n\n");

  // The element function: per-element instructions, then the stores.
  str_append(&src, "__device__ __forceinline__ void ", name, "_element(", absl::StrJoin(element_params, ", "), ") {\n");
  for (const Instr& ins : p.instrs()) {
    if (!regs[ins.out].uniform) str_append(&src, instr_line(p, ins, "  "));
  }
  for (int k = 0; k < p.num_outputs(); ++k) str_append(&src, "  out", k, "[i] = ", reg(p.output_reg(k)), ";\n");
  str_append(&src, "}\n\n");

  // The kernel: uniform registers, then the grid-stride loop, whose unrolled
  // body issues all its loads before any math (transcendental functions
  // branch, and the compiler does not hoist loads across branches).
  const std::vector<bool> used = used_registers(p);
  str_append(&src, "extern \"C\" __global__ void __launch_bounds__(", kBlock, ") ", name, "(const index_t n",
             params.empty() ? "" : ", ", absl::StrJoin(params, ", "), ") {\n");
  for (size_t r = 0; r < regs.size(); ++r) {
    const FusedProgram::Reg& g = regs[r];
    if (g.constant && used[r]) str_append(&src, constant_line(p, static_cast<int>(r), "  "));
    if (g.input >= 0 && layout.inputs[g.input] == FusedCudaInput::kUniform) {
      str_append(&src, "  const ", storage_type(g.dtype), " ", reg(static_cast<int>(r)), " = in", g.input, "[0];\n");
    }
  }
  for (const Instr& ins : p.instrs()) {
    if (regs[ins.out].uniform) str_append(&src, instr_line(p, ins, "  "));
  }
  // call: the element function at index `at`, with input values `values(k)`.
  auto call = [&](std::string_view at, auto values) {
    std::vector<std::string> a = element_args;
    a[0] = std::string(at);
    for (int k : loaded_inputs) {
      const std::string r = reg(p.input_reg(k));
      std::replace(a.begin(), a.end(), r, values(k));
    }
    return str_cat(name, "_element(", absl::StrJoin(a, ", "), ")");
  };
  std::vector<std::string> at = {"i"};
  for (int u = 1; u < kUnroll; ++u) at.push_back(str_cat("i", u));
  str_append(&src, "  const index_t step = static_cast<index_t>(gridDim.x) * static_cast<index_t>(blockDim.x);\n",
             "  index_t i = static_cast<index_t>(blockIdx.x) * static_cast<index_t>(blockDim.x) + ",
             "static_cast<index_t>(threadIdx.x);\n",
             "  for (; i + ", kUnroll - 1, " * step < n; i += ", kUnroll, " * step) {\n    const index_t ");
  for (int u = 1; u < kUnroll; ++u) {
    str_append(&src, at[u], " = i + ", u == 1 ? "" : str_cat(u, " * "), "step", u + 1 < kUnroll ? ", " : ";\n");
  }
  for (int k : loaded_inputs) {
    str_append(&src, "    const ", storage_type(p.input_dtype(k)), " ");
    for (int u = 0; u < kUnroll; ++u) {
      str_append(&src, reg(p.input_reg(k)), "_", u, " = ", load(k, at[u]), u + 1 < kUnroll ? ", " : ";\n");
    }
  }
  for (int u = 0; u < kUnroll; ++u) {
    str_append(&src, "    ", call(at[u], [&](int k) { return str_cat(reg(p.input_reg(k)), "_", u); }), ";\n");
  }
  str_append(&src, "  }\n  for (; i < n; i += step) ", call("i", [&](int k) { return load(k, "i"); }), ";\n}\n");
  return src;
}

std::string_view FusedCudaArgs::bytes(size_t k) const {
  return std::string_view(storage_.data() + offsets_.at(k), sizes_.at(k));
}

void FusedCudaArgs::add(const void* value, size_t size, size_t align) {
  const size_t offset = (storage_.size() + align - 1) / align * align;
  storage_.resize(offset + size);
  std::memcpy(storage_.data() + offset, value, size);
  offsets_.push_back(offset);
  sizes_.push_back(size);
}

void FusedCudaArgs::finish() {
  pointers_.clear();
  for (size_t off : offsets_) pointers_.push_back(storage_.data() + off);
}

FusedCudaArgs fused_cuda_args(const FusedProgram& p, const FusedCudaLayout& layout, TensorList inputs,
                              TensorList outputs) {
  check_inputs(p, inputs, "fused_cuda_args");
  OPSPEC_CHECK(static_cast<int>(outputs.size()) == p.num_outputs(), "fused_cuda_args: the program has ",
               p.num_outputs(), " output(s) but ", outputs.size(), " were given");
  FusedCudaArgs a;
  auto add_index = [&](int64_t v) {
    if (layout.index32) {
      const auto v32 = static_cast<int32_t>(v);
      a.add(&v32, sizeof v32, sizeof v32);
    } else {
      a.add(&v, sizeof v, sizeof v);
    }
  };
  auto add_pointer = [&](const Tensor& t) {
    const void* ptr = t.raw_data();
    a.add(&ptr, sizeof ptr, sizeof ptr);
  };
  add_index(compute_numel(p.shape()));
  for (int k = 0; k < p.num_inputs(); ++k) {
    add_pointer(inputs[k]);
    if (layout.inputs[k] != FusedCudaInput::kStrided) continue;
    const CoalescedGeometry g = coalesce_over(inputs[k], p.shape());
    OPSPEC_CHECK(static_cast<int>(g.sizes.size()) == layout.dims[k], "fused_cuda_args: input ", k, " (",
                 inputs[k].meta_str(), ") does not have the layout ", layout.str());
    // Geometry<index_t, N>: N sizes then N strides.
    std::vector<int64_t> values(g.sizes.begin(), g.sizes.end());
    values.insert(values.end(), g.strides.begin(), g.strides.end());
    std::vector<char> packed;
    for (int64_t v : values) {
      const size_t at = packed.size();
      if (layout.index32) {
        const auto v32 = static_cast<int32_t>(v);
        packed.resize(at + sizeof v32);
        std::memcpy(packed.data() + at, &v32, sizeof v32);
      } else {
        packed.resize(at + sizeof v);
        std::memcpy(packed.data() + at, &v, sizeof v);
      }
    }
    a.add(packed.data(), packed.size(), layout.index32 ? 4 : 8);
  }
  for (const Tensor& t : outputs) add_pointer(t);
  a.finish();
  return a;
}

LaunchConfig fused_cuda_launch_config(int64_t numel, int multiprocessors) {
  const int64_t per_block = static_cast<int64_t>(kBlock) * kUnroll;
  const int64_t wanted = std::max<int64_t>(1, (numel + per_block - 1) / per_block);
  const int64_t cap = std::min(kMaxGrid, std::max<int64_t>(1, multiprocessors) * kMaxBlocksPerSm);
  return LaunchConfig{static_cast<uint32_t>(std::min(wanted, cap)), kBlock};
}

void run_fused_cuda(const FusedProgram& p, std::string_view name, TensorList inputs, TensorList outputs) {
  check_inputs(p, inputs, "run_fused_cuda");
  OPSPEC_CHECK(static_cast<int>(outputs.size()) == p.num_outputs(), "run_fused_cuda: the program has ",
               p.num_outputs(), " output(s) but ", outputs.size(), " were given");
  for (int k = 0; k < p.num_inputs(); ++k) {
    const Tensor& t = inputs[k];
    OPSPEC_CHECK(t.device().is_cuda() && t.impl()->storage()->device().is_cuda(), "run_fused_cuda: input ", k, " (",
                 t.meta_str(), ") is not a cuda tensor with data");
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    const Tensor& t = outputs[k];
    OPSPEC_CHECK(t.defined(), "run_fused_cuda: output ", k, " is undefined");
    OPSPEC_CHECK(t.dtype() == p.output_dtype(k) &&
                     std::equal(t.sizes().begin(), t.sizes().end(), p.shape().begin(), p.shape().end()),
                 "run_fused_cuda: output ", k, " is ", t.meta_str(), " but the program writes ",
                 dtype_short_name(p.output_dtype(k)), format_sizes(p.shape()));
    OPSPEC_CHECK(t.device().is_cuda() && t.impl()->storage()->device().is_cuda() && t.is_contiguous(),
                 "run_fused_cuda: output ", k, " (", t.meta_str(), ") must be a contiguous cuda tensor");
    for (const Tensor& other : inputs) {
      OPSPEC_CHECK(!(t.numel() > 0 && other.numel() > 0 && t.is_alias_of(other)), "run_fused_cuda: output ", k,
                   " shares memory with an input; fused kernels write fresh outputs");
    }
  }
  const int64_t numel = compute_numel(p.shape());
  if (numel == 0 || outputs.empty()) return;
  const Device device = outputs[0].device();
  for (const TensorList list : {inputs, outputs}) {
    for (const Tensor& t : list) {
      OPSPEC_CHECK(t.device() == device, "run_fused_cuda: kernel ", name, " mixes ", device.str(), " and ",
                   t.device().str(), " tensors");
    }
  }
  cuda::DeviceGuard guard(device);
  const FusedCudaLayout layout = fused_cuda_layout(p, inputs);
  const NvrtcOptions options = nvrtc_options_for_current_device();
  const std::string key = kernel_fingerprint(p, name, layout, options.arch);
  static std::mutex mu;
  static auto* kernels = new absl::flat_hash_map<std::string, std::shared_ptr<const CompiledKernel>>;
  std::shared_ptr<const CompiledKernel> kernel;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (auto it = kernels->find(key); it != kernels->end()) kernel = it->second;
  }
  if (kernel == nullptr) {
    kernel = nvrtc_compile(name, fused_cuda_source(p, name, layout), options);
    std::lock_guard<std::mutex> lock(mu);
    kernels->try_emplace(key, kernel);
  }
  FusedCudaArgs args = fused_cuda_args(p, layout, inputs, outputs);
  launch_compiled_kernel(*kernel, fused_cuda_launch_config(numel, cuda_multiprocessor_count()), args.pointers());
}

namespace {

// CudaFusedKernel: generated and compiled at its first run (NVRTC, cached by source).
class CudaFusedKernel final : public FusedKernel {
 public:
  CudaFusedKernel(std::shared_ptr<const FusedProgram> program, std::string_view name)
      : program_(std::move(program)), name_(name) {}
  void run(TensorList inputs, TensorList outputs) const override {
    run_fused_cuda(*program_, name_, inputs, outputs);
  }

 private:
  std::shared_ptr<const FusedProgram> program_;
  std::string name_;
};

std::unique_ptr<FusedKernel> make_cuda_fused_kernel(std::shared_ptr<const FusedProgram> program,
                                                    std::string_view name) {
  return std::make_unique<CudaFusedKernel>(std::move(program), name);
}

}  // namespace

void register_cuda_fused_kernels() { register_fused_kernel_factory(DeviceType::kCUDA, &make_cuda_fused_kernel); }

}  // namespace opspec::internal
