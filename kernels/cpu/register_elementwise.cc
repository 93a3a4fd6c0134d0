#include "kernels/registration.h"

namespace opspec::internal {

void register_elementwise_kernels(Dispatcher& d) { (void)d; }

}  // namespace opspec::internal
