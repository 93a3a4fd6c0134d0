// hash.h: the CUDA kernels behind the device tensor hashes (hash.cu), as
// launchers over raw device memory with plain types, so hash.cu includes no
// runtime headers; and the Tensor-level hashes hash.cc builds from them.
// See Note [Device tensor hashes] in hash.cc.
#pragma once

#include <cstdint>

#include "kernels/cuda/xxh3_device.h"

namespace opspec {
class Tensor;
}  // namespace opspec

namespace opspec::internal {

// cuda_norm_hash / cuda_xor_hash / cuda_bitwise_hash: norm_hash, xor_hash and
// bitwise_hash (harness/tensor_hash.h) of a tensor with cuda data, computed
// on its device; equal to the CPU hashes of the same data (bitwise and xor
// exactly, norm to the bit but for NaN payloads). The CUDA hooks call them.
double cuda_norm_hash(const Tensor& t);
uint64_t cuda_xor_hash(const Tensor& t);
uint64_t cuda_bitwise_hash(const Tensor& t);

// bitwise_seed and combine_slice_hashes, shared with the CPU: runtime/core/bitwise_hash_format.h.

}  // namespace opspec::internal

namespace opspec::internal::cuda_hash {

// ElemKind: the element types the hashes read (runtime's DType, without its header).
enum class ElemKind : int { kF32, kF64, kF16, kBF16, kI64, kI32, kB8 };

// kChunkElems: elements per norm/xor chunk; kSliceBytes: bytes per bitwise
// slice; kMaxDims: dims a strided gather takes. The chunking must be
// harness/tensor_hash.cc's (See Note [Tensor hash summation order] there).
inline constexpr int64_t kChunkElems = int64_t{1} << 16;
inline constexpr int64_t kSliceBytes = int64_t{1} << 20;
inline constexpr int kMaxDims = 16;

// StridedLayout: a strided tensor's coalesced sizes and element strides.
struct StridedLayout {
  int ndim = 0;
  int64_t sizes[kMaxDims] = {};
  int64_t strides[kMaxDims] = {};
};

// All launchers queue work on `stream` (a cudaStream_t; null for the legacy
// default stream) and return a CUDA error code (0 on success) without waiting.

// launch_gather: dst[i] = the i-th element (row-major) of the strided data at
// src, numel elements of elem_size bytes.
int launch_gather(const void* src, void* dst, int64_t numel, int elem_size, const StridedLayout& layout, void* stream);

// launch_norm_partials: partials[c] = the norm partial of chunk c of the
// contiguous elements at data (See Note [Tensor hash summation order]).
int launch_norm_partials(const void* data, ElemKind kind, int64_t numel, double* partials, void* stream);

// launch_xor: *result ^= the XOR of every element's 64-bit pattern
// (torch.hash_tensor's upcast); *result must be zeroed first.
int launch_xor(const void* data, ElemKind kind, int64_t numel, uint64_t* result, void* stream);

// launch_bitwise_slices: slice_hashes[s] = XXH3_64bits_withSeed of byte
// slice s (kSliceBytes each, the last one shorter) of the nbytes at data,
// which must be 8-byte aligned. scratch holds bitwise_scratch_words(nbytes) uint64s.
int launch_bitwise_slices(const void* data, int64_t nbytes, uint64_t seed, uint64_t* scratch, uint64_t* slice_hashes,
                          void* stream);

// bitwise_scratch_words: the uint64s launch_bitwise_slices's scratch needs.
int64_t bitwise_scratch_words(int64_t nbytes);

// ---- the bitwise kernels' per-thread work, host-device so tests run it on
// the host (See Note [XXH3 on the device]) ----

// kBlocksPerSlice: XXH3 blocks (and block-sum slots) per slice.
inline constexpr int64_t kBlocksPerSlice = kSliceBytes / xxh3::kBlockLen;

// slice_len: the length of byte slice s of nbytes.
OPSPEC_HOST_DEVICE inline int64_t slice_len(int64_t nbytes, int64_t s) {
  const int64_t rest = nbytes - s * kSliceBytes;
  return rest < kSliceBytes ? rest : kSliceBytes;
}

// slot_lane_sum: thread (slot, lane) of the block-sum kernel, slot = slice *
// kBlocksPerSlice + block: false when the slot is no block of a slice hashed
// the long way, else *sum = the block's lane sum (the last, partial block is
// block full_blocks). words: the 8-byte aligned data.
OPSPEC_HOST_DEVICE inline bool slot_lane_sum(const uint64_t* words, int64_t nbytes, int64_t slot, int lane,
                                             uint64_t seed, const uint8_t* default_secret, uint64_t* sum) {
  const int64_t slice = slot / kBlocksPerSlice, block = slot % kBlocksPerSlice;
  const int64_t len = slice_len(nbytes, slice);
  if (len <= xxh3::kMidSizeMax) return false;
  const xxh3::LongGeometry g = xxh3::long_geometry(static_cast<uint64_t>(len));
  const uint64_t b = static_cast<uint64_t>(block);
  if (b > g.full_blocks) return false;
  const int stripes = b < g.full_blocks ? xxh3::kStripesPerBlock : g.last_stripes;
  const uint64_t* in = words + (slice * kSliceBytes + block * xxh3::kBlockLen) / 8;
  uint64_t s = 0;
  for (int n = 0; n < stripes; ++n) {
    const uint64_t* stripe = in + n * (xxh3::kStripeLen / 8);
    // The secret word at byte n * 8 + lane * 8 is word n + lane.
    s += xxh3::lane_term(stripe[lane], stripe[lane ^ 1], xxh3::custom_secret_word(default_secret, n + lane, seed));
  }
  *sum = s;
  return true;
}

// slice_lane_acc: thread (slice, lane) of the finishing kernel for a slice
// hashed the long way: the lane's final accumulator from its block sums
// (sums[slot * 8 + lane]), through the scrambles, plus the last stripe.
// secret: the seeded secret's bytes.
OPSPEC_HOST_DEVICE inline uint64_t slice_lane_acc(const uint8_t* bytes, int64_t nbytes, int64_t slice, int lane,
                                                  const uint8_t* secret, const uint64_t* sums) {
  const int64_t len = slice_len(nbytes, slice);
  const xxh3::LongGeometry g = xxh3::long_geometry(static_cast<uint64_t>(len));
  const uint64_t* s = sums + slice * kBlocksPerSlice * xxh3::kLanes + lane;
  uint64_t acc = xxh3::init_acc(lane);
  for (uint64_t b = 0; b < g.full_blocks; ++b) acc = xxh3::scramble_lane(acc + s[b * xxh3::kLanes], secret, lane);
  acc += s[g.full_blocks * xxh3::kLanes];
  const uint8_t* in = bytes + slice * kSliceBytes;
  return acc + xxh3::block_lane_sum(in + len - xxh3::kStripeLen, 1, secret + xxh3::kLastStripeSecret, lane);
}

// slice_digest: slice's XXH3: merged from its eight lane accumulators when
// hashed the long way, else hashed whole from its bytes.
OPSPEC_HOST_DEVICE inline uint64_t slice_digest(const uint64_t* lanes, const uint8_t* bytes, int64_t nbytes,
                                                int64_t slice, uint64_t seed, const uint8_t* secret,
                                                const uint8_t* default_secret) {
  const int64_t len = slice_len(nbytes, slice);
  if (len > xxh3::kMidSizeMax) return xxh3::merge_accs(lanes, secret, static_cast<uint64_t>(len));
  return xxh3::short_hash(bytes + slice * kSliceBytes, static_cast<size_t>(len), seed, default_secret);
}

}  // namespace opspec::internal::cuda_hash
