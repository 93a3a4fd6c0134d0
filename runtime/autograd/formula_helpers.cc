// formula_helpers.cc: See internal/formula_helpers.h.
#include "runtime/autograd/internal/formula_helpers.h"

#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {

Tensor mul_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::mul.Scalar");
  return op(t, s);
}

Tensor div_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::div.Scalar");
  return op(t, s);
}

Tensor add_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&, const Scalar&)> op("aten::add.Scalar");
  return op(t, s, 1);
}

Tensor sub_scalar(const Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&, const Scalar&)> op("aten::sub.Scalar");
  return op(t, s, 1);
}

Tensor& mul_scalar_(Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::mul_.Scalar");
  op(t, s);
  return t;
}

Tensor& div_scalar_(Tensor& t, const Scalar& s) {
  static const TypedOp<Tensor(const Tensor&, const Scalar&)> op("aten::div_.Scalar");
  op(t, s);
  return t;
}

VariableList identity(const FormulaCall& c) { return {c.grad()}; }

VariableList zeros_like_grad(const FormulaCall& c) { return {ops::zeros_like(c.grad())}; }

std::optional<Tensor> optional_input(const FormulaCall& c, size_t arg) {
  const int k = c.tensor_input_of_arg(arg);
  return k >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(k))) : std::nullopt;
}

std::vector<int64_t> dims_of(const Value& v) { return v.is_none() ? std::vector<int64_t>{} : v.to_int_list(); }

std::optional<int64_t> optional_int(const Value& v) {
  return v.is_none() ? std::nullopt : std::optional<int64_t>(v.to_int());
}

namespace {
Tensor filled_like(const Scalar& s, const Tensor& t) {
  using LikeSig = Tensor(const Tensor&, std::optional<DType>, std::optional<int64_t>, std::optional<Device>,
                         std::optional<bool>, std::optional<int64_t>);
  static const TypedOp<LikeSig> empty_like("aten::empty_like");
  constexpr int64_t kPreserveFormat = 1;  // c10::MemoryFormat::Preserve
  Tensor out = empty_like(t, std::nullopt, std::nullopt, std::nullopt, std::nullopt, kPreserveFormat);
  ops::fill_(out, s);
  return out;
}
}  // namespace

Tensor scalar_sub(const Scalar& s, const Tensor& t) {
  Tensor out = filled_like(s, t);
  ops::sub_(out, t);
  return out;
}

Tensor scalar_div(const Scalar& s, const Tensor& t) {
  Tensor out = filled_like(s, t);
  ops::div_(out, t);
  return out;
}

Tensor to_dtype(const Tensor& t, DType dtype) {
  return t.dtype() == dtype ? t : ops::_to_copy(t, TensorOptions{.dtype = dtype});
}

Tensor where_scalar_other(const Tensor& cond, const Tensor& t, const Scalar& s) {
  const Tensor st = ops::scalar_tensor(s, {.dtype = t.dtype(), .device = t.device()});
  return ops::where(cond, t, st);
}

Tensor where_scalar_self(const Tensor& cond, const Scalar& s, const Tensor& t) {
  const Tensor st = ops::scalar_tensor(s, {.dtype = t.dtype(), .device = t.device()});
  return ops::where(cond, st, t);
}

Tensor maybe_multiply(const Tensor& t, const Scalar& s) {
  const bool one = s.is_floating_point() ? s.to_double() == 1.0 : s.to_int() == 1;
  return one ? t : mul_scalar(t, s);
}

bool subclass_like(const Tensor& t) {
  return dispatch_mode_enabled() || t.key_set().has(DispatchKey::kFake) || t.subclass() != nullptr;
}

}  // namespace opspec::autograd::internal
