#include "runtime/optim/optimizer.h"

#include <utility>

#include "runtime/core/error.h"
#include "runtime/core/grad_mode.h"
#include "runtime/ops/ops.h"

namespace opspec::optim {

Optimizer::Optimizer(std::vector<Tensor> params) : params_(std::move(params)) {
  OPSPEC_CHECK(!params_.empty(), "optimizer got an empty parameter list");
  for (size_t i = 0; i < params_.size(); ++i) {
    OPSPEC_CHECK(params_[i].defined(), "optimizer: parameter ", i, " is an undefined tensor");
    OPSPEC_CHECK(params_[i].is_leaf(), "optimizer: can't optimize a non-leaf Tensor (parameter ", i, ")");
  }
}

Optimizer::~Optimizer() = default;

void Optimizer::step() {
  autograd::NoGradGuard no_grad;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor grad = params_[i].grad();
    if (grad.defined()) update(i, params_[i], grad);
  }
}

void Optimizer::zero_grad(bool set_to_none) {
  for (Tensor& p : params_) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      ops::zero_(g);
    }
  }
}

void check_option(bool ok, std::string_view what, double value) {
  OPSPEC_CHECK(ok, "Invalid ", what, ": ", value);
}

}  // namespace opspec::optim
