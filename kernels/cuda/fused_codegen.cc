// fused_codegen.cc: CUDA C++ generation for fused elementwise programs, their
// launch arguments, and run_fused_cuda. See Note [Fused CUDA kernels].
#include "kernels/cuda/fused_codegen.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <type_traits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "kernels/common/coalesce.h"
#include "kernels/common/fused_source.h"
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

// kernel_fingerprint: what a generated kernel's source depends on (the
// program's structure, the name, the layout and the arch), hashed: the key
// of run_fused_cuda's kernel cache, so a warm launch neither generates nor
// hashes source (tens of microseconds).
std::string kernel_fingerprint(const FusedProgram& p, std::string_view name, const FusedCudaLayout& layout,
                               std::string_view arch) {
  SourceFingerprint f;
  f.add(name);
  f.add(arch);
  f.add(layout.str());
  f.add_structure(p);
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
  const std::vector<bool> used = fused_used_registers(p);
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
    params.push_back(str_cat("const ", fused_storage_type(p.input_dtype(k)), "* __restrict__ in", k));
    if (layout.inputs[k] == FusedCudaInput::kStrided) {
      params.push_back(str_cat("const Geometry<index_t, ", layout.dims[k], "> in", k, "_geometry"));
    }
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    params.push_back(str_cat(fused_storage_type(p.output_dtype(k)), "* __restrict__ out", k));
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
    element_params.push_back(str_cat("const ", fused_storage_type(regs[r].dtype), " ", fused_register(static_cast<int>(r))));
    element_args.push_back(fused_register(static_cast<int>(r)));
  }
  std::vector<int> loaded_inputs;  // inputs read per element
  for (int k = 0; k < p.num_inputs(); ++k) {
    const FusedCudaInput kind = layout.inputs[k];
    if (kind != FusedCudaInput::kContiguous && kind != FusedCudaInput::kStrided) continue;
    loaded_inputs.push_back(k);
    element_params.push_back(str_cat("const ", fused_storage_type(p.input_dtype(k)), " ", fused_register(p.input_reg(k))));
    element_args.push_back(fused_register(p.input_reg(k)));
  }
  for (int k = 0; k < p.num_outputs(); ++k) {
    element_params.push_back(str_cat(fused_storage_type(p.output_dtype(k)), "* __restrict__ out", k));
    element_args.push_back(str_cat("out", k));
  }
  // load: input k's element for output index `at`.
  auto load = [&](int k, std::string_view at) {
    return layout.inputs[k] == FusedCudaInput::kStrided ? str_cat("in", k, "[in", k, "_geometry.offset(", at, ")]")
                                                       : str_cat("in", k, "[", at, "]");
  };

  std::string src;
  str_append(&src, "// ", name, ": an opspec fused elementwise kernel (kernels/cuda/fused_codegen.cc).\n",
             "// layout ", layout.str(), "; program:\n", fused_program_comment(p),
             "#include \"opspec/nvrtc_prelude.h\"\n\n",
             "using namespace opspec::internal;\nusing namespace opspec::internal::nvrtc;\n",
             "typedef ", layout.index32 ? "int32_t" : "int64_t", " index_t;\n\n");

  // The element function: per-element instructions, then the stores.
  str_append(&src, "__device__ __forceinline__ void ", name, "_element(", absl::StrJoin(element_params, ", "), ") {\n");
  for (const Instr& ins : p.instrs()) {
    if (!regs[ins.out].uniform) str_append(&src, fused_instr_line(p, ins, "  "));
  }
  for (int k = 0; k < p.num_outputs(); ++k) str_append(&src, "  out", k, "[i] = ", fused_register(p.output_reg(k)), ";\n");
  str_append(&src, "}\n\n");

  // The kernel: uniform registers, then the grid-stride loop, whose unrolled
  // body issues all its loads before any math (transcendental functions
  // branch, and the compiler does not hoist loads across branches).
  const std::vector<bool> used = fused_used_registers(p);
  str_append(&src, "extern \"C\" __global__ void __launch_bounds__(", kBlock, ") ", name, "(const index_t n",
             params.empty() ? "" : ", ", absl::StrJoin(params, ", "), ") {\n");
  for (size_t r = 0; r < regs.size(); ++r) {
    const FusedProgram::Reg& g = regs[r];
    if (g.constant && used[r]) str_append(&src, fused_constant_line(p, static_cast<int>(r), "  "));
    if (g.input >= 0 && layout.inputs[g.input] == FusedCudaInput::kUniform) {
      str_append(&src, "  const ", fused_storage_type(g.dtype), " ", fused_register(static_cast<int>(r)), " = in", g.input, "[0];\n");
    }
  }
  for (const Instr& ins : p.instrs()) {
    if (regs[ins.out].uniform) str_append(&src, fused_instr_line(p, ins, "  "));
  }
  // call: the element function at index `at`, with input values `values(k)`.
  auto call = [&](std::string_view at, auto values) {
    std::vector<std::string> a = element_args;
    a[0] = std::string(at);
    for (int k : loaded_inputs) {
      const std::string r = fused_register(p.input_reg(k));
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
    str_append(&src, "    const ", fused_storage_type(p.input_dtype(k)), " ");
    for (int u = 0; u < kUnroll; ++u) {
      str_append(&src, fused_register(p.input_reg(k)), "_", u, " = ", load(k, at[u]), u + 1 < kUnroll ? ", " : ";\n");
    }
  }
  for (int u = 0; u < kUnroll; ++u) {
    str_append(&src, "    ", call(at[u], [&](int k) { return str_cat(fused_register(p.input_reg(k)), "_", u); }), ";\n");
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
