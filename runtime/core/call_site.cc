#include "runtime/core/call_site.h"

namespace opspec::internal {
constinit thread_local CallSiteSlot tls_call_site{};
constinit thread_local const std::string* tls_site_label = nullptr;
}  // namespace opspec::internal
