// sort.cu: the kernels of sort_launch.h: prod, max/min with indices,
// cumsum/cumprod, and a stable merge sort for sort and topk, one thread per
// row, in the arithmetic of kernels/cpu/sort.cc.
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "kernels/common/opmath.h"
#include "kernels/cuda/sort_launch.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda {

// Note [CUDA sort rows]
// One thread handles one row, in the CPU kernel's element order: products
// and running sums accumulate as the CPU's (double for f32/f64, float for
// f16/bf16, wrapping uint64 for integers), so results match the CPU's bits;
// sort is a bottom-up stable merge sort of the row's indices in global
// scratch, so ties keep their input order as on the CPU. Simple and exact,
// not fast for few long rows.

namespace {

constexpr int kBlock = 256;

unsigned blocks_for(int64_t n) {
  const int64_t b = (n + kBlock - 1) / kBlock;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65536 ? 65536 : b));
}

__device__ __forceinline__ int64_t first_index() { return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; }
__device__ __forceinline__ int64_t grid_stride() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

// Bool: b8 storage (as uint8_t), so that stores write 0 or 1.
struct Bool {
  uint8_t v;
};

// with_code: f.template operator()<T>() for every code (b8 as Bool).
template <class F>
void with_code(Code code, const char* what, F&& f) {
  switch (code) {
    case kF32: return f.template operator()<float>();
    case kF64: return f.template operator()<double>();
    case kF16: return f.template operator()<Half>();
    case kBF16: return f.template operator()<BFloat16>();
    case kI64: return f.template operator()<int64_t>();
    case kI32: return f.template operator()<int32_t>();
    case kB8: return f.template operator()<Bool>();
    default: fail_launch(what);
  }
}

// value_t / value: an element as its comparison value (float for f16/bf16, int for b8).
template <class T> struct ValueOf { using type = opmath_t<T>; };
template <> struct ValueOf<Bool> { using type = int; };
template <class T> using value_t = typename ValueOf<T>::type;
template <class T>
__device__ __forceinline__ value_t<T> value(T x) {
  if constexpr (std::is_same_v<T, Bool>) return x.v;
  else return static_cast<value_t<T>>(x);
}

// acc_t: kernels/cpu/sort.cc's accumulation types.
template <class T>
using acc_t = std::conditional_t<std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>, float,
                                 std::conditional_t<std::is_floating_point_v<T>, double, uint64_t>>;

template <class A, class T>
__device__ __forceinline__ A to_acc(T x) {
  if constexpr (std::is_same_v<A, uint64_t>) return static_cast<uint64_t>(static_cast<int64_t>(value(x)));
  else return static_cast<A>(value(x));
}

template <class T, class A>
__device__ __forceinline__ T from_acc(A a) {
  if constexpr (std::is_same_v<T, Bool>) return Bool{static_cast<uint8_t>(a != 0)};
  else if constexpr (std::is_same_v<A, uint64_t>) return static_cast<T>(static_cast<int64_t>(a));
  else if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) return T(static_cast<float>(a));
  else return static_cast<T>(a);
}

template <class C>
__device__ __forceinline__ bool is_nan(C v) {
  if constexpr (std::is_floating_point_v<C>) return v != v;
  else return false;
}

__device__ __forceinline__ int64_t row_start(int64_t r, int64_t len, int64_t inner) {
  return (r / inner) * len * inner + r % inner;
}

// ---- prod ----

template <class T>
__global__ void prod_rows_kernel(const T* x, T* out, int64_t rows, int64_t len, int64_t inner) {
  using A = acc_t<T>;
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + row_start(r, len, inner);
    A acc = A(1);
    for (int64_t k = 0; k < len; ++k) acc = acc * to_acc<A>(p[k * inner]);
    out[r] = from_acc<T>(acc);
  }
}

// ---- max / min ----

// better: v beats the best b: NaN beats everything, the first NaN stays, ties keep the first.
template <bool kMax, class C>
__device__ __forceinline__ bool better(C v, C b) {
  if (is_nan(b)) return false;
  if (is_nan(v)) return true;
  return kMax ? v > b : v < b;
}

template <bool kMax, class T>
__global__ void extremum_rows_kernel(const T* x, T* values, int64_t* indices, int64_t rows, int64_t len,
                                     int64_t inner) {
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + row_start(r, len, inner);
    int64_t best = 0;
    value_t<T> bv = value(p[0]);
    for (int64_t k = 1; k < len; ++k) {
      const value_t<T> v = value(p[k * inner]);
      if (better<kMax>(v, bv)) bv = v, best = k;
    }
    values[r] = p[best * inner];
    if (indices != nullptr) indices[r] = best;
  }
}

// ---- cumsum / cumprod ----

template <bool kProd, class T>
__global__ void scan_kernel(const T* x, T* out, int64_t rows, int64_t len, int64_t inner) {
  using A = acc_t<T>;
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const int64_t s = row_start(r, len, inner);
    A acc = kProd ? A(1) : A(0);
    for (int64_t k = 0; k < len; ++k) {
      const A v = to_acc<A>(x[s + k * inner]);
      acc = kProd ? acc * v : acc + v;
      out[s + k * inner] = from_acc<T>(acc);
    }
  }
}

// ---- sort / topk ----

// before: whether element a goes strictly before b (NaN largest).
template <class C>
__device__ __forceinline__ bool before(C a, C b, bool descending) {
  if (descending) return (is_nan(a) && !is_nan(b)) || a > b;
  return (!is_nan(a) && is_nan(b)) || a < b;
}

// sort_rows_kernel: bottom-up merge sort of each row's indices between two
// scratch runs (a stable merge: the right run's element goes first only when
// strictly before), then the first k out.
template <class T>
__global__ void sort_rows_kernel(const T* x, T* values, int64_t* indices, int64_t* scratch, int64_t rows, int64_t len,
                                 int64_t inner, int64_t k, bool descending) {
  for (int64_t r = first_index(); r < rows; r += grid_stride()) {
    const T* p = x + row_start(r, len, inner);
    int64_t* a = scratch + r * 2 * len;
    int64_t* b = a + len;
    for (int64_t j = 0; j < len; ++j) a[j] = j;
    for (int64_t width = 1; width < len; width *= 2) {
      for (int64_t lo = 0; lo < len; lo += 2 * width) {
        const int64_t mid = lo + width < len ? lo + width : len;
        const int64_t hi = lo + 2 * width < len ? lo + 2 * width : len;
        int64_t i = lo, j = mid, o = lo;
        while (i < mid && j < hi) {
          if (before(value(p[a[j] * inner]), value(p[a[i] * inner]), descending)) b[o++] = a[j++];
          else b[o++] = a[i++];
        }
        while (i < mid) b[o++] = a[i++];
        while (j < hi) b[o++] = a[j++];
      }
      int64_t* t = a;
      a = b;
      b = t;
    }
    const int64_t out = (r / inner) * k * inner + r % inner;
    for (int64_t j = 0; j < k; ++j) {
      values[out + j * inner] = p[a[j] * inner];
      indices[out + j * inner] = a[j];
    }
  }
}

}  // namespace

void launch_prod_rows(Code code, const void* x, void* out, int64_t outer, int64_t len, int64_t inner) {
  const int64_t rows = outer * inner;
  if (rows == 0) return;
  with_code(code, "launch_prod_rows", [&]<class T>() {
    prod_rows_kernel<T><<<blocks_for(rows), kBlock>>>(static_cast<const T*>(x), static_cast<T*>(out), rows, len,
                                                       inner);
  });
  check_launch("prod");
}

void launch_extremum_rows(Code code, bool max, const void* x, void* values, int64_t* indices, int64_t outer,
                          int64_t len, int64_t inner) {
  const int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return;
  with_code(code, "launch_extremum_rows", [&]<class T>() {
    const auto* s = static_cast<const T*>(x);
    auto* v = static_cast<T*>(values);
    if (max) extremum_rows_kernel<true, T><<<blocks_for(rows), kBlock>>>(s, v, indices, rows, len, inner);
    else extremum_rows_kernel<false, T><<<blocks_for(rows), kBlock>>>(s, v, indices, rows, len, inner);
  });
  check_launch(max ? "max" : "min");
}

void launch_scan(Code code, bool prod, const void* x, void* out, int64_t outer, int64_t len, int64_t inner) {
  const int64_t rows = outer * inner;
  if (rows == 0 || len == 0) return;
  with_code(code, "launch_scan", [&]<class T>() {
    const auto* s = static_cast<const T*>(x);
    auto* o = static_cast<T*>(out);
    if (prod) scan_kernel<true, T><<<blocks_for(rows), kBlock>>>(s, o, rows, len, inner);
    else scan_kernel<false, T><<<blocks_for(rows), kBlock>>>(s, o, rows, len, inner);
  });
  check_launch(prod ? "cumprod" : "cumsum");
}

void launch_sort_rows(Code code, const void* x, void* values, int64_t* indices, int64_t* scratch, int64_t outer,
                      int64_t len, int64_t inner, int64_t k, bool descending) {
  const int64_t rows = outer * inner;
  if (rows == 0 || len == 0 || k == 0) return;
  with_code(code, "launch_sort_rows", [&]<class T>() {
    sort_rows_kernel<T><<<blocks_for(rows), kBlock>>>(static_cast<const T*>(x), static_cast<T*>(values), indices,
                                                       scratch, rows, len, inner, k, descending);
  });
  check_launch("sort");
}

}  // namespace opspec::internal::cuda
