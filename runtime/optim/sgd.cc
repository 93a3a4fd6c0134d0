#include "runtime/optim/sgd.h"

#include <utility>

#include "runtime/core/compiling.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace opspec::optim {

SGD::SGD(std::vector<Tensor> params, SGDOptions options) : Optimizer(std::move(params)), options_(options) {
  check_option(options_.lr >= 0.0, "learning rate", options_.lr);
  check_option(options_.momentum >= 0.0, "momentum value", options_.momentum);
  check_option(options_.weight_decay >= 0.0, "weight_decay value", options_.weight_decay);
  OPSPEC_CHECK(!options_.nesterov || (options_.momentum > 0 && options_.dampening == 0),
               "Nesterov momentum requires a momentum and zero dampening");
  buffers_.resize(this->params().size());
}

// _single_tensor_sgd, PyTorch 2.x's torch/optim/sgd.py, for a float lr.
void SGD::update(size_t i, Tensor& param, const Tensor& grad_in) {
  const SGDOptions& o = options_;
  // Under compile, Dynamo's method_add_ rewrites add_(other, alpha=a) as add_(mul(other, a)) (See Note
  // [Compiled optimizer steps]).
  const bool compiling = internal::is_compiling_now();
  auto add_scaled_ = [compiling](Tensor& self, const Tensor& other, const Scalar& alpha) {
    if (compiling) {
      ops::add_(self, ops::mul(other, alpha));
    } else {
      ops::add_(self, other, alpha);
    }
  };
  Tensor grad = o.maximize ? ops::neg(grad_in) : grad_in;
  if (o.weight_decay != 0) grad = ops::add(grad, param, o.weight_decay);
  if (o.momentum != 0) {
    Tensor& buf = buffers_[i];
    if (!buf.defined()) {
      buf = ops::clone(ops::detach(grad));
    } else {
      // Python's `1 - dampening` with the default int 0 is the int 1, which the log leaves out.
      const Scalar alpha = o.dampening == 0 ? Scalar(int64_t{1}) : Scalar(1 - o.dampening);
      ops::mul_(buf, o.momentum);
      add_scaled_(buf, grad, alpha);
    }
    grad = o.nesterov ? ops::add(grad, buf, o.momentum) : buf;
  }
  add_scaled_(param, grad, -o.lr);
}

}  // namespace opspec::optim
