// Tests of norm_hash, xor_hash, bitwise_hash, compute_hash and HashValue.
#include "harness/tensor_hash.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xxhash.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "runtime/core/parallel.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace tensor_hash_test {

using internal::make_tensor;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint64_t kOneBits = 0x3FF0000000000000ull;  // the float64 pattern of 1.0

// i64_tensor: a contiguous i64 tensor holding values exactly (ops::tensor goes through double).
Tensor i64_tensor(const std::vector<int64_t>& values) {
  Tensor t = make_tensor({static_cast<int64_t>(values.size())}, DType::kInt64, kCPU);
  std::copy(values.begin(), values.end(), t.data_ptr<int64_t>());
  return t;
}

// bits: the float64 pattern of v.
uint64_t bits(double v) { return std::bit_cast<uint64_t>(v); }

// naive_norm: sum of |x| in long double, in logical order (a reference for large tensors).
double naive_norm(const Tensor& t) {
  long double s = 0;
  for (double v : t.to_vector<double>()) s += std::fabs(v);
  return static_cast<double>(s);
}

// rounding_values: f64 values with full 53-bit mantissas, so that the order of
// a sum shows in its last bits (sums of randn's f32-precision values in f64 are
// often exact in any order).
Tensor rounding_values(IntArrayRef shape) {
  return ops::exp(ops::randn(shape, {.dtype = DType::kFloat64}));
}

// ---- HashKind / HashValue ----

TEST(HashKindTest, NamesRoundTrip) {
  EXPECT_EQ(hash_kind_name(HashKind::kNorm), "norm");
  EXPECT_EQ(hash_kind_name(HashKind::kHashTensor), "hash_tensor");
  EXPECT_EQ(hash_kind_name(HashKind::kBitwise), "bitwise");
  for (HashKind k : {HashKind::kNorm, HashKind::kHashTensor, HashKind::kBitwise}) {
    EXPECT_EQ(parse_hash_kind(hash_kind_name(k)), k);
  }
  EXPECT_EQ(parse_hash_kind("sum"), std::nullopt);
  EXPECT_EQ(parse_hash_kind("Norm"), std::nullopt);
  EXPECT_EQ(parse_hash_kind(""), std::nullopt);
}

TEST(HashValueTest, StrIsPythonRepr) {
  EXPECT_EQ(HashValue::of_float(101.96126069501042).str(), "101.96126069501042");
  EXPECT_EQ(HashValue::of_float(2.0).str(), "2.0");
  EXPECT_EQ(HashValue::of_float(1e-05).str(), "1e-05");
  EXPECT_EQ(HashValue::of_float(kNaN).str(), "nan");
  EXPECT_EQ(HashValue::of_float(kInf).str(), "inf");
  EXPECT_EQ(HashValue::of_int(0).str(), "0");
  EXPECT_EQ(HashValue::of_int(4607182418800017408ull).str(), "4607182418800017408");
  EXPECT_EQ(HashValue::of_int(std::numeric_limits<uint64_t>::max()).str(), "18446744073709551615");
}

TEST(HashValueTest, EqualityIsBitwise) {
  EXPECT_EQ(HashValue::of_float(kNaN), HashValue::of_float(kNaN));
  EXPECT_EQ(HashValue::of_float(1.5), HashValue::of_float(1.5));
  EXPECT_FALSE(HashValue::of_float(0.0) == HashValue::of_float(-0.0));
  EXPECT_FALSE(HashValue::of_float(1.0) == HashValue::of_int(1));
  EXPECT_EQ(HashValue::of_int(7), HashValue::of_int(7));
  EXPECT_FALSE(HashValue::of_int(7) == HashValue::of_int(8));
  EXPECT_TRUE(HashValue::of_int(7).is_int);
  EXPECT_FALSE(HashValue::of_float(7).is_int);
  EXPECT_EQ(HashValue::of_int(7).as_double(), 7.0);
  EXPECT_EQ(HashValue::of_float(2.5).as_double(), 2.5);
}

// ---- norm ----

TEST(NormHashTest, HandComputedValues) {
  EXPECT_EQ(norm_hash(ops::tensor({1, -2, 3.5}, {3})), 6.5);
  EXPECT_EQ(norm_hash(ops::tensor({0.1, -0.2}, {2}, DType::kFloat64)), 0.1 + 0.2);
  EXPECT_EQ(norm_hash(ops::tensor({1, 2}, {2}, DType::kInt64)), 3.0);
  EXPECT_EQ(norm_hash(ops::tensor({-7, 2}, {2}, DType::kInt32)), 9.0);
  EXPECT_EQ(norm_hash(ops::tensor({1, 0, 1}, {3}, DType::kBool)), 2.0);
  // f16(0.1) = 0.0999755859375, 65504 is f16's max; widened exactly.
  EXPECT_EQ(norm_hash(ops::tensor({0.1, -65504, 0.5}, {3}, DType::kFloat16)), 0.0999755859375 + 65504.5);
  // bf16(0.1) = 0.10009765625.
  EXPECT_EQ(norm_hash(ops::tensor({0.1, -256, 1.5}, {3}, DType::kBFloat16)), 0.10009765625 + 257.5);
  // 0-dim.
  EXPECT_EQ(norm_hash(ops::scalar_tensor(-3.25, {.dtype = DType::kFloat64})), 3.25);
  // A float32 value is widened, not rounded through its decimal form.
  EXPECT_EQ(norm_hash(ops::tensor({0.1}, {1})), static_cast<double>(0.1f));
}

TEST(NormHashTest, IntegersGoThroughFloat32) {
  // PyTorch's norm_hash_fn calls .float() on non-floating tensors first.
  EXPECT_EQ(norm_hash(i64_tensor({(int64_t{1} << 53) + 1})), 9007199254740992.0);
  EXPECT_EQ(norm_hash(i64_tensor({16777217})), 16777216.0);
  EXPECT_EQ(norm_hash(ops::tensor({16777217}, {1}, DType::kInt32)), 16777216.0);
  EXPECT_EQ(norm_hash(i64_tensor({std::numeric_limits<int64_t>::min()})), 9223372036854775808.0);
}

TEST(NormHashTest, EmptyIsZero) {
  EXPECT_EQ(bits(norm_hash(ops::zeros({0}))), bits(0.0));
  EXPECT_EQ(bits(norm_hash(ops::zeros({3, 0}, {.dtype = DType::kInt64}))), bits(0.0));
}

TEST(NormHashTest, NanAndInfPropagate) {
  EXPECT_TRUE(std::isnan(norm_hash(ops::tensor({1, kNaN, 2}, {3}))));
  EXPECT_EQ(norm_hash(ops::tensor({kInf, -kInf}, {2})), kInf);  // |-inf| = inf, inf + inf = inf
  EXPECT_EQ(norm_hash(ops::tensor({1, -kInf}, {2}, DType::kFloat16)), kInf);
  EXPECT_EQ(norm_hash(ops::tensor({1, kInf}, {2}, DType::kBFloat16)), kInf);
  EXPECT_TRUE(std::isnan(norm_hash(ops::tensor({kNaN}, {1}, DType::kFloat16))));
}

TEST(NormHashTest, StridedViewsEqualTheirContiguousCopy) {
  const Tensor x = rounding_values({300, 70});
  const std::vector<Tensor> views = {
      ops::transpose(x, 0, 1),
      ops::slice(x, 1, 1, std::nullopt, 3),
      ops::slice(ops::transpose(x, 0, 1), 0, 5, 60, 2),
      ops::expand(ops::slice(x, 0, 0, 1), {40, 70}),
      ops::select(x, 1, 3),
  };
  for (const Tensor& v : views) {
    ASSERT_FALSE(v.is_contiguous()) << v.meta_str();
    EXPECT_EQ(bits(norm_hash(v)), bits(norm_hash(ops::contiguous(v)))) << v.meta_str();
    EXPECT_NEAR(norm_hash(v), naive_norm(v), 1e-12 * naive_norm(v)) << v.meta_str();
  }
  // The hash does not depend on the shape, only on the logical values.
  EXPECT_EQ(bits(norm_hash(x)), bits(norm_hash(ops::reshape(x, {70, 300}))));
}

TEST(NormHashTest, StridedAcrossManyChunksAndDtypes) {
  const Tensor x = rounding_values({600, 400});  // 240000 elements: several chunks
  for (DType dt : {DType::kFloat32, DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt32}) {
    const Tensor y = ops::to(ops::mul(x, 100.0), dt);
    const Tensor v = ops::transpose(y, 0, 1);
    EXPECT_EQ(bits(norm_hash(v)), bits(norm_hash(ops::contiguous(v)))) << dtype_short_name(dt);
    EXPECT_NEAR(norm_hash(v), naive_norm(v), 1e-9 * naive_norm(v)) << dtype_short_name(dt);
  }
  // Chunks spanning several sweeps of a transposed 3-d tensor, and a permute.
  const Tensor z = rounding_values({8, 300, 200});
  for (const Tensor& v : {ops::transpose(z, 1, 2), ops::permute(z, {2, 0, 1}), ops::permute(z, {1, 2, 0})}) {
    EXPECT_EQ(bits(norm_hash(v)), bits(norm_hash(ops::contiguous(v)))) << v.meta_str();
    EXPECT_EQ(xor_hash(v), xor_hash(ops::contiguous(v))) << v.meta_str();
    EXPECT_EQ(bitwise_hash(v), bitwise_hash(ops::contiguous(v))) << v.meta_str();
  }
  const Tensor e = ops::expand(ops::tensor({-1.5}, {1, 1}), {1000, 300});
  EXPECT_EQ(norm_hash(e), 450000.0);
  EXPECT_EQ(norm_hash(ops::expand(ops::tensor({1, 0, 1}, {3}, DType::kBool), {100000, 3})), 200000.0);
}

// ---- xor (torch.hash_tensor) ----

TEST(XorHashTest, HandComputedValues) {
  EXPECT_EQ(xor_hash(ops::ones({4})), 0u);
  EXPECT_EQ(xor_hash(ops::ones({5})), kOneBits);
  EXPECT_EQ(xor_hash(ops::ones({5}, {.dtype = DType::kFloat16})), kOneBits);
  EXPECT_EQ(xor_hash(ops::ones({3}, {.dtype = DType::kBFloat16})), kOneBits);
  EXPECT_EQ(xor_hash(ops::ones({4}, {.dtype = DType::kInt32})), 0u);
  EXPECT_EQ(xor_hash(ops::ones({5}, {.dtype = DType::kInt32})), 1u);
  EXPECT_EQ(xor_hash(ops::tensor({1, 2, 3}, {3}, DType::kInt64)), 0u);
  EXPECT_EQ(xor_hash(ops::tensor({1, 2}, {2}, DType::kInt64)), 3u);
  EXPECT_EQ(xor_hash(ops::tensor({-1}, {1}, DType::kInt32)), 0xFFFFFFFFFFFFFFFFull);  // sign-extended
  EXPECT_EQ(xor_hash(ops::tensor({1, 0, 1, 1}, {4}, DType::kBool)), 1u);
  EXPECT_EQ(xor_hash(ops::tensor({0.1}, {1})), bits(static_cast<double>(0.1f)));
  EXPECT_EQ(xor_hash(ops::tensor({0.1, 2.0}, {2}, DType::kFloat64)), bits(0.1) ^ bits(2.0));
  EXPECT_EQ(xor_hash(ops::tensor({-0.0}, {1})), 0x8000000000000000ull);
  EXPECT_EQ(xor_hash(ops::scalar_tensor(1.0)), kOneBits);
  EXPECT_EQ(xor_hash(ops::zeros({0, 2})), 0u);
}

TEST(XorHashTest, StridedViewsEqualTheirContiguousCopy) {
  const Tensor x = ops::randn({500, 300});
  for (const Tensor& v : {ops::transpose(x, 0, 1), ops::slice(x, 1, 0, std::nullopt, 7),
                          ops::expand(ops::slice(x, 0, 2, 3), {3, 300})}) {
    EXPECT_EQ(xor_hash(v), xor_hash(ops::contiguous(v))) << v.meta_str();
  }
  // An expanded row repeated an odd number of times hashes like the row itself.
  const Tensor row = ops::slice(x, 0, 2, 3);
  EXPECT_EQ(xor_hash(ops::expand(row, {3, 300})), xor_hash(row));
  EXPECT_EQ(xor_hash(ops::expand(row, {4, 300})), 0u);
}

// ---- bitwise ----

TEST(BitwiseHashTest, MatchesTheDocumentedDefinition) {
  // See Note [Bitwise tensor hash]: seed from "f32\0", ndim and sizes; XXH3 over the bytes.
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  std::string header("f32", 4);
  for (int64_t v : {int64_t{2}, int64_t{2}, int64_t{3}}) header.append(reinterpret_cast<const char*>(&v), 8);
  const uint64_t seed = XXH3_64bits(header.data(), header.size());
  EXPECT_EQ(bitwise_hash(x), XXH3_64bits_withSeed(x.raw_data(), 24, seed));

  // Over 1 MiB: XXH3 of the 1 MiB slices' hashes. 300000 f32 = 1.2 MB = 2 slices.
  const Tensor big = ops::randn({300000});
  std::string big_header("f32", 4);
  for (int64_t v : {int64_t{1}, int64_t{300000}}) big_header.append(reinterpret_cast<const char*>(&v), 8);
  const uint64_t big_seed = XXH3_64bits(big_header.data(), big_header.size());
  const char* data = static_cast<const char*>(big.raw_data());
  const uint64_t slices[2] = {XXH3_64bits_withSeed(data, 1 << 20, big_seed),
                              XXH3_64bits_withSeed(data + (1 << 20), 1200000 - (1 << 20), big_seed)};
  EXPECT_EQ(bitwise_hash(big), XXH3_64bits_withSeed(slices, sizeof slices, big_seed));
}

TEST(BitwiseHashTest, StridedViewsEqualTheirContiguousCopy) {
  const Tensor x = ops::randn({60, 70});
  for (const Tensor& v : {ops::transpose(x, 0, 1), ops::slice(x, 1, 1, std::nullopt, 3),
                          ops::expand(ops::slice(x, 0, 0, 1), {40, 70}), ops::select(x, 1, 5),
                          ops::slice(x, 0, 2, 50)}) {
    EXPECT_EQ(bitwise_hash(v), bitwise_hash(ops::contiguous(v))) << v.meta_str();
  }
  for (DType dt : {DType::kFloat64, DType::kFloat16, DType::kBFloat16, DType::kInt64, DType::kInt32, DType::kBool}) {
    const Tensor v = ops::transpose(ops::to(ops::mul(x, 10.0), dt), 0, 1);
    EXPECT_EQ(bitwise_hash(v), bitwise_hash(ops::contiguous(v))) << dtype_short_name(dt);
  }
}

TEST(BitwiseHashTest, LargeStridedViewsEqualTheirContiguousCopy) {
  // 700 x 800 f32 is 2.24 MB: several slices, and rows of a transposed view
  // straddle slice boundaries.
  const Tensor x = ops::randn({700, 800});
  const Tensor v = ops::transpose(x, 0, 1);
  EXPECT_EQ(bitwise_hash(v), bitwise_hash(ops::contiguous(v)));
  const Tensor s = ops::slice(x, 1, 0, 799);  // long contiguous runs that are not one block
  EXPECT_EQ(bitwise_hash(s), bitwise_hash(ops::contiguous(s)));
  const Tensor e = ops::expand(ops::slice(x, 0, 0, 1), {1000, 800});
  EXPECT_EQ(bitwise_hash(e), bitwise_hash(ops::contiguous(e)));
}

TEST(BitwiseHashTest, OneBitChangesTheHash) {
  Tensor x = ops::randn({64, 33});
  Tensor y = ops::clone(x);
  EXPECT_EQ(bitwise_hash(x), bitwise_hash(y));
  uint32_t* p = reinterpret_cast<uint32_t*>(y.data_ptr<float>());
  p[1000] ^= 1u;  // the lowest mantissa bit of one element
  EXPECT_NE(bitwise_hash(x), bitwise_hash(y));
  // norm may not see it (rounding), but xor does.
  EXPECT_NE(xor_hash(x), xor_hash(y));
  // -0.0 and 0.0 are different bits.
  EXPECT_NE(bitwise_hash(ops::tensor({0.0}, {1})), bitwise_hash(ops::tensor({-0.0}, {1})));
}

TEST(BitwiseHashTest, DtypeAndShapeAreHashed) {
  const uint64_t f32 = bitwise_hash(ops::zeros({4}));
  EXPECT_NE(f32, bitwise_hash(ops::zeros({4}, {.dtype = DType::kInt32})));  // same bytes, other dtype
  EXPECT_NE(f32, bitwise_hash(ops::zeros({2}, {.dtype = DType::kFloat64})));  // same bytes, other dtype
  EXPECT_NE(f32, bitwise_hash(ops::zeros({2, 2})));                          // same bytes, other shape
  const Tensor x = ops::randn({2, 3});
  EXPECT_NE(bitwise_hash(x), bitwise_hash(ops::reshape(x, {3, 2})));
  EXPECT_NE(bitwise_hash(x), bitwise_hash(ops::reshape(x, {6})));
  EXPECT_NE(bitwise_hash(ops::scalar_tensor(1.0)), bitwise_hash(ops::ones({1})));  // [] vs [1]
  EXPECT_NE(bitwise_hash(ops::zeros({0, 3})), bitwise_hash(ops::zeros({3, 0})));
  EXPECT_EQ(bitwise_hash(ops::zeros({0, 3})), bitwise_hash(ops::zeros({0, 3})));
}

// ---- large tensors: the parallel path ----

TEST(TensorHashTest, LargeTensorIsDeterministicAcrossThreadCounts) {
  const Tensor x = rounding_values({2048, 2048});  // 4M elements, 32 MB
  const Tensor xt = ops::transpose(ops::slice(x, 0, 0, 2000), 0, 1);
  double norm1, norm_t1;
  uint64_t bw1, bw_t1, xor1;
  {
    NumThreadsGuard one(1);
    norm1 = norm_hash(x);
    norm_t1 = norm_hash(xt);
    bw1 = bitwise_hash(x);
    bw_t1 = bitwise_hash(xt);
    xor1 = xor_hash(x);
  }
  {
    NumThreadsGuard two(2);
    EXPECT_EQ(bits(norm_hash(x)), bits(norm1));
    EXPECT_EQ(bits(norm_hash(xt)), bits(norm_t1));
    EXPECT_EQ(bitwise_hash(x), bw1);
    EXPECT_EQ(bitwise_hash(xt), bw_t1);
    EXPECT_EQ(xor_hash(x), xor1);
  }
  {
    NumThreadsGuard three(3);  // more threads than this test machine may have cores
    EXPECT_EQ(bits(norm_hash(x)), bits(norm1));
    EXPECT_EQ(bitwise_hash(x), bw1);
  }
  EXPECT_NEAR(norm1, naive_norm(x), 1e-12 * norm1);
  const Tensor xt_copy = ops::contiguous(xt);
  EXPECT_EQ(bits(norm_hash(xt_copy)), bits(norm_t1));
  EXPECT_EQ(bitwise_hash(xt_copy), bw_t1);
  EXPECT_NE(bw1, bw_t1);
}

// ---- errors ----

TEST(TensorHashTest, MetaTensorHasNoDataToHash) {
  const Tensor m = make_tensor({2, 3}, DType::kFloat32, kMeta);
  EXPECT_THAT([&] { norm_hash(m); }, ThrowsMessage<Error>(HasSubstr("norm_hash: tensor f32[2, 3]")));
  EXPECT_THAT([&] { norm_hash(m); }, ThrowsMessage<Error>(HasSubstr("has no data to hash (a meta tensor)")));
  EXPECT_THAT([&] { xor_hash(m); }, ThrowsMessage<Error>(HasSubstr("has no data to hash")));
  EXPECT_THAT([&] { bitwise_hash(m); }, ThrowsMessage<Error>(HasSubstr("has no data to hash")));
  for (HashKind k : {HashKind::kNorm, HashKind::kHashTensor, HashKind::kBitwise}) {
    EXPECT_THAT([&] { compute_hash(m, k); }, ThrowsMessage<Error>(HasSubstr("has no data to hash")));
  }
  // Even an empty meta tensor: there is nothing to read, but it is not data.
  EXPECT_THAT([&] { norm_hash(make_tensor({0}, DType::kFloat32, kMeta)); },
              ThrowsMessage<Error>(HasSubstr("has no data to hash")));
  EXPECT_THAT([&] { norm_hash(Tensor()); }, ThrowsMessage<Error>(HasSubstr("norm_hash: tensor is undefined")));
}

TEST(TensorHashTest, ComputeHashPicksTheKind) {
  const Tensor x = ops::tensor({1, -2, 3.5}, {3});
  EXPECT_EQ(compute_hash(x, HashKind::kNorm), HashValue::of_float(6.5));
  EXPECT_EQ(compute_hash(x, HashKind::kHashTensor), HashValue::of_int(xor_hash(x)));
  EXPECT_EQ(compute_hash(x, HashKind::kBitwise), HashValue::of_int(bitwise_hash(x)));
  EXPECT_EQ(compute_hash(ops::ones({5}), HashKind::kHashTensor).str(), "4607182418800017408");
  EXPECT_EQ(compute_hash(ops::tensor({1, 0, 1}, {3}, DType::kBool), HashKind::kNorm).str(), "2.0");
}

}  // namespace
}  // namespace opspec
