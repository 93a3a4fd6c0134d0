// module.cc: Module registration and lookup, the forward scope, and the
// global forward hook registry.
#include "runtime/nn/module.h"

#include <atomic>
#include <exception>
#include <mutex>
#include <unordered_set>

#include "absl/container/inlined_vector.h"
#include "runtime/core/error.h"
#include "runtime/ops/ops.h"

namespace opspec::nn {
namespace {

// ---- Hook registry ----

// HookEntry: one registration; `active` goes false when its handle removes it,
// so a call that snapshotted the entry skips its post hook afterwards.
struct HookEntry {
  uint64_t id;
  ModuleForwardHook pre;
  ModuleForwardHook post;
  std::atomic<bool> active{true};
};

using HookList = std::vector<std::shared_ptr<HookEntry>>;

// HookRegistry: copy-on-write list of entries, so a call takes a consistent
// snapshot with one shared_ptr copy and hooks may (un)register while running.
struct HookRegistry {
  std::mutex mu;
  std::shared_ptr<const HookList> hooks = std::make_shared<const HookList>();
  uint64_t next_id = 1;
};

// Leaked on purpose: handles held by static objects may be destroyed after
// any function-local static would be.
HookRegistry& registry() {
  static HookRegistry* r = new HookRegistry();
  return *r;
}

std::shared_ptr<const HookList> hook_snapshot() {
  HookRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  return r.hooks;
}

// ---- Per-thread stack of running modules ----

// Frame: one running module. A deque keeps each frame's fqn at a stable
// address while nested calls push, so hooks and current_module_fqn can hand
// out string_views.
struct Frame {
  const Module* module;
  std::string fqn;
};

thread_local std::deque<Frame> tls_module_stack;

// ForwardScope: one module call's frame and hook bookkeeping. enter() runs the
// pre hooks; finish() the post hooks on the normal path (their exceptions
// propagate); the destructor runs them when unwinding (exceptions dropped).
class ForwardScope {
 public:
  ForwardScope(const Module& module, std::string fqn) : module_(module), hooks_(hook_snapshot()) {
    tls_module_stack.push_back(Frame{&module, std::move(fqn)});
    fqn_ = tls_module_stack.back().fqn;
  }
  ForwardScope(const ForwardScope&) = delete;
  ForwardScope& operator=(const ForwardScope&) = delete;

  ~ForwardScope() {
    if (!finished_) {
      run_post_hooks([](std::exception_ptr) {});
      tls_module_stack.pop_back();
    }
  }

  void enter() {
    for (const auto& entry : *hooks_) {
      if (!entry->active.load(std::memory_order_acquire)) continue;
      if (entry->pre) entry->pre(module_, fqn_);
      entered_.push_back(entry.get());
    }
  }

  void finish() {
    finished_ = true;
    std::exception_ptr first;
    run_post_hooks([&](std::exception_ptr e) {
      if (!first) first = std::move(e);
    });
    tls_module_stack.pop_back();
    if (first) std::rethrow_exception(first);
  }

 private:
  template <class OnError>
  void run_post_hooks(OnError&& on_error) {
    for (auto it = entered_.rbegin(); it != entered_.rend(); ++it) {
      HookEntry* entry = *it;
      if (!entry->post || !entry->active.load(std::memory_order_acquire)) continue;
      try {
        entry->post(module_, fqn_);
      } catch (...) {
        on_error(std::current_exception());
      }
    }
  }

  const Module& module_;
  std::shared_ptr<const HookList> hooks_;  // keeps entered_ alive
  std::string_view fqn_;
  absl::InlinedVector<HookEntry*, 4> entered_;
  bool finished_ = false;
};

}  // namespace

// ---- Module ----

Module::Module(std::string type_name) : type_name_(std::move(type_name)) {}

Module::~Module() = default;

Tensor Module::operator()(const Tensor& input) {
  // See Note [Module fqn].
  std::string fqn;
  if (!tls_module_stack.empty()) {
    const Frame& top = tls_module_stack.back();
    for (const auto& [name, child] : top.module->children_) {
      if (child.get() == this) {
        fqn = str_cat(top.fqn, ".", name);
        break;
      }
    }
  }
  if (fqn.empty()) fqn = type_name_;
  ForwardScope scope(*this, std::move(fqn));
  scope.enter();
  Tensor out = forward(input);
  scope.finish();
  return out;
}

void Module::check_new_name(const std::string& name, const char* what) const {
  OPSPEC_CHECK(!name.empty(), "nn.Module ", type_name_, ": ", what, " name can't be empty string \"\"");
  OPSPEC_CHECK(name.find('.') == std::string::npos, "nn.Module ", type_name_, ": ", what,
               " name can't contain \".\", got: ", name);
  for (const auto& [n, c] : children_) {
    OPSPEC_CHECK(n != name, "nn.Module ", type_name_, ": attribute '", name, "' already exists (a submodule)");
  }
  for (const auto& [n, p] : parameters_) {
    OPSPEC_CHECK(n != name, "nn.Module ", type_name_, ": attribute '", name, "' already exists (a parameter)");
  }
  for (const auto& [n, b] : buffers_) {
    OPSPEC_CHECK(n != name, "nn.Module ", type_name_, ": attribute '", name, "' already exists (a buffer)");
  }
}

void Module::add_child(std::string name, std::shared_ptr<Module> child) {
  check_new_name(name, "module");
  OPSPEC_CHECK(child != nullptr, "nn.Module ", type_name_, ": register_module('", name, "') got a null module");
  OPSPEC_CHECK(child.get() != this, "nn.Module ", type_name_, ": register_module('", name,
               "') would make the module its own child");
  children_.emplace_back(std::move(name), std::move(child));
}

// Note [Parameters require grad]
// A registered parameter requires grad, as nn.Parameter(t) does in Python and
// register_parameter(name, t, requires_grad=true) in libtorch: training code
// needs no requires_grad_() calls, and an inference run says so with
// NoGradGuard (PyTorch's torch.no_grad()), as PyTorch users write it. A
// parameter made from a non-leaf is detached first: nn.Parameter makes a leaf
// sharing the data. The initialisers (uniform_, ones) run before this, so they
// record nothing, as PyTorch's run under no_grad.
Tensor& Module::register_parameter(std::string name, Tensor value, bool requires_grad) {
  check_new_name(name, "parameter");
  OPSPEC_CHECK(value.defined(), "nn.Module ", type_name_, ": register_parameter('", name,
               "') got an undefined tensor");
  if (requires_grad) {
    OPSPEC_CHECK(is_floating(value.dtype()), "nn.Module ", type_name_, ": register_parameter('", name,
                 "'): Only Tensors of floating point and complex dtype can require gradients (got ",
                 dtype_torch_name(value.dtype()), "; pass requires_grad = false)");
    if (!value.is_leaf()) value = value.detach();
    value.requires_grad_();
  }
  parameters_.emplace_back(std::move(name), std::move(value));
  return parameters_.back().second;
}

Tensor& Module::register_buffer(std::string name, Tensor value) {
  check_new_name(name, "buffer");
  OPSPEC_CHECK(value.defined(), "nn.Module ", type_name_, ": register_buffer('", name, "') got an undefined tensor");
  buffers_.emplace_back(std::move(name), std::move(value));
  return buffers_.back().second;
}

std::vector<std::pair<std::string, Tensor>> Module::named_buffers(bool recurse) const {
  std::vector<std::pair<std::string, Tensor>> out(buffers_.begin(), buffers_.end());
  if (!recurse) return out;
  for (const auto& [prefix, m] : named_modules()) {
    if (m == this) continue;
    for (const auto& [name, t] : m->named_buffers(false)) out.emplace_back(str_cat(prefix, ".", name), t);
  }
  return out;
}

void Module::requires_grad_(bool requires_grad) {
  for (const auto& [name, m] : named_modules()) {
    for (auto& [pname, p] : const_cast<Module*>(m)->parameters_) p.requires_grad_(requires_grad);
  }
}

void Module::train(bool mode) {
  // named_modules hands out const pointers; every module it lists is this one or a child this one owns.
  for (const auto& [name, m] : named_modules()) const_cast<Module*>(m)->training_ = mode;
}

std::vector<std::pair<std::string, std::shared_ptr<Module>>> Module::named_children() const {
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> out;
  std::unordered_set<const Module*> seen;
  for (const auto& [name, child] : children_) {
    if (seen.insert(child.get()).second) out.emplace_back(name, child);
  }
  return out;
}

namespace {
// Pre-order walk with a memo, as PyTorch's named_modules (also ends cycles).
void collect_modules(const Module& m, const std::string& prefix, std::unordered_set<const Module*>& seen,
                     std::vector<std::pair<std::string, const Module*>>& out) {
  if (!seen.insert(&m).second) return;
  out.emplace_back(prefix, &m);
  for (const auto& [name, child] : m.named_children()) {
    collect_modules(*child, prefix.empty() ? name : str_cat(prefix, ".", name), seen, out);
  }
}
}  // namespace

std::vector<std::pair<std::string, const Module*>> Module::named_modules() const {
  std::vector<std::pair<std::string, const Module*>> out;
  std::unordered_set<const Module*> seen;
  collect_modules(*this, "", seen, out);
  return out;
}

std::vector<std::pair<std::string, Tensor>> Module::named_parameters(bool recurse) const {
  std::vector<std::pair<std::string, const Module*>> modules;
  if (recurse) {
    modules = named_modules();
  } else {
    modules.emplace_back("", this);
  }
  std::vector<std::pair<std::string, Tensor>> out;
  std::unordered_set<const TensorImpl*> seen;
  for (const auto& [prefix, m] : modules) {
    for (const auto& [name, value] : m->parameters_) {
      if (!seen.insert(value.impl()).second) continue;
      out.emplace_back(prefix.empty() ? name : str_cat(prefix, ".", name), value);
    }
  }
  return out;
}

std::vector<Tensor> Module::parameters(bool recurse) const {
  std::vector<Tensor> out;
  for (auto& [name, p] : named_parameters(recurse)) out.push_back(std::move(p));
  return out;
}

void Module::zero_grad(bool set_to_none) {
  for (const Tensor& p : parameters()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    if (set_to_none) {
      p.set_grad(Tensor());
    } else {
      ops::zero_(g);  // PyTorch detaches a grad_fn'd grad first (requires_grad_(False)); ours are leaves
    }
  }
}

const Tensor& Module::parameter(std::string_view name) const {
  const Module* m = this;
  std::string path = type_name_;  // where we are, for the message
  std::string_view rest = name;
  for (size_t dot = rest.find('.'); dot != std::string_view::npos; dot = rest.find('.')) {
    const std::string_view child_name = rest.substr(0, dot);
    const Module* next = nullptr;
    for (const auto& [n, c] : m->children_) {
      if (n == child_name) {
        next = c.get();
        break;
      }
    }
    OPSPEC_CHECK(next != nullptr, type_name_, " has no parameter '", name, "': ", path, " (", m->type_name_,
                 ") has no submodule '", child_name, "'");
    path = str_cat(path, ".", child_name);
    m = next;
    rest = rest.substr(dot + 1);
  }
  std::string have;
  for (const auto& [n, p] : m->parameters_) {
    if (n == rest) return p;
    str_append(&have, have.empty() ? "" : ", ", n);
  }
  OPSPEC_FAIL(type_name_, " has no parameter '", name, "': ", path, " (", m->type_name_, ") has no parameter '",
              rest, "' (it has: ", have.empty() ? "none" : have, ")");
}

// ---- Hooks ----

ForwardHookHandle register_module_forward_hooks(ModuleForwardHook pre, ModuleForwardHook post) {
  HookRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto entry = std::make_shared<HookEntry>();
  entry->id = r.next_id++;
  entry->pre = std::move(pre);
  entry->post = std::move(post);
  auto list = std::make_shared<HookList>(*r.hooks);
  list->push_back(entry);
  r.hooks = std::move(list);
  return ForwardHookHandle(entry->id);
}

ForwardHookHandle::ForwardHookHandle(ForwardHookHandle&& other) noexcept : id_(std::exchange(other.id_, 0)) {}

ForwardHookHandle& ForwardHookHandle::operator=(ForwardHookHandle&& other) noexcept {
  if (this != &other) {
    remove();
    id_ = std::exchange(other.id_, 0);
  }
  return *this;
}

ForwardHookHandle::~ForwardHookHandle() { remove(); }

void ForwardHookHandle::remove() {
  if (id_ == 0) return;
  HookRegistry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  auto list = std::make_shared<HookList>();
  list->reserve(r.hooks->size());
  for (const auto& entry : *r.hooks) {
    if (entry->id == id_) {
      entry->active.store(false, std::memory_order_release);
    } else {
      list->push_back(entry);
    }
  }
  r.hooks = std::move(list);
  id_ = 0;
}

std::string_view current_module_fqn() {
  return tls_module_stack.empty() ? std::string_view() : std::string_view(tls_module_stack.back().fqn);
}

}  // namespace opspec::nn
