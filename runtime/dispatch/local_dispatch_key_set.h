// local_dispatch_key_set.h: the thread-local included/excluded key sets and the
// RAII guards that change them. Exclusion wins over inclusion.
#pragma once

#include "runtime/core/dispatch_key.h"
#include "runtime/core/live_guards.h"

namespace opspec {

// LocalDispatchKeySet: this thread's key adjustments. `modes` holds the keys of
// non-empty mode stacks (Python, FunctionMode, PreDispatch) and is kept apart
// from `included` so a guard and a mode never undo each other.
struct LocalDispatchKeySet {
  DispatchKeySet included;
  DispatchKeySet excluded;
  DispatchKeySet modes;
};

namespace internal {
extern constinit thread_local LocalDispatchKeySet tls_local_dispatch_key_set;
}  // namespace internal

// local_dispatch_key_set: this thread's state (read it; change it with guards).
inline LocalDispatchKeySet& local_dispatch_key_set() { return internal::tls_local_dispatch_key_set; }

// compute_dispatch_key_set: the keys a call with these tensor keys goes through.
// A call with no tensor at all (cat of an empty list) runs on the CPU backend,
// so its kernel can report the problem; factories choose at BackendSelect first.
inline DispatchKeySet compute_dispatch_key_set(DispatchKeySet tensor_keys) {
  const LocalDispatchKeySet& tls = internal::tls_local_dispatch_key_set;
  if ((tensor_keys & kBackendKeys).empty()) tensor_keys = tensor_keys.add(DispatchKey::kCPU);
  return (tensor_keys | kDefaultOnKeys | tls.included | tls.modes) - tls.excluded;
}

// override_layer_enabled: whether this thread runs overrides registered with
// Dispatcher::register_override (an EnablePythonDispatcherGuard is active and
// no DisablePythonDispatcherGuard inside it).
inline bool override_layer_enabled() {
  const LocalDispatchKeySet& tls = internal::tls_local_dispatch_key_set;
  return tls.included.has(DispatchKey::kPythonDispatcher) && !tls.excluded.has(DispatchKey::kPythonDispatcher);
}

// Key guards may end in any order: each takes out only the keys it added (See
// Note [Out-of-order guard release] in runtime/core/live_guards.h).

// IncludeDispatchKeyGuard: adds keys to the included set for its scope.
class IncludeDispatchKeyGuard {
 public:
  explicit IncludeDispatchKeyGuard(DispatchKeySet keys) {
    DispatchKeySet& included = internal::tls_local_dispatch_key_set.included;
    added_ = keys - included;
    included = included | keys;
  }
  ~IncludeDispatchKeyGuard() {
    DispatchKeySet& included = internal::tls_local_dispatch_key_set.included;
    included = included - added_;
  }
  IncludeDispatchKeyGuard(const IncludeDispatchKeyGuard&) = delete;
  IncludeDispatchKeyGuard& operator=(const IncludeDispatchKeyGuard&) = delete;

 private:
  DispatchKeySet added_;  // the keys it included; See Note [Out-of-order guard release]
};

// ExcludeDispatchKeyGuard: adds keys to the excluded set for its scope.
class ExcludeDispatchKeyGuard {
 public:
  // Inline: every mode call runs one around the kernels below its key.
  explicit ExcludeDispatchKeyGuard(DispatchKeySet keys) {
    DispatchKeySet& excluded = internal::tls_local_dispatch_key_set.excluded;
    added_ = keys - excluded;
    excluded = excluded | keys;
  }
  ~ExcludeDispatchKeyGuard() {
    DispatchKeySet& excluded = internal::tls_local_dispatch_key_set.excluded;
    excluded = excluded - added_;
  }
  ExcludeDispatchKeyGuard(const ExcludeDispatchKeyGuard&) = delete;
  ExcludeDispatchKeyGuard& operator=(const ExcludeDispatchKeyGuard&) = delete;

 private:
  DispatchKeySet added_;  // the keys it excluded; See Note [Out-of-order guard release]
};

// EnablePreDispatchGuard: PyTorch's _EnablePreDispatch: calls pass through the
// PreDispatch key, where pre-dispatch modes capture ops before decomposition.
class EnablePreDispatchGuard : public IncludeDispatchKeyGuard {
 public:
  EnablePreDispatchGuard() : IncludeDispatchKeyGuard(DispatchKey::kPreDispatch) {}
};

// PythonDispatcherStateGuard: sets for its scope whether the override layer
// is on (the PythonDispatcher key included, not excluded) or off (excluded),
// as c10's PythonDispatcherTLS state: the innermost live guard decides, so an
// enable inside a disable enables (make_fx's, inside a caller's disable).
// Guards may end in any order (See Note [Out-of-order guard release] in
// runtime/core/live_guards.h). Use the two below.
class PythonDispatcherStateGuard {
 public:
  PythonDispatcherStateGuard(const PythonDispatcherStateGuard&) = delete;
  PythonDispatcherStateGuard& operator=(const PythonDispatcherStateGuard&) = delete;

 protected:
  explicit PythonDispatcherStateGuard(bool enabled);
  ~PythonDispatcherStateGuard();

 private:
  bool saved_included_, saved_excluded_;  // the key's two bits before this guard
  internal::LiveLink<PythonDispatcherStateGuard> link_;
};

// EnablePythonDispatcherGuard: PyTorch's _EnablePythonDispatcher: turns on the
// override layer on this thread: kernels registered at run time for an
// (op, key) pair replace the built-in ones. See Note [Override layer].
class EnablePythonDispatcherGuard : public PythonDispatcherStateGuard {
 public:
  EnablePythonDispatcherGuard() : PythonDispatcherStateGuard(true) {}
};

// DisablePythonDispatcherGuard: PyTorch's _DisablePythonDispatcher: the
// override layer is skipped for the scope (until an inner enable guard).
class DisablePythonDispatcherGuard : public PythonDispatcherStateGuard {
 public:
  DisablePythonDispatcherGuard() : PythonDispatcherStateGuard(false) {}
};

// ExcludeModesGuard: no mode (dispatch, function or pre-dispatch) and no tensor
// subclass sees calls in its scope; used by tools that must not record themselves.
class ExcludeModesGuard : public ExcludeDispatchKeyGuard {
 public:
  ExcludeModesGuard()
      : ExcludeDispatchKeyGuard({DispatchKey::kPython, DispatchKey::kFunctionMode, DispatchKey::kPreDispatch}) {}
};

}  // namespace opspec
