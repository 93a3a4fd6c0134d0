// formulas_layer_norm.cc: the double backward of native_layer_norm_backward:
// PyTorch's layer_norm_double_backward (FunctionsManual.cpp), op for op.
// See Note [Derivative formulas] in formulas.h.
#include <numeric>
#include <optional>
#include <tuple>

#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

Tensor sum_dim1(const Tensor& t) { return ops::sum(t, std::vector<int64_t>{1}, true); }

// LayerNormSaved: the first backward's inputs as [M, N] / [M, 1] views.
struct LayerNormSaved {
  int64_t n = 0;
  Tensor input_sub_mu;      // input - mean
  Tensor invstd, invstd2, invstd3;  // rstd, rstd^2, rstd^3
};

// first_bwd_fn_grad_input: native_layer_norm_backward's input gradient for
// gradient gO_local and weight gamma_local, written as PyTorch's lambda.
Tensor first_bwd_fn_grad_input(const LayerNormSaved& s, const Tensor& gO_local, const Tensor& gamma_local) {
  Tensor h0 = ops::mul(gamma_local, s.invstd);
  div_scalar_(h0, s.n);
  Tensor h1 = mul_scalar(gO_local, s.n);
  ops::sub_(h1, sum_dim1(gO_local));
  const Tensor mu_sum = sum_dim1(ops::mul(gO_local, s.input_sub_mu));  // the right operand first
  ops::sub_(h1, ops::mul(ops::mul(s.input_sub_mu, s.invstd2), mu_sum));
  return ops::mul(h0, h1);
}

// layer_norm_double_backward: (gI, gG, ggO): the gradients of input, weight
// and grad_out from ggI, ggG, ggB, those of the first backward's outputs.
std::tuple<Tensor, Tensor, Tensor> layer_norm_double_backward(const Tensor& input_t, const std::optional<Tensor>& gamma,
                                                              const Tensor& ggI, const Tensor& ggG, const Tensor& ggB,
                                                              const Tensor& gO_t, const Tensor& save_mean_t,
                                                              const Tensor& save_invstd_t,
                                                              IntArrayRef normalized_shape) {
  const IntArrayRef shape = input_t.sizes();
  const size_t axis = shape.size() - normalized_shape.size();
  const int64_t m = std::accumulate(shape.begin(), shape.begin() + axis, int64_t{1}, std::multiplies<>());
  const int64_t n = std::accumulate(shape.begin() + axis, shape.end(), int64_t{1}, std::multiplies<>());

  const Tensor input = ops::reshape(input_t, {m, n});
  const Tensor gO = ops::reshape(gO_t, {m, n});
  const Tensor save_mean = ops::reshape(save_mean_t, {m, 1});
  const Tensor save_invstd = ops::reshape(save_invstd_t, {m, 1});
  const bool affine = gamma.has_value() && gamma->defined();
  Tensor gamma_expanded, ggG_expanded, ggB_expanded, ggI_expanded;
  if (affine) {
    gamma_expanded = ops::reshape(*gamma, {1, n});
    if (ggG.defined()) ggG_expanded = ops::reshape(ggG, {1, n});
    if (ggB.defined()) ggB_expanded = ops::reshape(ggB, {1, n});
  } else {
    gamma_expanded = ops::ones({1}, {.dtype = input.dtype(), .device = input.device()});
  }
  if (ggI.defined()) ggI_expanded = ops::reshape(ggI, {m, n});

  LayerNormSaved s;
  s.n = n;
  const Tensor mu = to_dtype(save_mean, input.dtype());
  s.input_sub_mu = ops::sub(input, mu);
  s.invstd = to_dtype(save_invstd, input.dtype());
  s.invstd2 = ops::pow(s.invstd, 2);
  s.invstd3 = ops::pow(s.invstd, 3);
  const Tensor input_mu_sigma2_neg_3_2 = ops::mul(s.input_sub_mu, s.invstd3);

  Tensor gI;
  if (ggI.defined()) {
    const Tensor gxhat = ops::mul(gO, gamma_expanded);
    const Tensor gxhat_mu_sum = sum_dim1(ops::mul(gxhat, s.input_sub_mu));
    const Tensor gxhat_sum = sum_dim1(gxhat);
    const Tensor ggI_sum = sum_dim1(ggI_expanded);
    const Tensor ggI_mu_sum = sum_dim1(ops::mul(ggI_expanded, s.input_sub_mu));
    Tensor all_sub = ops::mul(ggI_sum, gxhat_sum);
    div_scalar_(all_sub, n);
    ops::sub_(all_sub, sum_dim1(ops::mul(ggI_expanded, gxhat)));
    Tensor third = ops::mul(ops::mul(s.invstd2, gxhat_mu_sum), ggI_mu_sum);
    mul_scalar_(third, 3. / static_cast<double>(n));
    ops::add_(all_sub, third);
    Tensor gI_0t = ops::mul(input_mu_sigma2_neg_3_2, all_sub);
    div_scalar_(gI_0t, n);
    // a * (b) evaluates (b) first under GCC: the difference, then the scaled sum.
    const Tensor diff1 = ops::sub(div_scalar(gxhat_sum, n), gxhat);
    Tensor scaled1 = ops::mul(ggI_mu_sum, s.invstd3);
    const Tensor gI_1t = ops::mul(div_scalar_(scaled1, n), diff1);
    const Tensor diff2 = ops::sub(div_scalar(ggI_sum, n), ggI_expanded);
    Tensor scaled2 = ops::mul(gxhat_mu_sum, s.invstd3);
    const Tensor gI_2t = ops::mul(div_scalar_(scaled2, n), diff2);
    ops::add_(gI_0t, gI_1t);
    ops::add_(gI_0t, gI_2t);
    gI = gI_0t;
  }
  if (affine && ggG.defined()) {
    Tensor t0 = ops::mul(ops::mul(gO, ggG_expanded), s.invstd);
    const Tensor g_sum = sum_dim1(ops::mul(gO, ggG_expanded));
    Tensor t1 = ops::mul(s.invstd, g_sum);
    div_scalar_(t1, -n);
    const Tensor g_mu_sum = sum_dim1(ops::mul(ops::mul(gO, ggG_expanded), s.input_sub_mu));
    Tensor t2 = ops::mul(input_mu_sigma2_neg_3_2, g_mu_sum);
    div_scalar_(t2, -n);
    ops::add_(t0, t1);
    ops::add_(t0, t2);
    if (gI.defined()) {
      ops::add_(gI, t0);
    } else {
      gI = t0;
    }
  }
  if (gI.defined()) gI = ops::reshape(gI, input_t.sizes());

  Tensor gG;
  if (affine && ggI.defined()) {
    gG = first_bwd_fn_grad_input(s, ggI_expanded, ops::ones({}, {.dtype = s.invstd.dtype(), .device = s.invstd.device()}));
    gG = ops::sum(ops::mul(gO, gG), std::vector<int64_t>{0}, false);
    gG = ops::reshape(gG, gamma->sizes());
  }

  Tensor ggO;
  if (ggI.defined()) ggO = first_bwd_fn_grad_input(s, ggI_expanded, gamma_expanded);
  if (ggG.defined()) {
    const Tensor term = ops::mul(ops::mul(ggG_expanded, s.input_sub_mu), s.invstd);
    if (ggO.defined()) {
      ops::add_(ggO, term);
    } else {
      ggO = term;
    }
  }
  if (ggB.defined()) {
    if (ggO.defined()) {
      ops::add_(ggO, ggB_expanded);
    } else {
      ggO = ggB_expanded;
    }
  }
  if (ggO.defined()) ggO = ops::reshape(ops::expand(ggO, {m, n}), input_t.sizes());
  return {gI, gG, ggO};
}

// native_layer_norm_backward (grad_out, input, normalized_shape, mean, rstd,
// weight?, bias?, output_mask): tensor inputs grad_out 0, input 1, mean 2,
// rstd 3, then weight and bias when given. One layer_norm_double_backward
// for input, weight and grad_out; bias, mean and rstd get none.
VariableList native_layer_norm_backward_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  const int w = c.tensor_input_of_arg(5);
  const bool weight_needs = w >= 0 && c.needs(static_cast<size_t>(w));
  if (!c.needs(0) && !c.needs(1) && !weight_needs) return g;
  const std::optional<Tensor> gamma = w >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(w))) : std::nullopt;
  auto [gI, gG, ggO] = layer_norm_double_backward(c.input(1), gamma, c.grad(0), c.grad(1), c.grad(2), c.input(0),
                                                  c.input(2), c.input(3), c.arg(2).to_int_list());
  if (c.needs(1)) g[1] = std::move(gI);
  if (weight_needs) g[static_cast<size_t>(w)] = std::move(gG);
  if (c.needs(0)) g[0] = std::move(ggO);
  return g;
}

}  // namespace

void add_layer_norm_formulas(std::vector<Formula>& out) {
  // Saves grad_out, input, mean, rstd and weight (bias is never read).
  out.push_back({"aten::native_layer_norm_backward", "NativeLayerNormBackwardBackward0", 0b11111, 0,
                 &native_layer_norm_backward_backward});
}

}  // namespace opspec::autograd::internal
