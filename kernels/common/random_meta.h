// random_meta.h: the checks of randint, uniform_, normal_ and bernoulli
// (shared by their CPU, CUDA and Meta kernels), and their Meta kernels.
#pragma once

#include <optional>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec::internal {

// check_randint_range: low < high ("random_ expects 'from' to be less than
// 'to', but got from=5 >= to=5") and both within what dtype can hold
// exactly, as PyTorch's check_from_to_in_range.
void check_randint_range(int64_t low, int64_t high, DType dtype, std::string_view op);
// check_uniform_args: a floating self and from <= to.
void check_uniform_args(const Tensor& self, double from, double to, std::string_view op);
// check_normal_args: a floating self and std >= 0.
void check_normal_args(const Tensor& self, double std, std::string_view op);
// check_bernoulli_probs: bernoulli(self)'s self (the probabilities) is floating.
void check_bernoulli_probs(const Tensor& self, std::string_view op);
// check_no_generator: explicit generators are refused (one default generator).
void check_no_generator(std::optional<int64_t> generator, std::string_view op);

// ---- Meta kernels (checks, shapes and dtypes; no random offsets) ----
Tensor randint_meta(int64_t high, IntArrayRef size, std::optional<DType> dtype, std::optional<int64_t> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory);
Tensor randint_low_meta(int64_t low, int64_t high, IntArrayRef size, std::optional<DType> dtype,
                        std::optional<int64_t> layout, std::optional<Device> device, std::optional<bool> pin_memory);
Tensor uniform_meta(const Tensor& self, double from, double to, std::optional<int64_t> generator);
Tensor normal_meta(const Tensor& self, double mean, double std, std::optional<int64_t> generator);
Tensor bernoulli_meta(const Tensor& self, std::optional<int64_t> generator);
Tensor bernoulli_p_meta(const Tensor& self, double p, std::optional<int64_t> generator);

}  // namespace opspec::internal
