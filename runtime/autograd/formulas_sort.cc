// formulas_sort.cc: derivatives of prod (and .dim_int), max/min (full and
// .dim), cumsum, cumprod, sort (and .stable) and topk, op for op as
// FunctionsManual.cpp's prod_backward, evenly_distribute_backward,
// cumsum_backward and cumprod_backward and
// ReduceOps.cpp's value_selecting_reduction_backward (C++ operands right to
// left, as GCC builds evaluate them). See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/mode.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// contiguous: C++'s t.contiguous(): t itself when already contiguous.
Tensor contiguous(const Tensor& t) { return t.is_contiguous() ? t : ops::contiguous(t); }

// value_selecting_reduction_backward: zeros of self's sizes with grad
// scattered to indices along dim (grad and indices unsqueezed back first
// unless keepdim or self was 0-D). A CompositeImplicitAutograd op in
// PyTorch, so only its parts are dispatched.
Tensor value_selecting_reduction_backward(const Tensor& grad, int64_t dim, const Tensor& indices, IntArrayRef sizes,
                                          bool keepdim) {
  Tensor g = grad, idx = indices;
  if (!keepdim && !sizes.empty()) {
    g = ops::unsqueeze(grad, dim);
    idx = ops::unsqueeze(indices, dim);
  }
  Tensor grad_in = ops::zeros(sizes, {.dtype = g.dtype(), .device = g.device()});
  if (subclass_like(grad) || subclass_like(indices)) return ops::scatter(grad_in, dim, idx, g);
  return ops::scatter_(grad_in, dim, idx, g);
}

// prod_safe_zeros_backward: grad times the exclusive cumulative products
// from the left and from the right along dim, exact with zeros in inp.
Tensor prod_safe_zeros_backward(const Tensor& grad, const Tensor& inp, int64_t dim) {
  if (inp.numel() == 0) return ops::expand(grad, inp.sizes());
  const int64_t n = inp.size(dim);
  if (n == 1) return grad;
  SizeVec ones_size(inp.sizes().begin(), inp.sizes().end());
  ones_size[static_cast<size_t>(dim)] = 1;
  const Tensor ones = ops::ones(ones_size, {.dtype = grad.dtype(), .device = grad.device()});
  const Tensor normal_parts[] = {ones, ops::narrow(inp, dim, 0, n - 1)};
  const Tensor exclusive_normal = ops::cumprod(ops::cat(normal_parts, dim), dim);
  const int64_t one_dim[] = {dim};
  const Tensor narrow_reverse = ops::flip(ops::narrow(inp, dim, 1, n - 1), one_dim);
  const Tensor reverse_parts[] = {ones, narrow_reverse};
  const Tensor exclusive_reverse = ops::flip(ops::cumprod(ops::cat(reverse_parts, dim), dim), one_dim);
  return ops::mul(grad, ops::mul(exclusive_normal, exclusive_reverse));
}

// prod_backward (full): grad * result / input without zeros; zeros give
// the safe path, or all-zero gradients for two or more zeros without grad mode.
Tensor prod_backward(const Tensor& grad, const Tensor& input, const Tensor& result) {
  if (input.dim() == 0) return grad;
  const int64_t flat[] = {-1};
  if (input.device().is_meta() || subclass_like(input)) {
    return ops::view(prod_safe_zeros_backward(grad, ops::view(contiguous(input), flat), 0), input.sizes());
  }
  const Tensor zero_idx = ops::nonzero(ops::eq(input, 0));
  if (zero_idx.numel() == 0) return ops::mul(grad, ops::div(result, input));
  if (!is_grad_enabled() && zero_idx.size(0) > 1) return ops::zeros_like(input);
  return ops::view(prod_safe_zeros_backward(grad, ops::view(contiguous(input), flat), 0), input.sizes());
}

// prod_backward (dim): grad and result unsqueezed back unless keepdim; the
// safe path when any slice holds a zero.
Tensor prod_backward(Tensor grad, const Tensor& input, Tensor result, int64_t dim, bool keepdim) {
  if (input.dim() == 0) return grad;
  dim = wrap_dim(dim, input.dim(), "prod_backward");
  if (!keepdim) {
    grad = ops::unsqueeze(grad, dim);
    result = ops::unsqueeze(result, dim);
  }
  if (input.device().is_meta() || subclass_like(input)) return prod_safe_zeros_backward(grad, input, dim);
  const Tensor slice_zero_count = ops::sum(ops::eq(input, 0), std::vector<int64_t>{dim}, /*keepdim=*/true);
  const int64_t total_zeros = ops::item(ops::sum(slice_zero_count)).to<int64_t>();
  if (total_zeros == 0) return ops::mul(grad, ops::div(result, input));
  return prod_safe_zeros_backward(grad, input, dim);
}

// prod (self, dtype?): prod_backward(grad, self.to(grad's dtype), result).
VariableList prod(const FormulaCall& c) {
  const Tensor& grad = c.grad();
  return {prod_backward(grad, to_dtype(c.input(0), grad.dtype()), c.output(0))};
}

// prod.dim_int (self, dim, keepdim, dtype?).
VariableList prod_dim(const FormulaCall& c) {
  const Tensor& grad = c.grad();
  return {prod_backward(grad, to_dtype(c.input(0), grad.dtype()), c.output(0), c.arg(1).to_int(),
                        c.arg(2).to_bool())};
}

// evenly_distribute_backward: grad split evenly over the elements equal to
// the result (NaN matching NaN). PyTorch's CPU branch reads the result's
// NaN-ness (item) and fills a new tensor; its CUDA and subclass branch
// multiplies a mask: (input == value).logical_or_(logical_and(isnan, isnan)),
// the call's arguments evaluated right to left as GCC builds do.
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& input, const Tensor& value) {
  const bool any_subclass_like = subclass_like(grad) || subclass_like(input) || subclass_like(value);
  if (any_subclass_like || input.device().is_cuda()) {
    const Tensor value_isnan = ops::isnan(value);
    const Tensor input_isnan = ops::isnan(input);
    const Tensor both_nan = ops::logical_and(input_isnan, value_isnan);
    Tensor mask = ops::eq(input, value);
    ops::logical_or_(mask, both_nan);
    return ops::mul(mask, ops::div(grad, ops::sum(mask)));
  }
  const Tensor mask = ops::item(ops::isnan(value)).to<bool>() ? ops::isnan(input) : ops::eq(input, value);
  Tensor out = ops::new_zeros(grad, input.sizes(), {.dtype = input.dtype(), .device = input.device()});
  return ops::masked_fill_(out, mask, ops::div(grad, ops::sum(mask)));
}

// max / min (self): evenly_distribute_backward(grad, self, result).
VariableList extremum(const FormulaCall& c) {
  return {evenly_distribute_backward(c.grad(), c.input(0), c.output(0))};
}

// max.dim / min.dim (self, dim, keepdim): value_selecting_reduction_backward(grad, dim, indices, sizes, keepdim).
VariableList extremum_dim(const FormulaCall& c) {
  return {value_selecting_reduction_backward(c.grad(0), c.arg(1).to_int(), c.output(1), c.sizes(0),
                                             c.arg(2).to_bool())};
}

// sort (self, dim, descending) / sort.stable (self, stable?, dim, descending) /
// topk (self, k, dim, ...): the same with keepdim true; dim is argument dim_arg.
template <size_t kDimArg>
VariableList selecting(const FormulaCall& c) {
  return {value_selecting_reduction_backward(c.grad(0), c.arg(kDimArg).to_int(), c.output(1), c.sizes(0), true)};
}

// reversed_cumsum: w's running sums from the end along dim.
Tensor reversed_cumsum(const Tensor& w, int64_t dim) {
  const int64_t one_dim[] = {dim};
  return ops::flip(ops::cumsum(ops::flip(w, one_dim), dim), one_dim);
}

// cumsum (self, dim, dtype?): cumsum_backward(grad.to(self's dtype), dim):
// grad reversed, summed and reversed back along dim (grad itself for one element).
VariableList cumsum(const FormulaCall& c) {
  const Tensor grad = to_dtype(c.grad(), c.dtype(0));
  const int64_t dim = c.arg(1).to_int();
  if (grad.numel() <= 1 || grad.size(dim) == 1) return {grad};
  return {reversed_cumsum(grad, dim)};
}

// cumprod_backward: sum_{j >= k} grad_j * y_j / x_k without zeros in the
// input; otherwise the products with x_k omitted, one slice k at a time
// (PyTorch's path for grad mode and subclass-like inputs). PyTorch's O(n)
// path for zeros without grad mode needs in-place ops opspec lacks
// (masked_scatter_, relu_, __iand__), so it takes this path too: the same
// values. The slices are written into zeros with select + copy_ (under grad
// mode the copies record CopySlices, See Note [In-place changes to views]),
// or stacked for subclass-like inputs, as PyTorch's.
Tensor cumprod_backward(const Tensor& grad, const Tensor& input, int64_t dim, const Tensor& output) {
  if (input.numel() <= 1) return grad;
  dim = wrap_dim(dim, input.dim(), "cumprod_backward");
  const int64_t dim_size = input.size(dim);
  if (dim_size == 1) return grad;
  const bool subclass = subclass_like(input) || subclass_like(grad) || subclass_like(output);
  const Tensor w = ops::mul(output, grad);
  const Tensor is_zero = ops::eq(input, 0);
  if (!subclass && !ops::item(ops::any(is_zero)).to<bool>()) return ops::div(reversed_cumsum(w, dim), input);
  const TensorOptions options{.dtype = grad.dtype(), .device = grad.device()};
  const bool stacked = subclass;
  std::vector<Tensor> grad_inputs;
  Tensor grad_input;
  if (!stacked) grad_input = ops::zeros(input.sizes(), options);
  SizeVec ones_size(input.sizes().begin(), input.sizes().end());
  ones_size[static_cast<size_t>(dim)] = 1;
  const int64_t one[] = {1};
  const Tensor ones = ops::expand(ops::ones(one, options), ones_size);
  const int64_t one_dim[] = {dim};
  for (int64_t k = 0; k < dim_size; ++k) {
    Tensor omitted_products;
    if (k == 0) {
      const Tensor prods_from_k_plus_1 = ops::cumprod(ops::slice(input, dim, k + 1), dim);
      const Tensor parts[] = {ones, prods_from_k_plus_1};
      omitted_products = ops::cat(parts, dim);
    } else if (k == dim_size - 1) {
      omitted_products = ops::prod(ops::slice(input, dim, 0, k), dim, true);
    } else {
      const Tensor prods_until_k = ops::prod(ops::slice(input, dim, 0, k), dim, true);
      const Tensor prods_from_k_plus_1 = ops::cumprod(ops::slice(input, dim, k + 1), dim);
      const Tensor middle = ops::mul(ops::expand(prods_until_k, prods_from_k_plus_1.sizes()), prods_from_k_plus_1);
      const Tensor parts[] = {prods_until_k, middle};
      omitted_products = ops::cat(parts, dim);
    }
    const Tensor grad_slice = ops::sum(ops::mul(ops::slice(grad, dim, k), omitted_products), one_dim);
    if (stacked) {
      grad_inputs.push_back(grad_slice);
    } else {
      Tensor target = ops::select(grad_input, dim, k);
      ops::copy_(target, grad_slice);
    }
  }
  return stacked ? ops::stack(grad_inputs, dim) : grad_input;
}

// cumprod (self, dim, dtype?): cumprod_backward(grad.to(self's dtype), self, dim, result).
VariableList cumprod(const FormulaCall& c) {
  return {cumprod_backward(to_dtype(c.grad(), c.dtype(0)), c.input(0), c.arg(1).to_int(), c.output(0))};
}

}  // namespace

void add_sort_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::prod", "ProdBackward0", 1, 1, &prod});
  out.push_back({"aten::prod.dim_int", "ProdBackward1", 1, 1, &prod_dim});
  out.push_back({"aten::max", "MaxBackward1", 1, 1, &extremum});
  out.push_back({"aten::min", "MinBackward1", 1, 1, &extremum});
  out.push_back({"aten::max.dim", "MaxBackward0", 0, 0b10, &extremum_dim});
  out.push_back({"aten::min.dim", "MinBackward0", 0, 0b10, &extremum_dim});
  out.push_back({"aten::cumsum", "CumsumBackward0", 0, 0, &cumsum});
  out.push_back({"aten::cumprod", "CumprodBackward0", 1, 1, &cumprod});
  out.push_back({"aten::sort", "SortBackward0", 0, 0b10, &selecting<1>});
  out.push_back({"aten::sort.stable", "SortBackward1", 0, 0b10, &selecting<2>});
  out.push_back({"aten::topk", "TopkBackward0", 0, 0b10, &selecting<2>});
}

}  // namespace opspec::autograd::internal
