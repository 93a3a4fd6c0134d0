// fusion.h: the fused backend's partitioning pass: which graph nodes can run
// inside a fused elementwise kernel, how they are grouped, and the
// FusedProgram each group becomes. See Note [Fusion].
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "runtime/fused/fused_kernel.h"
#include "runtime/fused/fused_program.h"
#include "runtime/graph/graph.h"

namespace opspec {

// Note [Fusion]
// Fusable nodes (is_fusable) are calls of the builtin elementwise ops of the
// rule table in fusion_lowering.cc (the non-mutating unary, binary and ternary ops of
// op_table.def) on cpu tensors, or cuda tensors (all of a group's tensors on
// one device, See Note [Fused CUDA kernels]), whose arguments are nodes,
// wrapped-number scalars or Scalar arguments, and which lower to a
// FusedProgram: lowering runs the op's own shape function (unary_meta,
// binary_meta, where_meta), so a node eager would reject never fuses and
// fails in its normal kernel.
// Grouping walks the graph in order; a fusable node joins the group(s) of
// its fusable producers when it has the group's shape (inputs may broadcast,
// results may not) and the union stays convex (no path leaves the group and
// comes back, which would make the group wait for itself). When it can merge
// every such group it does; otherwise it joins the first group it can, or
// starts a new one. Mutating, random (nondeterministic_seeded) and
// state-setting (_set_grad_enabled) nodes are barriers (is_impure): no group
// grows across one, so running a group at its last member never moves a read
// past a write, reorders random draws or runs an op under another grad mode. A group's outputs
// are its members used outside it; groups of one node are dropped (nothing to
// save). Each group's program mirrors eager step for step (See Note [Fused
// kernels]), so results are bit-identical to eager. In-place elementwise ops
// (add_, relu_, ...) on cpu join groups under the rules of Note [In-place
// fusion].

// Note [In-place fusion]
// `out += identity; relu_(out)` (torchvision's BasicBlock) is two passes
// over the tensor in eager and one fused kernel under torch.compile, which
// functionalizes the graph first. Here an in-place op whose functional form
// has a rule joins a group as that form, and the group writes its result
// over the mutated tensor (the chain's root) element for element, so what
// eager's in-place ops leave in that buffer is there after the group. For
// the order of reads and writes to stay eager's without alias analysis:
// the root is a graph input, a fresh result (not a view) or a value of the
// group itself (whose buffer the group then allocates), a dense cpu tensor of
// the group's shape and the op's result dtype, with no view taken of it in
// the graph; a chain is in-place ops each
// mutating the previous one's result (add_ then relu_), one per group; a
// member after the first in-place op never reads the root or an earlier
// link (their value is the chain's latest); the group's nodes are adjacent in
// the graph from its first member on (nothing else runs between them, so
// nothing sees the buffer half-written), and an in-place member closes every
// other open group, as a barrier does. The kernel computes each tile into a
// buffer before writing it over the root, since the tile (a fast path's exact
// rerun) may read its inputs again. A root that shares memory with another
// of the group's inputs at run time (two graph inputs that alias) runs the
// members one by one instead.

// FusionGroup: call nodes run as one fused kernel.
struct FusionGroup {
  // name: "fused_" + the ops' base names in graph order + "_" + a per-graph
  // counter, e.g. "fused_relu_mul_add_0" (long op lists are cut, ending "_etc").
  std::string name;
  std::vector<Node*> nodes;    // members, in graph order
  std::vector<Node*> inputs;   // nodes outside the group it reads, in first-use order
  std::vector<Node*> outputs;  // members used outside the group, in graph order
  // program: inputs -> outputs, finalized; shared by every run.
  std::shared_ptr<const internal::FusedProgram> program;
  // kernel: program on the group's device (See Note [Fused kernels per device]).
  std::shared_ptr<const internal::FusedKernel> kernel;
  // inplace_chain: the in-place links (See Note [In-place fusion]), whose
  // final value is the program's last output and the value of every link and
  // of inplace_root; that output is inputs[inplace_input] when the root is an
  // input (written over), else (inplace_input -1) a fresh tensor.
  std::vector<Node*> inplace_chain;
  Node* inplace_root = nullptr;
  int inplace_input = -1;
  // matmul: a `linear` only this group reads, which runs with the group as
  // its epilogue (See Note [Matmul epilogues] in runtime/fused/
  // matmul_epilogue.h), or null; its result is inputs[matmul_input], and
  // output matmul_output is written over it.
  Node* matmul = nullptr;
  int matmul_input = -1;
  int matmul_output = -1;
};

// is_fusable: whether node may join a fused kernel. See Note [Fusion].
bool is_fusable(const Node& node);

// partition_graph: g's fusion groups (each of at least two nodes, or one
// that finishes a linear: See Note [Matmul epilogues]), ordered by their
// first member. See Note [Fusion].
std::vector<FusionGroup> partition_graph(const Graph& g);

}  // namespace opspec
