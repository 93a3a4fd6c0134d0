// conv_meta.cc: See conv_meta.h.
#include "kernels/common/conv_meta.h"

#include "kernels/common/layout_format.h"
#include "runtime/core/error.h"
#include "runtime/core/meta_stand_in.h"
#include "runtime/core/shape_utils.h"

namespace opspec::internal {

namespace {

// two: an int[2] argument given as one value or two ("kernel_size must either
// be a single int, or a tuple of two ints"); empty gives fallback.
std::array<int64_t, 2> two(IntArrayRef v, std::array<int64_t, 2> fallback, std::string_view op,
                           std::string_view what, bool may_be_empty) {
  if (v.empty() && may_be_empty) return fallback;
  OPSPEC_CHECK(v.size() == 1 || v.size() == 2, op, ": ", what, " must either be ",
               may_be_empty ? "omitted, " : "", "a single int, or a tuple of two ints");
  return v.size() == 1 ? std::array<int64_t, 2>{v[0], v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

// expand_param: a convolution parameter for `dims` spatial dims (one value
// broadcasts); a 1-D convolution is 2-D with height 1, whose parameter is `neutral`.
std::array<int64_t, 2> expand_param(IntArrayRef v, int dims, int64_t neutral, std::string_view op,
                                    std::string_view what) {
  OPSPEC_CHECK(static_cast<int>(v.size()) == dims || v.size() == 1, op, ": expected ", what, " to be a single integer "
               "value or a list of ", dims, " values to match the convolution dimensions, but got ", what, "=",
               format_sizes(v));
  if (dims == 1) return {neutral, v[0]};
  return v.size() == 1 ? std::array<int64_t, 2>{v[0], v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

int64_t pooling_output_size(int64_t in, int64_t kernel, int64_t pad, int64_t stride, int64_t dilation,
                            bool ceil_mode) {
  // In 128 bits: PyTorch's int64 arithmetic overflows for strides or pads near INT64_MAX.
  using Wide = __int128;
  const Wide num = Wide{in} + 2 * Wide{pad} - Wide{dilation} * (kernel - 1) - 1 + (ceil_mode ? Wide{stride} - 1 : 0);
  // div_rtn: division rounding toward negative infinity.
  Wide q = num / stride;
  if ((num % stride != 0) && ((num < 0) != (stride < 0))) --q;
  Wide out = q + 1;
  // The last window must start inside the input or the left padding.
  if (ceil_mode && (out - 1) * stride >= Wide{in} + pad) --out;
  OPSPEC_CHECK(out <= INT64_MAX && out >= INT64_MIN, "pooling output size overflows int64");
  return static_cast<int64_t>(out);
}

std::string dims_text(std::array<int64_t, 2> v, int dims) {
  return dims == 1 ? str_cat(v[1]) : str_cat(v[0], " x ", v[1]);
}

}  // namespace

ConvGeometry conv_geometry(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                           IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                           IntArrayRef output_padding, int64_t groups, std::string_view op) {
  OPSPEC_CHECK(weight.dim() == 3 || weight.dim() == 4, op, ": expected a 3-D or 4-D weight (conv1d or conv2d), got ",
               weight.dim(), "-D of shape ", format_sizes(weight.sizes()));
  const int dims = static_cast<int>(weight.dim()) - 2;
  OPSPEC_CHECK(input.dim() == weight.dim(), op, ": Expected ", weight.dim(), "-dimensional input for ", weight.dim(),
               "-dimensional weight ", format_sizes(weight.sizes()), ", but got ", input.dim(),
               "-dimensional input of size ", format_sizes(input.sizes()), " instead");
  OPSPEC_CHECK(input.dtype() == weight.dtype(), op, ": Input type (", scalar_type_name(input.dtype()),
               ") and weight type (", scalar_type_name(weight.dtype()), ") should be the same");
  OPSPEC_CHECK(is_floating(input.dtype()), op, ": \"", "convolution\" not implemented for '",
               scalar_type_name(input.dtype()), "'");
  const Tensor all[] = {input, weight, bias ? *bias : Tensor()};
  check_same_device(all, op);
  ConvGeometry g;
  g.transposed = transposed;
  g.spatial_dims = dims;
  g.stride = expand_param(stride, dims, 1, op, "stride");
  g.padding = expand_param(padding, dims, 0, op, "padding");
  g.dilation = expand_param(dilation, dims, 1, op, "dilation");
  const std::array<int64_t, 2> out_pad =
      transposed ? expand_param(output_padding, dims, 0, op, "output_padding") : std::array<int64_t, 2>{0, 0};
  for (int i = 0; i < 2; ++i) {
    OPSPEC_CHECK(g.padding[i] >= 0, op, ": negative padding is not supported");
    OPSPEC_CHECK(out_pad[i] >= 0, op, ": negative output_padding is not supported");
    OPSPEC_CHECK(g.stride[i] > 0, op, ": non-positive stride is not supported");
    OPSPEC_CHECK(g.dilation[i] > 0, op, ": dilation should be greater than zero");
  }
  if (!transposed) {
    for (int64_t p : output_padding) OPSPEC_CHECK(p == 0, op, ": output_padding is only for transposed convolutions");
  }
  OPSPEC_CHECK(groups > 0, op, ": non-positive groups is not supported");
  g.groups = groups;
  g.batch = input.size(0);
  OPSPEC_CHECK(weight.size(0) >= groups, op, ": Given groups=", groups, ", expected weight to be at least ", groups,
               " at dimension 0, but got weight of size ", format_sizes(weight.sizes()), " instead");
  OPSPEC_CHECK(weight.size(0) % groups == 0, op, ": Given groups=", groups, ", expected weight to be divisible by ",
               groups, " at dimension 0, but got weight of size ", format_sizes(weight.sizes()), " instead");
  // The weight is [C_out, C / groups, k...], or transposed [C, C_out / groups,
  // k...]: its dim 0 is the regular convolution's output channels either way.
  g.out_channels = weight.size(0);
  g.in_channels = weight.size(1) * groups;
  const int64_t result_channels = transposed ? g.in_channels : g.out_channels;
  const int64_t expected_input = transposed ? g.out_channels : g.in_channels;
  OPSPEC_CHECK(input.size(1) == expected_input, op, ": Given ",
               transposed ? "transposed=1" : str_cat("groups=", groups), ", weight of size ",
               format_sizes(weight.sizes()), ", expected input", format_sizes(input.sizes()), " to have ",
               expected_input, " channels, but got ", input.size(1), " channels instead");
  if (bias) {
    OPSPEC_CHECK(bias->dim() == 1 && bias->size(0) == result_channels, op, ": Given ",
                 transposed ? "transposed=1, weight" : "weight", " of size ", format_sizes(weight.sizes()),
                 ", expected bias to be 1-dimensional with ", result_channels, " elements, but got bias of size ",
                 format_sizes(bias->sizes()), " instead");
    OPSPEC_CHECK(bias->dtype() == input.dtype(), op, ": Input type (", scalar_type_name(input.dtype()),
                 ") and bias type (", scalar_type_name(bias->dtype()), ") should be the same");
  }
  const std::array<int64_t, 2> in =
      dims == 1 ? std::array<int64_t, 2>{1, input.size(2)} : std::array<int64_t, 2>{input.size(2), input.size(3)};
  g.kernel = dims == 1 ? std::array<int64_t, 2>{1, weight.size(2)} : std::array<int64_t, 2>{weight.size(2), weight.size(3)};
  // PyTorch's backend choice: an empty batch or channel dim gives an empty
  // result (or the bias), any other empty dim is refused.
  const auto check_empty = [&] {
    OPSPEC_CHECK(input.numel() != 0 || input.size(0) == 0 || input.size(1) == 0, op,
                 ": Only zero batch or zero channel inputs are supported, but got input shape: ",
                 format_sizes(input.sizes()));
  };
  if (transposed) {
    check_empty();
    for (int i = 0; i < 2; ++i) {
      OPSPEC_CHECK(out_pad[i] < g.stride[i] || out_pad[i] < g.dilation[i], op,
                   ": output padding must be smaller than either stride or dilation, but got output_padding_height: ",
                   out_pad[0], " output_padding_width: ", out_pad[1], " stride_height: ", g.stride[0],
                   " stride_width: ", g.stride[1], " dilation_height: ", g.dilation[0], " dilation_width: ",
                   g.dilation[1]);
    }
    // (in - 1) stride - 2 padding + dilation (kernel - 1) + output_padding + 1, in 128 bits.
    std::array<int64_t, 2> out{};
    for (int i = 0; i < 2; ++i) {
      using Wide = __int128;
      const Wide size = (Wide{in[i]} - 1) * g.stride[i] - 2 * Wide{g.padding[i]} +
                        Wide{g.dilation[i]} * (g.kernel[i] - 1) + out_pad[i] + 1;
      OPSPEC_CHECK(size <= INT64_MAX, op, ": stride ", g.stride[i], ", dilation ", g.dilation[i],
                   " and kernel size ", g.kernel[i], " overflow int64");
      out[i] = static_cast<int64_t>(std::max<Wide>(size, INT64_MIN));
    }
    OPSPEC_CHECK(out[0] >= 1 && out[1] >= 1, op, ": Given input size per channel: (", dims_text(in, dims),
                 "). Calculated output size per channel: (", dims_text(out, dims), "). Output size is too small");
    // The adjoint: a regular convolution of the result's shape whose output is the input (See conv_meta.h).
    g.in = out;
    g.out = in;
  } else {
    g.in = in;
    std::array<int64_t, 2> padded{}, effective{};
    for (int i = 0; i < 2; ++i) {
      // in + 2 padding and dilation (kernel - 1) + 1, refusing what overflows int64 (UB in PyTorch's too).
      const bool overflow = __builtin_mul_overflow(g.padding[i], 2, &padded[i]) ||
                            __builtin_add_overflow(padded[i], g.in[i], &padded[i]) ||
                            __builtin_mul_overflow(g.dilation[i], g.kernel[i] - 1, &effective[i]) ||
                            __builtin_add_overflow(effective[i], 1, &effective[i]);
      OPSPEC_CHECK(!overflow, op, ": padding ", g.padding[i], ", dilation ", g.dilation[i], " and kernel size ",
                   g.kernel[i], " overflow int64");
    }
    OPSPEC_CHECK(padded[0] >= effective[0] && padded[1] >= effective[1], op,
                 ": Calculated padded input size per channel: (", dims_text(padded, dims), "). Kernel size: (",
                 dims_text(effective, dims), "). Kernel size can't be greater than actual input size");
    check_empty();
    for (int i = 0; i < 2; ++i) g.out[i] = (padded[i] - effective[i]) / g.stride[i] + 1;
  }
  const std::array<int64_t, 2> result = transposed ? g.in : g.out;
  g.out_sizes = {g.batch, result_channels};
  if (dims == 2) g.out_sizes.push_back(result[0]);
  g.out_sizes.push_back(result[1]);
  return g;
}

PoolGeometry pool2d_geometry(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                             IntArrayRef dilation, bool ceil_mode, std::string_view op) {
  const std::string_view name = op.substr(op.find("::") + 2);
  PoolGeometry g;
  g.kernel = two(kernel_size, {0, 0}, op, str_cat(name, ": kernel_size"), false);
  g.stride = two(stride, g.kernel, op, str_cat(name, ": stride"), true);
  g.padding = two(padding, {0, 0}, op, str_cat(name, ": padding"), false);
  g.dilation = two(dilation, {1, 1}, op, str_cat(name, ": dilation"), false);
  OPSPEC_CHECK(g.kernel[0] > 0 && g.kernel[1] > 0, op, ": kernel size should be greater than zero, but got kH: ",
               g.kernel[0], " kW: ", g.kernel[1]);
  OPSPEC_CHECK(g.stride[0] > 0 && g.stride[1] > 0, op, ": stride should be greater than zero, but got dH: ",
               g.stride[0], " dW: ", g.stride[1]);
  OPSPEC_CHECK(g.dilation[0] > 0 && g.dilation[1] > 0, op,
               ": dilation should be greater than zero, but got dilationH: ", g.dilation[0], " dilationW: ",
               g.dilation[1]);
  OPSPEC_CHECK((self.dim() == 3 || self.dim() == 4) && self.size(-1) != 0 && self.size(-2) != 0, op,
               ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, but got:",
               format_sizes(self.sizes()));
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"", name, "\" not implemented for '",
               scalar_type_name(self.dtype()), "'");
  for (int i = 0; i < 2; ++i) {
    int64_t effective = 0;
    OPSPEC_CHECK(!__builtin_mul_overflow(g.dilation[i], g.kernel[i] - 1, &effective) && effective < INT64_MAX, op,
                 ": dilation ", g.dilation[i], " and kernel size ", g.kernel[i], " overflow int64");
    OPSPEC_CHECK(g.padding[i] >= 0 && g.padding[i] <= (effective + 1) / 2, op,
                 ": pad should be at most half of effective kernel size, but got pad=", g.padding[i],
                 ", kernel_size=", g.kernel[i], " and dilation=", g.dilation[i]);
  }
  g.in = {self.size(-2), self.size(-1)};
  for (int i = 0; i < 2; ++i) {
    g.out[i] = pooling_output_size(g.in[i], g.kernel[i], g.padding[i], g.stride[i], g.dilation[i], ceil_mode);
  }
  const int64_t channels = self.size(-3);
  OPSPEC_CHECK(g.out[0] >= 1 && g.out[1] >= 1, op, ": Given input size: (", channels, "x", g.in[0], "x", g.in[1],
               "). Calculated output size: (", channels, "x", g.out[0], "x", g.out[1], "). Output size is too small");
  g.planes = self.numel() / (g.in[0] * g.in[1]);
  g.out_sizes = SizeVec(self.sizes().begin(), self.sizes().end());
  g.out_sizes[g.out_sizes.size() - 2] = g.out[0];
  g.out_sizes[g.out_sizes.size() - 1] = g.out[1];
  return g;
}

SizeVec adaptive_pool_shape(const Tensor& self, IntArrayRef output_size, std::string_view op) {
  OPSPEC_CHECK(output_size.size() == 2, op, ": output_size must be 2");
  OPSPEC_CHECK(output_size[0] >= 0 && output_size[1] >= 0, op,
               ": elements of output_size must be greater than or equal to 0 but received {", output_size[0], ", ",
               output_size[1], "}");
  OPSPEC_CHECK(self.dim() == 3 || self.dim() == 4, op,
               ": Expected 3D or 4D tensor, but got ", format_sizes(self.sizes()));
  for (int64_t i = 1; i < self.dim(); ++i) {
    OPSPEC_CHECK(self.size(i) > 0, op, ": Expected input to have non-zero size for non-batch dimensions, but input "
                 "has sizes ", format_sizes(self.sizes()), " with dimension ", i, " being empty");
  }
  OPSPEC_CHECK(is_floating(self.dtype()), op, ": \"adaptive_avg_pool2d\" not implemented for '",
               scalar_type_name(self.dtype()), "'");
  SizeVec out(self.sizes().begin(), self.sizes().end());
  out[out.size() - 2] = output_size[0];
  out[out.size() - 1] = output_size[1];
  return out;
}

MemoryFormat conv_memory_format(const Tensor& input, const Tensor& weight) {
  // An empty input takes PyTorch's "Empty" backend, which builds its result row-major.
  if (input.numel() == 0) return MemoryFormat::kContiguous;
  const MemoryFormat in = suggest_memory_format(input);
  return in != MemoryFormat::kContiguous ? in : suggest_memory_format(weight);
}

Tensor convolution_meta(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  const ConvGeometry g = conv_geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                                       groups, "aten::convolution");
  return meta_in_format(g.out_sizes, input.dtype(), conv_memory_format(input, weight), "aten::convolution");
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_meta(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, OptionalIntArrayRef bias_sizes,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::convolution_backward";
  const ConvGeometry g = conv_geometry(input, weight, std::nullopt, stride, padding, dilation, transposed,
                                       output_padding, groups, kOp);
  OPSPEC_CHECK(grad_output.sizes() == IntArrayRef(g.out_sizes), kOp, ": grad_output of shape ",
               format_sizes(grad_output.sizes()), " does not match the convolution's output ",
               format_sizes(g.out_sizes));
  const int64_t out_channels = g.out_sizes[1];
  // The gradients take the forward's layout; an empty input's are zeros_like (preserve) in PyTorch.
  const MemoryFormat f = conv_memory_format(input, weight);
  const bool empty = input.numel() == 0;
  auto like = [&](const Tensor& t) {
    return empty ? make_strided(t.sizes(), preserve_strides(t), t.dtype(), kMeta)
                 : meta_in_format(t.sizes(), t.dtype(), f, kOp);
  };
  return {output_mask[0] ? like(input) : Tensor(), output_mask[1] ? like(weight) : Tensor(),
          output_mask[2] ? make_tensor(bias_sizes ? *bias_sizes : IntArrayRef(&out_channels, 1), input.dtype(), kMeta)
                         : Tensor()};
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices_meta(const Tensor& self, IntArrayRef kernel_size,
                                                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                                        bool ceil_mode) {
  const PoolGeometry g =
      pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, "aten::max_pool2d_with_indices");
  const MemoryFormat f = suggest_memory_format(self);  // See Note [Model op layouts]
  return {meta_in_format(g.out_sizes, self.dtype(), f, "aten::max_pool2d_with_indices"),
          meta_in_format(g.out_sizes, DType::kInt64, f, "aten::max_pool2d_with_indices")};
}

Tensor max_pool2d_with_indices_backward_meta(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                             bool ceil_mode, const Tensor& indices) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices_backward";
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  OPSPEC_CHECK(grad_output.sizes() == IntArrayRef(g.out_sizes) && indices.sizes() == IntArrayRef(g.out_sizes), kOp,
               ": grad_output ", format_sizes(grad_output.sizes()), " and indices ", format_sizes(indices.sizes()),
               " must have the pooled shape ", format_sizes(g.out_sizes));
  return meta_in_format(self.sizes(), self.dtype(), suggest_memory_format(self), kOp);
}

Tensor avg_pool2d_meta(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       bool ceil_mode, bool, std::optional<int64_t> divisor_override) {
  OPSPEC_CHECK(!divisor_override || *divisor_override != 0, "aten::avg_pool2d: divisor must be not zero");
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, "aten::avg_pool2d");
  return meta_in_format(g.out_sizes, self.dtype(), suggest_memory_format(self), "aten::avg_pool2d");
}

Tensor avg_pool2d_backward_meta(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool,
                                std::optional<int64_t>) {
  const int64_t one[] = {1};
  const PoolGeometry g =
      pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, "aten::avg_pool2d_backward");
  OPSPEC_CHECK(grad_output.sizes() == IntArrayRef(g.out_sizes), "aten::avg_pool2d_backward: grad_output ",
               format_sizes(grad_output.sizes()), " must have the pooled shape ", format_sizes(g.out_sizes));
  return meta_in_format(self.sizes(), self.dtype(), suggest_memory_format(self), "aten::avg_pool2d_backward");
}

Tensor adaptive_avg_pool2d_meta(const Tensor& self, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d";
  return meta_in_format(adaptive_pool_shape(self, output_size, kOp), self.dtype(), suggest_memory_format(self), kOp);
}

Tensor adaptive_avg_pool2d_backward_meta(const Tensor& grad_output, const Tensor& self) {
  OPSPEC_CHECK(self.dim() == 3 || self.dim() == 4,
               "aten::_adaptive_avg_pool2d_backward: Expected 3D or 4D tensor, but got ", format_sizes(self.sizes()));
  bool ok = grad_output.dim() == self.dim();
  for (int64_t d = 0; ok && d + 2 < self.dim(); ++d) ok = grad_output.size(d) == self.size(d);
  OPSPEC_CHECK(ok, "aten::_adaptive_avg_pool2d_backward: grad_output ", format_sizes(grad_output.sizes()),
               " and self ", format_sizes(self.sizes()), " must match in every dim but the last two");
  // PyTorch checks grad_output's non-batch dims; self's too here, since its windows divide by their size.
  for (int64_t d = 1; d < self.dim(); ++d) {
    OPSPEC_CHECK(grad_output.size(d) > 0 && self.size(d) > 0,
                 "aten::_adaptive_avg_pool2d_backward: Expected grad_output and self to have non-zero size for "
                 "non-batch dimensions, but grad_output has sizes ", format_sizes(grad_output.sizes()), " and self ",
                 format_sizes(self.sizes()), " with dimension ", d, " being empty");
  }
  return meta_in_format(self.sizes(), self.dtype(), suggest_memory_format(self),
                        "aten::_adaptive_avg_pool2d_backward");
}

int64_t check_batch_norm(const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
                         const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
                         bool training, std::string_view op) {
  OPSPEC_CHECK(input.dim() >= 2, op, ": Expected a tensor of at least 2 dims [N, C, ...], got ",
               format_sizes(input.sizes()));
  OPSPEC_CHECK(is_floating(input.dtype()), op, ": \"batch_norm\" not implemented for '",
               scalar_type_name(input.dtype()), "'");
  const int64_t c = input.size(1);
  const std::pair<const char*, const std::optional<Tensor>*> params[] = {
      {"weight", &weight}, {"bias", &bias}, {"running_mean", &running_mean}, {"running_var", &running_var}};
  for (const auto& [name, t] : params) {
    if (!t->has_value()) continue;
    OPSPEC_CHECK((*t)->numel() == c, op, ": ", name, " should contain ", c, " elements not ", (*t)->numel());
  }
  if (!training) {
    OPSPEC_CHECK(running_mean.has_value(), op, ": running_mean must be defined in evaluation mode");
    OPSPEC_CHECK(running_var.has_value(), op, ": running_var must be defined in evaluation mode");
  }
  const Tensor all[] = {input, weight ? *weight : Tensor(), bias ? *bias : Tensor(),
                        running_mean ? *running_mean : Tensor(), running_var ? *running_var : Tensor()};
  check_same_device(all, op);
  return c;
}

SizeVec batch_norm_output_strides(const Tensor& input, Device device) {
  if (device.is_cuda()) return preserve_strides(input);  // empty_like(self)
  return strides_for(input.sizes(), suggest_memory_format(input), "aten::native_batch_norm");
}

int64_t batch_norm_saved_size(int64_t channels, bool training, Device device) {
  return training || device.is_cuda() ? channels : 0;
}

MemoryFormat batch_norm_grad_input_format(const Tensor& input, bool train, Device device) {
  if (!device.is_cuda()) return suggest_memory_format(input);
  // batch_norm_use_channels_last_kernels; its other case (contiguous with a
  // unit channel stride) suggests contiguous anyway.
  const bool channels_last_kernels = is_contiguous(input, MemoryFormat::kChannelsLast);
  return train && channels_last_kernels ? suggest_memory_format(input) : MemoryFormat::kContiguous;
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_meta(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias,
                                                          const std::optional<Tensor>& running_mean,
                                                          const std::optional<Tensor>& running_var, bool training,
                                                          double, double) {
  const int64_t c =
      check_batch_norm(input, weight, bias, running_mean, running_var, training, "aten::native_batch_norm");
  const DType stat = input.dtype() == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32;
  // See Note [Batch norm on CUDA]: the CPU's eval saves are empty, CUDA's are not.
  const Device device = meta_stand_in_device();
  const int64_t n = batch_norm_saved_size(c, training, device);
  return {make_strided(input.sizes(), batch_norm_output_strides(input, device), input.dtype(), kMeta),
          make_tensor({n}, stat, kMeta), make_tensor({n}, stat, kMeta)};
}

std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_meta(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double,
    std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_batch_norm_backward";
  const int64_t c = check_batch_norm(input, weight, std::nullopt, running_mean, running_var, train, kOp);
  OPSPEC_CHECK(grad_out.sizes() == input.sizes(), kOp, ": grad_out ", format_sizes(grad_out.sizes()),
               " must have input's shape ", format_sizes(input.sizes()));
  if (train) {
    OPSPEC_CHECK(save_mean && save_invstd && save_mean->numel() == c && save_invstd->numel() == c, kOp,
                 ": training needs save_mean and save_invstd of ", c, " elements");
  }
  const MemoryFormat dx_format = batch_norm_grad_input_format(input, train, meta_stand_in_device());
  return {output_mask[0] ? meta_in_format(input.sizes(), input.dtype(), dx_format, kOp) : Tensor(),
          output_mask[1] ? make_tensor({c}, input.dtype(), kMeta) : Tensor(),
          output_mask[2] ? make_tensor({c}, input.dtype(), kMeta) : Tensor()};
}

}  // namespace opspec::internal
