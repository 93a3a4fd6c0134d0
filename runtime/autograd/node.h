// node.h: the autograd graph: Node (one recorded op's backward, or a leaf's
// AccumulateGrad), Edge, and SavedTensor. See Note [Autograd graph].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "runtime/core/tensor.h"

namespace opspec::autograd {

// Note [Autograd graph]
// An op that records history makes one Node: its inputs are the gradients
// of the op's outputs, its outputs the gradients of the op's inputs, which
// flow along next_edges (one per op input, in argument order; invalid where
// the input needs no gradient) to the Nodes that made those inputs, or to a
// leaf's AccumulateGrad. Nodes are numbered in creation order per thread
// (sequence_nr), which is the order the engine runs them backwards (See Note
// [Engine order] in engine.h); AccumulateGrad takes the largest number, so a
// leaf's gradient is stored as soon as it is complete. A Node keeps what its
// formula reads as SavedTensors, which remember the storage's version when
// saved: backward through a tensor modified in place since then fails, as in
// PyTorch. This is PyTorch's design (torch/csrc/autograd/function.h), names
// included, so grad_fn names and backward op sequences read the same.

class Node;

// VariableList: gradients, one per node input or output (undefined: none).
using VariableList = std::vector<Tensor>;

// Edge: where a gradient goes: input input_nr of function (null: nowhere).
// A graph keeps its leaves alive through the AccumulateGrads its edges hold
// (See Note [Graphs keep their leaves] in autograd_meta.h).
struct Edge {
  std::shared_ptr<Node> function;
  uint32_t input_nr = 0;
  bool valid() const { return function != nullptr; }
};

// InputMetadata: the shape, dtype and device of the tensor a node input is
// the gradient of; the engine reduces or casts gradients to match it.
struct InputMetadata {
  InputMetadata() = default;
  // InputMetadata: t's, built in place (a node records one per input and output).
  explicit InputMetadata(const Tensor& t) : sizes(t.sizes().begin(), t.sizes().end()), dtype(t.dtype()), device(t.device()) {}

  SizeVec sizes;
  DType dtype = DType::kFloat32;
  Device device;
};

// next_sequence_nr: this thread's next node number (each call takes one).
uint64_t next_sequence_nr();

// Node: one function of the backward graph. Not enable_shared_from_this: a
// weak self-reference would make every node's control block take the slow,
// three-atomic path when freed (See Note [Autograd recording cost]).
class Node {
 public:
  // Node: takes the thread's next sequence number, or the one given.
  Node();
  explicit Node(uint64_t sequence_nr) : sequence_nr_(sequence_nr) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  // name: PyTorch's class name of this function ("MmBackward0", "AccumulateGrad").
  virtual std::string name() const = 0;
  // apply: gradients of the inputs (one per next edge) from those of the outputs.
  virtual VariableList apply(VariableList&& grads) = 0;
  // release_variables: frees the saved tensors (backward without retain_graph).
  virtual void release_variables() {}

  uint64_t sequence_nr() const { return sequence_nr_; }
  // EdgeList, MetadataList: inline room for the common op (two inputs, one output).
  using EdgeList = absl::InlinedVector<Edge, 2>;
  using MetadataList = absl::InlinedVector<InputMetadata, 1>;

  const EdgeList& next_edges() const { return next_edges_; }
  void add_next_edge(Edge e) { next_edges_.push_back(std::move(e)); }
  // should_compute_output: whether next edge i leads anywhere.
  bool should_compute_output(size_t i) const { return i < next_edges_.size() && next_edges_[i].valid(); }

  // add_input_metadata: records what input (gradient) t stands for (an empty
  // slot for an undefined t, as a multi-output op's skipped output); returns its index.
  uint32_t add_input_metadata(const Tensor& t);
  const MetadataList& input_metadata() const { return input_metadata_; }
  size_t num_inputs() const { return input_metadata_.size(); }

  // retain_grad_slots: where input i's complete gradient is also stored (a
  // non-leaf output's retain_grad()); the engine fills them before apply.
  std::vector<std::pair<uint32_t, std::weak_ptr<Tensor>>>& retain_grad_slots() { return retain_grad_slots_; }

 private:
  std::vector<std::pair<uint32_t, std::weak_ptr<Tensor>>> retain_grad_slots_;
  uint64_t sequence_nr_;
  EdgeList next_edges_;
  MetadataList input_metadata_;
};

// SavedTensor: a tensor a node's formula reads in backward, with the version
// its storage had when saved. An op's own output is kept as an alias without
// autograd history, so the node does not own itself through it.
class SavedTensor {
 public:
  SavedTensor() = default;
  // SavedTensor: input t of a node, as saved (undefined: saved as None).
  explicit SavedTensor(const Tensor& t);
  // SavedTensor: output output_nr of fn (undefined: None); fn is remembered
  // weakly, so unpack can give it back as the output's grad_fn.
  SavedTensor(const Tensor& output, const std::shared_ptr<Node>& fn, uint32_t output_nr);

  // unpack: the tensor; throws PyTorch's errors when it was released by an
  // earlier backward, or modified in place since it was saved (saved_for
  // names the node in the message).
  Tensor unpack(const Node& saved_for) const;
  // reset: releases the tensor (a later unpack throws).
  void reset();
  bool was_defined() const { return was_defined_; }

 private:
  Tensor data_;
  uint64_t saved_version_ = 0;
  bool was_defined_ = false;
  bool released_ = false;
  bool is_output_ = false;
  uint32_t output_nr_ = 0;
  std::weak_ptr<Node> grad_fn_;  // an input's grad_fn (for the message), or the node of an output
};

}  // namespace opspec::autograd
