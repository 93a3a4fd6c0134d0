// cuda_copy.h: copies of cuda tensors (converting dtype, broadcasting, any
// strides) and between host and device, the primitives every CUDA kernel
// family uses, like kernels/cpu/copy.h on the CPU. No dispatch.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec::internal::cuda {

// device_copy: dst[...] = src[...] converted to dst's dtype, src broadcast to
// dst's shape; both on the same cuda device, dst any strided view. A src
// that partially overlaps dst is copied aside first. src may also be a
// one-element cpu tensor (a scalar).
void device_copy(const Tensor& dst, const Tensor& src);

// contiguous_cuda: src itself if contiguous with `dtype` (src's when nullopt),
// else a new contiguous copy on src's device.
Tensor contiguous_cuda(const Tensor& src, std::optional<DType> dtype = std::nullopt);

// copy_between: dst = src for any pair of cpu and cuda tensors (cpu <-> cuda, cpu <-> cpu,
// cuda:i <-> cuda:j, or cuda <-> cuda on one device), with dtype conversion
// and broadcasting, as copy_ does.
void copy_between(const Tensor& dst, const Tensor& src);

// compute_dtype: the compute type of the row kernels (normalizations,
// attention, convolutions): f64 for f64, f32 otherwise, as on the CPU.
inline DType compute_dtype(DType dt) { return dt == DType::kFloat64 ? DType::kFloat64 : DType::kFloat32; }

// op_device: the usable cuda device of an op's tensors (the shared checks
// have made them one device, a 0-dim cpu tensor aside).
Device op_device(TensorList tensors, std::string_view op);

// on_device: t contiguous with dtype on dev; a tensor elsewhere (a 0-dim cpu
// tensor joining the op) is copied over.
Tensor on_device(const Tensor& t, DType dtype, Device dev);

}  // namespace opspec::internal::cuda
