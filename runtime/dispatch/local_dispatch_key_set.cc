#include "runtime/dispatch/local_dispatch_key_set.h"

namespace opspec {
namespace internal {
constinit thread_local LocalDispatchKeySet tls_local_dispatch_key_set{};
}  // namespace internal

// Each guard takes out only what it added: See Note [Out-of-order guard release].
IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet keys) {
  DispatchKeySet& included = internal::tls_local_dispatch_key_set.included;
  added_ = keys - included;
  included = included | keys;
}
IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() {
  DispatchKeySet& included = internal::tls_local_dispatch_key_set.included;
  included = included - added_;
}

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet keys) {
  DispatchKeySet& excluded = internal::tls_local_dispatch_key_set.excluded;
  added_ = keys - excluded;
  excluded = excluded | keys;
}
ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() {
  DispatchKeySet& excluded = internal::tls_local_dispatch_key_set.excluded;
  excluded = excluded - added_;
}

}  // namespace opspec
