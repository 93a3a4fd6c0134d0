#include "kernels/registration.h"

namespace opspec::internal {

void register_view_kernels(Dispatcher& d) { (void)d; }

}  // namespace opspec::internal
