// indexing.cc: CPU kernels of index_select, embedding,
// embedding_dense_backward, tril, triu, argmax and argmin.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "kernels/common/nn_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;


// read_indices: index as int64 values, each checked against [0, n)
// (PyTorch's "index out of range in self"; negative indices are errors too).
std::vector<int64_t> read_indices(const Tensor& index, int64_t n, std::string_view op) {
  const Tensor idx = contiguous_cpu(index, DType::kInt64);
  const auto* p = static_cast<const int64_t*>(idx.raw_data());
  std::vector<int64_t> out(p, p + idx.numel());
  for (const int64_t i : out) {
    OPSPEC_CHECK(i >= 0 && i < n, op, ": index out of range in self (index ", i, ", size ", n, ")");
  }
  return out;
}

// gather_rows: out[o, j, :] = self[o, idx[j], :] over a contiguous self of
// [outer, n, inner] elements of elem bytes; whole rows are memcpy'd.
void gather_rows(const Tensor& self, const std::vector<int64_t>& idx, int64_t outer, int64_t n, int64_t inner,
                 Tensor& out) {
  const Tensor src = contiguous_cpu(self);
  const auto elem = element_size(self.dtype());
  const auto* s = static_cast<const char*>(src.raw_data());
  auto* d = static_cast<char*>(out.raw_data());
  const auto k = static_cast<int64_t>(idx.size());
  const int64_t row = inner * elem;
  parallel_rows(outer * k, out.numel() >= kParallelGrain, [&](int64_t r) {
    const int64_t o = r / k, j = r % k;
    std::memcpy(d + r * row, s + (o * n + idx[static_cast<size_t>(j)]) * row, static_cast<size_t>(row));
  });
}

// triangle: keeps element (i, j) of each matrix where keep(j - i) holds, zero elsewhere.
template <class Keep>
Tensor triangle(const Tensor& self, int64_t diagonal, std::string_view name, Keep keep) {
  check_triangle_input(self, name);
  require_cpu_device(self.device(), str_cat("aten::", name));
  Tensor out = make_tensor(self.sizes(), self.dtype(), kCPU);
  if (out.numel() == 0) return out;
  const Tensor src = contiguous_cpu(self);
  const int64_t rows = self.size(-2), cols = self.size(-1);
  const int64_t mats = self.numel() / (rows * cols);
  // j - i lies in [-rows, cols]; a diagonal beyond keeps or drops every row alike, and i + diagonal cannot overflow.
  diagonal = std::clamp(diagonal, -rows - 1, cols + 1);
  const auto elem = element_size(self.dtype());
  const auto* s = static_cast<const char*>(src.raw_data());
  auto* d = static_cast<char*>(out.raw_data());
  parallel_rows(mats * rows, out.numel() >= kParallelGrain, [&](int64_t r) {
    const int64_t i = r % rows;
    const char* sr = s + r * cols * elem;
    char* dr = d + r * cols * elem;
    // Kept columns form one run [lo, hi): tril keeps j <= i + diagonal, triu j >= i + diagonal.
    int64_t lo = 0, hi = cols;
    keep(i, diagonal, cols, &lo, &hi);
    std::memset(dr, 0, static_cast<size_t>(cols * elem));
    if (lo < hi) std::memcpy(dr + lo * elem, sr + lo * elem, static_cast<size_t>((hi - lo) * elem));
  });
  return out;
}

// ArgBetter: whether candidate v beats the best so far b (first index wins
// ties; NaN beats everything and the first NaN stays, as PyTorch).
template <bool kMax, class C>
bool arg_better(C v, C b) {
  if (std::isnan(b)) return false;
  if (std::isnan(v)) return true;
  return kMax ? v > b : v < b;
}

template <bool kMax>
Tensor arg_reduce(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::string_view name) {
  const std::string op = str_cat("aten::", name);
  require_cpu_device(self.device(), op);
  OPSPEC_CHECK(self.dtype() != DType::kBool, op, ": \"", name, "_cpu\" not implemented for 'Bool'");
  Tensor out = make_tensor(arg_reduction_shape(self, dim, keepdim, name), DType::kInt64, kCPU);
  // [outer, n, inner] around the reduced dim (all of self when dim is None).
  int64_t outer = 1, n = self.numel(), inner = 1;
  if (dim && self.dim() > 0) {
    const int64_t d = wrap_dim(*dim, self.dim(), op);
    n = self.size(d);
    for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
    for (int64_t i = d + 1; i < self.dim(); ++i) inner *= self.size(i);
  }
  auto* o = out.data_ptr<int64_t>();
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    const Tensor src = contiguous_cpu(self);
    const auto* s = static_cast<const scalar_t*>(src.raw_data());
    using C = opmath_t<scalar_t>;
    parallel_rows(outer * inner, self.numel() >= kParallelGrain, [&](int64_t r) {
      const int64_t a = r / inner, c = r % inner;
      const scalar_t* p = s + a * n * inner + c;
      int64_t best = 0;
      C bv = load(p[0]);
      for (int64_t k = 1; k < n; ++k) {
        const C v = load(p[k * inner]);
        if constexpr (std::is_floating_point_v<C>) {
          if (arg_better<kMax>(v, bv)) bv = v, best = k;
        } else if (kMax ? v > bv : v < bv) {
          bv = v, best = k;
        }
      }
      o[r] = best;
    });
  });
  return out;
}

}  // namespace

Tensor index_select_cpu(const Tensor& self, int64_t dim, const Tensor& index) {
  constexpr std::string_view kOp = "aten::index_select";
  require_cpu_device(self.device(), kOp);
  int64_t d = 0;
  const SizeVec sizes = index_select_shape(self, dim, index, &d);
  Tensor out = make_tensor(sizes, self.dtype(), kCPU);
  const int64_t n = self.dim() == 0 ? 1 : self.size(d);
  const std::vector<int64_t> idx = read_indices(index, n, kOp);
  if (out.numel() == 0) return out;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < d; ++i) outer *= self.size(i);
  for (int64_t i = d + 1; i < self.dim(); ++i) inner *= self.size(i);
  gather_rows(self, idx, outer, n, inner, out);
  return out;
}

// embedding: weight.index_select(0, indices.reshape(-1)).view(indices.sizes() + [D]) in one kernel.
Tensor embedding_cpu(const Tensor& weight, const Tensor& indices, int64_t, bool, bool) {
  constexpr std::string_view kOp = "aten::embedding";
  require_cpu_device(weight.device(), kOp);
  Tensor out = make_tensor(embedding_shape(weight, indices), weight.dtype(), kCPU);
  const std::vector<int64_t> idx = read_indices(indices, weight.size(0), kOp);
  if (out.numel() == 0) return out;
  gather_rows(weight, idx, 1, weight.size(0), weight.size(1), out);
  return out;
}

// embedding_dense_backward: grad_weight[k] += grad[i] (scaled by 1 / count(k)
// with scale_grad_by_freq) for every i with indices[i] == k != padding_idx,
// in i order as PyTorch's CPU kernel; rows are split over threads by k, so
// every row's sum has the same order whatever the thread count.
Tensor embedding_dense_backward_cpu(const Tensor& grad_output, const Tensor& indices, int64_t num_weights,
                                    int64_t padding_idx, bool scale_grad_by_freq) {
  constexpr std::string_view kOp = "aten::embedding_dense_backward";
  require_cpu_device(grad_output.device(), kOp);
  Tensor meta = embedding_dense_backward_meta(grad_output, indices, num_weights, padding_idx, scale_grad_by_freq);
  const int64_t width = meta.size(1);
  Tensor out = make_tensor(meta.sizes(), grad_output.dtype(), kCPU);
  const std::vector<int64_t> idx = read_indices(indices, num_weights, kOp);
  // Nothing to write (a zero width or no weights): the per-row tables below
  // would be num_weights long for nothing (2^40 rows of width 0 is a valid call).
  if (out.numel() == 0) return out;
  std::vector<int64_t> counts;
  if (scale_grad_by_freq) {
    counts.assign(static_cast<size_t>(num_weights), 0);
    for (const int64_t k : idx) ++counts[static_cast<size_t>(k)];
  }
  // Rows of the result that any index names, and for each, which grad rows feed it.
  std::vector<std::vector<int64_t>> feeds(static_cast<size_t>(num_weights));
  for (size_t i = 0; i < idx.size(); ++i) {
    if (idx[i] != padding_idx) feeds[static_cast<size_t>(idx[i])].push_back(static_cast<int64_t>(i));
  }
  OPSPEC_DISPATCH_FLOATING_DTYPES(grad_output.dtype(), kOp, [&] {
    using C = opmath_t<scalar_t>;
    const Tensor g = contiguous_cpu(grad_output);
    const auto* gp = static_cast<const scalar_t*>(g.raw_data());
    auto* op = out.data_ptr<scalar_t>();
    parallel_rows(num_weights, out.numel() + g.numel() >= kParallelGrain, [&](int64_t k) {
      std::vector<C> acc(static_cast<size_t>(width), C(0));
      const auto& rows = feeds[static_cast<size_t>(k)];
      const C scale = scale_grad_by_freq && !rows.empty() ? C(1) / static_cast<C>(counts[static_cast<size_t>(k)])
                                                          : C(1);
      for (const int64_t i : rows) {
        const scalar_t* gr = gp + i * width;
        for (int64_t c = 0; c < width; ++c) acc[static_cast<size_t>(c)] += load(gr[c]) * scale;
      }
      for (int64_t c = 0; c < width; ++c) store(op + k * width + c, acc[static_cast<size_t>(c)]);
    });
  });
  return out;
}

Tensor tril_cpu(const Tensor& self, int64_t diagonal) {
  return triangle(self, diagonal, "tril", [](int64_t i, int64_t dg, int64_t cols, int64_t* lo, int64_t* hi) {
    *lo = 0;
    *hi = std::min(cols, std::max<int64_t>(0, i + dg + 1));
  });
}

Tensor triu_cpu(const Tensor& self, int64_t diagonal) {
  return triangle(self, diagonal, "triu", [](int64_t i, int64_t dg, int64_t cols, int64_t* lo, int64_t* hi) {
    *lo = std::min(cols, std::max<int64_t>(0, i + dg));
    *hi = cols;
  });
}

Tensor argmax_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce<true>(self, dim, keepdim, "argmax");
}

Tensor argmin_cpu(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  return arg_reduce<false>(self, dim, keepdim, "argmin");
}

}  // namespace opspec::internal
