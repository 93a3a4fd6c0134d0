// tensor_hash.h: the tensor hash functions DebugMode.log_tensor_hashes uses
// ("norm", "hash_tensor") plus a bit-exact "bitwise" hash. They read tensor
// data directly, never through the dispatcher, so modes never record them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "runtime/core/tensor.h"

namespace opspec {

// HashKind: which hash function to apply to a tensor.
enum class HashKind : uint8_t { kNorm, kHashTensor, kBitwise };

// hash_kind_name: "norm", "hash_tensor", "bitwise" (the names DebugMode's hash_fn accepts).
std::string_view hash_kind_name(HashKind k);

// parse_hash_kind: the inverse of hash_kind_name; nullopt if s names no kind.
std::optional<HashKind> parse_hash_kind(std::string_view s);

// HashValue: a float (norm) or an unsigned 64-bit integer (hash_tensor, bitwise).
struct HashValue {
  bool is_int = false;
  double f = 0.0;
  uint64_t u = 0;

  static HashValue of_float(double v);
  static HashValue of_int(uint64_t v);
  // as_double: f, or u converted to double.
  double as_double() const;
  // str: Python's repr of the value: format_double(f) ("2.0", "nan") or u in decimal.
  std::string str() const;
  // operator==: same kind and the same bits (so nan == nan, but 0.0 != -0.0).
  friend bool operator==(const HashValue& a, const HashValue& b);
};

// norm_hash: the L1 norm (sum of |x|) accumulated in float64, as DebugMode's
// norm_hash_fn computes it. Integer and bool values are rounded to float32
// first, as PyTorch's `.float()` does; NaN and inf propagate; empty gives 0.0.
// Deterministic whatever the strides or thread count. See Note [Tensor hash summation order].
double norm_hash(const Tensor& t);

// xor_hash: torch.hash_tensor (mode 0): the XOR over all elements of each
// element's 64-bit pattern after upcasting (floating → float64, integer and
// bool → int64); empty gives 0.
uint64_t xor_hash(const Tensor& t);

// bitwise_hash: XXH3-64 over the element bytes in logical row-major order,
// seeded with the dtype and shape; equal hashes mean bit-identical content
// whatever the strides. See Note [Bitwise tensor hash].
uint64_t bitwise_hash(const Tensor& t);

// compute_hash: the hash of kind `kind`, as a HashValue (float for norm).
HashValue compute_hash(const Tensor& t, HashKind kind);

// host_copy: t itself when its data is on the CPU, else a CPU tensor with
// t's sizes, strides and values, copied without dispatching (modes see
// nothing). For reading a device tensor's elements in a check.
Tensor host_copy(const Tensor& t);

}  // namespace opspec
