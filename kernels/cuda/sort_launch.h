// sort_launch.h: the launchers of kernels/cuda/sort.cu (prod, max/min,
// cumsum/cumprod, sort and topk) over raw device pointers, shared by sort.cc
// (host side) and sort.cu, in plain C++ types as launch.h's (See Note
// [Elementwise launches] in launch.h).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// Every launcher reads a contiguous x laid out [outer, len, inner] around
// the op's dim; row r = (o, i) is x[o * len * inner + k * inner + i] for k
// in [0, len). See Note [CUDA sort rows] in sort.cu.

// launch_prod_rows: out[r] = the product of row r in `code` (x and out both
// of `code`), accumulated as kernels/cpu/sort.cc does.
void launch_prod_rows(Code code, const void* x, void* out, int64_t outer, int64_t len, int64_t inner);

// launch_extremum_rows: values[r] = row r's max (min), NaN winning, and,
// unless null, indices[r] = the index of its first occurrence.
void launch_extremum_rows(Code code, bool max, const void* x, void* values, int64_t* indices, int64_t outer,
                          int64_t len, int64_t inner);

// launch_scan: out (laid out as x) = the running sum (product when prod) along each row.
void launch_scan(Code code, bool prod, const void* x, void* out, int64_t outer, int64_t len, int64_t inner);

// launch_sort_rows: the first k elements of each row's stable sort (NaN
// largest; descending or not) and their indices into values and indices,
// laid out [outer, k, inner]; scratch holds 2 * outer * inner * len int64s.
void launch_sort_rows(Code code, const void* x, void* values, int64_t* indices, int64_t* scratch, int64_t outer,
                      int64_t len, int64_t inner, int64_t k, bool descending);

}  // namespace opspec::internal::cuda
