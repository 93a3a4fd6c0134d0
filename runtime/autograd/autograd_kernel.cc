// autograd_kernel.cc: the Autograd key's kernel: records a Node for each op
// on tensors that require grad. See Note [The Autograd kernel].
#include <algorithm>
#include <atomic>
#include <deque>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "runtime/autograd/autograd_meta.h"
#include "runtime/autograd/copy_slices.h"
#include "runtime/autograd/formulas.h"
#include "runtime/core/grad_mode.h"
#include "runtime/dispatch/dispatcher.h"
#include "runtime/dispatch/library.h"
#include "runtime/ops/op_table.h"
#include "runtime/ops/ops.h"

namespace opspec::autograd {

// Note [The Autograd kernel]
// One boxed kernel serves every op at the Autograd key (a fallback), as
// PyTorch's generated VariableType kernels do one op each:
// - a composite op passes to its decomposition, whose parts record themselves;
// - with grad mode off, or no input requiring grad, the op runs below the key;
// - otherwise it makes the op's Node (its formula's, or one that fails in
//   backward when the op has none), with one next edge per tensor input and
//   the saved tensors the formula reads, runs the op below the key (the key
//   excluded on this thread, so kernels that call ops record nothing), and
//   makes the Node the grad_fn of each floating-point output. An in-place op
//   moves its tensor's history to the new Node, as PyTorch's rebase_history;
//   on a leaf that requires grad it is PyTorch's error. An in-place op on a
//   view gives the view's base a CopySlices node (See Note [In-place changes
//   to views]).

// Note [Autograd recording cost]
// Recording is on the path of every op of a training step, so it is kept to
// what PyTorch's generated kernels do (BM_Autograd/add_1elem: goal <= 3x the
// plain op):
// - the common signatures have typed entries (autograd_typed_kernel, See Note
//   [Typed fallback entries]): no Stack for the call, and the kernel below is
//   called unboxed;
// - Nodes (with their control blocks) and AutogradMeta come from the object
//   pool (See Note [Object pool]), not malloc;
// - a node keeps an input's metadata only when the input needs no gradient:
//   otherwise the edge's target (the producing node's output slot, or the
//   leaf's AccumulateGrad) records the same, and FormulaCall::meta reads it;
// - leading tensor arguments take no slot in the node's args (args_offset),
//   and which inputs need gradients are bits (Needs);
// - a leaf keeps its AccumulateGrad for its life instead of a new one per
//   graph (See Note [Autograd meta]);
// - Node is not enable_shared_from_this (PyTorch's is): with no weak
//   reference, a node's control block is freed in one step, not three
//   atomics; a saved output remembers its node weakly instead;
// - the op's last output takes the recording's reference to the node
//   (set_history with an rvalue) unless the node saves it: no locked
//   increment and decrement per op; a leaf's edge takes its AccumulateGrad
//   from the meta gradient_edge already read, whose shape check is inline;
// - an edge into a leaf holds its AccumulateGrad only, not the leaf as well
//   (See Note [Graphs keep their leaves]): a locked increment and decrement
//   fewer per leaf input (add_1elem/requires_grad: 121 -> 104 ns, plain 43).

namespace {

// FormulaNode: a recorded op whose backward is its Formula.
class FormulaNode : public Node {
 public:
  explicit FormulaNode(const Formula& f) : formula_(f) {}
  std::string name() const override { return std::string(formula_.node_name); }

  VariableList apply(VariableList&& grads) override {
    bool any = false;
    for (const Tensor& g : grads) any = any || g.defined();
    if (!any) return VariableList(next_edges().size());
    FormulaCall call(*this, std::move(grads), saved_inputs, saved_outputs, args, input_metas, input_strides,
                     input_offsets, tensor_args, args_offset);
    VariableList out = formula_.backward(call);
    out.resize(next_edges().size());
    return out;
  }

  void release_variables() override {
    for (SavedTensor& s : saved_inputs) s.reset();
    for (SavedTensor& s : saved_outputs) s.reset();
  }

  FormulaCall::SavedList saved_inputs;
  FormulaCall::SavedList saved_outputs;
  Stack args;  // the call's arguments from args_offset on, tensors dropped
  size_t args_offset = 0;  // the leading tensor arguments, not kept at all
  FormulaCall::MetaList input_metas;
  FormulaCall::StridesList input_strides;
  FormulaCall::OffsetList input_offsets;
  uint64_t tensor_args = 0;  // bit i: schema argument i was a tensor

 private:
  const Formula& formula_;
};

// NotImplementedNode: the node of an op without a formula: backward fails naming the op.
class NotImplementedNode : public Node {
 public:
  explicit NotImplementedNode(std::string op) : op_(std::move(op)) {}
  std::string name() const override { return "NotImplemented"; }
  VariableList apply(VariableList&&) override {
    throw Error(str_cat("the derivative for '", op_, "' is not implemented."));
  }

 private:
  std::string op_;
};

// Registry: the formulas by op name (builtins first, users' on top). A
// replaced formula is kept: nodes recorded with it still point at it.
struct Registry {
  std::mutex mu;
  std::deque<Formula> storage;
  std::deque<std::string> names;  // users' op and node names, owned here (a Formula holds views)
  absl::flat_hash_map<std::string, const Formula*> by_op;
};

Registry& registry() {
  static Registry* r = [] {
    auto* reg = new Registry;
    std::vector<Formula> all;
    internal::add_elementwise_formulas(all);
    internal::add_linalg_formulas(all);
    internal::add_shape_formulas(all);
    internal::add_reduction_formulas(all);
    internal::add_nn_formulas(all);
    internal::add_layer_norm_formulas(all);
    internal::add_model_formulas(all);
    internal::add_conv_formulas(all);
    internal::add_stats_formulas(all);
    internal::add_pointwise_formulas(all);
    internal::add_ternary_formulas(all);
    internal::add_index_formulas(all);
    internal::add_sort_formulas(all);
    internal::add_movement_formulas(all);
    internal::add_split_formulas(all);
    internal::add_random_formulas(all);
    for (const Formula& f : all) reg->by_op[std::string(f.op)] = &reg->storage.emplace_back(f);
    return reg;
  }();
  return *r;
}

// for_each_tensor: f(tensor) for every tensor argument in order (lists flattened).
template <class F>
void for_each_tensor(const Stack& stack, size_t n, F&& f) {
  for (size_t i = 0; i < n; ++i) {
    const Value& v = stack[i];
    if (v.is_tensor()) {
      f(v.to_tensor());
    } else if (v.is_tensor_list()) {
      for (const Tensor& t : v.to_tensor_list()) {
        if (t.defined()) f(t);  // undefined: None of a Tensor?[] (See Note [Optional tensor lists])
      }
    }
  }
}

bool is_differentiable(DType d) { return is_floating(d); }

// formula_for: find_formula by op id, cached per thread; a registration
// (rare: start-up, user ops) bumps the generation and clears every cache.
std::atomic<uint64_t> g_formula_generation{1};
const Formula* formula_for(const OperatorHandle& op) {
  thread_local uint64_t generation = 0;
  thread_local std::vector<std::pair<bool, const Formula*>> cache;  // (looked up, formula)
  const uint64_t now = g_formula_generation.load(std::memory_order_acquire);
  if (generation != now) {
    cache.clear();
    generation = now;
  }
  const size_t id = static_cast<size_t>(op.id());
  if (id >= cache.size()) cache.resize(id + 1);
  if (!cache[id].first) cache[id] = {true, find_formula(op.name())};
  return cache[id].second;
}

// TensorInputs: an op's tensor inputs in argument order (Tensor[] elements flattened).
using TensorInputs = absl::InlinedVector<const Tensor*, 4>;
// Needs: needs[k]: tensor input k requires grad (its edge, and what some
// formulas save, follow); bits, as ops rarely have over 64 tensor inputs.
class Needs {
 public:
  void push_back(bool b) {
    if (n_ < 64) {
      first_ |= uint64_t{b} << n_;
    } else {
      rest_.push_back(b);
    }
    ++n_;
  }
  bool operator[](size_t k) const { return k < 64 ? ((first_ >> k) & 1u) != 0 : rest_[k - 64]; }
  size_t size() const { return n_; }

 private:
  uint64_t first_ = 0;
  std::vector<bool> rest_;
  size_t n_ = 0;
};

// needs_of: which inputs require grad; false when op records no history
// (factories such as ones_like(x), and detach, make tensors outside the
// graph) or grad mode is off.
bool needs_of(const OperatorHandle& op, const TensorInputs& inputs, Needs& needs) {
  static const OperatorHandle& detach = builtin_op(OpId::detach);
  if (op.kind() == OpKind::kFactory || &op == &detach || !is_grad_enabled()) return false;
  bool any = false;
  for (const Tensor* t : inputs) {
    bool r = requires_grad(*t);
    if (!r && t->impl()->view_base() != nullptr) {  // a view whose base gained history since
      refresh_view(*t);
      r = requires_grad(*t);
    }
    needs.push_back(r);
    any = any || r;
  }
  return any;
}

// check_in_place: PyTorch's refusals of an in-place op on self, in its
// order (check_inplace): a view's CreationMeta (See Note [Views that refuse
// in-place changes]), then a view of a leaf, then a leaf; whether self is a
// recorded view (See Note [In-place changes to views]).
bool check_in_place(const Tensor& self) {
  const AutogradMeta* m = meta_of(self);
  if (m != nullptr && m->view_base.defined()) {
    handle_view_on_rebase(*m, /*indirect=*/false);
    const AutogradMeta* b = meta_of(m->view_base);
    if (b != nullptr && b->requires_grad && b->grad_fn == nullptr) {
      throw Error("a view of a leaf Variable that requires grad is being used in an in-place operation.");
    }
  }
  if (m != nullptr && m->requires_grad && m->grad_fn == nullptr) {
    throw Error("a leaf Variable that requires grad is being used in an in-place operation.");
  }
  return m != nullptr && m->view_base.defined();
}

// is_view_op: op's output aliases its first input as a view autograd tracks
// (its schema says Tensor(a); not detach, whose result is no view for autograd).
bool is_view_op(const OperatorHandle& op) {
  static const OperatorHandle& detach = builtin_op(OpId::detach);
  return op.kind() == OpKind::kView && &op != &detach && !op.schema().returns().empty() &&
         !op.schema().returns()[0].alias_set.empty();
}

// no_grad_view_base: with grad mode off, the root base of the views a view op
// makes from self when self requires grad or is a recorded view (they are
// recorded: See Note [Views that refuse in-place changes]); else undefined.
Tensor no_grad_view_base(const OperatorHandle& op, const TensorInputs& inputs) {
  if (inputs.empty() || is_grad_enabled() || !is_view_op(op)) return {};
  const Tensor& self = *inputs[0];
  const AutogradMeta* m = meta_of(self);
  if (m != nullptr && m->view_base.defined()) return m->view_base;
  return requires_grad(self) ? self : Tensor();
}

// record_no_grad_view: out, made from self by a view op under no_grad, becomes
// a recorded view of base without history, marked kNoGradMode.
void record_no_grad_view(const Tensor& out, const Tensor& base) {
  if (!out.defined() || out.impl() == base.impl() || out.impl()->view_base() == nullptr ||
      !is_differentiable(out.dtype())) {
    return;  // an input handed back (an in-place view op), or no view for autograd
  }
  if (const AutogradMeta* m = meta_of(out); m != nullptr && m->view_base.defined()) return;  // self itself
  record_view(out, base, CreationMeta::kNoGradMode);
}

// Recording: the Node an op call is recording, from its inputs to its outputs.
struct Recording {
  const OperatorHandle& op;
  bool in_place = false;
  const Formula* formula = nullptr;
  std::shared_ptr<Node> node;
  FormulaNode* fnode = nullptr;  // node as a FormulaNode (null: NotImplementedNode)
  size_t out_index = 0;
  // input_impls: the inputs' TensorImpls as they were before the call (the
  // boxed stack's input slots hold the outputs afterwards); typed_inputs: the
  // typed entry's arguments, which the call leaves in place (no copy needed).
  absl::InlinedVector<const TensorImpl*, 4> input_impls;
  const TensorInputs* typed_inputs = nullptr;
  // view_base: a view op's outputs' root base (self's, or self); self_creation: self's CreationMeta.
  Tensor view_base;
  CreationMeta self_creation = CreationMeta::kDefault;

  // begin: makes the node, with one next edge per tensor input and the saved
  // tensors the formula reads (See Note [The Autograd kernel]).
  Recording(const OperatorHandle& o, const Formula* f, const TensorInputs& inputs, const Needs& needs,
            bool written_self, bool typed = false)
      : op(o), in_place(written_self), formula(f) {
    if (!in_place) {
      if (typed) {
        typed_inputs = &inputs;
      } else {
        for (const Tensor* t : inputs) input_impls.push_back(t->impl());
      }
      if (op.kind() == OpKind::kView && !inputs.empty() && !op.schema().returns()[0].alias_set.empty()) {
        const AutogradMeta* m = meta_of(*inputs[0]);
        const bool of_view = m != nullptr && m->view_base.defined();
        view_base = of_view ? m->view_base : *inputs[0];
        if (of_view) self_creation = m->creation_meta;
      }
    }
    if (formula != nullptr) {
      auto n = std::allocate_shared<FormulaNode>(opspec::internal::PoolAllocator<FormulaNode>(), *formula);
      fnode = n.get();
      node = std::move(n);
    } else {
      node = std::allocate_shared<NotImplementedNode>(opspec::internal::PoolAllocator<NotImplementedNode>(),
                                                      op.name());
    }
    for (size_t k = 0; k < inputs.size(); ++k) add_input(k, *inputs[k], needs);
  }

  // saves: whether the formula keeps tensor input k, given which inputs need a gradient.
  bool saves(size_t k, const Needs& needs) const {
    if (k >= 32 || ((formula->saves_inputs >> k) & 1u) == 0) return false;
    if (k >= formula->saved_when.size() || formula->saved_when[k] == 0) return true;
    for (size_t j = 0; j < needs.size() && j < 32; ++j) {
      if (needs[j] && ((formula->saved_when[k] >> j) & 1u)) return true;
    }
    return false;
  }

  void add_input(size_t k, const Tensor& t, const Needs& needs) {
    // A view taken under no_grad requires grad but its gradient goes nowhere (an invalid edge).
    Edge edge = needs[k] ? gradient_edge(t) : Edge{};
    const bool edge_valid = edge.valid();
    node->add_next_edge(std::move(edge));
    if (fnode == nullptr) return;
    if (edge_valid) {
      fnode->input_metas.emplace_back();  // the edge's target records it (FormulaCall::meta)
    } else {
      fnode->input_metas.emplace_back(t);
    }
    if (formula->reads_strides) {
      fnode->input_strides.emplace_back(t.strides().begin(), t.strides().end());
      fnode->input_offsets.push_back(t.storage_offset());
    }
    if (formula->saves_inputs == 0) return;  // the common elementwise case: nothing to keep
    Tensor saved;
    if (saves(k, needs)) {
      // Note [Saving self of an in-place op]
      // The op is about to overwrite self, so a formula that reads it gets
      // `original_self = self.clone()`, dispatched here, before the op, as
      // PyTorch's generated code does (for mul_ only when other needs a gradient).
      if (in_place && k == 0) {
        ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
        saved = ops::clone(t);
      } else {
        saved = t;
      }
    }
    fnode->saved_inputs.emplace_back(std::move(saved));
  }

  // add_arg: schema argument i as the formula reads it (tensors are not kept).
  template <class A>
  void add_arg(size_t i, const A& a) {
    if constexpr (std::is_same_v<A, Tensor>) {
      if (i < 64) fnode->tensor_args |= uint64_t{1} << i;
      add_not_kept();
    } else if constexpr (std::is_same_v<A, Value>) {
      // A Tensor?[] (index's indices, integer tensors) is kept: its formula reads where the Nones are.
      const bool keep_list = a.is_tensor_list() && op.schema().arguments()[i].type.element_optional;
      if (a.is_tensor() && i < 64) fnode->tensor_args |= uint64_t{1} << i;
      if (a.is_tensor() || (a.is_tensor_list() && !keep_list)) {
        add_not_kept();
      } else {
        fnode->args.push_back(a);
      }
    } else {
      fnode->args.emplace_back(a);
    }
  }
  // add_not_kept: a tensor argument's slot (None); leading ones take no slot at all.
  void add_not_kept() {
    if (fnode->args.empty()) {
      ++fnode->args_offset;
    } else {
      fnode->args.emplace_back();
    }
  }

  // returns_an_input: an out-of-place op handed back an input itself (lift_fresh
  // does): its history is the input's already, and the node must not replace
  // it (a leaf would stop being one, and hold its own AccumulateGrad in a cycle).
  bool returns_an_input(const Tensor& out) const {
    if (typed_inputs != nullptr) {
      for (const Tensor* t : *typed_inputs) {
        if (t->impl() == out.impl()) return true;
      }
      return false;
    }
    return std::find(input_impls.begin(), input_impls.end(), out.impl()) != input_impls.end();
  }

  // record_output: out (an element of a Tensor[] result when in_list) is the
  // node's next output: its history, or only its slot when not differentiable.
  // view_in_place: out is a recorded view the op changed in place: the node
  // records it as its output; rebase_view_history does the rest. last: out
  // is the op's last output, which may take node (null afterwards).
  void record_output(const Tensor& out, bool in_list, bool view_in_place = false, bool last = false) {
    const bool saves_outputs = fnode != nullptr && formula->saves_outputs != 0;
    if (view_in_place) {
      node->add_input_metadata(out);
    } else if (out.defined() && is_differentiable(out.dtype()) && !returns_an_input(out)) {
      // The last output takes the recording's reference, saving a locked
      // increment and decrement (a saved output still needs node after).
      if (last && !saves_outputs) {
        set_history(out, std::move(node));
      } else {
        set_history(out, node);
      }
      // A view for autograd is what the schema says aliases (Tensor(a)):
      // _unsafe_view shares storage but declares none, so matmul's result is a
      // fresh tensor that may be modified in place, as in PyTorch.
      if (view_base.defined()) {
        const CreationMeta made = in_list ? CreationMeta::kMultiOutputNode : CreationMeta::kDefault;
        record_view(out, view_base, propagate_creation_meta(self_creation, made));
      }
    } else {  // not differentiable, or undefined (native_layer_norm_backward's masked outputs)
      node->add_input_metadata(out);
    }
    if (saves_outputs) {
      const bool save = (formula->saves_outputs >> out_index) & 1u;
      fnode->saved_outputs.emplace_back(save ? out : Tensor(), node, static_cast<uint32_t>(out_index));
    }
    ++out_index;
  }
};

// check_no_requires_grad: PyTorch's refusal of an argument the formula has no
// derivative for (Formula::not_differentiable) that requires grad.
void check_no_requires_grad(const OperatorHandle& op, const Formula* formula, const Stack& stack, size_t nargs) {
  if (formula == nullptr || formula->not_differentiable[0].empty()) return;
  for (size_t i = 0; i < nargs; ++i) {
    const std::string& name = op.schema().arguments()[i].name;
    for (std::string_view refused : formula->not_differentiable) {
      if (refused.empty() || refused != name || !stack[i].is_tensor() || !requires_grad(stack[i].to_tensor())) continue;
      throw Error(str_cat("The function '", op.schema().name(), "' is not differentiable with respect to argument '",
                          name, "'. This input cannot have requires_grad True."));
    }
  }
}

void autograd_kernel(const OperatorHandle& op, DispatchKeySet ks, Stack& stack) {
  Dispatcher& dispatcher = Dispatcher::singleton();
  const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::kAutograd);
  if (op.is_composite()) return dispatcher.redispatch_boxed(op, below, stack);
  const size_t nargs = op.schema().arguments().size();
  // The written argument of an in-place op, if any; a view a kernel made but
  // autograd never recorded is adopted first (See Note [In-place changes to views]).
  std::optional<size_t> written;
  if (op.schema().is_mutable()) {
    for (size_t i = 0; i < nargs; ++i) {
      if (op.schema().arguments()[i].is_write) written = i;
    }
    if (written && stack[*written].is_tensor()) adopt_view(stack[*written].to_tensor());
  }
  TensorInputs inputs;
  for_each_tensor(stack, nargs, [&](const Tensor& t) { inputs.push_back(&t); });
  Needs needs;
  if (!needs_of(op, inputs, needs)) {
    const Tensor no_grad_base = no_grad_view_base(op, inputs);
    {
      ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
      dispatcher.redispatch_boxed(op, below, stack);
    }
    if (!no_grad_base.defined()) return;
    for (const Value& v : stack) {  // See Note [Views that refuse in-place changes]
      if (v.is_tensor()) {
        record_no_grad_view(v.to_tensor(), no_grad_base);
      } else if (v.is_tensor_list()) {
        for (const Tensor& out : v.to_tensor_list()) record_no_grad_view(out, no_grad_base);
      }
    }
    return;
  }

  const bool on_view = written && check_in_place(stack[*written].to_tensor());
  const Formula* formula = formula_for(op);
  check_no_requires_grad(op, formula, stack, nargs);

  Recording rec(op, formula, inputs, needs, written.has_value());
  if (rec.fnode != nullptr) {
    for (size_t i = 0; i < nargs; ++i) rec.add_arg(i, stack[i]);
  }

  {
    ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
    dispatcher.redispatch_boxed(op, below, stack);
  }

  // An in-place op on a recorded view returns the view: its base's history
  // becomes a CopySlices of the node (See Note [In-place changes to views]).
  if (on_view) {
    const Tensor& self = stack[0].to_tensor();
    if (op.kind() == OpKind::kView) {
      // An in-place view op (squeeze_) restrides the view, not its data: it
      // stays a view of its base, with the node after its old grad_fn (as
      // PyTorch; no CopySlices), and later regenerates with its new geometry.
      rec.record_output(self, false);
      return;
    }
    rec.record_output(self, false, /*view_in_place=*/true);
    rebase_view_history(self, rec.node);
    return;
  }
  // Outputs in order; a Tensor[] result (split's) is one output per element.
  if (stack.size() == 1 && stack[0].is_tensor()) return rec.record_output(stack[0].to_tensor(), false, false, true);
  for (const Value& v : stack) {
    if (v.is_tensor()) {
      rec.record_output(v.to_tensor(), false);
    } else if (v.is_tensor_list()) {
      for (const Tensor& out : v.to_tensor_list()) rec.record_output(out, true);
    }
  }
}

// tensor_arg: the tensor an argument of the typed kernel is, or null.
inline const Tensor* tensor_arg(const Tensor& t) { return &t; }
template <class A>
const Tensor* tensor_arg(const A&) {
  return nullptr;
}

// autograd_typed_kernel: the Autograd key's typed entry for Ret(Args...)
// calls (See Note [Typed fallback entries]): autograd_kernel's work with the
// arguments unboxed, so the kernel below is called unboxed too. Ops that
// write an argument take the boxed kernel (they rebase history).
template <class... Args>
Tensor autograd_typed_kernel(const OperatorHandle& op, DispatchKeySet ks, Args... args) {
  static_assert(((!std::is_same_v<std::decay_t<Args>, std::optional<Tensor>> &&
                  !std::is_same_v<std::decay_t<Args>, TensorList> &&
                  !std::is_same_v<std::decay_t<Args>, OptionalTensorList> &&
                  !std::is_same_v<std::decay_t<Args>, std::vector<Tensor>>) &&
                 ...),
                "typed entries take Tensor and non-tensor arguments only (tensor_arg sees no others)");
  Dispatcher& dispatcher = Dispatcher::singleton();
  const DispatchKeySet below = ks & DispatchKeySet::below(DispatchKey::kAutograd);
  if (op.is_composite()) return dispatcher.redispatch<Tensor, Args...>(op, below, args...);
  TensorInputs inputs;
  (
      [&] {
        if (const Tensor* t = tensor_arg(args)) inputs.push_back(t);
      }(),
      ...);
  Needs needs;
  if (!needs_of(op, inputs, needs)) {
    const Tensor no_grad_base = no_grad_view_base(op, inputs);
    Tensor out;
    {
      ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
      out = dispatcher.redispatch<Tensor, Args...>(op, below, args...);
    }
    // See Note [Views that refuse in-place changes].
    if (no_grad_base.defined()) record_no_grad_view(out, no_grad_base);
    return out;
  }
  // The boxed kernel also takes the ops whose formula refuses an argument that
  // requires grad (check_no_requires_grad reads the arguments by name).
  const Formula* formula = formula_for(op);
  if (op.schema().is_mutable() || op.schema().arguments().size() != sizeof...(Args) ||
      (formula != nullptr && !formula->not_differentiable[0].empty())) {
    Stack stack = opspec::internal::box_args(args...);
    autograd_kernel(op, ks, stack);
    return opspec::internal::UnboxReturn<Tensor>::pop(stack);
  }
  Recording rec(op, formula, inputs, needs, /*written_self=*/false, /*typed=*/true);
  if (rec.fnode != nullptr) {
    size_t i = 0;
    (rec.add_arg(i++, args), ...);
  }
  Tensor out;
  {
    ExcludeDispatchKeyGuard no_autograd(DispatchKey::kAutograd);
    out = dispatcher.redispatch<Tensor, Args...>(op, below, args...);
  }
  rec.record_output(out, false, false, /*last=*/true);
  return out;
}

}  // namespace

const Formula* find_formula(std::string_view op) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto it = r.by_op.find(std::string(op));
  return it == r.by_op.end() ? nullptr : it->second;
}

void register_formula(const Formula& f) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  Formula owned = f;
  owned.op = r.names.emplace_back(f.op);
  owned.node_name = r.names.emplace_back(f.node_name);
  r.by_op[std::string(f.op)] = &r.storage.emplace_back(owned);
  g_formula_generation.fetch_add(1, std::memory_order_acq_rel);
}

}  // namespace opspec::autograd

namespace opspec::internal {

// register_autograd: the Autograd key's kernel for every op (called while the
// dispatcher starts, See Note [Builtin registration]).
void register_autograd(Dispatcher& d) {
  using autograd::autograd_typed_kernel;
  KernelFunction k = KernelFunction::from_boxed(&autograd::autograd_kernel, "autograd_fallback");
  // The signatures of the ops a training step calls most (ops.cc's UnarySig, BinarySig, ...).
  k.add_typed(&autograd_typed_kernel<const Tensor&>);
  k.add_typed(&autograd_typed_kernel<const Tensor&, const Tensor&>);
  k.add_typed(&autograd_typed_kernel<const Tensor&, const Tensor&, const Scalar&>);
  k.add_typed(&autograd_typed_kernel<const Tensor&, const Scalar&>);
  k.add_typed(&autograd_typed_kernel<const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&>);
  k.add_typed(&autograd_typed_kernel<const Tensor&, std::optional<DType>>);  // sum, mean
  k.add_typed(&autograd_typed_kernel<const Tensor&, OptionalIntArrayRef, bool, std::optional<DType>>);  // sum/mean.dim
  k.add_typed(&autograd_typed_kernel<const Tensor&, int64_t, int64_t>);  // transpose
  k.add_typed(&autograd_typed_kernel<const Tensor&, IntArrayRef>);  // view, reshape
  d.register_fallback(DispatchKey::kAutograd, std::move(k));
  // A graph's _set_grad_enabled node sets the mode when run (See Note [Grad mode nodes]).
  Library("torch._C", d).impl("_set_grad_enabled", DispatchKey::kCompositeImplicit,
                              [](bool enabled) { autograd::set_grad_enabled(enabled); });
}

}  // namespace opspec::internal
