// make_tensor.h: torch.testing.make_tensor for opspec: random test inputs of
// any shape, dtype and device in one call.
#pragma once

#include <optional>

#include "runtime/core/tensor.h"

namespace opspec::testing {

// MakeTensorOptions: make_tensor's keyword arguments, as torch.testing names them.
struct MakeTensorOptions {
  // low, high: the values' range [low, high). Defaults as torch.testing's:
  // [-9, 9) for floating dtypes, [-9, 10) for integers (whole numbers); bool
  // ignores them. Clamped to what the dtype holds.
  std::optional<double> low, high;
  // noncontiguous: every other element of a twice-as-wide tensor along the
  // last dim (when the tensor has more than one element), as torch.testing does.
  bool noncontiguous = false;
  // requires_grad: the result is a leaf that requires grad (floating dtypes
  // only; boolean and integral ones are an error, as torch.testing's).
  bool requires_grad = false;
};

// make_tensor: a tensor of shape, dtype and device with values drawn from the
// global generator (manual_seed makes them repeatable), e.g.
// `make_tensor({2, 3}, DType::kFloat32, kCPU, {.low = 0, .high = 1, .noncontiguous = true})`.
// Throws naming the argument when low >= high or a bound is not finite.
Tensor make_tensor(IntArrayRef shape, DType dtype, Device device = kCPU, const MakeTensorOptions& options = {});

}  // namespace opspec::testing
