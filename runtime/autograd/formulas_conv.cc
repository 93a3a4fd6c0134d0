// formulas_conv.cc: derivatives of convolution and the 2-D pooling ops, and
// the double backward of the average poolings (linear in grad_output).
// See Note [Derivative formulas] in formulas.h.
#include "runtime/autograd/formulas.h"
#include "runtime/autograd/internal/formula_helpers.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd::internal {
namespace {

// convolution (input, weight, bias?, stride, padding, dilation, transposed,
// output_padding, groups): one convolution_backward for every input, the
// mask saying which need a gradient, bias's sizes when it was given.
VariableList convolution(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  const int b = c.tensor_input_of_arg(2);
  const std::array<bool, 3> mask = {c.needs(0), c.needs(1), b >= 0 && c.needs(static_cast<size_t>(b))};
  // bias->sym_sizes() of an absent bias is [0], as PyTorch's generated code passes it.
  const SizeVec bias_sizes = b >= 0 ? SizeVec(c.sizes(static_cast<size_t>(b)).begin(),
                                              c.sizes(static_cast<size_t>(b)).end())
                                    : SizeVec{0};
  auto [dx, dw, db] = ops::convolution_backward(
      c.grad(0), c.input(0), c.input(1), OptionalIntArrayRef(bias_sizes),
      c.arg(3).to_int_list(), c.arg(4).to_int_list(), c.arg(5).to_int_list(), c.arg(6).to_bool(),
      c.arg(7).to_int_list(), c.arg(8).to_int(), mask);
  VariableList g(c.num_inputs());
  g[0] = std::move(dx);
  g[1] = std::move(dw);
  if (b >= 0) g[static_cast<size_t>(b)] = std::move(db);
  return g;
}

// native_batch_norm (input, weight?, bias?, running_mean?, running_var?,
// training, momentum, eps): one native_batch_norm_backward from the saved
// statistics (result1, result2) for input, weight and bias.
VariableList native_batch_norm(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  auto optional_input = [&](size_t arg) {
    const int k = c.tensor_input_of_arg(arg);
    return k >= 0 ? std::optional<Tensor>(c.input(static_cast<size_t>(k))) : std::nullopt;
  };
  const int w = c.tensor_input_of_arg(1), b = c.tensor_input_of_arg(2);
  const std::array<bool, 3> mask = {c.needs(0), w >= 0 && c.needs(static_cast<size_t>(w)),
                                    b >= 0 && c.needs(static_cast<size_t>(b))};
  auto [dx, dw, db] = ops::native_batch_norm_backward(c.grad(0), c.input(0), optional_input(1), optional_input(3),
                                                      optional_input(4), c.output(1), c.output(2),
                                                      c.arg(5).to_bool(), c.arg(7).to_double(), mask);
  VariableList g(c.num_inputs());
  g[0] = std::move(dx);
  if (w >= 0) g[static_cast<size_t>(w)] = std::move(dw);
  if (b >= 0) g[static_cast<size_t>(b)] = std::move(db);
  return g;
}

// max_pool2d_with_indices (self, kernel_size, stride, padding, dilation,
// ceil_mode): the gradient goes to each window's max, by the saved indices.
VariableList max_pool2d_with_indices(const FormulaCall& c) {
  if (!c.grad(0).defined()) return {};
  return {ops::max_pool2d_with_indices_backward(c.grad(0), c.input(0), c.arg(1).to_int_list(),
                                                c.arg(2).to_int_list(), c.arg(3).to_int_list(),
                                                c.arg(4).to_int_list(), c.arg(5).to_bool(), c.output(1))};
}

// avg_pool2d (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor_override?).
VariableList avg_pool2d(const FormulaCall& c) {
  return {ops::avg_pool2d_backward(c.grad(), c.input(0), c.arg(1).to_int_list(), c.arg(2).to_int_list(),
                                   c.arg(3).to_int_list(), c.arg(4).to_bool(), c.arg(5).to_bool(),
                                   optional_int(c.arg(6)))};
}

// avg_pool2d_backward (grad_output, self, ...): grad_output's is avg_pool2d of
// the incoming gradient; self's is zeros.
VariableList avg_pool2d_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) {
    g[0] = ops::avg_pool2d(c.grad(), c.arg(2).to_int_list(), c.arg(3).to_int_list(), c.arg(4).to_int_list(),
                           c.arg(5).to_bool(), c.arg(6).to_bool(), optional_int(c.arg(7)));
  }
  if (c.needs(1)) g[1] = ops::zeros_like(c.input(1));
  return g;
}

VariableList adaptive_avg_pool2d(const FormulaCall& c) {
  return {ops::_adaptive_avg_pool2d_backward(c.grad(), c.input(0))};
}

// _adaptive_avg_pool2d_backward (grad_output, self): grad_output's is the
// pooling of the incoming gradient to grad_output's size; self's is zeros.
VariableList adaptive_avg_pool2d_backward(const FormulaCall& c) {
  VariableList g(c.num_inputs());
  if (c.needs(0)) {
    const IntArrayRef s = c.sizes(0);
    g[0] = ops::_adaptive_avg_pool2d(c.grad(), {s[s.size() - 2], s[s.size() - 1]});
  }
  if (c.needs(1)) g[1] = ops::zeros_like(c.input(1));
  return g;
}

}  // namespace

void add_conv_formulas(std::vector<Formula>& out) {
  out.push_back({"aten::convolution", "ConvolutionBackward0", 0b11, 0, &convolution});
  out.push_back({"aten::native_batch_norm", "NativeBatchNormBackward0", 0b11111, 0b110, &native_batch_norm});
  out.push_back({"aten::max_pool2d_with_indices", "MaxPool2DWithIndicesBackward0", 0b1, 0b10,
                 &max_pool2d_with_indices});
  out.push_back({"aten::avg_pool2d", "AvgPool2DBackward0", 0b1, 0, &avg_pool2d});
  out.push_back({"aten::avg_pool2d_backward", "AvgPool2DBackwardBackward0", 0b10, 0, &avg_pool2d_backward});
  out.push_back({"aten::_adaptive_avg_pool2d", "AdaptiveAvgPool2DBackward0", 0b1, 0, &adaptive_avg_pool2d});
  out.push_back({"aten::_adaptive_avg_pool2d_backward", "AdaptiveAvgPool2DBackwardBackward0", 0b10, 0,
                 &adaptive_avg_pool2d_backward});
}

}  // namespace opspec::autograd::internal
