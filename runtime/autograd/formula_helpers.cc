// formula_helpers.cc: See internal/formula_helpers.h.
#include "runtime/autograd/internal/formula_helpers.h"

#include <algorithm>

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

namespace {

// min_storage_size: the elements a geometry reaches from offset 0.
int64_t min_storage_size(IntArrayRef sizes, IntArrayRef strides, int64_t offset) {
  int64_t n = offset + 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] == 0) return 0;
    n += (sizes[d] - 1) * strides[d];
  }
  return n;
}

// maybe_overlapping: two elements of the geometry may share an address
// (PyTorch's _maybe_overlapping_memory: sorted by stride, each stride must
// pass the extent of the dims below it).
bool maybe_overlapping(IntArrayRef sizes, IntArrayRef strides) {
  std::vector<size_t> order;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] > 1) order.push_back(d);
  }
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return strides[a] < strides[b]; });
  int64_t extent = 0;
  for (size_t d : order) {
    if (strides[d] <= extent) return true;
    extent += (sizes[d] - 1) * strides[d];
  }
  return false;
}

}  // namespace

Tensor as_strided_backward(Tensor grad, IntArrayRef inp_sizes, IntArrayRef inp_strides, int64_t inp_offset,
                           std::vector<int64_t> out_sizes, std::vector<int64_t> out_strides, int64_t out_offset) {
  for (int64_t d = static_cast<int64_t>(out_sizes.size()) - 1; d >= 0; --d) {
    const auto i = static_cast<size_t>(d);
    if (out_sizes[i] == 0) return ops::zeros(inp_sizes, {.dtype = grad.dtype(), .device = grad.device()});
    if (out_sizes[i] == 1 || out_strides[i] == 0) {
      grad = out_sizes[i] == 1 ? ops::squeeze(grad, d) : ops::sum(grad, {d}, false);
      out_sizes.erase(out_sizes.begin() + d);
      out_strides.erase(out_strides.begin() + d);
    }
  }
  if (maybe_overlapping(out_sizes, out_strides) || maybe_overlapping(inp_sizes, inp_strides)) {
    throw Error("the derivative for 'aten::as_strided' of a geometry whose elements may overlap is not "
                "implemented (PyTorch's index_add_ path).");
  }
  const int64_t shared = std::min(inp_offset, out_offset);
  const int64_t base = std::max(min_storage_size(inp_sizes, inp_strides, inp_offset - shared),
                                min_storage_size(out_sizes, out_strides, out_offset - shared));
  const Tensor storage = ops::new_zeros(grad, {base});
  Tensor region = ops::as_strided(storage, out_sizes, out_strides, out_offset - shared);
  ops::copy_(region, grad);
  return ops::as_strided(storage, inp_sizes, inp_strides, inp_offset - shared);
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
