// Device tensor hashes against the harness's CPU hashes of the same data.
// The seed and slice-combination steps run without a GPU; the rest skip.
#include "runtime/core/bitwise_hash_format.h"
#include "kernels/cuda/hash.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "harness/tensor_hash.h"
#include "kernels/cuda/cuda_test_util.h"
#include "runtime/core/generator.h"
#include "runtime/ops/ops.h"

namespace opspec::internal {
namespace cuda_hash_test {

constexpr DType kAllDTypes[] = {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16,
                                DType::kInt64,   DType::kInt32,   DType::kBool};


// sample: a tensor of dtype with varied values (negative, fractional, zero).
Tensor sample(IntArrayRef sizes, DType dtype) {
  Tensor t = ops::mul(ops::randn(sizes), 100.0);
  if (dtype == DType::kBool) return ops::gt(t, 0.0);
  return ops::to(t, dtype);
}

TEST(CudaHashTest, BitwiseSeedIsTheHarnesss) {
  manual_seed(1);
  for (DType d : kAllDTypes) {
    for (const SizeVec& sizes : {SizeVec{}, SizeVec{1}, SizeVec{3, 5}, SizeVec{2, 1, 4}}) {
      const Tensor t = ops::contiguous(sample(sizes, d));
      EXPECT_EQ(XXH3_64bits_withSeed(t.raw_data(), static_cast<size_t>(t.nbytes()), bitwise_seed(t)),
                bitwise_hash(t))
          << t.meta_str();
    }
  }
}

TEST(CudaHashTest, SliceDigestsCombineAsTheHarnessDoes) {
  manual_seed(2);
  // 2.5 MiB of f32: two full slices and a half one; and an empty tensor.
  const Tensor t = sample({5 * (1 << 17)}, DType::kFloat32);
  const uint64_t seed = bitwise_seed(t);
  std::vector<uint64_t> digests;
  const char* bytes = static_cast<const char*>(t.raw_data());
  for (int64_t at = 0; at < t.nbytes(); at += cuda_hash::kSliceBytes) {
    const int64_t n = std::min(cuda_hash::kSliceBytes, t.nbytes() - at);
    digests.push_back(XXH3_64bits_withSeed(bytes + at, static_cast<size_t>(n), seed));
  }
  ASSERT_EQ(digests.size(), 3u);
  EXPECT_EQ(combine_slice_hashes(digests.data(), 3, seed), bitwise_hash(t));
  const Tensor empty = make_tensor({0, 3}, DType::kInt32, kCPU);
  EXPECT_EQ(combine_slice_hashes(nullptr, 0, bitwise_seed(empty)), bitwise_hash(empty));
  EXPECT_EQ(bitwise_seed(make_tensor({3, 2}, DType::kFloat32, kCPU)) ==
                bitwise_seed(make_tensor({2, 3}, DType::kFloat32, kCPU)),
            false);
}

// The bitwise kernels' per-thread work run on the host thread by thread, as
// the two kernels run it: every slice digest must be XXH3 of the slice.
TEST(CudaHashTest, BitwiseKernelStepsOnTheHostGiveXxh3OfEachSlice) {
  constexpr uint8_t kDefaultSecret[xxh3::kSecretSize] = {OPSPEC_XXH3_SECRET_BYTES};
  std::mt19937_64 rng(5);
  std::vector<uint64_t> words((int64_t{3} << 20) / 8);
  for (uint64_t& w : words) w = rng();
  const auto* bytes = reinterpret_cast<const uint8_t*>(words.data());
  for (int64_t nbytes : {int64_t{1}, int64_t{240}, int64_t{241}, int64_t{5000}, int64_t{1} << 20,
                         (int64_t{1} << 20) + 100, (int64_t{1} << 20) + 241, (int64_t{3} << 20) - 7}) {
    const uint64_t seed = rng();
    const int64_t nslices = (nbytes + cuda_hash::kSliceBytes - 1) / cuda_hash::kSliceBytes;
    std::vector<uint64_t> sums(static_cast<size_t>(cuda_hash::bitwise_scratch_words(nbytes)), 0xdeadbeef);
    for (int64_t slot = 0; slot < nslices * cuda_hash::kBlocksPerSlice; ++slot) {
      for (int lane = 0; lane < xxh3::kLanes; ++lane) {
        uint64_t sum = 0;
        if (cuda_hash::slot_lane_sum(words.data(), nbytes, slot, lane, seed, kDefaultSecret, &sum)) {
          sums[static_cast<size_t>(slot * xxh3::kLanes + lane)] = sum;
        }
      }
    }
    uint8_t secret[xxh3::kSecretSize];
    xxh3::init_custom_secret(secret, kDefaultSecret, seed);
    for (int64_t slice = 0; slice < nslices; ++slice) {
      const int64_t len = cuda_hash::slice_len(nbytes, slice);
      uint64_t lanes[xxh3::kLanes] = {};
      if (len > xxh3::kMidSizeMax) {
        for (int lane = 0; lane < xxh3::kLanes; ++lane) {
          lanes[lane] = cuda_hash::slice_lane_acc(bytes, nbytes, slice, lane, secret, sums.data());
        }
      }
      EXPECT_EQ(cuda_hash::slice_digest(lanes, bytes, nbytes, slice, seed, secret, kDefaultSecret),
                XXH3_64bits_withSeed(bytes + slice * cuda_hash::kSliceBytes, static_cast<size_t>(len), seed))
          << "nbytes " << nbytes << " slice " << slice;
    }
  }
}

TEST(CudaHashTest, NonCudaTensorsAreRejected) {
  const Tensor t = make_tensor({2}, DType::kFloat32, kCPU);
  EXPECT_THROW(cuda_norm_hash(t), Error);
  EXPECT_THROW(cuda_xor_hash(t), Error);
  EXPECT_THROW(cuda_bitwise_hash(t), Error);
}

// expect_same_hashes: the device hashes of t's copy on cuda equal the CPU hashes of view(t).
void expect_same_hashes(const Tensor& cpu, const Tensor& cuda) {
  SCOPED_TRACE(cpu.meta_str());
  const double norm = cuda_norm_hash(cuda);
  const double want = norm_hash(cpu);
  if (std::isnan(want)) {
    EXPECT_TRUE(std::isnan(norm));
  } else {
    EXPECT_EQ(std::bit_cast<uint64_t>(norm), std::bit_cast<uint64_t>(want)) << norm << " vs " << want;
  }
  EXPECT_EQ(cuda_xor_hash(cuda), xor_hash(cpu));
  EXPECT_EQ(cuda_bitwise_hash(cuda), bitwise_hash(cpu));
}

Tensor to_cuda(const Tensor& t) { return ops::to(t, Device(DeviceType::kCUDA, 0)); }

TEST(CudaHashTest, MatchTheCpuHashesForEveryDTypeAndLayout) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(3);
  for (DType d : kAllDTypes) {
    // Contiguous (one chunk, several chunks, several bitwise slices), empty, one element.
    for (const SizeVec& sizes : {SizeVec{}, SizeVec{0}, SizeVec{7}, SizeVec{300, 301}, SizeVec{3, 1 << 19}}) {
      const Tensor t = sample(sizes, d);
      expect_same_hashes(t, to_cuda(t));
    }
    // Views of one device tensor: transposed, sliced at an odd offset, expanded.
    const Tensor base = sample({257, 129}, d);
    const Tensor dev = to_cuda(base);
    expect_same_hashes(ops::t(base), ops::t(dev));
    expect_same_hashes(ops::slice(base, 1, 1, 128, 3), ops::slice(dev, 1, 1, 128, 3));
    expect_same_hashes(ops::expand(ops::slice(base, 0, 5, 6), {4096, 129}),
                       ops::expand(ops::slice(dev, 0, 5, 6), {4096, 129}));
  }
}

TEST(CudaHashTest, BitwiseSliceTailsAndMisalignedData) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  manual_seed(4);
  // b8 lengths whose last slice is empty-ish, short (<= 240 bytes) or long.
  for (int64_t n : {int64_t{1} << 20, (int64_t{1} << 20) + 1, (int64_t{1} << 20) + 240, (int64_t{1} << 20) + 241,
                    (int64_t{3} << 20) - 7}) {
    const Tensor t = sample({n}, DType::kBool);
    expect_same_hashes(t, to_cuda(t));
  }
  // A contiguous view starting 1 byte (one b8 element) into its storage.
  const Tensor t = sample({5000}, DType::kBool);
  const Tensor dev = to_cuda(t);
  expect_same_hashes(ops::slice(t, 0, 1, 5000), ops::slice(dev, 0, 1, 5000));
}

TEST(CudaHashTest, SpecialValues) {
  OPSPEC_SKIP_WITHOUT_CUDA();
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  for (DType d : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16}) {
    const Tensor t = ops::to(ops::tensor({0.0, -0.0, 1e-40, -3.5, 65504.0, 1e30}, {6}), d);
    expect_same_hashes(t, to_cuda(t));
    const Tensor with_inf = ops::to(ops::tensor({1.0f, inf, -inf}, {3}), d);
    expect_same_hashes(with_inf, to_cuda(with_inf));
    const Tensor with_nan = ops::to(ops::tensor({1.0f, nan, -2.0f}, {3}), d);
    expect_same_hashes(with_nan, to_cuda(with_nan));
  }
  // i64 values that float32 rounds (norm) and whose high bits matter (xor).
  const Tensor big = make_tensor({3}, DType::kInt64, kCPU);
  big.data_ptr<int64_t>()[0] = (int64_t{1} << 62) + 1;
  big.data_ptr<int64_t>()[1] = -(int64_t{1} << 40) - 3;
  big.data_ptr<int64_t>()[2] = 0;
  expect_same_hashes(big, to_cuda(big));
}

}  // namespace
}  // namespace opspec::internal
