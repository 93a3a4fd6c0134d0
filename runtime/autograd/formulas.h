// formulas.h: derivative formulas, one per differentiable op, as in PyTorch's
// tools/autograd/derivatives.yaml. See Note [Derivative formulas].
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <vector>

#include "runtime/autograd/node.h"
#include "runtime/dispatch/value.h"

namespace opspec::autograd {

// Note [Derivative formulas]
// A formula computes the gradient of each tensor input of an op (in argument
// order; a Tensor[] contributes one per element) from the gradients of its
// outputs, calling the same ops, in the same order, as PyTorch's generated
// code for the same derivatives.yaml entry: inputs are computed in the sorted
// order of their yaml keys (mm: mat2, then self), helpers like maybe_multiply
// skip a multiply by 1, and conj() of a real tensor is no op. Broadcast
// reductions are not the formula's: the engine sums a gradient to its input's
// shape (See Note [Engine order]). A formula names the inputs and outputs it
// reads (saves_inputs / saves_outputs, bit i for tensor input or output i);
// only those are kept (some only when a given input needs its gradient), and
// only their versions are checked.

// FormulaCall: what a formula reads during backward.
class FormulaCall {
 public:
  // SavedList, MetaList, StridesList: inline room for an op's usual two or three tensors.
  using SavedList = absl::InlinedVector<SavedTensor, 3>;
  using MetaList = absl::InlinedVector<InputMetadata, 3>;
  using StridesList = absl::InlinedVector<SizeVec, 3>;

  // OffsetList: the inputs' storage offsets.
  using OffsetList = absl::InlinedVector<int64_t, 3>;

  FormulaCall(const Node& node, VariableList grads, const SavedList& inputs, const SavedList& outputs,
              const Stack& args, const MetaList& metas, const StridesList& input_strides,
              const OffsetList& input_offsets, uint64_t tensor_args, size_t args_offset = 0)
      : node_(node), grads_(std::move(grads)), inputs_(inputs), outputs_(outputs), args_(args), metas_(metas),
        strides_(input_strides), offsets_(input_offsets), tensor_args_(tensor_args), args_offset_(args_offset) {}

  // grad: the gradient of output i (undefined when none flowed).
  const Tensor& grad(size_t i = 0) const { return grads_.at(i); }
  // num_grads: how many outputs the op had (a Tensor[] output counts its elements).
  size_t num_grads() const { return grads_.size(); }
  // input / output: saved tensor input or output i (version-checked).
  Tensor input(size_t i) const { return inputs_.at(i).unpack(node_); }
  Tensor output(size_t i) const { return outputs_.at(i).unpack(node_); }
  // arg: schema argument i as passed (tensors among them are not kept: None).
  const Value& arg(size_t i) const {
    static const Value kNotKept;
    return i < args_offset_ ? kNotKept : args_.at(i - args_offset_);
  }
  // sizes / strides / dtype of tensor input i as it was in the forward call.
  IntArrayRef sizes(size_t i) const { return meta(i).sizes; }
  IntArrayRef strides(size_t i) const { return strides_.at(i); }  // needs Formula::reads_strides
  int64_t storage_offset(size_t i) const { return offsets_.at(i); }
  DType dtype(size_t i) const { return meta(i).dtype; }
  Device device(size_t i) const { return meta(i).device; }
  size_t num_inputs() const { return metas_.size(); }
  // meta: tensor input i's metadata: where its gradient goes records it (the
  // engine reduces to it), so the node keeps its own copy only for inputs
  // that need no gradient (See Note [Autograd recording cost]).
  const InputMetadata& meta(size_t i) const {
    const Node::EdgeList& edges = node_.next_edges();
    if (i < edges.size() && edges[i].valid()) return edges[i].function->input_metadata().at(edges[i].input_nr);
    return metas_.at(i);
  }
  // needs: whether tensor input i wants a gradient.
  bool needs(size_t i) const { return node_.should_compute_output(i); }
  // tensor_input_of_arg: which tensor input schema argument i (a Tensor or
  // Tensor?, after any Tensor[] arguments... none precede one in the builtin
  // schemas) is, or -1 when it was None.
  int tensor_input_of_arg(size_t i) const {
    if (i >= 64 || ((tensor_args_ >> i) & 1u) == 0) return -1;
    return __builtin_popcountll(tensor_args_ & ((uint64_t{1} << i) - 1));
  }

 private:
  const Node& node_;
  VariableList grads_;
  const SavedList& inputs_;
  const SavedList& outputs_;
  const Stack& args_;
  const MetaList& metas_;
  const StridesList& strides_;
  const OffsetList& offsets_;
  uint64_t tensor_args_;  // bit i: schema argument i was a tensor
  size_t args_offset_;    // args_ starts at schema argument args_offset_ (the leading tensors are not kept)
};

// BackwardFn: gradients of the tensor inputs, one per input (undefined: none).
using BackwardFn = VariableList (*)(const FormulaCall& c);

// Formula: one derivatives.yaml entry.
struct Formula {
  std::string_view op;         // "aten::mm"
  std::string_view node_name;  // "MmBackward0"
  uint32_t saves_inputs = 0;   // bit i: tensor input i is read
  uint32_t saves_outputs = 0;  // bit i: output i is read
  BackwardFn backward = nullptr;
  // saved_when[i]: input i (i < 3) is saved only when an input in this mask
  // needs a gradient, as PyTorch saves mul's self only for other's gradient
  // (0: whenever saves_inputs names it).
  std::array<uint32_t, 3> saved_when{};
  // reads_strides: the formula reads its inputs' strides and storage offsets
  // (mm's and as_strided's); only then are they recorded, per op.
  bool reads_strides = false;
  // not_differentiable: tensor arguments (by schema name) that may not require
  // grad: PyTorch's check_no_requires_grad for the differentiable inputs its
  // derivatives.yaml row leaves out (nll_loss's weight), an error at the call.
  std::array<std::string_view, 2> not_differentiable{};
};

// find_formula: the formula of op ("aten::mm"), or null.
const Formula* find_formula(std::string_view op);
// register_formula: adds or replaces the formula of f.op (users may add their
// ops'); the op and node names are copied, so they may be temporaries.
void register_formula(const Formula& f);

namespace internal {
// builtin_formulas: the formulas of the builtin ops, by family (formulas_*.cc).
void add_elementwise_formulas(std::vector<Formula>& out);
void add_linalg_formulas(std::vector<Formula>& out);
void add_shape_formulas(std::vector<Formula>& out);
void add_reduction_formulas(std::vector<Formula>& out);
void add_nn_formulas(std::vector<Formula>& out);
void add_layer_norm_formulas(std::vector<Formula>& out);
void add_model_formulas(std::vector<Formula>& out);
void add_conv_formulas(std::vector<Formula>& out);
void add_stats_formulas(std::vector<Formula>& out);
void add_pointwise_formulas(std::vector<Formula>& out);
// add_ternary_formulas: addcmul, addcdiv, lerp and their in-place forms (formulas_ternary.cc).
void add_ternary_formulas(std::vector<Formula>& out);
void add_index_formulas(std::vector<Formula>& out);
void add_sort_formulas(std::vector<Formula>& out);
// add_movement_formulas: constant_pad_nd, upsample_nearest2d (+ backward), native_group_norm, flip,
// roll, repeat (formulas_movement.cc).
void add_movement_formulas(std::vector<Formula>& out);
// add_split_formulas: split.Tensor, split_with_sizes, unbind.int (formulas_split.cc).
void add_split_formulas(std::vector<Formula>& out);
// add_random_formulas: uniform_, normal_, bernoulli (formulas_split.cc).
void add_random_formulas(std::vector<Formula>& out);
// sum_to_size: ATen's at::sum_to: t summed down to shape, which broadcasts to
// t's (sum.dim_IntList with keepdim, then view when leading dims go).
Tensor sum_to_size(const Tensor& t, IntArrayRef shape);
}  // namespace internal

}  // namespace opspec::autograd
