// grad_mode.h: whether ops record autograd history on this thread
// (PyTorch's GradMode), and the RAII guards that change it.
#pragma once

namespace opspec::autograd {

// is_grad_enabled: ops on tensors that require grad record history (default true).
bool is_grad_enabled();
// set_grad_enabled: sets it for this thread; prefer the guards.
void set_grad_enabled(bool enabled);

// AutoGradMode: sets grad mode for its scope, restoring the previous one.
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : saved_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~AutoGradMode() { set_grad_enabled(saved_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool saved_;
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
