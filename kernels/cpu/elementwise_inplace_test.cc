// In-place elementwise ops, copy_/clone/_to_copy, Meta kernels and the error
// messages of the elementwise family.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/device_hooks.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/ops/ops.h"

namespace opspec {
namespace elementwise_inplace_test {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

std::vector<double> values(const Tensor& t) { return t.to_vector<double>(); }

Tensor meta(IntArrayRef sizes, DType dtype = DType::kFloat32) { return internal::make_tensor(sizes, dtype, kMeta); }

// The .Scalar overloads, called directly (ops:: wraps scalars into .Tensor calls).
using ScalarAlphaSig = Tensor(const Tensor&, const Scalar&, const Scalar&);
using ScalarSig = Tensor(const Tensor&, const Scalar&);
const TypedOp<ScalarAlphaSig>& add_scalar() {
  static const TypedOp<ScalarAlphaSig> op("aten::add.Scalar");
  return op;
}
const TypedOp<ScalarAlphaSig>& sub_scalar() {
  static const TypedOp<ScalarAlphaSig> op("aten::sub.Scalar");
  return op;
}

TEST(ElementwiseScalarOverloadTest, ScalarOverloadsPromoteLikeWrappedNumbers) {
  const Tensor i = ops::tensor({1, 2}, {2}, DType::kInt32);
  const Tensor r = add_scalar()(i, Scalar(2.5), Scalar(1));
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_THAT(values(r), ElementsAre(3.5, 4.5));
  EXPECT_EQ(add_scalar()(i, Scalar(2), Scalar(3)).dtype(), DType::kInt32);
  EXPECT_THAT(values(add_scalar()(i, Scalar(2), Scalar(3))), ElementsAre(7, 8));
  EXPECT_THAT(values(sub_scalar()(i, Scalar(1), Scalar(1))), ElementsAre(0, 1));
  const TypedOp<ScalarSig> mul_s("aten::mul.Scalar"), div_s("aten::div.Scalar"), lt_s("aten::lt.Scalar"),
      pow_s("aten::pow.Tensor_Scalar");
  EXPECT_THAT(values(mul_s(i, Scalar(3))), ElementsAre(3, 6));
  EXPECT_EQ(div_s(i, Scalar(2)).dtype(), DType::kFloat32);
  EXPECT_THAT(values(div_s(i, Scalar(2))), ElementsAre(0.5, 1));
  EXPECT_THAT(values(lt_s(i, Scalar(1.5))), ElementsAre(1, 0));
  EXPECT_THAT(values(pow_s(i, Scalar(2))), ElementsAre(1, 4));
  // Meta tensors take the .Scalar overloads too.
  EXPECT_EQ(add_scalar()(meta({2}, DType::kFloat16), Scalar(2.5), Scalar(1)).dtype(), DType::kFloat16);
}

// ---- In-place ----

TEST(ElementwiseInplaceTest, AddMulDivWriteIntoSelfAndBumpVersion) {
  Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2});
  const uint64_t v0 = x.impl()->version();
  Tensor& r = ops::add_(x, ops::tensor({10, 20}, {2}), 2);
  EXPECT_TRUE(r.is_same(x));
  EXPECT_THAT(values(x), ElementsAre(21, 42, 23, 44));
  EXPECT_GT(x.impl()->version(), v0);
  ops::mul_(x, ops::tensor({2, 0}, {2, 1}));
  EXPECT_THAT(values(x), ElementsAre(42, 84, 0, 0));
  ops::div_(x, 4);
  EXPECT_THAT(values(x), ElementsAre(10.5, 21, 0, 0));
  EXPECT_EQ(x.dtype(), DType::kFloat32);
  ops::div_(x, ops::tensor({2, -4}, {2}));  // aten::div_.Tensor, broadcast over rows
  EXPECT_THAT(values(x), ElementsAre(5.25, -5.25, 0, 0));
}

TEST(ElementwiseInplaceTest, WritesThroughStridedViews) {
  Tensor base = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor view = ops::t(base);  // [3, 2], strides [1, 3]
  ops::add_(view, ops::tensor({100, 200}, {2}));
  EXPECT_THAT(values(base), ElementsAre(101, 102, 103, 204, 205, 206));
  Tensor col = ops::slice(base, 1, 1, 2);  // middle column
  ops::mul_(col, ops::tensor({0}, {1}, DType::kInt64));
  EXPECT_THAT(values(base), ElementsAre(101, 0, 103, 204, 0, 206));
  Tensor h = ops::tensor({1, 2, 3, 4}, {2, 2}, DType::kFloat16);
  Tensor ht = ops::t(h);
  ops::div_(ht, 8);
  EXPECT_THAT(values(h), ElementsAre(0.125, 0.25, 0.375, 0.5));
}

TEST(ElementwiseInplaceTest, ComputesInPromotedDtypeThenCasts) {
  Tensor f = ops::tensor({1, 2}, {2});
  ops::add_(f, ops::tensor({0.1, 0.2}, {2}, DType::kFloat64));
  EXPECT_EQ(f.dtype(), DType::kFloat32);
  EXPECT_EQ(values(f)[0], static_cast<double>(static_cast<float>(1.0 + 0.1)));
  Tensor i = ops::tensor({1, 2}, {2}, DType::kInt32);
  ops::add_(i, ops::tensor({5, 6}, {2}, DType::kInt64));
  EXPECT_EQ(i.dtype(), DType::kInt32);
  EXPECT_THAT(values(i), ElementsAre(6, 8));
  ops::mul_(i, ops::tensor({1, 0}, {2}, DType::kBool));
  EXPECT_THAT(values(i), ElementsAre(6, 0));
}

TEST(ElementwiseInplaceTest, AliasedOperands) {
  Tensor x = ops::tensor({1, 2, 3, 4}, {2, 2});
  ops::add_(x, x);
  EXPECT_THAT(values(x), ElementsAre(2, 4, 6, 8));
  ops::mul_(x, x);
  EXPECT_THAT(values(x), ElementsAre(4, 16, 36, 64));
  // Partially overlapping operands are refused as PyTorch refuses them
  // (runtime/ops/memory_overlap_test.cc has the cases).
  Tensor y = ops::tensor({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT([&] { ops::add_(y, ops::t(y)); }, ThrowsMessage<Error>(HasSubstr("single memory location")));
  EXPECT_THAT(values(y), ElementsAre(1, 2, 3, 4));
}

TEST(ElementwiseInplaceTest, Errors) {
  Tensor l = ops::tensor({1, 2}, {2}, DType::kInt64);
  EXPECT_THAT([&] { ops::div_(l, 2); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::div_"),
                                         HasSubstr("result type Float can't be cast to the desired output type Long"))));
  EXPECT_THAT([&] { ops::div_(l, ops::tensor({2, 4}, {2}, DType::kInt64)); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::div_"),
                                         HasSubstr("result type Float can't be cast to the desired output type Long"))));
  EXPECT_THAT([&] { ops::add_(l, ops::tensor({0.5}, {1})); },
              ThrowsMessage<Error>(HasSubstr("result type Float can't be cast to the desired output type Long")));
  Tensor b = ops::tensor({1, 0}, {2}, DType::kBool);
  EXPECT_THAT([&] { ops::add_(b, l); },
              ThrowsMessage<Error>(HasSubstr("result type Long can't be cast to the desired output type Bool")));
  Tensor small = ops::tensor({1, 2}, {2});
  EXPECT_THAT([&] { ops::add_(small, ops::tensor({1, 2, 3, 4}, {2, 2})); },
              ThrowsMessage<Error>(HasSubstr("aten::add_: output with shape [2] doesn't match the broadcast shape [2, 2]")));
  EXPECT_THAT([&] { ops::add_(l, l, 1.5); },
              ThrowsMessage<Error>(HasSubstr("For integral input tensors, argument alpha must not be a floating point number.")));
  Tensor expanded = ops::expand(ops::tensor({1}, {1}), {3});
  EXPECT_THAT([&] { ops::mul_(expanded, ops::tensor({2}, {1})); },
              ThrowsMessage<Error>(HasSubstr("more than one element of the written-to tensor refers to a single memory location")));
  EXPECT_EQ(values(l)[0], 1);  // failed ops wrote nothing
}

// sub_ runs PyTorch's sub_check as sub does: no bool operand, on every backend.
TEST(ElementwiseInplaceTest, SubOfBoolIsRefused) {
  Tensor b = ops::tensor({1, 0, 1}, {3}, DType::kBool);
  const Tensor c = ops::tensor({1, 1, 0}, {3}, DType::kBool);
  EXPECT_THAT([&] { ops::sub_(b, c); },
              ThrowsMessage<Error>(AllOf(HasSubstr("aten::sub_"),
                                         HasSubstr("Subtraction, the `-` operator, with two bool tensors is not "
                                                   "supported. Use the `^` or `logical_xor()` operator instead."))));
  Tensor f = ops::tensor({1.5, 0, 1}, {3});
  EXPECT_THAT([&] { ops::sub_(f, c); },
              ThrowsMessage<Error>(HasSubstr("Subtraction, the `-` operator, with a bool tensor is not supported. If "
                                             "you are trying to invert a mask, use the `~` or `logical_not()` "
                                             "operator instead.")));
  EXPECT_THAT(values(f), ElementsAre(1.5, 0, 1));
  Tensor mf = meta({3});
  EXPECT_THAT([&] { ops::sub_(mf, meta({3}, DType::kBool)); },
              ThrowsMessage<Error>(HasSubstr("with a bool tensor is not supported")));
  ops::add_(f, c);  // add_ takes bool operands
  EXPECT_THAT(values(f), ElementsAre(2.5, 1, 1));
}

TEST(ElementwiseInplaceTest, MetaSelf) {
  Tensor m = meta({2, 3});
  const uint64_t v0 = m.impl()->version();
  EXPECT_TRUE(ops::add_(m, meta({3}, DType::kInt64)).is_same(m));
  EXPECT_GT(m.impl()->version(), v0);
  Tensor ml = meta({2}, DType::kInt64);
  EXPECT_THAT([&] { ops::div_(ml, 2); }, ThrowsMessage<Error>(HasSubstr("can't be cast to the desired output type Long")));
  EXPECT_THAT([&] { ops::mul_(m, meta({4})); }, ThrowsMessage<Error>(HasSubstr("must match the size")));
}

// ---- Copies ----

TEST(ElementwiseCopyOpsTest, CopyBroadcastsAndConverts) {
  Tensor dst = ops::tensor({0, 0, 0, 0, 0, 0}, {2, 3}, DType::kInt32);
  ops::copy_(dst, ops::tensor({1.9, -2.9, 3}, {3}));
  EXPECT_THAT(values(dst), ElementsAre(1, -2, 3, 1, -2, 3));
  Tensor tv = ops::t(dst);
  ops::copy_(tv, ops::tensor({7, 8}, {2}, DType::kFloat16));
  EXPECT_THAT(values(dst), ElementsAre(7, 7, 7, 8, 8, 8));
  EXPECT_THAT([&] { ops::copy_(dst, ops::tensor({1, 2}, {2})); }, ThrowsMessage<Error>(HasSubstr("aten::copy_")));
  EXPECT_THAT([&] { ops::copy_(dst, ops::tensor({1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}, {2, 2, 3})); },
              ThrowsMessage<Error>(HasSubstr("doesn't match the broadcast shape [2, 2, 3]")));
}

TEST(ElementwiseCopyOpsTest, CopyAcrossMetaAndCpu) {
  Tensor cpu = ops::tensor({1, 2}, {2});
  Tensor m = meta({2});
  EXPECT_THAT([&] { ops::copy_(cpu, m); }, ThrowsMessage<Error>(HasSubstr("Cannot copy out of meta tensor; no data!")));
  EXPECT_TRUE(ops::copy_(m, cpu).is_same(m));  // into meta: nothing to write
  EXPECT_THAT([&] { ops::copy_(m, ops::tensor({1, 2, 3}, {3})); }, ThrowsMessage<Error>(HasSubstr("must match")));
}

TEST(ElementwiseCopyOpsTest, CloneKeepsTheLayoutAndIsIndependent) {
  const Tensor x = ops::tensor({1, 2, 3, 4, 5, 6}, {2, 3}, DType::kBFloat16);
  const Tensor c = ops::clone(ops::t(x));
  EXPECT_THAT(c.strides(), ElementsAre(1, 3));  // preserve_format: torch's x.t().clone().stride() == (1, 3)
  EXPECT_FALSE(c.is_alias_of(x));
  EXPECT_EQ(c.dtype(), DType::kBFloat16);
  EXPECT_THAT(c.sizes(), ElementsAre(3, 2));
  EXPECT_THAT(values(c), ElementsAre(1, 4, 2, 5, 3, 6));
  const Tensor mc = ops::clone(meta({4, 5}, DType::kInt32));
  EXPECT_TRUE(mc.device().is_meta());
  EXPECT_EQ(mc.dtype(), DType::kInt32);
  EXPECT_THAT(mc.sizes(), ElementsAre(4, 5));
}

TEST(ElementwiseCopyOpsTest, ToCopyChangesDtypeAndDevice) {
  const Tensor x = ops::tensor({1.5, -2.5, 0}, {3});
  const Tensor i = ops::_to_copy(x, {.dtype = DType::kInt64, .device = std::nullopt});
  EXPECT_EQ(i.dtype(), DType::kInt64);
  EXPECT_THAT(values(i), ElementsAre(1, -2, 0));
  const Tensor b = ops::_to_copy(ops::slice(x, 0, 0, 3, 2), {.dtype = DType::kBool, .device = std::nullopt});
  EXPECT_THAT(values(b), ElementsAre(1, 0));
  const Tensor same = ops::_to_copy(x);
  EXPECT_FALSE(same.is_alias_of(x));
  EXPECT_THAT(values(same), ElementsAre(1.5, -2.5, 0));
  const Tensor m = ops::_to_copy(x, {.dtype = DType::kFloat16, .device = kMeta});
  EXPECT_TRUE(m.device().is_meta());
  EXPECT_EQ(m.dtype(), DType::kFloat16);
  const Tensor mm = ops::_to_copy(m, {.dtype = DType::kInt32, .device = std::nullopt});
  EXPECT_TRUE(mm.device().is_meta());
  EXPECT_EQ(mm.dtype(), DType::kInt32);
  EXPECT_THAT([&] { ops::_to_copy(m, {.dtype = std::nullopt, .device = kCPU}); },
              ThrowsMessage<Error>(HasSubstr("Cannot copy out of meta tensor; no data!")));
  // Without a GPU (or a CUDA build), a copy to cuda names what is missing.
  const DeviceHooks& cuda = get_device_hooks(DeviceType::kCUDA);
  if (!cuda.is_available()) {
    EXPECT_THAT([&] { ops::_to_copy(x, {.dtype = std::nullopt, .device = Device(DeviceType::kCUDA)}); },
                ThrowsMessage<Error>(HasSubstr(std::string(cuda.is_built() ? kNoCudaDeviceMessage : kNoCudaBackendMessage))));
  }
}

// ---- Meta kernels ----

TEST(ElementwiseMetaTest, OutputsHaveShapeDtypeAndNoData) {
  const Tensor a = meta({3, 1}, DType::kInt64);
  const Tensor b = meta({1, 4}, DType::kFloat16);
  const Tensor s = ops::add(a, b);
  EXPECT_TRUE(s.device().is_meta());
  EXPECT_THAT(s.sizes(), ElementsAre(3, 4));
  EXPECT_EQ(s.dtype(), DType::kFloat16);
  EXPECT_EQ(ops::div(a, a).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::sub(a, 2.5).dtype(), DType::kFloat32);
  EXPECT_EQ(ops::rsub(a, 2).dtype(), DType::kInt64);
  EXPECT_EQ(ops::mul(a, true).dtype(), DType::kInt64);
  EXPECT_EQ(ops::pow(a, 2).dtype(), DType::kInt64);
  EXPECT_EQ(ops::pow(a, b).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::maximum(a, b).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::minimum(a, a).dtype(), DType::kInt64);
  for (const Tensor& c : {ops::eq(a, b), ops::ne(a, 1), ops::lt(a, b), ops::le(a, 1.5), ops::gt(b, a), ops::ge(a, a),
                          ops::logical_and(a, b), ops::logical_or(a, b)}) {
    EXPECT_TRUE(c.device().is_meta());
    EXPECT_EQ(c.dtype(), DType::kBool);
  }
  EXPECT_THAT(ops::eq(a, b).sizes(), ElementsAre(3, 4));
  const Tensor w = ops::where(meta({2, 1, 1}, DType::kBool), a, 0.5);
  EXPECT_THAT(w.sizes(), ElementsAre(2, 3, 1));
  EXPECT_EQ(w.dtype(), DType::kFloat32);
  for (const Tensor& u : {ops::sin(a), ops::cos(a), ops::exp(a), ops::log(a), ops::tanh(a), ops::sigmoid(a),
                          ops::sqrt(a), ops::rsqrt(a), ops::reciprocal(a), ops::erf(a)}) {
    EXPECT_TRUE(u.device().is_meta());
    EXPECT_EQ(u.dtype(), DType::kFloat32);
    EXPECT_THAT(u.sizes(), ElementsAre(3, 1));
  }
  // gelu and silu take floating self only, on Meta as on the CPU.
  EXPECT_THAT([&] { ops::gelu(a, "tanh"); },
              ThrowsMessage<Error>(HasSubstr("\"GeluKernelImpl\" not implemented for 'Long'")));
  EXPECT_THAT([&] { ops::silu(a); }, ThrowsMessage<Error>(HasSubstr("\"silu_meta\" not implemented for 'Long'")));
  EXPECT_EQ(ops::silu(b).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::neg(a).dtype(), DType::kInt64);
  EXPECT_EQ(ops::abs(b).dtype(), DType::kFloat16);
  EXPECT_EQ(ops::relu(a).dtype(), DType::kInt64);
  EXPECT_EQ(ops::logical_not(b).dtype(), DType::kBool);
  EXPECT_EQ(ops::sin(b).dtype(), DType::kFloat16);
}

TEST(ElementwiseMetaTest, WrappedNumbersAndZeroDimCpuTensorsMixWithMeta) {
  const Tensor m = meta({2}, DType::kFloat32);
  const Tensor scalar = ops::tensor({3}, {}, DType::kFloat64);  // 0-dim cpu
  const Tensor r = ops::mul(m, scalar);
  EXPECT_TRUE(r.device().is_meta());
  EXPECT_EQ(r.dtype(), DType::kFloat32);
  EXPECT_THAT([&] { ops::add(m, ops::tensor({1, 2}, {2})); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
  EXPECT_THAT([&] { ops::where(ops::tensor({1, 0}, {2}, DType::kBool), m, m); },
              ThrowsMessage<Error>(HasSubstr("Expected all tensors to be on the same device")));
}

// ---- Errors (CPU and Meta alike) ----

TEST(ElementwiseErrorTest, DtypeErrorsMatchPyTorch) {
  for (Device d : {kCPU, kMeta}) {
    const Tensor b = internal::make_tensor({2}, DType::kBool, d);
    const Tensor f = internal::make_tensor({2}, DType::kFloat32, d);
    const Tensor l = internal::make_tensor({2}, DType::kInt64, d);
    EXPECT_THAT([&] { ops::neg(b); },
                ThrowsMessage<Error>(HasSubstr("Negation, the `-` operator, on a bool tensor is not supported. If you "
                                               "are trying to invert a mask, use the `~` or `logical_not()` operator "
                                               "instead.")));
    EXPECT_THAT([&] { ops::relu(b); }, ThrowsMessage<Error>(HasSubstr("Boolean inputs not supported for relu")));
    // The refusing kernel is the device's: abs_cpu, or abs_meta for a meta tensor.
    EXPECT_THAT([&] { ops::abs(b); }, ThrowsMessage<Error>(HasSubstr(str_cat("\"abs_", device_type_name(d.type),
                                                                             "\" not implemented for 'Bool'"))));
    EXPECT_THAT([&] { ops::sub(b, b); },
                ThrowsMessage<Error>(HasSubstr("Subtraction, the `-` operator, with two bool tensors is not supported")));
    EXPECT_THAT([&] { ops::sub(f, b); },
                ThrowsMessage<Error>(HasSubstr("Subtraction, the `-` operator, with a bool tensor is not supported")));
    EXPECT_THAT([&] { ops::rsub(b, 1); },
                ThrowsMessage<Error>(AllOf(HasSubstr("aten::rsub"), HasSubstr("with a bool tensor is not supported"))));
    EXPECT_THAT([&] { ops::add(l, l, 2.5); },
                ThrowsMessage<Error>(HasSubstr("For integral input tensors, argument alpha must not be a floating "
                                               "point number.")));
    EXPECT_THAT([&] { ops::add(f, f, true); },
                ThrowsMessage<Error>(HasSubstr("Boolean alpha only supported for Boolean results.")));
    EXPECT_THAT([&] { ops::pow(l, -1); },
                ThrowsMessage<Error>(HasSubstr("Integers to negative integer powers are not allowed.")));
    EXPECT_THAT([&] { ops::pow(b, b); }, ThrowsMessage<Error>(HasSubstr("\"pow\" not implemented for 'Bool'")));
    EXPECT_THAT([&] { ops::where(l, f, f); },
                ThrowsMessage<Error>(HasSubstr("where expected condition to be a boolean tensor, but got a tensor "
                                               "with dtype Long")));
    EXPECT_THAT([&] { ops::gelu(f, "erf"); }, ThrowsMessage<Error>(HasSubstr("'erf'")));
  }
  // Allowed: float alpha for float results, bool alpha for bool results.
  EXPECT_THAT(values(ops::add(ops::tensor({1}, {1}, DType::kBool), ops::tensor({0}, {1}, DType::kBool), true)),
              ElementsAre(1));
  EXPECT_THAT(values(ops::pow(ops::tensor({2}, {1}), -1)), ElementsAre(0.5));
}

}  // namespace
}  // namespace opspec
