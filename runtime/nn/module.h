// module.h: nn::Module, the base of user models (PyTorch's torch.nn.Module,
// reduced to what tools need): named children and parameters, a call operator
// that runs forward inside a forward scope, and global forward hooks that see
// each module call with its fully qualified name. Layers live in layers.h.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "runtime/core/tensor.h"

namespace opspec::nn {

// StateDict: a module's parameters and buffers by dotted name, in PyTorch's
// state_dict order (See Module::state_dict).
using StateDict = std::vector<std::pair<std::string, Tensor>>;

// LoadStateDictResult: the keys load_state_dict(..., strict = false) did not
// match (PyTorch's _IncompatibleKeys).
struct LoadStateDictResult {
  std::vector<std::string> missing_keys, unexpected_keys;
};

// Note [Module fqn]
// A module's fully qualified name is computed per call, as PyTorch's
// ModTracker does for the common case, from a per-thread stack of running
// modules: a module called while its (direct) registered parent is the
// innermost running module is named "<parent fqn>.<child name>"; any other
// call (a root, a module called on its own, a grandchild called straight from
// its grandparent) is named by the module's type name. So Bar's forward
// calling abc(x), and abc calling l1, gives "Bar", "Bar.abc", "Bar.abc.l1".
// A child registered under two names in one parent takes the first name.

// Module: a model or layer. Subclasses register children and parameters in
// their constructor and implement forward. Non-copyable; held by shared_ptr.
// Registration is not thread-safe (build a module on one thread); calling a
// built module from several threads is fine as far as Module is concerned.
class Module {
 public:
  explicit Module(std::string type_name);
  virtual ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // operator(): runs forward inside a forward scope: the module's fqn is
  // pushed (See Note [Module fqn]), pre hooks run, forward runs, post hooks
  // run (also when forward or a pre hook throws), the fqn is popped.
  Tensor operator()(const Tensor& input);
  // forward: the computation; call the module with operator() so hooks see it.
  virtual Tensor forward(const Tensor& input) = 0;

  // type_name: the class name given at construction ("Linear", "Bar").
  const std::string& type_name() const { return type_name_; }

  // register_module: adds child under name (no '.', not empty, not taken)
  // and returns it, so `l1 = register_module("l1", std::make_shared<Linear>(4, 4))`.
  template <class M>
  std::shared_ptr<M> register_module(std::string name, std::shared_ptr<M> child) {
    static_assert(std::is_base_of_v<Module, M>, "register_module: M must derive from nn::Module");
    add_child(std::move(name), child);
    return child;
  }
  // register_parameter: adds a parameter under name (same rules as children)
  // and returns a reference to the stored tensor, stable for the module's life.
  // Parameters require grad unless requires_grad is false, as nn.Parameter and
  // libtorch's register_parameter; See Note [Parameters require grad].
  Tensor& register_parameter(std::string name, Tensor value, bool requires_grad = true);
  // register_buffer: adds a state tensor that is not a parameter (batch
  // norm's running statistics) under name; a reference stable for the module's life.
  Tensor& register_buffer(std::string name, Tensor value);
  // named_buffers: own buffers, then (recurse) the children's, dotted as named_parameters.
  std::vector<std::pair<std::string, Tensor>> named_buffers(bool recurse = true) const;

  // train / eval: sets the training flag of this module and every descendant
  // (PyTorch's module.train(mode) and module.eval()); modules start training.
  void train(bool mode = true);
  void eval() { train(false); }
  // requires_grad_: sets requires_grad on every parameter of this module and
  // its descendants (PyTorch's module.requires_grad_(mode)), e.g. to freeze a model.
  void requires_grad_(bool requires_grad = true);
  // is_training: this module's flag.
  bool is_training() const { return training_; }

  // named_children: direct children in registration order; a module
  // registered twice is listed once, under its first name (as PyTorch).
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> named_children() const;
  // named_modules: this module (name "") and every descendant, depth first in
  // registration order, with dotted names ("abc.l1"); each module once.
  std::vector<std::pair<std::string, const Module*>> named_modules() const;
  // named_parameters: own parameters, then (recurse) the children's with
  // dotted prefixes ("abc.l1.weight"); a tensor shared by several modules
  // (weight tying) is listed once, under its first name, as in PyTorch.
  std::vector<std::pair<std::string, Tensor>> named_parameters(bool recurse = true) const;
  // parameter: the parameter at a name as named_parameters gives it (dotted
  // names walk children); throws opspec::Error naming the module and name.
  const Tensor& parameter(std::string_view name) const;
  // parameters: named_parameters' tensors (for an optimizer).
  std::vector<Tensor> parameters(bool recurse = true) const;
  // zero_grad: clears every parameter's gradient: undefined (set_to_none, PyTorch
  // 2.x's default) or zeros in place.
  void zero_grad(bool set_to_none = true);

  // The module's state, defined in module_state.cc (See Note [Module state]).
  // state_dict: each module's own parameters, then its buffers, then its
  // children's (under every name a child is registered as), detached, as
  // PyTorch's state_dict().
  StateDict state_dict() const;
  // load_state_dict: copies state's tensors into the parameters and buffers
  // of the same names (any device or dtype; shapes must match), with grad mode
  // off. strict: a missing or unexpected key is an error too. Throws PyTorch's
  // "Error(s) in loading state_dict for <type>:" listing every problem.
  LoadStateDictResult load_state_dict(const StateDict& state, bool strict = true);
  // to: moves every parameter, buffer and gradient to device and (floating
  // ones only, as PyTorch's module.to) converts them to dtype; a parameter
  // stays a leaf with its requires_grad, tied ones stay tied. Handles taken
  // before (an optimizer's) keep the old tensors: make optimizers after to().
  void to(Device device, std::optional<DType> dtype = std::nullopt);
  void to(DType dtype);

 private:
  void add_child(std::string name, std::shared_ptr<Module> child);
  // collect_state: the parameter and buffer slots under prefix, in state_dict's order.
  void collect_state(const std::string& prefix, std::vector<std::pair<std::string, Tensor*>>& out);
  // convert_state: to()'s work; an unset device keeps each tensor's own.
  void convert_state(std::optional<Device> device, std::optional<DType> dtype);
  void check_new_name(const std::string& name, const char* what) const;

  std::string type_name_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  // A deque keeps the references register_parameter returns valid.
  std::deque<std::pair<std::string, Tensor>> parameters_;
  std::deque<std::pair<std::string, Tensor>> buffers_;
  bool training_ = true;
};

// ModuleForwardHook: called with the module and its fully qualified name
// (See Note [Module fqn]); the name is valid for the duration of the call.
using ModuleForwardHook = std::function<void(const Module& module, std::string_view fqn)>;

// ForwardHookHandle: RAII; removes its hooks when destroyed (or on remove()).
// Movable, not copyable; a default-constructed handle holds nothing.
class ForwardHookHandle {
 public:
  ForwardHookHandle() = default;
  ForwardHookHandle(ForwardHookHandle&& other) noexcept;
  ForwardHookHandle& operator=(ForwardHookHandle&& other) noexcept;
  ForwardHookHandle(const ForwardHookHandle&) = delete;
  ForwardHookHandle& operator=(const ForwardHookHandle&) = delete;
  ~ForwardHookHandle();

  // remove: unregisters the hooks now; later calls do nothing.
  void remove();
  // active: whether the handle still holds registered hooks.
  bool active() const { return id_ != 0; }

 private:
  friend ForwardHookHandle register_module_forward_hooks(ModuleForwardHook, ModuleForwardHook);
  explicit ForwardHookHandle(uint64_t id) : id_(id) {}
  uint64_t id_ = 0;
};

// register_module_forward_hooks: global hooks for every module call on every
// thread (PyTorch's register_module_forward_pre_hook / _forward_hook). Either
// may be empty. Pre hooks run in registration order before forward; post
// hooks in reverse order after it, and also when it throws, so recorders stay
// balanced: a registration's post hook runs for a call iff its pre hook ran
// for that call (or it has none) and it is still registered. Thread-safe;
// hooks may register and unregister hooks. Exceptions from hooks propagate
// (after the remaining post hooks ran), except while unwinding from a
// throwing forward, where post hooks' exceptions are dropped.
[[nodiscard]] ForwardHookHandle register_module_forward_hooks(ModuleForwardHook pre, ModuleForwardHook post);

// current_module_fqn: the fqn of the innermost module whose forward is
// running on this thread, "" if none; valid until that module's call returns.
std::string_view current_module_fqn();

}  // namespace opspec::nn
