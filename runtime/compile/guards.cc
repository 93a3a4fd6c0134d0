#include "runtime/compile/guards.h"

#include <algorithm>

#include "absl/strings/str_join.h"
#include "runtime/compile/controls.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

uint64_t dim_bit(const Tensor& t, int64_t dim, const char* what) {
  OPSPEC_CHECK(t.defined(), what, ": tensor is undefined");
  const int64_t d = wrap_dim(dim, t.dim(), what);
  OPSPEC_CHECK(d < 64, what, ": dims beyond 63 cannot be marked");
  return uint64_t{1} << d;
}

bool is_dynamic(uint64_t dims, int64_t d) { return d < 64 && ((dims >> d) & 1); }

// size_source: "L['x'].size()[0]".
std::string size_source(const TensorGuard& g, int64_t d) { return str_cat(g.source, ".size()[", d, "]"); }

}  // namespace

void mark_dynamic(const Tensor& t, int64_t dim) {
  internal::check_not_forbidden("mark_dynamic");  // PyTorch: "all calls to mark_dynamic must be made before torch.compile"
  const uint64_t bit = dim_bit(t, dim, "mark_dynamic");
  t.impl()->set_dim_marks(t.impl()->dynamic_dims() | bit, t.impl()->static_dims());
}

void mark_static(const Tensor& t, int64_t dim) {
  const uint64_t bit = dim_bit(t, dim, "mark_static");
  t.impl()->set_dim_marks(t.impl()->dynamic_dims(), t.impl()->static_dims() | bit);
}

TensorGuard TensorGuard::make(std::string name, std::string source, const Tensor& t, uint64_t dynamic_dims) {
  TensorGuard g;
  g.name = std::move(name);
  g.source = std::move(source);
  g.dtype = t.dtype();
  g.device = t.device();
  g.sizes = SizeVec(t.sizes().begin(), t.sizes().end());
  g.strides = SizeVec(t.strides().begin(), t.strides().end());
  g.contiguous = t.is_contiguous();
  for (int64_t d = 0; d < t.dim() && d < 64; ++d) {
    if (is_dynamic(dynamic_dims, d) && t.sizes()[d] >= 2) g.dynamic_dims |= uint64_t{1} << d;  // 0/1 specialization
  }
  return g;
}

std::optional<std::string> TensorGuard::failure(const Tensor& t) const {
  if (!t.defined()) return str_cat("tensor '", source, "' is undefined");
  if (t.dtype() != dtype) {
    return str_cat("tensor '", source, "' dtype mismatch. expected ", scalar_type_name(dtype), ", actual ",
                   scalar_type_name(t.dtype()));
  }
  if (t.device() != device) {
    return str_cat("tensor '", source, "' device mismatch. expected ", device.str(), ", actual ", t.device().str());
  }
  if (t.dim() != static_cast<int64_t>(sizes.size())) {
    return str_cat("tensor '", source, "' rank mismatch. expected ", sizes.size(), ", actual ", t.dim());
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (is_dynamic(dynamic_dims, d)) continue;
    if (t.sizes()[d] != sizes[d]) {
      return str_cat("tensor '", source, "' size mismatch at index ", d, ". expected ", sizes[d], ", actual ",
                     t.sizes()[d]);
    }
  }
  if (dynamic_dims != 0) {
    if (t.is_contiguous() != contiguous) {
      return str_cat("tensor '", source, "' contiguity mismatch. expected ",
                     contiguous ? "contiguous" : "non-contiguous");
    }
    return std::nullopt;
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (t.strides()[d] != strides[d]) {
      return str_cat("tensor '", source, "' stride mismatch at index ", d, ". expected ", strides[d], ", actual ",
                     t.strides()[d]);
    }
  }
  return std::nullopt;
}

GuardSet GuardSet::make(absl::Span<const Tensor> inputs, const std::vector<std::string>& names,
                        const std::vector<std::string>& sources, const std::vector<uint64_t>& dynamic_dims) {
  OPSPEC_INTERNAL_ASSERT(names.size() == inputs.size() && sources.size() == inputs.size() &&
                         dynamic_dims.size() == inputs.size());
  GuardSet set;
  for (size_t i = 0; i < inputs.size(); ++i) {
    set.tensors.push_back(TensorGuard::make(names[i], sources[i], inputs[i], dynamic_dims[i]));
    const TensorGuard& g = set.tensors.back();
    for (int64_t d = 0; d < static_cast<int64_t>(g.sizes.size()); ++d) {
      if (!is_dynamic(g.dynamic_dims, d)) continue;
      // Duck shaping: a dynamic dim of the same size as an earlier one is that symbol.
      auto same = std::find_if(set.symbols.begin(), set.symbols.end(),
                               [&](const ShapeSymbol& s) { return s.hint == g.sizes[d]; });
      if (same == set.symbols.end()) {
        set.symbols.push_back({str_cat("s", set.symbols.size()), g.sizes[d], {}});
        same = set.symbols.end() - 1;
      }
      same->uses.emplace_back(i, d);
    }
  }
  return set;
}

std::optional<std::string> GuardSet::first_failure(absl::Span<const Tensor> inputs) const {
  if (inputs.size() != tensors.size()) {
    return str_cat("graph input count mismatch. expected ", tensors.size(), ", actual ", inputs.size());
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    if (auto f = tensors[i].failure(inputs[i])) return f;
  }
  for (const ShapeSymbol& s : symbols) {
    const auto [i, d] = s.uses.front();
    const int64_t value = inputs[i].sizes()[d];
    if (value < 2) return str_cat("2 <= ", size_source(tensors[i], d));
    for (size_t k = 1; k < s.uses.size(); ++k) {
      const auto [j, e] = s.uses[k];
      if (inputs[j].sizes()[e] != value) {
        return str_cat(size_source(tensors[j], e), " == ", size_source(tensors[i], d));
      }
    }
  }
  return std::nullopt;
}

const std::string* GuardSet::symbol_of(size_t i, int64_t d) const {
  for (const ShapeSymbol& s : symbols) {
    for (const auto& [j, e] : s.uses) {
      if (j == i && e == d) return &s.name;
    }
  }
  return nullptr;
}

std::string GuardSet::summary() const {
  std::vector<std::string> lines;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorGuard& g = tensors[i];
    std::vector<std::string> dims;
    for (size_t d = 0; d < g.sizes.size(); ++d) {
      const std::string* sym = symbol_of(i, static_cast<int64_t>(d));
      dims.push_back(sym != nullptr ? *sym : str_cat(g.sizes[d]));
    }
    std::string s = str_cat("tensor '", g.name, "': ", dtype_short_name(g.dtype), "[", absl::StrJoin(dims, ", "), "]");
    if (g.dynamic_dims == 0) {
      str_append(&s, " stride ", format_sizes(g.strides));
    } else {
      str_append(&s, g.contiguous ? " contiguous" : " non-contiguous");
    }
    str_append(&s, " ", g.device.str());
    lines.push_back(std::move(s));
  }
  return absl::StrJoin(lines, "; ");
}

std::vector<std::string> GuardSet::code() const {
  std::vector<std::string> out;
  for (const TensorGuard& g : tensors) {
    std::vector<std::string> sizes, strides;
    // A stride depends on the sizes of the dims after it: None when one of them is symbolic.
    bool later_dynamic = false;
    for (int64_t d = static_cast<int64_t>(g.sizes.size()) - 1; d >= 0; --d) {
      strides.insert(strides.begin(), later_dynamic ? std::string("None") : str_cat(g.strides[d]));
      later_dynamic = later_dynamic || is_dynamic(g.dynamic_dims, d);
    }
    for (size_t d = 0; d < g.sizes.size(); ++d) {
      sizes.push_back(is_dynamic(g.dynamic_dims, static_cast<int64_t>(d)) ? std::string("None")
                                                                           : str_cat(g.sizes[d]));
    }
    out.push_back(str_cat("TENSOR_MATCH: check_tensor(", g.source, ", ", dtype_torch_name(g.dtype),
                          ", device=", g.device.str(), ", size=[", absl::StrJoin(sizes, ", "), "], stride=[",
                          absl::StrJoin(strides, ", "), "])"));
  }
  for (const ShapeSymbol& s : symbols) {
    const auto [i, d] = s.uses.front();
    out.push_back(str_cat("LAMBDA_GUARD: 2 <= ", size_source(tensors[i], d)));
    for (size_t k = 1; k < s.uses.size(); ++k) {
      const auto [j, e] = s.uses[k];
      out.push_back(str_cat("LAMBDA_GUARD: ", size_source(tensors[j], e), " == ", size_source(tensors[i], d)));
    }
  }
  return out;
}

}  // namespace opspec
