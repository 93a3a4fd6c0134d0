// mode.h: dispatch modes, function modes and tensor subclasses: objects that
// see (and may take over) every op call. See Note [Mode and subclass order].
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "runtime/core/live_guards.h"
#include "runtime/dispatch/dispatcher.h"

namespace opspec {

// Note [Mode and subclass order]
// At the Python key the handlers are consulted in PyTorch's order: user
// dispatch modes (innermost first), then user tensor subclasses of the
// arguments, then the proxy mode or proxy tensors, then the fake mode or fake
// tensors. A handler runs with itself taken off the stack, so an op it calls
// goes to the next handler or the kernel; two nested logging modes log each
// op twice. Its call.proceed() goes through the stack as it is then (See Note
// [Handlers see the live mode stack] in mode.cc). A handler may decline (PyTorch's NotImplemented): the op then
// continues as if that handler were absent. Function modes (FunctionMode key)
// and pre-dispatch modes (PreDispatch key) work the same way above the
// decompositions, so they see `linear` and not its parts.

// OpCall: one op call as a mode or subclass handler sees it.
class OpCall {
 public:
  // next must outlive the OpCall (a handler sees it only during dispatch()).
  OpCall(const OperatorHandle& op, Stack& stack, absl::FunctionRef<void(Stack&)> next)
      : op_(op), stack_(stack), next_(next) {}

  const OperatorHandle& op() const { return op_; }
  // name: "aten::add.Tensor".
  const std::string& name() const { return op_.name(); }
  // stack: the complete arguments on entry (See Note [Borrowed arguments]); the results once handled.
  Stack& stack() { return stack_; }
  const Stack& stack() const { return stack_; }
  const Value& arg(size_t i) const { return stack_.at(i); }
  size_t num_args() const { return stack_.size(); }

  // proceed: runs the rest of the chain (the next handler, or the kernel) on
  // the current stack, which then holds the results; like `func(*args)`.
  void proceed();
  bool proceeded() const { return proceeded_; }

 private:
  const OperatorHandle& op_;
  Stack& stack_;
  absl::FunctionRef<void(Stack&)> next_;  // not std::function: no allocation per call
  bool proceeded_ = false;
};

// ModeKind: user modes and subclasses come before the infra ones (proxy, fake).
enum class ModeKind : uint8_t { kUser, kProxy, kFake };

// DispatchMode: a stateful object that sees every op call made while it is on
// the mode stack of its key, including factory functions. Override dispatch().
class DispatchMode {
 public:
  virtual ~DispatchMode() = default;
  // dispatch: handle the call (leave results on the stack, usually via
  // call.proceed()) and return true, or return false to decline.
  virtual bool dispatch(OpCall& call) = 0;
  // key: the key whose stack this mode joins: Python (dispatch modes, the
  // default), FunctionMode or PreDispatch.
  virtual DispatchKey key() const { return DispatchKey::kPython; }
  // kind: user, or infra (proxy, fake). At the Python key infra modes have
  // their own slots, consulted after user subclasses; elsewhere they stack.
  virtual ModeKind kind() const { return ModeKind::kUser; }
  // name: for error messages and dumps.
  virtual std::string_view name() const { return "DispatchMode"; }
  // answer_without_ops: may answer a call that its handler would answer
  // without running any op: put the results on the stack and return true.
  // Such a call skips taking the mode off its stack around dispatch() (See
  // Note [Answers that run no op]); false (the default) means "ask dispatch()".
  virtual bool answer_without_ops(const OperatorHandle& op, Stack& stack) { return false; }
};

// Note [Answers that run no op]
// A handler runs with its mode off the stack only so that the ops it runs do
// not come back to it. A mode that can answer a call from what it already
// knows (a capture replaying a recorded op with fresh fakes) runs no op, so
// for that call the pop and push, and the OpCall around it, are skipped: the
// only difference it can see is itself on its stack, and it must allow for
// that (See mode_census). Only a mode alone at its key is asked (run_only_mode).

// FunctionMode: a mode that sits above decomposition (PyTorch's
// TorchFunctionMode): it sees composite ops such as linear and matmul as called.
class FunctionMode : public DispatchMode {
 public:
  DispatchKey key() const override { return DispatchKey::kFunctionMode; }
  std::string_view name() const override { return "FunctionMode"; }
};

// TensorSubclass: the handler a tensor carries (see with_subclass); consulted
// for every op the tensor takes part in, after the user modes.
class TensorSubclass {
 public:
  virtual ~TensorSubclass() = default;
  // dispatch: as DispatchMode::dispatch. proceed() runs the kernel on the
  // tensors' own data (after any remaining handlers).
  virtual bool dispatch(OpCall& call) = 0;
  virtual ModeKind kind() const { return ModeKind::kUser; }
  virtual std::string_view name() const = 0;
};

// with_subclass: a tensor sharing t's data and geometry that carries handler.
Tensor with_subclass(const Tensor& t, std::shared_ptr<TensorSubclass> handler);

// push_mode: puts mode on its key's stack (user modes) or into its infra slot.
void push_mode(std::shared_ptr<DispatchMode> mode);
// pop_mode: removes and returns the innermost user mode of key (throws if none).
std::shared_ptr<DispatchMode> pop_mode(DispatchKey key = DispatchKey::kPython);
// mode_stack: the user modes of key, outermost first.
std::vector<std::shared_ptr<DispatchMode>> mode_stack(DispatchKey key = DispatchKey::kPython);
// innermost_mode: the innermost user mode of key, or null (mode_stack().back() without the copy).
DispatchMode* innermost_mode(DispatchKey key = DispatchKey::kPython);
// mode_stack_empty: whether key has no user mode (mode_stack without the copy).
bool mode_stack_empty(DispatchKey key = DispatchKey::kPython);
// infra_mode: the mode in an infra slot (proxy or fake) or null.
std::shared_ptr<DispatchMode> infra_mode(ModeKind kind);
// has_infra_mode: whether an infra slot is filled (infra_mode without the copy).
bool has_infra_mode(ModeKind kind);
// ModeCensus: how many modes each mode key has on this thread, and which
// infra slots are filled, read at once (one thread-local access).
struct ModeCensus {
  size_t python = 0, function = 0, pre_dispatch = 0;  // user modes on each stack
  bool proxy = false, fake = false;                   // the Python key's infra slots
};
namespace internal {
// This thread's census, rewritten by every push and pop (it is read once per
// replayed op, so it is a plain thread-local rather than a walk of the stacks).
extern constinit thread_local ModeCensus tls_mode_census;
}  // namespace internal
// mode_census: this thread's ModeCensus.
inline ModeCensus mode_census() { return internal::tls_mode_census; }
// dispatch_mode_enabled: any mode or infra mode at the Python key (PyTorch's
// check, used by composites such as reshape and linear).
bool dispatch_mode_enabled();

// ModeGuard: pushes a mode for its scope. The non-owning form suits modes that
// live on the stack: `DebugMode dm; { ModeGuard g(dm); ... }`. Guards may end
// in any order: ending takes exactly its mode out, and an infra mode's guard
// ended before one entered after it leaves the slot to that guard (See Note
// [Out-of-order guard release] in runtime/core/live_guards.h).
class ModeGuard {
 public:
  explicit ModeGuard(std::shared_ptr<DispatchMode> mode);
  explicit ModeGuard(DispatchMode& mode);
  ~ModeGuard();
  ModeGuard(const ModeGuard&) = delete;
  ModeGuard& operator=(const ModeGuard&) = delete;

 private:
  std::shared_ptr<DispatchMode> mode_;
  std::shared_ptr<DispatchMode> previous_infra_;
  // Among the live guards of the same infra slot on this thread (infra modes only).
  std::optional<internal::LiveLink<ModeGuard>> link_;
};

// HideUserModesGuard: user modes (at every key) do not see calls in its scope;
// infra modes (proxy, fake) still do. Module initialisation uses it, so a
// logging mode skips it while a fake mode still makes the parameters fake.
// Ending it brings back the hidden modes whose guards are still alive, keeps
// the modes pushed in its scope, and never brings back a mode whose guard
// ended meanwhile (See Note [Out-of-order guard release]).
class HideUserModesGuard {
 public:
  // keys: the mode keys whose user modes it hides (default: all three).
  explicit HideUserModesGuard(DispatchKeySet keys = {DispatchKey::kPython, DispatchKey::kFunctionMode,
                                                     DispatchKey::kPreDispatch});
  ~HideUserModesGuard();
  HideUserModesGuard(const HideUserModesGuard&) = delete;
  HideUserModesGuard& operator=(const HideUserModesGuard&) = delete;

 private:
  friend class ModeGuard;  // takes its mode out of saved_ when it ends while hidden
  // Saved: a mode on a stack when the guard began, and whether the guard hid it.
  struct Saved {
    std::shared_ptr<DispatchMode> mode;
    bool hidden;
  };
  std::vector<Saved> saved_[3];
  internal::LiveLink<HideUserModesGuard> link_;  // among this thread's live HideUserModesGuards
};

namespace internal {
// exchange_infra_mode: puts mode (may be null) in kind's infra slot and
// returns what was there; for tools that take an infra mode out for a while
// (the compiler runs graphs with its fake mode out of the way).
std::shared_ptr<DispatchMode> exchange_infra_mode(ModeKind kind, std::shared_ptr<DispatchMode> mode);
// register_mode_fallbacks: the Python, FunctionMode and PreDispatch fallbacks.
void register_mode_fallbacks(Dispatcher& d);
}  // namespace internal

}  // namespace opspec
