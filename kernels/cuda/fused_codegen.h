// fused_codegen.h: CUDA C++ for fused elementwise programs (FusedProgram,
// runtime/fused/fused_program.h): the kernel source, the layout it is specialised for,
// its launch arguments, and run_fused_cuda, which compiles (NVRTC, cached)
// and launches it. See Note [Fused CUDA kernels].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/fused/fused_program.h"
#include "kernels/cuda/nvrtc.h"

namespace opspec::internal {

// FusedCudaInput: how a kernel reads one input.
enum class FusedCudaInput : uint8_t {
  kContiguous,  // dense with the program's shape: element i
  kStrided,     // broadcast, transposed, sliced: index arithmetic over sizes and strides
  kUniform,     // one element, read once per thread
  kUnused,      // never read (dead after finalize)
};

// FusedCudaLayout: what a generated kernel is specialised for besides the
// program itself; part of its source, so of its cache key.
struct FusedCudaLayout {
  std::vector<FusedCudaInput> inputs;  // per program input
  std::vector<int> dims;               // per input: coalesced dims when kStrided, else 0
  bool index32 = true;                 // every index and offset fits int32

  // str: "c_s2_u_i32"-style summary (c contiguous, sK strided over K dims, u uniform, x unused).
  std::string str() const;
  friend bool operator==(const FusedCudaLayout&, const FusedCudaLayout&) = default;
};

// fused_cuda_layout: the layout for these inputs (checked against the
// program's input dtypes and sizes; any device, only geometry is read).
FusedCudaLayout fused_cuda_layout(const FusedProgram& program, TensorList inputs);

// fused_cuda_source: the CUDA C++ source of program as one
// `extern "C" __global__` kernel named name, specialised for layout. The text
// depends only on its arguments (deterministic). Each instruction calls the
// shared functor of elementwise_ops.h exactly as run_fused does. Requires a
// finalized program.
std::string fused_cuda_source(const FusedProgram& program, std::string_view name, const FusedCudaLayout& layout);

// FusedCudaArgs: one launch's kernel parameter values, in the order the
// generated kernel declares them.
class FusedCudaArgs {
 public:
  // pointers: one pointer per kernel parameter, as cudaLaunchKernel takes them.
  void** pointers() { return pointers_.data(); }
  // size: the number of parameters.
  size_t size() const { return pointers_.size(); }
  // bytes: parameter k's bytes (tests).
  std::string_view bytes(size_t k) const;

 private:
  friend FusedCudaArgs fused_cuda_args(const FusedProgram&, const FusedCudaLayout&, TensorList, TensorList);
  void add(const void* value, size_t size, size_t align);
  void finish();
  std::vector<char> storage_;
  std::vector<size_t> offsets_, sizes_;
  std::vector<void*> pointers_;
};

// fused_cuda_args: the parameters of the kernel fused_cuda_source(program,
// _, layout) for these inputs and outputs (their data pointers are passed as
// they are; any device).
FusedCudaArgs fused_cuda_args(const FusedProgram& program, const FusedCudaLayout& layout, TensorList inputs,
                              TensorList outputs);

// fused_cuda_launch_config: the grid for numel elements (grid-stride loops,
// at most a few waves of blocks per SM).
LaunchConfig fused_cuda_launch_config(int64_t numel, int multiprocessors);

// run_fused_cuda: run_fused on cuda tensors: inputs[k] has input k's dtype
// and sizes (any strides), outputs[k] is a contiguous tensor of output k's
// dtype and the program's shape, all on the current device. Generates, compiles
// (cached, See Note [Run-time CUDA compilation]) and launches kernel `name`.
// Throws opspec::Error naming the kernel and the offending argument.
void run_fused_cuda(const FusedProgram& program, std::string_view name, TensorList inputs, TensorList outputs);

// register_cuda_fused_kernels: registers CUDA's FusedKernelFactory, whose
// kernels run through run_fused_cuda (See Note [Fused kernels per device]).
void register_cuda_fused_kernels();

}  // namespace opspec::internal
