// ops.cc: the public op API: records the call site, then dispatches the op.
// Argument conventions follow what PyTorch's Python frontend passes to the
// dispatcher, so logs read the same: factories pass device= and
// pin_memory=False explicitly, Scalar operands become wrapped numbers.
#include "runtime/ops/ops.h"

#include <cmath>

#include "runtime/core/call_site.h"
#include "runtime/ops/internal/call.h"
#include "runtime/ops/op_table.h"

namespace opspec {
namespace ops {
namespace {

using OptDType = std::optional<DType>;
using OptDevice = std::optional<Device>;
using OptInt = std::optional<int64_t>;
using OptBool = std::optional<bool>;
using OptTensor = std::optional<Tensor>;

using internal::call;  // runtime/ops/internal/call.h
using internal::wrap;

using UnarySig = Tensor(const Tensor&);
using BinarySig = Tensor(const Tensor&, const Tensor&);
using BinaryAlphaSig = Tensor(const Tensor&, const Tensor&, const Scalar&);
using ScalarSig = Tensor(const Tensor&, const Scalar&);
using FactorySig = Tensor(IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
using LikeSig = Tensor(const Tensor&, OptDType, OptInt, OptDevice, OptBool, OptInt);
using FillLikeSig = Tensor(const Tensor&, const Scalar&, OptDType, OptInt, OptDevice, OptBool, OptInt);

Device device_or_cpu(const TensorOptions& o) { return o.device.value_or(kCPU); }

Tensor factory(OpId id, IntArrayRef size, const TensorOptions& o) {
  return call<FactorySig>(id, size, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
// dtype_or / device_or: the option, else self's. An undefined self leaves the
// option as it is: the dispatcher then refuses self, naming the op.
OptDType dtype_or(const OptDType& dtype, const Tensor& self) {
  return dtype || !self.defined() ? dtype : OptDType(self.dtype());
}
OptDevice device_or(const OptDevice& device, const Tensor& self) {
  return device || !self.defined() ? device : OptDevice(self.device());
}

// format_int: a memory format as the int schemas carry.
OptInt format_int(const std::optional<MemoryFormat>& f) {
  return f ? OptInt(static_cast<int64_t>(*f)) : OptInt();
}

// The Python frontend fills a *_like call's options from self.
Tensor like(OpId id, const Tensor& self, const TensorOptions& o) {
  return call<LikeSig>(id, self, dtype_or(o.dtype, self), OptInt(0), device_or(o.device, self), OptBool(false),
                       format_int(o.memory_format));
}

}  // namespace

#define OPSPEC_SITE CallSiteScope site_scope_(loc)

// ---- Factories ----
Tensor empty(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(IntArrayRef, OptDType, OptInt, OptDevice, OptBool, OptInt);
  return call<Sig>(OpId::empty_memory_format, size, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false),
                   format_int(o.memory_format));
}
Tensor empty_strided(IntArrayRef size, IntArrayRef stride, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(IntArrayRef, IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::empty_strided, size, stride, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
Tensor new_empty_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, TensorOptions o,
                         const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::new_empty_strided, self, size, stride, dtype_or(o.dtype, self), OptInt(),
                   device_or(o.device, self), OptBool(false));
}
Tensor new_zeros(const Tensor& self, IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::new_zeros, self, size, o.dtype, OptInt(), o.device, OptBool());
}
Tensor _efficientzerotensor(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  // As the formulas pass them: dtype, layout=strided, device; no pin_memory.
  return call<FactorySig>(OpId::_efficientzerotensor, size, o.dtype, OptInt(0), OptDevice(device_or_cpu(o)),
                          OptBool());
}
Tensor zeros(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return factory(OpId::zeros, size, o);
}
Tensor ones(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return factory(OpId::ones, size, o);
}
Tensor full(IntArrayRef size, const Scalar& fill_value, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(IntArrayRef, const Scalar&, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::full, size, fill_value, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
Tensor scalar_tensor(const Scalar& s, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Scalar&, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::scalar_tensor, s, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
Tensor arange(const Scalar& end, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Scalar&, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::arange, end, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
Tensor arange(const Scalar& start, const Scalar& end, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Scalar&, const Scalar&, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::arange_start, start, end, o.dtype, OptInt(), OptDevice(device_or_cpu(o)), OptBool(false));
}
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, TensorOptions o,
              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Scalar&, const Scalar&, const Scalar&, OptDType, OptInt, OptDevice, OptBool);
  return call<Sig>(OpId::arange_start_step, start, end, step, o.dtype, OptInt(), OptDevice(device_or_cpu(o)),
                   OptBool(false));
}
Tensor rand(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return factory(OpId::rand, size, o);
}
Tensor randn(IntArrayRef size, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return factory(OpId::randn, size, o);
}
Tensor empty_like(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return like(OpId::empty_like, self, o);
}
Tensor zeros_like(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return like(OpId::zeros_like, self, o);
}
Tensor ones_like(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return like(OpId::ones_like, self, o);
}
Tensor full_like(const Tensor& self, const Scalar& fill_value, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<FillLikeSig>(OpId::full_like, self, fill_value, dtype_or(o.dtype, self), OptInt(0),
                           device_or(o.device, self), OptBool(false), format_int(o.memory_format));
}
Tensor rand_like(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return like(OpId::rand_like, self, o);
}
Tensor randn_like(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  return like(OpId::randn_like, self, o);
}

Tensor tensor(std::vector<double> values, IntArrayRef shape, DType dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  OPSPEC_CHECK(compute_numel(shape) == static_cast<int64_t>(values.size()), "ops::tensor: ", values.size(),
               " values do not fill shape ", format_sizes(shape));
  // torch.tensor's data is copied in outside the dispatcher; here the allocation is too (See ops.h).
  Tensor out = internal::make_tensor(shape, dtype, kCPU);
  OPSPEC_DISPATCH_ALL_DTYPES(dtype, "ops::tensor", [&] {
    auto* p = static_cast<scalar_t*>(out.raw_data());
    for (size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
        p[i] = scalar_t(static_cast<float>(values[i]));
      } else {
        p[i] = static_cast<scalar_t>(values[i]);
      }
    }
  });
  return out;
}

// ---- In-place ----
Tensor& fill_(Tensor& self, const Scalar& value, const std::source_location& loc) {
  OPSPEC_SITE;
  call<ScalarSig>(OpId::fill__Scalar, self, value);
  return self;
}
Tensor& fill_(Tensor& self, const Tensor& value, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::fill__Tensor, self, value);
  return self;
}
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const Scalar&)>(OpId::masked_fill_Scalar, self, mask, value);
}
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const Tensor&, const Scalar&)>(OpId::masked_fill__Scalar, self, mask, value);
  return self;
}
Tensor& zero_(Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  call<UnarySig>(OpId::zero_, self);
  return self;
}
Tensor& copy_(Tensor& self, const Tensor& src, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, const Tensor&, bool)>(OpId::copy_, self, src, false);
  return self;
}
Tensor& bernoulli_(Tensor& self, double p, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, double, OptInt)>(OpId::bernoulli__float, self, p, OptInt());
  return self;
}
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinaryAlphaSig>(OpId::add__Tensor, self, other, alpha);
  return self;
}
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinaryAlphaSig>(OpId::sub__Tensor, self, other, alpha);
  return self;
}
Tensor& mul_(Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::mul__Tensor, self, other);
  return self;
}
Tensor& div_(Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::div__Tensor, self, other);
  return self;
}
Tensor& div_(Tensor& self, const Scalar& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::div__Tensor, self, wrap(other));  // as x.div_(2) in Python, like div
  return self;
}
Tensor& add_(Tensor& self, const Scalar& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinaryAlphaSig>(OpId::add__Tensor, self, wrap(other), alpha);
  return self;
}
Tensor& mul_(Tensor& self, const Scalar& other, const std::source_location& loc) {
  OPSPEC_SITE;
  call<BinarySig>(OpId::mul__Tensor, self, wrap(other));
  return self;
}

// ---- Elementwise unary ----
#define OPSPEC_UNARY(name)                                          \
  Tensor name(const Tensor& self, const std::source_location& loc) { \
    OPSPEC_SITE;                                                    \
    return call<UnarySig>(OpId::name, self);                        \
  }
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) OPSPEC_UNARY(name)
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
OPSPEC_UNARY(logical_not)
OPSPEC_UNARY(bitwise_not)
#undef OPSPEC_UNARY
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)              \
  Tensor& name##_(Tensor& self, const std::source_location& loc) { \
    OPSPEC_SITE;                                                    \
    call<UnarySig>(OpId::name##_, self);                            \
    return self;                                                    \
  }
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP

Tensor gelu(const Tensor& self, std::string_view approximate, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, std::string_view)>(OpId::gelu, self, approximate);
}

// ---- Elementwise binary ----
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinaryAlphaSig>(OpId::add_Tensor, self, other, alpha);
}
Tensor add(const Tensor& self, const Scalar& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinaryAlphaSig>(OpId::add_Tensor, self, wrap(other), alpha);
}
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinaryAlphaSig>(OpId::sub_Tensor, self, other, alpha);
}
Tensor sub(const Tensor& self, const Scalar& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinaryAlphaSig>(OpId::sub_Tensor, self, wrap(other), alpha);
}
Tensor rsub(const Tensor& self, const Scalar& other, const Scalar& alpha, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Scalar&, const Scalar&)>(OpId::rsub_Scalar, self, other, alpha);
}

#define OPSPEC_BINARY(name, tensor_id, scalar_id)                                                     \
  Tensor name(const Tensor& self, const Tensor& other, const std::source_location& loc) {             \
    OPSPEC_SITE;                                                                                      \
    return call<BinarySig>(OpId::tensor_id, self, other);                                             \
  }                                                                                                   \
  Tensor name(const Tensor& self, const Scalar& other, const std::source_location& loc) {             \
    OPSPEC_SITE;                                                                                      \
    return scalar_id;                                                                                 \
  }
// As in PyTorch: mul/div/maximum-style ops with a Python number use the
// .Tensor overload with a wrapped number; comparisons and pow use .Scalar.
OPSPEC_BINARY(mul, mul_Tensor, call<BinarySig>(OpId::mul_Tensor, self, wrap(other)))
OPSPEC_BINARY(div, div_Tensor, call<BinarySig>(OpId::div_Tensor, self, wrap(other)))
OPSPEC_BINARY(pow, pow_Tensor_Tensor, call<ScalarSig>(OpId::pow_Tensor_Scalar, self, other))
OPSPEC_BINARY(eq, eq_Tensor, call<ScalarSig>(OpId::eq_Scalar, self, other))
OPSPEC_BINARY(ne, ne_Tensor, call<ScalarSig>(OpId::ne_Scalar, self, other))
OPSPEC_BINARY(lt, lt_Tensor, call<ScalarSig>(OpId::lt_Scalar, self, other))
OPSPEC_BINARY(le, le_Tensor, call<ScalarSig>(OpId::le_Scalar, self, other))
OPSPEC_BINARY(gt, gt_Tensor, call<ScalarSig>(OpId::gt_Scalar, self, other))
OPSPEC_BINARY(ge, ge_Tensor, call<ScalarSig>(OpId::ge_Scalar, self, other))
#undef OPSPEC_BINARY

Tensor maximum(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::maximum, self, other);
}
Tensor threshold_backward(const Tensor& grad_output, const Tensor& self, const Scalar& threshold,
                          const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const Scalar&)>(OpId::threshold_backward, grad_output, self,
                                                                     threshold);
}
Tensor tanh_backward(const Tensor& grad_output, const Tensor& output, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::tanh_backward, grad_output, output);
}
Tensor sigmoid_backward(const Tensor& grad_output, const Tensor& output, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::sigmoid_backward, grad_output, output);
}
Tensor gelu_backward(const Tensor& grad_output, const Tensor& self, std::string_view approximate,
                     const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, std::string_view)>(OpId::gelu_backward, grad_output, self,
                                                                       approximate);
}
Tensor silu_backward(const Tensor& grad_output, const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::silu_backward, grad_output, self);
}
Tensor native_dropout_backward(const Tensor& grad_output, const Tensor& mask, double scale,
                               const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, double)>(OpId::native_dropout_backward, grad_output, mask, scale);
}
Tensor minimum(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::minimum, self, other);
}
Tensor logical_and(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::logical_and, self, other);
}
Tensor logical_or(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::logical_or, self, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const Tensor&)>(OpId::where_self, condition, self, other);
}
Tensor where(const Tensor& condition, const Tensor& self, const Scalar& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const Tensor&)>(OpId::where_self, condition, self, wrap(other));
}

// ---- Reductions ----
Tensor sum(const Tensor& self, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptDType)>(OpId::sum, self, dtype);
}
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<DType> dtype,
           const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptionalIntArrayRef, bool, OptDType)>(OpId::sum_dim_IntList, self,
                                                                          OptionalIntArrayRef(dim), keepdim, dtype);
}
Tensor mean(const Tensor& self, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptDType)>(OpId::mean, self, dtype);
}
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<DType> dtype,
            const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptionalIntArrayRef, bool, OptDType)>(OpId::mean_dim, self,
                                                                          OptionalIntArrayRef(dim), keepdim, dtype);
}
Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, bool)>(OpId::amax, self, dim, keepdim);
}
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, bool)>(OpId::amin, self, dim, keepdim);
}
Tensor linalg_vector_norm(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                          std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Scalar&, OptionalIntArrayRef, bool, OptDType)>(
      OpId::linalg_vector_norm, self, ord, dim, keepdim, dtype);
}

// ---- Normalisation ----
Tensor softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, OptDType)>(OpId::softmax_int, self, dim, dtype);
}
Tensor log_softmax(const Tensor& self, int64_t dim, std::optional<DType> dtype, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, OptDType)>(OpId::log_softmax_int, self, dim, dtype);
}
Tensor _softmax(const Tensor& self, int64_t dim, bool half_to_float, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, bool)>(OpId::_softmax, self, dim, half_to_float);
}
Tensor _log_softmax(const Tensor& self, int64_t dim, bool half_to_float, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, bool)>(OpId::_log_softmax, self, dim, half_to_float);
}
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, double eps, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, const OptTensor&, const OptTensor&, double, bool);
  return call<Sig>(OpId::layer_norm, input, normalized_shape, weight, bias, eps, true);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps,
                                                     const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef, const OptTensor&, const OptTensor&,
                                                 double);
  return call<Sig>(OpId::native_layer_norm, input, normalized_shape, weight, bias, eps);
}
Tensor _softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype,
                              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, DType);
  return call<Sig>(OpId::_softmax_backward_data, grad_output, output, dim, input_dtype);
}
Tensor _log_softmax_backward_data(const Tensor& grad_output, const Tensor& output, int64_t dim, DType input_dtype,
                                  const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, int64_t, DType);
  return call<Sig>(OpId::_log_softmax_backward_data, grad_output, output, dim, input_dtype);
}
std::tuple<Tensor, Tensor, Tensor> native_layer_norm_backward(const Tensor& grad_out, const Tensor& input,
                                                              IntArrayRef normalized_shape, const Tensor& mean,
                                                              const Tensor& rstd, const std::optional<Tensor>& weight,
                                                              const std::optional<Tensor>& bias,
                                                              std::array<bool, 3> output_mask,
                                                              const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef, const Tensor&,
                                                 const Tensor&, const OptTensor&, const OptTensor&,
                                                 std::array<bool, 3>);
  return call<Sig>(OpId::native_layer_norm_backward, grad_out, input, normalized_shape, mean, rstd, weight, bias,
                   output_mask);
}
Tensor rms_norm(const Tensor& input, IntArrayRef normalized_shape, const std::optional<Tensor>& weight,
                std::optional<double> eps, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, const OptTensor&, std::optional<double>);
  return call<Sig>(OpId::rms_norm, input, normalized_shape, weight, eps);
}
std::tuple<Tensor, Tensor> _fused_rms_norm(const Tensor& input, IntArrayRef normalized_shape,
                                           const std::optional<Tensor>& weight, std::optional<double> eps,
                                           const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, const OptTensor&, std::optional<double>);
  return call<Sig>(OpId::_fused_rms_norm, input, normalized_shape, weight, eps);
}
Tensor dropout(const Tensor& input, double p, bool train, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, double, bool)>(OpId::dropout, input, p, train);
}
std::tuple<Tensor, Tensor> native_dropout(const Tensor& input, double p, std::optional<bool> train,
                                          const std::source_location& loc) {
  OPSPEC_SITE;
  return call<std::tuple<Tensor, Tensor>(const Tensor&, double, OptBool)>(OpId::native_dropout, input, p, train);
}

// ---- Views ----
#define OPSPEC_SIZES_VIEW(name, id)                                                         \
  Tensor name(const Tensor& self, IntArrayRef size, const std::source_location& loc) {      \
    OPSPEC_SITE;                                                                            \
    return call<Tensor(const Tensor&, IntArrayRef)>(OpId::id, self, size);                  \
  }
OPSPEC_SIZES_VIEW(view, view)
OPSPEC_SIZES_VIEW(reshape, reshape)
OPSPEC_SIZES_VIEW(_unsafe_view, _unsafe_view)
OPSPEC_SIZES_VIEW(permute, permute)
#undef OPSPEC_SIZES_VIEW

Tensor as_strided(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset,
                  const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptInt)>(OpId::as_strided, self, size, stride,
                                                                       storage_offset);
}
Tensor& as_strided_(Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<int64_t> storage_offset,
                    const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, IntArrayRef, IntArrayRef, OptInt)>(OpId::as_strided_, self, size, stride,
                                                                storage_offset);
  return self;
}
Tensor t(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::t, self);
}
Tensor numpy_T(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::numpy_T, self);
}
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t)>(OpId::transpose_int, self, dim0, dim1);
}
Tensor expand(const Tensor& self, IntArrayRef size, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, bool)>(OpId::expand, self, size, false);
}
Tensor unsqueeze(const Tensor& self, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::unsqueeze, self, dim);
}
Tensor squeeze(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::squeeze, self);
}
Tensor squeeze(const Tensor& self, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::squeeze_dim, self, dim);
}
Tensor& squeeze_(Tensor& self, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, int64_t)>(OpId::squeeze__dim, self, dim);
  return self;
}
Tensor& t_(Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  call<UnarySig>(OpId::t_, self);
  return self;
}
Tensor& transpose_(Tensor& self, int64_t dim0, int64_t dim1, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, int64_t, int64_t)>(OpId::transpose_, self, dim0, dim1);
  return self;
}
Tensor& unsqueeze_(Tensor& self, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  call<Tensor(const Tensor&, int64_t)>(OpId::unsqueeze_, self, dim);
  return self;
}
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end, int64_t step,
             const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, OptInt, OptInt, int64_t)>(OpId::slice_Tensor, self, dim, start, end,
                                                                       step);
}
Tensor select(const Tensor& self, int64_t dim, int64_t index, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t)>(OpId::select_int, self, dim, index);
}
Tensor flatten(const Tensor& self, int64_t start_dim, int64_t end_dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t)>(OpId::flatten_using_ints, self, start_dim, end_dim);
}
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t, int64_t, int64_t)>(OpId::narrow, self, dim, start, length);
}
Tensor alias(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::alias, self);
}
Tensor detach(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::detach, self);
}
Tensor contiguous(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::contiguous, self, int64_t{0});
}
Tensor contiguous(const Tensor& self, MemoryFormat memory_format, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, int64_t)>(OpId::contiguous, self, static_cast<int64_t>(memory_format));
}

// ---- Copies, conversion, joins ----
Tensor clone(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt)>(OpId::clone, self, OptInt());
}
Tensor clone(const Tensor& self, std::optional<int64_t> memory_format, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt)>(OpId::clone, self, memory_format);
}
Tensor clone(const Tensor& self, MemoryFormat memory_format, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, OptInt)>(OpId::clone, self, OptInt(static_cast<int64_t>(memory_format)));
}
Tensor lift_fresh(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::lift_fresh, self);
}
Tensor lift_fresh_copy(const Tensor& self, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<UnarySig>(OpId::lift_fresh_copy, self);
}
Tensor _to_copy(const Tensor& self, TensorOptions o, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, OptDType, OptInt, OptDevice, OptBool, bool, OptInt);
  return call<Sig>(OpId::_to_copy, self, o.dtype, OptInt(), o.device, OptBool(), false, format_int(o.memory_format));
}
Tensor to(const Tensor& self, DType dtype, bool copy, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, DType, bool, bool, OptInt)>(OpId::to_dtype, self, dtype, false, copy, OptInt());
}
Tensor to(const Tensor& self, Device device, std::optional<DType> dtype, bool copy, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, Device, DType, bool, bool, OptInt);
  return call<Sig>(OpId::to_device, self, device, dtype_or(dtype, self).value_or(DType{}), false, copy, OptInt());
}
Tensor cat(TensorList tensors, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(TensorList, int64_t)>(OpId::cat, tensors, dim);
}
Tensor stack(TensorList tensors, int64_t dim, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(TensorList, int64_t)>(OpId::stack, tensors, dim);
}
Tensor slice_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                      int64_t step, const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, IntArrayRef, int64_t, int64_t, int64_t, int64_t);
  return call<Sig>(OpId::slice_backward, grad_output, input_sizes, dim, start, end, step);
}
Tensor select_backward(const Tensor& grad_output, IntArrayRef input_sizes, int64_t dim, int64_t index,
                       const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, IntArrayRef, int64_t, int64_t)>(OpId::select_backward, grad_output, input_sizes,
                                                                     dim, index);
}
Scalar item(const Tensor& self, const std::source_location& loc) {
  // Not the dispatcher's message: it would name _local_scalar_dense, which the user did not call.
  if (!self.defined()) internal::throw_undefined_tensor("item");
  OPSPEC_SITE;
  return call<Scalar(const Tensor&)>(OpId::_local_scalar_dense, self);
}

// ---- Matrix products ----
Tensor mm(const Tensor& self, const Tensor& mat2, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::mm, self, mat2);
}
Tensor bmm(const Tensor& self, const Tensor& mat2, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::bmm, self, mat2);
}
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta, const Scalar& alpha,
             const std::source_location& loc) {
  OPSPEC_SITE;
  using Sig = Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&);
  return call<Sig>(OpId::addmm, self, mat1, mat2, beta, alpha);
}
Tensor dot(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::dot, self, other);
}
Tensor mv(const Tensor& self, const Tensor& vec, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::mv, self, vec);
}
Tensor matmul(const Tensor& self, const Tensor& other, const std::source_location& loc) {
  OPSPEC_SITE;
  return call<BinarySig>(OpId::matmul, self, other);
}
Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              const std::source_location& loc) {
  OPSPEC_SITE;
  return call<Tensor(const Tensor&, const Tensor&, const OptTensor&)>(OpId::linear, input, weight, bias);
}

#undef OPSPEC_SITE

// ---- Checks (no dispatch: they read data directly) ----
bool allclose(const Tensor& a, const Tensor& b, double rtol, double atol) {
  if (a.sizes() != b.sizes()) return false;
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::isnan(x[i]) || std::isnan(y[i])) return false;
    if (x[i] == y[i]) continue;  // equal infinities
    if (!(std::fabs(x[i] - y[i]) <= atol + rtol * std::fabs(y[i]))) return false;
  }
  return true;
}

bool equal(const Tensor& a, const Tensor& b) {
  if (a.sizes() != b.sizes() || a.dtype() != b.dtype()) return false;
  // Integers as int64: through double, values above 2^53 compared equal to their neighbours.
  if (!is_floating(a.dtype())) return a.to_vector<int64_t>() == b.to_vector<int64_t>();
  return a.to_vector<double>() == b.to_vector<double>();  // exact for every floating dtype
}

}  // namespace ops

// Operators cannot capture their caller's location; they pass an empty one
// (see CallSiteScope) instead of reporting this file.
constexpr std::source_location kNoSite{};
Tensor operator+(const Tensor& a, const Tensor& b) { return ops::add(a, b, 1, kNoSite); }
Tensor operator+(const Tensor& a, const Scalar& b) { return ops::add(a, b, 1, kNoSite); }
Tensor operator+(const Scalar& a, const Tensor& b) { return ops::add(b, a, 1, kNoSite); }
Tensor operator-(const Tensor& a, const Tensor& b) { return ops::sub(a, b, 1, kNoSite); }
Tensor operator-(const Tensor& a, const Scalar& b) { return ops::sub(a, b, 1, kNoSite); }
Tensor operator-(const Scalar& a, const Tensor& b) { return ops::rsub(b, a, 1, kNoSite); }
Tensor operator*(const Tensor& a, const Tensor& b) { return ops::mul(a, b, kNoSite); }
Tensor operator*(const Tensor& a, const Scalar& b) { return ops::mul(a, b, kNoSite); }
Tensor operator*(const Scalar& a, const Tensor& b) { return ops::mul(b, a, kNoSite); }
Tensor operator/(const Tensor& a, const Tensor& b) { return ops::div(a, b, kNoSite); }
Tensor operator/(const Tensor& a, const Scalar& b) { return ops::div(a, b, kNoSite); }
Tensor operator/(const Scalar& a, const Tensor& b) { return ops::mul(ops::reciprocal(b, kNoSite), a, kNoSite); }
Tensor operator-(const Tensor& a) { return ops::neg(a, kNoSite); }

Scalar Tensor::item(const std::source_location& loc) const { return ops::item(*this, loc); }

}  // namespace opspec
