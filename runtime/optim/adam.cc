#include "runtime/optim/adam.h"

#include <cmath>
#include <utility>

#include "runtime/core/compiling.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace opspec::optim {

Adam::Adam(std::vector<Tensor> params, AdamOptions options) : Optimizer(std::move(params)), options_(options) {
  check_option(options_.lr >= 0.0, "learning rate", options_.lr);
  check_option(options_.eps >= 0.0, "epsilon value", options_.eps);
  check_option(options_.beta1 >= 0.0 && options_.beta1 < 1.0, "beta parameter at index 0", options_.beta1);
  check_option(options_.beta2 >= 0.0 && options_.beta2 < 1.0, "beta parameter at index 1", options_.beta2);
  check_option(options_.weight_decay >= 0.0, "weight_decay value", options_.weight_decay);
  state_.resize(this->params().size());
}

AdamW::AdamW(std::vector<Tensor> params, AdamOptions options) : Adam(std::move(params), [&] {
  options.decoupled_weight_decay = true;
  return options;
}()) {}

// _single_tensor_adam, PyTorch 2.x's torch/optim/adam.py, for float
// hyperparameters, capturable=False and differentiable=False.
void Adam::update(size_t i, Tensor& param, const Tensor& grad_in) {
  const AdamOptions& o = options_;
  State& s = state_[i];
  if (!s.step.defined()) {  // Adam._init_group's lazy state
    s.step = ops::lift_fresh(ops::tensor({0.0}, {}, DType::kFloat32));
    s.exp_avg = ops::zeros_like(param, {.memory_format = MemoryFormat::kPreserve});
    s.exp_avg_sq = ops::zeros_like(param, {.memory_format = MemoryFormat::kPreserve});
    if (o.amsgrad) s.max_exp_avg_sq = ops::zeros_like(param, {.memory_format = MemoryFormat::kPreserve});
  }
  Tensor grad = o.maximize ? ops::neg(grad_in) : grad_in;
  ops::add_(s.step, 1);  // step_t += 1
  if (o.weight_decay != 0) {
    if (o.decoupled_weight_decay) {
      ops::mul_(param, 1 - o.lr * o.weight_decay);
    } else {
      grad = ops::add(grad, param, o.weight_decay);
    }
  }
  ops::lerp_(s.exp_avg, grad, 1 - o.beta1);
  if (internal::is_compiling_now()) return compiled_update(s, param, grad);
  ops::addcmul_(ops::mul_(s.exp_avg_sq, o.beta2), grad, grad, 1 - o.beta2);
  const double step = s.step.item().to_double();  // _get_value(step_t)
  const double bias_correction1 = 1 - std::pow(o.beta1, step);
  const double bias_correction2 = 1 - std::pow(o.beta2, step);
  const double step_size = o.lr / bias_correction1;
  const double bias_correction2_sqrt = std::pow(bias_correction2, 0.5);
  Tensor denom;
  if (o.amsgrad) {
    // torch.maximum(max_exp_avg_sq, exp_avg_sq, out=max_exp_avg_sq): opspec has no out= ops, so
    // maximum then copy_ (the values are the same; the log differs, docs/pytorch-versions.md).
    ops::copy_(s.max_exp_avg_sq, ops::maximum(s.max_exp_avg_sq, s.exp_avg_sq));
    denom = ops::div(ops::sqrt(s.max_exp_avg_sq), bias_correction2_sqrt);
  } else {
    denom = ops::div(ops::sqrt(s.exp_avg_sq), bias_correction2_sqrt);
  }
  ops::add_(denom, o.eps);
  ops::addcdiv_(param, s.exp_avg, denom, -step_size);
}

// The rest of the step under compile (See Note [Compiled optimizer steps]):
// the step count stays a tensor, and Dynamo's rewrites of addcmul_ and
// addcdiv_ with a value give their constituent ops.
void Adam::compiled_update(State& s, Tensor& param, const Tensor& grad) {
  const AdamOptions& o = options_;
  // exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2): polyfills.addcmul_inplace's
  // self.add_(tensor1 * tensor2 * value).
  ops::mul_(s.exp_avg_sq, o.beta2);
  ops::add_(s.exp_avg_sq, ops::mul(ops::mul(grad, grad), 1 - o.beta2));
  const Tensor& step = s.step;  // _get_value(step_t) while compiling: the tensor
  const Tensor bias_correction1 = 1 - ops::pow(o.beta1, step);
  const Tensor bias_correction2 = 1 - ops::pow(o.beta2, step);
  const Tensor step_size = o.lr / bias_correction1;  // Tensor.__rtruediv__: reciprocal, then mul
  const Tensor bias_correction2_sqrt = ops::pow(bias_correction2, 0.5);
  Tensor denom;
  if (o.amsgrad) {
    ops::copy_(s.max_exp_avg_sq, ops::maximum(s.max_exp_avg_sq, s.exp_avg_sq));  // as update()'s
    denom = ops::div(ops::sqrt(s.max_exp_avg_sq), bias_correction2_sqrt);
  } else {
    denom = ops::div(ops::sqrt(s.exp_avg_sq), bias_correction2_sqrt);
  }
  ops::add_(denom, o.eps);
  // param.addcdiv_(exp_avg, denom, value=-step_size): Dynamo's method_addcdiv_ is
  // param.add_(torch.mul(torch.div(exp_avg, denom), value)).
  const Tensor value = ops::neg(step_size);  // Python evaluates the arguments first
  ops::add_(param, ops::mul(ops::div(s.exp_avg, denom), value));
}

}  // namespace opspec::optim
