#include "kernels/registration.h"

namespace opspec::internal {

void register_factory_kernels(Dispatcher& d) { (void)d; }

}  // namespace opspec::internal
