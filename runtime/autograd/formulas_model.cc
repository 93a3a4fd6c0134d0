// formulas_model.cc: derivatives of the model ops: embedding, nll_loss,
// tril/triu, _safe_softmax and CPU flash attention, and the double backward
// of embedding_dense_backward and nll_loss_backward.
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// embedding (weight, indices, padding_idx, scale_grad_by_freq, sparse):
// embedding_backward, which is embedding_dense_backward for dense weights.
VariableList embedding(const FormulaCall& c) {
  OPSPEC_CHECK(!c.arg(4).to_bool(), "aten::embedding: sparse gradients are not supported");
  return {ops::embedding_dense_backward(c.grad(), c.input(1), c.sizes(0)[0], c.arg(2).to_int(),
                                        c.arg(3).to_bool())};
}

// embedding_dense_backward (grad_output, indices, num_weights, padding_idx, ...):
// embedding_dense_double_backward: grad's rows at indices, padding rows zeroed.
VariableList embedding_dense_backward(const FormulaCall& c) {
  const Tensor indices = c.input(1);
  Tensor gg = ops::index_select(c.grad(), 0, ops::reshape(indices, {-1}));
  const int64_t padding_idx = c.arg(3).to_int();
  if (padding_idx >= 0) ops::masked_fill_(gg, ops::reshape(ops::eq(indices, padding_idx), {-1, 1}), 0);
  SizeVec size(indices.sizes().begin(), indices.sizes().end());
  size.push_back(-1);
  VariableList g(c.num_inputs());
  g[0] = ops::view(gg, size);
  return g;
}

// nll_loss_forward (self, target, weight?, reduction, ignore_index): the
// loss's gradient only (total_weight is not differentiable).
VariableList nll_loss_forward(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  VariableList g(c.num_inputs());
  g[0] = ops::nll_loss_backward(c.grad(0), c.input(0), c.input(1), optional_input(c, 2),
                                static_cast<ops::Reduction>(c.arg(3).to_int()), c.arg(4).to_int(), c.output(1));
  return g;
}

// nll_loss_backward (grad_output, self, target, weight?, reduction,
// ignore_index, total_weight): grad_output's is nll_loss of the incoming
// gradient; self's is zeros (the backward is linear in grad_output alone).
VariableList nll_loss_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) {
    g[0] = ops::nll_loss(c.grad(), c.input(2), optional_input(c, 3), static_cast<ops::Reduction>(c.arg(4).to_int()),
                         c.arg(5).to_int());
  }
  if (c.needs(1)) g[1] = ops::zeros_like(c.grad());
  return g;
}

// nll_loss2d_forward and nll_loss2d_backward: nll_loss's two formulas over
// [N, C, H, W] (derivatives.yaml's nll_loss2d rows).
VariableList nll_loss2d_forward(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  VariableList g(c.num_inputs());
  g[0] = ops::nll_loss2d_backward(c.grad(0), c.input(0), c.input(1), optional_input(c, 2),
                                  static_cast<ops::Reduction>(c.arg(3).to_int()), c.arg(4).to_int(), c.output(1));
  return g;
}
VariableList nll_loss2d_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) {
    g[0] = ops::nll_loss2d(c.grad(), c.input(2), optional_input(c, 3),
                           static_cast<ops::Reduction>(c.arg(4).to_int()), c.arg(5).to_int());
  }
  if (c.needs(1)) g[1] = ops::zeros_like(c.grad());
  return g;
}

VariableList tril(const FormulaCall& c) { return {ops::tril(c.grad(), c.arg(1).to_int())}; }
VariableList triu(const FormulaCall& c) { return {ops::triu(c.grad(), c.arg(1).to_int())}; }

// _safe_softmax (self, dim, dtype?): softmax's formula on the saved result.
VariableList safe_softmax(const FormulaCall& c) {
  return {ops::_softmax_backward_data(c.grad(), c.output(0), c.arg(1).to_int(), c.dtype(0))};
}

// _scaled_dot_product_flash_attention_for_cpu (query, key, value, dropout_p,
// is_causal, attn_mask?, scale?): one backward call for query, key and value
// from the saved output and logsumexp. The mask has no formula, so a mask that
// requires grad is refused at the call, as PyTorch's codegen does;
// scaled_dot_product_attention sends one to the math path instead (See Note
// [Attention dispatch]).
VariableList sdpa_flash_cpu(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  const std::optional<double> scale =
      c.arg(6).is_none() ? std::nullopt : std::optional<double>(c.arg(6).to_double());
  auto [dq, dk, dv] = ops::_scaled_dot_product_flash_attention_for_cpu_backward(
      c.grad(0), c.input(0), c.input(1), c.input(2), c.output(0), c.output(1), c.arg(3).to_double(),
      c.arg(4).to_bool(), optional_input(c, 5), scale);
  VariableList g(c.num_inputs());
  g[0] = std::move(dq);
  g[1] = std::move(dk);
  g[2] = std::move(dv);
  return g;
}

}  // namespace

void add_model_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::embedding", "EmbeddingBackward0", 0b10, 0, &embedding});
  out.push_back({"aten::embedding_dense_backward", "EmbeddingDenseBackwardBackward0", 0b10, 0,
                 &embedding_dense_backward});
  out.push_back({"aten::nll_loss_forward", "NllLossBackward0", 0b111, 0b10, &nll_loss_forward, {}, false, {"weight"}});
  out.push_back({"aten::nll_loss_backward", "NllLossBackwardBackward0", 0b1100, 0, &nll_loss_backward, {}, false,
                 {"weight", "total_weight"}});
  out.push_back({"aten::nll_loss2d_forward", "NllLoss2DBackward0", 0b111, 0b10, &nll_loss2d_forward, {}, false,
                 {"weight"}});
  out.push_back({"aten::nll_loss2d_backward", "NllLoss2DBackwardBackward0", 0b1100, 0, &nll_loss2d_backward, {}, false,
                 {"weight", "total_weight"}});
  out.push_back({"aten::tril", "TrilBackward0", 0, 0, &tril});
  out.push_back({"aten::triu", "TriuBackward0", 0, 0, &triu});
  out.push_back({"aten::_safe_softmax", "SafeSoftmaxBackward0", 0, 1, &safe_softmax});
  out.push_back({"aten::_scaled_dot_product_flash_attention_for_cpu",
                 "ScaledDotProductFlashAttentionForCpuBackward0", 0b1111, 0b11, &sdpa_flash_cpu, {}, false,
                 {"attn_mask"}});
}

}  // namespace opspec::autograd::internal
