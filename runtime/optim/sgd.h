// sgd.h: optim::SGD, PyTorch's torch.optim.SGD (momentum, dampening,
// Nesterov, weight decay, maximize) run op for op (See Note [Optimizer steps]).
#pragma once

#include <vector>

#include "runtime/optim/optimizer.h"

namespace opspec::optim {

// SGDOptions: torch.optim.SGD's arguments and defaults.
struct SGDOptions {
  double lr = 1e-3;
  double momentum = 0;
  double dampening = 0;
  double weight_decay = 0;
  bool nesterov = false;
  bool maximize = false;
};

// SGD: p -= lr * g, where g is the gradient (negated with maximize), plus
// weight_decay * p, through the momentum buffer when momentum != 0 (the first
// step copies g into it: `grad.detach().clone()`).
class SGD : public Optimizer {
 public:
  // Throws opspec::Error with PyTorch's ValueError texts for a negative lr,
  // momentum or weight_decay, and for Nesterov without momentum or with dampening.
  SGD(std::vector<Tensor> params, SGDOptions options);
  const SGDOptions& options() const { return options_; }
  // momentum_buffer: parameter i's buffer (undefined before its first step or without momentum).
  const Tensor& momentum_buffer(size_t i) const { return buffers_.at(i); }

 protected:
  void update(size_t i, Tensor& param, const Tensor& grad) override;

 private:
  SGDOptions options_;
  std::vector<Tensor> buffers_;
};

}  // namespace opspec::optim
