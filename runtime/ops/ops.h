// ops.h: the public op API. Every function dispatches the aten op of its
// name through the Dispatcher, so modes and subclasses see it; the overload
// follows the arguments as in PyTorch (add(Tensor, Tensor) is
// aten::add.Tensor, add(Tensor, Scalar) aten::add.Scalar). A comment names
// the op where it is another, or says what PyTorch's documentation would.
// Each takes the caller's source location last, for DebugMode's stack traces.
#pragma once

#include <array>
#include <optional>
#include <source_location>
#include <string_view>
#include <tuple>
#include <vector>

#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/core/tensor.h"
#include "runtime/dispatch/boxing.h"

namespace opspec {

// TensorOptions: dtype, device and memory format of a factory's result. With
// designated initializers: ops::zeros({2, 3}, {.dtype = DType::kFloat64, .device = kMeta}).
struct TensorOptions {
  std::optional<DType> dtype;
  std::optional<Device> device;
  // memory_format: the result's layout for empty, the *_like factories and
  // _to_copy (none: contiguous for empty, preserve for the others); the other
  // factories ignore it, as PyTorch's C++ at::zeros(size, options) does.
  // See Note [Memory formats].
  std::optional<MemoryFormat> memory_format;
};

namespace ops {

#define OPSPEC_LOC const std::source_location& loc = std::source_location::current()

// ---- Factories ----
// empty: aten::empty.memory_format (uninitialised data, laid out in options.memory_format).
Tensor empty(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// empty_strided: aten::empty_strided.
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions options = {}, OPSPEC_LOC);
// zeros / ones: aten::zeros, aten::ones.
Tensor zeros(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
Tensor ones(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// full: aten::full; the dtype defaults from the fill value (bool, i64 or f32).
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions options = {}, OPSPEC_LOC);
// scalar_tensor: aten::scalar_tensor, a 0-dim tensor.
Tensor scalar_tensor(const Scalar& s, TensorOptions options = {}, OPSPEC_LOC);
// arange: aten::arange, aten::arange.start, aten::arange.start_step.
Tensor arange(const Scalar& end, TensorOptions options = {}, OPSPEC_LOC);
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions options = {}, OPSPEC_LOC);
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions options = {}, OPSPEC_LOC);
// rand / randn: aten::rand, aten::randn from the counter-based generator (see generator.h).
Tensor rand(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
Tensor randn(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// *_like: aten::empty_like, zeros_like, ones_like, full_like, rand_like, randn_like;
// self's layout unless options.memory_format names another (See Note [Memory formats]).
Tensor empty_like(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
Tensor zeros_like(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
Tensor ones_like(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
// new_zeros: aten::new_zeros: zeros of size with self's dtype and device unless given.
Tensor new_zeros(const Tensor& self, IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// _efficientzerotensor: aten::_efficientzerotensor, PyTorch's ZeroTensor (what
// derivative formulas return for a zero gradient); here a plain tensor of zeros.
Tensor _efficientzerotensor(IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// new_empty_strided: aten::new_empty_strided: uninitialised, with the given
// strides, on self's dtype and device unless options say otherwise.
Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, TensorOptions options = {},
                         OPSPEC_LOC);
Tensor full_like(const Tensor& self, const Scalar& fill_value, TensorOptions options = {}, OPSPEC_LOC);
Tensor rand_like(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
Tensor randn_like(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
// tensor: a cpu tensor of the given values and shape, made below the
// dispatcher: no op runs, so modes, DebugMode and fake tensors see nothing
// and make_fx keeps it as a constant. Python's torch.tensor(...) also
// dispatches aten::lift_fresh on the result: ops::lift_fresh(ops::tensor(...))
// does that (the program language's tensor() does).
Tensor tensor(std::vector<double> values, IntArrayRef shape, DType dtype = DType::kFloat32, OPSPEC_LOC);

// ---- In-place ----
Tensor& fill_(Tensor& self, const Scalar& value, OPSPEC_LOC);  // aten::fill_.Scalar
// fill_ with a 0-dim tensor's value (aten::fill_.Tensor; x.fill_(t) in PyTorch).
Tensor& fill_(Tensor& self, const Tensor& value, OPSPEC_LOC);
// masked_fill_: self[mask] = value (mask is b8 and broadcasts to self); aten::masked_fill_.Scalar.
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value, OPSPEC_LOC);
// masked_fill: a copy of self (broadcast with mask) with value where mask is true; aten::masked_fill.Scalar.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value, OPSPEC_LOC);
Tensor& zero_(Tensor& self, OPSPEC_LOC);                        // aten::zero_
Tensor& copy_(Tensor& self, const Tensor& src, OPSPEC_LOC);     // aten::copy_
Tensor& bernoulli_(Tensor& self, double p, OPSPEC_LOC);         // aten::bernoulli_.float
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1, OPSPEC_LOC);  // aten::add_.Tensor
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha = 1, OPSPEC_LOC);  // aten::sub_.Tensor
Tensor& mul_(Tensor& self, const Tensor& other, OPSPEC_LOC);    // aten::mul_.Tensor
Tensor& div_(Tensor& self, const Tensor& other, OPSPEC_LOC);    // aten::div_.Tensor
Tensor& div_(Tensor& self, const Scalar& other, OPSPEC_LOC);    // aten::div_.Tensor, a wrapped number
// add_ / mul_ with a number: aten::add_.Tensor and aten::mul_.Tensor with a wrapped number, as x.add_(1e-8) and
// x.mul_(0.9) in Python (the optimizers' updates).
Tensor& add_(Tensor& self, const Scalar& other, const Scalar& alpha = 1, OPSPEC_LOC);
Tensor& mul_(Tensor& self, const Scalar& other, OPSPEC_LOC);
// round_ with decimals: round(self, decimals) in place (aten::round_.decimals).
Tensor& round_(Tensor& self, int64_t decimals, OPSPEC_LOC);
// logical_and_ / logical_or_: self = self && other (|| other), as 0 or 1 in self's dtype.
Tensor& logical_and_(Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor& logical_or_(Tensor& self, const Tensor& other, OPSPEC_LOC);

// ---- Elementwise unary ----
// One function per row of unary_ops.def, computing what the row's summary
// says (e.g. ops::erf, the error function); dtypes follow the row's rule.
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) Tensor name(const Tensor& self, OPSPEC_LOC);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
// The in-place form of each row: self = name(self), returning self (aten::name_,
// e.g. ops::relu_ for ReLU(inplace=True)); the row's result dtype must cast to
// self's ("result type Float can't be cast to the desired output type Long").
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) Tensor& name##_(Tensor& self, OPSPEC_LOC);
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
// gelu: approximate is "none" (erf form) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none", OPSPEC_LOC);
// logical_not: self == 0, a b8 result for any input dtype.
Tensor logical_not(const Tensor& self, OPSPEC_LOC);
// bitwise_not: ~self for integers, logical not for b8 (floats are rejected).
Tensor bitwise_not(const Tensor& self, OPSPEC_LOC);
// round with decimals: aten::round.decimals: rounded to `decimals` decimal
// places (a negative decimals rounds to tens, hundreds ...), halves to even,
// as ATen: nearbyint(self * 10^decimals) / 10^decimals in self's compute
// type, so f32's 2.675 gives 2.68 at 2; floating self only.
Tensor round(const Tensor& self, int64_t decimals, OPSPEC_LOC);
// clamp: min(max(self, min), max) (aten::clamp); the bounds take part in type
// promotion, a NaN bound gives NaN, min > max gives max everywhere, an
// element that ties a bound stays (-0.0 against 0), and an int32 bound outside
// int32 is dropped or refused. See Note [clamp with number bounds].
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt,
             OPSPEC_LOC);
// clamp (Tensor bounds): aten::clamp.Tensor, the bounds broadcast with self.
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max, OPSPEC_LOC);
// clamp_min / clamp_max: max(self, min) / min(self, max) (aten::clamp_min,
// aten::clamp_max); NaN in self stays, a NaN number bound gives NaN everywhere,
// and a Tensor bound (.Tensor overloads) broadcasts and promotes as maximum /
// minimum do. See Note [clamp_min and clamp_max].
Tensor clamp_min(const Tensor& self, const Scalar& min, OPSPEC_LOC);
Tensor clamp_min(const Tensor& self, const Tensor& min, OPSPEC_LOC);
Tensor clamp_max(const Tensor& self, const Scalar& max, OPSPEC_LOC);
Tensor clamp_max(const Tensor& self, const Tensor& max, OPSPEC_LOC);
// hardtanh: clamp(self, min_val, max_val) in self's dtype (aten::hardtanh);
// an integral self's bounds are truncated to int64 first.
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1, OPSPEC_LOC);
// leaky_relu: self > 0 ? self : self * negative_slope.
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01, OPSPEC_LOC);
// elu: self > 0 ? self * scale : expm1(self * input_scale) * alpha * scale.
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1,
           OPSPEC_LOC);
// softplus: log1p(exp(self * beta)) / beta, or self where self * beta > threshold.
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20, OPSPEC_LOC);
// The in-place forms (aten::clamp_, clamp_.Tensor, hardtanh_, leaky_relu_,
// elu_, pow_.Scalar, pow_.Tensor): self = op(self, ...), returning self; the
// result dtype must be self's (See Note [In-place pointwise ops]).
Tensor& clamp_(Tensor& self, const std::optional<Scalar>& min, const std::optional<Scalar>& max = std::nullopt,
               OPSPEC_LOC);
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max, OPSPEC_LOC);
// clamp_min_ / clamp_max_ (and their .Tensor forms): in place, self's dtype kept.
Tensor& clamp_min_(Tensor& self, const Scalar& min, OPSPEC_LOC);
Tensor& clamp_min_(Tensor& self, const Tensor& min, OPSPEC_LOC);
Tensor& clamp_max_(Tensor& self, const Scalar& max, OPSPEC_LOC);
Tensor& clamp_max_(Tensor& self, const Tensor& max, OPSPEC_LOC);
Tensor& hardtanh_(Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1, OPSPEC_LOC);
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope = 0.01, OPSPEC_LOC);
Tensor& elu_(Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1, const Scalar& input_scale = 1,
             OPSPEC_LOC);
Tensor& pow_(Tensor& self, const Scalar& exponent, OPSPEC_LOC);
Tensor& pow_(Tensor& self, const Tensor& exponent, OPSPEC_LOC);
// isnan / isinf: b8 masks of NaN and of +-inf elements (all false for integers).
Tensor isnan(const Tensor& self, OPSPEC_LOC);
Tensor isinf(const Tensor& self, OPSPEC_LOC);
// nan_to_num: NaN -> nan (0), +inf -> posinf, -inf -> neginf (the dtype's
// largest and lowest finite values when not given).
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt, std::optional<double> neginf = std::nullopt,
                  OPSPEC_LOC);

// ---- Elementwise binary (broadcasting, type promotion) ----
// A Scalar operand becomes a wrapped number, as `x + 1.0` does in PyTorch, so
// add(x, 1.0) is aten::add.Tensor.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1, OPSPEC_LOC);
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha = 1, OPSPEC_LOC);
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1, OPSPEC_LOC);
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1, OPSPEC_LOC);
// rsub: other - self (aten::rsub.Scalar), what `1 - x` calls.
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha = 1, OPSPEC_LOC);
Tensor mul(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor mul(const Tensor& self, const Scalar& other, OPSPEC_LOC);
// div: true division (integers divide to the default float dtype).
Tensor div(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor div(const Tensor& self, const Scalar& other, OPSPEC_LOC);
// pow: aten::pow.Tensor_Tensor / aten::pow.Tensor_Scalar.
Tensor pow(const Tensor& self, const Tensor& exponent, OPSPEC_LOC);
Tensor pow(const Tensor& self, const Scalar& exponent, OPSPEC_LOC);
// pow (Scalar base): aten::pow.Scalar, self ** exponent elementwise.
Tensor pow(const Scalar& self, const Tensor& exponent, OPSPEC_LOC);
// remainder: Python's %: the result has the divisor's sign (aten::remainder.Tensor / .Scalar).
Tensor remainder(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor remainder(const Tensor& self, const Scalar& other, OPSPEC_LOC);
// fmod: C's fmod: the result has the dividend's sign (aten::fmod.Tensor / .Scalar).
Tensor fmod(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor fmod(const Tensor& self, const Scalar& other, OPSPEC_LOC);
// div with a rounding mode: "trunc", "floor", or nullopt for true division
// (aten::div.Tensor_mode / .Scalar_mode); integers stay integers when rounding.
Tensor div(const Tensor& self, const Tensor& other, std::optional<std::string_view> rounding_mode, OPSPEC_LOC);
Tensor div(const Tensor& self, const Scalar& other, std::optional<std::string_view> rounding_mode, OPSPEC_LOC);
// atan2: the angle of (other, self), in floating point.
Tensor atan2(const Tensor& self, const Tensor& other, OPSPEC_LOC);
// bitwise_and / bitwise_or / bitwise_xor: integers and b8 only (aten::bitwise_*.Tensor / .Scalar).
Tensor bitwise_and(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor bitwise_or(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor bitwise_xor(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor bitwise_and(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor bitwise_or(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor bitwise_xor(const Tensor& self, const Scalar& other, OPSPEC_LOC);
// threshold_backward, tanh_backward, sigmoid_backward: autograd's backward
// ops of relu (threshold 0), tanh and sigmoid (given their saved output).
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold, OPSPEC_LOC);
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output, OPSPEC_LOC);
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output, OPSPEC_LOC);
// gelu_backward, silu_backward: the backward ops of gelu and silu (given their input).
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate = "none",
                     OPSPEC_LOC);
Tensor silu_backward(const Tensor& grad_output, const Tensor& self, OPSPEC_LOC);
// hardtanh_backward, leaky_relu_backward, elu_backward, softplus_backward:
// the backward ops of the parametrized activations, as PyTorch's.
Tensor hardtanh_backward(const Tensor& grad_output, const Tensor& self, const Scalar& min_val, const Scalar& max_val,
                         OPSPEC_LOC);
Tensor leaky_relu_backward(const Tensor& grad_output, const Tensor& self, const Scalar& negative_slope,
                           bool self_is_result, OPSPEC_LOC);
Tensor elu_backward(const Tensor& grad_output, const Scalar& alpha, const Scalar& scale, const Scalar& input_scale,
                    bool is_result, const Tensor& self_or_result, OPSPEC_LOC);
Tensor softplus_backward(const Tensor& grad_output, const Tensor& self, const Scalar& beta, const Scalar& threshold,
                         OPSPEC_LOC);
// native_dropout_backward: grad_output * mask * scale, dropout's backward.
Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale, OPSPEC_LOC);
Tensor maximum(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor minimum(const Tensor& self, const Tensor& other, OPSPEC_LOC);
// Comparisons return b8: aten::eq.Tensor / aten::eq.Scalar, and so on.
Tensor eq(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor ne(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor lt(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor le(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor gt(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor ge(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor eq(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor ne(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor lt(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor le(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor gt(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor ge(const Tensor& self, const Scalar& other, OPSPEC_LOC);
Tensor logical_and(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor logical_or(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor logical_xor(const Tensor& self, const Tensor& other, OPSPEC_LOC);
// where: aten::where.self; scalar branches become wrapped numbers.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other, OPSPEC_LOC);

// addcmul / addcdiv: self + value * tensor1 * tensor2 and self + value *
// tensor1 / tensor2, the three broadcast and promoted (aten::addcmul,
// aten::addcdiv; addcdiv refuses two integral tensors, as PyTorch does).
Tensor addcmul(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1, OPSPEC_LOC);
Tensor addcdiv(const Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1, OPSPEC_LOC);
// addcmul_ / addcdiv_: the same into self (aten::addcmul_, aten::addcdiv_); returns self.
Tensor& addcmul_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1, OPSPEC_LOC);
Tensor& addcdiv_(Tensor& self, const Tensor& tensor1, const Tensor& tensor2, const Scalar& value = 1, OPSPEC_LOC);
// lerp: self + weight * (end - self), end (and a tensor weight) of self's
// floating dtype (aten::lerp.Scalar, aten::lerp.Tensor).
Tensor lerp(const Tensor& self, const Tensor& end, const Scalar& weight, OPSPEC_LOC);
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight, OPSPEC_LOC);
// lerp_: the same into self (aten::lerp_.Scalar, aten::lerp_.Tensor); returns self.
Tensor& lerp_(Tensor& self, const Tensor& end, const Scalar& weight, OPSPEC_LOC);
Tensor& lerp_(Tensor& self, const Tensor& end, const Tensor& weight, OPSPEC_LOC);

// ---- Reductions ----
Tensor sum(const Tensor& self, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);  // aten::sum
// sum over dims: aten::sum.dim_IntList.
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
           OPSPEC_LOC);
Tensor mean(const Tensor& self, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);  // aten::mean
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
            OPSPEC_LOC);  // aten::mean.dim
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false, OPSPEC_LOC);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false, OPSPEC_LOC);
// linalg_vector_norm: sum(|x|^ord)^(1/ord); ord may be inf, -inf or 0.
Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord = 2, OptionalIntArrayRef dim = std::nullopt,
                          bool keepdim = false, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);

// ---- Normalisation and friends ----
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float = false, OPSPEC_LOC);
Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float = false, OPSPEC_LOC);
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5, OPSPEC_LOC);
// native_layer_norm: (output, mean, rstd).
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps, OPSPEC_LOC);
// _softmax_backward_data / _log_softmax_backward_data: the input gradient of
// _softmax / _log_softmax from the output's gradient and the saved output;
// the result has dtype input_dtype.
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype,
                              OPSPEC_LOC);
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype,
                                  OPSPEC_LOC);
// native_layer_norm_backward: (grad_input, grad_weight, grad_bias) from the
// forward's saved mean and rstd; output i is undefined where output_mask[i] is false.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(
    const Tensor& grad_out, const Tensor& input, IntArrayRef normalized_shape, const Tensor& mean, const Tensor& rstd,
    const std::optional<Tensor>& weight, const std::optional<Tensor>& bias, std::array<bool, 3> output_mask,
    OPSPEC_LOC);
// rms_norm: input * rsqrt(mean(input^2 over the last dims) + eps) * weight, in
// f32 (f64 for f64) and cast back; eps None is the opmath dtype's epsilon
// (decompositions_norm.cc, Note [rms_norm's decomposition]).
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight = std::nullopt,
                std::optional<double> eps = std::nullopt, OPSPEC_LOC);
// _fused_rms_norm: (output, rstd), rstd in the opmath dtype with the normalised dims kept as 1.
std::tuple<Tensor, Tensor> _fused_rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                                           const std::optional<Tensor>& weight, std::optional<double> eps,
                                           OPSPEC_LOC);
Tensor dropout(const Tensor& input, double p, bool train, OPSPEC_LOC);
// native_dropout: (output, mask).
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train, OPSPEC_LOC);

// ---- Views (share self's storage) ----
Tensor view(const Tensor& self, IntArrayRef size, OPSPEC_LOC);
Tensor reshape(const Tensor& self, IntArrayRef shape, OPSPEC_LOC);
Tensor _unsafe_view(const Tensor& self, IntArrayRef size, OPSPEC_LOC);
Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                  std::optional<int64_t> storage_offset = std::nullopt, OPSPEC_LOC);
// as_strided_: restrides self in place (its storage and data unchanged).
Tensor& as_strided_(Tensor& self, IntArrayRef size, IntArrayRef stride,
                    std::optional<int64_t> storage_offset = std::nullopt, OPSPEC_LOC);
Tensor permute(const Tensor& self, IntArrayRef dims, OPSPEC_LOC);
Tensor t(const Tensor& self, OPSPEC_LOC);
// numpy_T: x.T in PyTorch (all dims reversed; aten::permute underneath).
Tensor numpy_T(const Tensor& self, OPSPEC_LOC);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1, OPSPEC_LOC);
Tensor expand(const Tensor& self, IntArrayRef size, OPSPEC_LOC);
Tensor unsqueeze(const Tensor& self, int64_t dim, OPSPEC_LOC);
Tensor squeeze(const Tensor& self, OPSPEC_LOC);
Tensor squeeze(const Tensor& self, int64_t dim, OPSPEC_LOC);
Tensor& squeeze_(Tensor& self, int64_t dim, OPSPEC_LOC);
// t_ / transpose_ / unsqueeze_: self itself restrided as t, transpose and
// unsqueeze would view it (aten::t_, aten::transpose_, aten::unsqueeze_).
Tensor& t_(Tensor& self, OPSPEC_LOC);
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1, OPSPEC_LOC);
Tensor& unsqueeze_(Tensor& self, int64_t dim, OPSPEC_LOC);
Tensor slice(const Tensor& self, int64_t dim = 0, std::optional<int64_t> start = std::nullopt,
             std::optional<int64_t> end = std::nullopt, int64_t step = 1, OPSPEC_LOC);
Tensor select(const Tensor& self, int64_t dim, int64_t index, OPSPEC_LOC);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1, OPSPEC_LOC);
// narrow: length elements of dim from start (negative counts from the end), as aten::slice.Tensor.
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length, OPSPEC_LOC);
Tensor alias(const Tensor& self, OPSPEC_LOC);
// detach: aten::detach: a view out of autograd's graph (Tensor::detach calls it).
Tensor detach(const Tensor& self, OPSPEC_LOC);
// contiguous: self when already contiguous, else aten::clone.
Tensor contiguous(const Tensor& self, OPSPEC_LOC);
// contiguous in a memory format: self when already laid out so, else aten::clone
// in it; kPreserve is refused unless self is contiguous, as in PyTorch.
Tensor contiguous(const Tensor& self, MemoryFormat memory_format, OPSPEC_LOC);

// ---- Copies, conversion, joins ----
// clone: a copy in self's layout (preserve_format: self's strides when dense,
// else its dims' order; See Note [Memory formats]).
Tensor clone(const Tensor& self, OPSPEC_LOC);
// clone with a memory format as the schema's int (0: torch.contiguous_format, as contiguous passes).
Tensor clone(const Tensor& self, std::optional<int64_t> memory_format, OPSPEC_LOC);
// clone laid out in memory_format.
Tensor clone(const Tensor& self, MemoryFormat memory_format, OPSPEC_LOC);
// lift_fresh: self itself, dispatched as Python's torch.tensor(...) does for
// its new data (so modes see it); make_fx records it as lift_fresh_copy.
Tensor lift_fresh(const Tensor& self, OPSPEC_LOC);
// lift_fresh_copy: a copy of self (aten::lift_fresh in a traced graph).
Tensor lift_fresh_copy(const Tensor& self, OPSPEC_LOC);
// _to_copy: a copy with options' dtype, device and memory format (preserve when none).
Tensor _to_copy(const Tensor& self, TensorOptions options = {}, OPSPEC_LOC);
// to: self when nothing changes (and !copy), else aten::_to_copy.
Tensor to(const Tensor& self, DType dtype, bool copy = false, OPSPEC_LOC);
Tensor to(const Tensor& self, Device device, std::optional<DType> dtype = std::nullopt, bool copy = false,
          OPSPEC_LOC);
Tensor cat(TensorList tensors, int64_t dim = 0, OPSPEC_LOC);
Tensor stack(TensorList tensors, int64_t dim = 0, OPSPEC_LOC);
// slice_backward / select_backward: zeros of input_sizes with grad_output
// written into the slice (select) that the forward took; their backward ops.
Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                      int64_t step, OPSPEC_LOC);
Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t index, OPSPEC_LOC);
// item: aten::_local_scalar_dense.
Scalar item(const Tensor& self, OPSPEC_LOC);

// ---- Matrix products ----
Tensor mm(const Tensor& self, const Tensor& mat2, OPSPEC_LOC);
Tensor bmm(const Tensor& self, const Tensor& mat2, OPSPEC_LOC);
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1, OPSPEC_LOC);
Tensor dot(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor mv(const Tensor& self, const Tensor& vec, OPSPEC_LOC);
Tensor matmul(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              OPSPEC_LOC);

// ---- Indexing, embeddings, triangles, arg-reductions (ops_nn.cc) ----
// index_select: self's slices at index (a 0-D or 1-D integer tensor) along dim.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, OPSPEC_LOC);
// embedding: rows of weight (2-D) at indices: indices' shape + [weight.size(1)].
// padding_idx (-1: none) only matters to the backward, whose row it leaves zero.
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false, OPSPEC_LOC);
// embedding_dense_backward: embedding's weight gradient ([num_weights, D]).
Tensor embedding_dense_backward(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                int64_t padding_idx, bool scale_grad_by_freq, OPSPEC_LOC);
// tril / triu: the lower (upper) triangle of each matrix in the last two
// dims, from the diagonal'th diagonal (0 main, > 0 above, < 0 below); zero elsewhere.
Tensor tril(const Tensor& self, int64_t diagonal = 0, OPSPEC_LOC);
Tensor triu(const Tensor& self, int64_t diagonal = 0, OPSPEC_LOC);
// argmax / argmin: i64 index of the first largest (smallest) element along
// dim, or of the flattened tensor when dim is None; NaN counts as largest and smallest.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false, OPSPEC_LOC);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false, OPSPEC_LOC);

// ---- Statistics (ops_nn.cc) ----
// var / std: the variance (its square root) over dim (None: every dim),
// dividing by n - correction (default 1, Bessel's); aten::var.correction, aten::std.correction.
Tensor var(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, OPSPEC_LOC);
Tensor std(const Tensor& self, OptionalIntArrayRef dim = std::nullopt, std::optional<Scalar> correction = std::nullopt,
           bool keepdim = false, OPSPEC_LOC);
// var_mean: (var, mean) in one pass over the data.
std::tuple<Tensor, Tensor> var_mean(const Tensor& self, OptionalIntArrayRef dim = std::nullopt,
                                    std::optional<Scalar> correction = std::nullopt, bool keepdim = false, OPSPEC_LOC);
// logsumexp: log(sum(exp(self))) over dim, computed stably.
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false, OPSPEC_LOC);
// any / all: b8, whether some (every) element is nonzero, over dim or everything.
Tensor any(const Tensor& self, OPSPEC_LOC);
Tensor any(const Tensor& self, int64_t dim, bool keepdim = false, OPSPEC_LOC);
Tensor all(const Tensor& self, OPSPEC_LOC);
Tensor all(const Tensor& self, int64_t dim, bool keepdim = false, OPSPEC_LOC);

// ---- Losses (ops_nn.cc) ----
// Reduction: at::Reduction, how a loss reduces over the batch.
enum class Reduction : int64_t { kNone = 0, kMean = 1, kSum = 2 };
// cross_entropy: aten::cross_entropy_loss of logits self ([N, C] or [C]) and
// class indices target; label_smoothing in [0, 1].
Tensor cross_entropy(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                     Reduction reduction = Reduction::kMean, int64_t ignore_index = -100,
                     double label_smoothing = 0.0, OPSPEC_LOC);
// mse_loss: mean (sum, or none) of (self - target)^2; mse_loss_backward: its gradient of self.
Tensor mse_loss(const Tensor& self, const Tensor& target, Reduction reduction = Reduction::kMean, OPSPEC_LOC);
Tensor mse_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target, Reduction reduction,
                         OPSPEC_LOC);
// nll_loss / nll_loss_nd / nll_loss2d: the negative log likelihood of
// log-probabilities self: [N, C] or [C] (nll_loss), [N, C, d...] (nll_loss_nd:
// 1-D and 2-D are nll_loss, 4-D nll_loss2d, 3-D and wider than 4-D viewed as
// [N, C, 1, -1] for nll_loss2d), [N, C, H, W] (nll_loss2d).
Tensor nll_loss(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                Reduction reduction = Reduction::kMean, int64_t ignore_index = -100, OPSPEC_LOC);
Tensor nll_loss_nd(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                   Reduction reduction = Reduction::kMean, int64_t ignore_index = -100, OPSPEC_LOC);
Tensor nll_loss2d(const Tensor& self, const Tensor& target, const std::optional<Tensor>& weight = std::nullopt,
                  Reduction reduction = Reduction::kMean, int64_t ignore_index = -100, OPSPEC_LOC);
// nll_loss_forward: (output, total_weight); nll_loss_backward: the gradient of self.
std::tuple<Tensor, Tensor> nll_loss_forward(const Tensor& self, const Tensor& target,
                                            const std::optional<Tensor>& weight, Reduction reduction,
                                            int64_t ignore_index, OPSPEC_LOC);
Tensor nll_loss_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                         const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index,
                         const Tensor& total_weight, OPSPEC_LOC);
// nll_loss2d_forward / nll_loss2d_backward: the same over [N, C, H, W] and targets [N, H, W].
std::tuple<Tensor, Tensor> nll_loss2d_forward(const Tensor& self, const Tensor& target,
                                              const std::optional<Tensor>& weight, Reduction reduction,
                                              int64_t ignore_index, OPSPEC_LOC);
Tensor nll_loss2d_backward(const Tensor& grad_output, const Tensor& self, const Tensor& target,
                           const std::optional<Tensor>& weight, Reduction reduction, int64_t ignore_index,
                           const Tensor& total_weight, OPSPEC_LOC);

// ---- Attention (ops_nn.cc) ----
// _safe_softmax: softmax over dim (after converting to dtype) whose rows of
// all -inf give zeros, not NaN: the attention math path's softmax.
Tensor _safe_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
// scaled_dot_product_attention: softmax(q k^T * scale + mask) v over
// (B, H, L, E) operands, as PyTorch's CPU path dispatches it (See Note
// [Attention dispatch] in decompositions_nn.cc); attn_mask is bool (true
// attends) or float (added); is_causal masks above the diagonal.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const std::optional<Tensor>& attn_mask = std::nullopt, double dropout_p = 0.0,
                                    bool is_causal = false, std::optional<double> scale = std::nullopt,
                                    bool enable_gqa = false, OPSPEC_LOC);
// _scaled_dot_product_attention_math: the reference path: (output, attention weights).
std::tuple<Tensor, Tensor> _scaled_dot_product_attention_math(
    const Tensor& query, const Tensor& key, const Tensor& value, const std::optional<Tensor>& attn_mask = std::nullopt,
    double dropout_p = 0.0, bool is_causal = false, const std::optional<Tensor>& dropout_mask = std::nullopt,
    std::optional<double> scale = std::nullopt, bool enable_gqa = false, OPSPEC_LOC);
// _scaled_dot_product_flash_attention_for_cpu: (output, logsumexp); the
// output is a transpose of a (B, L, H, Ev) buffer, as PyTorch's.
std::tuple<Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu(
    const Tensor& query, const Tensor& key, const Tensor& value, double dropout_p = 0.0, bool is_causal = false,
    const std::optional<Tensor>& attn_mask = std::nullopt, std::optional<double> scale = std::nullopt, OPSPEC_LOC);
// _scaled_dot_product_flash_attention_for_cpu_backward: (grad_query, grad_key, grad_value).
std::tuple<Tensor, Tensor, Tensor> _scaled_dot_product_flash_attention_for_cpu_backward(
    const Tensor& grad_out, const Tensor& query, const Tensor& key, const Tensor& value, const Tensor& out,
    const Tensor& logsumexp, double dropout_p, bool is_causal, const std::optional<Tensor>& attn_mask = std::nullopt,
    std::optional<double> scale = std::nullopt, OPSPEC_LOC);

// ---- Convolution and pooling (ops_nn.cc) ----
// Single-value stride, padding, dilation and kernel sizes expand to every
// spatial dim before dispatch, as PyTorch's Python argument parser does.
// conv2d / conv1d: aten::convolution of [N, C, H, W] / [N, C, L] (or unbatched) input
// by weight [C_out, C / groups, k...].
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1,
              OPSPEC_LOC);
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1,
              OPSPEC_LOC);
// conv_transpose2d / conv_transpose1d: aten::convolution with transposed=True
// (weight [C, C_out / groups, k...]): the adjoint of conv2d / conv1d; each
// spatial output size is (in - 1) stride - 2 padding + dilation (k - 1) +
// output_padding + 1.
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1}, OPSPEC_LOC);
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
                        IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1}, OPSPEC_LOC);
Tensor convolution(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
                   int64_t groups, OPSPEC_LOC);
// convolution_backward: (grad_input, grad_weight, grad_bias), each undefined where output_mask says so.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output, const Tensor& input,
                                                        const Tensor& weight, OptionalIntArrayRef bias_sizes,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool transposed, IntArrayRef output_padding, int64_t groups,
                                                        std::array<bool, 3> output_mask, OPSPEC_LOC);
// max_pool2d: the max of each window (stride {} means kernel_size); aten::max_pool2d_with_indices.
Tensor max_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  IntArrayRef dilation = {1}, bool ceil_mode = false, OPSPEC_LOC);
// max_pool2d_with_indices: (output, indices into each input plane).
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& self, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {}, IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1}, bool ceil_mode = false, OPSPEC_LOC);
Tensor max_pool2d_with_indices_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool ceil_mode,
                                        const Tensor& indices, OPSPEC_LOC);
// avg_pool2d: the mean of each window (padding counted unless count_include_pad is false).
Tensor avg_pool2d(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride = {}, IntArrayRef padding = {0},
                  bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt, OPSPEC_LOC);
Tensor avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                           IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                           std::optional<int64_t> divisor_override, OPSPEC_LOC);
// adaptive_avg_pool2d: means over output_size windows covering the plane; [1, 1] is mean.dim.
Tensor adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size, OPSPEC_LOC);
Tensor _adaptive_avg_pool2d(const Tensor& self, IntArrayRef output_size, OPSPEC_LOC);
Tensor _adaptive_avg_pool2d_backward(const Tensor& grad_output, const Tensor& self, OPSPEC_LOC);
// batch_norm: normalises each channel (dim 1) by the batch's statistics
// (training: running stats updated in place, the variance unbiased) or by the
// running stats; aten::empty of the reserve then aten::native_batch_norm.
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                  const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var, bool training,
                  double momentum = 0.1, double eps = 1e-5, OPSPEC_LOC);
// native_batch_norm: (output, save_mean, save_invstd); the saves are empty in eval.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var, bool training,
                                                     double momentum, double eps, OPSPEC_LOC);
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask, OPSPEC_LOC);

// ---- Scatter, gather and indexing ----
// gather: out[i][j] = self[index[i][j]][j] along dim (index is int64, out has index's shape).
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, bool sparse_grad = false, OPSPEC_LOC);
// scatter: a copy of self with src[i][j] written at self[index[i][j]][j] along dim; aten::scatter.src.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, OPSPEC_LOC);
// scatter: a copy of self with value written at the positions index names along dim; aten::scatter.value.
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, OPSPEC_LOC);
// scatter_: scatter in place; aten::scatter_.src.
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, OPSPEC_LOC);
// scatter_: scatter of a value in place; aten::scatter_.value.
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value, OPSPEC_LOC);
// scatter_add: a copy of self with src added at the positions index names along dim.
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, OPSPEC_LOC);
// scatter_add_: scatter_add in place (gather's backward uses it).
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, OPSPEC_LOC);
// scatter_reduce: src reduced into a copy of self along dim with reduce = "sum", "prod", "mean",
// "amax" or "amin"; include_self: whether self's values take part; aten::scatter_reduce.two.
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      std::string_view reduce, bool include_self = true, OPSPEC_LOC);
// scatter_reduce_: scatter_reduce in place; aten::scatter_reduce_.two.
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src, std::string_view reduce,
                        bool include_self = true, OPSPEC_LOC);
// masked_fill: masked_fill with a 0-dim tensor value; aten::masked_fill.Tensor.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value, OPSPEC_LOC);
// masked_fill_: masked_fill_ with a 0-dim tensor value; aten::masked_fill_.Tensor.
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value, OPSPEC_LOC);
// masked_select: the 1-D tensor of self's elements where mask (broadcast with self) is true.
Tensor masked_select(const Tensor& self, const Tensor& mask, OPSPEC_LOC);
// select_scatter: a copy of self with self.select(dim, index) replaced by src.
Tensor select_scatter(const Tensor& self, const Tensor& src, int64_t dim, int64_t index, OPSPEC_LOC);
// slice_scatter: a copy of self with self.slice(dim, start, end, step) replaced by src.
Tensor slice_scatter(const Tensor& self, const Tensor& src, int64_t dim = 0,
                     std::optional<int64_t> start = std::nullopt, std::optional<int64_t> end = std::nullopt,
                     int64_t step = 1, OPSPEC_LOC);
// diagonal: the view of the diagonal at offset of the dim1 x dim2 planes, as the last dim.
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1, OPSPEC_LOC);
// diagonal_backward: zeros of input_sizes with grad_output written on their diagonal.
Tensor diagonal_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t offset, int64_t dim1,
                         int64_t dim2, OPSPEC_LOC);
// index: self[indices] with advanced indexing (nullopt entries are `:`; bool masks; indices
// broadcast); aten::index.Tensor.
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, OPSPEC_LOC);
// index_put_: self[indices] = values (or += with accumulate), in place.
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                   bool accumulate = false, OPSPEC_LOC);
// index_put: index_put_ on a copy of self.
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                 bool accumulate = false, OPSPEC_LOC);
// _index_put_impl_: index_put_'s kernel op (index's backward calls it); unsafe skips nothing here.
Tensor& _index_put_impl_(Tensor& self, const std::vector<std::optional<Tensor>>& indices, const Tensor& values,
                         bool accumulate = false, bool unsafe = false, OPSPEC_LOC);
// nonzero: the [n, self.dim()] int64 tensor of the indices of self's nonzero elements (row-major order).
Tensor nonzero(const Tensor& self, OPSPEC_LOC);

// ---- Sorting, scans and value-selecting reductions ----
// prod: the product of every element (bool and integer inputs give i64, as sum); aten::prod.
Tensor prod(const Tensor& self, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
// prod over one dim: aten::prod.dim_int.
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false, std::optional<DType> dtype = std::nullopt,
            OPSPEC_LOC);
// max / min: the largest (smallest) element as a 0-D tensor, NaN if any is NaN; aten::max, aten::min.
Tensor max(const Tensor& self, OPSPEC_LOC);
Tensor min(const Tensor& self, OPSPEC_LOC);
// max / min over dim: (values, i64 indices of the first max (min); NaN wins); aten::max.dim, aten::min.dim.
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false, OPSPEC_LOC);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false, OPSPEC_LOC);
// max / min of two tensors: maximum / minimum, which they forward to (aten::max.other, aten::min.other).
Tensor max(const Tensor& self, const Tensor& other, OPSPEC_LOC);
Tensor min(const Tensor& self, const Tensor& other, OPSPEC_LOC);
// cumsum / cumprod: inclusive running sum (product) along dim (bool and integer inputs give i64).
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<DType> dtype = std::nullopt, OPSPEC_LOC);
// sort: (values, i64 indices) along dim, NaN largest; aten::sort (not promised stable).
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false, OPSPEC_LOC);
// sort with stable: aten::sort.stable; stable keeps equal elements in input order.
std::tuple<Tensor, Tensor> sort(const Tensor& self, std::optional<bool> stable, int64_t dim = -1,
                                bool descending = false, OPSPEC_LOC);
// topk: the k largest (smallest) elements along dim and their i64 indices, sorted if asked.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1, bool largest = true,
                                bool sorted = true, OPSPEC_LOC);

// ---- Padding, upsampling, group norm and data movement ----
// (ops_movement.cc; kernels in kernels/cpu/movement.cc and group_norm.cc.)
// constant_pad_nd: pads the last pad.size()/2 dims with value, pad pairs
// (before, after) from the last dim backwards; negative pads crop.
Tensor constant_pad_nd(const Tensor& self, IntArrayRef pad, const Scalar& value = 0, OPSPEC_LOC);
// upsample_nearest2d: [N, C, H, W] (4-D only) to output_size, each output
// pixel the input's at floor(dst * scale), scale = in / out or 1 / scales_h|w.
Tensor upsample_nearest2d(const Tensor& self, IntArrayRef output_size, std::optional<double> scales_h = std::nullopt,
                          std::optional<double> scales_w = std::nullopt, OPSPEC_LOC);
// upsample_nearest2d_vec: aten::upsample_nearest2d.vec: exactly one of
// output_size and scale_factors; computes the size, then aten::upsample_nearest2d.
Tensor upsample_nearest2d_vec(const Tensor& input, OptionalIntArrayRef output_size,
                              const std::optional<std::vector<double>>& scale_factors, OPSPEC_LOC);
// upsample_nearest2d_backward: sums grad_output [N, C, OH, OW] into the
// input pixels it was copied from (input_size is the input's 4 sizes).
Tensor upsample_nearest2d_backward(const Tensor& grad_output, IntArrayRef output_size, IntArrayRef input_size,
                                   std::optional<double> scales_h = std::nullopt,
                                   std::optional<double> scales_w = std::nullopt, OPSPEC_LOC);
// group_norm: normalises each of num_groups channel groups of [N, C, *] input
// by its own mean and variance, then the per-channel affine (the checks,
// then aten::native_group_norm with N, C and H*W).
Tensor group_norm(const Tensor& input, int64_t num_groups, const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5, bool cudnn_enabled = true,
                  OPSPEC_LOC);
// native_group_norm: (output, mean, rstd), mean and rstd of shape [N, group].
std::tuple<Tensor, Tensor, Tensor> native_group_norm(const Tensor& input, const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, int64_t N, int64_t C,
                                                     int64_t HxW, int64_t group, double eps, OPSPEC_LOC);
// native_group_norm_backward: (grad_input, grad_weight, grad_bias), each undefined where output_mask says so.
std::tuple<Tensor, Tensor, Tensor> native_group_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              const Tensor& mean, const Tensor& rstd,
                                                              const std::optional<Tensor>& weight, int64_t N,
                                                              int64_t C, int64_t HxW, int64_t group,
                                                              std::array<bool, 3> output_mask, OPSPEC_LOC);
// flip: a copy with the order of each of dims reversed.
Tensor flip(const Tensor& self, IntArrayRef dims, OPSPEC_LOC);
// roll: a copy shifted by shifts[i] along dims[i], wrapping around; with dims
// empty, the flattened tensor rolled by shifts[0], in self's shape.
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {}, OPSPEC_LOC);
// repeat: self tiled repeats[i] times along dim i (leading repeats add dims).
Tensor repeat(const Tensor& self, IntArrayRef repeats, OPSPEC_LOC);
// unflatten: a view splitting dim into sizes (one -1 inferred); aten::view.
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes, OPSPEC_LOC);
// movedim: a view moving dims source to positions destination, the others
// keeping their order; aten::permute underneath.
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination, OPSPEC_LOC);
Tensor movedim(const Tensor& self, int64_t source, int64_t destination, OPSPEC_LOC);

// ---- Random (ops_random.cc; kernels in kernels/cpu/random.cc) ----
// randint: aten::randint: integers uniform in [0, high), i64 unless options give a dtype.
Tensor randint(int64_t high, IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// randint with low: aten::randint.low: integers uniform in [low, high).
Tensor randint(int64_t low, int64_t high, IntArrayRef size, TensorOptions options = {}, OPSPEC_LOC);
// uniform_: aten::uniform_: fills self with draws uniform in [from, to).
Tensor& uniform_(Tensor& self, double from = 0, double to = 1, OPSPEC_LOC);
// normal_: aten::normal_: fills self with draws from N(mean, std^2).
Tensor& normal_(Tensor& self, double mean = 0, double std = 1, OPSPEC_LOC);
// bernoulli: aten::bernoulli: 1 with probability self[i] (in [0, 1]), else 0, in self's dtype.
Tensor bernoulli(const Tensor& self, OPSPEC_LOC);
// bernoulli with p: aten::bernoulli.p: 1 with probability p, in self's shape and dtype.
Tensor bernoulli(const Tensor& self, double p, OPSPEC_LOC);

// ---- List-returning views (ops_shape.cc; kernels in kernels/cpu/split.cc) ----
// split: aten::split.Tensor: views of split_size along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0, OPSPEC_LOC);
// split_with_sizes: aten::split_with_sizes: views of the given sizes along dim (they sum to its size).
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef split_sizes, int64_t dim = 0, OPSPEC_LOC);
// unbind: aten::unbind.int: the select views of every index of dim.
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0, OPSPEC_LOC);
// chunk: aten::chunk: at most chunks views along dim, of ceil(size / chunks) each (a composite: aten::split.Tensor).
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0, OPSPEC_LOC);

// ---- Checks ----
// allclose: |a - b| <= atol + rtol * |b| elementwise, shapes equal (no dispatch).
bool allclose(const Tensor& a, const Tensor& b, double rtol = 1e-5, double atol = 1e-8);
// equal: same shape, dtype and values (NaN != NaN), without dispatch.
bool equal(const Tensor& a, const Tensor& b);

#undef OPSPEC_LOC

}  // namespace ops

// Operators, as PyTorch's Python operators call them.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator-(const Scalar& a, const Tensor& b);  // aten::rsub.Scalar
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator/(const Scalar& a, const Tensor& b);  // reciprocal then mul, as PyTorch's __rtruediv__
Tensor operator-(const Tensor& a);

}  // namespace opspec
