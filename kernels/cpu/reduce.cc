// reduce.cc: CPU kernels of sum, mean, amax, amin and linalg_vector_norm, all
// running on one strided reduction engine (run_reduction).
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "kernels/common/reduce_plan.h"
#include "kernels/cpu/copy.h"
#include "kernels/common/reduce_meta.h"
#include "kernels/cpu/parallel_rows.h"
#include "runtime/core/parallel.h"

namespace opspec::internal {

namespace {

// Note [Reduction engine]
// A reduction is described by a Reducer R with in_t (element type read),
// acc_t (accumulator), out_t (element type written) and identity(), step(acc,
// x), combine(acc, acc), project(acc). run_reduction drops size-1 dims, splits
// the input dims into kept dims (in output order; the output is contiguous
// over them) and reduced dims (sorted by stride, so any permutation of a
// contiguous tensor reduces as one contiguous run), coalesces each list, then
// picks one of two loops:
//  - rows (all-reduce, inner reduction, and anything without a better
//    layout): each output reduces its rows with kLanes independent
//    accumulators over leaves of kBlock elements, combined pairwise, which
//    keeps the rounding error of long sums at O(log n);
//  - outer reduction (innermost kept dim has stride 1 and the reduced dims do
//    not): accumulates a block of neighbouring outputs at once, so the inner
//    loop is contiguous and vectorises; each output then adds its reduced
//    elements in order (sums of f32 still accumulate in double).
// A single output is split into fixed-size chunks that are reduced in
// parallel and combined in order, so results never depend on the thread count.

constexpr int kLanes = 8;                  // independent accumulators in a leaf
constexpr int64_t kBlock = 1024;           // elements per pairwise leaf
constexpr int64_t kChunk = 64 * kBlock;    // elements per parallel chunk of a single output
constexpr int64_t kOuterBlock = 4096;      // outputs accumulated together by the outer loop

// widen: the type arithmetic happens in (float for f16/bf16, see Note [Reduced precision math]).
template <class T>
inline auto widen(T x) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return static_cast<float>(x);
  } else {
    return x;
  }
}
template <class T> using widened_t = decltype(widen(std::declval<T>()));

// cast_out: stores an accumulator into an output element; integers wrap like PyTorch's.
template <class Out, class A>
inline Out cast_out(A a) {
  if constexpr (std::is_same_v<Out, bool>) {
    return a != A(0);
  } else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) {
    return Out(static_cast<float>(a));
  } else {
    return static_cast<Out>(a);
  }
}

// PairwiseAccumulator: combines a stream of partial results as a balanced
// binary tree (a binary counter of levels), in stream order.
template <class R>
class PairwiseAccumulator {
 public:
  using A = typename R::acc_t;
  explicit PairwiseAccumulator(const R& r) : r_(r) {}
  void add(A v) {
    int level = 0;
    for (uint64_t c = count_; c & 1u; c >>= 1, ++level) v = r_.combine(levels_[level], v);
    levels_[level] = v;
    ++count_;
  }
  A result() const {
    A acc = r_.identity();
    bool first = true;
    for (int level = 0; level < 64; ++level) {
      if (!((count_ >> level) & 1u)) continue;
      acc = first ? levels_[level] : r_.combine(levels_[level], acc);
      first = false;
    }
    return acc;
  }

 private:
  const R& r_;
  A levels_[64];
  uint64_t count_ = 0;
};

// reduce_leaf: n elements p[0], p[s], ... with kLanes accumulators. The
// lanes are written out (a fold over J, constant indices only) so they live
// in registers; a loop over an accumulator array keeps them in memory and
// serialises every step on a store-to-load round trip.
template <class R, size_t... J>
typename R::acc_t reduce_leaf_lanes(const R& r, const typename R::in_t* p, int64_t n, int64_t s,
                                    std::index_sequence<J...>) {
  using A = typename R::acc_t;
  A acc[kLanes] = {(static_cast<void>(J), r.identity())...};
  int64_t i = 0;
  if (s == 1) {
    for (; i + kLanes <= n; i += kLanes) ((acc[J] = r.step(acc[J], p[i + J])), ...);
  } else {
    for (; i + kLanes <= n; i += kLanes) ((acc[J] = r.step(acc[J], p[(i + J) * s])), ...);
  }
  for (; i < n; ++i) acc[0] = r.step(acc[0], p[i * s]);
  acc[0] = r.combine(r.combine(r.combine(acc[0], acc[4]), r.combine(acc[2], acc[6])),
                     r.combine(r.combine(acc[1], acc[5]), r.combine(acc[3], acc[7])));
  return acc[0];
}

template <class R>
typename R::acc_t reduce_leaf(const R& r, const typename R::in_t* p, int64_t n, int64_t s) {
  static_assert(kLanes == 8);
  if constexpr (requires(typename R::acc_t* a) { r.fast_leaf(p, n, a); }) {
    typename R::acc_t fast;
    if (s == 1 && r.fast_leaf(p, n, &fast)) return fast;
  }
  return reduce_leaf_lanes(r, p, n, s, std::make_index_sequence<kLanes>());
}

// reduce_run: n elements with stride s, pairwise over kBlock leaves.
template <class R>
typename R::acc_t reduce_run(const R& r, const typename R::in_t* p, int64_t n, int64_t s) {
  if (n <= kBlock) return reduce_leaf(r, p, n, s);
  PairwiseAccumulator<R> pw(r);
  for (int64_t i = 0; i < n; i += kBlock) pw.add(reduce_leaf(r, p + i * s, std::min(kBlock, n - i), s));
  return pw.result();
}

// offset_of: the element offset of a row-major linear index over (sizes, strides).
inline int64_t offset_of(int64_t linear, absl::Span<const int64_t> sizes, absl::Span<const int64_t> strides) {
  int64_t off = 0;
  for (size_t d = sizes.size(); d-- > 0;) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

// reduce_rows: rows [begin, end) of the reduced space (a row is one run of
// the innermost reduced dim), starting at base.
template <class R>
typename R::acc_t reduce_rows(const R& r, const typename R::in_t* base, const ReducePlan& p, int64_t begin,
                              int64_t end) {
  const int64_t n_inner = p.red_sizes.back();
  const int64_t s_inner = p.red_strides.back();
  const auto outer_sizes = absl::MakeConstSpan(p.red_sizes).first(p.red_sizes.size() - 1);
  const auto outer_strides = absl::MakeConstSpan(p.red_strides).first(p.red_strides.size() - 1);
  if (end - begin == 1) return reduce_run(r, base + offset_of(begin, outer_sizes, outer_strides), n_inner, s_inner);
  PairwiseAccumulator<R> pw(r);
  for (int64_t row = begin; row < end; ++row) {
    pw.add(reduce_run(r, base + offset_of(row, outer_sizes, outer_strides), n_inner, s_inner));
  }
  return pw.result();
}

// reduce_all: the single output of a reduction over everything p covers,
// chunked deterministically and reduced in parallel when large.
template <class R>
typename R::acc_t reduce_all(const R& r, const typename R::in_t* base, const ReducePlan& p) {
  using A = typename R::acc_t;
  const int64_t n_inner = p.red_sizes.back();
  const int64_t rows = p.n_red / n_inner;
  if (p.n_red <= kChunk) return reduce_rows(r, base, p, 0, rows);
  const bool one_run = rows == 1;
  // A chunk is kChunk elements of the single run, or enough whole rows for ~kChunk elements.
  const int64_t rows_per_chunk = std::max<int64_t>(1, kChunk / n_inner);
  const int64_t n_chunks = one_run ? (n_inner + kChunk - 1) / kChunk : (rows + rows_per_chunk - 1) / rows_per_chunk;
  std::vector<A> partial(static_cast<size_t>(n_chunks));
  const int64_t s_inner = p.red_strides.back();
#pragma omp parallel for schedule(static) num_threads(get_num_threads())
  for (int64_t c = 0; c < n_chunks; ++c) {
    if (one_run) {
      const int64_t start = c * kChunk;
      partial[c] = reduce_run(r, base + start * s_inner, std::min(kChunk, n_inner - start), s_inner);
    } else {
      const int64_t start = c * rows_per_chunk;
      partial[c] = reduce_rows(r, base, p, start, std::min(rows, start + rows_per_chunk));
    }
  }
  PairwiseAccumulator<R> pw(r);
  for (const A& v : partial) pw.add(v);
  return pw.result();
}

// run_reduction: out[...] = reduction of in over mask. See Note [Reduction engine].
template <class R>
void run_reduction(const R& r, const Tensor& in, const Tensor& out, absl::Span<const bool> mask) {
  using In = typename R::in_t;
  using A = typename R::acc_t;
  using Out = typename R::out_t;
  Out* dst = out.data_ptr<Out>();
  const int64_t n_out = out.numel();
  if (n_out == 0) return;
  if (in.numel() == 0) {
    const Out v = r.project(r.identity());
    std::fill(dst, dst + n_out, v);
    return;
  }
  const In* src = static_cast<const In*>(in.raw_data());
  const ReducePlan p = make_reduce_plan(in, mask);
  if (p.n_out == 1) {
    dst[0] = r.project(reduce_all(r, src, p));
    return;
  }
  const bool parallel = p.n_out * p.n_red >= kParallelGrain;
  const int64_t rows = p.n_red / p.red_sizes.back();
  if (p.kept_strides.back() == 1 && p.red_strides.back() != 1) {
    // Outer reduction: blocks of neighbouring outputs, contiguous in memory.
    const int64_t len = p.kept_sizes.back();
    const int64_t groups = p.n_out / len;
    // Each output accumulates its rows in order whatever the block width, so
    // narrowing blocks to feed every thread leaves results unchanged.
    int64_t block = kOuterBlock;
    const int64_t threads = get_num_threads();
    if (parallel && groups < threads) {
      const int64_t per_thread = (len * groups + threads - 1) / threads;
      block = std::clamp<int64_t>(per_thread, 64, kOuterBlock);
    }
    const int64_t n_blocks = (len + block - 1) / block;
    const auto gsizes = absl::MakeConstSpan(p.kept_sizes).first(p.kept_sizes.size() - 1);
    const auto gstrides = absl::MakeConstSpan(p.kept_strides).first(p.kept_strides.size() - 1);
    parallel_rows(groups * n_blocks, parallel, [&](int64_t task) {
      const int64_t g = task / n_blocks;
      const int64_t c0 = (task % n_blocks) * block;
      const int64_t width = std::min(block, len - c0);
      const In* gbase = src + offset_of(g, gsizes, gstrides) + c0;
      std::vector<A> acc(static_cast<size_t>(width));
      for (int64_t j = 0; j < width; ++j) acc[j] = r.identity();
      // Walk the reduced dims with an odometer (no division per row).
      const int64_t nd = static_cast<int64_t>(p.red_sizes.size());
      SizeVec idx(static_cast<size_t>(nd), 0);
      int64_t off = 0;
      for (int64_t e = 0; e < p.n_red; ++e) {
        const In* row = gbase + off;
#pragma omp simd
        for (int64_t j = 0; j < width; ++j) acc[j] = r.step(acc[j], row[j]);
        for (int64_t d = nd - 1; d >= 0; --d) {
          off += p.red_strides[d];
          if (++idx[d] < p.red_sizes[d]) break;
          off -= p.red_strides[d] * p.red_sizes[d];
          idx[d] = 0;
        }
      }
      Out* o = dst + g * len + c0;
      for (int64_t j = 0; j < width; ++j) o[j] = r.project(acc[j]);
    });
    return;
  }
  parallel_rows(p.n_out, parallel, [&](int64_t o) {
    dst[o] = r.project(reduce_rows(r, src + offset_of(o, p.kept_sizes, p.kept_strides), p, 0, rows));
  });
}

// ---- Reducers ----

// SumReducer: sum in Acc (double for f32/f64, float for f16/bf16, uint64 for integers so
// overflow wraps), optionally divided by a count (mean).
template <class In, class Acc, class Out>
struct SumReducer {
  using in_t = In;
  using acc_t = Acc;
  using out_t = Out;
  bool mean = false;    // divide by divisor (the reduced element count; 0 gives nan like 0/0)
  double divisor = 1;
  Acc identity() const { return Acc(0); }
  Acc step(Acc a, In x) const {
    if constexpr (std::is_integral_v<Acc>) {
      return a + static_cast<Acc>(static_cast<int64_t>(x));
    } else {
      return a + static_cast<Acc>(widen(x));
    }
  }
  Acc combine(Acc a, Acc b) const { return a + b; }
  Out project(Acc a) const {
    if constexpr (std::is_floating_point_v<Acc>) {
      if (mean) return cast_out<Out>(a / static_cast<Acc>(divisor));
    }
    return cast_out<Out>(a);
  }
};

// ExtremumReducer: max (kMax) or min with NaN propagation, in the element's compute type.
template <class In, bool kMax>
struct ExtremumReducer {
  using in_t = In;
  using acc_t = widened_t<In>;
  using out_t = In;
  acc_t identity() const {
    if constexpr (std::is_same_v<acc_t, bool>) {
      return !kMax;
    } else if constexpr (std::is_floating_point_v<acc_t>) {
      return kMax ? -std::numeric_limits<acc_t>::infinity() : std::numeric_limits<acc_t>::infinity();
    } else {
      return kMax ? std::numeric_limits<acc_t>::lowest() : std::numeric_limits<acc_t>::max();
    }
  }
  acc_t step(acc_t a, In x) const { return combine(a, widen(x)); }
  acc_t combine(acc_t a, acc_t b) const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (b != b) return b;
    }
    return (kMax ? b > a : b < a) ? b : a;
  }
  // fast_leaf: the extremum of n contiguous f32/f64 elements by a vectorized
  // max (or min), into *out; false when the leaf holds a NaN or the result is
  // a zero (whose sign the lanes' order decides), for the exact lanes to redo.
  // Any other extremum is one value whatever the order, so both agree bit for bit.
  bool fast_leaf(const In* p, int64_t n, acc_t* out) const {
    if constexpr (std::is_same_v<In, acc_t> && std::is_floating_point_v<acc_t>) {
      acc_t m = identity();
      int nan = 0;
      if constexpr (kMax) {
#pragma omp simd reduction(max : m) reduction(| : nan)
        for (int64_t i = 0; i < n; ++i) {
          m = p[i] > m ? p[i] : m;
          nan |= p[i] != p[i];
        }
      } else {
#pragma omp simd reduction(min : m) reduction(| : nan)
        for (int64_t i = 0; i < n; ++i) {
          m = p[i] < m ? p[i] : m;
          nan |= p[i] != p[i];
        }
      }
      *out = m;
      return nan == 0 && m != acc_t(0);
    } else {
      return false;
    }
  }
  In project(acc_t a) const { return cast_out<In>(a); }
};

enum class NormKind { kTwo, kOne, kInf, kNegInf, kZero, kP };

// NormReducer: the pieces of linalg_vector_norm; sums accumulate in double.
template <class In, NormKind K>
struct NormReducer {
  using in_t = In;
  using acc_t = std::conditional_t<K == NormKind::kInf || K == NormKind::kNegInf, widened_t<In>, double>;
  using out_t = In;
  double p = 2;
  acc_t identity() const {
    if constexpr (K == NormKind::kNegInf) return std::numeric_limits<acc_t>::infinity();
    return acc_t(0);
  }
  acc_t step(acc_t a, In x) const {
    if constexpr (K == NormKind::kTwo) {
      const double v = static_cast<double>(widen(x));
      return a + v * v;
    } else if constexpr (K == NormKind::kOne) {
      return a + std::abs(static_cast<double>(widen(x)));
    } else if constexpr (K == NormKind::kInf || K == NormKind::kNegInf) {
      return combine(a, std::abs(widen(x)));
    } else if constexpr (K == NormKind::kZero) {
      return a + (widen(x) != 0 ? 1.0 : 0.0);
    } else {
      return a + std::pow(std::abs(static_cast<double>(widen(x))), p);
    }
  }
  acc_t combine(acc_t a, acc_t b) const {
    if constexpr (K == NormKind::kInf || K == NormKind::kNegInf) {
      if (b != b) return b;
      return (K == NormKind::kInf ? b > a : b < a) ? b : a;
    } else {
      return a + b;
    }
  }
  In project(acc_t a) const {
    if constexpr (K == NormKind::kTwo) {
      return cast_out<In>(std::sqrt(a));
    } else if constexpr (K == NormKind::kP) {
      return cast_out<In>(std::pow(a, 1.0 / p));
    } else {
      return cast_out<In>(a);
    }
  }
};

template <class T>
using float_acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float, double>;

// sum_impl: sum (or mean: the sum divided by the element count) of self over g into out_dtype.
Tensor sum_impl(const Tensor& self, const ReductionGeometry& g, std::optional<DType> dtype, DType out_dtype,
                bool mean, std::string_view op) {
  Tensor out = make_tensor(g.out_sizes, out_dtype, kCPU);
  // dtype= computes in that dtype (PyTorch converts the input first).
  const Tensor in = dtype && *dtype != self.dtype() ? contiguous_cpu(self, *dtype) : self;
  OPSPEC_DISPATCH_ALL_DTYPES(in.dtype(), op, [&] {
    if constexpr (std::is_same_v<scalar_t, float> || std::is_same_v<scalar_t, double> ||
                  std::is_same_v<scalar_t, Half> || std::is_same_v<scalar_t, BFloat16>) {
      SumReducer<scalar_t, float_acc_t<scalar_t>, scalar_t> r;
      r.mean = mean;
      r.divisor = static_cast<double>(g.reduced_numel);
      run_reduction(r, in, out, g.mask);
    } else if (out_dtype == in.dtype()) {
      run_reduction(SumReducer<scalar_t, uint64_t, scalar_t>{}, in, out, g.mask);
    } else {
      run_reduction(SumReducer<scalar_t, uint64_t, int64_t>{}, in, out, g.mask);
    }
  });
  return out;
}

}  // namespace

Tensor sum_dim_cpu(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::sum");
  return sum_impl(self, g, dtype, sum_result_dtype(self.dtype(), dtype), /*mean=*/false, "aten::sum");
}

Tensor sum_cpu(const Tensor& self, std::optional<DType> dtype) { return sum_dim_cpu(self, std::nullopt, false, dtype); }

Tensor mean_dim_cpu(const Tensor& self, OptionalIntArrayRef dim, bool keepdim, std::optional<DType> dtype) {
  const DType out_dtype = mean_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, "aten::mean");
  return sum_impl(self, g, dtype, out_dtype, /*mean=*/true, "aten::mean");
}

Tensor mean_cpu(const Tensor& self, std::optional<DType> dtype) { return mean_dim_cpu(self, std::nullopt, false, dtype); }

namespace {
template <bool kMax>
Tensor extremum_cpu(const Tensor& self, IntArrayRef dim, bool keepdim) {
  const std::string_view name = kMax ? "amax" : "amin";
  const std::string op = str_cat("aten::", name);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, op);
  check_nonempty_reduction(self, g, name);
  Tensor out = make_tensor(g.out_sizes, self.dtype(), kCPU);
  OPSPEC_DISPATCH_ALL_DTYPES(self.dtype(), op, [&] {
    run_reduction(ExtremumReducer<scalar_t, kMax>{}, self, out, g.mask);
  });
  return out;
}
}  // namespace

Tensor amax_cpu(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_cpu<true>(self, dim, keepdim); }
Tensor amin_cpu(const Tensor& self, IntArrayRef dim, bool keepdim) { return extremum_cpu<false>(self, dim, keepdim); }

Tensor linalg_vector_norm_cpu(const Tensor& self, const Scalar& ord, OptionalIntArrayRef dim, bool keepdim,
                              std::optional<DType> dtype) {
  constexpr std::string_view kOp = "aten::linalg_vector_norm";
  const DType out_dtype = norm_result_dtype(self.dtype(), dtype);
  const ReductionGeometry g = reduction_geometry(self, dim, keepdim, kOp);
  const double p = ord.to_double();
  check_norm_ord(self, g, p);
  Tensor out = make_tensor(g.out_sizes, out_dtype, kCPU);
  const Tensor in = out_dtype != self.dtype() ? contiguous_cpu(self, out_dtype) : self;
  OPSPEC_DISPATCH_FLOATING_DTYPES(out_dtype, kOp, [&] {
    if (p == 2) {
      run_reduction(NormReducer<scalar_t, NormKind::kTwo>{}, in, out, g.mask);
    } else if (p == 1) {
      run_reduction(NormReducer<scalar_t, NormKind::kOne>{}, in, out, g.mask);
    } else if (p == std::numeric_limits<double>::infinity()) {
      run_reduction(NormReducer<scalar_t, NormKind::kInf>{}, in, out, g.mask);
    } else if (p == -std::numeric_limits<double>::infinity()) {
      run_reduction(NormReducer<scalar_t, NormKind::kNegInf>{}, in, out, g.mask);
    } else if (p == 0) {
      run_reduction(NormReducer<scalar_t, NormKind::kZero>{}, in, out, g.mask);
    } else {
      NormReducer<scalar_t, NormKind::kP> r;
      r.p = p;
      run_reduction(r, in, out, g.mask);
    }
  });
  return out;
}

}  // namespace opspec::internal
