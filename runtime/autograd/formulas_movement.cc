// formulas_movement.cc: derivatives of the padding, upsampling, group norm
// and data-movement ops: constant_pad_nd, upsample_nearest2d (+ backward),
// native_group_norm, flip, roll and repeat, as derivatives.yaml and
// FunctionsManual.cpp (constant_pad_nd_backward, repeat_backward,
// infinitely_differentiable_native_group_norm_backward).
// See Note [Derivative formulas] in formulas.h.
#include <algorithm>
#include <optional>
#include <tuple>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/core/grad_mode.h"
#include "runtime/core/memory_format.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

std::optional<double> optional_double(const Value& v) {
  if (v.is_none()) return std::nullopt;
  return v.to_double();
}

// constant_pad_nd (self, pad, value): constant_pad_nd_backward: the gradient
// padded by the negated pads (cropping what was padded) with 0.
VariableList constant_pad_nd(const FormulaCall& c) {
  std::vector<int64_t> negated = c.arg(1).to_int_list();
  for (int64_t& p : negated) p = -p;
  return {ops::constant_pad_nd(c.grad(), negated, 0)};
}

// upsample_nearest2d (self, output_size, scales_h?, scales_w?): the backward op with self's sizes.
VariableList upsample_nearest2d(const FormulaCall& c) {
  return {ops::upsample_nearest2d_backward(c.grad(), c.arg(1).to_int_list(), c.sizes(0), optional_double(c.arg(2)),
                                           optional_double(c.arg(3)))};
}

// upsample_nearest2d_backward (grad_output, output_size, input_size, scales_h?, scales_w?):
// grad_output's is the forward of the incoming gradient (the op is linear).
VariableList upsample_nearest2d_backward(const FormulaCall& c) {
  return {ops::upsample_nearest2d(c.grad(), c.arg(1).to_int_list(), optional_double(c.arg(3)),
                                  optional_double(c.arg(4)))};
}

// group_norm_var_mean_backward: FunctionsManual's var_mean_backward(dvar,
// dmean, X, {2, 3}, correction 0, keepdim) as group norm calls it: var_backward
// (the centered input first, then (2 / n) * dvar, then their product) plus
// mean_backward (dmean expanded to X's sizes, divided by n).
Tensor group_norm_var_mean_backward(const Tensor& dvar, const Tensor& dmean, const Tensor& x) {
  const std::vector<int64_t> dims = {2, 3};
  const double n = static_cast<double>(x.size(2) * x.size(3));
  const Tensor centered = ops::sub(x, ops::mean(x, dims, /*keepdim=*/true));
  const Tensor gvar = ops::mul(mul_scalar(dvar, 2.0 / n), centered);
  const Tensor gmean = div_scalar(ops::expand(dmean, x.sizes()), n);
  return ops::add(gvar, gmean);
}

// infinitely_differentiable_native_group_norm_backward: FunctionsManual's,
// op for op (C++ operands right to left, its in-place unsqueeze_ and
// reciprocal_ and its clamp_min included), made of differentiable ops so a
// create_graph backward can be differentiated again. As in PyTorch, dmean and
// drstd count only when both are defined.
std::tuple<Tensor, Tensor, Tensor> group_norm_backward_differentiable(
    const Tensor& dY, const Tensor& dmean, const Tensor& drstd, const Tensor& X, const Tensor& mean,
    const Tensor& rstd, const std::optional<Tensor>& gamma, int64_t N, int64_t C, int64_t HxW, int64_t G, double eps,
    std::array<bool, 3> mask) {
  const int64_t D = C / G;
  const double s = 1.0 / static_cast<double>(D * HxW);
  Tensor dX, dgamma, dbeta;
  const Tensor X_tensor = ops::reshape(X, {N, G, D, HxW});
  const Tensor mean_tensor = ops::reshape(mean, {N, G, 1, 1});
  const Tensor rstd_tensor = ops::reshape(rstd, {N, G, 1, 1});
  Tensor dY_tensor, ds, db;
  if (dY.defined()) {
    dY_tensor = ops::reshape(dY, {N, G, D, HxW});
    ds = ops::sum(ops::mul(dY_tensor, X_tensor), std::vector<int64_t>{3}, false);
    ops::unsqueeze_(ds, -1);
    db = ops::sum(dY_tensor, std::vector<int64_t>{3}, false);
    ops::unsqueeze_(db, -1);
  }
  if (mask[0]) {
    Tensor gamma_tensor;
    if (gamma) gamma_tensor = ops::reshape(*gamma, {1, G, D, 1});
    // PyTorch computes var here and never reads it; its ops still run.
    Tensor rstd_sq = ops::mul(rstd_tensor, rstd_tensor);
    const Tensor var = ops::clamp_min(sub_scalar(ops::reciprocal_(rstd_sq), eps), Scalar(0));
    (void)var;
    const Tensor rstd_cube = ops::mul(ops::mul(rstd_tensor, rstd_tensor), rstd_tensor);
    Tensor dvar;
    if (drstd.defined()) {
      const Tensor drstd_view = ops::view(drstd, {N, G, 1, 1});
      dvar = ops::mul(mul_scalar(rstd_cube, -0.5), drstd_view);
    }
    if (dY.defined()) {
      const Tensor a = gamma ? ops::mul(rstd_tensor, gamma_tensor) : rstd_tensor;
      Tensor b = ops::sum(gamma ? ops::mul(ds, gamma_tensor) : ds, std::vector<int64_t>{2}, false);
      ops::unsqueeze_(b, -2);
      Tensor c = ops::sum(gamma ? ops::mul(db, gamma_tensor) : db, std::vector<int64_t>{2}, false);
      ops::unsqueeze_(c, -2);
      b = mul_scalar(ops::mul(ops::sub(ops::mul(c, mean_tensor), b), rstd_cube), s);
      const Tensor c_term = mul_scalar(ops::mul(c, rstd_tensor), s);
      c = ops::sub(ops::mul(ops::neg(b), mean_tensor), c_term);
      const Tensor bx = ops::mul(b, X_tensor);
      dX = ops::add(ops::add(ops::mul(a, dY_tensor), bx), c);
      if (dmean.defined() && drstd.defined()) {
        const Tensor dmean_view = ops::view(dmean, {N, G, 1, 1});
        ops::add_(dX, group_norm_var_mean_backward(dvar, dmean_view, X_tensor));
      }
      dX = ops::reshape(dX, X.sizes());
    } else if (dmean.defined() && drstd.defined()) {
      const Tensor dmean_view = ops::view(dmean, {N, G, 1, 1});
      dX = ops::reshape(group_norm_var_mean_backward(dvar, dmean_view, X_tensor), X.sizes());
    }
  }
  if (mask[1] && dY.defined()) {
    const Tensor centered = ops::sub(ds, ops::mul(db, mean_tensor));
    dgamma = ops::reshape(ops::sum(ops::mul(centered, rstd_tensor), std::vector<int64_t>{0}, false), {C});
  }
  if (mask[2] && dY.defined()) dbeta = ops::reshape(ops::sum(db, std::vector<int64_t>{0}, false), {C});
  return {dX, dgamma, dbeta};
}

// native_group_norm (input, weight?, bias?, N, C, HxW, group, eps): with
// grad mode on (a create_graph backward) or gradients for mean or rstd,
// infinitely_differentiable_native_group_norm_backward; else one
// native_group_norm_backward of the gradient and input made dense in input's format, as
// derivatives.yaml says, grad_input_mask naming the inputs that need one.
VariableList native_group_norm(const FormulaCall& c) {
  const int w = c.tensor_input_of_arg(1);
  const int b = c.tensor_input_of_arg(2);
  const std::array<bool, 3> mask = {c.needs(0), w >= 0 && c.needs(static_cast<size_t>(w)),
                                    b >= 0 && c.needs(static_cast<size_t>(b))};
  const std::optional<Tensor> weight = w >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(w))) : std::nullopt;
  const int64_t N = c.arg(3).to_int(), C = c.arg(4).to_int(), HxW = c.arg(5).to_int(), group = c.arg(6).to_int();
  Tensor dx, dw, db;
  if (is_grad_enabled() || c.grad(1).defined() || c.grad(2).defined()) {
    std::tie(dx, dw, db) = group_norm_backward_differentiable(c.grad(0), c.grad(1), c.grad(2), c.input(0),
                                                              c.output(1), c.output(2), weight, N, C, HxW, group,
                                                              c.arg(7).to_double(), mask);
  } else if (c.grad(0).defined()) {
    // grads[0].contiguous(f), input.contiguous(f): input's first (right to left); f is input's
    // suggested format on the CPU, else contiguous (2.x; 1.13 made both contiguous on every device).
    const Tensor& x = c.input(0);
    const MemoryFormat f = x.device().is_cpu() ? suggest_memory_format(x) : MemoryFormat::kContiguous;
    const Tensor input = ops::contiguous(x, f);
    const Tensor grad = ops::contiguous(c.grad(0), f);
    std::tie(dx, dw, db) = ops::native_group_norm_backward(grad, input, c.output(1), c.output(2), weight, N, C, HxW,
                                                           group, mask);
  } else {
    return {};
  }
  VariableList g(c.num_inputs());
  g[0] = std::move(dx);
  if (w >= 0) g[static_cast<size_t>(w)] = std::move(dw);
  if (b >= 0) g[static_cast<size_t>(b)] = std::move(db);
  return g;
}

// flip (self, dims): grad.flip(dims).
VariableList flip(const FormulaCall& c) { return {ops::flip(c.grad(), c.arg(1).to_int_list())}; }

// roll (self, shifts, dims): grad rolled back: the negated shifts and the
// dims, both reversed (PyTorch's reverse_list).
VariableList roll(const FormulaCall& c) {
  std::vector<int64_t> shifts = c.arg(1).to_int_list();
  std::vector<int64_t> dims = c.arg(2).to_int_list();
  std::reverse(shifts.begin(), shifts.end());
  std::reverse(dims.begin(), dims.end());
  for (int64_t& s : shifts) s = -s;
  return {ops::roll(c.grad(), shifts, dims)};
}

// repeat (self, repeats): repeat_backward: zeros when a repeat is 0; else the
// leading (new) dims summed away one by one, then one reshape splitting each
// repeated dim into (repeat, size) and one sum over the repeat dims.
VariableList repeat(const FormulaCall& c) {
  const std::vector<int64_t>& repeats = c.arg(1).to_int_list();
  const IntArrayRef input_shape = c.sizes(0);
  Tensor grad = c.grad();
  if (std::find(repeats.begin(), repeats.end(), 0) != repeats.end()) {
    return {ops::zeros(input_shape, {.dtype = grad.dtype(), .device = grad.device()})};
  }
  const size_t input_dims = input_shape.size();
  const auto num_unsqueezed = static_cast<size_t>(grad.dim()) - input_dims;
  for (size_t i = 0; i < num_unsqueezed; ++i) grad = ops::sum(grad, std::vector<int64_t>{0}, false);
  std::vector<int64_t> grad_size, sum_dims;
  for (size_t d = 0; d < input_dims; ++d) {
    const int64_t r = repeats[d + num_unsqueezed];
    if (r != 1) {
      grad_size.push_back(r);
      sum_dims.push_back(static_cast<int64_t>(grad_size.size()) - 1);
    }
    grad_size.push_back(input_shape[d]);
  }
  if (!sum_dims.empty()) {
    grad = ops::reshape(grad, grad_size);
    grad = ops::sum(grad, sum_dims, false);
  }
  return {grad};
}

}  // namespace

void add_movement_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::constant_pad_nd", "ConstantPadNdBackward0", 0, 0, &constant_pad_nd});
  out.push_back({"aten::upsample_nearest2d", "UpsampleNearest2DBackward0", 0, 0, &upsample_nearest2d});
  out.push_back({"aten::upsample_nearest2d_backward", "UpsampleNearest2DBackwardBackward0", 0, 0,
                 &upsample_nearest2d_backward});
  // Saves input and weight (bias is never read) and the mean and rstd outputs.
  out.push_back({"aten::native_group_norm", "NativeGroupNormBackward0", 0b11, 0b110, &native_group_norm});
  out.push_back({"aten::flip", "FlipBackward0", 0, 0, &flip});
  out.push_back({"aten::roll", "RollBackward0", 0, 0, &roll});
  out.push_back({"aten::repeat", "RepeatBackward0", 0, 0, &repeat});
}

}  // namespace opspec::autograd::internal
