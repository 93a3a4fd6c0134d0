// reduce.cu: the reduction kernels (sum, mean, amax, amin, the vector
// norms) behind launch_reduce. See Note [CUDA reductions].
#include <cfloat>
#include <cstdint>
#include <type_traits>

#include "kernels/cuda/device_loops.cuh"

namespace opspec::internal::cuda {

// Note [CUDA reductions]
// The reducers mirror kernels/cpu/reduce.cc's (same accumulator types: double
// for f32/f64 sums, float for f16/bf16, uint64 for integers so overflow wraps;
// NaN-propagating max/min; norms accumulated in double). Each output gets one
// block: thread t folds reduced elements t, t + blockDim, ... in order, then
// the block combines its threads' values as a fixed binary tree, so results
// never depend on timing. An output with many elements and few siblings is
// split into `splits` fixed ranges whose partial accumulators a second kernel
// combines in order. The summation order differs from the CPU's pairwise
// blocks, so float sums agree with the CPU's to rounding, not bit for bit.

namespace {

constexpr int kReduceThreads = 256;
constexpr int64_t kSplitElems = 32768;  // elements per split of a large reduction
constexpr int64_t kMaxSplitBlocks = 1024;

template <class T>
__device__ __forceinline__ auto widen(T x) {
  return static_cast<opmath_t<T>>(x);
}

// cast_out: an accumulator as an output element; integers wrap like PyTorch's.
template <class Out, class A>
__device__ __forceinline__ Out cast_out(A a) {
  if constexpr (std::is_same_v<Out, bool>) {
    return a != A(0);
  } else if constexpr (std::is_same_v<Out, Half> || std::is_same_v<Out, BFloat16>) {
    return Out(static_cast<float>(a));
  } else {
    return static_cast<Out>(a);
  }
}

template <class In, class Acc, class Out>
struct SumReducer {
  using in_t = In;
  using acc_t = Acc;
  using out_t = Out;
  bool mean;
  double divisor;
  __device__ Acc identity() const { return Acc(0); }
  __device__ Acc step(Acc a, In x) const {
    if constexpr (std::is_integral_v<Acc>) {
      return a + static_cast<Acc>(static_cast<int64_t>(x));
    } else {
      return a + static_cast<Acc>(widen(x));
    }
  }
  __device__ Acc combine(Acc a, Acc b) const { return a + b; }
  __device__ Out project(Acc a) const {
    if constexpr (std::is_floating_point_v<Acc>) {
      if (mean) return cast_out<Out>(a / static_cast<Acc>(divisor));
    }
    return cast_out<Out>(a);
  }
};

template <class In>
struct ExtremumReducer {
  using in_t = In;
  using acc_t = opmath_t<In>;
  using out_t = In;
  bool max;
  __device__ acc_t identity() const {
    if constexpr (std::is_same_v<acc_t, bool>) {
      return !max;
    } else if constexpr (std::is_floating_point_v<acc_t>) {
      return max ? -acc_t(INFINITY) : acc_t(INFINITY);
    } else if constexpr (std::is_same_v<acc_t, int64_t>) {
      return max ? INT64_MIN : INT64_MAX;
    } else {
      return max ? INT32_MIN : INT32_MAX;
    }
  }
  __device__ acc_t step(acc_t a, In x) const { return combine(a, widen(x)); }
  __device__ acc_t combine(acc_t a, acc_t b) const {
    if constexpr (std::is_floating_point_v<acc_t>) {
      if (b != b) return b;
    }
    return (max ? b > a : b < a) ? b : a;
  }
  __device__ In project(acc_t a) const { return cast_out<In>(a); }
};

// NormReducer: linalg_vector_norm's pieces, all in double (max and min of
// |x| are exact there, so the inf norms equal the CPU's compute-type ones).
template <class In>
struct NormReducer {
  using in_t = In;
  using acc_t = double;
  using out_t = In;
  ReduceOp kind;
  double p;
  __device__ double identity() const { return kind == ReduceOp::kNormNegInf ? INFINITY : 0.0; }
  __device__ double step(double a, In x) const {
    const double v = static_cast<double>(widen(x));
    switch (kind) {
      case ReduceOp::kNorm2: return a + v * v;
      case ReduceOp::kNorm1: return a + ::fabs(v);
      case ReduceOp::kNorm0: return a + (v != 0 ? 1.0 : 0.0);
      case ReduceOp::kNormP: return a + ::pow(::fabs(v), p);
      default: return combine(a, ::fabs(v));
    }
  }
  __device__ double combine(double a, double b) const {
    if (kind == ReduceOp::kNormInf || kind == ReduceOp::kNormNegInf) {
      if (b != b) return b;
      return (kind == ReduceOp::kNormInf ? b > a : b < a) ? b : a;
    }
    return a + b;
  }
  __device__ In project(double a) const {
    if (kind == ReduceOp::kNorm2) return cast_out<In>(::sqrt(a));
    if (kind == ReduceOp::kNormP) return cast_out<In>(::pow(a, 1.0 / p));
    if (kind == ReduceOp::kNormInf || kind == ReduceOp::kNormNegInf) {
      return cast_out<In>(static_cast<opmath_t<In>>(a));  // exact: a is some |x|
    }
    return cast_out<In>(a);
  }
};

// offset_of: the element offset of a row-major linear index over n dims.
__device__ __forceinline__ int64_t offset_of(int64_t linear, int n, const int64_t* sizes, const int64_t* strides) {
  if (n == 1) return linear * strides[0];
  int64_t off = 0;
  for (int d = n - 1; d >= 0; --d) {
    off += (linear % sizes[d]) * strides[d];
    linear /= sizes[d];
  }
  return off;
}

// block_combine: combines the block's per-thread values as a fixed tree; the result is in thread 0.
template <class R>
__device__ typename R::acc_t block_combine(const R& r, typename R::acc_t v) {
  using A = typename R::acc_t;
  __shared__ A shared[kReduceThreads];
  shared[threadIdx.x] = v;
  __syncthreads();
  for (unsigned half = blockDim.x / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) shared[threadIdx.x] = r.combine(shared[threadIdx.x], shared[threadIdx.x + half]);
    __syncthreads();
  }
  return shared[0];
}

// reduce_kernel: block (o, s) reduces split s of output o.
template <class R>
__global__ void __launch_bounds__(kReduceThreads) reduce_kernel(const ReduceArgs a, R r, int64_t splits,
                                                               int64_t split_len) {
  using In = typename R::in_t;
  using A = typename R::acc_t;
  const int64_t o = blockIdx.x;
  const int64_t s = blockIdx.y;
  const In* base = static_cast<const In*>(a.in) + offset_of(o, a.n_kept, a.kept_sizes, a.kept_strides);
  const int64_t begin = s * split_len;
  const int64_t end = begin + split_len < a.n_reduced ? begin + split_len : a.n_reduced;
  A acc = r.identity();
  for (int64_t j = begin + threadIdx.x; j < end; j += blockDim.x) {
    acc = r.step(acc, base[offset_of(j, a.n_red, a.red_sizes, a.red_strides)]);
  }
  acc = block_combine(r, acc);
  if (threadIdx.x != 0) return;
  if (splits == 1) {
    static_cast<typename R::out_t*>(a.out)[o] = r.project(acc);
  } else {
    static_cast<A*>(a.scratch)[o * splits + s] = acc;
  }
}

// finish_kernel: output o combines its split partials in order.
template <class R>
__global__ void __launch_bounds__(kReduceThreads) finish_kernel(const ReduceArgs a, R r, int64_t splits) {
  using A = typename R::acc_t;
  const int64_t o = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (o >= a.n_out) return;
  const A* partial = static_cast<const A*>(a.scratch) + o * splits;
  A acc = partial[0];
  for (int64_t s = 1; s < splits; ++s) acc = r.combine(acc, partial[s]);
  static_cast<typename R::out_t*>(a.out)[o] = r.project(acc);
}

// splits_for: how many ranges each output's reduced elements are split into.
int64_t splits_for(const ReduceArgs& a) {
  if (a.n_reduced < 2 * kSplitElems || a.n_out >= kMaxSplitBlocks / 2) return 1;
  int64_t splits = (a.n_reduced + kSplitElems - 1) / kSplitElems;
  const int64_t cap = kMaxSplitBlocks / a.n_out;
  return splits < cap ? splits : cap;
}

template <class R>
void run(const ReduceArgs& a, const R& r) {
  if (a.n_out == 0) return;
  const int64_t splits = splits_for(a);
  const int64_t split_len = (a.n_reduced + splits - 1) / splits;
  unsigned threads = 32;
  while (threads < kReduceThreads && threads < split_len) threads *= 2;
  const dim3 grid(grid_rows(a.n_out, "reduce"), static_cast<unsigned>(splits));
  reduce_kernel<<<grid, threads>>>(a, r, splits, split_len);
  check_launch("reduce");
  if (splits > 1) {
    finish_kernel<<<static_cast<unsigned>((a.n_out + kReduceThreads - 1) / kReduceThreads), kReduceThreads>>>(a, r,
                                                                                                            splits);
    check_launch("reduce (combine splits)");
  }
}

template <class In>
void run_sum(const ReduceArgs& a, bool mean) {
  if constexpr (std::is_floating_point_v<opmath_t<In>>) {
    using Acc = std::conditional_t<std::is_same_v<opmath_t<In>, float> && !std::is_same_v<In, float>, float, double>;
    run(a, SumReducer<In, Acc, In>{mean, a.divisor});
  } else if (a.out_code == a.in_code) {
    run(a, SumReducer<In, uint64_t, In>{false, 1});
  } else {
    run(a, SumReducer<In, uint64_t, int64_t>{false, 1});
  }
}

}  // namespace

int64_t reduce_scratch_bytes(const ReduceArgs& a) {
  const int64_t splits = splits_for(a);
  return splits == 1 ? 0 : a.n_out * splits * 8;  // every accumulator type is at most 8 bytes
}

void launch_reduce(ReduceOp op, const ReduceArgs& a) {
  with_code(a.in_code, [&]<class In>() {
    switch (op) {
      case ReduceOp::kSum: return run_sum<In>(a, false);
      case ReduceOp::kMean: return run_sum<In>(a, true);
      case ReduceOp::kMax: return run(a, ExtremumReducer<In>{true});
      case ReduceOp::kMin: return run(a, ExtremumReducer<In>{false});
      default:
        if constexpr (std::is_floating_point_v<opmath_t<In>>) return run(a, NormReducer<In>{op, a.p});
        fail_launch("launch_reduce: norms need a floating dtype");
    }
  });
}

}  // namespace opspec::internal::cuda
