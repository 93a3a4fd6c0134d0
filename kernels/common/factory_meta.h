// factory_meta.h: shape and dtype rules of the factory, random, fill and join
// ops (shared by their CPU and Meta kernels), and the Meta kernels themselves.
#pragma once

#include <optional>
#include <string_view>
#include <tuple>

#include "runtime/core/tensor.h"
#include "runtime/dispatch/value.h"

namespace opspec::internal {

// ---- Shape and dtype rules ----

// check_factory_size: every size >= 0 ("Trying to create tensor with negative dimension -1: [-1, 2]").
void check_factory_size(IntArrayRef size, std::string_view op);
// full_dtype: dtype, else inferred from the fill value (bool -> b8, int -> i64, float -> f32).
DType full_dtype(const Scalar& fill_value, std::optional<DType> dtype);
// ArangeGeometry: the element count and dtype of an arange call.
struct ArangeGeometry {
  int64_t numel;
  DType dtype;
};
// arange_geometry: i64 when start, end and step are all integral, else f32;
// size = ceil((end - start) / step) as PyTorch computes it for that dtype.
// device: where the result goes, which names the refusing kernel ("arange_cuda").
ArangeGeometry arange_geometry(const Scalar& start, const Scalar& end, const Scalar& step,
                               std::optional<DType> dtype, std::string_view op, Device device = kCPU);

// device_kernel_name: PyTorch's name of a kernel on device ("normal_kernel" on
// cuda is "normal_kernel_cuda"), as its dtype errors say it.
std::string device_kernel_name(std::string_view base, Device device);

// check_random_dtype: rand/randn only fill floating dtypes; kernel_name is
// PyTorch's ("\"normal_kernel_cpu\" not implemented for 'Long'").
void check_random_dtype(DType dtype, std::string_view kernel_name, std::string_view op);
// check_bernoulli_p: p in [0, 1].
void check_bernoulli_p(double p, std::string_view op);
// check_dropout_args: in training, p in [0, 1] and a floating input (the output is scaled).
void check_dropout_args(const Tensor& input, double p, std::optional<bool> train);

// CatGeometry: the result of cat: sizes, promoted dtype, device, wrapped dim.
struct CatGeometry {
  SizeVec sizes;
  DType dtype;
  Device device;
  int64_t dim;
  SizeVec strides;  // empty: row-major; else channels-last (See cat_geometry)
};
// cat_geometry: PyTorch's cat checks; legacy 1-D empty tensors ([0]) are skipped.
// The result is channels-last (or _3d) when every input suggests that format
// (PyTorch's cat_compute_output_memory_format), else row-major.
CatGeometry cat_geometry(TensorList tensors, int64_t dim, std::string_view op);
// is_skipped_in_cat: a legacy empty tensor of shape [0] that cat ignores.
inline bool is_skipped_in_cat(const Tensor& t) { return t.dim() == 1 && t.sizes()[0] == 0; }
// stack_geometry: the geometry of stack(tensors, dim) as cat of inputs (the
// tensors unsqueezed by stack_inputs). Below the last dim PyTorch's stack is
// cat(tensors, dim).view(...), so the result has the layout cat gives the
// tensors themselves, viewed (a channels-last pair stacks channels-last).
CatGeometry stack_geometry(TensorList tensors, TensorList inputs, int64_t dim);
// stack_inputs: checks stack's inputs and returns them unsqueezed at the wrapped dim (cat's inputs).
std::vector<Tensor> stack_inputs(TensorList tensors, int64_t dim, std::string_view op);

// ---- Layouts of fresh tensors (See Note [Memory formats]) ----

// factory_strides: the strides of a new tensor of size in the schema's
// memory_format int (contiguous when none); PyTorch's errors for a rank that
// does not fit the format and for preserve_format, prefixed with op.
SizeVec factory_strides(IntArrayRef size, std::optional<int64_t> memory_format, std::string_view op);
// like_result_strides: the strides of a *_like, clone or _to_copy result of
// self: self's layout for none or preserve_format (like_strides), else the format's.
SizeVec like_result_strides(const Tensor& self, std::optional<int64_t> memory_format, std::string_view op);

// like_on_device: runs the *_like op like_op (e.g. "aten::zeros_like") on self,
// the extra positional arguments, dtype, device and memory_format straight at
// device's backend key; a *_like kernel uses it when the requested device is
// not its own, so the target's kernel lays out and fills the result. Modes do
// not see this inner call.
Tensor like_on_device(std::string_view like_op, const Tensor& self, std::vector<Value> extra, DType dtype,
                      Device device, std::optional<int64_t> memory_format);

// ---- Meta kernels (shapes and dtypes only; no data, no random offsets) ----

Tensor empty_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory,
                  std::optional<int64_t> memory_format);
Tensor empty_strided_meta(IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype,
                          std::optional<int64_t> layout, std::optional<Device> device,
                          std::optional<bool> pin_memory);
// new_zeros_meta: zeros' Meta kernel for aten::new_zeros (self's dtype unless given).
Tensor new_zeros_meta(const Tensor& self, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory);
Tensor zeros_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory);
Tensor ones_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                 std::optional<Device> device, std::optional<bool> pin_memory);
Tensor full_meta(IntArrayRef size, const Scalar& fill_value, std::optional<DType> dtype,
                 std::optional<int64_t> layout, std::optional<Device> device, std::optional<bool> pin_memory);
Tensor scalar_tensor_meta(const Scalar& s, std::optional<DType> dtype, std::optional<int64_t> layout,
                          std::optional<Device> device, std::optional<bool> pin_memory);
Tensor arange_meta(const Scalar& end, std::optional<DType> dtype, std::optional<int64_t> layout,
                   std::optional<Device> device, std::optional<bool> pin_memory);
Tensor arange_start_meta(const Scalar& start, const Scalar& end, std::optional<DType> dtype,
                         std::optional<int64_t> layout, std::optional<Device> device,
                         std::optional<bool> pin_memory);
Tensor arange_start_step_meta(const Scalar& start, const Scalar& end, const Scalar& step,
                              std::optional<DType> dtype, std::optional<int64_t> layout,
                              std::optional<Device> device, std::optional<bool> pin_memory);
Tensor rand_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                 std::optional<Device> device, std::optional<bool> pin_memory);
Tensor randn_meta(IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                  std::optional<Device> device, std::optional<bool> pin_memory);
// *_like on a meta self: a meta result laid out as like_result_strides says, or
// the same op on another device's kernel when one is given (like_on_device).
Tensor empty_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                       std::optional<Device> device, std::optional<bool> pin_memory,
                       std::optional<int64_t> memory_format);
Tensor zeros_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                       std::optional<Device> device, std::optional<bool> pin_memory,
                       std::optional<int64_t> memory_format);
Tensor ones_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory,
                      std::optional<int64_t> memory_format);
Tensor full_like_meta(const Tensor& self, const Scalar& fill_value, std::optional<DType> dtype,
                      std::optional<int64_t> layout, std::optional<Device> device, std::optional<bool> pin_memory,
                      std::optional<int64_t> memory_format);
Tensor rand_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                      std::optional<Device> device, std::optional<bool> pin_memory,
                      std::optional<int64_t> memory_format);
Tensor randn_like_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                       std::optional<Device> device, std::optional<bool> pin_memory,
                       std::optional<int64_t> memory_format);
// In-place ops on meta tensors: checks, a version bump, self.
Tensor fill_meta(const Tensor& self, const Scalar& value);
// check_fill_value: fill_.Tensor's value is 0-dim (PyTorch's text) and on
// self's device or the CPU (read as value.item()).
void check_fill_value(const Tensor& self, const Tensor& value);
Tensor fill_tensor_meta(const Tensor& self, const Tensor& value);
Tensor zero_meta(const Tensor& self);
Tensor bernoulli_float_meta(const Tensor& self, double p, std::optional<int64_t> generator);
std::tuple<Tensor, Tensor> native_dropout_meta(const Tensor& input, double p, std::optional<bool> train);
Tensor cat_meta(TensorList tensors, int64_t dim);
Tensor stack_meta(TensorList tensors, int64_t dim);
// local_scalar_dense_meta: always throws (meta tensors hold no values).
Scalar local_scalar_dense_meta(const Tensor& self);

}  // namespace opspec::internal
