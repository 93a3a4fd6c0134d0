// stats_launch.h: the launchers of kernels/cuda/stats.cu (var/std/var_mean,
// logsumexp, any/all, mse_loss and its backward) over raw device pointers,
// shared by stats.cc (host side) and stats.cu, in plain C++ types as
// launch.h's (See Note [Elementwise launches] in launch.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// The row launchers read a contiguous x of `rows` runs of `len` elements
// (stats.cc lays the reduced dims out innermost, as kernels/cpu/stats.cc
// does) and write one value per row to a contiguous out. See Note [CUDA
// statistics] in stats.cu for the summation order.

// launch_moments: per row of floating `code`, the mean and the variance
// ss / max(0, len - correction), both accumulated in double; writes the
// variance (its square root when take_sqrt) to var and, unless null, the
// mean to mean, both of `code`. A row of len 0 has mean NaN.
void launch_moments(Code code, const void* x, int64_t rows, int64_t len, double correction, bool take_sqrt, void* var,
                    void* mean);

// launch_logsumexp: per row of floating `code`, max + log(sum(exp(x - max)))
// in the compute type, an infinite max taken as 0 (kernels/cpu/stats.cc).
void launch_logsumexp(Code code, const void* x, void* out, int64_t rows, int64_t len);

// launch_any_all: per row of any `code`, whether some (any) or every (all)
// element is nonzero (NaN is nonzero), as one b8 each.
void launch_any_all(Code code, bool any, const void* x, bool* out, int64_t rows, int64_t len);

// launch_mse: out[i] = (a[i] - b[i])^2 in the compute type, over n
// contiguous elements of floating `code`.
void launch_mse(Code code, const void* a, const void* b, void* out, int64_t n);

// launch_mse_backward: out[i] = norm * (a[i] - b[i]) * grad[j] in the
// compute type, j = 0 when grad_broadcast (a reduced loss's one gradient),
// else i; every operand contiguous of floating `code`.
void launch_mse_backward(Code code, const void* a, const void* b, const void* grad, bool grad_broadcast, double norm,
                         void* out, int64_t n);

}  // namespace opspec::internal::cuda
