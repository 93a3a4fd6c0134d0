// grad_mode.h: whether ops record autograd history on this thread
// (PyTorch's GradMode), and the RAII guards that change it. In core, as
// c10's GradMode is: tracers record it and graphs set it (See Note [Grad mode nodes]).
#pragma once

#include "runtime/core/live_guards.h"

namespace opspec::autograd {

// is_grad_enabled: ops on tensors that require grad record history (default true).
bool is_grad_enabled();
// set_grad_enabled: sets it for this thread; prefer the guards.
void set_grad_enabled(bool enabled);

// AutoGradMode: sets grad mode for its scope, restoring the previous one.
// Guards may end in any order: one that ends while a guard entered after it
// is alive leaves the mode to that guard (See Note [Out-of-order guard
// release] in runtime/core/live_guards.h).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled);
  ~AutoGradMode();
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool saved_;
  ::opspec::internal::LiveLink<AutoGradMode> link_;  // among this thread's live guards
};

// NoGradGuard: torch.no_grad(): nothing in its scope records history.
class NoGradGuard : public AutoGradMode {
 public:
  NoGradGuard() : AutoGradMode(false) {}
};

// EnableGradGuard: torch.enable_grad(), e.g. inside a NoGradGuard.
class EnableGradGuard : public AutoGradMode {
 public:
  EnableGradGuard() : AutoGradMode(true) {}
};

}  // namespace opspec::autograd
