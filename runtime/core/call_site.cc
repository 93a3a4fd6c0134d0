#include "runtime/core/call_site.h"

namespace opspec::internal {
constinit thread_local const std::source_location* tls_call_site = nullptr;
}  // namespace opspec::internal
