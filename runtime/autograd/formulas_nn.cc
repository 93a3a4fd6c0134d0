// formulas_nn.cc: derivatives of the normalisation ops: _softmax,
// _log_softmax, native_layer_norm and native_dropout, and the double
// backward of _softmax_backward_data, _log_softmax_backward_data and
// native_dropout_backward.
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// _softmax / _log_softmax (self, dim, half_to_float): from the saved result.
VariableList softmax(const FormulaCall& c) {
  return {ops::_softmax_backward_data(c.grad(), c.output(0), c.arg(1).to_int(), c.dtype(0))};
}
VariableList log_softmax(const FormulaCall& c) {
  return {ops::_log_softmax_backward_data(c.grad(), c.output(0), c.arg(1).to_int(), c.dtype(0))};
}

// native_layer_norm (input, normalized_shape, weight?, bias?, eps): one
// native_layer_norm_backward for every input, with grad_input_mask saying
// which of input, weight and bias need a gradient; nothing when the
// output's gradient is undefined (only mean or rstd received one).
VariableList native_layer_norm(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  const int w = c.tensor_input_of_arg(2);
  const int b = c.tensor_input_of_arg(3);
  const std::array<bool, 3> mask = {c.needs(0), w >= 0 && c.needs(static_cast<size_t>(w)),
                                    b >= 0 && c.needs(static_cast<size_t>(b))};
  const std::optional<Tensor> weight = w >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(w))) : std::nullopt;
  const std::optional<Tensor> bias = b >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(b))) : std::nullopt;
  auto [dx, dw, db] = ops::native_layer_norm_backward(c.grad(0), c.input(0), c.arg(1).to_int_list(), c.output(1),
                                                      c.output(2), weight, bias, mask);
  VariableList g(c.num_inputs());
  g[0] = std::move(dx);
  if (w >= 0) g[static_cast<size_t>(w)] = std::move(dw);
  if (b >= 0) g[static_cast<size_t>(b)] = std::move(db);
  return g;
}

// native_dropout (input, p, train?): the saved mask (result1) scaled by
// 1 / (1 - p) (0 for p == 1; 1 when not training). With grad mode on (a
// create_graph backward) PyTorch's differentiable form: grad * (mask.type_as(grad) * scale).
VariableList native_dropout(const FormulaCall& c) {
  const double p = c.arg(1).to_double();
  const bool train = c.arg(2).is_none() || c.arg(2).to_bool();
  const double scale = !train ? 1.0 : (p == 1.0 ? 0.0 : 1.0 / (1.0 - p));
  const Tensor mask = c.output(1);
  if (is_grad_enabled()) {
    const Tensor m = ops::_to_copy(mask, TensorOptions{.dtype = c.grad().dtype()});
    return {ops::mul(c.grad(), mul_scalar(m, scale))};
  }
  return {ops::native_dropout_backward(c.grad(), mask, scale)};
}

// _softmax_backward_data (grad_output, output, dim, input_dtype): grad_output's
// formula first; output's is softmax_double_backward, grad_output * grad -
// (output * grad_output).sum(dim, true) * grad - grad_output * (output *
// grad).sum(dim, true), right operands first.
VariableList softmax_backward_data(const FormulaCall& c) {
  VariableList g(2);
  const int64_t dim = c.arg(2).to_int();
  const std::vector<int64_t> dims = {dim};
  const Tensor output = c.input(1);
  const Tensor grad = to_dtype(c.grad(), output.dtype());
  if (c.needs(0)) g[0] = ops::_softmax_backward_data(grad, output, dim, c.arg(3).to_dtype());
  if (c.needs(1)) {
    const Tensor grad_output = c.input(0);
    const Tensor last = ops::mul(grad_output, ops::sum(ops::mul(output, grad), dims, true));
    const Tensor middle = ops::mul(ops::sum(ops::mul(output, grad_output), dims, true), grad);
    g[1] = to_dtype(ops::sub(ops::sub(ops::mul(grad_output, grad), middle), last), output.dtype());
  }
  return g;
}

// _log_softmax_backward_data (grad_output, output, dim, input_dtype): its
// double backward, grad_output's formula first (sorted keys), each operand
// list right to left as GCC evaluates PyTorch's expressions.
VariableList log_softmax_backward_data(const FormulaCall& c) {
  VariableList g(2);
  const int64_t dim = c.arg(2).to_int();
  const std::vector<int64_t> dims = {dim};
  if (c.needs(0)) {  // grad - (grad * output.exp()).sum(dim, true)
    const Tensor s = ops::sum(ops::mul(c.grad(), ops::exp(c.input(1))), dims, true);
    g[0] = ops::sub(c.grad(), s);
  }
  if (c.needs(1)) {  // -grad_output.sum(dim, true) * output.exp() * grad
    const Tensor e = ops::exp(c.input(1));
    const Tensor minus_sum = ops::neg(ops::sum(c.input(0), dims, true));
    g[1] = ops::mul(ops::mul(minus_sum, e), c.grad());
  }
  return g;
}

// native_dropout_backward (grad_output, mask, scale):
// native_dropout_double_backward: grad * (mask.type_as(grad) * scale).
VariableList native_dropout_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) {
    const Tensor m = ops::_to_copy(c.input(1), TensorOptions{.dtype = c.grad().dtype()});
    g[0] = ops::mul(c.grad(), mul_scalar(m, c.arg(2).to_double()));
  }
  return g;
}

}  // namespace

void add_nn_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::_softmax", "SoftmaxBackward0", 0, 1, &softmax});
  out.push_back({"aten::_log_softmax", "LogSoftmaxBackward0", 0, 1, &log_softmax});
  out.push_back({"aten::native_layer_norm", "NativeLayerNormBackward0", 0b111, 0b110, &native_layer_norm});
  out.push_back({"aten::native_dropout", "NativeDropoutBackward0", 0, 0b10, &native_dropout});
  out.push_back({"aten::_softmax_backward_data", "SoftmaxBackwardDataBackward0", 0b11, 0, &softmax_backward_data,
                 {0b10, 0}});
  out.push_back({"aten::_log_softmax_backward_data", "LogSoftmaxBackwardDataBackward0", 0b11, 0,
                 &log_softmax_backward_data});
  out.push_back({"aten::native_dropout_backward", "NativeDropoutBackwardBackward0", 0b10, 0,
                 &native_dropout_backward});
}

}  // namespace opspec::autograd::internal
