// bitwise_hash_format.h: the parts of bitwise_hash that every device computes the
// same way (See Note [Bitwise tensor hash] in harness/tensor_hash.cc): the seed
// from the tensor's dtype and sizes, and the final combination of its 1 MiB
// slices' XXH3 digests. The harness (CPU) and the CUDA backend both use it,
// so their hashes of the same data are equal by construction.
#pragma once

#include <xxhash.h>

#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/container/inlined_vector.h"
#include "runtime/core/tensor.h"

namespace opspec::internal {

// bitwise_seed: XXH3 of "<dtype short name>\0", then dim and each size as raw int64s.
inline uint64_t bitwise_seed(const Tensor& t) {
  const std::string_view name = dtype_short_name(t.dtype());
  absl::InlinedVector<char, 128> header(name.begin(), name.end());
  header.push_back('\0');
  auto put = [&](int64_t v) {
    char b[sizeof v];
    std::memcpy(b, &v, sizeof v);
    header.insert(header.end(), b, b + sizeof v);
  };
  put(t.dim());
  for (const int64_t s : t.sizes()) put(s);
  return XXH3_64bits(header.data(), header.size());
}

// combine_slice_hashes: bitwise_hash from the digests of its n slices: no
// bytes hashed for none, the slice's own digest for one, else XXH3 of the digests.
inline uint64_t combine_slice_hashes(const uint64_t* slice_hashes, int64_t n, uint64_t seed) {
  if (n == 0) return XXH3_64bits_withSeed(nullptr, 0, seed);
  if (n == 1) return slice_hashes[0];
  return XXH3_64bits_withSeed(slice_hashes, static_cast<size_t>(n) * sizeof(uint64_t), seed);
}

}  // namespace opspec::internal
