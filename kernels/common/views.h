// views.h: the view ops' kernels. They only compute new geometry (sizes,
// strides, storage offset) and wrap self's storage with make_alias_view,
// so one kernel serves every device. See Note [Device-independent views].
#pragma once

#include <optional>

#include "runtime/core/tensor.h"

namespace opspec {
class Library;
}  // namespace opspec

namespace opspec::internal {

// Note [Device-independent views]
// A view never touches data: it is a new TensorImpl over the same Storage.
// The kernels below are therefore registered unchanged at the CPU and Meta
// keys (and the CUDA backend registers the same functions at CUDA), which
// keeps shape rules and error messages identical across devices.

// view_kernel: aten::view; one -1 is inferred; fails when the requested shape
// cannot be expressed with strides over self's layout.
Tensor view_kernel(const Tensor& self, IntArrayRef size);
// unsafe_view_kernel: aten::_unsafe_view, the same geometry as view.
Tensor unsafe_view_kernel(const Tensor& self, IntArrayRef size);
// as_strided_kernel: aten::as_strided; checks the view stays inside the storage.
Tensor as_strided_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                         std::optional<int64_t> storage_offset);
// as_strided_inplace_kernel: aten::as_strided_; restrides self's own TensorImpl
// with as_strided's checks (adaptive_avg_pool2d's channels-last [1, 1] result).
Tensor as_strided_inplace_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride,
                                 std::optional<int64_t> storage_offset);
// permute_kernel: aten::permute; dims must be a permutation of self's dims.
Tensor permute_kernel(const Tensor& self, IntArrayRef dims);
// t_kernel: aten::t; transposes a 2-D tensor, returns 0-D and 1-D ones as they are.
Tensor t_kernel(const Tensor& self);
// transpose_kernel: aten::transpose.int.
Tensor transpose_kernel(const Tensor& self, int64_t dim0, int64_t dim1);
// expand_kernel: aten::expand; -1 keeps a dim, broadcast dims get stride 0.
Tensor expand_kernel(const Tensor& self, IntArrayRef size, bool implicit);
// unsqueeze_kernel: aten::unsqueeze; dim in [-(ndim + 1), ndim].
Tensor unsqueeze_kernel(const Tensor& self, int64_t dim);
// squeeze_kernel: aten::squeeze; drops every size-1 dim.
Tensor squeeze_kernel(const Tensor& self);
// squeeze_dim_kernel: aten::squeeze.dim; drops dim only when its size is 1.
Tensor squeeze_dim_kernel(const Tensor& self, int64_t dim);
// squeeze_inplace_dim_kernel: aten::squeeze_.dim; restrides self's own TensorImpl.
Tensor squeeze_inplace_dim_kernel(const Tensor& self, int64_t dim);
// t_inplace_kernel, transpose_inplace_kernel, unsqueeze_inplace_kernel:
// aten::t_, aten::transpose_, aten::unsqueeze_; restride self's own TensorImpl.
Tensor t_inplace_kernel(const Tensor& self);
Tensor transpose_inplace_kernel(const Tensor& self, int64_t dim0, int64_t dim1);
Tensor unsqueeze_inplace_kernel(const Tensor& self, int64_t dim);
// slice_kernel: aten::slice.Tensor with Python slicing rules (wrap, clamp).
Tensor slice_kernel(const Tensor& self, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
                    int64_t step);
// select_kernel: aten::select.int; negative indices count from the end.
Tensor select_kernel(const Tensor& self, int64_t dim, int64_t index);
// lift_fresh_kernel: aten::lift_fresh: self, the same tensor (PyTorch's
// CompositeExplicitAutograd kernel); lift_fresh_copy_kernel: aten::clone of self.
Tensor lift_fresh_kernel(const Tensor& self);
Tensor lift_fresh_copy_kernel(const Tensor& self);
// alias_kernel: aten::alias, a view with self's geometry. detach_kernel:
// aten::detach, the same geometry but not a view op's result (no view_base:
// writing into it is not writing into a view, as PyTorch's non-differentiable
// views; the Autograd key never records it).
Tensor alias_kernel(const Tensor& self);
Tensor detach_kernel(const Tensor& self);

// new_empty_strided_kernel: aten::new_empty_strided, uninitialised data laid
// out by stride on self's dtype and device unless given (autograd's
// AccumulateGrad makes .grad with it). Device-independent like the views.
Tensor new_empty_strided_kernel(const Tensor& self, IntArrayRef size, IntArrayRef stride, std::optional<DType> dtype,
                                std::optional<int64_t> layout, std::optional<Device> device,
                                std::optional<bool> pin_memory);

// register_view_kernels_at: every view kernel above at one backend key (CPU
// and Meta at start-up, CUDA when the backend is built).
void register_view_kernels_at(Library& lib, DispatchKey key);

}  // namespace opspec::internal
