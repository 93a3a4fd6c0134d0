#include "kernels/meta/elementwise_meta.h"

#include <algorithm>

#include "runtime/core/shape_utils.h"

namespace opspec::internal {

bool can_cast(DType from, DType to) {
  if (is_floating(from) && is_integral(to, /*include_bool=*/true)) return false;
  if (from != DType::kBool && to == DType::kBool) return false;
  return true;
}

ElementwiseMeta unary_meta(const Tensor& self, UnaryKind kind, std::string_view op) {
  const DType dt = self.dtype();
  ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), dt, dt, self.device()};
  switch (kind) {
    case UnaryKind::kKeepDtype:
      if (dt == DType::kBool) {
        OPSPEC_CHECK(op != "aten::neg", op,
                     ": Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
                     "invert a mask, use the `~` or `logical_not()` operator instead.");
        OPSPEC_CHECK(op != "aten::relu", op, ": Boolean inputs not supported for relu");
        OPSPEC_FAIL(op, ": \"", op.substr(op.find("::") + 2), "_cpu\" not implemented for 'Bool'");
      }
      break;
    case UnaryKind::kFloating:
      if (!is_floating(dt)) m.compute_dtype = m.result_dtype = kDefaultFloat;
      break;
    case UnaryKind::kLogical:
      m.result_dtype = DType::kBool;
      break;
  }
  return m;
}

bool gelu_uses_tanh(std::string_view approximate) {
  if (approximate == "tanh") return true;
  OPSPEC_CHECK(approximate == "none", "aten::gelu: approximate argument must be either 'none' or 'tanh', but got '",
               approximate, "'");
  return false;
}

namespace {

// with_kind: m with the result dtype rule of kind applied.
ElementwiseMeta& with_kind(ElementwiseMeta& m, BinaryKind kind) {
  switch (kind) {
    case BinaryKind::kArithmetic: break;
    case BinaryKind::kTrueDivide:
      if (is_integral(m.result_dtype, /*include_bool=*/true)) m.compute_dtype = m.result_dtype = kDefaultFloat;
      break;
    case BinaryKind::kComparison:
    case BinaryKind::kLogical: m.result_dtype = DType::kBool; break;
  }
  return m;
}

}  // namespace

ElementwiseMeta binary_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op) {
  if (self.defined() && other.defined() && !self.is_wrapped_number() && !other.is_wrapped_number() &&
      self.dtype() == other.dtype() && self.device() == other.device() &&
      std::ranges::equal(self.sizes(), other.sizes())) {
    // The common case, decided without copying the operands (each copy is two
    // atomic refcount updates): same shape, dtype and device; built in place.
    ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), self.dtype(), self.dtype(), self.device()};
    with_kind(m, kind);
    return m;
  }
  if (self.defined() && other.defined() && !self.is_wrapped_number() && other.is_wrapped_number() &&
      other.device().is_cpu() &&
      (is_floating(self.dtype()) || (self.dtype() != DType::kBool && !is_floating(other.dtype())))) {
    // A tensor and a C++ number (`x * 0.5`): a 0-dim CPU number of no higher
    // category changes neither the shape, the device nor the dtype (result_type).
    ElementwiseMeta m{SizeVec(self.sizes().begin(), self.sizes().end()), self.dtype(), self.dtype(), self.device()};
    with_kind(m, kind);
    return m;
  }
  const Tensor operands[] = {self, other};
  const Device device = check_same_device(operands, op);
  SizeVec sizes = broadcast_shapes(self.sizes(), other.sizes(), op);
  const DType common = result_type(operands);
  ElementwiseMeta m{std::move(sizes), common, common, device};
  with_kind(m, kind);
  return m;
}

void check_alpha(DType dtype, const Scalar& alpha, std::string_view op) {
  OPSPEC_CHECK(!alpha.is_bool() || dtype == DType::kBool, op, ": Boolean alpha only supported for Boolean results.");
  OPSPEC_CHECK(is_floating(dtype) || !alpha.is_floating_point(), op,
               ": For integral input tensors, argument alpha must not be a floating point number.");
}

void check_sub(const Tensor& self, const Tensor& other, std::string_view op) {
  OPSPEC_CHECK(self.dtype() != DType::kBool || other.dtype() != DType::kBool, op,
               ": Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or "
               "`logical_xor()` operator instead.");
  OPSPEC_CHECK(self.dtype() != DType::kBool && other.dtype() != DType::kBool, op,
               ": Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to "
               "invert a mask, use the `~` or `logical_not()` operator instead.");
}

void check_pow(DType dtype) {
  OPSPEC_CHECK(dtype != DType::kBool, "aten::pow: \"pow\" not implemented for 'Bool'");
}

void check_pow_scalar(const Tensor& self, const Scalar& exponent) {
  OPSPEC_CHECK(!(is_integral(self.dtype(), /*include_bool=*/true) && exponent.is_integral() && exponent.to_int() < 0),
               "aten::pow: Integers to negative integer powers are not allowed.");
}

ElementwiseMeta where_meta(const Tensor& condition, const Tensor& self, const Tensor& other) {
  constexpr std::string_view kOp = "aten::where";
  OPSPEC_CHECK(condition.dtype() == DType::kBool, kOp,
               ": where expected condition to be a boolean tensor, but got a tensor with dtype ",
               scalar_type_name(condition.dtype()));
  const Tensor all[] = {condition, self, other};
  const Device device = check_same_device(all, kOp);
  SizeVec sizes = broadcast_shapes(broadcast_shapes(condition.sizes(), self.sizes(), kOp), other.sizes(), kOp);
  const Tensor branches[] = {self, other};
  const DType dtype = result_type(branches);
  return ElementwiseMeta{std::move(sizes), dtype, dtype, device};
}

void check_no_internal_overlap(const Tensor& self, std::string_view op) {
  for (int64_t d = 0; d < self.dim(); ++d) {
    OPSPEC_CHECK(self.sizes()[d] <= 1 || self.strides()[d] != 0, op,
                 ": unsupported operation: more than one element of the written-to tensor refers to a single "
                 "memory location. Please clone() the tensor before performing the operation.");
  }
}

ElementwiseMeta inplace_meta(const Tensor& self, const Tensor& other, BinaryKind kind, std::string_view op) {
  check_no_internal_overlap(self, op);
  ElementwiseMeta m = binary_meta(self, other, kind, op);
  OPSPEC_CHECK(m.device == self.device(), op,
               ": Expected all tensors to be on the same device, but found at least two devices, ",
               self.device().str(), " and ", m.device.str(), "! (", self.meta_str(), " and ", other.meta_str(), ")");
  OPSPEC_CHECK(std::equal(m.sizes.begin(), m.sizes.end(), self.sizes().begin(), self.sizes().end()), op,
               ": output with shape ", format_sizes(self.sizes()), " doesn't match the broadcast shape ",
               format_sizes(m.sizes));
  OPSPEC_CHECK(can_cast(m.result_dtype, self.dtype()), op, ": result type ", scalar_type_name(m.result_dtype),
               " can't be cast to the desired output type ", scalar_type_name(self.dtype()));
  m.result_dtype = self.dtype();
  return m;
}

void check_copy_shapes(const Tensor& self, const Tensor& src) {
  const SizeVec shape = broadcast_shapes(self.sizes(), src.sizes(), "aten::copy_");
  OPSPEC_CHECK(std::equal(shape.begin(), shape.end(), self.sizes().begin(), self.sizes().end()),
               "aten::copy_: output with shape ", format_sizes(self.sizes()), " doesn't match the broadcast shape ",
               format_sizes(shape));
}

namespace {

Tensor meta_out(const ElementwiseMeta& m) { return make_tensor(m.sizes, m.result_dtype, kMeta); }

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
  check_no_internal_overlap(self, "aten::copy_");
  self.impl()->bump_version();
  return self;
}

Tensor to_copy_meta(const Tensor& self, std::optional<DType> dtype, std::optional<int64_t> layout,
                    std::optional<Device> device, std::optional<bool> pin_memory, bool non_blocking,
                    std::optional<int64_t> memory_format) {
  const Device target = device.value_or(self.device());
  OPSPEC_CHECK(target.is_meta(), "aten::_to_copy: ", kMetaCopyError);
  return make_tensor(self.sizes(), dtype.value_or(self.dtype()), kMeta);
}

}  // namespace

void register_elementwise_meta_kernels(Library& lib) {
  constexpr DispatchKey kKey = DispatchKey::kMeta;
  // ---- Unary ----
#define OPSPEC_UNARY_META(name, kind)                                                         \
  lib.impl(#name, kKey, [](const Tensor& self) {                                              \
    return meta_out(unary_meta(self, UnaryKind::kind, "aten::" #name));                       \
  });
  OPSPEC_UNARY_META(neg, kKeepDtype)
  OPSPEC_UNARY_META(abs, kKeepDtype)
  OPSPEC_UNARY_META(relu, kKeepDtype)
  OPSPEC_UNARY_META(sin, kFloating)
  OPSPEC_UNARY_META(cos, kFloating)
  OPSPEC_UNARY_META(exp, kFloating)
  OPSPEC_UNARY_META(log, kFloating)
  OPSPEC_UNARY_META(tanh, kFloating)
  OPSPEC_UNARY_META(sigmoid, kFloating)
  OPSPEC_UNARY_META(sqrt, kFloating)
  OPSPEC_UNARY_META(rsqrt, kFloating)
  OPSPEC_UNARY_META(reciprocal, kFloating)
  OPSPEC_UNARY_META(erf, kFloating)
  OPSPEC_UNARY_META(silu, kFloating)
  OPSPEC_UNARY_META(logical_not, kLogical)
#undef OPSPEC_UNARY_META
  lib.impl("gelu", kKey, [](const Tensor& self, std::string_view approximate) {
    gelu_uses_tanh(approximate);
    return meta_out(unary_meta(self, UnaryKind::kFloating, "aten::gelu"));
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
    check_alpha(inplace_meta(self, other, BinaryKind::kArithmetic, "aten::add_").compute_dtype, alpha, "aten::add_");
    return inplace_out(self, other, BinaryKind::kArithmetic, "aten::add_");
  });
  lib.impl("mul_.Tensor", kKey, [](const Tensor& self, const Tensor& other) {
    return inplace_out(self, other, BinaryKind::kArithmetic, "aten::mul_");
  });
  lib.impl("div_.Tensor", kKey, [](const Tensor& self, const Tensor& other) {
    return inplace_out(self, other, BinaryKind::kTrueDivide, "aten::div_");
  });
  lib.impl("div_.Scalar", kKey, [](const Tensor& self, const Scalar& other) {
    return inplace_out(self, make_wrapped_number(other), BinaryKind::kTrueDivide, "aten::div_");
  });

  // ---- Copies ----
  lib.impl("copy_", kKey, &copy_meta);
  lib.impl("clone", kKey, [](const Tensor& self, std::optional<int64_t> memory_format) {
    return make_tensor(self.sizes(), self.dtype(), kMeta);
  });
  lib.impl("_to_copy", kKey, &to_copy_meta);
}

}  // namespace opspec::internal
