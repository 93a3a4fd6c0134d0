#include "runtime/core/call_site.h"

namespace opspec {
namespace internal {
constinit thread_local CallSiteSlot tls_call_site{};
constinit thread_local LiveLink<SiteLabelScope>* tls_site_label_scope = nullptr;
}  // namespace internal

SiteLabelScope::SiteLabelScope(const std::string& label)
    : label_(&label), link_(this, internal::tls_site_label_scope) {}

}  // namespace opspec
