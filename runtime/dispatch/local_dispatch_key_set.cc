#include "runtime/dispatch/local_dispatch_key_set.h"

namespace opspec {
namespace internal {
constinit thread_local LocalDispatchKeySet tls_local_dispatch_key_set{};
}  // namespace internal

IncludeDispatchKeyGuard::IncludeDispatchKeyGuard(DispatchKeySet keys)
    : saved_(internal::tls_local_dispatch_key_set.included) {
  internal::tls_local_dispatch_key_set.included = saved_ | keys;
}
IncludeDispatchKeyGuard::~IncludeDispatchKeyGuard() { internal::tls_local_dispatch_key_set.included = saved_; }

ExcludeDispatchKeyGuard::ExcludeDispatchKeyGuard(DispatchKeySet keys)
    : saved_(internal::tls_local_dispatch_key_set.excluded) {
  internal::tls_local_dispatch_key_set.excluded = saved_ | keys;
}
ExcludeDispatchKeyGuard::~ExcludeDispatchKeyGuard() { internal::tls_local_dispatch_key_set.excluded = saved_; }

}  // namespace opspec
