#include "runtime/core/call_site.h"

namespace opspec::internal {
constinit thread_local CallSiteSlot tls_call_site{};
}  // namespace opspec::internal
