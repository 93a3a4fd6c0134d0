#include "runtime/dispatch/local_dispatch_key_set.h"

namespace opspec {
namespace internal {
constinit thread_local LocalDispatchKeySet tls_local_dispatch_key_set{};
}  // namespace internal

namespace {
constinit thread_local internal::LiveLink<PythonDispatcherStateGuard>* tls_innermost_python_dispatcher_guard = nullptr;

void set_python_dispatcher_bits(bool included, bool excluded) {
  LocalDispatchKeySet& tls = internal::tls_local_dispatch_key_set;
  const DispatchKeySet key(DispatchKey::kPythonDispatcher);
  tls.included = included ? tls.included | key : tls.included - key;
  tls.excluded = excluded ? tls.excluded | key : tls.excluded - key;
}
}  // namespace

PythonDispatcherStateGuard::PythonDispatcherStateGuard(bool enabled)
    : saved_included_(internal::tls_local_dispatch_key_set.included.has(DispatchKey::kPythonDispatcher)),
      saved_excluded_(internal::tls_local_dispatch_key_set.excluded.has(DispatchKey::kPythonDispatcher)),
      link_(this, tls_innermost_python_dispatcher_guard) {
  set_python_dispatcher_bits(enabled, !enabled);
}

PythonDispatcherStateGuard::~PythonDispatcherStateGuard() {
  if (PythonDispatcherStateGuard* inner = link_.inner(); inner == nullptr) {
    set_python_dispatcher_bits(saved_included_, saved_excluded_);
  } else {  // the live guard entered after this one keeps the state, and restores this one's saved bits
    inner->saved_included_ = saved_included_;
    inner->saved_excluded_ = saved_excluded_;
  }
}

}  // namespace opspec
