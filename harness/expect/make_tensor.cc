// make_tensor.cc: torch.testing.make_tensor.
#include "harness/expect/make_tensor.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace opspec::testing {
namespace {

// dtype_range: the finite values dtype holds, as doubles.
std::pair<double, double> dtype_range(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return {-65504.0, 65504.0};
    case DType::kBFloat16:
    case DType::kFloat32: return {-static_cast<double>(std::numeric_limits<float>::max()),
                                  static_cast<double>(std::numeric_limits<float>::max())};
    case DType::kInt32: return {std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case DType::kInt64: return {-9.2e18, 9.2e18};
    case DType::kBool: return {0, 1};
    case DType::kFloat64: break;
  }
  return {std::numeric_limits<double>::lowest(), std::numeric_limits<double>::max()};
}

}  // namespace

Tensor make_tensor(IntArrayRef shape, DType dtype, Device device, const MakeTensorOptions& options) {
  OPSPEC_CHECK(!options.requires_grad || is_floating(dtype),  // torch.testing's words
               "make_tensor: `requires_grad=True` is not supported for boolean and integral dtypes! (got ",
               dtype_short_name(dtype), ")");
  const bool integral = !is_floating(dtype) && dtype != DType::kBool;
  const auto [lo_limit, hi_limit] = dtype_range(dtype);
  double low = options.low.value_or(-9.0), high = options.high.value_or(integral ? 10.0 : 9.0);
  OPSPEC_CHECK(std::isfinite(low) && std::isfinite(high), "make_tensor: low and high must be finite, got low=", low,
               ", high=", high);
  OPSPEC_CHECK(low < high, "make_tensor: low must be less than high, got low=", low, ", high=", high);
  low = std::clamp(low, lo_limit, hi_limit), high = std::clamp(high, lo_limit, hi_limit);
  // Twice as wide along the last dim, then every other element: same values, strided.
  SizeVec sizes(shape.begin(), shape.end());
  const bool strided = options.noncontiguous && compute_numel(shape) > 1;
  if (strided) sizes.back() *= 2;
  // Uniform draws from the global generator, mapped on the host so every dtype
  // gets exactly representable values in range.
  const std::vector<double> u = ops::rand(sizes, {.dtype = DType::kFloat64}).to_vector<double>();
  std::vector<double> values(u.size());
  for (size_t i = 0; i < u.size(); ++i) {
    if (dtype == DType::kBool) {
      values[i] = u[i] < 0.5 ? 0 : 1;
    } else if (integral) {
      values[i] = std::min(std::floor(low + (high - low) * u[i]), std::ceil(high) - 1);
    } else {
      values[i] = low + (high - low) * u[i];
    }
  }
  Tensor t = ops::tensor(values, sizes, dtype);
  if (strided) t = ops::slice(t, -1, 0, std::nullopt, 2);
  if (!device.is_cpu()) t = ops::to(t, device);
  if (options.requires_grad) t.requires_grad_();  // a leaf: nothing above required grad
  return t;
}

}  // namespace opspec::testing
