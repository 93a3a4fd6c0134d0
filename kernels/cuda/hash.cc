// hash.cc: the harness's tensor hashes (norm, hash_tensor, bitwise) of cuda
// tensors, computed on their device without copying the tensor to the host.
// See Note [Device tensor hashes].
#include <cuda_runtime_api.h>
#include <xxhash.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/core/bitwise_hash_format.h"
#include "kernels/cuda/cuda_device.h"
#include "kernels/cuda/hash.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// Note [Device tensor hashes]
// The device hashes equal harness/tensor_hash.cc's for the same data (See
// Notes [Tensor hash summation order] and [Bitwise tensor hash] there) and
// never copy the tensor to the host: a non-contiguous tensor is first
// gathered, in logical order, into a contiguous device scratch buffer (as the
// CPU gathers each chunk), then
//   - norm: one thread per (chunk, lane) adds |x| of its lane's elements in
//     order, the 16 lanes fold pairwise, and the host adds the chunk partials
//     in chunk order: the CPU's float64 operations in the CPU's order, so the
//     result is bit-identical (a NaN result is returned as the default quiet
//     NaN: payloads of NaN sums differ between x86 and GPUs);
//   - hash_tensor: XOR is order-free; elements are upcast as the CPU does,
//     NaN payloads included;
//   - bitwise: XXH3 of each 1 MiB slice on the device (See Note [XXH3 on the
//     device]); the host hashes the slice digests as the CPU does.
// Only the chunk partials or slice digests (8 bytes per 64 Ki elements or
// per MiB) come back to the host.

namespace {

void check(cudaError_t e, std::string_view what, const Tensor& t) {
  cuda::check(e, str_cat(what, " hashing ", t.meta_str(), " on the device"));
}
void check(int e, std::string_view what, const Tensor& t) { check(static_cast<cudaError_t>(e), what, t); }

// Scratch: stream-ordered device memory (not the tensor allocator's, so
// hashing never shows in allocation statistics).
class Scratch {
 public:
  Scratch(size_t bytes, const Tensor& t) {
    if (bytes > 0) check(cudaMallocAsync(&ptr_, bytes, nullptr), "cudaMallocAsync", t);
  }
  ~Scratch() {
    if (ptr_ != nullptr) cudaFreeAsync(ptr_, nullptr);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  template <class T> T* get() const { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
};

void check_device_tensor(const Tensor& t, std::string_view fn) {
  OPSPEC_CHECK(t.defined(), fn, ": tensor is undefined");
  OPSPEC_CHECK(t.impl()->storage()->device().is_cuda(), fn, ": tensor ", t.meta_str(), " has no cuda data");
}

cuda_hash::ElemKind elem_kind(DType d) {
  switch (d) {
    case DType::kFloat32: return cuda_hash::ElemKind::kF32;
    case DType::kFloat64: return cuda_hash::ElemKind::kF64;
    case DType::kFloat16: return cuda_hash::ElemKind::kF16;
    case DType::kBFloat16: return cuda_hash::ElemKind::kBF16;
    case DType::kInt64: return cuda_hash::ElemKind::kI64;
    case DType::kInt32: return cuda_hash::ElemKind::kI32;
    case DType::kBool: return cuda_hash::ElemKind::kB8;
  }
  OPSPEC_FAIL("device hash: unknown dtype");
}

// strided_layout: t's sizes and element strides with size-1 dims dropped and
// mergeable dims merged (tensor_hash.cc's coalesce).
cuda_hash::StridedLayout strided_layout(const Tensor& t) {
  SizeVec sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    const int64_t size = t.sizes()[d], stride = t.strides()[d];
    if (size == 1) continue;
    if (!sizes.empty() && strides.back() == stride * size) {
      sizes.back() *= size;
      strides.back() = stride;
    } else {
      sizes.push_back(size);
      strides.push_back(stride);
    }
  }
  OPSPEC_CHECK(static_cast<int>(sizes.size()) <= cuda_hash::kMaxDims, "device hash: tensor ", t.meta_str(),
               " has more than ", cuda_hash::kMaxDims, " non-mergeable dims");
  cuda_hash::StridedLayout l;
  l.ndim = static_cast<int>(sizes.size());
  for (int d = 0; d < l.ndim; ++d) {
    l.sizes[d] = sizes[d];
    l.strides[d] = strides[d];
  }
  return l;
}

// ContiguousData: t's elements in logical order in device memory: in place,
// or gathered into scratch (also when align8 and the data is misaligned).
class ContiguousData {
 public:
  ContiguousData(const Tensor& t, bool align8)
      : scratch_(needs_copy(t, align8) ? static_cast<size_t>(t.nbytes()) : 0, t) {
    if (!needs_copy(t, align8)) {
      data_ = t.raw_data();
    } else if (t.is_contiguous()) {
      check(cudaMemcpyAsync(scratch_.get<void>(), t.raw_data(), static_cast<size_t>(t.nbytes()),
                            cudaMemcpyDeviceToDevice, nullptr),
            "cudaMemcpyAsync", t);
      data_ = scratch_.get<void>();
    } else {
      check(cuda_hash::launch_gather(t.raw_data(), scratch_.get<void>(), t.numel(), static_cast<int>(t.element_size()),
                                     strided_layout(t), nullptr),
            "gather", t);
      data_ = scratch_.get<void>();
    }
  }
  const void* data() const { return data_; }

 private:
  static bool needs_copy(const Tensor& t, bool align8) {
    return !t.is_contiguous() || (align8 && reinterpret_cast<uintptr_t>(t.raw_data()) % 8 != 0);
  }
  Scratch scratch_;
  const void* data_ = nullptr;
};

template <class T>
std::vector<T> to_host(const T* device, size_t n, const Tensor& t) {
  std::vector<T> host(n);
  check(cudaMemcpyAsync(host.data(), device, n * sizeof(T), cudaMemcpyDeviceToHost, nullptr), "cudaMemcpyAsync", t);
  check(cudaStreamSynchronize(nullptr), "cudaStreamSynchronize", t);
  return host;
}

}  // namespace

double cuda_norm_hash(const Tensor& t) {
  check_device_tensor(t, "norm_hash");
  if (t.numel() == 0) return 0.0;
  cuda::DeviceGuard guard(t.device());
  const ContiguousData data(t, /*align8=*/false);
  const int64_t nchunks = (t.numel() + cuda_hash::kChunkElems - 1) / cuda_hash::kChunkElems;
  const Scratch partials(static_cast<size_t>(nchunks) * sizeof(double), t);
  check(cuda_hash::launch_norm_partials(data.data(), elem_kind(t.dtype()), t.numel(), partials.get<double>(), nullptr),
        "norm_hash", t);
  double sum = 0.0;
  for (const double p : to_host(partials.get<double>(), static_cast<size_t>(nchunks), t)) sum += p;
  return std::isnan(sum) ? std::numeric_limits<double>::quiet_NaN() : sum;
}

uint64_t cuda_xor_hash(const Tensor& t) {
  check_device_tensor(t, "xor_hash");
  if (t.numel() == 0) return 0;
  cuda::DeviceGuard guard(t.device());
  const ContiguousData data(t, /*align8=*/false);
  const Scratch result(sizeof(uint64_t), t);
  check(cudaMemsetAsync(result.get<uint64_t>(), 0, sizeof(uint64_t), nullptr), "cudaMemsetAsync", t);
  check(cuda_hash::launch_xor(data.data(), elem_kind(t.dtype()), t.numel(), result.get<uint64_t>(), nullptr),
        "xor_hash", t);
  return to_host(result.get<uint64_t>(), 1, t)[0];
}

uint64_t cuda_bitwise_hash(const Tensor& t) {
  check_device_tensor(t, "bitwise_hash");
  const uint64_t seed = bitwise_seed(t);
  if (t.numel() == 0) return combine_slice_hashes(nullptr, 0, seed);
  cuda::DeviceGuard guard(t.device());
  const ContiguousData data(t, /*align8=*/true);
  const int64_t nbytes = t.nbytes();
  const int64_t nslices = (nbytes + cuda_hash::kSliceBytes - 1) / cuda_hash::kSliceBytes;
  const Scratch scratch(static_cast<size_t>(cuda_hash::bitwise_scratch_words(nbytes)) * sizeof(uint64_t), t);
  const Scratch hashes(static_cast<size_t>(nslices) * sizeof(uint64_t), t);
  check(cuda_hash::launch_bitwise_slices(data.data(), nbytes, seed, scratch.get<uint64_t>(), hashes.get<uint64_t>(),
                                         nullptr),
        "bitwise_hash", t);
  const std::vector<uint64_t> digests = to_host(hashes.get<uint64_t>(), static_cast<size_t>(nslices), t);
  return combine_slice_hashes(digests.data(), nslices, seed);
}

}  // namespace opspec::internal
