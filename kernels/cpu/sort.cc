// sort.cc: CPU kernels of prod (and .dim_int), max/min (full and .dim),
// cumsum/cumprod, sort (and .stable) and topk, and the registration of
// these ops' CPU and Meta kernels. Every kernel reads a contiguous copy of
// self as [outer, len, inner] around its dim (See Note [Sort rows]).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <type_traits>
#include <vector>

#include "kernels/common/layout_format.h"
#include "kernels/common/sort_meta.h"
#include "kernels/cpu/copy.h"
#include "kernels/cpu/loops.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/dispatch/library.h"

namespace opspec::internal {

namespace {

using loops_detail::load;
using loops_detail::store;


// Note [Sort rows]
// Each output row (one per [outer, inner] pair) reads the `len` elements
// p[k * inner] of a contiguous copy of self, in k order: reductions and scans
// accumulate in element order, so results never depend on the thread count.
// Floating sums and products accumulate in double (float for f16/bf16), as
// PyTorch's CPU acc_type; integer ones in uint64 (wrapping as int64 does).

// acc_t: the accumulation type of prod/cumsum/cumprod on storage type T.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                 std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>>;

template <class C>
bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return std::isnan(v);
  else return false;
}

// to_acc / from_acc: an element into the accumulator and back (integers through int64).
template <class A, class T>
A to_acc(T v) {
  if constexpr (std::is_same_v<A, uint64_t>) return static_cast<uint64_t>(static_cast<int64_t>(load(v)));
  else return static_cast<A>(load(v));
}
template <class T, class A>
void store_acc(T* p, A a) {
  if constexpr (std::is_same_v<A, uint64_t>) store(p, static_cast<int64_t>(a));
  else store(p, a);
}

// Rows: a contiguous copy of self (converted to dtype when given) as [outer, len, inner].
struct Rows {
  Tensor data;
  DimGeometry g;
  int64_t rows() const { return g.outer * g.inner; }
  // first: the offset of row r's first element; its k-th is at first + k * g.inner.
  int64_t first(int64_t r) const { return (r / g.inner) * g.len * g.inner + r % g.inner; }
};

Rows rows_of(const Tensor& self, const DimGeometry& g, std::optional<DType> dtype = std::nullopt) {
  Rows r;
  r.data = contiguous_cpu(self, dtype);
  r.g = g;
  return r;
}

// ---- prod ----

Tensor prod_impl(const Tensor& self, std::optional<int64_t> dim, bool keepdim, std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::prod";
  require_cpu_device(self.device(), kOp);
  const ReductionGeometry rg = prod_geometry(self, dim, keepdim);
  const DType out_dtype = sum_result_dtype(self.dtype(), dtype);
  Tensor out = make_tensor(rg.out_sizes, out_dtype, kCPU);
  if (out.numel() == 0) return out;
  // The product runs over out_dtype's values (PyTorch converts the input first).
  DimGeometry g;
  if (dim && self.dim() > 0) {
    g = dim_geometry(self, *dim, kOp);
  } else {
    g.len = self.numel();
  }
  const Rows r = rows_of(self, g, out_dtype);
  OPSPEC_DISPATCH_ALL_DTYPES(out_dtype, kOp, [&] {
    using A = acc_t<scalar_t>;
    const auto* s = static_cast<const scalar_t*>(r.data.raw_data());
    auto* o = out.data_ptr<scalar_t>();
    parallel_rows(r.rows(), self.numel() >= kParallelGrain, [&](int64_t i) {
      const scalar_t* p = s + r.first(i);
      A acc = A(1);
      for (int64_t k = 0; k < g.len; ++k) acc = acc * to_acc<A>(p[k * g.inner]);
      store_acc(o + i, acc);
    });
  });
  return out;
}

// ---- max / min ----

// better: whether v beats the best so far b: NaN beats everything and the
// first NaN stays; ties keep the first index, as PyTorch.
template <bool kMax, class C>
bool better(C v, C b) {
  if (is_nan(b)) return false;
  if (is_nan(v)) return true;
  return kMax ? v > b : v < b;
}

// extremum_rows: per row, the best value and its index along g's dim.
template <bool kMax>
void extremum_rows(const Tensor& self, const DimGeometry& g, const Tensor& values, int64_t* indices,
                   std::string_view op) {
  const Rows r = rows_of(self, g);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    const auto* s = static_cast<const scalar_t*>(r.data.raw_data());
    auto* v = values.data_ptr<scalar_t>();
    parallel_rows(r.rows(), self.numel() >= kParallelGrain, [&](int64_t i) {
      const scalar_t* p = s + r.first(i);
      int64_t best = 0;
      auto bv = load(p[0]);
      for (int64_t k = 1; k < g.len; ++k) {
        const auto x = load(p[k * g.inner]);
        if (better<kMax>(x, bv)) bv = x, best = k;
      }
      v[i] = p[best * g.inner];
      if (indices != nullptr) indices[i] = best;
    });
  });
}

template <bool kMax>
Tensor extremum_all(const Tensor& self) {
  const std::string_view name = kMax ? "max" : "min";
  const std::string op = str_cat("aten::", name);
  require_cpu_device(self.device(), op);
  const ReductionGeometry rg = extremum_geometry(self, std::nullopt, false, name);
  Tensor out = make_tensor(rg.out_sizes, self.dtype(), kCPU);
  DimGeometry g;
  g.len = self.numel();
  extremum_rows<kMax>(self, g, out, nullptr, op);
  return out;
}

template <bool kMax>
std::tuple<Tensor, Tensor> extremum_dim(const Tensor& self, int64_t dim, bool keepdim) {
  const std::string_view name = kMax ? "max" : "min";
  const std::string op = str_cat("aten::", name);
  require_cpu_device(self.device(), op);
  const ReductionGeometry rg = extremum_geometry(self, dim, keepdim, name);
  Tensor values = make_tensor(rg.out_sizes, self.dtype(), kCPU);
  Tensor indices = make_tensor(rg.out_sizes, DType::kInt64, kCPU);
  if (values.numel() > 0) {
    extremum_rows<kMax>(self, dim_geometry(self, dim, op), values, indices.data_ptr<int64_t>(), op);
  }
  return {values, indices};
}

// ---- cumsum / cumprod ----

template <bool kProd>
Tensor scan(const Tensor& self, int64_t dim, std::optional<DType> dtype, std::string_view op) {
  require_cpu_device(self.device(), op);
  const DimGeometry g = dim_geometry(self, dim, op);
  const DType out_dtype = scan_result_dtype(self.dtype(), dtype);
  Tensor out = make_tensor(self.sizes(), out_dtype, kCPU);
  if (out.numel() == 0) return out;
  const Rows r = rows_of(self, g, out_dtype);
  OPSPEC_DISPATCH_ALL_DTYPES(out_dtype, op, [&] {
    using A = acc_t<scalar_t>;
    const auto* s = static_cast<const scalar_t*>(r.data.raw_data());
    auto* o = out.data_ptr<scalar_t>();
    parallel_rows(r.rows(), self.numel() >= kParallelGrain, [&](int64_t i) {
      const int64_t f = r.first(i);
      A acc = kProd ? A(1) : A(0);
      for (int64_t k = 0; k < g.len; ++k) {
        const A x = to_acc<A>(s[f + k * g.inner]);
        acc = kProd ? acc * x : acc + x;
        store_acc(o + f + k * g.inner, acc);
      }
    });
  });
  return out;
}

// ---- sort / topk ----

// sorted_order: idx = 0..n-1 stably ordered by the values x (NaN largest),
// ascending or descending; equal elements keep their input order.
template <class C>
void sorted_order(const std::vector<C>& x, bool descending, std::vector<int64_t>& idx) {
  idx.resize(x.size());
  std::iota(idx.begin(), idx.end(), int64_t{0});
  auto at = [&](int64_t i) { return x[static_cast<size_t>(i)]; };
  if (descending) {
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
      const C va = at(a), vb = at(b);
      return (is_nan(va) && !is_nan(vb)) || va > vb;
    });
  } else {
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t a, int64_t b) {
      const C va = at(a), vb = at(b);
      return (!is_nan(va) && is_nan(vb)) || va < vb;
    });
  }
}

// sort_rows: the first k of each row's stable order into values and indices ([outer, k, inner]).
void sort_rows(const Tensor& self, const DimGeometry& g, int64_t k, bool descending, const Tensor& values,
               const Tensor& indices, std::string_view op) {
  const Rows r = rows_of(self, g);
  auto* ip = indices.data_ptr<int64_t>();
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    using C = decltype(load(std::declval<scalar_t>()));
    const auto* s = static_cast<const scalar_t*>(r.data.raw_data());
    auto* vp = values.data_ptr<scalar_t>();
    struct Scratch {
      std::vector<C> x;
      std::vector<int64_t> idx;
    };
    parallel_rows_with(r.rows(), self.numel() >= kParallelGrain, [] { return Scratch{}; },
                       [&](int64_t i, Scratch& sc) {
                         const scalar_t* p = s + r.first(i);
                         sc.x.resize(static_cast<size_t>(g.len));
                         for (int64_t j = 0; j < g.len; ++j) sc.x[static_cast<size_t>(j)] = load(p[j * g.inner]);
                         sorted_order(sc.x, descending, sc.idx);
                         const int64_t of = (i / g.inner) * k * g.inner + i % g.inner;
                         for (int64_t j = 0; j < k; ++j) {
                           const int64_t src = sc.idx[static_cast<size_t>(j)];
                           vp[of + j * g.inner] = p[src * g.inner];
                           ip[of + j * g.inner] = src;
                         }
                       });
  });
}

std::tuple<Tensor, Tensor> sort_impl(const Tensor& self, int64_t dim, bool descending) {
  constexpr std::string_view kOp = "aten::sort";
  require_cpu_device(self.device(), kOp);
  const DimGeometry g = dim_geometry(self, dim, kOp);
  Tensor values = make_tensor(self.sizes(), self.dtype(), kCPU);
  Tensor indices = make_tensor(self.sizes(), DType::kInt64, kCPU);
  if (values.numel() > 0) sort_rows(self, g, g.len, descending, values, indices, kOp);
  // Results take self's layout (PyTorch 2.x's sort.stable meta); rows are sorted row-major first.
  const SizeVec strides = preserve_strides(self);
  return {with_strides(values, strides, copy_into), with_strides(indices, strides, copy_into)};
}

}  // namespace

Tensor prod_cpu(const Tensor& self, std::optional<DType> dtype) { return prod_impl(self, std::nullopt, false, dtype); }
Tensor prod_dim_int_cpu(const Tensor& self, int64_t dim, bool keepdim, std::optional<DType> dtype) {
  return prod_impl(self, dim, keepdim, dtype);
}

Tensor max_cpu(const Tensor& self) { return extremum_all<true>(self); }
Tensor min_cpu(const Tensor& self) { return extremum_all<false>(self); }
std::tuple<Tensor, Tensor> max_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<true>(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min_dim_cpu(const Tensor& self, int64_t dim, bool keepdim) {
  return extremum_dim<false>(self, dim, keepdim);
}

Tensor cumsum_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan<false>(self, dim, dtype, "aten::cumsum");
}
Tensor cumprod_cpu(const Tensor& self, int64_t dim, std::optional<DType> dtype) {
  return scan<true>(self, dim, dtype, "aten::cumprod");
}

// sort: always stable (an unstable sort may order ties any way; See Note [Sort rows]).
std::tuple<Tensor, Tensor> sort_cpu(const Tensor& self, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending);
}
std::tuple<Tensor, Tensor> sort_stable_cpu(const Tensor& self, std::optional<bool>, int64_t dim, bool descending) {
  return sort_impl(self, dim, descending);
}

// topk: the first k of the stable sort (largest: descending), so ties come in
// index order and sorted=false gives the same (sorted) order.
std::tuple<Tensor, Tensor> topk_cpu(const Tensor& self, int64_t k, int64_t dim, bool largest, bool) {
  constexpr std::string_view kOp = "aten::topk";
  require_cpu_device(self.device(), kOp);
  const DimGeometry g = dim_geometry(self, dim, kOp);
  check_topk_k(self, k, g);
  OPSPEC_CHECK(self.dtype() != DType::kBool, kOp, ": \"topk_cpu\" not implemented for 'Bool'");
  const SizeVec sizes = topk_sizes(self, k, g);
  Tensor values = make_tensor(sizes, self.dtype(), kCPU);
  Tensor indices = make_tensor(sizes, DType::kInt64, kCPU);
  // A 0-D tensor is its own top element whatever k (PyTorch's topk_out_cpu).
  const int64_t take = self.dim() == 0 ? 1 : k;
  if (values.numel() > 0) sort_rows(self, g, take, largest, values, indices, kOp);
  return {values, indices};
}

void register_sort_kernels(Dispatcher& d) {
  Library lib("aten", d);
  lib.impl("prod", DispatchKey::kCPU, &prod_cpu)
      .impl("prod", DispatchKey::kMeta, &prod_meta)
      .impl("prod.dim_int", DispatchKey::kCPU, &prod_dim_int_cpu)
      .impl("prod.dim_int", DispatchKey::kMeta, &prod_dim_int_meta)
      .impl("max", DispatchKey::kCPU, &max_cpu)
      .impl("max", DispatchKey::kMeta, &max_meta)
      .impl("min", DispatchKey::kCPU, &min_cpu)
      .impl("min", DispatchKey::kMeta, &min_meta)
      .impl("max.dim", DispatchKey::kCPU, &max_dim_cpu)
      .impl("max.dim", DispatchKey::kMeta, &max_dim_meta)
      .impl("min.dim", DispatchKey::kCPU, &min_dim_cpu)
      .impl("min.dim", DispatchKey::kMeta, &min_dim_meta)
      .impl("cumsum", DispatchKey::kCPU, &cumsum_cpu)
      .impl("cumsum", DispatchKey::kMeta, &cumsum_meta)
      .impl("cumprod", DispatchKey::kCPU, &cumprod_cpu)
      .impl("cumprod", DispatchKey::kMeta, &cumprod_meta)
      .impl("sort", DispatchKey::kCPU, &sort_cpu)
      .impl("sort", DispatchKey::kMeta, &sort_meta)
      .impl("sort.stable", DispatchKey::kCPU, &sort_stable_cpu)
      .impl("sort.stable", DispatchKey::kMeta, &sort_stable_meta)
      .impl("topk", DispatchKey::kCPU, &topk_cpu)
      .impl("topk", DispatchKey::kMeta, &topk_meta);
}

}  // namespace opspec::internal
