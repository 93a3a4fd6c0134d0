// formulas_split.cc: derivatives of the list-returning views (split.Tensor,
// split_with_sizes, unbind.int) and of the random ops (uniform_, normal_,
// bernoulli), from PyTorch's derivatives.yaml and FunctionsManual.cpp.
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {

namespace {

// grads_of: every output's gradient (a Tensor[] output gives one per element).
std::vector<Tensor> grads_of(const FormulaCall& c, size_t n) {
  std::vector<Tensor> g;
  g.reserve(n);
  for (size_t i = 0; i < n; ++i) g.push_back(c.grad(i));
  return g;
}

// split_with_sizes_backward: FunctionsManual's: undefined gradients (outputs
// that got none) become zeros of their piece's shape, then aten::cat along dim.
Tensor split_with_sizes_backward(std::vector<Tensor> grads, IntArrayRef split_sizes, int64_t dim,
                                 const FormulaCall& c) {
  const IntArrayRef sizes = c.sizes(0);
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(sizes.size()), "split_with_sizes_backward");
  for (size_t j = 0; j < grads.size(); ++j) {
    if (grads[j].defined()) continue;
    SizeVec shape(sizes.begin(), sizes.end());
    shape[static_cast<size_t>(d)] = split_sizes[j];
    grads[j] = ops::zeros(shape, TensorOptions{.dtype = c.dtype(0), .device = c.device(0)});
  }
  return ops::cat(grads, d);
}

// split.Tensor (self, split_size, dim): split_backward: the pieces' sizes
// from split_size (the last takes the rest), then split_with_sizes_backward.
VariableList split(const FormulaCall& c) {
  const int64_t split_size = c.arg(1).to_int(), dim = c.arg(2).to_int();
  const IntArrayRef sizes = c.sizes(0);
  const int64_t d = wrap_dim(dim, static_cast<int64_t>(sizes.size()), "split_backward");
  const size_t n = c.num_grads();
  std::vector<int64_t> split_sizes(n, split_size);
  split_sizes[n - 1] = split_size - (split_size * static_cast<int64_t>(n) - sizes[static_cast<size_t>(d)]);
  return {split_with_sizes_backward(grads_of(c, n), split_sizes, d, c)};
}

// split_with_sizes (self, split_sizes, dim).
VariableList split_with_sizes(const FormulaCall& c) {
  const std::vector<int64_t>& split_sizes = c.arg(1).to_int_list();
  return {split_with_sizes_backward(grads_of(c, c.num_grads()), split_sizes, c.arg(2).to_int(), c)};
}

// unbind.int (self, dim): unbind_backward: undefined gradients become
// zeros({}).expand(the defined ones' sizes), then aten::stack along dim.
VariableList unbind(const FormulaCall& c) {
  std::vector<Tensor> grads = grads_of(c, c.num_grads());
  const Tensor* like = nullptr;
  for (const Tensor& g : grads) {
    if (g.defined()) {
      like = &g;
      break;
    }
  }
  if (like == nullptr) return {Tensor()};  // the engine does not call a node with no gradient at all
  const SizeVec sizes(like->sizes().begin(), like->sizes().end());
  const TensorOptions options{.dtype = like->dtype(), .device = like->device()};
  for (Tensor& g : grads) {
    if (!g.defined()) g = ops::expand(ops::zeros({}, options), sizes);
  }
  return {ops::stack(grads, c.arg(1).to_int())};
}

}  // namespace

void add_split_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::split.Tensor", "SplitBackward0", 0, 0, &split});
  out.push_back({"aten::split_with_sizes", "SplitWithSizesBackward0", 0, 0, &split_with_sizes});
  out.push_back({"aten::unbind.int", "UnbindBackward0", 0, 0, &unbind});
}

void add_random_formulas(std::vector<Formula>& out) {
  // bernoulli.p has no derivatives.yaml entry: its backward fails, as PyTorch's.
  out.push_back({"aten::uniform_", "UniformBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::normal_", "NormalBackward0", 0, 0, &zeros_like_grad});
  out.push_back({"aten::bernoulli", "BernoulliBackward0", 0, 0, &zeros_like_grad});
}

}  // namespace opspec::autograd::internal
