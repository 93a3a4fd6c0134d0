// tensor_hash.cc: norm, hash_tensor (xor) and bitwise hashes over the raw
// data of CPU tensors of any dtype and strides, without the dispatcher;
// device (cuda) tensors are hashed by their backend through the device seam.
#include "harness/tensor_hash.h"

#include <xxhash.h>
#if defined(__x86_64__)
#include <xxh_x86dispatch.h>
#endif

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#ifdef _OPENMP
#include <omp.h>
#endif

#include "absl/container/inlined_vector.h"
#include "runtime/core/bitwise_hash_format.h"
#include "runtime/core/device_hashes.h"
#include "runtime/core/device_hooks.h"
#include "runtime/core/scalar.h"
#include "runtime/core/parallel.h"

namespace opspec {

// Note [Tensor hash summation order]
// norm_hash must give the same double for the same logical values, whatever
// the strides, the thread count or the machine's core count, so two runs of a
// program can be compared hash by hash. The elements, in logical row-major
// order, are cut into fixed chunks of kChunkElems. Within a chunk element i
// goes to accumulator i % kLanes (16 float64 lanes, written out so the loop
// vectorizes without -ffast-math), the lanes are folded pairwise, and the
// chunk partials are added in chunk order. Chunks may run on any thread
// (OpenMP for >= kParallelMinElems elements); only the partials' order
// matters. A strided tensor's chunk is first gathered into a contiguous
// scratch buffer (see Note [Strided hashing]) and fed to the same loop, so a
// view and its contiguous copy hash to the same bits. The digits can differ
// from PyTorch's own (cascaded, vectorized) f64 sum in the last ulps; DebugMode
// comparisons are between two opspec runs, so only self-consistency matters.
//
// Note [Bitwise tensor hash]
// bitwise_hash is XXH3-64 (seeded) over the element bytes, in the tensor's
// own dtype and host byte order, in logical row-major order:
//   seed   = XXH3_64bits(dtype_short_name + '\0' + int64 ndim + int64 sizes...)
//   bytes  = the nbytes = numel * element_size bytes of the elements
//   hash   = XXH3_64bits_withSeed(bytes, seed)            if nbytes <= kBitwiseSliceBytes
//          = XXH3_64bits_withSeed(h_0 .. h_{k-1}, seed)   otherwise, where h_c is
//            XXH3_64bits_withSeed of the c-th kBitwiseSliceBytes slice of bytes
//            and the h_c are hashed as a uint64 array (8 bytes each, host order).
// So f32 zeros and i32 zeros differ (dtype), [2, 3] and [3, 2] differ (sizes),
// [] and [1] differ (ndim), and strides never matter. The fixed slices let
// large tensors hash on all cores with a result independent of the thread
// count; a contiguous tensor of up to 1 MiB is exactly one XXH3 call.
//
// Note [Strided hashing]
// Non-contiguous tensors are hashed chunk by chunk (a norm/xor chunk or a
// bitwise slice): the chunk's elements are gathered in logical order into a
// scratch buffer of at most 1 MiB per thread, then hashed like contiguous
// data. The gather walks full rows in blocks; when the rows of a block are
// closer together in memory than the elements of a row (a transposed view) it
// copies 16 x 16 tiles, so a transposed matrix is read cache line by cache
// line rather than one element per line. Expanded (stride 0) tensors are
// never materialised whole: only one chunk at a time. Contiguous tensors are
// read in place, with no allocation.

namespace {

// kLanes: independent float64 accumulators of the norm loop.
constexpr int kLanes = 16;
// kXorLanes: independent accumulators of the xor loop.
constexpr int kXorLanes = 8;
// kChunkElems: elements per norm/xor chunk. See Note [Tensor hash summation order].
constexpr int64_t kChunkElems = int64_t{1} << 16;
static_assert(kChunkElems % kLanes == 0);
// kParallelMinElems: elements from which chunks are spread over OpenMP threads.
constexpr int64_t kParallelMinElems = int64_t{1} << 20;
// kBitwiseSliceBytes: the slice size of large bitwise hashes. See Note [Bitwise tensor hash].
constexpr int64_t kBitwiseSliceBytes = int64_t{1} << 20;
// kTile: the side of the tiles a transposing gather copies.
constexpr int64_t kTile = 16;

bool may_parallelize(int64_t numel) {
#ifdef _OPENMP
  return numel >= kParallelMinElems && !omp_in_parallel();
#else
  return false;
#endif
}

// check_hashable: t has host data the hash may read.
void check_hashable(const Tensor& t, std::string_view fn) {
  OPSPEC_CHECK(t.defined(), fn, ": tensor is undefined");
  const Device storage_device = t.impl()->storage()->device();
  OPSPEC_CHECK(!storage_device.is_meta(), fn, ": tensor ", t.meta_str(), " has no data to hash (",
               t.device().is_meta() ? "a meta tensor" : "a fake tensor", ")");
  OPSPEC_CHECK(storage_device.is_cpu(), fn, ": tensor ", t.meta_str(),
               " has no host data to hash; copy it to cpu first");
}

// Device tensors (cuda) are hashed by their backend on the device, through
// the device seam (See Note [Device seam] in runtime/core/device_hooks.h),
// with the same results; only a backend that cannot makes the hash copy the
// tensor's bytes to the host first.

// on_device: t's data lives in device memory.
bool on_device(const Tensor& t) {
  if (!t.defined()) return false;
  const Device d = t.impl()->storage()->device();
  return !d.is_cpu() && !d.is_meta();
}

// device_hash: t's hash of kind computed on its device by the backend, or
// nullopt (no backend hash, or it declined): then the caller copies t to the host.
std::optional<uint64_t> device_hash(const Tensor& t, DeviceHashKind kind) {
  const DeviceHashFn fn = find_device_hash(t.impl()->storage()->device().type, kind);
  return fn != nullptr ? fn(t) : std::nullopt;
}

// Layout: t's geometry in elements with size-1 dims dropped and dims that
// step through memory as one merged; at least one dim. Contiguous data ends
// up as {numel} / {1}.
struct Layout {
  SizeVec sizes;
  SizeVec strides;
  bool contiguous() const { return sizes.size() == 1 && strides[0] == 1; }
};

Layout coalesce(const Tensor& t) {
  Layout l;
  if (t.is_contiguous()) {
    l.sizes = {t.numel()};
    l.strides = {1};
    return l;
  }
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d], stride = t.strides()[d];
    if (size == 1) continue;
    if (!l.sizes.empty() && l.strides.back() == stride * size) {
      l.sizes.back() *= size;
      l.strides.back() = stride;
    } else {
      l.sizes.push_back(size);
      l.strides.push_back(stride);
    }
  }
  if (l.sizes.empty()) {
    l.sizes = {1};
    l.strides = {1};
  }
  return l;
}

// copy_block: out[i * cols + c] = p[i * rs + c * cs] for rows x cols elements.
template <class E>
void copy_block(const E* p, int64_t rows, int64_t cols, int64_t rs, int64_t cs, E* out) {
  if (cs == 1) {
    for (int64_t i = 0; i < rows; ++i) std::memcpy(out + i * cols, p + i * rs, static_cast<size_t>(cols) * sizeof(E));
  } else if (rows > 1 && std::abs(rs) < std::abs(cs)) {
    // Transposed: walk kTile x kTile tiles, reading along the rows' stride.
    for (int64_t i0 = 0; i0 < rows; i0 += kTile) {
      const int64_t i1 = std::min(rows, i0 + kTile);
      for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
        const int64_t c1 = std::min(cols, c0 + kTile);
        for (int64_t c = c0; c < c1; ++c) {
          for (int64_t i = i0; i < i1; ++i) out[i * cols + c] = p[i * rs + c * cs];
        }
      }
    }
  } else {
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t c = 0; c < cols; ++c) out[i * cols + c] = p[i * rs + c * cs];
    }
  }
}

// gather: copies logical (row-major) elements [begin, end) of the tensor
// with layout l starting at data into out. See Note [Strided hashing].
template <class E>
void gather(const E* data, const Layout& l, int64_t begin, int64_t end, E* out) {
  const int nd = static_cast<int>(l.sizes.size());
  const int64_t cols = l.sizes[nd - 1], cs = l.strides[nd - 1];
  const int64_t rows_per_sweep = nd >= 2 ? l.sizes[nd - 2] : 1;
  const int64_t rs = nd >= 2 ? l.strides[nd - 2] : 0;
  auto row_offset = [&](int64_t r) {
    int64_t off = 0;
    for (int d = nd - 2; d >= 0; --d) {
      off += (r % l.sizes[d]) * l.strides[d];
      r /= l.sizes[d];
    }
    return off;
  };
  int64_t pos = begin;
  while (pos < end) {
    const int64_t r = pos / cols, c = pos % cols;
    const E* row = data + row_offset(r);
    if (c != 0 || end - pos < cols) {  // a partial row at either end of the range
      const int64_t n = std::min(cols - c, end - pos);
      copy_block(row + c * cs, 1, n, 0, cs, out);
      out += n;
      pos += n;
      continue;
    }
    // Full rows up to the end of the range or of this sweep of dim nd-2.
    const int64_t k = std::min((end - pos) / cols, rows_per_sweep - r % rows_per_sweep);
    copy_block(row, k, cols, rs, cs, out);
    out += k * cols;
    pos += k * cols;
  }
}

// Scratch: one thread's gather buffer, allocated on first use (never for
// contiguous tensors).
class Scratch {
 public:
  template <class E>
  E* get(int64_t count) {
    const size_t bytes = static_cast<size_t>(count) * sizeof(E);
    if (bytes > size_) {
      data_ = std::make_unique_for_overwrite<char[]>(bytes);
      size_ = bytes;
    }
    return reinterpret_cast<E*>(data_.get());
  }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

// chunk_data: elements [begin, end) contiguous in memory: in place for a
// contiguous tensor, else gathered into scratch.
template <class E>
const E* chunk_data(const E* base, const Layout& l, int64_t begin, int64_t end, Scratch& scratch) {
  if (l.contiguous()) return base + begin;
  E* buf = scratch.get<E>(end - begin);
  gather(base, l, begin, end, buf);
  return buf;
}

// ---- norm ----

// chunk_results: fn(data, count) for each fixed chunk of chunk_elems elements
// in logical order, chunks in parallel for large tensors. Results are indexed
// by chunk, so combining them in order does not depend on the thread count.
template <class T, class R, class Fn>
absl::InlinedVector<R, 128> chunk_results(const Tensor& t, int64_t chunk_elems, Fn fn) {
  const T* base = static_cast<const T*>(t.raw_data());
  const int64_t numel = t.numel();
  const Layout l = coalesce(t);
  absl::InlinedVector<R, 128> results(static_cast<size_t>((numel + chunk_elems - 1) / chunk_elems));
  const int64_t nchunks = static_cast<int64_t>(results.size());
  auto run_chunk = [&](int64_t c, Scratch& scratch) {
    const int64_t begin = c * chunk_elems, end = std::min(numel, begin + chunk_elems);
    results[c] = fn(chunk_data(base, l, begin, end, scratch), end - begin);
  };
  if (!may_parallelize(numel)) {  // no OpenMP region at all: even an if(false) one costs a microsecond
    Scratch scratch;
    for (int64_t c = 0; c < nchunks; ++c) run_chunk(c, scratch);
    return results;
  }
#pragma omp parallel num_threads(get_num_threads())
  {
    Scratch scratch;
#pragma omp for schedule(static)
    for (int64_t c = 0; c < nchunks; ++c) run_chunk(c, scratch);
  }
  return results;
}

// norm_widen: an element as float64 the way norm_hash_fn sees it: floating
// values widen exactly, integers and bools go through float32 (`.float()`).
inline double norm_widen(float v) { return v; }
inline double norm_widen(double v) { return v; }
inline double norm_widen(Half v) { return internal::half_bits_to_float(v.bits); }
inline double norm_widen(BFloat16 v) { return std::bit_cast<float>(uint32_t{v.bits} << 16); }
inline double norm_widen(int64_t v) { return static_cast<float>(v); }
inline double norm_widen(int32_t v) { return static_cast<float>(v); }
inline double norm_widen(bool v) { return v ? 1.0 : 0.0; }

// norm_chunk_sum: the partial of one chunk. See Note [Tensor hash summation order].
template <class T>
double norm_chunk_sum(const T* p, int64_t n) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    // Fully unrolled, so the lanes stay in registers across iterations.
#pragma GCC unroll 16
    for (int j = 0; j < kLanes; ++j) acc[j] += std::fabs(norm_widen(p[i + j]));
  }
  for (int j = 0; i + j < n; ++j) acc[j] += std::fabs(norm_widen(p[i + j]));
  for (int w = kLanes / 2; w >= 1; w /= 2) {
    for (int j = 0; j < w; ++j) acc[j] += acc[j + w];
  }
  return acc[0];
}

template <class T>
double norm_impl(const Tensor& t) {
  double sum = 0.0;
  for (const double p : chunk_results<T, double>(t, kChunkElems, norm_chunk_sum<T>)) sum += p;
  return sum;
}

// ---- xor ----

// xor_bits: an element's 64-bit pattern after torch.hash_tensor's upcast.
inline uint64_t xor_bits(float v) { return std::bit_cast<uint64_t>(static_cast<double>(v)); }
inline uint64_t xor_bits(double v) { return std::bit_cast<uint64_t>(v); }
inline uint64_t xor_bits(Half v) {
  return std::bit_cast<uint64_t>(static_cast<double>(internal::half_bits_to_float(v.bits)));
}
inline uint64_t xor_bits(BFloat16 v) {
  return std::bit_cast<uint64_t>(static_cast<double>(std::bit_cast<float>(uint32_t{v.bits} << 16)));
}
inline uint64_t xor_bits(int64_t v) { return static_cast<uint64_t>(v); }
inline uint64_t xor_bits(int32_t v) { return static_cast<uint64_t>(static_cast<int64_t>(v)); }
inline uint64_t xor_bits(bool v) { return v ? 1 : 0; }

template <class T>
uint64_t xor_chunk(const T* p, int64_t n) {
  uint64_t acc[kXorLanes] = {};
  int64_t i = 0;
  for (; i + kXorLanes <= n; i += kXorLanes) {
#pragma GCC unroll 8
    for (int j = 0; j < kXorLanes; ++j) acc[j] ^= xor_bits(p[i + j]);
  }
  uint64_t out = 0;
  for (; i < n; ++i) out ^= xor_bits(p[i]);
  for (int j = 0; j < kXorLanes; ++j) out ^= acc[j];
  return out;
}

template <class T>
uint64_t xor_impl(const Tensor& t) {
  uint64_t acc = 0;
  for (const uint64_t x : chunk_results<T, uint64_t>(t, kChunkElems, xor_chunk<T>)) acc ^= x;
  return acc;
}

// ---- bitwise ----

// xxh3_slice: XXH3_64bits_withSeed over one slice, through libxxhash's
// run-time CPU dispatch on x86-64 (AVX2/AVX-512 where present; the same
// hash as the SSE2 build, about 1.6x the throughput on 1 MiB slices).
uint64_t xxh3_slice(const void* p, size_t n, uint64_t seed) {
#if defined(__x86_64__)
  return XXH3_64bits_withSeed_dispatch(p, n, seed);
#else
  return XXH3_64bits_withSeed(p, n, seed);
#endif
}

// bitwise_impl: See Note [Bitwise tensor hash]. U is an unsigned type of the
// element's size (only the bytes matter).
template <class U>
uint64_t bitwise_impl(const Tensor& t, uint64_t seed) {
  constexpr int64_t kSliceElems = kBitwiseSliceBytes / static_cast<int64_t>(sizeof(U));
  const auto hashes = chunk_results<U, uint64_t>(t, kSliceElems, [seed](const U* p, int64_t n) {
    return xxh3_slice(p, static_cast<size_t>(n) * sizeof(U), seed);
  });
  return internal::combine_slice_hashes(hashes.data(), static_cast<int64_t>(hashes.size()), seed);
}

}  // namespace

std::string_view hash_kind_name(HashKind k) {
  switch (k) {
    case HashKind::kNorm: return "norm";
    case HashKind::kHashTensor: return "hash_tensor";
    case HashKind::kBitwise: return "bitwise";
  }
  return "unknown";
}

std::optional<HashKind> parse_hash_kind(std::string_view s) {
  for (HashKind k : {HashKind::kNorm, HashKind::kHashTensor, HashKind::kBitwise}) {
    if (hash_kind_name(k) == s) return k;
  }
  return std::nullopt;
}

HashValue HashValue::of_float(double v) {
  HashValue h;
  h.f = v;
  return h;
}

HashValue HashValue::of_int(uint64_t v) {
  HashValue h;
  h.is_int = true;
  h.u = v;
  return h;
}

double HashValue::as_double() const { return is_int ? static_cast<double>(u) : f; }

std::string HashValue::str() const { return is_int ? std::to_string(u) : format_double(f); }

bool operator==(const HashValue& a, const HashValue& b) {
  if (a.is_int != b.is_int) return false;
  return a.is_int ? a.u == b.u : std::bit_cast<uint64_t>(a.f) == std::bit_cast<uint64_t>(b.f);
}

double norm_hash(const Tensor& t) {
  if (on_device(t)) {
    const std::optional<uint64_t> h = device_hash(t, DeviceHashKind::kNorm);
    return h ? std::bit_cast<double>(*h) : norm_hash(host_copy(t));
  }
  check_hashable(t, "norm_hash");
  if (t.numel() == 0) return 0.0;
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "norm_hash", [&] { return norm_impl<scalar_t>(t); });
}

uint64_t xor_hash(const Tensor& t) {
  if (on_device(t)) {
    const std::optional<uint64_t> h = device_hash(t, DeviceHashKind::kXor);
    return h ? *h : xor_hash(host_copy(t));
  }
  check_hashable(t, "xor_hash");
  if (t.numel() == 0) return 0;
  return OPSPEC_DISPATCH_ALL_DTYPES(t.dtype(), "xor_hash", [&] { return xor_impl<scalar_t>(t); });
}

uint64_t bitwise_hash(const Tensor& t) {
  if (on_device(t)) {
    const std::optional<uint64_t> h = device_hash(t, DeviceHashKind::kBitwise);
    return h ? *h : bitwise_hash(host_copy(t));
  }
  check_hashable(t, "bitwise_hash");
  const uint64_t seed = internal::bitwise_seed(t);
  if (t.numel() == 0) return internal::combine_slice_hashes(nullptr, 0, seed);
  switch (t.element_size()) {
    case 1: return bitwise_impl<uint8_t>(t, seed);
    case 2: return bitwise_impl<uint16_t>(t, seed);
    case 4: return bitwise_impl<uint32_t>(t, seed);
    case 8: return bitwise_impl<uint64_t>(t, seed);
  }
  OPSPEC_FAIL("bitwise_hash: unsupported element size ", t.element_size());
}

HashValue compute_hash(const Tensor& t, HashKind kind) {
  switch (kind) {
    case HashKind::kNorm: return HashValue::of_float(norm_hash(t));
    case HashKind::kHashTensor: return HashValue::of_int(xor_hash(t));
    case HashKind::kBitwise: return HashValue::of_int(bitwise_hash(t));
  }
  OPSPEC_FAIL("compute_hash: unknown hash kind ", static_cast<int>(kind));
}

Tensor host_copy(const Tensor& t) {
  const Device where = t.defined() ? t.impl()->storage()->device() : kCPU;
  if (where.is_cpu() || where.is_meta()) return t;  // meta storage: no values to copy
  // The span of storage t views, copied from its device (strides are never
  // negative, so it starts at t's first element).
  int64_t extent = t.numel() == 0 ? 0 : 1;
  for (int64_t d = 0; d < t.dim() && extent > 0; ++d) extent += (t.sizes()[d] - 1) * t.strides()[d];
  const Tensor span = internal::make_tensor({extent}, t.dtype(), kCPU);
  if (extent > 0) {
    get_device_hooks(where.type).copy_bytes(span.raw_data(), kCPU, t.raw_data(), where,
                                            static_cast<size_t>(extent * t.element_size()));
  }
  return internal::make_view(span, t.sizes(), t.strides(), 0);
}

}  // namespace opspec
