#include "runtime/dispatch/dispatcher.h"

namespace opspec::internal {
void register_decompositions(Dispatcher& d) { (void)d; }
}  // namespace opspec::internal
