// elementwise_rules.h: shape, dtype and device rules of the elementwise,
// copy and conversion ops (PyTorch's): what every backend's kernel and the
// fused backend's lowering decide the same way, so they live with the ops.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec::internal {

// ElementwiseMeta: what an elementwise op's shape function decides: the
// output sizes, the dtype inputs are computed in, the output dtype (b8 for
// comparisons, the compute dtype otherwise), the device of the operands and
// the output's strides, empty when contiguous (See Note [Memory formats]).
struct ElementwiseMeta {
  SizeVec sizes;
  DType compute_dtype;
  DType result_dtype;
  Device device;
  SizeVec strides;
};

// make_elementwise_output: a fresh tensor of m's sizes, strides and result
// dtype on device (each backend checks its device first).
Tensor make_elementwise_output(const ElementwiseMeta& m, Device device);

// can_cast: PyTorch's canCast: no floating -> integral, no non-bool -> bool.
bool can_cast(DType from, DType to);

// UnaryKind: the dtype rule of a unary op.
enum class UnaryKind {
  kKeepDtype,      // neg, abs, relu: result has self's dtype (bool rejected)
  kKeepDtypeBool,  // sign, sgn: result has self's dtype, b8 too (PyTorch's sign kernel returns b8 as is)
  kFloating,       // sin ... sigmoid: integer and bool inputs compute in f32
  kFloatingOnly,   // gelu: floating self only, kept; no promotion, others refused as PyTorch's dispatch does
  kLogical,        // logical_not: any input, b8 result
};

// unary_meta: the geometry of a unary op; checks the dtype rules of neg, abs
// and relu, and kFloatingOnly's ("silu_cpu" / "GeluKernelImpl" not
// implemented for 'Long') (op is "aten::neg" etc.).
ElementwiseMeta unary_meta(const Tensor& self, UnaryKind kind, std::string_view op);

// bitwise_not_meta: bitwise_not's geometry: integer and b8 inputs keep their dtype.
ElementwiseMeta bitwise_not_meta(const Tensor& self);

// round_decimals_meta: round.decimals' geometry (op is "aten::round" or
// "aten::round_"): floating self only, kept, refused as PyTorch's kernels
// refuse the rest ("round_cpu" not implemented for 'Long'; "round_vml_cpu"
// for decimals = 0 on the CPU, where round's kernel runs).
ElementwiseMeta round_decimals_meta(const Tensor& self, int64_t decimals, std::string_view op);
// round_decimals_scale: 10^|decimals| as ATen's std::pow(10, decimals) (inf
// past 1e308); kernels convert it to the compute type, as ATen does.
double round_decimals_scale(int64_t decimals);

// gelu_uses_tanh: true for approximate == "tanh", false for "none"; throws for
// anything else.
bool gelu_uses_tanh(std::string_view approximate);

// BinaryKind: the dtype rule of a binary op.
enum class BinaryKind {
  kArithmetic,  // add, sub, mul, pow, maximum, minimum: result = promoted dtype
  kTrueDivide,  // div: integral promoted dtypes compute in f32
  kComparison,  // eq ... ge: compute in the promoted dtype, b8 result
  kLogical,     // logical_and / logical_or: b8 result
};

// binary_meta: broadcast shape, promoted dtype (wrapped numbers count as
// scalars) and common device of self and other.
ElementwiseMeta binary_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op);

// check_alpha: PyTorch's alpha_check for add/sub with result dtype `dtype`.
void check_alpha(DType dtype, const Scalar& alpha, std::string_view op);
// check_sub: PyTorch's sub_check (no bool operands for subtraction).
void check_sub(const Tensor& self, const Tensor& other, std::string_view op);
// check_pow: rejects b8 results (PyTorch has no bool pow kernel).
void check_pow(DType dtype);
// check_pow_scalar: pow.Tensor_Scalar also rejects an integral base with a
// negative integral exponent ("Integers to negative integer powers are not allowed.").
void check_pow_scalar(const Tensor& self, const Scalar& exponent);

// RoundingMode: div's rounding_mode: none (true division), "trunc" or "floor".
enum class RoundingMode : uint8_t { kNone, kTrunc, kFloor };
// parse_rounding_mode: the mode named by div's rounding_mode argument; throws
// PyTorch's error for any other string.
RoundingMode parse_rounding_mode(std::optional<std::string_view> mode);
// div_mode_meta: div.Tensor_mode's geometry: true division without a mode;
// with one, the promoted dtype (integers stay integers, b8 is rejected).
ElementwiseMeta div_mode_meta(const Tensor& self, const Tensor& other, RoundingMode mode);
// integral_binary_meta: bitwise_and/or/xor's geometry: the promoted dtype
// must be an integer or b8 ("bitwise_and_cpu" not implemented for 'Float').
ElementwiseMeta integral_binary_meta(const Tensor& self, const Tensor& other, std::string_view op);
// remainder_meta: remainder's and fmod's geometry: the promoted dtype, b8 rejected.
ElementwiseMeta remainder_meta(const Tensor& self, const Tensor& other, std::string_view op);
// check_nonzero_divisor: integer division, remainder and fmod by zero raise
// PyTorch's "ZeroDivisionError" (only eager kernels can check this; see Note
// [Parametrized pointwise ops]).
void check_nonzero_divisor(const Tensor& other, DType compute_dtype, std::string_view op);
// clamp_meta: clamp's geometry: a floating self keeps its dtype, otherwise
// self and the given bounds (numbers as wrapped numbers) promote; at least
// one bound; b8 rejected. Tensor bounds broadcast with self.
ElementwiseMeta clamp_meta(const Tensor& self, const Tensor* min, const Tensor* max, std::string_view op);
// Note [clamp_min and clamp_max]
// clamp_min / clamp_max with a number bound are ATen's clamp_min_scalar /
// clamp_max_scalar kernels: std::max(x, min) / std::min(x, max) in the compute
// dtype (a floating self's own, else self promoted with the number; b8 is
// refused), so NaN in x stays and so does a -0.0 against a 0 bound; a NaN
// bound fills the result with NaN; and, as PyTorch main's prepare_clamp_bound,
// an integral bound outside the dtype's range is dropped (a copy) where it
// cannot change an element (a min below it, a max above it) and refused where
// it would change all of them. The .Tensor overloads are maximum / minimum:
// binary promotion and broadcasting, b8 allowed, NaN from either side. In
// place, a number bound refuses any promotion of an integral self as clamp_
// does; a Tensor bound is cast safely as in-place binary ops do.

// clamp_bound_meta: clamp_min's or clamp_max's geometry with a number bound
// (lower: clamp_min); the b8 error names "clamp_min_scalar_cpu" / "..._cuda".
ElementwiseMeta clamp_bound_meta(const Tensor& self, const Scalar& bound, bool lower, std::string_view op);
// clamp_bound_inplace_meta: clamp_min_'s / clamp_max_'s rules with a number bound.
ElementwiseMeta clamp_bound_inplace_meta(const Tensor& self, const Scalar& bound, bool lower, std::string_view op);
// clamp_bound_value: the bound a kernel applies in compute dtype d, or
// nullopt where an int bound outside i32 is dropped for an i32 d; throws
// "Clamp min value 1.09951e+12 is outside the representable range of Int"
// where it would change every element. A NaN bound is returned as is.
std::optional<Scalar> clamp_bound_value(const Scalar& bound, DType d, bool lower, std::string_view op);
// Note [clamp with number bounds]
// clamp with number bounds is ATen's clamp_scalar kernel, std::min(std::max(x,
// min), max) in the compute dtype, so clamp_min's rule then clamp_max's (See
// Note [clamp_min and clamp_max]): NaN in x stays, x stays where it ties a
// bound (clamp(-0.0, min=0.) is -0.0: Vectorized's clamp, max_ps(min, x),
// returns x on a tie as the scalar loop does), and a NaN bound fills the
// result with NaN. As PyTorch main's clamp_out, each integral bound goes
// through prepare_clamp_bound (clamp_bound_value): an i32 bound outside i32 is
// dropped or refused, and with both dropped the result is a copy (torch 1.13
// refused any such bound; See docs/pytorch-versions.md). hardtanh (relu6 is
// hardtanh(0, 6)) is clamp_out too: on an integral self each bound is first
// Scalar::toLong'd (truncated; NaN, inf or past int64 refused: "value cannot be
// converted to type int64_t without overflow"). clamp.Tensor is maximum then
// minimum, NaN from either side: its bounds are cast as tensors (an i64 0-dim
// bound past i32 wraps for an i32 self, in PyTorch too) and a -0.0 meeting a 0
// bound gives the bound, as Vectorized's maximum gives (its scalar tail keeps
// -0.0 in 1.13: results there depend on the element's position).

// ClampBounds: the bounds a clamp kernel applies; a missing one is skipped.
struct ClampBounds {
  std::optional<Scalar> lo, hi;
};
// clamp_bounds: clamp's number bounds in compute dtype d, each through clamp_bound_value (min first).
ClampBounds clamp_bounds(const std::optional<Scalar>& min, const std::optional<Scalar>& max, DType d,
                         std::string_view op);
// hardtanh_bounds: hardtanh's bounds for a self of dtype d: an integral d's
// truncated to int64 (checked) then as clamp_bounds; a floating d's as given.
ClampBounds hardtanh_bounds(const Scalar& min_val, const Scalar& max_val, DType d, std::string_view op);
// finite_max: the largest finite value of a floating dtype (nan_to_num's default posinf).
double finite_max(DType dtype);
// floating_unary_meta: leaky_relu's, elu's and softplus's geometry: floating
// self only ("leaky_relu_cpu" not implemented for 'Long').
ElementwiseMeta floating_unary_meta(const Tensor& self, std::string_view op);

// where_meta: condition must be b8; self/other promote; three-way broadcast.
ElementwiseMeta where_meta(const Tensor& condition, const Tensor& self, const Tensor& other);

// addc_meta: addcmul's and addcdiv's geometry (op "aten::addcmul" or
// "aten::addcdiv"), TensorIterator's build_ternary_op: the three broadcast,
// their promoted dtype, one device. addcdiv first refuses two integral (or
// b8) tensors with PyTorch's "Integer division with addcdiv is no longer
// supported, ..."; a b8 result has no kernel ("addcmul_cpu_out" not
// implemented for 'Bool'). See Note [Ternary pointwise ops].
ElementwiseMeta addc_meta(const Tensor& self, const Tensor& t1, const Tensor& t2, bool div, std::string_view op);
// addc_inplace_meta: addcmul_'s and addcdiv_'s rules: self without internal
// overlap and no partial overlap with t1 or t2, addc_meta's, the broadcast
// shape self's and the common dtype castable to self's (result_dtype).
ElementwiseMeta addc_inplace_meta(const Tensor& self, const Tensor& t1, const Tensor& t2, bool div,
                                  std::string_view op);
// lerp_meta: lerp's geometry (op "aten::lerp" or "aten::lerp_"): end and a
// tensor weight (null for lerp.Scalar) must have self's dtype exactly
// ("expected dtype float for `end` but got dtype double"), floating only
// ("lerp_kernel_scalar" / "lerp_kernel_tensor" not implemented for 'Long' on
// the CPU, "lerp_cuda" on CUDA); the operands broadcast, a cpu 0-dim weight
// may go with cuda tensors. The in-place form adds lerp_'s overlap and shape checks.
ElementwiseMeta lerp_meta(const Tensor& self, const Tensor& end, const Tensor* weight, std::string_view op);
ElementwiseMeta lerp_inplace_meta(const Tensor& self, const Tensor& end, const Tensor* weight, std::string_view op);

// has_internal_overlap: some dim of size > 1 has stride 0 (an expanded
// tensor), so two elements share an address: PyTorch's has_internal_overlap
// answering Yes (its TooHard cases are not judged, here as there).
bool has_internal_overlap(const Tensor& self);

// check_no_internal_overlap: the written-to tensor has no internal overlap,
// as PyTorch's assert_no_internal_overlap. fill_, zero_, masked_fill_ and
// index_put_ skip it (See Note [Memory overlap]).
void check_no_internal_overlap(const Tensor& self, std::string_view op);

// Note [Memory overlap]
// An op that writes a tensor refuses inputs that share its memory where
// PyTorch's MemoryOverlap.cpp does. get_overlap_status (overlap_status) says
// kFull for the same tensor, or for two that start and end at the same byte
// with the same strides; kPartial when their spans [data, data + numel *
// itemsize) intersect otherwise; kTooHard when either is not non-overlapping
// and dense (a strided slice, a column, an expanded tensor), which PyTorch
// does not check. TensorIterator's ops (add_, mul_, logical_and_, copy_ ...)
// and masked_fill_ (its mask) refuse kPartial: check_no_partial_overlap;
// index_put_ (values, indices) and scatter_ (index, src) refuse kFull too:
// check_no_overlap. Full overlap as in x.add_(x) reads each element before
// writing it. An expanded self (internal overlap) is refused by every op
// that writes it (check_no_internal_overlap) but fill_ and zero_, which
// PyTorch fills unchecked, and masked_fill_ and index_put_, where PyTorch
// only warns "Use of ... on expanded tensors is deprecated" (we have no
// warnings): masked_fill_ leaves the value in every address some masked
// element refers to, as PyTorch's kernel (writing masked elements only)
// does. Kernels still copy aside an input that shares memory with the
// output without being its elements (partial_overlap): in the kTooHard cases
// PyTorch runs and its values follow its loop order; ours are as if every
// input was read first. The checks live in these shared rules so CPU, Meta
// and CUDA raise alike; PyTorch's Meta copy_ returns before its checks, ours
// raises as the CPU does (Note [Op crossref]). A fused in-place group whose
// root aliases another input runs its ops one by one (Note [In-place fusion]).

// MemOverlap: PyTorch's MemOverlapStatus of two tensors.
enum class MemOverlap : uint8_t { kNo, kFull, kPartial, kTooHard };

// overlap_status: PyTorch's get_overlap_status(a, b).
MemOverlap overlap_status(const Tensor& a, const Tensor& b);

// check_no_partial_overlap: PyTorch's assert_no_partial_overlap(written, input).
void check_no_partial_overlap(const Tensor& written, const Tensor& input, std::string_view op);

// check_no_overlap: PyTorch's assert_no_overlap(written, input): full overlap too.
void check_no_overlap(const Tensor& written, const Tensor& input, std::string_view op);

// check_copy_overlap: copy_'s checks: none when src is self's data exactly
// (copy_ returns at once), else self's internal and src's partial overlap.
void check_copy_overlap(const Tensor& self, const Tensor& src);

// same_elements: a and b address the same elements in the same order.
bool same_elements(const Tensor& a, const Tensor& b);

// partial_overlap: a and b share memory but are not the same elements in the
// same order: kernels read such an input whole before writing (See Note
// [Memory overlap]; where PyTorch refuses the op, the rules above raise first).
bool partial_overlap(const Tensor& a, const Tensor& b);

// inplace_meta: for self.op_(other): self has no internal overlap and other
// no partial overlap with it (See Note [Memory overlap]), other broadcasts to
// self's shape (without growing it), the promoted dtype casts to self's
// dtype; the result dtype is self's.
ElementwiseMeta inplace_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op);

// Note [In-place unary ops]
// Each row of unary_ops.def also makes its in-place op, `name_(Tensor(a!)
// self) -> Tensor(a!)`, as PyTorch's native_functions.yaml pairs them: the op
// table row, ops::name_, the Meta, CPU and CUDA kernels, the derivative (the
// functional op's formula and node name: PyTorch derives the in-place entry
// from the same derivatives.yaml row, cloning self first when the formula
// reads it) and the fused backend's in-place rule all expand the same rows.
// The functional op's dtype rule decides the result dtype, which must cast
// to self's, as TensorIterator's enforce_safe_casting_to_output: exp_ of an
// i64 tensor is "result type Float can't be cast to the desired output type
// Long"; so the kernel always computes in self's dtype. relu_ is one of them.

// unary_inplace_meta: the rules of a unary row's in-place op (op is
// "aten::exp_"): the row's dtype rule (errors naming the functional's
// kernels, "abs_cpu"), no internal overlap in self, the result dtype castable
// to self's; result_dtype is self's.
ElementwiseMeta unary_inplace_meta(const Tensor& self, UnaryKind kind, std::string_view op);

// Note [In-place pointwise ops]
// The in-place forms of clamp, hardtanh, leaky_relu, elu and pow are written
// by hand in each layer beside their functional ops, with PyTorch's schemas
// and dtype rules: the result dtype must be self's (clamp_ with number bounds
// refuses any promotion of an integral self, pow_.Scalar wants the common
// dtype exactly, clamp_.Tensor and pow_.Tensor cast it safely as
// TensorIterator's in-place ops do), and self keeps its layout. Their
// derivatives are the functional ops' (self cloned when read), except
// leaky_relu_ and elu_, whose derivatives.yaml rows read the result
// (LeakyReluBackward1, EluBackward1). The fused backend runs each as its
// functional op (Note [In-place fusion]).

// clamp_inplace_meta: clamp_'s and clamp_.Tensor's rules (op "aten::clamp_");
// result_dtype is self's, compute_dtype the functional clamp's.
ElementwiseMeta clamp_inplace_meta(const Tensor& self, const Tensor* min, const Tensor* max, std::string_view op);
// pow_scalar_inplace_meta: pow_.Scalar's rules: pow.Tensor_Scalar's, and a
// common dtype equal to self's ("Found dtype Long but expected Float").
ElementwiseMeta pow_scalar_inplace_meta(const Tensor& self, const Scalar& exponent, std::string_view op);
// activation_inplace_meta: hardtanh_'s (no b8, dtype kept), leaky_relu_'s and
// elu_'s (floating self only) rules, and no internal overlap in self.
ElementwiseMeta activation_inplace_meta(const Tensor& self, std::string_view op);

// add_sub_inplace_meta: add_'s and sub_'s rules in PyTorch's order: sub_'s
// sub_check (no bool operands), inplace_meta, then alpha_check.
ElementwiseMeta add_sub_inplace_meta(const Tensor& self, const Tensor& other, const Scalar& alpha, bool sub,
                                     std::string_view op);

// check_copy_shapes: src broadcasts to self's shape (copy_).
void check_copy_shapes(const Tensor& self, const Tensor& src);

// kMetaCopyError: PyTorch's message for copying out of a meta tensor.
inline constexpr std::string_view kMetaCopyError = "Cannot copy out of meta tensor; no data!";

}  // namespace opspec::internal
