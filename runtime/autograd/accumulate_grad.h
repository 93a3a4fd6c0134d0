// accumulate_grad.h: AccumulateGrad, the node that stores a leaf's gradient.
// See Note [Accumulating gradients].
#pragma once

#include "runtime/autograd/node.h"
#include "runtime/core/memory_format.h"  // is_non_overlapping_and_dense

namespace opspec::autograd {

// Note [Accumulating gradients]
// PyTorch's AccumulateGrad, op for op, so a mode during backward sees the
// same calls. The first gradient is stolen when no one else holds it and its
// strides match the leaf's (the layout contract): .grad = grad.detach(), one
// aten::detach. Otherwise (an expanded gradient from sum, a transposed one,
// one still referenced elsewhere) it is copied into the leaf's layout:
// new_empty_strided + copy_, or clone(memory_format=torch.contiguous_format)
// for a leaf that is not dense. Later gradients are added in place, grad.add_(new),
// or out of place when the graph itself is being recorded (create_graph).

// AccumulateGrad: adds its input into variable's .grad. The leaf's
// AutogradMeta owns it, so it points at its variable without owning it,
// until the leaf's handles are gone (See Note [Graphs keep their leaves]).
class AccumulateGrad : public Node {
 public:
  explicit AccumulateGrad(const Tensor& variable);
  std::string name() const override { return "AccumulateGrad"; }
  VariableList apply(VariableList&& grads) override;
  // variable: the leaf (undefined once the leaf is gone).
  Tensor variable() const { return variable_ != nullptr ? Tensor(IntrusivePtr<TensorImpl>(variable_)) : Tensor(); }
  // matches: whether t still has the shape, dtype and device recorded here.
  bool matches(const Tensor& t) const;
  // release: the leaf is being destroyed (its AutogradMeta calls it).
  void release() { variable_ = nullptr; }
  // adopt: owns the leaf, whose handles are gone (null: gives it back to them).
  void adopt(IntrusivePtr<TensorImpl> leaf) { adopted_ = std::move(leaf); }

 private:
  TensorImpl* variable_;
  IntrusivePtr<TensorImpl> adopted_;  // the leaf, once adopted
};

// obeys_layout_contract: grad has variable's strides where it matters (See
// Note [Accumulating gradients]).
bool obeys_layout_contract(const Tensor& grad, const Tensor& variable);

}  // namespace opspec::autograd
