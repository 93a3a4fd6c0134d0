// scatter_launch.h: the launchers of kernels/cuda/scatter.cu (the scatters,
// index_put and the offset gathers of gather, index and masked_select) over
// raw device pointers, shared by scatter.cc (host side) and scatter.cu, in
// plain C++ types as launch.h's (See Note [Elementwise launches] in launch.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// launch_scatter_lines: for each of `lines` lines, in order along the line,
// target[target_off[l * len + j]] = combine(reduce, target[...], value_j),
// value_j being src[src_off[l * len + j]] (or the scalar whose storage bits
// are value_bits when src is null); reduce is kernels/common/scatter_meta.h's
// ScatterReduce as an int. Without include_self a line first sets its
// targets to the reduction's identity; count (when not null) counts the
// values each target received. One thread per line (See Note [Scatter lines]).
void launch_scatter_lines(Code code, int reduce, bool include_self, void* target, const void* src,
                          uint64_t value_bits, const int64_t* target_off, const int64_t* src_off, int64_t lines,
                          int64_t len, int64_t* count);

// launch_mean_finalize: target[i] = target[i] / max(count[i], 1) over n
// contiguous elements (floor division for integers), scatter_reduce's mean.
void launch_mean_finalize(Code code, void* target, const int64_t* count, bool include_self, int64_t n);

// launch_gather_offsets: out[i] = src[off[i]] for n elements of elem_size bytes (1, 2, 4 or 8).
void launch_gather_offsets(int elem_size, const void* src, const int64_t* off, void* out, int64_t n);

}  // namespace opspec::internal::cuda
