#include "runtime/core/call_site.h"

namespace opspec {
namespace internal {
constinit thread_local CallSiteSlot tls_call_site{};
constinit thread_local SiteLabelScope* tls_site_label_scope = nullptr;
}  // namespace internal

SiteLabelScope::SiteLabelScope(const std::string& label) : label_(&label), outer_(internal::tls_site_label_scope) {
  if (outer_ != nullptr) outer_->inner_ = this;
  internal::tls_site_label_scope = this;
}

// Unlinks itself wherever it is, so no scope ever points at an ended one's label.
SiteLabelScope::~SiteLabelScope() {
  if (inner_ == nullptr) {
    internal::tls_site_label_scope = outer_;
  } else {
    inner_->outer_ = outer_;
  }
  if (outer_ != nullptr) outer_->inner_ = inner_;
}

}  // namespace opspec
