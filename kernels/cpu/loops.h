// loops.h: TensorIterator, the strided N-input / 1-output loop driver every
// CPU elementwise kernel and copy uses, and cpu_kernel, which runs a scalar
// functor over it with vectorizable inner loops. See Note [TensorIterator].
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "kernels/common/elementwise_ops.h"
#include "kernels/common/opmath.h"
#include "kernels/common/scalar_as.h"
#include "runtime/core/tensor.h"

#ifdef _OPENMP
#define OPSPEC_SIMD _Pragma("omp simd")
#define OPSPEC_SIMD_OR_REDUCTION(var) _Pragma(OPSPEC_PRAGMA_STR(omp simd reduction(| : var)))
#define OPSPEC_PRAGMA_STR(x) #x
#else
#define OPSPEC_SIMD
#define OPSPEC_SIMD_OR_REDUCTION(var)
#endif

namespace opspec::internal {

// Note [TensorIterator]
// A TensorIterator walks one output and up to three inputs in lockstep over the
// output's shape. The inputs are already broadcastable to it and already have
// the dtype the kernel wants (ops cast mismatched inputs first with
// cast_for_compute below). Construction:
//   1. every operand gets a byte stride per output dim, 0 where it is
//      broadcast (size 1, or a leading dim it lacks);
//   2. flat fast path: when every operand is contiguous with exactly the
//      output's sizes, the iteration space is one dim of numel elements;
//   3. otherwise size-1 dims are dropped, dims are ordered so the output's
//      strides decrease (an in-place op on a transposed tensor still writes
//      memory in order), and adjacent dims are coalesced when every operand
//      steps over the outer one exactly as far as over the whole inner one
//      (x[:, :5] of a [4, 8] tensor stays 2-d; a [4, 5] + [5] broadcast
//      stays 2-d; a transposed self updated in place from an input transposed
//      alike becomes 1-d).
// for_each hands the kernel blocks of rows: data pointers, the byte strides
// of the innermost and the next dim, the row length n and the row count m, so
// a tensor with short rows costs one call per block rather than per row.
// cpu_kernel runs a row whose strides are all the element size (or 0 for an
// input broadcast from one element) as a plain indexed loop the compiler
// vectorizes (`omp simd`), and any other row as a strided loop.
// Work of at least kGrainSize elements is split over OpenMP threads by linear
// index range into contiguous chunks (which may start or end mid-row, See Note
// [parallel_for chunks] in loops.cc); elementwise results never depend on the
// thread count. When an input walks the two innermost dims in the opposite
// order to the output (a transposed input), blocks are kTileSize x kTileSize
// tiles instead, so the strided reads of a tile stay in cache, and threads
// split the work by tile.
// Inputs never overlap partially with the output: callers copy such inputs
// first (an input that is exactly the output, as in x.add_(x), is fine
// because element i is read before it is written).

// kMaxIterOperands: output + up to three inputs (where has three).
inline constexpr int kMaxIterOperands = 4;
// kGrainSize: elements below which a loop stays on one thread.
inline constexpr int64_t kGrainSize = 32768;
// kTileSize: the side of the square tiles transposing loops walk.
inline constexpr int64_t kTileSize = 8;

// parallel_for: calls f(begin, end) over chunks of [0, n); OpenMP threads when
// n >= grain and not already inside a parallel region (See Note [parallel_for chunks]).
void parallel_for(int64_t n, int64_t grain, absl::FunctionRef<void(int64_t, int64_t)> f);

// TensorIterator: the iteration plan for out = f(inputs...). See Note [TensorIterator].
class TensorIterator {
 public:
  // Builds the plan; inputs must broadcast to out's shape (checked internally:
  // ops validate shapes with their meta function before getting here).
  TensorIterator(const Tensor& out, TensorList inputs);

  int ntensors() const { return ntensors_; }
  int64_t numel() const { return numel_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  IntArrayRef shape() const { return shape_; }
  // byte_strides: operand k's byte stride per (coalesced) dim.
  IntArrayRef byte_strides(int k) const { return strides_[k]; }
  char* data(int k) const { return data_[k]; }

  // LoopFn: loop(data, strides, n, m) processes m rows of n elements. Operand
  // k (output first) starts at data[k] and steps strides[k] bytes within a row
  // and strides[ntensors + k] bytes from one row to the next.
  using LoopFn = absl::FunctionRef<void(char** data, const int64_t* strides, int64_t n, int64_t m)>;
  // for_each: runs loop over every element, in parallel for large tensors.
  void for_each(LoopFn loop, int64_t grain = kGrainSize) const;
  // serial_for_each: runs loop over the linear element range [begin, end).
  void serial_for_each(LoopFn loop, int64_t begin, int64_t end) const;

 private:
  // wants_tiling: some input walks the two innermost dims in the opposite
  // order to the output (a transpose), so rows are better done in tiles.
  bool wants_tiling() const;
  void tiled_for_each(LoopFn loop, int64_t grain) const;

  int ntensors_ = 0;
  int64_t numel_ = 0;
  SizeVec shape_;  // outermost first
  std::array<SizeVec, kMaxIterOperands> strides_;
  std::array<char*, kMaxIterOperands> data_{};
};

// cast_for_compute: t itself when it already has dtype, else a converted copy
// that keeps t's broadcast (stride-0) dims broadcast, so casting an expanded
// scalar stays cheap. cpu only.
Tensor cast_for_compute(const Tensor& t, DType dtype);

// require_cpu_device: a CPU kernel can be reached with a device elsewhere when
// a cpu 0-dim tensor joins it (the dispatcher prefers CPU over CUDA); refuse
// with NotImplementedError naming the op and device.
void require_cpu_device(Device device, std::string_view op);

// partial_overlap is in runtime/ops/elementwise_rules.h.

// opmath_t and arith_t, the compute types, and scalar_as are in kernels/common/opmath.h.


// select_bits, half_bits_to_float and float_to_half_bits are in runtime/core/half.h.

namespace loops_detail {

// load / store: element <-> compute value, with the vectorizable f16 path.
template <class T> inline opmath_t<T> load(const T& v) { return static_cast<opmath_t<T>>(v); }
inline float load(const Half& v) { return half_bits_to_float(v.bits); }
template <class T, class V> inline void store(T* p, V v) { *p = static_cast<T>(v); }
template <class V> inline void store(Half* p, V v) { p->bits = float_to_half_bits(static_cast<float>(v)); }

// Arg<T, kScalar>: reads input element i of a contiguous row, or the one
// broadcast value of a stride-0 row (loaded once, outside the loop).
template <class T, bool kScalar> struct Arg;
template <class T> struct Arg<T, true> {
  opmath_t<T> v;
  explicit Arg(const char* p) : v(load(*reinterpret_cast<const T*>(p))) {}
  opmath_t<T> operator[](int64_t) const { return v; }
};
template <class T> struct Arg<T, false> {
  const T* p;
  explicit Arg(const char* q) : p(reinterpret_cast<const T*>(q)) {}
  opmath_t<T> operator[](int64_t i) const { return load(p[i]); }
};

template <class... T> struct TypeList {};

// HasFastPath<F, A...>: f has a vectorizable fast path for arguments A (See
// Note [Functor fast paths] in elementwise_ops.h).
template <class F, class... A>
concept HasFastPath = requires(const F& f, A... a) {
  f.fast(a...);
  { f.needs_exact(a...) } -> std::convertible_to<bool>;
};

// kFastPathBlock: elements checked with needs_exact before a fast-path block runs.
inline constexpr int64_t kFastPathBlock = 256;

// contiguous_body: out[i] = f(args[i]...) over a contiguous row; bit k of
// kMask marks input k as one broadcast value.
template <unsigned kMask, class Out, class... In, class F, size_t... I>
__attribute__((always_inline)) inline void contiguous_body(char** data, int64_t n, const F& f, TypeList<In...>,
                                                           std::index_sequence<I...>) {
  Out* out = reinterpret_cast<Out*>(data[0]);
  std::tuple<Arg<In, ((kMask >> I) & 1u) != 0>...> args{Arg<In, ((kMask >> I) & 1u) != 0>(data[1 + I])...};
  if constexpr (HasFastPath<F, opmath_t<In>...>) {
    // Blocks whose inputs all take the fast path run it vectorized; a block
    // with an input that needs the exact path runs operator() per element.
    for (int64_t b = 0; b < n; b += kFastPathBlock) {
      const int64_t e = std::min(n, b + kFastPathBlock);
      unsigned exact = 0;
      OPSPEC_SIMD_OR_REDUCTION(exact)
      for (int64_t i = b; i < e; ++i) exact |= f.needs_exact(std::get<I>(args)[i]...) ? 1u : 0u;
      if (exact == 0) {
        OPSPEC_SIMD
        for (int64_t i = b; i < e; ++i) store(out + i, f.fast(std::get<I>(args)[i]...));
      } else {
        for (int64_t i = b; i < e; ++i) store(out + i, f(std::get<I>(args)[i]...));
      }
    }
  } else {
    OPSPEC_SIMD
    for (int64_t i = 0; i < n; ++i) store(out + i, f(std::get<I>(args)[i]...));
  }
}

// Note [Wide vector clones]
// The transcendental functors (kComputeBound in elementwise_ops.h) are limited
// by arithmetic, not memory bandwidth, so their f32 loops are compiled three
// times, for AVX-512 (x86-64-v4), AVX2 (x86-64-v3) and baseline x86-64, and
// the widest the CPU runs is picked once at load time (GCC's target_clones,
// an ifunc), as PyTorch's CPU-capability dispatch does; the binary still runs
// on any x86-64. Results do not depend on the clone: each element goes
// through the same IEEE operations (-ffp-contract=off forms no FMA; an
// explicit math::fma is one exactly rounded operation in every clone, the
// default one calling libm), only more of them per instruction. Functors that
// call fma (kUsesFma) are built wide for every contiguous loop. Other compilers and architectures, and ASan
// and TSan builds (which check the code, not its speed; TSan's runtime is not
// yet set up when ifunc resolvers run, so a TSan binary with clones crashes
// before main), build the loop once for the build's target.
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(__SANITIZE_ADDRESS__) && \
    !defined(__SANITIZE_THREAD__)
#define OPSPEC_WIDE_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define OPSPEC_WIDE_CLONES
#endif

// ComputeBound<F, In...>: F is a transcendental functor computing in float.
template <class F, class... In>
concept ComputeBound = F::kComputeBound && (std::is_same_v<opmath_t<In>, float> && ...);

// UsesFma<F>: F calls math::fma, one libm call per element in the baseline
// build, so its contiguous loops, broadcast or not, are built wide too (See
// Note [Add with alpha] in elementwise_ops.h).
template <class F>
concept UsesFma = requires { requires F::kUsesFma; };

template <unsigned kMask, class Out, class... In, class F, size_t... I>
OPSPEC_WIDE_CLONES void contiguous_wide(char** data, int64_t n, const F& f, TypeList<In...> types,
                                        std::index_sequence<I...> seq) {
  contiguous_body<kMask, Out>(data, n, f, types, seq);
}

// contiguous_loop: contiguous_body, through the wide clones for compute-bound
// functors over non-broadcast inputs and for fma's (See Note [Wide vector clones]).
template <unsigned kMask, class Out, class... In, class F, size_t... I>
inline void contiguous_loop(char** data, int64_t n, const F& f, TypeList<In...> types, std::index_sequence<I...> seq) {
  if constexpr ((kMask == 0 && ComputeBound<F, In...>) || UsesFma<F>) {
    contiguous_wide<kMask, Out>(data, n, f, types, seq);
  } else {
    contiguous_body<kMask, Out>(data, n, f, types, seq);
  }
}

template <class Out, class... In, class F, size_t... I>
inline void strided_loop(char** data, const int64_t* s, int64_t n, const F& f, TypeList<In...>,
                         std::index_sequence<I...>) {
  char* out = data[0];
  for (int64_t i = 0; i < n; ++i) {
    store(reinterpret_cast<Out*>(out + i * s[0]), f(load(*reinterpret_cast<const In*>(data[1 + I] + i * s[1 + I]))...));
  }
}

// dispatch_mask: calls contiguous_loop with the runtime mask as a template argument.
template <unsigned kMask, unsigned kMaxMask, class Out, class... In, class F>
inline void dispatch_mask(unsigned mask, char** data, int64_t n, const F& f) {
  if constexpr (kMask <= kMaxMask) {
    if (mask == kMask) {
      contiguous_loop<kMask, Out>(data, n, f, TypeList<In...>{}, std::index_sequence_for<In...>{});
    } else {
      dispatch_mask<kMask + 1, kMaxMask, Out, In...>(mask, data, n, f);
    }
  }
}

}  // namespace loops_detail

// CastArgs<F, C>: f with each argument cast to C (arith_t: int32 for bool),
// keeping f's kUsesFma for the loops; a lambda around f would hide it.
template <class F, class C>
struct CastArgs {
  static constexpr bool kUsesFma = loops_detail::UsesFma<F>;
  F f;
  template <class... X>
  __attribute__((always_inline)) auto operator()(X... x) const {
    return f(static_cast<C>(x)...);
  }
};

// cpu_kernel<Out, In...>(iter, f): out = f(in...) elementwise, where iter's
// operands hold Out and In... and f takes and returns compute values
// (opmath_t). Rows that are contiguous, or contiguous with some inputs
// broadcast from one element, run as vectorizable indexed loops.
template <class Out, class... In, class F>
void cpu_kernel(const TensorIterator& iter, const F& f) {
  constexpr int kN = sizeof...(In);
  static_assert(kN + 1 <= kMaxIterOperands, "too many inputs");
  OPSPEC_INTERNAL_ASSERT(iter.ntensors() == kN + 1);
  iter.for_each([&](char** base, const int64_t* s, int64_t n, int64_t m) {
    constexpr int64_t kSizes[] = {static_cast<int64_t>(sizeof(In))..., 0};
    bool contiguous = s[0] == static_cast<int64_t>(sizeof(Out));
    unsigned mask = 0;
    for (int k = 0; k < kN; ++k) {
      if (s[1 + k] == 0) {
        mask |= 1u << k;
      } else if (s[1 + k] != kSizes[k]) {
        contiguous = false;
      }
    }
    char* data[kN + 1];
    for (int64_t j = 0; j < m; ++j) {
      for (int k = 0; k <= kN; ++k) data[k] = base[k] + j * s[kN + 1 + k];
      if (contiguous) {
        loops_detail::dispatch_mask<0, (1u << kN) - 1, Out, In...>(mask, data, n, f);
      } else {
        loops_detail::strided_loop<Out>(data, s, n, f, loops_detail::TypeList<In...>{},
                                        std::index_sequence_for<In...>{});
      }
    }
  });
}

// Note [Small contiguous fast path]
// For a few elements, building a TensorIterator (shapes, strides, dim
// coalescing) costs more than the arithmetic: a 1-element add spent most of
// its time there. When out is contiguous with the kernel's dtype, every input
// either lines up with it (contiguous, the kernel's dtype, as many elements)
// or is a single element, and the work is below one parallel grain,
// small_contiguous_kernel runs the contiguous loop cpu_kernel would run on the
// one row, straight over the buffers, so results are bit-identical. A
// one-element input is read as a broadcast value, as cpu_kernel reads a
// stride-0 operand; when it holds another dtype (a wrapped C++ scalar, `y *
// 0.5`, is f64, i64 or bool) it is converted first exactly as copy_into
// converts it for the iterator path. Otherwise it returns false and the
// caller builds the iterator (casting inputs as it must).

namespace loops_detail {

// one_element_as: element 0 of t as T, converted as copy_into converts (load,
// CastOp in compute types, store); false if t's dtype is not T, f64, i64 or bool.
template <class T>
bool one_element_as(const Tensor& t, T* out) {
  const void* p = t.raw_data();
  const auto from = [&]<class S>(const S*) {
    store(out, CastOp<opmath_t<T>>{}(load(*static_cast<const S*>(p))));
    return true;
  };
  switch (t.dtype()) {
    case DType::kFloat64: return from(static_cast<const double*>(nullptr));
    case DType::kInt64: return from(static_cast<const int64_t*>(nullptr));
    case DType::kBool: return from(static_cast<const bool*>(nullptr));
    default:
      if (t.dtype() != dtype_of<T>()) return false;
      *out = *static_cast<const T*>(p);
      return true;
  }
}

// bind_small_input: points data at input k of a small contiguous kernel, or at
// slot holding its one element (setting bit k of mask); false if it fits neither.
template <class T>
bool bind_small_input(const Tensor& t, int64_t n, unsigned k, char*& data, T& slot, unsigned& mask) {
  if (t.numel() == n && t.is_contiguous() && t.dtype() == dtype_of<T>()) {
    data = static_cast<char*>(t.raw_data());
    return true;
  }
  if (t.numel() != 1 || !one_element_as(t, &slot)) return false;
  data = reinterpret_cast<char*>(&slot);
  mask |= 1u << k;
  return true;
}

}  // namespace loops_detail

// small_contiguous_kernel<Out, In...>(f, out, in...): out = f(in...) with no
// TensorIterator when the Note's conditions hold; false (nothing done) if not.
template <class Out, class... In, class F, class... Ts>
bool small_contiguous_kernel(const F& f, const Tensor& out, const Ts&... in) {
  static_assert(sizeof...(In) == sizeof...(Ts), "one input tensor per input type");
  constexpr unsigned kN = sizeof...(In);
  const int64_t n = out.numel();
  if (n >= kGrainSize || !out.is_contiguous() || out.dtype() != dtype_of<Out>()) return false;
  char* data[kN + 1] = {static_cast<char*>(out.raw_data())};
  std::tuple<In...> slots;  // converted one-element inputs
  unsigned mask = 0;
  const bool bound = [&]<size_t... I>(std::index_sequence<I...>) {
    return (loops_detail::bind_small_input<In>(in, n, I, data[1 + I], std::get<I>(slots), mask) && ...);
  }(std::index_sequence_for<In...>{});
  if (!bound) return false;
  loops_detail::dispatch_mask<0, (1u << kN) - 1, Out, In...>(mask, data, n, f);
  return true;
}

}  // namespace opspec::internal
