// call_site.h: the user call site of the op being dispatched, captured by the
// public op API with std::source_location (cheap: no stack walk).
#pragma once

#include <source_location>

namespace opspec {

namespace internal {
extern constinit thread_local const std::source_location* tls_call_site;
}  // namespace internal

// current_call_site: where the outermost public op call on this thread was
// made, or null outside one. Ops a composite calls report the composite's site.
inline const std::source_location* current_call_site() { return internal::tls_call_site; }

// CallSiteScope: records loc as the current call site unless an outer public
// call already did (so decompositions keep the user's line).
class CallSiteScope {
 public:
  // A default-constructed location (line 0) records nothing: operators such as
  // `a + b` cannot capture their caller, so they leave the site to an outer call.
  explicit CallSiteScope(const std::source_location& loc)
      : set_(internal::tls_call_site == nullptr && loc.line() != 0) {
    if (set_) internal::tls_call_site = &loc;
  }
  ~CallSiteScope() {
    if (set_) internal::tls_call_site = nullptr;
  }
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;

 private:
  bool set_;
};

}  // namespace opspec
