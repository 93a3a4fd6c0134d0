// factory.cc: CUDA kernels of the factories (empty, zeros, ones, full,
// scalar_tensor, arange, *_like), fills, random ops (rand, randn, *_like,
// bernoulli_, native_dropout, randint, uniform_, normal_, bernoulli), cat/stack and _local_scalar_dense. Values that
// need checking and conversion (fill values) go through the CPU kernels on a
// one-element host tensor, so errors and rounding are the CPU's; random
// numbers come from the same generator offsets and Philox functions as the
// CPU's (See Note [Counter-based randomness]).
#include <cuda_runtime_api.h>

#include <cstring>
#include <tuple>

#include "kernels/common/backward_meta.h"
#include "kernels/cuda/cuda_copy.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/elementwise_args.h"
#include "runtime/ops/elementwise_rules.h"  // check_no_internal_overlap
#include "kernels/common/factory_meta.h"
#include "kernels/common/layout_format.h"
#include "kernels/common/random_meta.h"
#include "kernels/cuda/random_launch.h"
#include "runtime/core/generator.h"
#include "runtime/core/memory_format.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

using OptDType = std::optional<DType>;
using OptInt = std::optional<int64_t>;
using OptDevice = std::optional<Device>;
using OptBool = std::optional<bool>;

// CPU kernels (kernels/cpu/factory.cc) whose checks and conversions the fills reuse.
Tensor ones_cpu(IntArrayRef size, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor full_cpu(IntArrayRef size, const Scalar& fill_value, OptDType dtype, OptInt layout, OptDevice device,
                OptBool pin_memory);
Tensor scalar_tensor_cpu(const Scalar& s, OptDType dtype, OptInt layout, OptDevice device, OptBool pin_memory);
Tensor full_like_cpu(const Tensor& self, const Scalar& fill_value, OptDType dtype, OptInt layout, OptDevice device,
                     OptBool pin_memory, OptInt memory_format);
Tensor fill_cpu(const Tensor& self, const Scalar& value);

namespace cuda {
namespace {

Device target_device(OptDevice device, std::string_view op) {
  return require_device(device.value_or(Device(DeviceType::kCUDA)), op);
}

// fill_with: every element of t = the one element of host (same dtype).
void fill_with(const Tensor& t, const Tensor& host) {
  OPSPEC_INTERNAL_ASSERT(host.numel() == 1 && host.dtype() == t.dtype());
  if (t.numel() == 0) return;
  uint64_t bits = 0;
  std::memcpy(&bits, host.raw_data(), static_cast<size_t>(host.element_size()));
  DeviceGuard guard(t.device());
  launch_fill(make_args(t, {}, {}), static_cast<int>(t.element_size()), bits);
}

// zero_fill: a memset when t is contiguous or, like a fresh *_like result,
// non-overlapping and dense (nbytes from its first element are its elements).
void zero_fill(const Tensor& t) {
  if (t.numel() == 0) return;
  DeviceGuard guard(t.device());
  if (t.is_contiguous() || is_non_overlapping_and_dense(t)) {
    check(cudaMemsetAsync(t.raw_data(), 0, static_cast<size_t>(t.nbytes()), nullptr), "zeros");
  } else {
    launch_fill(make_args(t, {}, {}), static_cast<int>(t.element_size()), 0);
  }
}

Tensor new_factory(IntArrayRef size, DType dtype, OptDevice device, std::string_view op) {
  check_factory_size(size, op);
  return empty_cuda(size, dtype, target_device(device, op));
}

Tensor empty_cuda_kernel(IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  constexpr std::string_view kOp = "aten::empty.memory_format";
  check_factory_size(size, kOp);
  const SizeVec strides = factory_strides(size, memory_format, kOp);
  return make_tensor_with_strides(size, strides, dtype.value_or(kDefaultFloat), target_device(device, kOp));
}

Tensor empty_strided_cuda(IntArrayRef size, IntArrayRef stride, OptDType dtype, OptInt, OptDevice device, OptBool) {
  check_factory_size(size, "aten::empty_strided");
  return make_strided(size, stride, dtype.value_or(kDefaultFloat), target_device(device, "aten::empty_strided"));
}

Tensor new_zeros_cuda(const Tensor& self, IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  OPSPEC_CHECK(!device || *device == self.device(), "aten::new_zeros: a device other than self's (",
               self.device().str(), ") is not supported, got ", device->str());
  Tensor out = new_factory(size, dtype.value_or(self.dtype()), self.device(), "aten::new_zeros");
  zero_fill(out);
  return out;
}

Tensor zeros_cuda(IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  Tensor out = new_factory(size, dtype.value_or(kDefaultFloat), device, "aten::zeros");
  zero_fill(out);
  return out;
}

Tensor ones_cuda(IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  const DType dt = dtype.value_or(kDefaultFloat);
  Tensor out = new_factory(size, dt, device, "aten::ones");
  fill_with(out, ones_cpu({}, dt, std::nullopt, std::nullopt, std::nullopt));
  return out;
}

Tensor full_cuda(IntArrayRef size, const Scalar& fill_value, OptDType dtype, OptInt, OptDevice device, OptBool) {
  const DType dt = full_dtype(fill_value, dtype);
  check_factory_size(size, "aten::full");
  const Tensor host = full_cpu({}, fill_value, dt, std::nullopt, std::nullopt, std::nullopt);  // checks the value
  Tensor out = new_factory(size, dt, device, "aten::full");
  fill_with(out, host);
  return out;
}

Tensor scalar_tensor_cuda(const Scalar& s, OptDType dtype, OptInt, OptDevice device, OptBool) {
  const Tensor host = scalar_tensor_cpu(s, dtype, std::nullopt, std::nullopt, std::nullopt);
  Tensor out = empty_cuda({}, host.dtype(), target_device(device, "aten::scalar_tensor"));
  copy_between(out, host);
  return out;
}

Tensor arange_impl(const Scalar& start, const Scalar& end, const Scalar& step, OptDType dtype, OptDevice device,
                   std::string_view op) {
  const Device target = target_device(device, op);
  const ArangeGeometry g = arange_geometry(start, end, step, dtype, op, target);  // refuses b8
  Tensor out = empty_cuda({g.numel}, g.dtype, target);
  if (g.numel == 0) return out;
  // The CPU's accumulation (kernels/cpu/factory.cc's arange_fill): int64 for integers, else float or double.
  const bool integral = is_integral(g.dtype, /*include_bool=*/false);
  DeviceGuard guard(out.device());
  launch_arange(code_of(g.dtype), out.raw_data(), g.numel, integral ? 0.0 : start.to_double(),
                integral ? 0.0 : step.to_double(), integral ? start.to_int() : 0, integral ? step.to_int() : 0);
  return out;
}

Tensor arange_cuda(const Scalar& end, OptDType dtype, OptInt, OptDevice device, OptBool) {
  return arange_impl(0, end, 1, dtype, device, "aten::arange");
}
Tensor arange_start_cuda(const Scalar& start, const Scalar& end, OptDType dtype, OptInt, OptDevice device, OptBool) {
  return arange_impl(start, end, 1, dtype, device, "aten::arange.start");
}
Tensor arange_start_step_cuda(const Scalar& start, const Scalar& end, const Scalar& step, OptDType dtype, OptInt,
                              OptDevice device, OptBool) {
  return arange_impl(start, end, step, dtype, device, "aten::arange.start_step");
}

// like_cuda: a tensor shaped and laid out like self (like_result_strides) on
// self's device, filled by fill, or like_op's kernel on the requested device
// when it is not cuda.
template <class Fill>
Tensor like_cuda(const Tensor& self, OptDType dtype, OptDevice device, OptInt memory_format, std::string_view like_op,
                 std::vector<Value> extra, Fill fill) {
  const DType out_dtype = dtype.value_or(self.dtype());
  const Device target = device.value_or(self.device());
  if (!target.is_cuda()) return like_on_device(like_op, self, std::move(extra), out_dtype, target, memory_format);
  const SizeVec strides = like_result_strides(self, memory_format, like_op);
  Tensor out = make_tensor_with_strides(self.sizes(), strides, out_dtype, require_device(target, like_op));
  fill(out);
  return out;
}

Tensor empty_like_cuda(const Tensor& self, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  return like_cuda(self, dtype, device, memory_format, "aten::empty_like", {}, [](const Tensor&) {});
}
Tensor zeros_like_cuda(const Tensor& self, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  return like_cuda(self, dtype, device, memory_format, "aten::zeros_like", {}, &zero_fill);
}
Tensor ones_like_cuda(const Tensor& self, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  return like_cuda(self, dtype, device, memory_format, "aten::ones_like", {}, [](const Tensor& t) {
    fill_with(t, ones_cpu({}, t.dtype(), std::nullopt, std::nullopt, std::nullopt));
  });
}
Tensor full_like_cuda(const Tensor& self, const Scalar& fill_value, OptDType dtype, OptInt, OptDevice device,
                      OptBool, OptInt memory_format) {
  return like_cuda(self, dtype, device, memory_format, "aten::full_like", {Value(fill_value)}, [&](const Tensor& t) {
    const Tensor one = make_tensor({}, t.dtype(), kCPU);
    fill_with(t, full_like_cpu(one, fill_value, t.dtype(), std::nullopt, std::nullopt, std::nullopt, std::nullopt));
  });
}

Tensor fill_cuda(const Tensor& self, const Scalar& value) {
  const Tensor host = make_tensor({}, self.dtype(), kCPU);
  fill_cpu(host, value);  // the CPU's checks and conversion
  fill_with(self, host);
  self.impl()->bump_version();
  return self;
}

Tensor zero_cuda(const Tensor& self) {
  zero_fill(self);
  self.impl()->bump_version();
  return self;
}

// ---- Random ----

// draw_logical: reserves numel offsets and lets launch fill self in logical
// order (into self when contiguous, else through a buffer then copied).
template <class F>
void draw_logical(const Tensor& self, std::string_view op, F launch) {
  const int64_t n = self.numel();
  if (n == 0) return;
  const Device dev = require_device(self.device(), op);
  const GeneratorState rs = reserve_random_offsets(static_cast<uint64_t>(n));
  const Tensor out = self.is_contiguous() ? self : empty_cuda(self.sizes(), self.dtype(), dev);
  DeviceGuard guard(dev);
  launch(out, rs);
  if (!out.is_same(self)) device_copy(self, out);
}

// fill_random: a fresh floating tensor (any dense layout), drawn from the
// default generator in logical order (See Note [Random draws per dtype]).
void fill_random(const Tensor& out, RandomKind kind) {
  draw_logical(out, "aten::rand", [&](const Tensor& o, const GeneratorState& rs) {
    launch_random(kind, code_of(o.dtype()), o.raw_data(), o.numel(), rs.seed, rs.offset, 0);
  });
}

Tensor rand_cuda(IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, "check_uniform_bounds", "aten::rand");
  Tensor out = new_factory(size, t, device, "aten::rand");
  fill_random(out, RandomKind::kUniform);
  return out;
}

Tensor randn_cuda(IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, "normal_kernel_cuda", "aten::randn");
  Tensor out = new_factory(size, t, device, "aten::randn");
  fill_random(out, RandomKind::kNormal);
  return out;
}

// random_like_cuda: rand_like / randn_like; on another device that device's
// kernel checks the dtype, naming itself.
Tensor random_like_cuda(const Tensor& self, OptDType dtype, OptDevice device, OptInt memory_format,
                        std::string_view check_name, std::string_view op, RandomKind kind) {
  const DType out_dtype = dtype.value_or(self.dtype());
  if (device.value_or(self.device()).is_cuda()) check_random_dtype(out_dtype, check_name, op);
  return like_cuda(self, dtype, device, memory_format, op, {}, [&](const Tensor& t) { fill_random(t, kind); });
}

Tensor rand_like_cuda(const Tensor& self, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  return random_like_cuda(self, dtype, device, memory_format, "check_uniform_bounds", "aten::rand_like",
                          RandomKind::kUniform);
}
Tensor randn_like_cuda(const Tensor& self, OptDType dtype, OptInt, OptDevice device, OptBool, OptInt memory_format) {
  return random_like_cuda(self, dtype, device, memory_format, "normal_kernel_cuda", "aten::randn_like",
                          RandomKind::kNormal);
}

Tensor bernoulli_float_cuda(const Tensor& self, double p, OptInt generator) {
  constexpr std::string_view op = "aten::bernoulli_.float";
  OPSPEC_CHECK(!generator.has_value(), op, ": explicit generators are not supported; "
               "use manual_seed on the default generator");
  check_bernoulli_p(p, op);
  check_no_internal_overlap(self, op);
  const Device dev = require_device(self.device(), op);
  const int64_t n = self.numel();
  if (n > 0) {
    const GeneratorState rs = reserve_random_offsets(static_cast<uint64_t>(n));
    // Drawn in logical order into a contiguous buffer when self is strided.
    const Tensor out = self.is_contiguous() ? self : empty_cuda(self.sizes(), self.dtype(), dev);
    DeviceGuard guard(dev);
    launch_random(RandomKind::kBernoulli, code_of(self.dtype()), out.raw_data(), n, rs.seed, rs.offset, p);
    if (!out.is_same(self)) device_copy(self, out);
  }
  self.impl()->bump_version();
  return self;
}

// native_dropout_cuda: output and mask laid out as input, as PyTorch's
// (empty_like, clone, ones_like: See Note [Dropout layout]); drawn row-major,
// then copied into that layout.
std::tuple<Tensor, Tensor> native_dropout_cuda(const Tensor& input, double p, OptBool train) {
  check_dropout_args(input, p, train);
  const Device dev = require_device(input.device(), "aten::native_dropout");
  const SizeVec strides = preserve_strides(input);
  const int64_t n = input.numel();
  if (n == 0 || !train.value_or(true)) {
    Tensor output = make_tensor_with_strides(input.sizes(), strides, input.dtype(), dev);
    Tensor mask = make_tensor_with_strides(input.sizes(), strides, DType::kBool, dev);
    if (n == 0) return {output, mask};
    device_copy(output, input);
    DeviceGuard guard(dev);  // mask is dense: its n bytes from the first element
    check(cudaMemsetAsync(mask.raw_data(), 1, static_cast<size_t>(n), nullptr), "native_dropout");
    return {output, mask};
  }
  if (p == 1) {
    // PyTorch's CUDA kernel returns zeros_like(input) and an all-false mask,
    // so NaN and inf give 0 (the CPU's input * mask * 0 keeps NaN). The draws
    // are still reserved: later draws stay the CPU's (Note [Same random numbers on every device]).
    reserve_random_offsets(static_cast<uint64_t>(n));
    Tensor output = make_tensor_with_strides(input.sizes(), strides, input.dtype(), dev);
    Tensor mask = make_tensor_with_strides(input.sizes(), strides, DType::kBool, dev);
    DeviceGuard guard(dev);  // both dense: their bytes from the first element
    check(cudaMemsetAsync(output.raw_data(), 0, static_cast<size_t>(output.nbytes()), nullptr), "native_dropout");
    check(cudaMemsetAsync(mask.raw_data(), 0, static_cast<size_t>(n), nullptr), "native_dropout");
    return {output, mask};
  }
  Tensor output = empty_cuda(input.sizes(), input.dtype(), dev);
  Tensor mask = empty_cuda(input.sizes(), DType::kBool, dev);
  // kernels/cpu/random.cc's arithmetic: input * mask * (1 / (1 - p)).
  const double p1m = 1.0 - p;
  const double scale = p1m == 0 ? 0.0 : 1.0 / p1m;
  const Tensor src = contiguous_cuda(input);
  const GeneratorState rs = reserve_random_offsets(static_cast<uint64_t>(n));
  DeviceGuard guard(dev);
  launch_dropout(code_of(input.dtype()), src.raw_data(), output.raw_data(), static_cast<bool*>(mask.raw_data()), n,
                 rs.seed, rs.offset, p1m, scale);
  return {with_strides(output, strides, device_copy), with_strides(mask, strides, device_copy)};
}

// ---- randint, uniform_, normal_, bernoulli (kernels/cuda/random.cu) ----

Tensor randint_impl(int64_t low, int64_t high, IntArrayRef size, OptDType dtype, OptDevice device,
                    std::string_view op) {
  const DType t = dtype.value_or(DType::kInt64);
  check_randint_range(low, high, t, op);
  Tensor out = new_factory(size, t, device, op);
  const uint64_t range = static_cast<uint64_t>(high) - static_cast<uint64_t>(low);
  draw_logical(out, op, [&](const Tensor& o, const GeneratorState& rs) {
    launch_randint(code_of(t), o.raw_data(), o.numel(), rs.seed, rs.offset, low, range);
  });
  return out;
}

Tensor randint_cuda(int64_t high, IntArrayRef size, OptDType dtype, OptInt, OptDevice device, OptBool) {
  return randint_impl(0, high, size, dtype, device, "aten::randint");
}

Tensor randint_low_cuda(int64_t low, int64_t high, IntArrayRef size, OptDType dtype, OptInt, OptDevice device,
                        OptBool) {
  return randint_impl(low, high, size, dtype, device, "aten::randint.low");
}

Tensor uniform_cuda(const Tensor& self, double from, double to, OptInt generator) {
  constexpr std::string_view op = "aten::uniform_";
  check_no_generator(generator, op);
  check_uniform_args(self, from, to, op);
  draw_logical(self, op, [&](const Tensor& o, const GeneratorState& rs) {
    launch_uniform(code_of(o.dtype()), o.raw_data(), o.numel(), rs.seed, rs.offset, from, to);
  });
  self.impl()->bump_version();
  return self;
}

Tensor normal_cuda(const Tensor& self, double mean, double std, OptInt generator) {
  constexpr std::string_view op = "aten::normal_";
  check_no_generator(generator, op);
  check_normal_args(self, std, op);
  draw_logical(self, op, [&](const Tensor& o, const GeneratorState& rs) {
    launch_normal(code_of(o.dtype()), o.raw_data(), o.numel(), rs.seed, rs.offset, mean, std);
  });
  self.impl()->bump_version();
  return self;
}

Tensor bernoulli_cuda(const Tensor& self, OptInt generator) {
  constexpr std::string_view op = "aten::bernoulli";
  check_no_generator(generator, op);
  check_bernoulli_probs(self, op);
  const Device dev = require_device(self.device(), op);
  const Tensor probs = contiguous_cuda(self);
  {
    DeviceGuard guard(dev);
    OPSPEC_CHECK(launch_check_probs(code_of(self.dtype()), probs.raw_data(), probs.numel()), op,
                 ": Expected p_in >= 0 && p_in <= 1 to be true, but got false.");
  }
  Tensor out = empty_cuda(self.sizes(), self.dtype(), dev);
  draw_logical(out, op, [&](const Tensor& o, const GeneratorState& rs) {
    launch_bernoulli_tensor(code_of(o.dtype()), probs.raw_data(), o.raw_data(), o.numel(), rs.seed, rs.offset);
  });
  return out;
}

Tensor bernoulli_p_cuda(const Tensor& self, double p, OptInt generator) {
  constexpr std::string_view op = "aten::bernoulli.p";
  check_no_generator(generator, op);
  check_bernoulli_p(p, op);
  Tensor out = empty_cuda(self.sizes(), self.dtype(), require_device(self.device(), op));
  draw_logical(out, op, [&](const Tensor& o, const GeneratorState& rs) {
    launch_random(RandomKind::kBernoulli, code_of(o.dtype()), o.raw_data(), o.numel(), rs.seed, rs.offset, p);
  });
  return out;
}

// ---- slice_backward and select_backward: zeros, then grad copied into the view ----

Tensor slice_backward_cuda(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t start, int64_t end,
                           int64_t step) {
  Tensor out = new_factory(input_sizes, grad.dtype(), grad.device(), "aten::slice_backward");
  zero_fill(out);
  device_copy(slice_backward_target(out, grad, dim, start, end, step), grad);
  return out;
}

Tensor select_backward_cuda(const Tensor& grad, IntArrayRef input_sizes, int64_t dim, int64_t index) {
  Tensor out = new_factory(input_sizes, grad.dtype(), grad.device(), "aten::select_backward");
  zero_fill(out);
  device_copy(select_backward_target(out, grad, dim, index), grad);
  return out;
}

// ---- Joins and item ----

Tensor cat_into(TensorList inputs, const CatGeometry& g, std::string_view op) {
  const Device dev = require_device(g.device, op);
  Tensor out = g.strides.empty() ? empty_cuda(g.sizes, g.dtype, dev) : make_strided(g.sizes, g.strides, g.dtype, dev);
  if (out.numel() == 0) return out;
  int64_t offset = 0;  // position along g.dim
  for (const Tensor& t : inputs) {
    if (is_skipped_in_cat(t)) continue;
    const int64_t len = t.sizes()[g.dim];
    if (t.numel() > 0) {
      SizeVec sizes(g.sizes.begin(), g.sizes.end());
      sizes[g.dim] = len;
      device_copy(make_view(out, sizes, out.strides(), offset * out.strides()[g.dim]), t);
    }
    offset += len;
  }
  return out;
}

Tensor cat_cuda(TensorList tensors, int64_t dim) {
  return cat_into(tensors, cat_geometry(tensors, dim, "aten::cat"), "aten::cat");
}

Tensor stack_cuda(TensorList tensors, int64_t dim) {
  // stack is cat of the inputs unsqueezed at dim (views, no copies).
  const std::vector<Tensor> inputs = stack_inputs(tensors, dim, "aten::stack");
  return cat_into(inputs, stack_geometry(tensors, inputs, dim), "aten::stack");
}

Scalar local_scalar_dense_cuda(const Tensor& self) {
  OPSPEC_CHECK(self.numel() == 1, "aten::_local_scalar_dense: a Tensor with ", self.numel(),
               " elements cannot be converted to Scalar");
  require_device(self.device(), "aten::_local_scalar_dense");
  Tensor host = make_tensor({}, self.dtype(), kCPU);
  copy_between(host, make_view(self, {}, {}, self.storage_offset()));
  return read_scalar(host);
}

// fill_.Tensor: fill_.Scalar with value.item(), read from the host or the device.
Tensor fill_tensor_cuda(const Tensor& self, const Tensor& value) {
  check_fill_value(self, value);
  return fill_cuda(self, value.device().is_cpu() ? read_scalar(value) : local_scalar_dense_cuda(value));
}

}  // namespace

void register_factory_cuda_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kCUDA;
  lib.impl("empty.memory_format", kKey, &empty_cuda_kernel)
      .impl("empty_strided", kKey, &empty_strided_cuda)
      .impl("zeros", kKey, &zeros_cuda)
      .impl("_efficientzerotensor", kKey, &zeros_cuda)
      .impl("new_zeros", kKey, &new_zeros_cuda)
      .impl("slice_backward", kKey, &slice_backward_cuda)
      .impl("select_backward", kKey, &select_backward_cuda)
      .impl("ones", kKey, &ones_cuda)
      .impl("full", kKey, &full_cuda)
      .impl("scalar_tensor", kKey, &scalar_tensor_cuda)
      .impl("arange", kKey, &arange_cuda)
      .impl("arange.start", kKey, &arange_start_cuda)
      .impl("arange.start_step", kKey, &arange_start_step_cuda)
      .impl("empty_like", kKey, &empty_like_cuda)
      .impl("zeros_like", kKey, &zeros_like_cuda)
      .impl("ones_like", kKey, &ones_like_cuda)
      .impl("full_like", kKey, &full_like_cuda)
      .impl("fill_.Scalar", kKey, &fill_cuda)
      .impl("fill_.Tensor", kKey, &fill_tensor_cuda)
      .impl("zero_", kKey, &zero_cuda);
  lib.impl("rand", kKey, &rand_cuda)
      .impl("randn", kKey, &randn_cuda)
      .impl("rand_like", kKey, &rand_like_cuda)
      .impl("randn_like", kKey, &randn_like_cuda)
      .impl("bernoulli_.float", kKey, &bernoulli_float_cuda)
      .impl("native_dropout", kKey, &native_dropout_cuda)
      .impl("randint", kKey, &randint_cuda)
      .impl("randint.low", kKey, &randint_low_cuda)
      .impl("uniform_", kKey, &uniform_cuda)
      .impl("normal_", kKey, &normal_cuda)
      .impl("bernoulli", kKey, &bernoulli_cuda)
      .impl("bernoulli.p", kKey, &bernoulli_p_cuda);
  lib.impl("cat", kKey, &cat_cuda)
      .impl("stack", kKey, &stack_cuda)
      .impl("_local_scalar_dense", kKey, &local_scalar_dense_cuda);
}

}  // namespace cuda
}  // namespace opspec::internal
