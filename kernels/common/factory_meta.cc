#include "kernels/common/factory_meta.h"

#include <cmath>
#include <limits>

#include "kernels/common/views.h"
#include "runtime/ops/elementwise_rules.h"  // check_no_internal_overlap
#include "runtime/core/memory_format.h"
#include "runtime/core/shape_utils.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {

// ---- Shape and dtype rules ----

void check_factory_size(IntArrayRef size, std::string_view op) {
  for (int64_t s : size) {
    OPSPEC_CHECK(s >= 0, op, ": Trying to create tensor with negative dimension ", s, ": ", format_sizes(size));
  }
}

DType full_dtype(const Scalar& fill_value, std::optional<DType> dtype) {
  if (dtype) return *dtype;
  if (fill_value.is_bool()) return DType::kBool;
  if (fill_value.is_integral()) return DType::kInt64;
  return kDefaultFloat;
}

ArangeGeometry arange_geometry(const Scalar& start, const Scalar& end, const Scalar& step,
                               std::optional<DType> dtype, std::string_view op, Device device) {
  const bool all_integral = !start.is_floating_point() && !end.is_floating_point() && !step.is_floating_point();
  const DType out = dtype.value_or(all_integral ? DType::kInt64 : kDefaultFloat);
  OPSPEC_CHECK(out != DType::kBool, op, ": \"", device_kernel_name("arange", device), "\" not implemented for 'Bool'");
  const double dstart = start.to_double(), dend = end.to_double(), dstep = step.to_double();
  OPSPEC_CHECK(std::isfinite(dstart) && std::isfinite(dend), op, ": unsupported range: ", start.str(), " -> ",
               end.str());
  double size_d = 0;
  if (is_integral(out, /*include_bool=*/false)) {
    // PyTorch converts the bounds to the (integral) accumulate type first.
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    for (double v : {dstart, dend, dstep}) {
      OPSPEC_CHECK(v >= -kLimit && v < kLimit, op, ": value ", format_double(v),
                   " cannot be converted to type int64_t without overflow");
    }
    const int64_t xstart = start.to_int(), xend = end.to_int(), xstep = step.to_int();
    OPSPEC_CHECK(xstep != 0, op, ": step must be nonzero");
    OPSPEC_CHECK((xstep > 0 && xend >= xstart) || (xstep < 0 && xend <= xstart), op,
                 ": upper bound and larger bound inconsistent with step sign");
    const __int128 sgn = xstep > 0 ? 1 : -1;
    const __int128 n = (static_cast<__int128>(xend) - xstart + xstep - sgn) / xstep;
    size_d = static_cast<double>(n);
  } else {
    OPSPEC_CHECK(dstep != 0, op, ": step must be nonzero");
    OPSPEC_CHECK((dstep > 0 && dend >= dstart) || (dstep < 0 && dend <= dstart), op,
                 ": upper bound and larger bound inconsistent with step sign");
    size_d = std::ceil((dend - dstart) / dstep);
  }
  OPSPEC_CHECK(size_d >= 0 && size_d < 9223372036854775808.0, op, ": invalid size, possible overflow?");
  return {static_cast<int64_t>(size_d), out};
}

std::string device_kernel_name(std::string_view base, Device device) {
  return str_cat(base, "_", device_type_name(device.type));
}

void check_random_dtype(DType dtype, std::string_view kernel_name, std::string_view op) {
  if (is_floating(dtype)) return;
  OPSPEC_FAIL(op, ": \"", kernel_name, "\" not implemented for '", scalar_type_name(dtype), "'");
}

void check_bernoulli_p(double p, std::string_view op) {
  OPSPEC_CHECK(p >= 0 && p <= 1, op, ": bernoulli_ expects p to be in [0, 1], but got p=", format_double(p));
}

void check_dropout_args(const Tensor& input, double p, std::optional<bool> train) {
  if (!train.value_or(true) || input.numel() == 0) return;
  OPSPEC_CHECK(p >= 0 && p <= 1, "aten::native_dropout: dropout probability has to be between 0 and 1, but got ",
               format_double(p));
  OPSPEC_CHECK(input.is_floating_point(), "aten::native_dropout: expected a floating point input, got ",
               dtype_short_name(input.dtype()));
}

CatGeometry cat_geometry(TensorList tensors, int64_t dim, std::string_view op) {
  OPSPEC_CHECK(!tensors.empty(), op, ": torch.cat(): expected a non-empty list of Tensors");
  for (size_t i = 0; i < tensors.size(); ++i) {
    OPSPEC_CHECK(tensors[i].defined(), op, ": Expected a proper Tensor but got None (or an undefined Tensor in C++) ",
                 "for sequence element ", i, " in sequence argument at position #0 'tensors'");  // as the dispatcher's
    OPSPEC_CHECK(tensors[i].dim() > 0, op, ": zero-dimensional tensor (at position ", i,
                 ") cannot be concatenated");
  }
  const Device device = check_same_device(tensors, op);
  const DType dtype = result_type(tensors);
  // The first tensor that is not a legacy [0] tensor sets the rank and sizes.
  const Tensor* ref = nullptr;
  for (size_t i = 0; i < tensors.size() && ref == nullptr; ++i) {
    if (!is_skipped_in_cat(tensors[i])) ref = &tensors[i];
  }
  if (ref == nullptr) {  // only legacy empty tensors: the result is one of them
    return {SizeVec{0}, dtype, device, 0, {}};
  }
  const int64_t ndim = ref->dim();
  const int64_t d = wrap_dim(dim, ndim, op);
  SizeVec sizes(ref->sizes().begin(), ref->sizes().end());
  sizes[d] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    if (is_skipped_in_cat(t)) continue;
    OPSPEC_CHECK(t.dim() == ndim, op, ": Tensors must have same number of dimensions: got ", ndim, " and ",
                 t.dim());
    for (int64_t k = 0; k < ndim; ++k) {
      if (k == d) continue;
      OPSPEC_CHECK(t.sizes()[k] == ref->sizes()[k], op, ": Sizes of tensors must match except in dimension ", d,
                   ". Expected size ", ref->sizes()[k], " but got size ", t.sizes()[k], " for tensor number ", i,
                   " in the list.");
    }
    // Expanded inputs have sizes with no storage behind them, so the sum can overflow.
    OPSPEC_CHECK(!__builtin_add_overflow(sizes[d], t.sizes()[d], &sizes[d]), op, ": the sizes in dimension ", d,
                 " add up to more than 2^63 - 1 (tensor number ", i, " has size ", t.sizes()[d], ")");
  }
  // Every input suggesting one channels-last format keeps it; any other mix is row-major.
  std::optional<MemoryFormat> format;
  for (const Tensor& t : tensors) {
    const MemoryFormat f = suggest_memory_format(t);
    if (f == MemoryFormat::kContiguous || (format && *format != f)) {
      format = MemoryFormat::kContiguous;
      break;
    }
    format = f;
  }
  SizeVec strides;
  if (format && *format != MemoryFormat::kContiguous) strides = strides_for(sizes, *format, op);
  return {std::move(sizes), dtype, device, d, std::move(strides)};
}

std::vector<Tensor> stack_inputs(TensorList tensors, int64_t dim, std::string_view op) {
  OPSPEC_CHECK(!tensors.empty(), op, ": stack expects a non-empty TensorList");
  for (size_t i = 0; i < tensors.size(); ++i) {
    OPSPEC_CHECK(tensors[i].defined(), op, ": Expected a proper Tensor but got None (or an undefined Tensor in C++) ",
                 "for sequence element ", i, " in sequence argument at position #0 'tensors'");  // as the dispatcher's
    OPSPEC_CHECK(tensors[i].sizes() == tensors[0].sizes(), op,
                 ": stack expects each tensor to be equal size, but got ", format_sizes(tensors[0].sizes()),
                 " at entry 0 and ", format_sizes(tensors[i].sizes()), " at entry ", i);
  }
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, op);
  std::vector<Tensor> out;
  out.reserve(tensors.size());
  for (const Tensor& t : tensors) out.push_back(unsqueeze_kernel(t, d));
  return out;
}

CatGeometry stack_geometry(TensorList tensors, TensorList inputs, int64_t dim) {
  constexpr std::string_view kOp = "aten::stack";
  const int64_t d = wrap_dim(dim, tensors[0].dim() + 1, kOp);
  CatGeometry g = cat_geometry(inputs, d, kOp);
  if (d < tensors[0].dim()) {
    const CatGeometry flat = cat_geometry(tensors, d, kOp);
    g.strides.clear();
    if (!flat.strides.empty()) {
      // Splitting a dim is always a view. (Assigned from the optional in
      // place: value_or's temporary drew a -Wmaybe-uninitialized at -O1.)
      if (std::optional<SizeVec> s = compute_view_strides(flat.sizes, flat.strides, g.sizes)) g.strides = std::move(*s);
    }
  }
  return g;
}

SizeVec factory_strides(IntArrayRef size, std::optional<int64_t> memory_format, std::string_view op) {
  return strides_for(size, to_memory_format(memory_format, op).value_or(MemoryFormat::kContiguous), op);
}

SizeVec like_result_strides(const Tensor& self, std::optional<int64_t> memory_format, std::string_view op) {
  return like_strides(self, to_memory_format(memory_format, op), op);
}

Tensor like_on_device(std::string_view like_op, const Tensor& self, std::vector<Value> extra, DType dtype,
                      Device device, std::optional<int64_t> memory_format) {
  const OperatorHandle& op = Dispatcher::singleton().get(like_op);
  std::vector<Value> positional{Value(self)};
  for (Value& v : extra) positional.push_back(std::move(v));
  const Value format = memory_format ? Value(*memory_format) : Value();
  Stack stack = op.schema().bind(std::move(positional),
                                 {{"dtype", Value(dtype)}, {"device", Value(device)}, {"memory_format", format}});
  Dispatcher::singleton().redispatch_boxed(op, DispatchKeySet(backend_key(device.type)), stack);
  return std::move(stack.at(0).to_tensor());
}

// ---- Meta kernels ----

namespace {

Tensor meta_factory(IntArrayRef size, DType dtype, std::string_view op) {
  check_factory_size(size, op);
  return make_tensor(size, dtype, kMeta);
}

// like_meta: the result of a *_like op on a meta self, laid out as
// like_result_strides says: meta unless another device is requested, in
// which case that device's kernel of like_op makes it.
Tensor like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<Device> device,
                 std::optional<int64_t> memory_format, std::string_view like_op, std::vector<Value> extra) {
  const DType out_dtype = dtype.value_or(self.dtype());
  const Device target = device.value_or(self.device());
  if (!target.is_meta()) return like_on_device(like_op, self, std::move(extra), out_dtype, target, memory_format);
  return make_tensor_with_strides(self.sizes(), like_result_strides(self, memory_format, like_op), out_dtype, kMeta);
}

}  // namespace

Tensor empty_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                  std::optional<bool>, std::optional<int64_t> memory_format) {
  constexpr std::string_view kOp = "aten::empty.memory_format";
  check_factory_size(size, kOp);
  return make_tensor_with_strides(size, factory_strides(size, memory_format, kOp), dtype.value_or(kDefaultFloat), kMeta);
}

Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype, std::optional<int64_t>,
                          std::optional<Device>, std::optional<bool>) {
  check_factory_size(size, "aten::empty_strided");
  return make_strided(size, stride, dtype.value_or(kDefaultFloat), kMeta);
}

Tensor zeros_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                  std::optional<bool>) {
  return meta_factory(size, dtype.value_or(kDefaultFloat), "aten::zeros");
}

Tensor new_zeros_meta(const Tensor& self, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device>, std::optional<bool>) {
  return meta_factory(size, dtype.value_or(self.dtype()), "aten::new_zeros");
}

Tensor ones_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                 std::optional<bool>) {
  return meta_factory(size, dtype.value_or(kDefaultFloat), "aten::ones");
}

Tensor full_meta(IntArrayRef size, const Scalar& fill_value, std::optional<DType> dtype, std::optional<int64_t>,
                 std::optional<Device>, std::optional<bool>) {
  return meta_factory(size, full_dtype(fill_value, dtype), "aten::full");
}

Tensor scalar_tensor_meta(const Scalar&, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                          std::optional<bool>) {
  return make_tensor({}, dtype.value_or(kDefaultFloat), kMeta);
}

Tensor arange_meta(const Scalar& end, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device> device,
                   std::optional<bool>) {
  const ArangeGeometry g = arange_geometry(0, end, 1, dtype, "aten::arange", device.value_or(kCPU));
  return make_tensor({g.numel}, g.dtype, kMeta);
}

Tensor arange_start_meta(const Scalar& start, const Scalar& end, std::optional<DType> dtype, std::optional<int64_t>,
                         std::optional<Device> device, std::optional<bool>) {
  const ArangeGeometry g = arange_geometry(start, end, 1, dtype, "aten::arange.start", device.value_or(kCPU));
  return make_tensor({g.numel}, g.dtype, kMeta);
}

Tensor arange_start_step_meta(const Scalar& start, const Scalar& end, const Scalar& step,
                              std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device> device,
                              std::optional<bool>) {
  const ArangeGeometry g =
      arange_geometry(start, end, step, dtype, "aten::arange.start_step", device.value_or(kCPU));
  return make_tensor({g.numel}, g.dtype, kMeta);
}

Tensor rand_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device>,
                 std::optional<bool>) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, "check_uniform_bounds", "aten::rand");
  return meta_factory(size, t, "aten::rand");
}

Tensor randn_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t>, std::optional<Device> device,
                  std::optional<bool>) {
  const DType t = dtype.value_or(kDefaultFloat);
  check_random_dtype(t, device_kernel_name("normal_kernel", device.value_or(kCPU)), "aten::randn");
  return meta_factory(size, t, "aten::randn");
}

Tensor empty_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                       std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_meta(self, dtype, device, memory_format, "aten::empty_like", {});
}

Tensor zeros_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                       std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_meta(self, dtype, device, memory_format, "aten::zeros_like", {});
}

Tensor ones_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  return like_meta(self, dtype, device, memory_format, "aten::ones_like", {});
}

Tensor full_like_meta(const Tensor& self, const Scalar& fill_value, std::optional<DType> dtype,
                      std::optional<int64_t>, std::optional<Device> device, std::optional<bool>,
                      std::optional<int64_t> memory_format) {
  return like_meta(self, dtype, device, memory_format, "aten::full_like", {Value(fill_value)});
}

Tensor rand_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                      std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  check_random_dtype(dtype.value_or(self.dtype()), "check_uniform_bounds", "aten::rand_like");
  return like_meta(self, dtype, device, memory_format, "aten::rand_like", {});
}

Tensor randn_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t>,
                       std::optional<Device> device, std::optional<bool>, std::optional<int64_t> memory_format) {
  check_random_dtype(dtype.value_or(self.dtype()), device_kernel_name("normal_kernel", device.value_or(self.device())),
                     "aten::randn_like");
  return like_meta(self, dtype, device, memory_format, "aten::randn_like", {});
}

Tensor fill_meta(const Tensor& self, const Scalar&) {
  self.impl()->bump_version();
  return self;
}

void check_fill_value(const Tensor& self, const Tensor& value) {
  OPSPEC_CHECK(value.dim() == 0, "aten::fill_: fill_ only supports 0-dimension value tensor but got tensor with ",
               value.dim(), " dimensions.");
  OPSPEC_CHECK(value.device() == self.device() || value.device().is_cpu(), "aten::fill_: expected value on ",
               self.device().str(), " (self's device) or the cpu, but value is on ", value.device().str());
}

Tensor fill_tensor_meta(const Tensor& self, const Tensor& value) {
  check_fill_value(self, value);
  self.impl()->bump_version();
  return self;
}

Tensor zero_meta(const Tensor& self) {
  self.impl()->bump_version();
  return self;
}

Tensor bernoulli_float_meta(const Tensor& self, double p, std::optional<int64_t> generator) {
  OPSPEC_CHECK(!generator.has_value(), "aten::bernoulli_.float: explicit generators are not supported; "
               "use manual_seed on the default generator");
  check_bernoulli_p(p, "aten::bernoulli_.float");
  check_no_internal_overlap(self, "aten::bernoulli_.float");
  self.impl()->bump_version();
  return self;
}

// Note [Dropout layout]
// native_dropout's output and mask take the input's layout (preserve_format:
// a dense input's strides, else its dims' order), on every device: PyTorch's
// CUDA kernel allocates both with empty_like (clone and ones_like in eval,
// zeros_like at p = 1), its CPU kernel empty_like's mask and input.mul(mask);
// torch 1.13 gives a transposed input's (1, 3) strides to both. So dropout on
// cuda (native_dropout) and on the CPU (input * noise) lay a result out alike.
std::tuple<Tensor, Tensor> native_dropout_meta(const Tensor& input, double p, std::optional<bool> train) {
  check_dropout_args(input, p, train);
  const SizeVec strides = preserve_strides(input);  // See Note [Dropout layout]
  return {make_tensor_with_strides(input.sizes(), strides, input.dtype(), kMeta),
          make_tensor_with_strides(input.sizes(), strides, DType::kBool, kMeta)};
}

Tensor cat_meta(TensorList tensors, int64_t dim) {
  const CatGeometry g = cat_geometry(tensors, dim, "aten::cat");
  return g.strides.empty() ? make_tensor(g.sizes, g.dtype, kMeta) : make_strided(g.sizes, g.strides, g.dtype, kMeta);
}

Tensor stack_meta(TensorList tensors, int64_t dim) {
  const std::vector<Tensor> inputs = stack_inputs(tensors, dim, "aten::stack");
  const CatGeometry g = stack_geometry(tensors, inputs, dim);
  return g.strides.empty() ? make_tensor(g.sizes, g.dtype, kMeta) : make_strided(g.sizes, g.strides, g.dtype, kMeta);
}

Scalar local_scalar_dense_meta(const Tensor&) {
  OPSPEC_FAIL("aten::_local_scalar_dense: Tensor.item() cannot be called on meta tensors");
}

}  // namespace opspec::internal
