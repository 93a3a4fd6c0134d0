// hash.cu: the kernels of the device tensor hashes: strided gather, norm
// chunk partials, xor, and XXH3 over bitwise slices. See Note [Device tensor
// hashes] in hash.cc and Note [XXH3 on the device] in xxh3_device.h.
#include <cuda_runtime.h>

#include "kernels/cuda/hash.h"
#include "runtime/core/half.h"

namespace opspec::internal::cuda_hash {
namespace {

constexpr int kThreads = 256;
constexpr int kNormLanes = 16;  // tensor_hash.cc's kLanes
static_assert(kChunkElems % kNormLanes == 0);

__constant__ uint8_t kDefaultSecret[xxh3::kSecretSize] = {OPSPEC_XXH3_SECRET_BYTES};

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

unsigned blocks_for(int64_t threads) {
  const int64_t b = (threads + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > 65535 * 32 ? 65535 * 32 : b));
}

// ---- elements as the CPU hashes see them ----

// half_to_float / bf16_to_float: the host's conversions (half.h), whose
// f16 NaNs keep their payload unquietened.
__device__ __forceinline__ float half_to_float(uint16_t h) { return opspec::Half::to_float(h); }
__device__ __forceinline__ float bf16_to_float(uint16_t b) { return __uint_as_float(uint32_t{b} << 16); }

// norm_widen: tensor_hash.cc's norm_widen (integers through float32, as `.float()`).
template <ElemKind K> __device__ __forceinline__ double norm_widen(const void* p, int64_t i);
template <> __device__ __forceinline__ double norm_widen<ElemKind::kF32>(const void* p, int64_t i) {
  return static_cast<const float*>(p)[i];
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kF64>(const void* p, int64_t i) {
  return static_cast<const double*>(p)[i];
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kF16>(const void* p, int64_t i) {
  return half_to_float(static_cast<const uint16_t*>(p)[i]);
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kBF16>(const void* p, int64_t i) {
  return bf16_to_float(static_cast<const uint16_t*>(p)[i]);
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kI64>(const void* p, int64_t i) {
  return static_cast<float>(static_cast<const int64_t*>(p)[i]);
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kI32>(const void* p, int64_t i) {
  return static_cast<float>(static_cast<const int32_t*>(p)[i]);
}
template <> __device__ __forceinline__ double norm_widen<ElemKind::kB8>(const void* p, int64_t i) {
  return static_cast<const uint8_t*>(p)[i] != 0 ? 1.0 : 0.0;
}

// float_bits_as_double: the bits of static_cast<double>(f) as x86 computes it
// (cvtss2sd: exact for numbers; a NaN keeps its payload and gets quietened).
__device__ __forceinline__ uint64_t float_bits_as_double(float f) {
  const uint32_t u = __float_as_uint(f);
  if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x7fffffu) != 0) {
    return uint64_t{u >> 31} << 63 | 0x7ff8000000000000ull | uint64_t{u & 0x7fffffu} << 29;
  }
  return static_cast<uint64_t>(__double_as_longlong(static_cast<double>(f)));
}

// xor_bits: tensor_hash.cc's xor_bits (torch.hash_tensor's upcast).
template <ElemKind K> __device__ __forceinline__ uint64_t xor_bits(const void* p, int64_t i);
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kF32>(const void* p, int64_t i) {
  return float_bits_as_double(static_cast<const float*>(p)[i]);
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kF64>(const void* p, int64_t i) {
  return static_cast<const uint64_t*>(p)[i];
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kF16>(const void* p, int64_t i) {
  return float_bits_as_double(half_to_float(static_cast<const uint16_t*>(p)[i]));
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kBF16>(const void* p, int64_t i) {
  return float_bits_as_double(bf16_to_float(static_cast<const uint16_t*>(p)[i]));
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kI64>(const void* p, int64_t i) {
  return static_cast<const uint64_t*>(p)[i];
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kI32>(const void* p, int64_t i) {
  return static_cast<uint64_t>(static_cast<int64_t>(static_cast<const int32_t*>(p)[i]));
}
template <> __device__ __forceinline__ uint64_t xor_bits<ElemKind::kB8>(const void* p, int64_t i) {
  return static_cast<const uint8_t*>(p)[i] != 0 ? 1 : 0;
}

// ---- kernels ----

template <class U>
__global__ void gather_kernel(const U* __restrict__ src, U* __restrict__ dst, int64_t numel, StridedLayout layout) {
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    int64_t rest = i, off = 0;
    for (int d = layout.ndim - 1; d >= 0; --d) {
      off += (rest % layout.sizes[d]) * layout.strides[d];
      rest /= layout.sizes[d];
    }
    dst[i] = src[off];
  }
}

// norm_kernel: thread (chunk, lane) sums |x| over its lane's elements of the
// chunk in order; the 16 lanes of a chunk (a half warp) then fold pairwise,
// exactly as norm_chunk_sum does.
template <ElemKind K>
__global__ void norm_kernel(const void* __restrict__ data, int64_t numel, int64_t nchunks,
                            double* __restrict__ partials) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t chunk = t / kNormLanes;
  const int lane = static_cast<int>(t % kNormLanes);
  double acc = 0.0;
  if (chunk < nchunks) {
    const int64_t begin = chunk * kChunkElems;
    const int64_t end = begin + kChunkElems < numel ? begin + kChunkElems : numel;
#pragma unroll 8
    for (int64_t i = begin + lane; i < end; i += kNormLanes) acc += fabs(norm_widen<K>(data, i));
  }
  for (int w = kNormLanes / 2; w >= 1; w /= 2) {
    const double other = __shfl_down_sync(0xffffffffu, acc, w, kNormLanes);
    if (lane < w) acc += other;
  }
  if (chunk < nchunks && lane == 0) partials[chunk] = acc;
}

template <ElemKind K>
__global__ void xor_kernel(const void* __restrict__ data, int64_t numel, unsigned long long* result) {
  uint64_t acc = 0;
  const int64_t step = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < numel; i += step) {
    acc ^= xor_bits<K>(data, i);
  }
  for (int w = 16; w >= 1; w /= 2) acc ^= __shfl_xor_sync(0xffffffffu, acc, w);
  if ((threadIdx.x & 31) == 0 && acc != 0) atomicXor(result, static_cast<unsigned long long>(acc));
}

// block_sums_kernel: thread (slot, lane): slot_lane_sum.
__global__ void block_sums_kernel(const uint64_t* __restrict__ words, int64_t nbytes, int64_t nslots, uint64_t seed,
                                  uint64_t* __restrict__ sums) {
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t slot = t / xxh3::kLanes;
  const int lane = static_cast<int>(t % xxh3::kLanes);
  uint64_t sum = 0;
  if (slot < nslots && slot_lane_sum(words, nbytes, slot, lane, seed, kDefaultSecret, &sum)) {
    sums[slot * xxh3::kLanes + lane] = sum;
  }
}

// finish_kernel: thread (slice, lane): slice_lane_acc; then lane 0 gathers
// its slice's eight lanes (they share a warp) and writes slice_digest.
__global__ void finish_kernel(const uint8_t* __restrict__ bytes, int64_t nbytes, int64_t nslices, uint64_t seed,
                              const uint64_t* __restrict__ sums, uint64_t* __restrict__ slice_hashes) {
  __shared__ uint8_t secret[xxh3::kSecretSize];
  for (int i = threadIdx.x; i < xxh3::kSecretSize / 8; i += blockDim.x) {
    const uint64_t w = xxh3::custom_secret_word(kDefaultSecret, i, seed);
    for (int b = 0; b < 8; ++b) secret[8 * i + b] = static_cast<uint8_t>(w >> (8 * b));
  }
  __syncthreads();
  const int64_t t = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t slice = t / xxh3::kLanes;
  const int lane = static_cast<int>(t % xxh3::kLanes);
  const bool active = slice < nslices;
  const bool long_way = active && slice_len(nbytes, slice) > xxh3::kMidSizeMax;
  const uint64_t acc = long_way ? slice_lane_acc(bytes, nbytes, slice, lane, secret, sums) : 0;
  uint64_t lanes[xxh3::kLanes];
  const int base = static_cast<int>(threadIdx.x & 31) & ~(xxh3::kLanes - 1);
  for (int k = 0; k < xxh3::kLanes; ++k) lanes[k] = __shfl_sync(0xffffffffu, acc, base + k);
  if (active && lane == 0) slice_hashes[slice] = slice_digest(lanes, bytes, nbytes, slice, seed, secret, kDefaultSecret);
}

// OPSPEC_HASH_DISPATCH: `body` with K bound to kind (C++17: no template lambdas in .cu files).
#define OPSPEC_HASH_DISPATCH(kind, body)                         \
  switch (kind) {                                                \
    case ElemKind::kF32: { constexpr ElemKind K = ElemKind::kF32; body; } break;   \
    case ElemKind::kF64: { constexpr ElemKind K = ElemKind::kF64; body; } break;   \
    case ElemKind::kF16: { constexpr ElemKind K = ElemKind::kF16; body; } break;   \
    case ElemKind::kBF16: { constexpr ElemKind K = ElemKind::kBF16; body; } break; \
    case ElemKind::kI64: { constexpr ElemKind K = ElemKind::kI64; body; } break;   \
    case ElemKind::kI32: { constexpr ElemKind K = ElemKind::kI32; body; } break;   \
    case ElemKind::kB8: { constexpr ElemKind K = ElemKind::kB8; body; } break;     \
    default: return static_cast<int>(cudaErrorInvalidValue);     \
  }

}  // namespace

int launch_gather(const void* src, void* dst, int64_t numel, int elem_size, const StridedLayout& layout, void* stream) {
  const unsigned blocks = blocks_for(numel);
  switch (elem_size) {
    case 1:
      gather_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const uint8_t*>(src),
                                                                 static_cast<uint8_t*>(dst), numel, layout);
      break;
    case 2:
      gather_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const uint16_t*>(src),
                                                                 static_cast<uint16_t*>(dst), numel, layout);
      break;
    case 4:
      gather_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const uint32_t*>(src),
                                                                 static_cast<uint32_t*>(dst), numel, layout);
      break;
    case 8:
      gather_kernel<<<blocks, kThreads, 0, as_stream(stream)>>>(static_cast<const uint64_t*>(src),
                                                                 static_cast<uint64_t*>(dst), numel, layout);
      break;
    default: return static_cast<int>(cudaErrorInvalidValue);
  }
  return static_cast<int>(cudaGetLastError());
}

int launch_norm_partials(const void* data, ElemKind kind, int64_t numel, double* partials, void* stream) {
  const int64_t nchunks = (numel + kChunkElems - 1) / kChunkElems;
  const unsigned blocks = blocks_for(nchunks * kNormLanes);
  cudaStream_t s = as_stream(stream);
  OPSPEC_HASH_DISPATCH(kind, (norm_kernel<K><<<blocks, kThreads, 0, s>>>(data, numel, nchunks, partials)));
  return static_cast<int>(cudaGetLastError());
}

int launch_xor(const void* data, ElemKind kind, int64_t numel, uint64_t* result, void* stream) {
  const unsigned blocks = blocks_for(numel) < 4096 ? blocks_for(numel) : 4096;
  auto* out = reinterpret_cast<unsigned long long*>(result);
  OPSPEC_HASH_DISPATCH(kind, (xor_kernel<K><<<blocks, kThreads, 0, as_stream(stream)>>>(data, numel, out)));
  return static_cast<int>(cudaGetLastError());
}

int64_t bitwise_scratch_words(int64_t nbytes) {
  return (nbytes + kSliceBytes - 1) / kSliceBytes * kBlocksPerSlice * xxh3::kLanes;
}

int launch_bitwise_slices(const void* data, int64_t nbytes, uint64_t seed, uint64_t* scratch, uint64_t* slice_hashes,
                          void* stream) {
  const int64_t nslices = (nbytes + kSliceBytes - 1) / kSliceBytes;
  const int64_t nslots = nslices * kBlocksPerSlice;
  block_sums_kernel<<<blocks_for(nslots * xxh3::kLanes), kThreads, 0, as_stream(stream)>>>(
      static_cast<const uint64_t*>(data), nbytes, nslots, seed, scratch);
  if (const cudaError_t e = cudaGetLastError(); e != cudaSuccess) return static_cast<int>(e);
  finish_kernel<<<blocks_for(nslices * xxh3::kLanes), kThreads, 0, as_stream(stream)>>>(
      static_cast<const uint8_t*>(data), nbytes, nslices, seed, scratch, slice_hashes);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace opspec::internal::cuda_hash
