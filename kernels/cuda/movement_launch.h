// movement_launch.h: the launchers of kernels/cuda/movement.cu (gathers by a
// plan, upsample_nearest2d's backward, group norm and its backward) over raw
// device pointers, shared by movement.cc (host side) and movement.cu, in plain
// C++ types as launch.h's (See Note [Elementwise launches] in launch.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// launch_plan_gather: the `numel` elements (elem_size bytes: 1, 2, 4 or 8) of
// a contiguous out from src by a GatherPlan (kernels/common/movement_meta.h)
// laid out on the device as [sizes (ndim), offsets (ndim), table...]; entries
// equal to pad_entry take the bytes of fill_bits.
void launch_plan_gather(int elem_size, const void* src, void* out, const int64_t* plan, int ndim, int64_t numel,
                        int64_t pad_entry, uint64_t fill_bits);

// launch_upsample_nearest2d_backward: out[p, y, x] = the sum, in raster order
// and the compute type, of grad[p, a, b] over a in [rh[2y], rh[2y + 1]) and
// b in [rw[2x], rw[2x + 1]), for `planes` contiguous planes of a floating code.
void launch_upsample_nearest2d_backward(Code code, const void* grad, void* out, const int64_t* rh,
                                        const int64_t* rw, int64_t planes, int64_t ih, int64_t iw, int64_t oh,
                                        int64_t ow);

// launch_group_norm: y, mean and rstd (compute type: f64 for f64, else f32)
// of a contiguous [n, c, hxw] x of a floating code in `group` groups; w and b
// (compute type, c values) may be null (ones and zeros).
void launch_group_norm(Code code, const void* x, void* y, void* mean, void* rstd, const void* w, const void* b,
                       int64_t n, int64_t c, int64_t hxw, int64_t group, double eps);

// launch_group_norm_backward: dx (may be null), dw and db (compute type, c
// values; always written) of native_group_norm_backward from contiguous dy and
// x, mean and rstd (compute type, n * group), w (compute type or null);
// scratch holds 2 * n * c + 2 * n * group compute values.
void launch_group_norm_backward(Code code, const void* dy, const void* x, const void* mean, const void* rstd,
                                const void* w, void* dx, void* dw, void* db, void* scratch, int64_t n, int64_t c,
                                int64_t hxw, int64_t group);

}  // namespace opspec::internal::cuda
