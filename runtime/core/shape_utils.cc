#include "runtime/core/shape_utils.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace opspec {

SizeVec broadcast_shapes(IntArrayRef a, IntArrayRef b, std::string_view op) {
  const size_t n = std::max(a.size(), b.size());
  SizeVec out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    OPSPEC_CHECK(da == db || da == 1 || db == 1, op, ": The size of tensor a (", da,
                 ") must match the size of tensor b (", db, ") at non-singleton dimension ", i,
                 " (shapes ", format_sizes(a), " and ", format_sizes(b), ")");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {
// PyTorch's combine_categories(higher, lower) without complex types.
std::optional<DType> combine(std::optional<DType> higher, std::optional<DType> lower) {
  if (!higher) return lower;
  if (!lower) return higher;
  if (is_floating(*higher)) return higher;
  if (*higher == DType::kBool || is_floating(*lower)) return promote_types(*higher, *lower);
  return higher;
}

void promote_into(std::optional<DType>& acc, DType t) { acc = acc ? promote_types(*acc, t) : t; }
}  // namespace

DType result_type(TensorList operands) {
  std::optional<DType> dim_result, zero_result, wrapped_result;
  for (const Tensor& t : operands) {
    if (!t.defined()) continue;
    if (t.is_wrapped_number()) {
      // A wrapped float promotes as the default dtype, a wrapped int as int64.
      DType d = t.dtype();
      if (is_floating(d)) d = kDefaultFloat;
      promote_into(wrapped_result, d);
    } else if (t.dim() == 0) {
      promote_into(zero_result, t.dtype());
    } else {
      promote_into(dim_result, t.dtype());
    }
  }
  // Categories decide first: a lower tier only wins with a higher category.
  auto result = combine(dim_result, combine(zero_result, wrapped_result));
  return result.value_or(kDefaultFloat);
}

DType result_type(const Tensor& t, const Scalar& s) {
  const Tensor w = internal::make_wrapped_number(s);
  const Tensor ops[] = {t, w};
  return result_type(ops);
}

Device check_same_device(TensorList tensors, std::string_view op) {
  std::optional<Device> device;
  const Tensor* first = nullptr;
  for (const Tensor& t : tensors) {
    if (!t.defined()) continue;
    const bool cpu_scalar = t.dim() == 0 && t.device().is_cpu();
    if (cpu_scalar) continue;
    if (!device) {
      device = t.device();
      first = &t;
    } else {
      OPSPEC_CHECK(*device == t.device(), op,
                   ": Expected all tensors to be on the same device, but found at least two devices, ",
                   device->str(), " and ", t.device().str(), "! (", first->meta_str(), " and ", t.meta_str(), ")");
    }
  }
  if (device) return *device;
  for (const Tensor& t : tensors) {
    if (t.defined()) return t.device();
  }
  return kCPU;
}

void check_normalized_shape(IntArrayRef input, IntArrayRef normalized_shape, const IntArrayRef* weight,
                            const IntArrayRef* bias, std::string_view op) {
  const int64_t nd = static_cast<int64_t>(normalized_shape.size());
  OPSPEC_CHECK(nd >= 1, op, ": Expected normalized_shape to be at least 1-dimensional, i.e., containing at least ",
               "one element, but got normalized_shape = ", format_sizes(normalized_shape));
  for (const auto& [what, sizes] : {std::pair{"weight", weight}, std::pair{"bias", bias}}) {
    OPSPEC_CHECK(sizes == nullptr || *sizes == normalized_shape, op, ": Expected ", what,
                 " to be of same shape as normalized_shape, but got ", what, " of shape ",
                 format_sizes(sizes != nullptr ? *sizes : IntArrayRef()), " and normalized_shape = ",
                 format_sizes(normalized_shape));
  }
  const int64_t in_nd = static_cast<int64_t>(input.size());
  if (in_nd < nd || input.subspan(static_cast<size_t>(in_nd - nd)) != normalized_shape) {
    std::string expected = "[*";
    for (int64_t s : normalized_shape) absl::StrAppend(&expected, ", ", s);
    OPSPEC_FAIL(op, ": Given normalized_shape=", format_sizes(normalized_shape), ", expected input with shape ",
                expected, "], but got input of size", format_sizes(input));
  }
}

SizeVec infer_size(IntArrayRef shape, int64_t numel, std::string_view op) {
  SizeVec out(shape.begin(), shape.end());
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      OPSPEC_CHECK(!infer, op, ": only one dimension can be inferred (shape ", format_sizes(shape), ")");
      infer = i;
    } else {
      OPSPEC_CHECK(shape[i] >= 0, op, ": invalid shape dimension ", shape[i], " in ", format_sizes(shape));
      // A product past int64 can equal no tensor's numel (a later 0 makes it 0).
      if (__builtin_mul_overflow(known, shape[i], &known)) {
        known = std::find(shape.begin(), shape.end(), 0) != shape.end() ? 0 : -1;
        OPSPEC_CHECK(known == 0, op, ": shape '", format_sizes(shape), "' is invalid for input of size ", numel);
      }
    }
  }
  if (infer) {
    OPSPEC_CHECK(known != 0 && numel % known == 0, op, ": shape '", format_sizes(shape),
                 "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  } else {
    OPSPEC_CHECK(known == numel, op, ": shape '", format_sizes(shape), "' is invalid for input of size ", numel);
  }
  return out;
}

std::optional<SizeVec> compute_view_strides(IntArrayRef oldshape, IntArrayRef oldstride, IntArrayRef newshape) {
  // Port of the algorithm in PyTorch's computeStride: walk chunks of old dims
  // that are contiguous among themselves and match them to new dims.
  SizeVec newstride(newshape.size());
  if (oldshape.empty()) {
    std::fill(newstride.begin(), newstride.end(), 1);
    return newstride;
  }
  const int64_t numel = compute_numel(oldshape);
  if (numel == 0 && std::equal(oldshape.begin(), oldshape.end(), newshape.begin(), newshape.end())) {
    return SizeVec(oldstride.begin(), oldstride.end());
  }
  if (numel == 0) {
    const SizeVec cs = contiguous_strides(newshape);
    return cs;
  }
  int64_t view_d = static_cast<int64_t>(newshape.size()) - 1;
  int64_t chunk_base_stride = oldstride.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t tensor_d = static_cast<int64_t>(oldshape.size()) - 1; tensor_d >= 0; --tensor_d) {
    tensor_numel *= oldshape[tensor_d];
    if (tensor_d == 0 || (oldshape[tensor_d - 1] != 1 && oldstride[tensor_d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || newshape[view_d] == 1)) {
        newstride[view_d] = view_numel * chunk_base_stride;
        view_numel *= newshape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (tensor_d > 0) {
        chunk_base_stride = oldstride[tensor_d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return newstride;
}

absl::InlinedVector<bool, 6> reduction_mask(std::optional<IntArrayRef> dims, int64_t ndim, std::string_view op) {
  absl::InlinedVector<bool, 6> mask(static_cast<size_t>(ndim), false);
  if (!dims || dims->empty()) {
    std::fill(mask.begin(), mask.end(), true);
    return mask;
  }
  for (int64_t d : *dims) {
    const int64_t w = wrap_dim(d, ndim, op);
    if (ndim == 0) continue;
    OPSPEC_CHECK(!mask[w], op, ": dim ", w, " appears multiple times in the list of dims");
    mask[w] = true;
  }
  return mask;
}

SizeVec reduced_shape(IntArrayRef sizes, absl::Span<const bool> mask, bool keepdim) {
  SizeVec out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!mask[d]) out.push_back(sizes[d]);
    else if (keepdim) out.push_back(1);
  }
  return out;
}

}  // namespace opspec
