// elementwise_meta.cc: the Meta kernels of the elementwise ops: each runs the
// op's shape rule (runtime/ops/elementwise_rules.h) and returns a meta tensor.
#include "kernels/common/backward_meta.h"
#include "kernels/common/factory_meta.h"
#include "kernels/meta/elementwise_meta.h"

#include "runtime/dispatch/library.h"
#include "runtime/ops/elementwise_rules.h"

namespace opspec::internal {

namespace {

Tensor binary_out(const Tensor& a, const Tensor& b, BinaryKind kind, std::string_view op) {
  return meta_out(binary_meta(a, b, kind, op));
}

Tensor add_sub_out(const Tensor& a, const Tensor& b, const Scalar& alpha, bool sub, std::string_view op) {
  if (sub) check_sub(a, b, op);
  ElementwiseMeta m = binary_meta(a, b, BinaryKind::kArithmetic, op);
  check_alpha(m.result_dtype, alpha, op);
  return meta_out(m);
}

Tensor pow_out(const Tensor& self, const Tensor& exponent) {
  ElementwiseMeta m = binary_meta(self, exponent, BinaryKind::kArithmetic, "aten::pow");
  check_pow(m.result_dtype);
  return meta_out(m);
}

Tensor inplace_out(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op) {
  inplace_meta(self, other, kind, op);
  self.impl()->bump_version();
  return self;
}

Tensor copy_meta(const Tensor& self, const Tensor& src, bool non_blocking) {
  check_copy_shapes(self, src);
  OPSPEC_CHECK(self.device().is_meta() || !src.device().is_meta(), "aten::copy_: ", kMetaCopyError);
  OPSPEC_CHECK(self.device().is_meta(), "aten::copy_: cannot copy into a ", self.device().str(),
               " tensor from a meta tensor");
  check_copy_overlap(self, src);
  self.impl()->bump_version();
  return self;
}

Tensor to_copy_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<int64_t> memory_format) {
  const Device target = device.value_or(self.device());
  OPSPEC_CHECK(target.is_meta(), "aten::_to_copy: ", kMetaCopyError);
  // Laid out as the CPU's _to_copy (See Note [Memory formats]).
  const SizeVec strides = like_result_strides(self, memory_format, "aten::_to_copy");
  return make_tensor_with_strides(self.sizes(), strides, dtype.value_or(self.dtype()), kMeta);
}

}  // namespace

void register_elementwise_meta_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kMeta;
  // ---- Unary ----
#define OPSPEC_UNARY_META(name, kind)                                                         \
  lib.impl(#name, kKey, [](const Tensor& self) {                                              \
    return meta_out(unary_meta(self, UnaryKind::kind, "aten::" #name));                       \
  });
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary) OPSPEC_UNARY_META(name, dtype_rule)
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  // Their in-place forms (See Note [In-place unary ops]).
#define OPSPEC_UNARY_OP(name, functor, dtype_rule, summary)                 \
  lib.impl(#name "_", kKey, [](const Tensor& self) {                        \
    unary_inplace_meta(self, UnaryKind::dtype_rule, "aten::" #name "_");    \
    self.impl()->bump_version();                                            \
    return self;                                                            \
  });
#include "runtime/ops/unary_ops.def"
#undef OPSPEC_UNARY_OP
  OPSPEC_UNARY_META(logical_not, kLogical)
#undef OPSPEC_UNARY_META
  lib.impl("bitwise_not", kKey, [](const Tensor& self) { return meta_out(bitwise_not_meta(self)); });
  lib.impl("gelu", kKey, [](const Tensor& self, std::string_view approximate) {
    gelu_uses_tanh(approximate);
    return meta_out(unary_meta(self, UnaryKind::kFloatingOnly, "aten::gelu"));
  });

  // ---- Binary ----
  lib.impl("add.Tensor", kKey, [](const Tensor& a, const Tensor& b, const Scalar& alpha) {
    return add_sub_out(a, b, alpha, false, "aten::add");
  });
  lib.impl("add.Scalar", kKey, [](const Tensor& a, const Scalar& b, const Scalar& alpha) {
    return add_sub_out(a, make_wrapped_number(b), alpha, false, "aten::add");
  });
  lib.impl("sub.Tensor", kKey, [](const Tensor& a, const Tensor& b, const Scalar& alpha) {
    return add_sub_out(a, b, alpha, true, "aten::sub");
  });
  lib.impl("sub.Scalar", kKey, [](const Tensor& a, const Scalar& b, const Scalar& alpha) {
    return add_sub_out(a, make_wrapped_number(b), alpha, true, "aten::sub");
  });
  lib.impl("rsub.Scalar", kKey, [](const Tensor& a, const Scalar& b, const Scalar& alpha) {
    return add_sub_out(make_wrapped_number(b), a, alpha, true, "aten::rsub");
  });
  lib.impl("mul.Tensor", kKey,
           [](const Tensor& a, const Tensor& b) { return binary_out(a, b, BinaryKind::kArithmetic, "aten::mul"); });
  lib.impl("mul.Scalar", kKey, [](const Tensor& a, const Scalar& b) {
    return binary_out(a, make_wrapped_number(b), BinaryKind::kArithmetic, "aten::mul");
  });
  lib.impl("div.Tensor", kKey,
           [](const Tensor& a, const Tensor& b) { return binary_out(a, b, BinaryKind::kTrueDivide, "aten::div"); });
  lib.impl("div.Scalar", kKey, [](const Tensor& a, const Scalar& b) {
    return binary_out(a, make_wrapped_number(b), BinaryKind::kTrueDivide, "aten::div");
  });
  lib.impl("pow.Tensor_Tensor", kKey, [](const Tensor& a, const Tensor& b) { return pow_out(a, b); });
  lib.impl("pow.Tensor_Scalar", kKey, [](const Tensor& a, const Scalar& b) {
    check_pow_scalar(a, b);
    return pow_out(a, make_wrapped_number(b));
  });
  lib.impl("maximum", kKey, [](const Tensor& a, const Tensor& b) {
    return binary_out(a, b, BinaryKind::kArithmetic, "aten::maximum");
  });
  lib.impl("minimum", kKey, [](const Tensor& a, const Tensor& b) {
    return binary_out(a, b, BinaryKind::kArithmetic, "aten::minimum");
  });
  lib.impl("threshold_backward", kKey, [](const Tensor& g, const Tensor& self, const Scalar&) {
    return binary_out(g, self, BinaryKind::kArithmetic, "aten::threshold_backward");
  });
  lib.impl("tanh_backward", kKey, [](const Tensor& g, const Tensor& y) {
    return binary_out(g, y, BinaryKind::kArithmetic, "aten::tanh_backward");
  });
  lib.impl("sigmoid_backward", kKey, [](const Tensor& g, const Tensor& y) {
    return binary_out(g, y, BinaryKind::kArithmetic, "aten::sigmoid_backward");
  });
  lib.impl("gelu_backward", kKey, [](const Tensor& g, const Tensor& x, std::string_view approximate) {
    gelu_uses_tanh(approximate);
    return binary_out(g, x, BinaryKind::kArithmetic, "aten::gelu_backward");
  });
  lib.impl("silu_backward", kKey, [](const Tensor& g, const Tensor& x) {
    return binary_out(g, x, BinaryKind::kArithmetic, "aten::silu_backward");
  });
#define OPSPEC_COMPARE_META(name)                                                                      \
  lib.impl(#name ".Tensor", kKey, [](const Tensor& a, const Tensor& b) {                               \
    return binary_out(a, b, BinaryKind::kComparison, "aten::" #name);                                  \
  });                                                                                                  \
  lib.impl(#name ".Scalar", kKey, [](const Tensor& a, const Scalar& b) {                               \
    return binary_out(a, make_wrapped_number(b), BinaryKind::kComparison, "aten::" #name);             \
  });
  OPSPEC_COMPARE_META(eq)
  OPSPEC_COMPARE_META(ne)
  OPSPEC_COMPARE_META(lt)
  OPSPEC_COMPARE_META(le)
  OPSPEC_COMPARE_META(gt)
  OPSPEC_COMPARE_META(ge)
#undef OPSPEC_COMPARE_META
  lib.impl("logical_and", kKey, [](const Tensor& a, const Tensor& b) {
    return binary_out(a, b, BinaryKind::kLogical, "aten::logical_and");
  });
  lib.impl("logical_or", kKey, [](const Tensor& a, const Tensor& b) {
    return binary_out(a, b, BinaryKind::kLogical, "aten::logical_or");
  });
  lib.impl("where.self", kKey, [](const Tensor& c, const Tensor& a, const Tensor& b) {
    return meta_out(where_meta(c, a, b));
  });

  // ---- In-place ----
  lib.impl("add_.Tensor", kKey, [](const Tensor& self, const Tensor& other, const Scalar& alpha) {
    add_sub_inplace_meta(self, other, alpha, /*sub=*/false, "aten::add_");
    self.impl()->bump_version();
    return self;
  });
  lib.impl("add_.Scalar", kKey, [](const Tensor& self, const Scalar& other, const Scalar& alpha) {
    add_sub_inplace_meta(self, make_wrapped_number(other), alpha, /*sub=*/false, "aten::add_");
    self.impl()->bump_version();
    return self;
  });
  lib.impl("sub_.Tensor", kKey, [](const Tensor& self, const Tensor& other, const Scalar& alpha) {
    add_sub_inplace_meta(self, other, alpha, /*sub=*/true, "aten::sub_");
    self.impl()->bump_version();
    return self;
  });
  lib.impl("mul_.Tensor", kKey, [](const Tensor& self, const Tensor& other) {
    return inplace_out(self, other, BinaryKind::kArithmetic, "aten::mul_");
  });
  lib.impl("mul_.Scalar", kKey, [](const Tensor& self, const Scalar& other) {
    return inplace_out(self, make_wrapped_number(other), BinaryKind::kArithmetic, "aten::mul_");
  });
  lib.impl("div_.Tensor", kKey, [](const Tensor& self, const Tensor& other) {
    return inplace_out(self, other, BinaryKind::kTrueDivide, "aten::div_");
  });
  lib.impl("div_.Scalar", kKey, [](const Tensor& self, const Scalar& other) {
    return inplace_out(self, make_wrapped_number(other), BinaryKind::kTrueDivide, "aten::div_");
  });
  lib.impl("masked_fill_.Scalar", kKey, &masked_fill__meta);
  lib.impl("masked_fill.Scalar", kKey, &masked_fill_meta);

  // ---- Copies ----
  lib.impl("copy_", kKey, &copy_meta);
  lib.impl("clone", kKey, [](const Tensor& self, std::optional<int64_t> memory_format) {
    const SizeVec strides = like_result_strides(self, memory_format, "aten::clone");
    return make_tensor_with_strides(self.sizes(), strides, self.dtype(), kMeta);
  });
  lib.impl("_to_copy", kKey, &to_copy_meta);
}

}  // namespace opspec::internal
