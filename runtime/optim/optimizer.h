// optimizer.h: optim::Optimizer, the base of the optimizers (PyTorch's
// torch.optim.Optimizer with one parameter group): the parameters it
// updates, zero_grad, and step. The optimizers are in sgd.h and adam.h.
#pragma once

#include <string>
#include <vector>

#include "runtime/core/tensor.h"

namespace opspec::optim {

// Note [Optimizer steps]
// The optimizers run PyTorch 2.x's single-tensor implementations
// (torch/optim/sgd.py's _single_tensor_sgd, adam.py's _single_tensor_adam),
// op for op, so a mode, DebugMode or make_fx sees what PyTorch records:
// `exp_avg.lerp_(grad, 1 - beta1)`, `exp_avg_sq.mul_(beta2).addcmul_(grad,
// grad, value=1 - beta2)`, the step count read with item(), then `sqrt`,
// `div`, `add_` and `addcdiv_`. Numbers (1 - beta1, the bias corrections,
// the step size) are computed in double as Python computes them. step() runs
// under no_grad, as torch.optim's step does. PyTorch takes its multi-tensor
// (`_foreach_*`) path by default when every parameter is on CUDA; opspec has
// no foreach ops and always runs the single-tensor path, which PyTorch runs on
// the CPU by default and everywhere with foreach=False. Optimizer.step's
// profiler records (`profiler::_record_function_enter_new`) are not ops here.
// Under compile the steps take PyTorch 2.x's compiled path instead (See Note
// [Compiled optimizer steps]).

// Note [Compiled optimizer steps]
// While compile captures a step (internal::is_compiling_now(), See Note [Is
// compiling]), the optimizers run what torch.compile traces of them:
// optimizer.py's _get_value returns the step tensor itself when
// torch.compiler.is_compiling(), so Adam's bias corrections are tensor math
// (`1 - beta1**step`: pow.Scalar, rsub.Scalar; `lr / bias_correction1`:
// Tensor.__rtruediv__'s reciprocal and mul; `bias_correction2**0.5`:
// pow.Tensor_Scalar) and no item() reads a value or breaks the graph; and
// Dynamo rewrites the in-place ops whose number it would have to read: a
// Tensor method addcmul_(t1, t2, value=v) becomes add_(t1 * t2 * v)
// (polyfills.addcmul_inplace), addcdiv_(t1, t2, value=v) add_(mul(div(t1,
// t2), v)) and add_(other, alpha=a) add_(mul(other, a))
// (torch/_dynamo/variables/tensor.py, with enable_dynamo_decompositions on,
// its default). lerp_(grad, 1 - beta1) stays (a number weight). So a
// compiled AdamW step is lift_fresh/zeros_like (first step), add_ (step_t +=
// 1), mul_ (decay), lerp_, mul_, mul, mul, add_, pow, rsub, pow, rsub,
// reciprocal, mul, pow, sqrt, div, add_, neg, div, mul, add_; its values
// are what PyTorch's compiled step computes, not eager's bits (the
// rewritten addcmul_ and addcdiv_ round more often, as under torch.compile).
// The graph is a no_grad block over parameters that require grad, so it runs
// the backend's inference graph (See Note [AOT autograd]): fused kernels.

// Optimizer: updates a fixed list of parameters from their grad().
// Not thread-safe; an optimizer belongs to one training loop.
class Optimizer {
 public:
  explicit Optimizer(std::vector<Tensor> params);
  virtual ~Optimizer();
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  // step: one update of every parameter whose grad() is defined (others are
  // skipped, as PyTorch skips a parameter whose .grad is None), under no_grad.
  void step();
  // zero_grad: drops every parameter's gradient (set_to_none, PyTorch 2.x's
  // default: no op runs), or zeroes it in place with aten::zero_.
  void zero_grad(bool set_to_none = true);
  // params: the parameters, in the order given.
  const std::vector<Tensor>& params() const { return params_; }

 protected:
  // update: the algorithm's update of parameter i (index into params()) with gradient grad.
  virtual void update(size_t i, Tensor& param, const Tensor& grad) = 0;

 private:
  std::vector<Tensor> params_;
};

// check_option: throws opspec::Error "Invalid <what>: <value>" (PyTorch's
// ValueError text) unless ok.
void check_option(bool ok, std::string_view what, double value);

}  // namespace opspec::optim
