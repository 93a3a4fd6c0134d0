// adam.h: optim::Adam and optim::AdamW, PyTorch's torch.optim.Adam and
// AdamW (Adam with decoupled weight decay, as PyTorch 2.x defines it), run op
// for op (See Note [Optimizer steps]).
#pragma once

#include <vector>

#include "runtime/optim/optimizer.h"

namespace opspec::optim {

// AdamOptions: torch.optim.Adam's arguments and defaults;
// decoupled_weight_decay makes it AdamW.
struct AdamOptions {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0;
  bool amsgrad = false;
  bool maximize = false;
  bool decoupled_weight_decay = false;
};

// Adam: per parameter, a step count (a 0-dim f32 cpu tensor made with
// torch.tensor(0.0), so aten::lift_fresh), exp_avg and exp_avg_sq (and
// max_exp_avg_sq with amsgrad) made with zeros_like at its first step; each
// step updates them and the parameter as _single_tensor_adam does.
class Adam : public Optimizer {
 public:
  // Throws opspec::Error with PyTorch's ValueError texts for a negative lr,
  // eps or weight_decay and betas outside [0, 1).
  Adam(std::vector<Tensor> params, AdamOptions options);
  const AdamOptions& options() const { return options_; }

  // State: one parameter's state (undefined tensors before its first step).
  struct State {
    Tensor step, exp_avg, exp_avg_sq, max_exp_avg_sq;
  };
  const State& state(size_t i) const { return state_.at(i); }

 protected:
  void update(size_t i, Tensor& param, const Tensor& grad) override;

 private:
  // compiled_update: the step after the moments' lerp_ while compiling (See Note [Compiled optimizer steps]).
  void compiled_update(State& s, Tensor& param, const Tensor& grad);

  AdamOptions options_;
  std::vector<State> state_;
};

// AdamW: Adam with decoupled weight decay (p *= 1 - lr * weight_decay before
// the update) and weight_decay 1e-2 by default, as torch.optim.AdamW.
class AdamW : public Adam {
 public:
  // AdamWOptions' defaults: AdamOptions' with weight_decay 1e-2 and decoupled weight decay.
  static AdamOptions defaults() {
    AdamOptions o;
    o.weight_decay = 1e-2;
    o.decoupled_weight_decay = true;
    return o;
  }
  explicit AdamW(std::vector<Tensor> params, AdamOptions options = defaults());
};

}  // namespace opspec::optim
