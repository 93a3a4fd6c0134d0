// conv.cc: CUDA kernels of convolution and convolution_backward
// (kernels/cpu/convolution.cc), max_pool2d_with_indices, avg_pool2d,
// _adaptive_avg_pool2d and their backward ops (kernels/cpu/pooling.cc), and
// native_batch_norm and its backward (kernels/cpu/batch_norm.cc): the CPU
// kernels' checks (kernels/common/conv_meta.h), output sizes, dtypes and
// error texts, then the launchers of conv.cu.
#include <cuda_runtime_api.h>

#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <vector>

#include "kernels/common/conv_meta.h"
#include "kernels/common/layout_format.h"
#include "kernels/cuda/conv_launch.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal::cuda {
namespace {

void* data_or_null(const Tensor& t) { return t.defined() ? t.raw_data() : nullptr; }

// conv_format_cuda: the layout of a convolution's result and gradients on
// cuda, PyTorch 2.x's cuDNN rule (cudnn_conv_suggest_memory_format): the
// CPU's conv_memory_format, except that float64 stays contiguous (cuDNN's
// channels-last is disabled for double). See Note [Model op layouts].
MemoryFormat conv_format_cuda(const Tensor& input, const Tensor& weight) {
  if (input.dtype() == DType::kFloat64 || weight.dtype() == DType::kFloat64) return MemoryFormat::kContiguous;
  return conv_memory_format(input, weight);
}

// in_format_of: t (row-major) laid out in like's suggested memory format, as
// on the CPU (See Note [Model op layouts] in kernels/common/layout_format.h).
Tensor in_format_of(const Tensor& t, const Tensor& like, std::string_view op) {
  return in_format(t, suggest_memory_format(like), op, device_copy);
}

// Staged: where a kernel writes an output: the output itself when it is
// contiguous with the kernel's sizes and dtype, else a temporary copied into
// it by finish() (converting and broadcasting as the CPU's copy_into does).
class Staged {
 public:
  Staged(const Tensor& out, IntArrayRef sizes, DType dtype, Device dev) : out_(out) {
    direct_ = out.defined() && out.dtype() == dtype && out.sizes() == sizes && out.is_contiguous();
    if (out.defined()) buffer_ = direct_ ? out : empty_cuda(sizes, dtype, dev);
  }
  void* data() { return data_or_null(buffer_); }
  void finish() const {
    if (out_.defined() && !direct_) copy_between(out_, buffer_);
  }

 private:
  Tensor out_, buffer_;
  bool direct_ = false;
};

// ---- Convolution (See Note [CUDA convolution] in conv.cu) ----

ConvArgs conv_args(const ConvGeometry& g) {
  ConvArgs a;
  a.batch = g.batch;
  a.in_channels = g.in_channels;
  a.out_channels = g.out_channels;
  a.groups = g.groups;
  for (int i = 0; i < 2; ++i) {
    a.in[i] = g.in[i];
    a.out[i] = g.out[i];
    a.kernel[i] = g.kernel[i];
    a.stride[i] = g.stride[i];
    a.padding[i] = g.padding[i];
    a.dilation[i] = g.dilation[i];
  }
  return a;
}

Tensor convolution_cuda(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                        IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed,
                        IntArrayRef output_padding, int64_t groups) {
  constexpr std::string_view kOp = "aten::convolution";
  const ConvGeometry g =
      conv_geometry(input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, kOp);
  const Device dev = op_device({input, weight, bias ? *bias : Tensor()}, kOp);
  Tensor out = empty_cuda(g.out_sizes, input.dtype(), dev);
  if (out.numel() == 0) return in_format(out, conv_format_cuda(input, weight), kOp, device_copy);
  const DType dt = input.dtype();  // weight's and bias's too (conv_geometry)
  const Tensor x = on_device(input, dt, dev), w = on_device(weight, dt, dev);
  const Tensor b = bias ? on_device(*bias, dt, dev) : Tensor();
  DeviceGuard guard(dev);
  if (g.transposed) {  // See Note [Transposed convolution geometry]
    launch_conv_backward_input(code_of(dt), conv_args(g), x.raw_data(), w.raw_data(), data_or_null(b),
                               out.raw_data());
  } else {
    launch_conv_forward(code_of(dt), conv_args(g), x.raw_data(), w.raw_data(), data_or_null(b), out.raw_data());
  }
  return in_format(out, conv_format_cuda(input, weight), kOp, device_copy);
}

// result_side: a's result as the output side: the bias kernel's channel sums
// over a transposed convolution's result (a's input side).
ConvArgs result_side(const ConvArgs& a) {
  ConvArgs r = a;
  r.out_channels = a.in_channels;
  r.out[0] = a.in[0];
  r.out[1] = a.in[1];
  return r;
}

// convolution_backward: the kernels read x, w and dy in one storage type:
// the input's, or, when grad_output has another dtype, the compute type the
// CPU converts all three to (results then round once into the outputs).
std::tuple<Tensor, Tensor, Tensor> convolution_backward_cuda(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, OptionalIntArrayRef bias_sizes,
    IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, bool transposed, IntArrayRef output_padding,
    int64_t groups, std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::convolution_backward";
  auto [mx, mw, mb] = convolution_backward_meta(grad_output, input, weight, bias_sizes, stride, padding, dilation,
                                                transposed, output_padding, groups, output_mask);
  const ConvGeometry g = conv_geometry(input, weight, std::nullopt, stride, padding, dilation, transposed,
                                       output_padding, groups, kOp);
  const Device dev = op_device({grad_output, input, weight}, kOp);
  Tensor dx = mx.defined() ? empty_cuda(mx.sizes(), input.dtype(), dev) : Tensor();
  Tensor dw = mw.defined() ? empty_cuda(mw.sizes(), weight.dtype(), dev) : Tensor();
  Tensor db = mb.defined() ? empty_cuda(mb.sizes(), input.dtype(), dev) : Tensor();
  const DType dt = grad_output.dtype() == input.dtype() ? input.dtype() : compute_dtype(input.dtype());
  const int64_t out_channels = g.out_sizes[1];
  Staged sx(dx, input.sizes(), dt, dev), sw(dw, weight.sizes(), dt, dev);
  Staged sb(db, IntArrayRef(&out_channels, 1), dt, dev);
  const Tensor x = on_device(input, dt, dev), w = on_device(weight, dt, dev), dy = on_device(grad_output, dt, dev);
  const ConvArgs a = conv_args(g);
  {
    DeviceGuard guard(dev);
    if (!g.transposed) {
      if (dx.defined()) launch_conv_backward_input(code_of(dt), a, dy.raw_data(), w.raw_data(), nullptr, sx.data());
      if (dw.defined()) launch_conv_backward_weight(code_of(dt), a, dy.raw_data(), x.raw_data(), sw.data());
      if (db.defined()) launch_conv_backward_bias(code_of(dt), a, dy.raw_data(), sb.data());
    } else {  // the passes' roles swap: See Note [Transposed convolution geometry]
      if (dx.defined()) launch_conv_forward(code_of(dt), a, dy.raw_data(), w.raw_data(), nullptr, sx.data());
      if (dw.defined()) launch_conv_backward_weight(code_of(dt), a, x.raw_data(), dy.raw_data(), sw.data());
      if (db.defined()) launch_conv_backward_bias(code_of(dt), result_side(a), dy.raw_data(), sb.data());
    }
  }
  sx.finish();
  sw.finish();
  sb.finish();
  // The gradients take the forward's layout (conv_format_cuda); an empty
  // input's are zeros_like (preserve), the Meta kernel's strides.
  auto laid = [&](const Tensor& d, const Tensor& like) {
    if (!d.defined()) return d;
    if (input.numel() == 0) return with_strides(d, like.strides(), device_copy);
    return in_format(d, conv_format_cuda(input, weight), kOp, device_copy);
  };
  return {laid(dx, mx), laid(dw, mw), db};
}

// ---- Pooling ----

PoolArgs pool_args(const PoolGeometry& g) {
  PoolArgs a;
  a.planes = g.planes;
  for (int i = 0; i < 2; ++i) {
    a.in[i] = g.in[i];
    a.out[i] = g.out[i];
    a.kernel[i] = g.kernel[i];
    a.stride[i] = g.stride[i];
    a.padding[i] = g.padding[i];
    a.dilation[i] = g.dilation[i];
  }
  return a;
}

std::tuple<Tensor, Tensor> max_pool2d_with_indices_cuda(const Tensor& self, IntArrayRef kernel_size,
                                                        IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, bool ceil_mode) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices";
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  const Device dev = require_device(self.device(), kOp);
  Tensor out = empty_cuda(g.out_sizes, self.dtype(), dev);
  Tensor idx = empty_cuda(g.out_sizes, DType::kInt64, dev);
  if (out.numel() == 0) return {in_format_of(out, self, kOp), in_format_of(idx, self, kOp)};
  const Tensor x = contiguous_cuda(self);
  DeviceGuard guard(dev);
  launch_max_pool2d(code_of(self.dtype()), pool_args(g), x.raw_data(), out.raw_data(),
                    static_cast<int64_t*>(idx.raw_data()));
  return {in_format_of(out, self, kOp), in_format_of(idx, self, kOp)};
}

// max_pool_index_flags: launch_check_max_indices' flags, read back (one
// 4-byte copy, which waits for the queued work as nn.cc's index checks do);
// an index outside its plane throws the CPU's message for the first one.
int max_pool_index_flags(const PoolArgs& a, const Tensor& idx, std::string_view op, Device dev) {
  DeviceGuard guard(dev);
  const Tensor flag = empty_cuda({}, DType::kInt32, dev);
  check(cudaMemsetAsync(flag.raw_data(), 0, sizeof(int32_t), nullptr), op);
  launch_check_max_indices(a, static_cast<const int64_t*>(idx.raw_data()), static_cast<int*>(flag.raw_data()));
  int32_t flags = 0;
  check(cudaMemcpy(&flags, flag.raw_data(), sizeof(flags), cudaMemcpyDeviceToHost), op);
  if ((flags & kMaxIndexOutOfRange) != 0) {
    const Tensor host = make_tensor(idx.sizes(), DType::kInt64, kCPU);
    copy_between(host, idx);
    const auto* p = static_cast<const int64_t*>(host.raw_data());
    const int64_t in_plane = a.in[0] * a.in[1];
    for (int64_t i = 0; i < host.numel(); ++i) {
      OPSPEC_CHECK(p[i] >= 0 && p[i] < in_plane, op, ": found an invalid max index ", p[i]);
    }
  }
  return flags;
}

// max_pool2d_with_indices_backward: See Note [Deterministic max_pool2d
// backward] in conv.cu. grad_output is read in self's dtype and the indices
// as i64 (converted when they are not).
Tensor max_pool2d_with_indices_backward_cuda(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                             IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                                             bool ceil_mode, const Tensor& indices) {
  constexpr std::string_view kOp = "aten::max_pool2d_with_indices_backward";
  max_pool2d_with_indices_backward_meta(grad_output, self, kernel_size, stride, padding, dilation, ceil_mode, indices);
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, dilation, ceil_mode, kOp);
  const Device dev = op_device({grad_output, self, indices}, kOp);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  const PoolArgs a = pool_args(g);
  const Tensor idx = on_device(indices, DType::kInt64, dev);
  const int flags = max_pool_index_flags(a, idx, kOp, dev);
  const Tensor go = on_device(grad_output, self.dtype(), dev);
  DeviceGuard guard(dev);
  launch_max_pool2d_backward(code_of(self.dtype()), a, go.raw_data(), static_cast<const int64_t*>(idx.raw_data()),
                             out.raw_data(), (flags & kMaxIndexOutsideWindow) != 0);
  return in_format_of(out, self, kOp);
}

Tensor avg_pool2d_cuda(const Tensor& self, IntArrayRef kernel_size, IntArrayRef stride, IntArrayRef padding,
                       bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
  constexpr std::string_view kOp = "aten::avg_pool2d";
  avg_pool2d_meta(self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override);
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, kOp);
  const Device dev = require_device(self.device(), kOp);
  Tensor out = empty_cuda(g.out_sizes, self.dtype(), dev);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  PoolArgs a = pool_args(g);
  a.count_include_pad = count_include_pad;
  a.has_divisor = divisor_override.has_value();
  a.divisor = divisor_override.value_or(1);
  const Tensor x = contiguous_cuda(self);
  DeviceGuard guard(dev);
  launch_avg_pool2d(code_of(self.dtype()), a, x.raw_data(), out.raw_data());
  return in_format_of(out, self, kOp);
}

// avg_pool2d_backward: as the CPU kernel, divisor_override is not checked
// here (a zero divides every share).
Tensor avg_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self, IntArrayRef kernel_size,
                                IntArrayRef stride, IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                                std::optional<int64_t> divisor_override) {
  constexpr std::string_view kOp = "aten::avg_pool2d_backward";
  avg_pool2d_backward_meta(grad_output, self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                           divisor_override);
  const int64_t one[] = {1};
  const PoolGeometry g = pool2d_geometry(self, kernel_size, stride, padding, one, ceil_mode, kOp);
  const Device dev = op_device({grad_output, self}, kOp);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  PoolArgs a = pool_args(g);
  a.count_include_pad = count_include_pad;
  a.has_divisor = divisor_override.has_value();
  a.divisor = divisor_override.value_or(1);
  const Tensor go = on_device(grad_output, self.dtype(), dev);
  DeviceGuard guard(dev);
  launch_avg_pool2d_backward(code_of(self.dtype()), a, go.raw_data(), out.raw_data());
  return in_format_of(out, self, kOp);
}

// adaptive_args: planes of self's last two dims pooled to out_h x out_w.
PoolArgs adaptive_args(const Tensor& self, int64_t out_h, int64_t out_w) {
  PoolArgs a;
  a.in[0] = self.size(-2);
  a.in[1] = self.size(-1);
  a.planes = self.numel() / (a.in[0] * a.in[1]);
  a.out[0] = out_h;
  a.out[1] = out_w;
  return a;
}

Tensor adaptive_avg_pool2d_cuda(const Tensor& self, IntArrayRef output_size) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d";
  const SizeVec sizes = adaptive_pool_shape(self, output_size, kOp);
  const Device dev = require_device(self.device(), kOp);
  Tensor out = empty_cuda(sizes, self.dtype(), dev);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  const Tensor x = contiguous_cuda(self);
  DeviceGuard guard(dev);
  launch_adaptive_avg_pool2d(code_of(self.dtype()), adaptive_args(self, output_size[0], output_size[1]),
                             x.raw_data(), out.raw_data());
  return in_format_of(out, self, kOp);
}

Tensor adaptive_avg_pool2d_backward_cuda(const Tensor& grad_output, const Tensor& self) {
  constexpr std::string_view kOp = "aten::_adaptive_avg_pool2d_backward";
  adaptive_avg_pool2d_backward_meta(grad_output, self);
  // The CPU kernel reads grad_output's planes as self's without checking;
  // on the device a mismatch would read out of bounds, so it is an error.
  for (int64_t i = 0; i + 2 < self.dim(); ++i) {
    OPSPEC_CHECK(grad_output.size(i) == self.size(i), kOp, ": grad_output ", format_sizes(grad_output.sizes()),
                 " and self ", format_sizes(self.sizes()), " must have the same sizes but in the last two dims");
  }
  const Device dev = op_device({grad_output, self}, kOp);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  if (out.numel() == 0) return in_format_of(out, self, kOp);
  const Tensor go = on_device(grad_output, self.dtype(), dev);
  DeviceGuard guard(dev);
  launch_adaptive_avg_pool2d_backward(code_of(self.dtype()), adaptive_args(self, grad_output.size(-2),
                                                                           grad_output.size(-1)),
                                      go.raw_data(), out.raw_data());
  return in_format_of(out, self, kOp);
}

// ---- Batch norm ----

// bn_args: input [N, C, S...] as n blocks of C planes of `inner` elements.
BatchNormArgs bn_args(const Tensor& input) {
  BatchNormArgs a;
  a.n = input.size(0);
  a.channels = input.size(1);
  for (int64_t d = 2; d < input.dim(); ++d) a.inner *= input.size(d);
  return a;
}

// param: an optional per-channel tensor on dev in the compute type (undefined when absent).
Tensor param(const std::optional<Tensor>& t, DType stat, Device dev) {
  return t ? on_device(*t, stat, dev) : Tensor();
}

// running_copy: a contiguous compute-type copy of a running stat for the
// update kernel to overwrite (never the caller's tensor itself: the new
// values go back through copy_between, in its dtype and layout).
Tensor running_copy(const std::optional<Tensor>& t, DType stat, Device dev) {
  if (!t) return Tensor();
  Tensor out = empty_cuda(t->sizes(), stat, dev);  // read as t->numel() values
  copy_between(out, *t);
  return out;
}

// native_batch_norm: See kernels/cpu/batch_norm.cc; the statistics are block
// sums (See conv.cu), the rest the CPU's formulas; the result's layout and the
// eval saves are PyTorch's CUDA kernel's (Note [Batch norm on CUDA]).
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_cuda(const Tensor& input, const std::optional<Tensor>& weight,
                                                          const std::optional<Tensor>& bias,
                                                          const std::optional<Tensor>& running_mean,
                                                          const std::optional<Tensor>& running_var, bool training,
                                                          double momentum, double eps) {
  constexpr std::string_view kOp = "aten::native_batch_norm";
  check_batch_norm(input, weight, bias, running_mean, running_var, training, kOp);
  const Device dev = op_device({input, weight ? *weight : Tensor(), bias ? *bias : Tensor(),
                                running_mean ? *running_mean : Tensor(), running_var ? *running_var : Tensor()},
                               kOp);
  BatchNormArgs a = bn_args(input);
  const DType stat = compute_dtype(input.dtype());
  const SizeVec out_strides = batch_norm_output_strides(input, dev);
  auto laid_out = [&](const Tensor& t) { return with_strides(t, out_strides, device_copy); };
  Tensor out = empty_cuda(input.sizes(), input.dtype(), dev);
  Tensor save_mean = empty_cuda({batch_norm_saved_size(a.channels, training, dev)}, stat, dev);
  Tensor save_invstd = empty_cuda({batch_norm_saved_size(a.channels, training, dev)}, stat, dev);
  if (a.channels == 0) return {laid_out(out), save_mean, save_invstd};
  const Code code = code_of(input.dtype());
  const Tensor x = contiguous_cuda(input);
  const Tensor w = param(weight, stat, dev), b = param(bias, stat, dev);
  a.x = x.raw_data();
  a.weight = data_or_null(w);
  a.bias = data_or_null(b);
  a.eps = eps;
  a.momentum = momentum;
  a.y = out.raw_data();
  if (training) {
    const Tensor var_sum = empty_cuda({a.channels}, stat, dev);
    Tensor rm = running_copy(running_mean, stat, dev), rv = running_copy(running_var, stat, dev);
    a.mean = save_mean.raw_data();
    a.invstd = save_invstd.raw_data();
    a.var_sum = var_sum.raw_data();
    a.running_mean = data_or_null(rm);
    a.running_var = data_or_null(rv);
    {
      DeviceGuard guard(dev);
      launch_batch_norm_stats(code, a);
      launch_batch_norm_update_running(code, a);
      launch_batch_norm_forward(code, a);
    }
    // In place, as the CPU's copy_into (running stats of any dtype and layout).
    if (running_mean) copy_between(*running_mean, rm);
    if (running_var) copy_between(*running_var, rv);
    return {laid_out(out), save_mean, save_invstd};
  }
  // Eval: the running stats normalise, and the saves return them: running_mean
  // in the compute type, 1 / sqrt(running_var + eps).
  copy_between(save_mean, *running_mean);
  const Tensor rv = on_device(*running_var, stat, dev);
  a.mean = save_mean.raw_data();
  a.invstd = save_invstd.raw_data();
  a.running_var = rv.raw_data();
  DeviceGuard guard(dev);
  launch_batch_norm_eval_invstd(code, a);
  launch_batch_norm_forward(code, a);
  return {laid_out(out), save_mean, save_invstd};
}

// native_batch_norm_backward: grad_out is read in input's dtype.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm_backward_cuda(
    const Tensor& grad_out, const Tensor& input, const std::optional<Tensor>& weight,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    const std::optional<Tensor>& save_mean, const std::optional<Tensor>& save_invstd, bool train, double eps,
    std::array<bool, 3> output_mask) {
  constexpr std::string_view kOp = "aten::native_batch_norm_backward";
  native_batch_norm_backward_meta(grad_out, input, weight, running_mean, running_var, save_mean, save_invstd, train,
                                  eps, output_mask);
  const Device dev =
      op_device({grad_out, input, weight ? *weight : Tensor(), running_mean ? *running_mean : Tensor(),
                 running_var ? *running_var : Tensor(), save_mean ? *save_mean : Tensor(),
                 save_invstd ? *save_invstd : Tensor()},
                kOp);
  BatchNormArgs a = bn_args(input);
  // Row-major but in training on a channels-last input (Note [Batch norm on CUDA]).
  const MemoryFormat dx_format = batch_norm_grad_input_format(input, train, dev);
  auto laid_out = [&](const Tensor& t) { return t.defined() ? in_format(t, dx_format, kOp, device_copy) : t; };
  Tensor dx = output_mask[0] ? empty_cuda(input.sizes(), input.dtype(), dev) : Tensor();
  Tensor dw = output_mask[1] ? empty_cuda({a.channels}, input.dtype(), dev) : Tensor();
  Tensor db = output_mask[2] ? empty_cuda({a.channels}, input.dtype(), dev) : Tensor();
  if (a.channels == 0) return {laid_out(dx), dw, db};
  const DType stat = compute_dtype(input.dtype());
  const Code code = code_of(input.dtype());
  const Tensor x = contiguous_cuda(input), dy = on_device(grad_out, input.dtype(), dev);
  const Tensor w = param(weight, stat, dev);
  Tensor mean, invstd;
  if (train) {
    mean = on_device(*save_mean, stat, dev);
    invstd = on_device(*save_invstd, stat, dev);
  } else {
    mean = on_device(*running_mean, stat, dev);
    invstd = empty_cuda({a.channels}, stat, dev);
  }
  const Tensor rv = train ? Tensor() : on_device(*running_var, stat, dev);
  const Tensor sums = empty_cuda({a.channels}, stat, dev), dotps = empty_cuda({a.channels}, stat, dev);
  a.x = x.raw_data();
  a.dy = dy.raw_data();
  a.weight = data_or_null(w);
  a.mean = mean.raw_data();
  a.invstd = invstd.raw_data();
  a.running_var = rv.defined() ? rv.raw_data() : nullptr;
  a.eps = eps;
  a.sums = sums.raw_data();
  a.dotps = dotps.raw_data();
  a.dx = data_or_null(dx);
  a.dw = data_or_null(dw);
  a.db = data_or_null(db);
  a.train = train;
  DeviceGuard guard(dev);
  if (!train) launch_batch_norm_eval_invstd(code, a);
  launch_batch_norm_backward(code, a);
  return {laid_out(dx), dw, db};
}

}  // namespace

void register_conv_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("convolution", kKey, &convolution_cuda)
      .impl("convolution_backward", kKey, &convolution_backward_cuda)
      .impl("max_pool2d_with_indices", kKey, &max_pool2d_with_indices_cuda)
      .impl("max_pool2d_with_indices_backward", kKey, &max_pool2d_with_indices_backward_cuda)
      .impl("avg_pool2d", kKey, &avg_pool2d_cuda)
      .impl("avg_pool2d_backward", kKey, &avg_pool2d_backward_cuda)
      .impl("_adaptive_avg_pool2d", kKey, &adaptive_avg_pool2d_cuda)
      .impl("_adaptive_avg_pool2d_backward", kKey, &adaptive_avg_pool2d_backward_cuda)
      .impl("native_batch_norm", kKey, &native_batch_norm_cuda)
      .impl("native_batch_norm_backward", kKey, &native_batch_norm_backward_cuda);
}

}  // namespace opspec::internal::cuda
