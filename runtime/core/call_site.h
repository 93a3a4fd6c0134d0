// call_site.h: the user call site of the op being dispatched, captured by the
// public op API with std::source_location (cheap: no stack walk).
#pragma once

#include <source_location>
#include <string>

#include "runtime/core/live_guards.h"

namespace opspec {

namespace internal {
// The public API's `loc` is a temporary (a default argument), so the site is
// copied here by value; a source_location is one pointer to static data.
struct CallSiteSlot {
  std::source_location loc;
  bool set = false;
};
extern constinit thread_local CallSiteSlot tls_call_site;
}  // namespace internal

// current_call_site: where the outermost public op call on this thread was
// made, or null outside one. Ops a composite calls report the composite's site.
// The pointer is valid until that call returns: copy the value to keep it.
inline const std::source_location* current_call_site() {
  return internal::tls_call_site.set ? &internal::tls_call_site.loc : nullptr;
}

// CallSiteScope: records loc as the current call site unless an outer public
// call already did (so decompositions keep the user's line).
class CallSiteScope {
 public:
  // A default-constructed location (line 0) records nothing: operators such as
  // `a + b` cannot capture their caller, so they leave the site to an outer call.
  explicit CallSiteScope(const std::source_location& loc)
      : set_(!internal::tls_call_site.set && loc.line() != 0) {
    if (set_) internal::tls_call_site = {loc, true};
  }
  ~CallSiteScope() {
    if (set_) internal::tls_call_site.set = false;
  }
  CallSiteScope(const CallSiteScope&) = delete;
  CallSiteScope& operator=(const CallSiteScope&) = delete;

 private:
  bool set_;
};

// SiteLabelScope: names the current user site as text ("specs/a.yaml:7:5"),
// for programs that are not C++ (the spec program language). While one is
// active, the compiler's break reports and errors name it instead of a C++
// source location. label must outlive the scope. Scopes may end in any order:
// the innermost live one names the site (See Note [Out-of-order guard
// release] in runtime/core/live_guards.h).
class SiteLabelScope {
 public:
  explicit SiteLabelScope(const std::string& label);
  SiteLabelScope(const SiteLabelScope&) = delete;
  SiteLabelScope& operator=(const SiteLabelScope&) = delete;

  const std::string& label() const { return *label_; }

 private:
  const std::string* label_;
  internal::LiveLink<SiteLabelScope> link_;  // among this thread's live scopes
};

namespace internal {
extern constinit thread_local LiveLink<SiteLabelScope>* tls_site_label_scope;  // the innermost live one
}  // namespace internal

// current_site_label: the innermost SiteLabelScope's text, or null.
inline const std::string* current_site_label() {
  const SiteLabelScope* s = internal::owner_of(internal::tls_site_label_scope);
  return s != nullptr ? &s->label() : nullptr;
}

}  // namespace opspec
