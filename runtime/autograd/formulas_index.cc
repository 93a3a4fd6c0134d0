// formulas_index.cc: derivatives of the scatter, gather and indexing ops
// (gather, scatter*, masked_fill.Tensor, select/slice_scatter, diagonal,
// index, index_put). See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

using OptList = std::vector<std::optional<Tensor>>;

// indices_of: a Tensor?[] argument as ops:: takes it (the autograd kernel
// keeps these lists in the node's args; See Note [Optional tensor lists]).
OptList indices_of(const Value& v) {
  OptList out;
  for (const Tensor& t : v.to_tensor_list()) out.push_back(t.defined() ? std::optional<Tensor>(t) : std::nullopt);
  return out;
}

// zeros_info: derivatives.yaml's zeros_like(x) of a saved input's metadata
// (TypeAndSize::zeros(): aten::zeros with x's sizes, dtype and device).
Tensor zeros_info(const FormulaCall& c, size_t k) {
  return ops::zeros(c.sizes(k), {.dtype = c.dtype(k), .device = c.device(k)});
}

// gather (self, dim, index, sparse_grad): gather_backward (TensorAdvancedIndexing.cpp):
// grad.new_zeros(self.sizes()), then scatter_add_ into it, or the out-of-place
// scatter_add when index or grad is subclass-like (a mode is on, as when an op log records).
VariableList gather(const FormulaCall& c) {
  OPSPEC_CHECK(!c.arg(3).to_bool(), "aten::gather: sparse gradients are not supported");
  VariableList g(c.num_inputs());
  const Tensor& grad = c.grad();
  const Tensor index = c.input(1);
  const int64_t dim = c.arg(1).to_int();
  Tensor result = ops::new_zeros(grad, c.sizes(0));
  if (subclass_like(index) || subclass_like(grad)) {
    g[0] = ops::scatter_add(result, dim, index, grad);
  } else {
    g[0] = ops::scatter_add_(result, dim, index, grad);
  }
  return g;
}

// scatter.src (self, dim, index, src): self: grad.scatter(dim, index, 0); src: grad.gather(dim, index).
VariableList scatter_src(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int64_t dim = c.arg(1).to_int();
  if (c.needs(0)) g[0] = ops::scatter(c.grad(), dim, c.input(1), Scalar(int64_t{0}));
  if (c.needs(2)) g[2] = ops::gather(c.grad(), dim, c.input(1));
  return g;
}

// scatter.value (self, dim, index, value): self: grad.scatter(dim, index, 0).
VariableList scatter_value(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  g[0] = ops::scatter(c.grad(), c.arg(1).to_int(), c.input(1), Scalar(int64_t{0}));
  return g;
}

// scatter_add (self, dim, index, src): self: grad; src: grad.gather(dim, index).
VariableList scatter_add(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) g[0] = c.grad();
  if (c.needs(2)) g[2] = ops::gather(c.grad(), c.arg(1).to_int(), c.input(1));
  return g;
}

// scatter_reduce.two (self, dim, index, src, reduce, include_self):
// FunctionsManual's scatter_reduce_backward, every reduction. For prod,
// PyTorch wraps src's gradient in a DelayedError node when two zeros of src
// meet in one place (double backward is unsupported there); opspec runs the
// same check (gt, any, item) but has no DelayedError, so that double
// backward is not refused.
VariableList scatter_reduce(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const Tensor& grad = c.grad();
  if (!grad.defined()) return g;
  const int64_t dim = c.arg(1).to_int();
  const std::string& reduce = c.arg(4).to_string();
  const bool include_self = c.arg(5).to_bool();
  const Tensor self = c.input(0), index = c.input(1), src = c.input(2), result = c.output(0);
  Tensor grad_self, grad_src;
  if (reduce == "sum") {
    grad_self = grad;
    grad_src = ops::gather(grad, dim, index);
  } else if (reduce == "mean") {
    Tensor n = include_self ? ops::ones_like(grad) : ops::zeros_like(grad);
    n = ops::scatter_add(n, dim, index, ops::ones_like(src));
    ops::masked_fill_(n, ops::eq(n, Scalar(int64_t{0})), Scalar(int64_t{1}));
    grad_self = ops::div(grad, n);
    const Tensor n_src = ops::gather(n, dim, index);
    grad_src = ops::div(ops::gather(grad, dim, index), n_src);
  } else if (reduce == "amax" || reduce == "amin") {
    const Tensor value = ops::gather(result, dim, index);
    const Tensor self_is_result = to_dtype(ops::eq(self, result), self.dtype());
    const Tensor src_is_result = to_dtype(ops::eq(src, value), self.dtype());
    const Tensor n_to_distribute = ops::scatter_add(self_is_result, dim, index, src_is_result);
    const Tensor grad_distributed = ops::div(grad, n_to_distribute);
    grad_self = ops::mul(ops::eq(self, result), grad_distributed);
    grad_src = ops::mul(ops::eq(src, value), ops::gather(grad_distributed, dim, index));
  } else if (reduce == "prod") {
    // Zeros in self or src are handled with explicit exclusive products.
    const Tensor masked_self = ops::masked_fill(self, ops::eq(self, Scalar(int64_t{0})), Scalar(int64_t{1}));
    const Tensor masked_self_result = ops::scatter_reduce(masked_self, dim, index, src, reduce, include_self);
    grad_self = ops::div(ops::mul(grad, masked_self_result), masked_self);
    const Tensor src_zero = ops::eq(src, Scalar(int64_t{0}));
    const Tensor src_num_zeros =
        ops::gather(ops::scatter_add(ops::zeros_like(self), dim, index, to_dtype(src_zero, self.dtype())), dim, index);
    const Tensor src_single_zero = ops::bitwise_and(src_zero, ops::eq(src_num_zeros, Scalar(int64_t{1})));
    // For src positions with src_single_zero, (grad * result).gather(dim, index) / src.masked_fill(src_zero, 1)
    // would propagate zeros as the gradient.
    const Tensor masked_src = ops::masked_fill(src, src_single_zero, Scalar(int64_t{1}));
    const Tensor masked_src_result = ops::scatter_reduce(self, dim, index, masked_src, reduce, include_self);
    grad_src = ops::where(src_single_zero, ops::gather(ops::mul(grad, masked_src_result), dim, index),
                          ops::div(ops::gather(ops::mul(grad, result), dim, index),
                                   ops::masked_fill(src, src_zero, Scalar(int64_t{1}))));
    ops::item(ops::any(ops::gt(src_num_zeros, Scalar(int64_t{1}))));  // PyTorch's DelayedError check
  } else {
    OPSPEC_FAIL("aten::scatter_reduce: the derivative for reduce='", reduce, "' is not implemented in opspec");
  }
  if (!include_self) grad_self = ops::scatter(grad_self, dim, index, Scalar(int64_t{0}));
  if (c.needs(0)) g[0] = grad_self;
  if (c.needs(2)) g[2] = grad_src;
  return g;
}

// masked_fill.Tensor (self, mask, value): self: grad.masked_fill(mask, 0);
// value: masked_fill_backward(grad, mask) = grad.masked_select(mask).sum().
VariableList masked_fill_tensor(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const Tensor mask = c.input(1);
  if (c.needs(0)) g[0] = ops::masked_fill(c.grad(), mask, Scalar(int64_t{0}));
  if (c.needs(2)) g[2] = ops::sum(ops::masked_select(c.grad(), mask));
  return g;
}

// select_scatter (self, src, dim, index): self: select_scatter(grad, zeros_like(src), dim, index);
// src: grad.select(dim, index).
VariableList select_scatter(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int64_t dim = c.arg(2).to_int(), index = c.arg(3).to_int();
  if (c.needs(0)) g[0] = ops::select_scatter(c.grad(), zeros_info(c, 1), dim, index);
  if (c.needs(1)) g[1] = ops::select(c.grad(), dim, index);
  return g;
}

// slice_scatter (self, src, dim, start, end, step): as select_scatter with slice.
VariableList slice_scatter(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int64_t dim = c.arg(2).to_int(), step = c.arg(5).to_int();
  const std::optional<int64_t> start = optional_int(c.arg(3)), end = optional_int(c.arg(4));
  if (c.needs(0)) g[0] = ops::slice_scatter(c.grad(), zeros_info(c, 1), dim, start, end, step);
  if (c.needs(1)) g[1] = ops::slice(c.grad(), dim, start, end, step);
  return g;
}

// diagonal (self, offset, dim1, dim2): diagonal_backward(grad, self.sizes(), offset, dim1, dim2).
VariableList diagonal(const FormulaCall& c) {
  return {ops::diagonal_backward(c.grad(), c.sizes(0), c.arg(1).to_int(), c.arg(2).to_int(), c.arg(3).to_int())};
}

// diagonal_backward (grad_output, input_sizes, offset, dim1, dim2): grad.diagonal(offset, dim1, dim2).
VariableList diagonal_backward(const FormulaCall& c) {
  return {ops::diagonal(c.grad(), c.arg(2).to_int(), c.arg(3).to_int(), c.arg(4).to_int())};
}

// index.Tensor (self, indices): index_backward(grad.new_zeros(self.sizes(), self.options()), indices, grad)
// (FunctionsManual.cpp): _index_put_impl_(zeros, indices, grad, accumulate=true, unsafe=true), or the
// out-of-place index_put(zeros, indices, grad, true) when any of them is subclass-like (a mode is on).
VariableList index(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const Tensor& grad = c.grad();
  Tensor zeros = ops::new_zeros(grad, c.sizes(0), {.dtype = c.dtype(0), .device = c.device(0)});
  const OptList indices = indices_of(c.arg(1));
  bool any_subclass_like = subclass_like(zeros) || subclass_like(grad);
  for (const std::optional<Tensor>& i : indices) any_subclass_like = any_subclass_like || (i && subclass_like(*i));
  if (any_subclass_like) {
    g[0] = ops::index_put(zeros, indices, grad, true);
  } else {
    ops::_index_put_impl_(zeros, indices, grad, true, true);
    g[0] = zeros;
  }
  return g;
}

// index_put / index_put_ / _index_put_impl_ (self, indices, values, accumulate, ...):
// self: accumulate ? grad : grad.index_put(indices, zeros_like(values), false); values: grad.index(indices).
VariableList index_put(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const size_t values = c.num_inputs() - 1;  // after self and the defined indices
  const OptList indices = indices_of(c.arg(1));
  if (c.needs(0)) {
    g[0] = c.arg(3).to_bool() ? c.grad() : ops::index_put(c.grad(), indices, zeros_info(c, values), false);
  }
  if (c.needs(values)) g[values] = ops::index(c.grad(), indices);
  return g;
}

constexpr uint32_t kIn0 = 1u, kIn1 = 2u, kIn2 = 4u;

}  // namespace

void add_index_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::gather", "GatherBackward0", kIn1, 0, &gather});
  out.push_back({"aten::scatter.src", "ScatterBackward0", kIn1, 0, &scatter_src});
  out.push_back({"aten::scatter_.src", "ScatterBackward0", kIn1, 0, &scatter_src});
  out.push_back({"aten::scatter.value", "ScatterBackward1", kIn1, 0, &scatter_value});
  out.push_back({"aten::scatter_.value", "ScatterBackward1", kIn1, 0, &scatter_value});
  out.push_back({"aten::scatter_add", "ScatterAddBackward0", kIn1, 0, &scatter_add});
  out.push_back({"aten::scatter_add_", "ScatterAddBackward0", kIn1, 0, &scatter_add});
  out.push_back({"aten::scatter_reduce.two", "ScatterReduceBackward0", kIn0 | kIn1 | kIn2, 1, &scatter_reduce});
  out.push_back({"aten::scatter_reduce_.two", "ScatterReduceBackward0", kIn0 | kIn1 | kIn2, 1, &scatter_reduce});
  out.push_back({"aten::masked_fill.Tensor", "MaskedFillBackward1", kIn1, 0, &masked_fill_tensor});
  out.push_back({"aten::masked_fill_.Tensor", "MaskedFillBackward1", kIn1, 0, &masked_fill_tensor});
  out.push_back({"aten::select_scatter", "SelectScatterBackward0", 0, 0, &select_scatter});
  out.push_back({"aten::slice_scatter", "SliceScatterBackward0", 0, 0, &slice_scatter});
  out.push_back({"aten::diagonal", "DiagonalBackward0", 0, 0, &diagonal});
  out.push_back({"aten::diagonal_backward", "DiagonalBackwardBackward0", 0, 0, &diagonal_backward});
  out.push_back({"aten::index.Tensor", "IndexBackward0", 0, 0, &index});
  out.push_back({"aten::index_put", "IndexPutBackward0", 0, 0, &index_put});
  out.push_back({"aten::index_put_", "IndexPutBackward0", 0, 0, &index_put});
  out.push_back({"aten::_index_put_impl_", "IndexPutImplBackward0", 0, 0, &index_put});
}

}  // namespace opspec::autograd::internal
