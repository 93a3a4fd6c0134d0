#include "runtime/compile/guards.h"

#include "absl/strings/str_join.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

uint64_t dim_bit(const Tensor& t, int64_t dim, const char* what) {
  OPSPEC_CHECK(t.defined(), what, ": tensor is undefined");
  const int64_t d = wrap_dim(dim, t.dim(), what);
  OPSPEC_CHECK(d < 64, what, ": dims beyond 63 cannot be marked");
  return uint64_t{1} << d;
}

}  // namespace

void mark_dynamic(const Tensor& t, int64_t dim) {
  const uint64_t bit = dim_bit(t, dim, "mark_dynamic");
  t.impl()->set_dim_marks(t.impl()->dynamic_dims() | bit, t.impl()->static_dims());
}

void mark_static(const Tensor& t, int64_t dim) {
  const uint64_t bit = dim_bit(t, dim, "mark_static");
  t.impl()->set_dim_marks(t.impl()->dynamic_dims(), t.impl()->static_dims() | bit);
}

TensorGuard TensorGuard::make(std::string name, const Tensor& t, bool all_dynamic) {
  TensorGuard g;
  g.name = std::move(name);
  g.dtype = t.dtype();
  g.device = t.device();
  g.sizes = SizeVec(t.sizes().begin(), t.sizes().end());
  g.strides = SizeVec(t.strides().begin(), t.strides().end());
  g.contiguous = t.is_contiguous();
  const uint64_t all = t.dim() >= 64 ? ~uint64_t{0} : (uint64_t{1} << t.dim()) - 1;
  g.dynamic_dims = t.impl()->dynamic_dims() & all;
  if (all_dynamic) g.dynamic_dims |= all & ~t.impl()->static_dims();
  return g;
}

std::optional<std::string> TensorGuard::failure(const Tensor& t) const {
  if (!t.defined()) return str_cat("tensor '", name, "' is undefined");
  if (t.dtype() != dtype) {
    return str_cat("tensor '", name, "' dtype mismatch. expected ", scalar_type_name(dtype), ", actual ",
                   scalar_type_name(t.dtype()));
  }
  if (t.device() != device) {
    return str_cat("tensor '", name, "' device mismatch. expected ", device.str(), ", actual ", t.device().str());
  }
  if (t.dim() != static_cast<int64_t>(sizes.size())) {
    return str_cat("tensor '", name, "' rank mismatch. expected ", sizes.size(), ", actual ", t.dim());
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if ((dynamic_dims >> d) & 1) continue;
    if (t.sizes()[d] != sizes[d]) {
      return str_cat("tensor '", name, "' size mismatch at index ", d, ". expected ", sizes[d], ", actual ",
                     t.sizes()[d]);
    }
  }
  if (dynamic_dims != 0) {
    if (t.is_contiguous() != contiguous) {
      return str_cat("tensor '", name, "' contiguity mismatch. expected ", contiguous ? "contiguous" : "non-contiguous");
    }
    return std::nullopt;
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] != strides[d]) {
      return str_cat("tensor '", name, "' stride mismatch at index ", d, ". expected ", strides[d], ", actual ",
                     t.strides()[d]);
    }
  }
  return std::nullopt;
}

std::string TensorGuard::str() const {
  std::vector<std::string> dims;
  for (size_t d = 0; d < sizes.size(); ++d) {
    dims.push_back(((dynamic_dims >> d) & 1) ? str_cat("s", d) : str_cat(sizes[d]));
  }
  std::string s = str_cat("tensor '", name, "': ", dtype_short_name(dtype), "[", absl::StrJoin(dims, ", "), "]");
  if (dynamic_dims == 0) {
    str_append(&s, " stride ", format_sizes(strides));
  } else {
    str_append(&s, contiguous ? " contiguous" : " non-contiguous");
  }
  str_append(&s, " ", device.str());
  return s;
}

std::optional<std::string> GuardSet::first_failure(absl::Span<const Tensor> inputs) const {
  if (inputs.size() != tensors.size()) {
    return str_cat("graph input count mismatch. expected ", tensors.size(), ", actual ", inputs.size());
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (auto f = tensors[i].failure(inputs[i])) return f;
  }
  return std::nullopt;
}

bool GuardSet::has_dynamic_dims() const {
  for (const TensorGuard& g : tensors) {
    if (g.dynamic_dims != 0) return true;
  }
  return false;
}

}  // namespace opspec
