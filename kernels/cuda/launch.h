// launch.h: the thin launchers of the CUDA kernels (kernels/cuda/*.cu), over
// raw device pointers, sizes and strides in plain C++ types, so the .cu files
// include no runtime, absl or dispatcher header and nvcc stays fast. Host code
// (kernels/cuda/*.cc) validates with the meta functions, allocates, fills
// these structs and launches. See Note [Elementwise launches] below.
#pragma once

#include <cstdint>

namespace opspec::internal::cuda {

// Code: an element type as DType's numeric value (runtime/core/dtype.h, which
// the .cu files do not include; cuda_device.cc checks the values agree).
using Code = uint8_t;
inline constexpr Code kF32 = 0, kF64 = 1, kF16 = 2, kBF16 = 3, kI64 = 4, kI32 = 5, kB8 = 6;

// kMaxDims: dims an elementwise or reduction launch takes (after coalescing).
inline constexpr int kMaxDims = 8;
// kMaxOperands: an output and up to three inputs.
inline constexpr int kMaxOperands = 4;

// Note [Elementwise launches]
// One kernel per (op, compute type) serves every layout and input dtype:
//   - geometry: operand k (0 is the output) steps strides[k][d] elements along
//     dim d (0 where broadcast); `contiguous` means every operand is dense
//     with the output's shape, so element i is at offset i everywhere;
//     otherwise offsets come from the linear index, with 32-bit arithmetic
//     when `index32` (numel and every offset fit in int32);
//   - input dtypes: input k is stored as code[k] and converted on load to the
//     op's storage type as a CPU copy would (CastOp, then rounding to f16 or
//     bf16), then widened to the compute type, exactly the CPU kernels'
//     cast_for_compute + load, without a temporary tensor;
//   - a 0-dim cpu tensor taking part as a scalar has data[k] == nullptr and
//     its value, already converted to the op's storage type, in scalar[k].
// The output's type is the kernel's: callers write other dtypes through a
// temporary and launch_copy, as the CPU kernels do.
struct ElementwiseArgs {
  int ndim = 0;
  int ntensors = 0;  // output + inputs
  int64_t numel = 0;
  bool contiguous = false;
  bool index32 = true;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxOperands][kMaxDims] = {};
  void* data[kMaxOperands] = {};
  Code code[kMaxOperands] = {};
  uint64_t scalar[kMaxOperands] = {};  // bits of a scalar input's value, in the op's storage type
};

// UnaryOp: unary functors of kernels/common/elementwise_ops.h: one per row of
// runtime/ops/unary_ops.def, then the rest (kPowScalar is PowOp with a fixed
// exponent, passed as `param`).
enum class UnaryOp : uint8_t {
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) k##functor,
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  kGeluErf, kGeluTanh, kSquare, kCube, kInvSquare, kPowScalar, kLogicalNot,
};
// BinaryOp: binary functors; the alpha variants take `param` as alpha.
enum class BinaryOp : uint8_t {
  kAdd, kSub, kAddAlpha, kSubAlpha, kMul, kDiv, kPow, kMaximum, kMinimum,
  kEq, kNe, kLt, kLe, kGt, kGe, kLogicalAnd, kLogicalOr,
  kThresholdBackward, kTanhBackward, kSigmoidBackward,  // autograd's (grad, saved) ops
  kGeluBackwardErf, kGeluBackwardTanh, kSiluBackward,
  kDropoutBackward,  // (grad, mask as grad's dtype) * scale (Param f)
  kDivTrunc, kDivFloor, kRemainder, kFmod, kAtan2, kBitwiseAnd, kBitwiseOr, kBitwiseXor,
  kLogicalXor,  // a predicate, for launch_compare
};

// Param: a scalar parameter (alpha, exponent) in the op's compute type; the
// launcher reads the member for its type.
struct Param {
  double f = 0;
  int64_t i = 0;
  float f32 = 0;
};

// launch_unary: out = op(in) for storage type `storage` (the output's and,
// after conversion, the input's; b8 for logical_not reads any code).
void launch_unary(UnaryOp op, Code storage, const ElementwiseArgs& a, Param param);
// launch_binary: out = op(a, b) for the arithmetic ops (kAdd .. kMinimum),
// both inputs converted to `storage`, the output `storage` too.
void launch_binary(BinaryOp op, Code storage, const ElementwiseArgs& a, Param param);
// launch_compare: out (b8) = op(a, b) for kEq .. kLogicalOr, both inputs
// converted to `storage`.
void launch_compare(BinaryOp op, Code storage, const ElementwiseArgs& a);
// launch_binary_scalar_rhs: out = op(a, s) for f16/bf16 mul and div by a
// one-element operand kept in float (PyTorch's original_scalar_value).
void launch_binary_scalar_rhs(BinaryOp op, Code storage, const ElementwiseArgs& a, float s);
// launch_where: out = cond ? a : b by element size (1, 2, 4 or 8 bytes);
// inputs 1 and 2 are converted to `storage` first.
void launch_where(Code storage, const ElementwiseArgs& a);
// launch_copy: out = in converted to out's code (code[0]), broadcasting.
void launch_copy(const ElementwiseArgs& a);
// launch_fill: every output element = the element_size bytes of `bits`.
void launch_fill(const ElementwiseArgs& a, int element_size, uint64_t bits);

// launch_arange: out[i] = start + step * i for a contiguous out of `code`
// (integers exactly in int64; floats in double, f16/bf16 in float, as the CPU).
void launch_arange(Code code, void* out, int64_t n, double start, double step, int64_t istart, int64_t istep);

// RandomKind: what a random launch draws (See Note [Random draws per dtype] in kernels/cpu/random.cc).
enum class RandomKind : uint8_t { kUniform, kNormal, kBernoulli };
// launch_random: out[i] (contiguous, floating `code`, or any code for
// bernoulli) from counter first + i.
void launch_random(RandomKind kind, Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double p);
// launch_dropout: mask[i] = uniform_double(first + i) < p1m; y = x * mask * scale
// for contiguous x, y of a floating `code`.
void launch_dropout(Code code, const void* x, void* y, bool* mask, int64_t n, uint64_t seed, uint64_t first,
                    double p1m, double scale);

// ---- Reductions ----

// ReduceOp: sum (mean divides by `divisor`), amax, amin, and the norms.
enum class ReduceOp : uint8_t { kSum, kMean, kMax, kMin, kNorm2, kNorm1, kNormInf, kNormNegInf, kNorm0, kNormP };

// ReduceArgs: out (contiguous over the kept dims) = reduction of in over the
// reduced dims; dims are outermost first, reduced dims largest stride first.
struct ReduceArgs {
  const void* in = nullptr;
  void* out = nullptr;
  Code in_code = kF32;
  Code out_code = kF32;
  int n_kept = 0, n_red = 0;
  int64_t kept_sizes[kMaxDims] = {}, kept_strides[kMaxDims] = {};
  int64_t red_sizes[kMaxDims] = {}, red_strides[kMaxDims] = {};
  int64_t n_out = 1, n_reduced = 1;
  double divisor = 1;  // mean
  double p = 2;        // kNormP
  void* scratch = nullptr;  // reduce_scratch_bytes(args) bytes of device memory (null when 0)
};

// reduce_scratch_bytes: device scratch launch_reduce needs for a split
// reduction of few outputs over many elements.
int64_t reduce_scratch_bytes(const ReduceArgs& a);
// launch_reduce: see ReduceArgs; in_code is the element type read, out_code
// the result's (i64 for integer sums of i32/b8; the input's otherwise).
void launch_reduce(ReduceOp op, const ReduceArgs& a);

// launch_softmax: softmax (or log_softmax) of a contiguous [outer, len, inner]
// input of floating `code` over its middle dim, into a contiguous y.
void launch_softmax(Code code, bool log, const void* x, void* y, int64_t outer, int64_t len, int64_t inner);
// launch_layer_norm: rows of n elements of contiguous x; mean and rstd in
// the compute type (f32, or f64 for f64); w and b hold n compute values.
void launch_layer_norm(Code code, const void* x, void* y, void* mean, void* rstd, const void* w, const void* b,
                       int64_t rows, int64_t n, double eps);

// launch_softmax_backward: _softmax_backward_data (or the log variant) of
// contiguous [outer, len, inner] g and y (one dtype) into a contiguous out.
void launch_softmax_backward(Code code, bool log, const void* g, const void* y, void* out, int64_t outer, int64_t len,
                             int64_t inner);
// launch_layer_norm_backward: grad_input of rows of n elements (dx may be
// null), and the column sums grad_weight / grad_bias in the compute type
// (dw / db may be null); w holds n compute values or is null (ones).
void launch_layer_norm_backward(Code code, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* w, void* dx, void* dw, void* db, int64_t rows, int64_t n);

// check_launch: throws opspec::Error naming `what` when the last launch failed
// (defined in cuda_device.cc; the .cu files call it after each launch).
void check_launch(const char* what);
// fail_launch: throws opspec::Error (an op and dtype with no kernel; a bug of the caller).
[[noreturn]] void fail_launch(const char* what);
// grid_rows: rows as the x dimension of a one-block-per-row grid; throws
// opspec::Error naming `what` beyond CUDA's 2^31 - 1 blocks, which a cast to
// unsigned would wrap into a launch that skips rows.
unsigned grid_rows(int64_t rows, const char* what);

}  // namespace opspec::internal::cuda
