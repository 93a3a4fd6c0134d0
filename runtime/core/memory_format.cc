// memory_format.cc: c10's layout predicates and TensorIterator's output
// strides, ported rule for rule. See Note [Memory formats].

#include "runtime/core/memory_format.h"

#include <algorithm>
#include <numeric>

#include "absl/container/inlined_vector.h"
#include "runtime/core/error.h"

namespace opspec {
namespace {

using DimOrder = absl::InlinedVector<int64_t, 6>;

// The dims of a channels-last layout, innermost first.
constexpr int64_t kChannelsLast2dOrder[] = {1, 3, 2, 0};
constexpr int64_t kChannelsLast3dOrder[] = {1, 4, 3, 2, 0};

absl::Span<const int64_t> channels_last_order(MemoryFormat format) {
  if (format == MemoryFormat::kChannelsLast) return kChannelsLast2dOrder;
  return kChannelsLast3dOrder;
}

int64_t channels_last_rank(MemoryFormat format) { return format == MemoryFormat::kChannelsLast ? 4 : 5; }

// compute_non_overlapping_and_dense: c10's sort of the dims of size >= 2 by
// stride, each then the product of the sizes inside it.
bool compute_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  if (ndim == 1) return sizes[0] < 2 || strides[0] == 1;
  DimOrder perm(ndim);
  std::iota(perm.begin(), perm.end(), 0);
  std::sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
    if (sizes[a] < 2) return false;
    if (sizes[b] < 2) return true;
    return strides[a] < strides[b];
  });
  int64_t require = 1;
  for (int64_t d : perm) {
    if (sizes[d] < 2) return true;
    if (strides[d] != require) return false;
    require *= sizes[d];
  }
  return true;
}

// permuted_dense_strides: dense strides for dims ordered by perm (innermost
// first). TensorIterator's compatible_stride multiplies by every size, so a
// size-0 dim zeroes the strides outside it; infer_dense_strides counts sizes
// 0 and 1 as 1 (skip_trivial).
SizeVec permuted_dense_strides(IntArrayRef sizes, absl::Span<const int64_t> perm, bool skip_trivial) {
  SizeVec out(sizes.size());
  int64_t stride = 1;
  for (int64_t d : perm) {
    out[static_cast<size_t>(d)] = stride;
    if (!skip_trivial || sizes[d] > 1) stride *= sizes[d];
  }
  return out;
}

// ShouldSwap: -1 when dim0 belongs inside dim1, 1 when outside, 0 when undecided.
template <class ShouldSwap>
void insertion_sort_dims(DimOrder& perm, ShouldSwap should_swap) {
  // PyTorch's insertion sort, which may compare non-adjacent entries after an
  // undecided comparison; kept as written so ties resolve as they do there.
  for (size_t i = 1; i < perm.size(); ++i) {
    size_t dim1 = i;
    for (size_t j = 1; j <= i; ++j) {
      const size_t dim0 = i - j;
      const int c = should_swap(perm[dim0], perm[dim1]);
      if (c > 0) {
        std::swap(perm[dim0], perm[dim1]);
        dim1 = dim0;
      } else if (c < 0) {
        break;
      }
    }
  }
}

// reversed_dims: n-1, ..., 1, 0 (the row-major order, innermost first).
DimOrder reversed_dims(size_t n) {
  DimOrder perm(n);
  for (size_t i = 0; i < n; ++i) perm[i] = static_cast<int64_t>(n - 1 - i);
  return perm;
}

bool is_reversed(const DimOrder& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(perm.size() - 1 - i)) return false;
  }
  return true;
}

}  // namespace

std::string_view memory_format_name(MemoryFormat format) {
  switch (format) {
    case MemoryFormat::kContiguous: return "torch.contiguous_format";
    case MemoryFormat::kPreserve: return "torch.preserve_format";
    case MemoryFormat::kChannelsLast: return "torch.channels_last";
    case MemoryFormat::kChannelsLast3d: return "torch.channels_last_3d";
  }
  return "torch.contiguous_format";
}

std::optional<MemoryFormat> memory_format_from_int(int64_t value) {
  if (value < 0 || value > 3) return std::nullopt;
  return static_cast<MemoryFormat>(value);
}

std::optional<MemoryFormat> to_memory_format(std::optional<int64_t> value, std::string_view op) {
  if (!value) return std::nullopt;
  const std::optional<MemoryFormat> f = memory_format_from_int(*value);
  OPSPEC_CHECK(f.has_value(), op, ": ", *value, " is not a memory format (expected 0 to 3: ",
               "torch.contiguous_format, torch.preserve_format, torch.channels_last, torch.channels_last_3d)");
  return f;
}

bool is_contiguous_as(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format) {
  switch (format) {
    case MemoryFormat::kContiguous: return is_contiguous_strides(sizes, strides);
    case MemoryFormat::kPreserve: return false;
    case MemoryFormat::kChannelsLast:
    case MemoryFormat::kChannelsLast3d: {
      if (static_cast<int64_t>(sizes.size()) != channels_last_rank(format)) return false;
      int64_t expected = 1;
      for (int64_t d : channels_last_order(format)) {
        if (sizes[d] == 1) continue;
        if (strides[d] != expected) return false;
        expected *= sizes[d];
      }
      return true;
    }
  }
  return false;
}

bool is_contiguous(const Tensor& t, MemoryFormat format) {
  if (format == MemoryFormat::kContiguous) return t.is_contiguous();
  return is_contiguous_as(t.sizes(), t.strides(), format);
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  return is_contiguous_strides(sizes, strides) || is_contiguous_as(sizes, strides, MemoryFormat::kChannelsLast) ||
         is_contiguous_as(sizes, strides, MemoryFormat::kChannelsLast3d) ||
         compute_non_overlapping_and_dense(sizes, strides);
}

bool is_non_overlapping_and_dense(const Tensor& t) {
  return t.is_contiguous() || is_non_overlapping_and_dense(t.sizes(), t.strides());
}

bool is_channels_last_strides(IntArrayRef sizes, IntArrayRef strides, MemoryFormat format) {
  if (format != MemoryFormat::kChannelsLast && format != MemoryFormat::kChannelsLast3d) return false;
  if (static_cast<int64_t>(sizes.size()) != channels_last_rank(format)) return false;
  if (strides[1] == 0) return false;  // a broadcast C: NCHW by default
  int64_t min = 0;
  for (int64_t d : channels_last_order(format)) {
    if (sizes[d] == 0 || strides[d] < min) return false;
    // N111 (or N11W sliced to N111) with equal strides is ambiguous: NCHW.
    if (d == 0 && min == strides[1]) return false;
    min = strides[d];
    if (sizes[d] > 1) min *= sizes[d];
  }
  return true;
}

MemoryFormat suggest_memory_format(IntArrayRef sizes, IntArrayRef strides) {
  if (is_channels_last_strides(sizes, strides, MemoryFormat::kChannelsLast)) return MemoryFormat::kChannelsLast;
  if (is_channels_last_strides(sizes, strides, MemoryFormat::kChannelsLast3d)) return MemoryFormat::kChannelsLast3d;
  return MemoryFormat::kContiguous;
}

MemoryFormat suggest_memory_format(const Tensor& t) { return suggest_memory_format(t.sizes(), t.strides()); }

SizeVec strides_for(IntArrayRef sizes, MemoryFormat format, std::string_view op) {
  switch (format) {
    case MemoryFormat::kContiguous: return contiguous_strides(sizes);
    case MemoryFormat::kPreserve: OPSPEC_FAIL(op, ": unsupported memory format Preserve");
    case MemoryFormat::kChannelsLast:
    case MemoryFormat::kChannelsLast3d: {
      const int64_t rank = channels_last_rank(format);
      OPSPEC_CHECK(static_cast<int64_t>(sizes.size()) == rank, op, ": required rank ", rank, " tensor to use ",
                   format == MemoryFormat::kChannelsLast ? "channels_last" : "channels_last_3d", " format");
      return permuted_dense_strides(sizes, channels_last_order(format), /*skip_trivial=*/false);
    }
  }
  return contiguous_strides(sizes);
}

SizeVec infer_dense_strides(IntArrayRef sizes, IntArrayRef strides) {
  const size_t ndim = sizes.size();
  if (ndim == 0) return {};
  if (ndim == 1) return SizeVec{1};
  DimOrder perm = reversed_dims(ndim);
  insertion_sort_dims(perm, [&](int64_t d0, int64_t d1) {
    const int64_t s0 = strides[d0], s1 = strides[d1];
    if (s0 == 0 || s1 == 0) return 0;  // a broadcast dim keeps its row-major place
    if (s0 != s1) return s0 < s1 ? -1 : 1;
    return sizes[d0] > sizes[d1] ? 1 : 0;
  });
  return permuted_dense_strides(sizes, perm, /*skip_trivial=*/true);
}

SizeVec preserve_strides(const Tensor& t) {
  if (is_non_overlapping_and_dense(t)) return SizeVec(t.strides().begin(), t.strides().end());
  return infer_dense_strides(t.sizes(), t.strides());
}

SizeVec like_strides(const Tensor& t, std::optional<MemoryFormat> format, std::string_view op) {
  if (!format || *format == MemoryFormat::kPreserve) return preserve_strides(t);
  return strides_for(t.sizes(), *format, op);
}

SizeVec elementwise_output_strides(IntArrayRef shape, TensorList inputs) {
  absl::InlinedVector<const Tensor*, 4> ptrs;
  for (const Tensor& t : inputs) ptrs.push_back(&t);
  return elementwise_output_strides(shape, ptrs);
}

SizeVec elementwise_output_strides(IntArrayRef shape, absl::Span<const Tensor* const> inputs) {
  // Fast set-up: inputs all of one shape, all contiguous, all channels-last,
  // or all dense with equal strides keep that layout.
  bool same_shape = true, contiguous = true, channels_last = true, dense = true;
  const Tensor* last = nullptr;
  for (const Tensor* p : inputs) {
    const Tensor& t = *p;
    if (!t.defined()) continue;
    if (last != nullptr && t.sizes() != last->sizes()) same_shape = false;
    last = &t;
    contiguous &= t.is_contiguous();
  }
  if (last == nullptr || (same_shape && contiguous)) return {};
  if (same_shape) {
    for (const Tensor* p : inputs) {
      const Tensor& t = *p;
      if (!t.defined()) continue;
      channels_last &= is_contiguous_as(t.sizes(), t.strides(), MemoryFormat::kChannelsLast);
      dense &= is_non_overlapping_and_dense(t) && t.strides() == last->strides();
    }
    if (channels_last) return strides_for(shape, MemoryFormat::kChannelsLast, "elementwise");
    if (dense) return SizeVec(last->strides().begin(), last->strides().end());
  }
  // Sorted set-up: each input's strides over the broadcast shape (0 where it
  // broadcasts), dims sorted by them with the first input deciding.
  const size_t ndim = shape.size();
  if (ndim <= 1) return {};
  // The first input with dims decides every comparison strictly when it spans
  // the shape contiguously with no size-1 dim (the common tensor-and-number
  // case): the row-major order then, without sorting.
  for (const Tensor* p : inputs) {
    if (!p->defined() || p->dim() == 0) continue;
    if (p->sizes() == shape && p->is_contiguous() &&
        std::all_of(shape.begin(), shape.end(), [](int64_t s) { return s >= 2; })) {
      return {};
    }
    break;
  }
  absl::InlinedVector<SizeVec, 3> strides;
  for (const Tensor* p : inputs) {
    const Tensor& t = *p;
    if (!t.defined()) continue;
    SizeVec s(ndim, 0);
    const size_t offset = ndim - static_cast<size_t>(t.dim());
    for (size_t i = 0; i < static_cast<size_t>(t.dim()); ++i) {
      const bool broadcast = t.sizes()[i] == 1 && shape[offset + i] != 1;
      s[offset + i] = broadcast ? 0 : t.strides()[i];
    }
    strides.push_back(std::move(s));
  }
  DimOrder perm = reversed_dims(ndim);
  insertion_sort_dims(perm, [&](int64_t d0, int64_t d1) {
    for (const SizeVec& s : strides) {
      const int64_t s0 = s[d0], s1 = s[d1];
      if (s0 == 0 || s1 == 0) continue;  // broadcast here: the next input decides
      if (s0 != s1) return s0 < s1 ? -1 : 1;
      if (shape[d0] > shape[d1]) return 1;  // equal strides: only a larger inner size swaps
    }
    return 0;
  });
  if (is_reversed(perm)) return {};
  return permuted_dense_strides(shape, perm, /*skip_trivial=*/false);
}

}  // namespace opspec
