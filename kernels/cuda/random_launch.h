// random_launch.h: the launchers of the CUDA randint, uniform_, normal_ and
// bernoulli kernels (kernels/cuda/random.cu), called by kernels/cuda/factory.cc.
// Each writes n contiguous elements, element i from counter first + i with
// kernels/common/random_values.h, the CPU's functions (See Note [Random draws per dtype]).
#pragma once

#include <cstdint>

#include "kernels/cuda/launch.h"

namespace opspec::internal::cuda {

// launch_randint: out[i] = low + bits(first + i) mod range, any code.
void launch_randint(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, int64_t low, uint64_t range);
// launch_uniform: out[i] = from + (to - from) * u(first + i), a floating code.
void launch_uniform(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double from, double to);
// launch_normal: out[i] = mean + std * z(first + i), a floating code.
void launch_normal(Code code, void* out, int64_t n, uint64_t seed, uint64_t first, double mean, double std);
// launch_bernoulli_tensor: out[i] = u(first + i) < probs[i], probs contiguous of out's floating code.
void launch_bernoulli_tensor(Code code, const void* probs, void* out, int64_t n, uint64_t seed, uint64_t first);
// launch_check_probs: whether every one of the n contiguous probs is in [0, 1] (a synchronous read back).
bool launch_check_probs(Code code, const void* probs, int64_t n);

}  // namespace opspec::internal::cuda
