// grad_mode.cc: the thread-local grad mode.
#include "runtime/core/grad_mode.h"

namespace opspec::autograd {
namespace {
constinit thread_local bool tls_grad_enabled = true;
constinit thread_local ::opspec::internal::LiveLink<AutoGradMode>* tls_innermost_guard = nullptr;
}  // namespace

bool is_grad_enabled() { return tls_grad_enabled; }
void set_grad_enabled(bool enabled) { tls_grad_enabled = enabled; }

AutoGradMode::AutoGradMode(bool enabled) : saved_(is_grad_enabled()), link_(this, tls_innermost_guard) {
  set_grad_enabled(enabled);
}

AutoGradMode::~AutoGradMode() {
  if (AutoGradMode* inner = link_.inner(); inner == nullptr) {
    set_grad_enabled(saved_);
  } else {
    inner->saved_ = saved_;  // it owns the mode now and will put back what this guard replaced
  }
}

}  // namespace opspec::autograd
